//! Images and text files in chat, through IPC against the fake provider (which reads each
//! dialect's shapes as its documentation gives them, and refuses any other): attaching, what
//! each provider kind receives, the limits, a model that takes no images, edit and regenerate,
//! export, deleting, and a restart.

use std::io::Cursor;

use base64::Engine;
use image::{DynamicImage, ImageFormat, RgbImage, RgbaImage};
use keypool_api::ipc::ErrorCode;
use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::{json, Value};

use crate::chat::{fake_provider, new_chat};
use crate::support::Harness;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn encoded(image: DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).unwrap();
    out.into_inner()
}

/// A small PNG with transparency, whose pixels differ (so it does not compress to nothing).
fn png(width: u32, height: u32) -> Vec<u8> {
    let image = RgbaImage::from_fn(width, height, |x, y| image::Rgba([(x % 256) as u8, (y % 256) as u8, 7, 200]));
    encoded(DynamicImage::ImageRgba8(image), ImageFormat::Png)
}

fn jpeg(width: u32, height: u32) -> Vec<u8> {
    let image = RgbImage::from_fn(width, height, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 99]));
    encoded(DynamicImage::ImageRgb8(image), ImageFormat::Jpeg)
}

fn attach(h: &Harness, name: &str, bytes: &[u8]) -> Value {
    h.ok("chat:attach", json!({ "name": name, "data": b64(bytes) }))
}

fn issue_of(h: &Harness, name: &str, bytes: &[u8]) -> Value {
    let err = h.err("chat:attach", json!({ "name": name, "data": b64(bytes) }));
    assert_eq!(err.code, ErrorCode::Validation, "{name}: refused as invalid input: {err:?}");
    serde_json::to_value(&err).unwrap()["issues"][0].clone()
}

fn stored_files(h: &Harness) -> usize {
    std::fs::read_dir(h.dir.path().join("attachments")).map_or(0, |dir| dir.count())
}

fn ask_with(chat: &str, content: &str, attachments: &[&Value]) -> Value {
    let refs: Vec<Value> = attachments.iter().map(|a| json!({ "id": a["id"], "name": a["name"] })).collect();
    let mut request = json!({ "chatId": chat, "attachments": refs });
    if !content.is_empty() {
        request["content"] = content.into();
    }
    request
}

#[tokio::test(flavor = "multi_thread")]
async fn an_attached_png_reaches_each_kind_in_its_documented_shape() {
    let picture = png(3, 2);
    for (kind, shape) in [("openai", "image_url"), ("anthropic", "image"), ("gemini", "inlineData")] {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = fake_provider(&h, &fake, kind, &["main"]);
        let chat = new_chat(&h, &provider);
        let attached = attach(&h, "shot.png", &picture);
        assert_eq!(
            (&attached["kind"], &attached["mediaType"], &attached["width"], &attached["height"]),
            (&json!("image"), &json!("image/png"), &json!(3), &json!(2)),
            "{kind}: sniffed and measured: {attached}"
        );
        fake.script("key-main", [Reply::text(&["A gradient."])]);
        let (reply, events) = h.send_request(ask_with(&chat, "What is this?", &[&attached]), |_| {}).await.unwrap();
        assert_eq!(reply["content"], "A gradient.", "{kind}: the fake took the request's shape and answered");
        assert_eq!(events[0]["message"]["attachments"][0]["name"], "shot.png", "{kind}: the user message shows it");

        let seen = fake.seen().pop().unwrap();
        assert_eq!(seen.images.len(), 1, "{kind}: one image arrived");
        let image = &seen.images[0];
        assert_eq!(image.shape, shape, "{kind}: in the kind's own part");
        assert_eq!(image.media_type, "image/png", "{kind}: with its media type");
        assert_eq!(image.bytes, picture.len(), "{kind}: a small image goes as it came");
        assert!(image.head.starts_with("89504e47"), "{kind}: PNG bytes: {}", image.head);
        assert_eq!(seen.last_user, "What is this?", "{kind}: the question goes beside it");

        let messages = h.ok("chat:getMessages", json!({ "chatId": chat }));
        assert_eq!(messages[0]["attachments"][0]["id"], attached["id"], "{kind}: saved with the message");
        assert_eq!(messages[1]["attachments"], json!([]), "{kind}: replies carry none");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_large_image_is_sent_downscaled_while_the_original_is_kept() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["main"]);
    let chat = new_chat(&h, &provider);
    // Over the 2 048 px long side, and no larger: unoptimised (a debug build), image work costs
    // per pixel, and 4000×1000 took 9 s of the test run.
    let original = jpeg(2400, 600);
    let attached = attach(&h, "wide.jpg", &original);
    assert_eq!(attached["width"], 2400, "the original's size is reported");
    h.send_request(ask_with(&chat, "", &[&attached]), |_| {}).await.unwrap();

    let seen = fake.seen().pop().unwrap();
    let body: Value = serde_json::from_str(&seen.body).unwrap();
    let parts = body["messages"][0]["content"].as_array().unwrap();
    assert_eq!(parts.len(), 1, "an image alone: no empty text part beside it: {parts:?}");
    let url = parts[0]["image_url"]["url"].as_str().unwrap();
    let data = url.strip_prefix("data:image/jpeg;base64,").expect("a JPEG data URL");
    let sent = image::load_from_memory(&base64::engine::general_purpose::STANDARD.decode(data).unwrap()).unwrap();
    assert_eq!((sent.width(), sent.height()), (2048, 512), "the long side is 2048, the ratio kept");

    let kept = h.ok("chat:attachmentData", json!({ "id": attached["id"] }));
    assert_eq!(kept["data"], b64(&original), "the original is kept byte for byte");
    let thumb = h.ok("chat:attachmentData", json!({ "id": attached["id"], "thumbnail": true }));
    let thumb = image::load_from_memory(
        &base64::engine::general_purpose::STANDARD.decode(thumb["data"].as_str().unwrap()).unwrap(),
    )
    .unwrap();
    assert_eq!(thumb.width(), 320, "the thumbnail is small");
}

#[tokio::test(flavor = "multi_thread")]
async fn files_over_the_limits_or_of_other_types_are_refused_and_nothing_is_stored() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["main"]);
    let chat = new_chat(&h, &provider);

    // The start of a BMP file: its signature, sizes and offsets.
    let bmp = [b"BM".as_slice(), &[0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 0x28, 0, 0, 0]].concat();
    assert_eq!(issue_of(&h, "a.png", &bmp)["code"], "unsupported_file", "a BMP named .png is still a BMP");
    assert_eq!(issue_of(&h, "a.txt", &[0xff, 0xfe, 0x00, 0x41])["code"], "unsupported_file", "not UTF-8");
    let long_text = "x".repeat(1024 * 1024 + 1);
    let too_large = issue_of(&h, "big.txt", long_text.as_bytes());
    assert_eq!((&too_large["code"], &too_large["params"]["max"]), (&json!("file_too_large"), &json!(1048576)));
    let mut broken = png(4, 4);
    broken.truncate(40);
    assert_eq!(issue_of(&h, "cut.png", &broken)["code"], "image_unreadable", "a PNG cut short");
    let err = h.err("chat:attach", json!({ "name": "x", "data": "not base64!" }));
    assert_eq!(err.code, ErrorCode::Validation, "bytes must be base64");
    assert_eq!(stored_files(&h), 0, "nothing refused is stored");

    let one = attach(&h, "a.txt", b"one");
    let eleven: Vec<&Value> = std::iter::repeat_n(&one, 11).collect();
    let err = h.send_request(ask_with(&chat, "hi", &eleven), |_| {}).await.unwrap_err();
    let issue = serde_json::to_value(&err).unwrap()["issues"][0].clone();
    assert_eq!((&issue["path"], &issue["code"]), (&json!("request.attachments"), &json!("too_long")), "{issue}");
    let ghost = json!({ "id": "0".repeat(64), "name": "ghost.png" });
    let err = h.send_request(ask_with(&chat, "hi", &[&ghost]), |_| {}).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound, "an attachment never attached");
    assert!(fake.seen().is_empty(), "nothing was sent");
    assert_eq!(h.ok("chat:getMessages", json!({ "chatId": chat })), json!([]), "and nothing saved");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_takes_no_images_is_said_so_and_the_key_is_left_alone() {
    for kind in ["openai", "anthropic", "gemini"] {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = fake_provider(&h, &fake, kind, &["main", "spare"]);
        fake.text_only(&["fake-model"]);
        let chat = new_chat(&h, &provider);
        let attached = attach(&h, "shot.png", &png(2, 2));
        let (reply, _) = h.send_request(ask_with(&chat, "what?", &[&attached]), |_| {}).await.unwrap();
        assert_eq!(reply["status"], "error", "{kind}: the reply failed");
        assert_eq!(reply["errorDetails"]["kind"], "imagesRefused", "{kind}: worded as images refused: {reply}");
        assert_eq!(reply["errorDetails"]["status"], 400, "{kind}: with the status");
        assert_eq!(fake.keys_used().len(), 1, "{kind}: no failover: another key would be refused the same");
        let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
        for key in status["keys"].as_array().unwrap() {
            assert_eq!(key["state"], "active", "{kind}: no key cools down or is disabled: {key}");
        }

        fake.script("key-main", [Reply::text(&["plain"])]);
        let (reply, _) = h.send(&chat, Some("just text then"), |_| {}).await.unwrap();
        assert_eq!(reply["errorDetails"]["kind"], "imagesRefused", "{kind}: the history still holds the image");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn text_files_go_as_named_text_and_edit_and_regenerate_keep_attachments() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "anthropic", &["main"]);
    let chat = new_chat(&h, &provider);
    let notes = attach(&h, "notes.md", "# Plan\n- ship it\n".as_bytes());
    assert_eq!((&notes["kind"], &notes["mediaType"]), (&json!("text"), &json!("text/plain")), "{notes}");
    let shot = attach(&h, "shot.png", &png(2, 2));
    h.send_request(ask_with(&chat, "Summarise", &[&notes, &shot]), |_| {}).await.unwrap();
    let seen = fake.seen().pop().unwrap();
    assert!(
        seen.last_user.starts_with("<file name=\"notes.md\">\n# Plan\n- ship it\n</file>"),
        "the file is text that names it, first: {:?}",
        seen.last_user
    );
    assert!(seen.last_user.ends_with("Summarise"), "the question last");

    h.send(&chat, None, |_| {}).await.unwrap();
    let seen = fake.seen().pop().unwrap();
    assert!(seen.last_user.contains("ship it") && seen.images.len() == 1, "regenerate sends them again");

    h.send_request(json!({ "chatId": chat, "content": "Summarise briefly", "edit": true }), |_| {}).await.unwrap();
    let seen = fake.seen().pop().unwrap();
    assert!(seen.last_user.contains("ship it") && seen.images.len() == 1, "an edit keeps them");
    assert!(seen.last_user.ends_with("Summarise briefly"), "with the new text");

    h.send_request(json!({ "chatId": chat, "content": "No files", "edit": true, "attachments": [] }), |_| {})
        .await
        .unwrap();
    let seen = fake.seen().pop().unwrap();
    assert!(seen.images.is_empty() && seen.last_user == "No files", "an edit may drop them: {:?}", seen.last_user);
}

#[tokio::test(flavor = "multi_thread")]
async fn attachments_survive_a_restart_are_exported_beside_the_markdown_and_go_with_their_last_chat() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["main"]);
    let first = new_chat(&h, &provider);
    let second = new_chat(&h, &provider);
    let picture = png(400, 300);
    let shot = attach(&h, "shot.png", &picture);
    h.send_request(ask_with(&first, "one", &[&shot]), |_| {}).await.unwrap();
    h.send_request(ask_with(&second, "two", &[&shot]), |_| {}).await.unwrap();
    let files = stored_files(&h);
    assert_eq!(files, 2, "one original and its thumbnail, stored once for both chats");

    let h = h.reopen();
    let messages = h.ok("chat:getMessages", json!({ "chatId": first }));
    assert_eq!(messages[0]["attachments"][0]["name"], "shot.png", "kept across a restart: {messages}");
    let data = h.ok("chat:attachmentData", json!({ "id": shot["id"] }));
    assert_eq!(data["data"], b64(&picture), "the file too");

    let target = h.dir.path().join("out").join("chat.md");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    h.saves.answer(Some(target.clone()));
    h.call_async("chat:exportMarkdown", json!({ "chatId": first })).await.unwrap();
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(text.contains("![chat-1-shot.png](<chat-1-shot.png>)"), "the Markdown links the image: {text}");
    assert_eq!(std::fs::read(target.with_file_name("chat-1-shot.png")).unwrap(), picture, "written beside it");

    h.ok("chat:delete", json!({ "id": first }));
    assert_eq!(stored_files(&h), files, "the other chat still uses the files");
    h.ok("chat:delete", json!({ "id": second }));
    assert_eq!(stored_files(&h), 0, "no message uses them any more: gone");
    let err = h.err("chat:attachmentData", json!({ "id": shot["id"] }));
    assert_eq!(err.code, ErrorCode::NotFound, "and forgotten");
}

#[test]
fn no_image_bytes_reach_the_logs_or_the_ledger() {
    let picture = jpeg(3000, 200);
    let ((sent, ledger), logs) = crate::support::traced(|runtime| {
        runtime.block_on(async {
            let h = Harness::new();
            let fake = FakeProvider::start().await;
            let provider = fake_provider(&h, &fake, "gemini", &["main"]);
            let chat = new_chat(&h, &provider);
            let attached = attach(&h, "wide.jpg", &picture);
            h.send_request(ask_with(&chat, "what?", &[&attached]), |_| {}).await.unwrap();
            // Regenerated: the image goes a second time.
            h.send_request(json!({ "chatId": chat }), |_| {}).await.unwrap();
            let body: Value = serde_json::from_str(&fake.seen().pop().unwrap().body).unwrap();
            let data = body["contents"][0]["parts"][0]["inlineData"]["data"].as_str().unwrap().to_owned();
            // The ledger writes behind the replies; a summary reads what it wrote.
            let summary = h.ok("usage:getSummary", json!({}));
            assert_eq!(summary["totals"]["requests"], 2, "both requests are in the ledger: {summary}");
            let conn = keypool_store::rusqlite::Connection::open(h.dir.path().join(keypool_store::DATABASE_FILE_NAME))
                .unwrap();
            let mut stmt = conn.prepare("SELECT * FROM usage_attempts").unwrap();
            let columns = stmt.column_count();
            let mut texts = Vec::new();
            let mut rows = stmt.query([]).unwrap();
            while let Some(row) = rows.next().unwrap() {
                texts.extend((0..columns).filter_map(|i| row.get::<_, String>(i).ok()));
            }
            (data[..64].to_owned(), texts)
        })
    });
    let original = b64(&picture)[..64].to_owned();
    assert_eq!(sent.len(), 64, "the image was sent");
    for (what, needle) in [("the copy sent", &sent), ("the original", &original)] {
        assert!(!logs.contains(needle.as_str()), "{what}'s base64 is in no log line");
        assert!(ledger.iter().all(|text| !text.contains(needle.as_str())), "{what}'s base64 is not in the ledger");
    }
}

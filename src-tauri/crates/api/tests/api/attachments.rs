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

/// EXIF as a phone writes it (little-endian TIFF): the camera's make, an orientation when given,
/// and a GPS position (48° 51′ 24″ N, 2° 17′ 40″ E).
fn exif(orientation: Option<u16>) -> Vec<u8> {
    // Entries: (tag, type, count, value or offset); offsets point into `data`, placed after both IFDs.
    let mut ifd0: Vec<(u16, u16, u32, u32)> = vec![(0x010F, 2, 8, 0)];
    if let Some(orientation) = orientation {
        ifd0.push((0x0112, 3, 1, u32::from(orientation)));
    }
    ifd0.push((0x8825, 4, 1, 0));
    let gps_entries = 4;
    let ifd_len = |n: usize| 2 + 12 * n + 4;
    let ifd0_at = 8;
    let gps_at = ifd0_at + ifd_len(ifd0.len());
    let data_at = gps_at + ifd_len(gps_entries);
    let make_at = data_at;
    let latitude_at = make_at + 8;
    let longitude_at = latitude_at + 24;
    let rationals = |values: [(u32, u32); 3]| {
        values.iter().flat_map(|(n, d)| [n.to_le_bytes(), d.to_le_bytes()]).flatten().collect::<Vec<u8>>()
    };
    for entry in ifd0.iter_mut() {
        match entry.0 {
            0x010F => entry.3 = make_at as u32,
            0x8825 => entry.3 = gps_at as u32,
            _ => {}
        }
    }
    let gps: Vec<(u16, u16, u32, u32)> = vec![
        (0x0001, 2, 2, u32::from_le_bytes([b'N', 0, 0, 0])),
        (0x0002, 5, 3, latitude_at as u32),
        (0x0003, 2, 2, u32::from_le_bytes([b'E', 0, 0, 0])),
        (0x0004, 5, 3, longitude_at as u32),
    ];
    let mut tiff = b"II\x2a\x00".to_vec();
    tiff.extend_from_slice(&(ifd0_at as u32).to_le_bytes());
    for ifd in [&ifd0, &gps] {
        tiff.extend_from_slice(&(ifd.len() as u16).to_le_bytes());
        for (tag, kind, count, value) in ifd {
            tiff.extend_from_slice(&tag.to_le_bytes());
            tiff.extend_from_slice(&kind.to_le_bytes());
            tiff.extend_from_slice(&count.to_le_bytes());
            // A SHORT sits in the first two bytes of the value field.
            tiff.extend_from_slice(&value.to_le_bytes());
        }
        tiff.extend_from_slice(&0u32.to_le_bytes());
    }
    tiff.extend_from_slice(b"Keypool\0");
    tiff.extend(rationals(LATITUDE));
    tiff.extend(rationals([(2, 1), (17, 1), (4000, 100)]));
    tiff
}

const LATITUDE: [(u32, u32); 3] = [(48, 1), (51, 1), (2400, 100)];

/// `jpeg` with `exif` in an APP1 segment right after its start, as cameras write it.
fn with_exif(jpeg: &[u8], exif: &[u8]) -> Vec<u8> {
    let length = u16::try_from(2 + 6 + exif.len()).unwrap();
    [&jpeg[..2], &[0xFF, 0xE1], &length.to_be_bytes(), b"Exif\0\0", exif, &jpeg[2..]].concat()
}

fn exif_of(jpeg: &[u8]) -> Option<Vec<u8>> {
    use image::ImageDecoder;
    image::codecs::jpeg::JpegDecoder::new(Cursor::new(jpeg)).unwrap().exif_metadata().unwrap()
}

/// The image bytes the OpenAI-compatible fake received in the last request.
fn sent_image(fake: &FakeProvider) -> (String, Vec<u8>) {
    let seen = fake.seen().pop().unwrap();
    let body: Value = serde_json::from_str(&seen.body).unwrap();
    let url = body["messages"][0]["content"][0]["image_url"]["url"].as_str().unwrap().to_owned();
    let (head, data) = url.split_once(";base64,").unwrap();
    (head.trim_start_matches("data:").to_owned(), base64::engine::general_purpose::STANDARD.decode(data).unwrap())
}

/// A photo whose EXIF holds where it was taken: the provider receives the picture and nothing of
/// that, while the original is kept as it came.
#[tokio::test(flavor = "multi_thread")]
async fn a_photos_gps_position_is_not_sent_and_its_original_is_kept() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["main"]);
    let chat = new_chat(&h, &provider);
    let plain = jpeg(64, 48);
    let photo = with_exif(&plain, &exif(None));
    let latitude: Vec<u8> = LATITUDE.iter().flat_map(|(n, d)| [n.to_le_bytes(), d.to_le_bytes()]).flatten().collect();
    let read = exif_of(&photo).expect("the photo's EXIF is read by a JPEG decoder");
    assert!(read.windows(latitude.len()).any(|w| w == latitude), "and holds the GPS latitude");

    let attached = attach(&h, "photo.jpg", &photo);
    h.send_request(ask_with(&chat, "Where is this?", &[&attached]), |_| {}).await.unwrap();
    let (media_type, sent) = sent_image(&fake);
    assert_eq!(media_type, "image/jpeg", "a JPEG goes as a JPEG");
    assert_eq!(exif_of(&sent), None, "the copy sent has no EXIF");
    assert!(!sent.windows(latitude.len()).any(|w| w == latitude), "nor the latitude anywhere in it");
    assert!(!sent.windows(7).any(|w| w == b"Keypool"), "nor the camera's make");
    let pixels = |bytes: &[u8]| image::load_from_memory(bytes).unwrap().to_rgb8().into_raw();
    assert_eq!(pixels(&sent), pixels(&photo), "its picture is the same, not encoded again");
    let kept = h.ok("chat:attachmentData", json!({ "id": attached["id"] }));
    assert_eq!(kept["data"], b64(&photo), "the original is kept byte for byte, EXIF and all");
}

/// A phone's photo stored sideways with an EXIF orientation: the copy sent is turned upright, and
/// carries no EXIF (which would turn it again).
#[tokio::test(flavor = "multi_thread")]
async fn a_photo_is_sent_turned_as_its_exif_said() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["main"]);
    let chat = new_chat(&h, &provider);
    // Orientation 6: the picture is to be turned 90° clockwise to be seen upright.
    let photo = with_exif(&jpeg(64, 32), &exif(Some(6)));
    let attached = attach(&h, "sideways.jpg", &photo);
    assert_eq!((&attached["width"], &attached["height"]), (&json!(32), &json!(64)), "measured upright: {attached}");
    h.send_request(ask_with(&chat, "", &[&attached]), |_| {}).await.unwrap();
    let (_, sent) = sent_image(&fake);
    assert_eq!(exif_of(&sent), None, "no EXIF goes with it");
    let upright = image::load_from_memory(&sent).unwrap();
    assert_eq!((upright.width(), upright.height()), (32, 64), "the copy sent is upright");
}

/// A PNG of `width` × `height` transparent black RGBA pixels, compressed as well as zeros go
/// (a literal and then runs of 258 in one fixed-Huffman block): a few megabytes that claim a
/// picture of any size.
fn png_of_zeros(width: u32, height: u32) -> Vec<u8> {
    struct Bits {
        out: Vec<u8>,
        acc: u64,
        len: u32,
    }
    impl Bits {
        /// `count` bits of `value`, least significant first (deflate's header and extra bits).
        fn lsb(&mut self, value: u32, count: u32) {
            self.acc |= u64::from(value) << self.len;
            self.len += count;
            while self.len >= 8 {
                self.out.push(self.acc as u8);
                self.acc >>= 8;
                self.len -= 8;
            }
        }
        /// A Huffman code of `count` bits, most significant first.
        fn code(&mut self, code: u32, count: u32) {
            let reversed = code.reverse_bits() >> (32 - count);
            self.lsb(reversed, count);
        }
    }
    let raw = u64::from(height) * (1 + 4 * u64::from(width));
    let mut bits = Bits { out: vec![0x78, 0x01], acc: 0, len: 0 };
    bits.lsb(1, 1); // the last block
    bits.lsb(1, 2); // fixed Huffman codes
    bits.code(0b0011_0000, 8); // literal 0
    let runs = (raw - 1) / 258;
    for _ in 0..runs {
        bits.code(0b1100_0101, 8); // length 258 (code 285)
        bits.code(0, 5); // distance 1
    }
    for _ in 0..(raw - 1) % 258 {
        bits.code(0b0011_0000, 8);
    }
    bits.code(0, 7); // end of block
    if bits.len > 0 {
        bits.lsb(0, 8 - bits.len);
    }
    let mut zlib = bits.out;
    let adler = ((raw % 65_521) << 16) as u32 | 1;
    zlib.extend_from_slice(&adler.to_be_bytes());

    let table: Vec<u32> =
        (0..256u32).map(|n| (0..8).fold(n, |c, _| if c & 1 == 1 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 })).collect();
    let chunk = |kind: &[u8], data: &[u8]| {
        let crc = !kind.iter().chain(data).fold(!0u32, |c, &b| table[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8));
        [&(data.len() as u32).to_be_bytes()[..], kind, data, &crc.to_be_bytes()].concat()
    };
    let ihdr = [&width.to_be_bytes()[..], &height.to_be_bytes(), &[8, 6, 0, 0, 0]].concat();
    [b"\x89PNG\r\n\x1a\n".as_slice(), &chunk(b"IHDR", &ihdr), &chunk(b"IDAT", &zlib), &chunk(b"IEND", &[])].concat()
}

/// An 11 500 × 11 500 PNG is under the file size limit and each side's, and decoding and scaling
/// it would hold about a gigabyte: it is refused from its header, with its size and the limit.
#[tokio::test(flavor = "multi_thread")]
async fn an_image_of_too_many_pixels_is_refused_before_it_is_decoded() {
    let h = Harness::new();
    let small = png_of_zeros(3, 2);
    let decoded = image::load_from_memory(&small).expect("the PNG writer makes PNGs");
    assert_eq!((decoded.width(), decoded.height()), (3, 2), "of the size it says");
    let huge = png_of_zeros(11_500, 11_500);
    assert!(huge.len() < 20 * 1024 * 1024, "the file is under the 20 MB limit: {} bytes", huge.len());
    let started = std::time::Instant::now();
    let issue = issue_of(&h, "huge.png", &huge);
    assert_eq!(
        (&issue["code"], &issue["params"]["count"], &issue["params"]["max"]),
        (&json!("image_too_large"), &json!(132_250_000), &json!(36_000_000)),
        "refused with its pixels and the most an image may have: {issue}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "from its header: nothing was decoded");
    assert_eq!(stored_files(&h), 0, "and nothing is stored");
}

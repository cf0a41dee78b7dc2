//! Arbitrary bytes thrown at every reader of what providers send: the SSE decoder, the stream
//! events and whole replies of each kind, error bodies, and redaction. No panic, and nothing
//! grows past its bound. `KEYPOOL_FUZZ_CASES` sets how many cases each runs (five hundred by
//! default, so `npm test` stays quick; a million for a real campaign).

use proptest::prelude::*;
use serde_json::Value;

use crate::redact::Redactor;
use crate::sse::Decoder;
use crate::wire::{error_message, StreamPiece, Wire, WireFormat};

fn cases() -> u32 {
    std::env::var("KEYPOOL_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(500)
}

/// Every wire format's reader.
fn wires() -> [&'static dyn Wire; 4] {
    WireFormat::ALL.map(WireFormat::wire)
}

/// JSON a few levels deep whose member names are the ones the readers look for, so that the
/// cases reach past the first `match` of each reader.
fn provider_json() -> impl Strategy<Value = Value> {
    let names = prop_oneof![
        Just("error"),
        Just("message"),
        Just("type"),
        Just("code"),
        Just("status"),
        Just("choices"),
        Just("delta"),
        Just("content"),
        Just("text"),
        Just("usage"),
        Just("prompt_tokens"),
        Just("completion_tokens"),
        Just("input_tokens"),
        Just("output_tokens"),
        Just("prompt_tokens_details"),
        Just("cached_tokens"),
        Just("cache_read_input_tokens"),
        Just("message_start"),
        Just("messages"),
        Just("role"),
        Just("input"),
        Just("tools"),
        Just("tool_calls"),
        Just("contents"),
        Just("parts"),
        Just("x"),
    ]
    .prop_map(str::to_owned);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "\\PC{0,64}".prop_map(Value::String),
        prop_oneof![Just("content_block_delta"), Just("message_stop"), Just("rate_limit_error"), Just("[DONE]")]
            .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(names.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn stream_events_of_any_shape(name in "\\PC{0,16}", data in prop_oneof![
        "\\PC{0,512}",
        provider_json().prop_map(|v| v.to_string()),
    ]) {
        for wire in wires() {
            for piece in wire.stream_pieces(&name, &data) {
                match piece {
                    StreamPiece::Text(text) => prop_assert!(text.len() <= data.len()),
                    StreamPiece::Error(failure) => prop_assert!(failure.message.chars().count() <= data.len().max(300)),
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn whole_replies_and_error_bodies_of_any_shape(body in provider_json(), status in 100u16..600) {
        let text = body.to_string();
        for wire in wires() {
            let _ = wire.usage_of_reply(&body);
            // A client's request of any shape is read or refused, never a panic.
            let _ = wire.read_request(&body);
        }
        prop_assert!(error_message(&text).chars().count() <= 300, "one line of at most 300 characters");
        for wire in wires() {
            let refusal = wire.refusal(status, &text, None, keypool::Announced::default());
            prop_assert!(refusal.message.chars().count() <= 300.max(text.len()));
        }
    }

    #[test]
    fn bytes_that_are_not_even_text(bytes in prop::collection::vec(any::<u8>(), 0..2048), cut in 0usize..2048) {
        let text = String::from_utf8_lossy(&bytes);
        for wire in wires() {
            let _ = wire.stream_pieces("", &text);
        }
        prop_assert!(error_message(&text).chars().count() <= 300);
        let mut decoder = Decoder::with_limit(1024);
        let cut = cut.min(bytes.len());
        for piece in [&bytes[..cut], &bytes[cut..]] {
            decoder.push(piece);
            while let Ok(Some(event)) = decoder.next_event() {
                prop_assert!(event.raw.len() <= 1024);
                for wire in wires() {
                    let _ = wire.stream_pieces(&event.name, &event.data);
                }
            }
        }
    }

    #[test]
    fn redaction_of_any_text(text in "\\PC{0,512}", json in provider_json()) {
        let secrets = [keypool::Secret::from("sk-proj-fuzzfuzzfuzzfuzz0001"), keypool::Secret::from("short")];
        let redactor = Redactor::new(&secrets);
        let _ = redactor.redact(&text);
        let out = redactor.redact_json(&json.to_string());
        prop_assert!(!out.contains("fuzzfuzzfuzzfuzz"));
    }
}

use serde_json::Value;

use crate::conversation::Usage;
use crate::wire::WireFormat;

/// What `wire` reads of a whole reply's head.
fn read_reply(wire: WireFormat, body: &[u8]) -> (bool, Option<Usage>) {
    wire.wire().read_reply_head(body)
}

#[test]
fn a_whole_reply_is_read_by_name_as_it_is_read_whole() {
    let replies = [
        (
            WireFormat::OpenAiChat,
            r#"{"id":"x","usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16,"prompt_tokens_details":{"cached_tokens":5,"audio_tokens":0}}}"#,
        ),
        (WireFormat::OpenAiChat, r#"{"usage":{"prompt_tokens":11}}"#),
        (
            WireFormat::OpenAiChat,
            r#"{"usage":{"prompt_tokens":11,"completion_tokens":5.5,"prompt_tokens_details":null}}"#,
        ),
        (WireFormat::OpenAiChat, r#"{"usage":{"prompt_tokens":-1,"completion_tokens":5}}"#),
        (WireFormat::OpenAiChat, r#"{"usage":{"prompt_tokens":3,"prompt_tokens_details":"none"}}"#),
        (WireFormat::OpenAiChat, r#"{"usage":"none"}"#),
        (WireFormat::OpenAiChat, r#"{"usage":null,"error":null}"#),
        (WireFormat::OpenAiChat, r#"{"error":{"message":"no"},"usage":{"prompt_tokens":1}}"#),
        (
            WireFormat::AnthropicMessages,
            r#"{"usage":{"input_tokens":7,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":9}}"#,
        ),
        (
            WireFormat::AnthropicMessages,
            r#"{"usage":{"input_tokens":7,"cache_read_input_tokens":"many","output_tokens":9}}"#,
        ),
        (WireFormat::AnthropicMessages, r#"{"usage":{"output_tokens":9}}"#),
        // Arrays, from which serde would read a struct's fields in order.
        (WireFormat::OpenAiChat, r#"{"usage":[11,{"cached_tokens":3},5]}"#),
        (WireFormat::OpenAiChat, r#"{"usage":{"prompt_tokens":11,"prompt_tokens_details":[4]}}"#),
        (WireFormat::OpenAiChat, r#"[null,{"prompt_tokens":11}]"#),
    ];
    for (kind, body) in replies {
        let whole: Value = serde_json::from_str(body).unwrap();
        let expected = (whole.get("error").is_some_and(|e| !e.is_null()), kind.wire().usage_of_reply(&whole));
        assert_eq!(read_reply(kind, body.as_bytes()), expected, "{body}");
    }
    let read = |body: &str| read_reply(WireFormat::OpenAiChat, body.as_bytes()).1;
    assert_eq!(read(replies[0].1), Some(Usage { input: 11, cached: 5, output: 5 }), "the numbers themselves");
    assert_eq!(read(replies[2].1), Some(Usage { input: 11, cached: 0, output: 0 }), "a count that is no count");
    let anthropic = read_reply(WireFormat::AnthropicMessages, replies[8].1.as_bytes()).1;
    assert_eq!(anthropic, Some(Usage { input: 127, cached: 100, output: 9 }), "every input token counted");
}

//! What refusals say: errors inside streams and bodies, out of credit, invalid keys, and which
//! events of a stream may say any of it.

use bytes::Bytes;
use serde_json::Value;

use super::{StreamPiece, Wire, WireFormat};
use keypool::Quota;

use crate::error::{Failure, Meaning};

/// Whether an SSE event (its `name` and `data`) may be more to `wire` than text and tool calls:
/// its name or data holds one of [`Wire::stream_signals`], or its data escapes a character as
/// `\u` (a member's name written so would hide a signal from a search of the text). When not,
/// its pieces are text and tool calls at most, and the local API's relay, once the first text has
/// come, passes it on unread: reading every event of a stream into a `Value` was a fifth of what
/// relaying it cost, and an answer's events are mostly text.
pub fn may_signal(wire: &dyn Wire, name: &str, data: &str) -> bool {
    use aho_corasick::{packed, AhoCorasick};
    use std::sync::LazyLock;
    /// A search for a few words at once: SIMD where the processor has it (about 13 ns for an
    /// event of 150 bytes; aho-corasick's automaton took 400), the automaton elsewhere.
    enum Finder {
        Packed(packed::Searcher),
        Automaton(AhoCorasick),
        /// Could not be built (never, for these few short words): every event is read.
        None,
    }
    static FINDERS: LazyLock<Vec<(WireFormat, Finder)>> = LazyLock::new(|| {
        let finder = |format: WireFormat| {
            let words: Vec<&str> = format.wire().stream_signals().iter().copied().chain(["\\u"]).collect();
            match packed::Searcher::new(&words) {
                Some(searcher) => Finder::Packed(searcher),
                None => AhoCorasick::new(&words).map_or(Finder::None, Finder::Automaton),
            }
        };
        WireFormat::ALL.iter().map(|&format| (format, finder(format))).collect()
    });
    let format = wire.format();
    let holds = |finder: &Finder, text: &str| match finder {
        Finder::Packed(searcher) => searcher.find(text).is_some(),
        Finder::Automaton(automaton) => automaton.is_match(text),
        Finder::None => true,
    };
    match FINDERS.iter().find(|(of, _)| *of == format) {
        Some((_, finder)) => holds(finder, name) || holds(finder, data),
        None => true,
    }
}

/// An error event of an OpenAI or Anthropic stream (an `error` event, or any event with an
/// `error` member), as the refusal it stands for.
pub(crate) fn stream_error(event: &str, value: &Value) -> Option<StreamPiece> {
    if event != "error" && value.get("error").is_none_or(|e| e.is_null()) {
        return None;
    }
    let error = &value["error"];
    let message = error["message"].as_str().unwrap_or("the provider reported an error").to_owned();
    let status = status_of_error(error);
    let out_of_credit = says_out_of_credit(error, &message);
    let meaning = plan_window_of(error, &message).map(|until| Meaning::RateLimit(Some(Quota::PlanWindow { until })));
    Some(StreamPiece::Error(Failure { out_of_credit, meaning, ..Failure::new(status, message) }))
}

/// The error codes of Zhipu's (Z.ai's) coding plans for a window used up: 1308 the 5-hour
/// window, 1310 the weekly or monthly one, 1316 to 1321 the others of its table.
const PLAN_WINDOW_CODES: [&str; 8] = ["1308", "1310", "1316", "1317", "1318", "1319", "1320", "1321"];

/// When a coding plan's window used up comes back, where the refusal says so: Zhipu's codes
/// ([`PLAN_WINDOW_CODES`]), or any provider's words "usage limit … reset(s) at INSTANT". The
/// instant is RFC 3339 (`2026-08-07T05:00:00Z`) or, as Zhipu writes it, a civil time in Beijing
/// (`2026-09-09 05:38:28`, UTC+8 all year). A refusal that names no instant is no plan window.
pub(crate) fn plan_window_of(error: &Value, message: &str) -> Option<keypool::Timestamp> {
    let code = match &error["code"] {
        Value::String(code) => Some(code.clone()),
        Value::Number(code) => Some(code.to_string()),
        _ => None,
    };
    let lower = message.to_ascii_lowercase();
    let coded = code.is_some_and(|code| PLAN_WINDOW_CODES.contains(&code.as_str()));
    let worded = ["usage limit", "limit exhausted", "limit reached"].iter().any(|words| lower.contains(words));
    if !coded && !worded {
        return None;
    }
    let at = ["resets at ", "reset at "].iter().find_map(|words| lower.find(words).map(|i| i + words.len()))?;
    let rest = &message[at..];
    let text: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '-' | ':' | 'T' | 'Z' | ' ' | '+' | '.'))
        .collect();
    instant_of(text.trim())
}

fn instant_of(text: &str) -> Option<keypool::Timestamp> {
    if let Ok(at) = text.parse::<jiff::Timestamp>() {
        return Some(keypool::Timestamp::from_millis(at.as_millisecond()));
    }
    let civil: jiff::civil::DateTime = text.get(..19)?.parse().ok()?;
    let beijing = jiff::tz::TimeZone::fixed(jiff::tz::offset(8));
    let at = beijing.to_ambiguous_timestamp(civil).compatible().ok()?;
    Some(keypool::Timestamp::from_millis(at.as_millisecond()))
}

/// Maps an error object found in a stream (either kind's shape) to the HTTP status it means.
fn status_of_error(error: &Value) -> u16 {
    let kind = error["type"].as_str().or_else(|| error["code"].as_str()).unwrap_or_default();
    if let Some(code) = error["code"].as_u64().or_else(|| error["status"].as_u64()) {
        if (400..600).contains(&code) {
            return code as u16;
        }
    }
    match kind {
        "overloaded_error" => 529,
        "rate_limit_error" | "rate_limit_exceeded" | "insufficient_quota" | "requests" | "tokens" => 429,
        "authentication_error" | "invalid_api_key" => 401,
        "permission_error" => 403,
        _ => 500,
    }
}

/// Whether an error object says the account is out of credit rather than too fast: OpenAI's
/// `insufficient_quota` (a 429 that no waiting cures), Anthropic's "credit balance is too low".
fn says_out_of_credit(error: &Value, message: &str) -> bool {
    let named = |field: &str| error[field].as_str() == Some("insufficient_quota");
    named("code") || named("type") || message.to_ascii_lowercase().contains("credit balance is too low")
}

/// Whether an error answer means the key's account is out of credit: HTTP 402 (OpenRouter and
/// others), or a body that says so in either provider's words.
pub(crate) fn out_of_credit(status: u16, body: &str) -> bool {
    if status == 402 {
        return true;
    }
    let Ok(value) = serde_json::from_str::<Value>(body) else { return false };
    let message = value["error"]["message"].as_str().unwrap_or_default();
    says_out_of_credit(&value["error"], message)
}

/// When the coding plan's window an error body says is used up comes back ([`plan_window_of`]).
pub(crate) fn plan_window(body: &str) -> Option<keypool::Timestamp> {
    let value = serde_json::from_str::<Value>(body).ok()?;
    let message = value["error"]["message"].as_str().unwrap_or_default();
    plan_window_of(&value["error"], message)
}

/// Whether an error body names the key as not valid (OpenAI's `code: invalid_api_key`, which
/// gateways send with a 403 too).
pub(crate) fn names_invalid_key(body: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(body) else { return false };
    let error = &value["error"];
    ["code", "type"].iter().any(|field| error[field].as_str() == Some("invalid_api_key"))
}

/// The provider's own words from an error body, if it has any; never more than a line.
pub fn error_message(body: &str) -> String {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().or_else(|| v["message"].as_str()).map(str::to_owned))
        .unwrap_or_else(|| body.trim().to_owned());
    let line = message.lines().next().unwrap_or_default();
    line.chars().take(300).collect()
}

/// An error body (or, `stream`, an SSE event of it) in JSON.
pub(crate) fn error_answer(wire: &dyn Wire, stream: bool, name: &str, body: &Value) -> Bytes {
    let body = body.to_string();
    if stream {
        Bytes::from(wire.write_event(name, &body))
    } else {
        Bytes::from(body)
    }
}

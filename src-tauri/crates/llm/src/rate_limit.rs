//! What providers announce about rate limits: the wait after a refusal, and what the wire
//! formats read the windows a key has left from (requests and tokens, see [`crate::wire`]).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use keypool::{Timestamp, Window};
use reqwest::header::HeaderMap;

use crate::provider_clock::ClockSkew;

/// One window from the headers named `[limit, remaining, reset]`, its reset read by `reset`
/// (from the header's text) and believed no further out than [`MAX_RESET_AHEAD`] from `now`.
pub(crate) fn window_of(
    headers: &HeaderMap,
    now: Timestamp,
    [limit, remaining, reset_name]: [&str; 3],
    reset: &dyn Fn(&str) -> Option<Timestamp>,
) -> Option<Window> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    let count = |name: &str| text(name).and_then(|v| v.parse::<i64>().ok()).and_then(|n| u64::try_from(n).ok());
    let reset_at = reset(text(reset_name)?)?.min(now + MAX_RESET_AHEAD);
    Some(Window { limit: count(limit), remaining: count(remaining)?, reset_at })
}

/// The furthest out a window's reset is believed (the pool's longest cooldown): a window said to
/// refill later (a day's budget, a provider clock far off, a hostile answer) is tried again then,
/// and an answer that says it is still spent keeps it out for as long again.
pub const MAX_RESET_AHEAD: Duration = Duration::from_secs(15 * 60);

/// How long the provider asked us to wait, measured from `now`, if it said so.
///
/// Precedence: `retry-after-ms`, then `retry-after` (seconds or an HTTP date on the provider's
/// clock), then the latest of the reset times (`anthropic-ratelimit-*-reset` as RFC 3339 instants
/// on the provider's clock, `x-ratelimit-reset-*` as durations like `6m0s`). Instants are read
/// through `skew`. The pool bounds the result by its cooldown cap.
pub fn announced_wait(headers: &HeaderMap, now: Timestamp, skew: ClockSkew) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);

    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    if let Some(value) = text("retry-after") {
        if let Ok(seconds) = value.parse::<f64>() {
            if seconds.is_finite() && seconds >= 0.0 {
                return Some(Duration::from_secs_f64(seconds));
            }
        }
        if let Some(at) = httpdate::parse_http_date(value).ok().and_then(millis_since_epoch) {
            // "Not before" this second: no precision to add, only the clocks' difference.
            return Some(skew.latest_local(at, Duration::ZERO).saturating_duration_since(now));
        }
    }

    let mut latest: Option<Duration> = None;
    for (name, value) in headers {
        let Ok(value) = value.to_str() else { continue };
        let name = name.as_str();
        let wait = if name.starts_with("anthropic-ratelimit-") && name.ends_with("-reset") {
            provider_instant(value.trim(), skew).map(|at| at.saturating_duration_since(now))
        } else if name.starts_with("x-ratelimit-reset") {
            parse_go_duration(value.trim())
        } else {
            None
        };
        if let Some(wait) = wait {
            latest = Some(latest.map_or(wait, |l| l.max(wait)));
        }
    }
    latest
}

fn millis_since_epoch(at: SystemTime) -> Option<i64> {
    i64::try_from(at.duration_since(UNIX_EPOCH).ok()?.as_millis()).ok()
}

/// An RFC 3339 instant on the provider's clock as the latest moment it may mean on ours: given
/// in whole seconds (`2026-12-01T10:15:42Z`, often truncated) it may mean any moment until the end
/// of that second; with a fraction, until the end of its last digit. `skew` says how far the
/// provider's clock is from ours.
pub fn provider_instant(text: &str, skew: ClockSkew) -> Option<Timestamp> {
    let at = millis_since_epoch(humantime::parse_rfc3339_weak(text).ok()?)?;
    Some(skew.latest_local(at, precision_of(text)))
}

/// How much later than written an RFC 3339 instant may mean: a second when written in whole
/// seconds, a tenth or a hundredth with one or two decimals, nothing with milliseconds or finer
/// (our clock counts milliseconds).
fn precision_of(text: &str) -> Duration {
    let Some((_, after_dot)) = text.split_once('.') else { return Duration::from_secs(1) };
    match after_dot.chars().take_while(char::is_ascii_digit).count() {
        0 => Duration::from_secs(1),
        1 => Duration::from_millis(100),
        2 => Duration::from_millis(10),
        _ => Duration::ZERO,
    }
}

/// `1s`, `6m0s`, `20ms`, `1.5s`, `1h2m3.5s`: the format OpenAI's reset headers use.
pub(crate) fn parse_go_duration(text: &str) -> Option<Duration> {
    if text.is_empty() {
        return None;
    }
    let mut total = 0.0f64;
    let mut rest = text;
    while !rest.is_empty() {
        let number_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        if number_len == 0 {
            return None;
        }
        let value: f64 = rest[..number_len].parse().ok()?;
        rest = &rest[number_len..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            "us" | "µs" => 0.000_001,
            "ns" => 0.000_000_001,
            _ => return None,
        };
        total += value * factor;
        rest = &rest[unit_len..];
    }
    total.is_finite().then(|| Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::WireFormat;
    use keypool::Announced;
    use reqwest::header::{HeaderName, HeaderValue};

    /// The windows `wire`'s headers announced.
    pub(super) fn announced_limits(
        wire: WireFormat,
        headers: &HeaderMap,
        now: Timestamp,
        skew: ClockSkew,
    ) -> Announced {
        wire.wire().announced_limits(headers, now, skew)
    }

    const NOW: Timestamp = Timestamp::from_millis(1_800_000_000_000);
    /// A provider whose clock is ours.
    const SAME: ClockSkew = ClockSkew { min_ms: 0, max_ms: 0 };

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| (HeaderName::from_bytes(k.as_bytes()).unwrap(), HeaderValue::from_str(v).unwrap()))
            .collect()
    }

    #[test]
    fn retry_after_seconds() {
        assert_eq!(announced_wait(&headers(&[("retry-after", "7")]), NOW, SAME), Some(Duration::from_secs(7)));
    }

    #[test]
    fn retry_after_ms_wins() {
        let h = headers(&[("retry-after", "7"), ("retry-after-ms", "1500")]);
        assert_eq!(announced_wait(&h, NOW, SAME), Some(Duration::from_millis(1500)), "the precise header is preferred");
    }

    #[test]
    fn retry_after_http_date_is_relative_to_now() {
        let at = UNIX_EPOCH + Duration::from_millis(NOW.as_millis() as u64 + 30_000);
        let h = headers(&[("retry-after", &httpdate::fmt_http_date(at))]);
        assert_eq!(announced_wait(&h, NOW, SAME), Some(Duration::from_secs(30)), "an HTTP date counts from now");
    }

    #[test]
    fn anthropic_reset_takes_the_latest() {
        let h = headers(&[
            ("anthropic-ratelimit-requests-reset", "2027-01-15T08:00:10Z"),
            ("anthropic-ratelimit-tokens-reset", "2027-01-15T08:00:40Z"),
        ]);
        let now = Timestamp::from_millis(
            humantime::parse_rfc3339("2027-01-15T08:00:00Z").unwrap().duration_since(UNIX_EPOCH).unwrap().as_millis()
                as i64,
        );
        assert_eq!(
            announced_wait(&h, now, SAME),
            Some(Duration::from_secs(41)),
            "the later reset governs, until the end of its second"
        );
    }

    #[test]
    fn openai_reset_durations() {
        let h = headers(&[("x-ratelimit-reset-requests", "6m0s"), ("x-ratelimit-reset-tokens", "20ms")]);
        assert_eq!(announced_wait(&h, NOW, SAME), Some(Duration::from_secs(360)), "6m0s is six minutes");
        assert_eq!(parse_go_duration("1.5s"), Some(Duration::from_millis(1500)), "fractions are allowed");
        assert_eq!(parse_go_duration("soon"), None, "garbage is ignored");
    }

    #[test]
    fn openai_windows_are_read_with_resets_from_now() {
        let h = headers(&[
            ("x-ratelimit-limit-requests", "5"),
            ("x-ratelimit-remaining-requests", "3"),
            ("x-ratelimit-reset-requests", "1.2s"),
            ("x-ratelimit-limit-tokens", "40000"),
            ("x-ratelimit-remaining-tokens", "39000"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ]);
        let announced = announced_limits(WireFormat::OpenAiChat, &h, NOW, SAME);
        assert_eq!(
            announced.requests,
            Some(Window { limit: Some(5), remaining: 3, reset_at: NOW + Duration::from_millis(1200) }),
            "3 of 5 requests left for 1.2 s"
        );
        assert_eq!(announced.tokens.map(|w| w.reset_at), Some(NOW + Duration::from_secs(360)), "tokens reset in 6 min");
    }

    #[test]
    fn anthropic_windows_are_read_from_rfc3339_resets() {
        let now = Timestamp::from_millis(
            humantime::parse_rfc3339("2027-01-15T08:00:00Z").unwrap().duration_since(UNIX_EPOCH).unwrap().as_millis()
                as i64,
        );
        let h = headers(&[
            ("anthropic-ratelimit-requests-limit", "50"),
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", "2027-01-15T08:00:02Z"),
            ("anthropic-ratelimit-tokens-limit", "30000"),
            ("anthropic-ratelimit-tokens-remaining", "29000"),
            ("anthropic-ratelimit-tokens-reset", "2027-01-15T08:00:30Z"),
            ("anthropic-ratelimit-input-tokens-limit", "20000"),
            ("anthropic-ratelimit-input-tokens-remaining", "19500"),
            ("anthropic-ratelimit-input-tokens-reset", "2027-01-15T08:00:10Z"),
        ]);
        let announced = announced_limits(WireFormat::AnthropicMessages, &h, now, SAME);
        assert_eq!(
            announced.requests.map(|w| (w.remaining, w.reset_at)),
            Some((0, now + Duration::from_secs(3))),
            "a reset at 08:00:02 in whole seconds may mean any moment until 08:00:03"
        );
        assert_eq!(
            announced.tokens,
            Some(Window { limit: Some(20000), remaining: 19500, reset_at: now + Duration::from_secs(11) }),
            "the input-token window, which the request's estimate is measured against"
        );
    }

    #[test]
    fn negative_or_missing_values_are_unknown_not_nothing_left() {
        let azure = headers(&[
            ("x-ratelimit-limit-tokens", "-1"),
            ("x-ratelimit-remaining-tokens", "-1"),
            ("x-ratelimit-reset-tokens", "0"),
        ]);
        assert!(announced_limits(WireFormat::OpenAiChat, &azure, NOW, SAME).is_empty(), "Azure's -1 means unknown");
        let no_reset = headers(&[("x-ratelimit-remaining-requests", "0")]);
        assert!(
            announced_limits(WireFormat::OpenAiChat, &no_reset, NOW, SAME).is_empty(),
            "a count without a reset says nothing"
        );
    }

    #[test]
    fn a_window_is_believed_to_refill_within_the_longest_cooldown() {
        let h = headers(&[("x-ratelimit-remaining-requests", "0"), ("x-ratelimit-reset-requests", "20h0m0s")]);
        let window = announced_limits(WireFormat::OpenAiChat, &h, NOW, SAME).requests.unwrap();
        assert_eq!(window.reset_at, NOW + MAX_RESET_AHEAD, "a day's budget is tried again in 15 min, not tomorrow");
    }

    #[test]
    fn nothing_announced() {
        assert_eq!(announced_wait(&headers(&[("content-type", "application/json")]), NOW, SAME), None);
    }
}

#[cfg(test)]
mod provider_instants {
    use super::tests::announced_limits;
    use super::*;
    use crate::wire::WireFormat;

    fn at(text: &str) -> i64 {
        millis_since_epoch(humantime::parse_rfc3339(text).unwrap()).unwrap()
    }

    #[test]
    fn an_instant_lasts_as_long_as_its_precision() {
        let same = ClockSkew::default();
        let cases = [
            ("2026-12-01T10:15:42Z", 1000, "whole seconds: until the end of the second"),
            ("2026-12-01T10:15:42.5Z", 100, "one decimal: until the end of the tenth"),
            ("2026-12-01T10:15:42.25Z", 10, "two decimals"),
            ("2026-12-01T10:15:42.250Z", 0, "milliseconds are exact on our clock"),
            ("2026-12-01T10:15:42.250123Z", 0, "and so is anything finer"),
        ];
        for (text, extra, why) in cases {
            let local = provider_instant(text, same).expect(text).as_millis();
            assert_eq!(local - at(text), extra, "{why}: {text}");
        }
    }

    #[test]
    fn an_instant_moves_by_the_providers_clock_offset() {
        let behind = ClockSkew { min_ms: -2000, max_ms: -1950 };
        let ahead = ClockSkew { min_ms: 1950, max_ms: 2000 };
        let text = "2026-12-01T10:15:42Z";
        assert_eq!(
            provider_instant(text, behind).unwrap().as_millis() - at(text),
            3000,
            "a clock 2 s behind reaches 10:15:43 two seconds after ours"
        );
        assert_eq!(
            provider_instant(text, ahead).unwrap().as_millis() - at(text),
            -950,
            "one up to 2 s ahead reaches it earlier: read by the smallest offset it may have"
        );
    }

    #[test]
    fn whole_second_windows_of_a_clock_behind_ours_are_read_late_enough() {
        let now = Timestamp::from_millis(at("2026-12-01T10:15:40.480Z"));
        let headers: HeaderMap = [
            ("anthropic-ratelimit-requests-limit", "5"),
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", "2026-12-01T10:15:40Z"),
        ]
        .into_iter()
        .map(|(k, v)| (reqwest::header::HeaderName::from_static(k), reqwest::header::HeaderValue::from_static(v)))
        .collect();
        let behind = ClockSkew { min_ms: -2000, max_ms: -1990 };
        let window = announced_limits(WireFormat::AnthropicMessages, &headers, now, behind).requests.unwrap();
        assert_eq!(
            window.reset_at,
            Timestamp::from_millis(at("2026-12-01T10:15:43Z")),
            "a window the provider says ends during its 10:15:40 ends by 10:15:43 on ours, not now"
        );
    }
}

//! The wait a provider announces with a 429/529, from whichever header it uses.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use keypool::Timestamp;
use reqwest::header::HeaderMap;

/// How long the provider asked us to wait, measured from `now`, if it said so.
///
/// Precedence: `retry-after-ms`, then `retry-after` (seconds or an HTTP date), then the latest
/// of the reset times (`anthropic-ratelimit-*-reset` as RFC 3339 instants, `x-ratelimit-reset-*`
/// as durations like `6m0s`). The pool bounds the result by its cooldown cap.
pub fn announced_wait(headers: &HeaderMap, now: Timestamp) -> Option<Duration> {
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
        if let Ok(at) = httpdate::parse_http_date(value) {
            return Some(until(at, now));
        }
    }

    let mut latest: Option<Duration> = None;
    for (name, value) in headers {
        let Ok(value) = value.to_str() else { continue };
        let name = name.as_str();
        let wait = if name.starts_with("anthropic-ratelimit-") && name.ends_with("-reset") {
            humantime::parse_rfc3339_weak(value.trim()).ok().map(|at| until(at, now))
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

fn until(at: SystemTime, now: Timestamp) -> Duration {
    let at_ms = at.duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
    Duration::from_millis(at_ms.saturating_sub(now.as_millis()).max(0) as u64)
}

/// `1s`, `6m0s`, `20ms`, `1.5s`, `1h2m3.5s`: the format OpenAI's reset headers use.
fn parse_go_duration(text: &str) -> Option<Duration> {
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
    use reqwest::header::{HeaderName, HeaderValue};

    const NOW: Timestamp = Timestamp::from_millis(1_800_000_000_000);

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| (HeaderName::from_bytes(k.as_bytes()).unwrap(), HeaderValue::from_str(v).unwrap()))
            .collect()
    }

    #[test]
    fn retry_after_seconds() {
        assert_eq!(announced_wait(&headers(&[("retry-after", "7")]), NOW), Some(Duration::from_secs(7)));
    }

    #[test]
    fn retry_after_ms_wins() {
        let h = headers(&[("retry-after", "7"), ("retry-after-ms", "1500")]);
        assert_eq!(announced_wait(&h, NOW), Some(Duration::from_millis(1500)), "the precise header is preferred");
    }

    #[test]
    fn retry_after_http_date_is_relative_to_now() {
        let at = UNIX_EPOCH + Duration::from_millis(NOW.as_millis() as u64 + 30_000);
        let h = headers(&[("retry-after", &httpdate::fmt_http_date(at))]);
        assert_eq!(announced_wait(&h, NOW), Some(Duration::from_secs(30)), "an HTTP date counts from now");
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
        assert_eq!(announced_wait(&h, now), Some(Duration::from_secs(40)), "the later reset governs");
    }

    #[test]
    fn openai_reset_durations() {
        let h = headers(&[("x-ratelimit-reset-requests", "6m0s"), ("x-ratelimit-reset-tokens", "20ms")]);
        assert_eq!(announced_wait(&h, NOW), Some(Duration::from_secs(360)), "6m0s is six minutes");
        assert_eq!(parse_go_duration("1.5s"), Some(Duration::from_millis(1500)), "fractions are allowed");
        assert_eq!(parse_go_duration("soon"), None, "garbage is ignored");
    }

    #[test]
    fn nothing_announced() {
        assert_eq!(announced_wait(&headers(&[("content-type", "application/json")]), NOW), None);
    }
}

//! Coding plans: keys sold with windows (Z.ai's GLM Coding Plan: 5 hours and a week or a month;
//! MiniMax's: 5 hours) rather than a balance. Where the vendor answers a window read (the row's
//! [`WindowRead`]: Z.ai's `GET /api/monitor/usage/quota/limit`, MiniMax's
//! `GET /v1/api/openplatform/coding_plan/remains`), each key's windows are read: what share of
//! each is used, and when it resets. A window read used up rests the key until that reset (a
//! plan window, see [`keypool::Quota::PlanWindow`]); so does a refusal that names the reset
//! (`wire::refusal`), read or not. A bad answer changes nothing and says why. At most one read a
//! minute per key; never on a request's path.

use keypool::{Announced, FailureKind, KeyId, Quota, Secret, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::balance::{unreadable, BalanceProblem, ReadAt, ReadAuth, BALANCE_READ_GAP};
use crate::provider::ProviderEndpoint;
use crate::service::CompletionService;

/// How one kind reads a key's plan windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowRead {
    pub at: ReadAt,
    pub auth: ReadAuth,
    pub dialect: WindowDialect,
}

/// How a window answer is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowDialect {
    /// `{"code":200,"data":{"limits":[{"type":"TOKENS_LIMIT","unit":3,"number":5,"percentage":1,
    /// "nextResetTime":1771073738808},…]}}`: a window is `number` × `unit` (3 hours, 5 months,
    /// 6 weeks), `percentage` of it used. `TIME_LIMIT` (the tools' monthly time) is no chat window.
    ZhipuQuota,
    /// `{"model_remains":[{"current_interval_total_count":1500,"current_interval_usage_count":1200,
    /// "start_time":…,"end_time":…}],"base_resp":{"status_code":0}}`: `usage_count` is what is
    /// left (the name misleads; every client reads it so), the window from start to end.
    MiniMaxRemains,
}

/// How long a window is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WindowSpan {
    pub count: u32,
    pub unit: SpanUnit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum SpanUnit {
    Hour,
    Day,
    Week,
    Month,
}

/// One window of a plan, as read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PlanWindow {
    pub span: WindowSpan,
    /// The share used, 0 to 1.
    pub used: f64,
    /// When it is whole again, if the answer says (milliseconds since the epoch).
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub resets_at: Option<i64>,
}

/// One window read of one key.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowReading {
    pub at: Timestamp,
    pub found: Result<Vec<PlanWindow>, BalanceProblem>,
}

/// A reset more than this far ahead is a broken answer (a plan's longest window is a month).
const FURTHEST_RESET_MS: i64 = 40 * 24 * 3600 * 1000;

impl WindowDialect {
    /// The windows `answer` tells as of `now`, or why it tells none.
    pub fn read(self, answer: &Value, now: Timestamp) -> Result<Vec<PlanWindow>, String> {
        let windows = match self {
            WindowDialect::ZhipuQuota => {
                if answer.get("success").and_then(Value::as_bool) == Some(false) {
                    let message = answer.get("msg").and_then(Value::as_str).unwrap_or("refused");
                    return Err(format!("the provider says: {}", message.chars().take(200).collect::<String>()));
                }
                let limits = answer.pointer("/data/limits").and_then(Value::as_array).ok_or("no data.limits")?;
                limits
                    .iter()
                    .filter(|limit| limit.get("type").and_then(Value::as_str) == Some("TOKENS_LIMIT"))
                    .map(|limit| {
                        let unit = match limit.get("unit").and_then(Value::as_u64) {
                            Some(3) => SpanUnit::Hour,
                            Some(1) => SpanUnit::Day,
                            Some(6) => SpanUnit::Week,
                            Some(5) => SpanUnit::Month,
                            _ => return Err("a window in an unknown unit".to_owned()),
                        };
                        let count = limit.get("number").and_then(Value::as_u64).filter(|n| (1..=1000).contains(n));
                        let count = u32::try_from(count.ok_or("a window of no size")?).unwrap_or(1);
                        let percentage = limit.get("percentage").and_then(Value::as_f64).ok_or("no percentage")?;
                        if !(0.0..=100.0).contains(&percentage) {
                            return Err(format!("a share no window has ({percentage}%)"));
                        }
                        let resets_at = reset(limit.get("nextResetTime"), now)?;
                        Ok(PlanWindow { span: WindowSpan { count, unit }, used: percentage / 100.0, resets_at })
                    })
                    .collect::<Result<Vec<_>, String>>()?
            }
            WindowDialect::MiniMaxRemains => {
                if let Some(code) = answer.pointer("/base_resp/status_code").and_then(Value::as_i64) {
                    if code != 0 {
                        let message =
                            answer.pointer("/base_resp/status_msg").and_then(Value::as_str).unwrap_or("refused");
                        return Err(format!("the provider says: {}", message.chars().take(200).collect::<String>()));
                    }
                }
                let remains = answer.get("model_remains").and_then(Value::as_array).ok_or("no model_remains")?;
                let first = remains.first().ok_or("no window in model_remains")?;
                let number = |name: &str| first.get(name).and_then(Value::as_f64).filter(|n| n.is_finite());
                let total = number("current_interval_total_count").filter(|t| *t > 0.0).ok_or("no window total")?;
                let left = number("current_interval_usage_count").ok_or("no count left")?;
                if !(0.0..=total).contains(&left) {
                    return Err(format!("more left than the window holds ({left} of {total})"));
                }
                let resets_at = reset(first.get("end_time"), now)?;
                let start = first.get("start_time").and_then(Value::as_i64);
                let hours = match (start, resets_at) {
                    (Some(start), Some(end)) if end > start => ((end - start) as f64 / 3_600_000.0).round().max(1.0),
                    _ => 5.0,
                };
                vec![PlanWindow {
                    span: WindowSpan { count: hours as u32, unit: SpanUnit::Hour },
                    used: 1.0 - left / total,
                    resets_at,
                }]
            }
        };
        if windows.is_empty() {
            return Err("no window in the answer".into());
        }
        Ok(windows)
    }
}

/// A reset instant in milliseconds (or seconds) since the epoch: none when absent, an error when
/// it is no instant a window could reset at (years ahead). One in the past is kept: it says the
/// window is whole again, and rests nothing.
fn reset(value: Option<&Value>, now: Timestamp) -> Result<Option<i64>, String> {
    let Some(value) = value.filter(|v| !v.is_null()) else { return Ok(None) };
    let at = value.as_i64().ok_or("a reset that is no instant")?;
    let at = if at < 100_000_000_000 { at.saturating_mul(1000) } else { at };
    if at - now.as_millis() > FURTHEST_RESET_MS {
        return Err("a reset years ahead".into());
    }
    Ok(Some(at))
}

impl CompletionService {
    /// `key`'s plan windows (its stored value `stored`), read the way `endpoint`'s kind reads
    /// them; none where the kind reads none. Within a minute of the key's last read, that read's
    /// reading, without effect. A fresh reading with a window used up (and its reset ahead) rests
    /// the key until the reset, as a refusal naming it would; nothing else changes the key.
    pub async fn read_windows(
        &self,
        endpoint: &ProviderEndpoint,
        key: &KeyId,
        stored: &Secret,
    ) -> Option<WindowReading> {
        let read = endpoint.kind.row().windows?;
        let cell = self.windows.of(key);
        let mut last = cell.lock().await;
        if let Some(reading) = last.as_ref() {
            if self.clock.now().as_millis() - reading.at.as_millis() < BALANCE_READ_GAP.as_millis() as i64 {
                return Some(reading.clone());
            }
        }
        let found = self.ask_windows(endpoint, &read, stored).await;
        let reading = WindowReading { at: self.clock.now(), found };
        *last = Some(reading.clone());
        drop(last);
        self.act_on_windows(endpoint, key, &reading);
        Some(reading)
    }

    async fn ask_windows(
        &self,
        endpoint: &ProviderEndpoint,
        read: &WindowRead,
        stored: &Secret,
    ) -> Result<Vec<PlanWindow>, BalanceProblem> {
        let (status, answer) = self.ask_read(endpoint, read.at, read.auth, stored, "windows").await?;
        read.dialect.read(&answer, self.clock.now()).map_err(|why| unreadable(status, "windows", why))
    }

    fn act_on_windows(&self, endpoint: &ProviderEndpoint, key: &KeyId, reading: &WindowReading) {
        let Ok(windows) = &reading.found else { return };
        let now = reading.at.as_millis();
        let used_up = windows.iter().filter(|w| w.used >= 1.0).filter_map(|w| w.resets_at.filter(|&at| at > now)).max();
        let Some(until) = used_up else { return };
        let until = Timestamp::from_millis(until);
        tracing::info!(provider = %endpoint.id, %key, %until, "a key's plan window is used up: it rests until the reset");
        let kind = FailureKind::RateLimited {
            retry_after: None,
            announced: Announced::default(),
            quota: Some(Quota::PlanWindow { until }),
        };
        if let Err(error) = self.report(&endpoint.id, key, 429, kind, "", reading.at) {
            tracing::warn!(%key, %error, "a key's used-up window could not be reported to the pool");
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const NOW: Timestamp = Timestamp::from_millis(1_771_060_000_000);

    #[test]
    fn zhipu_s_windows_by_their_unit_not_their_size() {
        let answer = json!({"code": 200, "success": true, "data": {"level": "lite", "limits": [
            {"type": "TOKENS_LIMIT", "unit": 3, "number": 5, "percentage": 32, "nextResetTime": 1_771_073_738_808i64},
            {"type": "TOKENS_LIMIT", "unit": 6, "number": 1, "percentage": 60, "nextResetTime": 1_771_500_000_000i64},
            {"type": "TIME_LIMIT", "unit": 5, "number": 1, "usage": 100, "currentValue": 28, "remaining": 72, "percentage": 28},
        ]}});
        let windows = WindowDialect::ZhipuQuota.read(&answer, NOW).unwrap();
        assert_eq!(windows.len(), 2, "the tools' time is no chat window");
        assert_eq!(windows[0].span, WindowSpan { count: 5, unit: SpanUnit::Hour });
        assert!((windows[0].used - 0.32).abs() < 1e-9);
        assert_eq!(windows[0].resets_at, Some(1_771_073_738_808));
        assert_eq!(windows[1].span, WindowSpan { count: 1, unit: SpanUnit::Week });
        let seconds = json!({"data": {"limits": [{"type": "TOKENS_LIMIT", "unit": 3, "number": 5, "percentage": 100,
            "nextResetTime": 1_771_073_738i64}]}});
        assert_eq!(
            WindowDialect::ZhipuQuota.read(&seconds, NOW).unwrap()[0].resets_at,
            Some(1_771_073_738_000),
            "seconds too"
        );
    }

    #[test]
    fn minimax_s_count_left_is_what_remains() {
        let start = NOW.as_millis() - 3_600_000;
        let answer = json!({"base_resp": {"status_code": 0, "status_msg": "success"}, "model_remains": [
            {"model_name": "MiniMax-M2", "current_interval_total_count": 1500, "current_interval_usage_count": 1200,
             "start_time": start, "end_time": start + 5 * 3_600_000, "remains_time": 4 * 3_600_000}
        ]});
        let windows = WindowDialect::MiniMaxRemains.read(&answer, NOW).unwrap();
        assert_eq!(windows[0].span, WindowSpan { count: 5, unit: SpanUnit::Hour });
        assert!((windows[0].used - 0.2).abs() < 1e-9, "1200 of 1500 left: a fifth used");
    }

    #[test]
    fn answers_that_say_nothing_readable_are_no_windows() {
        let zhipu = [
            json!({"code": 401, "msg": "token expired", "success": false}),
            json!({"data": {"limits": []}}),
            json!({"data": {"limits": [{"type": "TOKENS_LIMIT", "unit": 9, "number": 5, "percentage": 1}]}}),
            json!({"data": {"limits": [{"type": "TOKENS_LIMIT", "unit": 3, "number": 5, "percentage": 170}]}}),
            json!({"data": {"limits": [{"type": "TOKENS_LIMIT", "unit": 3, "number": 5, "percentage": 1, "nextResetTime": 9_999_999_999_999i64}]}}),
            json!({"data": {"limits": [{"type": "TOKENS_LIMIT", "unit": 3, "number": 0, "percentage": 1}]}}),
        ];
        for answer in zhipu {
            assert!(WindowDialect::ZhipuQuota.read(&answer, NOW).is_err(), "{answer}");
        }
        let minimax = [
            json!({"base_resp": {"status_code": 1004, "status_msg": "login fail"}}),
            json!({"model_remains": [{"current_interval_total_count": 10, "current_interval_usage_count": 11}]}),
            json!({"model_remains": [{"current_interval_total_count": 0, "current_interval_usage_count": 0}]}),
            json!({"model_remains": []}),
        ];
        for answer in minimax {
            assert!(WindowDialect::MiniMaxRemains.read(&answer, NOW).is_err(), "{answer}");
        }
    }
}

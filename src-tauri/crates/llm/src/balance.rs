//! What a prepaid key has left, where its provider answers a balance read: DeepSeek
//! (`GET /user/balance`), Moonshot (`GET users/me/balance`), SiliconFlow (`GET user/info`) and
//! OpenRouter (`GET key`). Each kind's read is a row's [`BalanceRead`]: a path and the dialect
//! its answer is read in.
//!
//! A reading moves the key (see [`CompletionService::read_balance`]): nothing left rests it as
//! out of credit, as a 402 does, and something left brings an out-of-credit key back, so a top-up
//! returns it without a click. An answer that says nothing readable (HTML, missing fields, an
//! amount no account holds) leaves the key as it was, with the reason kept for its row. A key is
//! read at most once a minute; a read never sits on a request's path.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use keypool::{FailureKind, KeyId, KeyState, Secret, Timestamp};
use serde::Serialize;
use serde_json::Value;

use crate::models::Masking;
use crate::probe::{Credit, ModelsFailure, ProbeProblem};
use crate::provider::ProviderEndpoint;
use crate::service::CompletionService;

/// How one kind reads a key's balance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BalanceRead {
    pub at: ReadAt,
    pub dialect: BalanceDialect,
}

/// Where a balance is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadAt {
    /// Under the base URL (`users/me/balance` under `https://api.moonshot.ai/v1`).
    UnderBase(&'static str),
    /// At the base URL's host root (DeepSeek's `/user/balance`, whichever base the user chose).
    AtRoot(&'static str),
}

/// How a balance answer is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BalanceDialect {
    /// `{"is_available": true, "balance_infos": [{"currency": "CNY", "total_balance": "110.00", …}]}`.
    DeepSeek,
    /// `{"code": 0, "data": {"available_balance": 49.58, "voucher_balance": …, "cash_balance": …}}`,
    /// in yuan on `api.moonshot.cn`, in dollars on `api.moonshot.ai`.
    Moonshot,
    /// `{"code": 20000, "data": {"totalBalance": "88.88", "balance": …, "chargeBalance": …}}`, in
    /// yuan on `siliconflow.cn`, in dollars on `siliconflow.com`.
    SiliconFlow,
    /// OpenRouter's key answer: `data.limit_remaining` in dollars, none for a key without limit.
    OpenRouterKey,
}

/// An amount of money the provider holds for a key's account.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Balance {
    pub amount: f64,
    /// Its ISO 4217 code (`USD`, `CNY`).
    pub currency: String,
    /// The provider takes requests on it: the amount is above zero, and (DeepSeek) the account
    /// says it is available for API calls.
    pub usable: bool,
}

/// What a balance read found.
#[derive(Debug, Clone, PartialEq)]
pub enum BalanceFound {
    Left(Balance),
    /// The key has no spending limit (an OpenRouter key without one).
    Unlimited,
}

/// Why a balance read found nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct BalanceProblem {
    /// The answer's status, when one came.
    pub status: Option<u16>,
    /// What went wrong, in English (the provider's words, masked, on a refusal).
    pub message: String,
}

/// One balance read of one key.
#[derive(Debug, Clone, PartialEq)]
pub struct BalanceReading {
    pub at: Timestamp,
    pub found: Result<BalanceFound, BalanceProblem>,
}

/// The most any account holds: an amount beyond it is no balance but a broken answer.
const MOST_A_BALANCE_HOLDS: f64 = 1e12;

/// The least time between two reads of one key's balance.
pub const BALANCE_READ_GAP: Duration = Duration::from_secs(60);

impl ReadAt {
    /// Where it is for `endpoint`.
    pub(crate) fn url(&self, endpoint: &ProviderEndpoint) -> Option<reqwest::Url> {
        match *self {
            ReadAt::UnderBase(path) => reqwest::Url::parse(&endpoint.url_of(path)).ok(),
            ReadAt::AtRoot(path) => reqwest::Url::parse(&endpoint.base_url).ok()?.join(path).ok(),
        }
    }
}

impl BalanceDialect {
    /// The balance `answer` (from a service at `base_url`) tells, or why it tells none.
    pub fn read(self, answer: &Value, base_url: &str) -> Result<BalanceFound, String> {
        let found = match self {
            BalanceDialect::DeepSeek => {
                let infos = answer.get("balance_infos").and_then(Value::as_array).ok_or("no balance_infos")?;
                // One entry per currency; dollars first where there are several.
                let info = infos
                    .iter()
                    .find(|info| info.get("currency").and_then(Value::as_str) == Some("USD"))
                    .or_else(|| infos.first())
                    .ok_or("no balance in balance_infos")?;
                let currency = info.get("currency").and_then(Value::as_str).ok_or("a balance without currency")?;
                let amount = amount(info.get("total_balance")).ok_or("no total_balance")?;
                let available = answer.get("is_available").and_then(Value::as_bool).unwrap_or(true);
                balance(amount, currency, available)?
            }
            BalanceDialect::Moonshot => {
                let data = answer.get("data").ok_or("no data")?;
                let amount = amount(data.get("available_balance")).ok_or("no available_balance")?;
                balance(amount, currency_by_host(base_url, ".cn"), true)?
            }
            BalanceDialect::SiliconFlow => {
                let data = answer.get("data").ok_or("no data")?;
                let amount = amount(data.get("totalBalance")).ok_or("no totalBalance")?;
                balance(amount, currency_by_host(base_url, ".cn"), true)?
            }
            BalanceDialect::OpenRouterKey => {
                let credit = Credit::of_key_info(answer).ok_or("no data")?;
                match credit.remaining {
                    None => BalanceFound::Unlimited,
                    Some(left) => balance(left, "USD", true)?,
                }
            }
        };
        Ok(found)
    }
}

/// A number, or a number written as text (DeepSeek and SiliconFlow write `"110.00"`).
fn amount(value: Option<&Value>) -> Option<f64> {
    match value? {
        Value::Number(n) => n.as_f64(),
        Value::String(text) => text.trim().parse::<f64>().ok(),
        _ => None,
    }
}

fn balance(amount: f64, currency: &str, available: bool) -> Result<BalanceFound, String> {
    if !amount.is_finite() || amount.abs() > MOST_A_BALANCE_HOLDS {
        return Err(format!("a balance no account holds ({amount})"));
    }
    let currency = currency.trim();
    if currency.len() != 3 || !currency.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err("a balance in no currency".into());
    }
    Ok(BalanceFound::Left(Balance {
        amount,
        currency: currency.to_ascii_uppercase(),
        usable: available && amount > 0.0,
    }))
}

/// Yuan on the service's Chinese host (its name ending in `suffix`), dollars elsewhere: the
/// answer does not say.
fn currency_by_host(base_url: &str, suffix: &str) -> &'static str {
    let host = reqwest::Url::parse(base_url).ok().and_then(|url| url.host_str().map(str::to_owned));
    if host.is_some_and(|host| host.ends_with(suffix)) {
        "CNY"
    } else {
        "USD"
    }
}

/// The last reading of each key (its balance, its plan's windows), with one read in flight per
/// key: a read holds the key's cell.
pub(crate) struct LastReads<T> {
    cells: Mutex<HashMap<KeyId, Arc<tokio::sync::Mutex<Option<T>>>>>,
}

impl<T> Default for LastReads<T> {
    fn default() -> Self {
        LastReads { cells: Mutex::default() }
    }
}

impl<T> LastReads<T> {
    pub(crate) fn of(&self, key: &KeyId) -> Arc<tokio::sync::Mutex<Option<T>>> {
        self.cells.lock().unwrap_or_else(|e| e.into_inner()).entry(key.clone()).or_default().clone()
    }
}

/// How the key goes with a read about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadAuth {
    /// As the kind sends it with a request (`Authorization: Bearer`, `x-api-key`).
    AsRequests,
    /// `Authorization: KEY`, the key alone (Z.ai's monitor).
    Raw,
}

impl CompletionService {
    /// `key`'s balance (its stored value `stored`), read the way `endpoint`'s kind reads one;
    /// none where the kind reads none. Within [`BALANCE_READ_GAP`] of the key's last read, that
    /// read's reading, unchanged and without effect. A fresh reading moves the key: a balance the
    /// provider takes no request on rests it as out of credit (already resting, it counts as a
    /// failed probe, so its next read waits longer); one it takes requests on (or no limit)
    /// returns an out-of-credit key to rotation. No answer, or one that says nothing readable,
    /// changes nothing.
    pub async fn read_balance(
        &self,
        endpoint: &ProviderEndpoint,
        key: &KeyId,
        stored: &Secret,
    ) -> Option<BalanceReading> {
        let read = endpoint.kind.row().balance?;
        let cell = self.balances.of(key);
        let mut last = cell.lock().await;
        if let Some(reading) = last.as_ref() {
            if self.clock.now().as_millis() - reading.at.as_millis() < BALANCE_READ_GAP.as_millis() as i64 {
                return Some(reading.clone());
            }
        }
        let found = self.ask_balance(endpoint, &read, stored).await;
        let now = self.clock.now();
        let reading = BalanceReading { at: now, found };
        *last = Some(reading.clone());
        drop(last);
        self.act_on_balance(endpoint, key, &reading);
        Some(reading)
    }

    async fn ask_balance(
        &self,
        endpoint: &ProviderEndpoint,
        read: &BalanceRead,
        stored: &Secret,
    ) -> Result<BalanceFound, BalanceProblem> {
        let (status, answer) = self.ask_read(endpoint, read.at, ReadAuth::AsRequests, stored, "balance").await?;
        read.dialect.read(&answer, &endpoint.base_url).map_err(|why| unreadable(status, "balance", why))
    }

    /// `GET` the read at `at` about the key stored as `stored` (`$NAME` resolved), the key sent
    /// as `auth` says: the answer's status and JSON, or why there is none (`what` names the read).
    pub(crate) async fn ask_read(
        &self,
        endpoint: &ProviderEndpoint,
        at: ReadAt,
        auth: ReadAuth,
        stored: &Secret,
        what: &str,
    ) -> Result<(u16, Value), BalanceProblem> {
        let secret = self.resolver.resolve(stored).map_err(|error| BalanceProblem {
            status: None,
            message: format!("environment variable {} has no usable value", error.var()),
        })?;
        let url = at.url(endpoint).ok_or_else(|| BalanceProblem { status: None, message: format!("no {what} URL") })?;
        let asked = match auth {
            ReadAuth::AsRequests => self.ask(endpoint, url, Some(&secret), Masking::Pool).await,
            ReadAuth::Raw => self.ask_raw(endpoint, url, &secret).await,
        };
        let (status, body) = asked.map_err(|failure| problem_of(failure, what))?;
        let answer = serde_json::from_slice(&body).map_err(|_| unreadable(status, what, "not JSON".into()))?;
        Ok((status, answer))
    }

    fn act_on_balance(&self, endpoint: &ProviderEndpoint, key: &KeyId, reading: &BalanceReading) {
        let usable = match &reading.found {
            Ok(BalanceFound::Left(balance)) => balance.usable,
            Ok(BalanceFound::Unlimited) => true,
            Err(_) => return,
        };
        let resting =
            self.pool.status(&endpoint.id, reading.at).ok().is_some_and(|keys| {
                keys.iter().any(|status| &status.key_id == key && status.state == KeyState::Exhausted)
            });
        if resting {
            tracing::info!(provider = %endpoint.id, %key, usable, "read the balance of an out-of-credit key");
            self.probed(key, usable);
        } else if !usable {
            tracing::info!(provider = %endpoint.id, %key, "a key's balance is used up: it rests as out of credit");
            match self.report(&endpoint.id, key, 402, FailureKind::QuotaExhausted, "", reading.at) {
                Ok(_) => self.recorder.key_out_of_credit(&endpoint.id, key, reading.at),
                Err(error) => tracing::warn!(%key, %error, "a key out of credit could not be reported to the pool"),
            }
        }
    }
}

/// An answer to the read `what` that says nothing readable, and `why`.
pub(crate) fn unreadable(status: u16, what: &str, why: String) -> BalanceProblem {
    BalanceProblem { status: Some(status), message: format!("unreadable {what}: {why}") }
}

fn problem_of(failure: ModelsFailure, what: &str) -> BalanceProblem {
    let message = match failure.problem {
        ProbeProblem::Unreadable => format!("unreadable {what}: no answer in full"),
        _ => failure.message,
    };
    BalanceProblem { status: failure.status, message }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const DEEPSEEK: &str = "https://api.deepseek.com";

    fn left(found: Result<BalanceFound, String>) -> Balance {
        match found {
            Ok(BalanceFound::Left(balance)) => balance,
            other => panic!("not a balance: {other:?}"),
        }
    }

    #[test]
    fn deepseek_s_balance_in_its_currency_dollars_first() {
        let answer = json!({"is_available": true, "balance_infos": [
            {"currency": "CNY", "total_balance": "110.00", "granted_balance": "10.00", "topped_up_balance": "100.00"}
        ]});
        let balance = left(BalanceDialect::DeepSeek.read(&answer, DEEPSEEK));
        assert_eq!((balance.amount, balance.currency.as_str(), balance.usable), (110.0, "CNY", true));
        let both = json!({"is_available": true, "balance_infos": [
            {"currency": "CNY", "total_balance": "7.00"}, {"currency": "USD", "total_balance": "1.25"}
        ]});
        assert_eq!(left(BalanceDialect::DeepSeek.read(&both, DEEPSEEK)).currency, "USD");
        let unavailable =
            json!({"is_available": false, "balance_infos": [{"currency": "USD", "total_balance": "3.00"}]});
        assert!(!left(BalanceDialect::DeepSeek.read(&unavailable, DEEPSEEK)).usable, "not available for API calls");
        let empty = json!({"is_available": false, "balance_infos": [{"currency": "CNY", "total_balance": "0.00"}]});
        assert!(!left(BalanceDialect::DeepSeek.read(&empty, DEEPSEEK)).usable, "nothing left");
    }

    #[test]
    fn moonshot_and_siliconflow_in_the_currency_of_their_host() {
        let moonshot = json!({"code": 0, "data": {"available_balance": 49.58894, "voucher_balance": 46.58893,
            "cash_balance": 3.00001}, "scode": "0x0", "status": true});
        let cn = left(BalanceDialect::Moonshot.read(&moonshot, "https://api.moonshot.cn/v1"));
        assert_eq!((cn.amount, cn.currency.as_str()), (49.58894, "CNY"));
        assert_eq!(left(BalanceDialect::Moonshot.read(&moonshot, "https://api.moonshot.ai/v1")).currency, "USD");
        let debt = json!({"code": 0, "data": {"available_balance": -0.5, "voucher_balance": 0, "cash_balance": -0.5}});
        assert!(
            !left(BalanceDialect::Moonshot.read(&debt, "https://api.moonshot.ai/v1")).usable,
            "a debt is no credit"
        );

        let silicon = json!({"code": 20000, "message": "OK", "status": true, "data": {"id": "", "balance": "0.88",
            "status": "normal", "chargeBalance": "88.00", "totalBalance": "88.88"}});
        let com = left(BalanceDialect::SiliconFlow.read(&silicon, "https://api.siliconflow.com/v1"));
        assert_eq!((com.amount, com.currency.as_str(), com.usable), (88.88, "USD", true));
        assert_eq!(left(BalanceDialect::SiliconFlow.read(&silicon, "https://api.siliconflow.cn/v1")).currency, "CNY");
    }

    #[test]
    fn openrouter_s_key_answer_is_its_limit_left_or_no_limit() {
        let limited = json!({"data": {"limit": 100.0, "limit_remaining": 74.5, "usage": 25.5}});
        let balance = left(BalanceDialect::OpenRouterKey.read(&limited, "https://openrouter.ai/api/v1"));
        assert_eq!((balance.amount, balance.currency.as_str()), (74.5, "USD"));
        let unlimited = json!({"data": {"limit": null, "limit_remaining": null, "usage": 3.0}});
        assert_eq!(
            BalanceDialect::OpenRouterKey.read(&unlimited, "https://openrouter.ai/api/v1"),
            Ok(BalanceFound::Unlimited)
        );
    }

    #[test]
    fn answers_that_say_nothing_readable_are_no_balance() {
        let broken = [
            json!({"balance_infos": "lots"}),
            json!({"is_available": true, "balance_infos": []}),
            json!({"is_available": true, "balance_infos": [{"currency": "CNY", "total_balance": "a lot"}]}),
            json!({"is_available": true, "balance_infos": [{"total_balance": "1.00"}]}),
            json!({"is_available": true, "balance_infos": [{"currency": "CNY", "total_balance": "1e300"}]}),
            json!({"is_available": true, "balance_infos": [{"currency": "C$", "total_balance": "1"}]}),
            json!({"error": {"message": "oops"}}),
        ];
        for answer in broken {
            assert!(BalanceDialect::DeepSeek.read(&answer, DEEPSEEK).is_err(), "{answer}");
        }
        assert!(BalanceDialect::Moonshot.read(&json!({"code": 0, "data": {}}), "https://api.moonshot.ai/v1").is_err());
        let huge = json!({"data": {"totalBalance": "-5e15"}});
        assert!(BalanceDialect::SiliconFlow.read(&huge, "https://api.siliconflow.com/v1").is_err());
    }

    #[test]
    fn a_read_at_the_root_ignores_the_base_path() {
        let endpoint = |base: &str| ProviderEndpoint {
            id: keypool::ProviderId::new("p"),
            name: "P".into(),
            kind: crate::ProviderKind::Deepseek,
            base_url: base.into(),
            provider_key: None,
        };
        let read = crate::ProviderKind::Deepseek.row().balance.unwrap();
        assert_eq!(
            read.at.url(&endpoint("https://api.deepseek.com/v1")).unwrap().as_str(),
            "https://api.deepseek.com/user/balance"
        );
        let moonshot = crate::ProviderKind::Moonshot.row().balance.unwrap();
        assert_eq!(
            moonshot.at.url(&endpoint("https://api.moonshot.ai/v1")).unwrap().as_str(),
            "https://api.moonshot.ai/v1/users/me/balance"
        );
    }
}

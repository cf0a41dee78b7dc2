//! `GET /metrics` in Prometheus' text format (0.0.4), written by hand: counters the request path
//! and the completion service bump (a short lock, no allocation once a series exists), and the
//! pool's, members' and team's state read when scraped.
//!
//! Names follow Prometheus' conventions: a `keypool_` prefix, base units in the name (`_seconds`,
//! `_tokens`, `_usd`), `_total` on counters only. Labels never hold a key or a token: a key is its
//! id and label, a provider its name, a member its name.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use keypool::{DisableReason, KeyId, KeyState, ProviderId, Timestamp};
use keypool_api::service::{BookSnapshot, MemberBook};
use keypool_api::AppContext;
use keypool_gateway::{Answered, Observer};
use keypool_llm::AttemptRecord;
use keypool_team::{Allowance, Team, TeamState};

use crate::alerts::Alerts;
use crate::observe::Observe;

/// The upper bounds of the added-time histogram, in seconds: from half a millisecond (what a
/// member check and a key's selection take on loopback) to ten seconds (a wait for a free key).
const ADDED_BUCKETS: [f64; 14] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// A histogram of durations with fixed buckets, bumped without a lock.
struct Histogram {
    /// Per bucket (not cumulative), and one past the last for +Inf.
    counts: [AtomicU64; ADDED_BUCKETS.len() + 1],
    sum_micros: AtomicU64,
}

impl Histogram {
    fn new() -> Histogram {
        Histogram { counts: std::array::from_fn(|_| AtomicU64::new(0)), sum_micros: AtomicU64::new(0) }
    }

    fn observe(&self, duration: Duration) {
        let seconds = duration.as_secs_f64();
        let bucket = ADDED_BUCKETS.iter().position(|&bound| seconds <= bound).unwrap_or(ADDED_BUCKETS.len());
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(duration.as_micros() as u64, Ordering::Relaxed);
    }
}

/// The series of `keypool_tokens_total`: provider id → model → member → the counts of each of
/// [`TOKEN_KINDS`]. Nested, so that counting an attempt finds its series by the names it has
/// (a key of owned names had to be built, three times, for every attempt).
type TokensSeries = HashMap<String, HashMap<String, HashMap<String, [u64; 3]>>>;

/// The kinds of `keypool_tokens_total`, in the order of a series' counts.
const TOKEN_KINDS: [&str; 3] = ["input", "cached", "output"];

/// What the server counts, and what it reads when scraped.
pub struct Metrics {
    /// (dialect, status, member) → answers.
    requests: Mutex<HashMap<(&'static str, u16, String), u64>>,
    added: Histogram,
    waits: AtomicU64,
    /// provider id → outcome → attempts.
    attempts: Mutex<HashMap<String, HashMap<&'static str, u64>>>,
    tokens: Mutex<TokensSeries>,
    /// (provider id, status) → keys disabled after a verified refusal.
    disabled: Mutex<HashMap<(String, u16), u64>>,
    /// Clients locked out for wrong tokens.
    lockouts: AtomicU64,
    /// Forwarded headers from peers that are no trusted proxy, ignored.
    forwarded_ignored: AtomicU64,
    reading: OnceLock<Reading>,
}

/// What a scrape reads besides the counters.
struct Reading {
    context: Weak<AppContext>,
    book: MemberBook,
    team: Option<Arc<Team>>,
    allowance: Option<Arc<Allowance>>,
    alerts: Alerts,
}

impl Metrics {
    pub fn new() -> Arc<Metrics> {
        Arc::new(Metrics {
            requests: Mutex::default(),
            added: Histogram::new(),
            waits: AtomicU64::new(0),
            attempts: Mutex::default(),
            tokens: Mutex::default(),
            disabled: Mutex::default(),
            lockouts: AtomicU64::new(0),
            forwarded_ignored: AtomicU64::new(0),
            reading: OnceLock::new(),
        })
    }

    /// Reads the pool, the members and the team of `context` when scraped from now on.
    pub fn attach(
        &self,
        context: &Arc<AppContext>,
        book: MemberBook,
        team: Option<Arc<Team>>,
        allowance: Option<Arc<Allowance>>,
        alerts: Alerts,
    ) {
        let _ = self.reading.set(Reading { context: Arc::downgrade(context), book, team, allowance, alerts });
    }

    /// The metrics now, in Prometheus' text format.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(64 * 1024);
        let reading = self.reading.get();
        let context = reading.and_then(|r| r.context.upgrade());
        let now = keypool::Clock::now(&keypool_api::SystemClock);
        let names: HashMap<String, String> = context
            .as_ref()
            .and_then(|c| c.providers().ok()?.list().ok())
            .map(|providers| providers.into_iter().map(|p| (p.id, p.name)).collect())
            .unwrap_or_default();
        let name = |id: &str| names.get(id).map_or(id, String::as_str).to_owned();

        let requests = sorted(lock(&self.requests).iter().map(|(k, v)| (k.clone(), *v)).collect());
        family(
            &mut out,
            "keypool_requests_total",
            "counter",
            "Requests answered by the API, by dialect, status and member.",
        );
        for ((dialect, status, member), count) in requests {
            sample(
                &mut out,
                "keypool_requests_total",
                &[("dialect", dialect), ("status", &status.to_string()), ("member", &member)],
                count as f64,
            );
        }
        self.render_added(&mut out);
        family(&mut out, "keypool_key_waits_total", "counter", "Requests that waited for a key to free up.");
        sample(&mut out, "keypool_key_waits_total", &[], self.waits.load(Ordering::Relaxed) as f64);
        family(&mut out, "keypool_client_lockouts_total", "counter", "Clients locked out for wrong tokens.");
        sample(&mut out, "keypool_client_lockouts_total", &[], self.lockouts.load(Ordering::Relaxed) as f64);
        family(
            &mut out,
            "keypool_forwarded_ignored_total",
            "counter",
            "Requests whose forwarded header was ignored: their peer is no trusted proxy.",
        );
        sample(&mut out, "keypool_forwarded_ignored_total", &[], self.forwarded_ignored.load(Ordering::Relaxed) as f64);

        let attempts = sorted(
            lock(&self.attempts)
                .iter()
                .flat_map(|(p, outcomes)| outcomes.iter().map(|(o, v)| ((name(p), *o), *v)))
                .collect(),
        );
        family(&mut out, "keypool_attempts_total", "counter", "Upstream attempts, by provider and outcome.");
        let mut failovers: HashMap<String, u64> = HashMap::new();
        for ((provider, outcome), count) in &attempts {
            sample(&mut out, "keypool_attempts_total", &[("provider", provider), ("outcome", outcome)], *count as f64);
            if matches!(*outcome, "rate_limited" | "auth_rejected" | "quota_exhausted") {
                *failovers.entry(provider.clone()).or_default() += count;
            }
        }
        family(
            &mut out,
            "keypool_failovers_total",
            "counter",
            "Attempts refused in a way the pool moves on from (rate limited, key rejected, out of credit).",
        );
        for (provider, count) in sorted(failovers.into_iter().collect()) {
            sample(&mut out, "keypool_failovers_total", &[("provider", &provider)], count as f64);
        }
        let mut tokens = Vec::new();
        for (provider, models) in lock(&self.tokens).iter() {
            for (model, members) in models {
                for (member, counts) in members {
                    for (kind, count) in TOKEN_KINDS.into_iter().zip(*counts).filter(|(_, count)| *count > 0) {
                        tokens.push(((name(provider), model.clone(), member.clone(), kind), count));
                    }
                }
            }
        }
        let tokens = sorted(tokens);
        family(
            &mut out,
            "keypool_tokens_total",
            "counter",
            "Tokens the providers reported, by provider, model, member and kind (input counts cached ones too).",
        );
        for ((provider, model, member, kind), count) in tokens {
            sample(
                &mut out,
                "keypool_tokens_total",
                &[("provider", &provider), ("model", &model), ("member", &member), ("kind", kind)],
                count as f64,
            );
        }
        let disabled = sorted(lock(&self.disabled).iter().map(|((p, s), v)| ((name(p), *s), *v)).collect());
        family(
            &mut out,
            "keypool_keys_disabled_total",
            "counter",
            "Keys disabled after a verified refusal, by provider and status.",
        );
        for ((provider, status), count) in disabled {
            sample(
                &mut out,
                "keypool_keys_disabled_total",
                &[("provider", &provider), ("status", &status.to_string())],
                count as f64,
            );
        }
        if let Some(context) = &context {
            render_keys(&mut out, context, &names, now);
        }
        if let Some(reading) = reading {
            render_members(&mut out, &reading.book.snapshot());
            render_team(&mut out, reading);
            render_alerts(&mut out, &reading.alerts);
        }
        family(&mut out, "keypool_build_info", "gauge", "The running build.");
        sample(&mut out, "keypool_build_info", &[("version", env!("CARGO_PKG_VERSION"))], 1.0);
        out
    }

    fn render_added(&self, out: &mut String) {
        let name = "keypool_added_seconds";
        family(out, name, "histogram", "Time Keypool added to a request before its first attempt went upstream (reading it, routing, a member's limits, choosing a key, waiting for one).");
        let mut cumulative = 0u64;
        for (i, bound) in ADDED_BUCKETS.iter().enumerate() {
            cumulative += self.added.counts[i].load(Ordering::Relaxed);
            sample(out, &format!("{name}_bucket"), &[("le", &bound.to_string())], cumulative as f64);
        }
        cumulative += self.added.counts[ADDED_BUCKETS.len()].load(Ordering::Relaxed);
        sample(out, &format!("{name}_bucket"), &[("le", "+Inf")], cumulative as f64);
        sample(out, &format!("{name}_sum"), &[], self.added.sum_micros.load(Ordering::Relaxed) as f64 / 1e6);
        sample(out, &format!("{name}_count"), &[], cumulative as f64);
    }

    fn attempt(&self, record: &AttemptRecord) {
        let provider = record.provider.as_str();
        {
            let mut attempts = lock(&self.attempts);
            let outcomes = match attempts.get_mut(provider) {
                Some(outcomes) => outcomes,
                None => attempts.entry(provider.to_owned()).or_default(),
            };
            *outcomes.entry(record.outcome.as_str()).or_default() += 1;
        }
        let Some(usage) = &record.usage else { return };
        let counts = [usage.input, usage.cached, usage.output];
        if counts == [0; 3] {
            return;
        }
        let member = record.member.as_deref().unwrap_or_default();
        let mut tokens = lock(&self.tokens);
        let models = match tokens.get_mut(provider) {
            Some(models) => models,
            None => tokens.entry(provider.to_owned()).or_default(),
        };
        let members = match models.get_mut(&*record.model) {
            Some(members) => members,
            None => models.entry(record.model.to_string()).or_default(),
        };
        let series = match members.get_mut(member) {
            Some(series) => series,
            None => members.entry(member.to_owned()).or_default(),
        };
        for (total, count) in series.iter_mut().zip(counts) {
            *total += count;
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn sorted<K: Ord, V>(mut items: Vec<(K, V)>) -> Vec<(K, V)> {
    items.sort_by(|a, b| a.0.cmp(&b.0));
    items
}

/// A family's `# HELP` and `# TYPE` lines.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// One sample line, its label values escaped as the format requires.
fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: f64) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (label, value)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(label);
            out.push_str("=\"");
            for c in value.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '"' => out.push_str("\\\""),
                    '\n' => out.push_str("\\n"),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

/// Each key's state (its id and label, never the key) and the count of keys per state.
fn render_keys(out: &mut String, context: &AppContext, names: &HashMap<String, String>, now: Timestamp) {
    let Ok(completions) = context.completions() else { return };
    let pool = completions.pool();
    let mut ids: Vec<&String> = names.keys().collect();
    ids.sort();
    let mut counts: Vec<(String, &'static str, u64)> = Vec::new();
    family(
        out,
        "keypool_key_state",
        "gauge",
        "1 for each key in its current state: active, cooling, disabled, exhausted or unavailable.",
    );
    for id in ids {
        let provider = &names[id];
        let Ok(keys) = pool.status(&ProviderId::new(id.as_str()), now) else { continue };
        let mut per_state: HashMap<&'static str, u64> = HashMap::new();
        for key in &keys {
            let state = key.state.as_str();
            *per_state.entry(state).or_default() += 1;
            let label = key.label.as_deref().unwrap_or("");
            sample(
                out,
                "keypool_key_state",
                &[("provider", provider), ("key", key.key_id.as_str()), ("label", label), ("state", state)],
                1.0,
            );
        }
        for state in
            [KeyState::Active, KeyState::Cooling, KeyState::Disabled, KeyState::Exhausted, KeyState::Unavailable]
        {
            let count = per_state.get(state.as_str()).copied().unwrap_or(0);
            counts.push((provider.clone(), state.as_str(), count));
        }
    }
    family(out, "keypool_keys", "gauge", "Keys per provider and state.");
    for (provider, state, count) in counts {
        sample(out, "keypool_keys", &[("provider", &provider), ("state", state)], count as f64);
    }
    render_balances(out, context, names);
    render_windows(out, context, names);
    render_expiries(out, context, names);
}

/// When each key that says so expires (short-term Bedrock keys), in seconds since the epoch:
/// an alert rule warns a week ahead (`keypool_key_expires_at_seconds - time() < 7 * 86400`).
fn render_expiries(out: &mut String, context: &AppContext, names: &HashMap<String, String>) {
    let (Ok(completions), Ok(providers)) = (context.completions(), context.providers()) else { return };
    family(out, "keypool_key_expires_at_seconds", "gauge", "When the key expires, where it says so (Unix seconds).");
    let mut ids: Vec<&String> = names.keys().collect();
    ids.sort();
    for id in ids {
        let Ok(endpoint) = providers.endpoint(id) else { continue };
        let mut expiries = completions.key_expiries(&endpoint);
        expiries.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        for (key, at) in expiries {
            let labels = [("provider", names[id].as_str()), ("key", key.as_str())];
            sample(out, "keypool_key_expires_at_seconds", &labels, (at.as_millis() / 1000) as f64);
        }
    }
}

/// What share of each coding-plan window each key has used, as last read (`window`: `5h`,
/// `1w`, `1mo`, `1d`).
fn render_windows(out: &mut String, context: &AppContext, names: &HashMap<String, String>) {
    let Ok(keys) = context.keys() else { return };
    family(out, "keypool_key_window_used_ratio", "gauge", "The share of the key's plan window used, as last read.");
    let mut ids: Vec<&String> = names.keys().collect();
    ids.sort();
    for id in ids {
        let Ok(mut read) = keys.windows(id) else { continue };
        read.sort_by(|a, b| a.key_id.cmp(&b.key_id));
        for row in read {
            let windows: Vec<keypool_llm::PlanWindow> = serde_json::from_str(&row.windows).unwrap_or_default();
            for window in windows {
                let unit = match window.span.unit {
                    keypool_llm::SpanUnit::Hour => "h",
                    keypool_llm::SpanUnit::Day => "d",
                    keypool_llm::SpanUnit::Week => "w",
                    keypool_llm::SpanUnit::Month => "mo",
                };
                let name = format!("{}{unit}", window.span.count);
                let labels =
                    [("provider", names[id].as_str()), ("key", row.key_id.as_str()), ("window", name.as_str())];
                sample(out, "keypool_key_window_used_ratio", &labels, window.used);
            }
        }
    }
}

/// What each prepaid key's account has left, as last read, in its currency (keys of providers
/// that answer balance reads, whose last read found an amount).
fn render_balances(out: &mut String, context: &AppContext, names: &HashMap<String, String>) {
    let Ok(keys) = context.keys() else { return };
    family(out, "keypool_key_balance", "gauge", "What the key's account has left, as last read, in `currency`.");
    let mut ids: Vec<&String> = names.keys().collect();
    ids.sort();
    for id in ids {
        let Ok(mut read) = keys.balances(id) else { continue };
        read.sort_by(|a, b| a.key_id.cmp(&b.key_id));
        for row in read {
            if let Some((amount, currency)) = &row.amount {
                let labels =
                    [("provider", names[id].as_str()), ("key", row.key_id.as_str()), ("currency", currency.as_str())];
                sample(out, "keypool_key_balance", &labels, *amount);
            }
        }
    }
}

/// Each member's budget (used, left, limit) and refusals.
fn render_members(out: &mut String, book: &BookSnapshot) {
    let budgets = &book.budgets;
    for (unit, suffix) in [("usd", "usd"), ("tokens", "tokens")] {
        let mine: Vec<_> = budgets.iter().filter(|b| b.unit == unit).collect();
        if mine.is_empty() {
            continue;
        }
        let (used, left, limit) = (
            format!("keypool_member_budget_used_{suffix}"),
            format!("keypool_member_budget_remaining_{suffix}"),
            format!("keypool_member_budget_limit_{suffix}"),
        );
        family(
            out,
            &used,
            "gauge",
            "What a member used of its budget in the current period (the team's count when it has one).",
        );
        for budget in &mine {
            sample(out, &used, &[("member", &budget.member)], budget.used);
        }
        family(out, &left, "gauge", "What is left of a member's budget in the current period.");
        for budget in &mine {
            sample(out, &left, &[("member", &budget.member)], (budget.limit - budget.used).max(0.0));
        }
        family(out, &limit, "gauge", "A member's budget per period.");
        for budget in &mine {
            sample(out, &limit, &[("member", &budget.member)], budget.limit);
        }
    }
    if let Some(reads) = book.team_reads {
        family(
            out,
            "keypool_team_definition_reads_total",
            "counter",
            "Times this replica read the team's member definitions, changed or not.",
        );
        sample(out, "keypool_team_definition_reads_total", &[], reads as f64);
    }
    family(
        out,
        "keypool_member_refusals_total",
        "counter",
        "Requests of members refused, by member and the limit that refused them.",
    );
    for (member, limit, count) in &book.refusals {
        sample(out, "keypool_member_refusals_total", &[("member", member), ("limit", limit)], *count as f64);
    }
}

/// How the alerts went: delivered, claimed (by another replica, or sent before), refused.
fn render_alerts(out: &mut String, alerts: &Alerts) {
    family(out, "keypool_alerts_total", "counter", "Alert events, by kind and how each went: delivered to the webhook, claimed by another replica or an earlier send (not sent again), or refused by the webhook.");
    for (kind, outcome, count) in alerts.outcomes() {
        sample(out, "keypool_alerts_total", &[("event", &kind), ("outcome", outcome)], count as f64);
    }
}

/// The team link's state, its members, the admissions it decided and the member checks' round trips.
fn render_team(out: &mut String, reading: &Reading) {
    let Some(team) = &reading.team else { return };
    let status = team.status();
    family(out, "keypool_team_state", "gauge", "1 for the team link's current state: connected, disconnected or off.");
    for state in [TeamState::Connected, TeamState::Disconnected, TeamState::Off] {
        let on = if status.state == state { 1.0 } else { 0.0 };
        sample(out, "keypool_team_state", &[("state", state.as_str())], on);
    }
    family(
        out,
        "keypool_team_members",
        "gauge",
        "Team members (replicas, desktops) seen in the last minute, this one included.",
    );
    sample(out, "keypool_team_members", &[], status.members as f64);
    family(out, "keypool_team_connects_total", "counter", "Times the link connected and merged the team's state.");
    sample(out, "keypool_team_connects_total", &[], status.connects as f64);
    let admissions = team.admissions();
    family(out, "keypool_team_key_admissions_total", "counter", "Key hand-outs by how the team decided them.");
    for (path, count) in [
        ("admitted", admissions.admitted),
        ("full", admissions.full),
        ("unasked", admissions.unasked),
        ("timed_out", admissions.timed_out),
        ("failed", admissions.failed),
    ] {
        sample(out, "keypool_team_key_admissions_total", &[("path", path)], count as f64);
    }
    if let Some(allowance) = &reading.allowance {
        let counts = allowance.counts();
        family(out, "keypool_team_member_checks_total", "counter", "Round trips to Redis checking a member's limits.");
        sample(out, "keypool_team_member_checks_total", &[], counts.round_trips as f64);
        family(out, "keypool_team_member_check_seconds_total", "counter", "Their total time.");
        sample(out, "keypool_team_member_check_seconds_total", &[], counts.round_trip_us as f64 / 1e6);
        family(
            out,
            "keypool_team_member_checks_unanswered_total",
            "counter",
            "Member checks Redis gave no usable answer to in time (decided alone).",
        );
        sample(out, "keypool_team_member_checks_unanswered_total", &[], counts.unanswered as f64);
    }
}

impl Observer for Metrics {
    fn answered(&self, answered: Answered<'_>) {
        let dialect = match answered.dialect {
            keypool_gateway::Dialect::OpenAi => "openai",
            keypool_gateway::Dialect::Anthropic => "anthropic",
            keypool_gateway::Dialect::Gemini => "gemini",
        };
        let key = (dialect, answered.status, answered.member.unwrap_or("").to_owned());
        *lock(&self.requests).entry(key).or_default() += 1;
        if let Some(added) = answered.added {
            self.added.observe(added);
        }
        if answered.waited {
            self.waits.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn locked_out(&self) {
        self.lockouts.fetch_add(1, Ordering::Relaxed);
    }

    fn forwarded_ignored(&self) {
        self.forwarded_ignored.fetch_add(1, Ordering::Relaxed);
    }
}

impl Observe for Metrics {
    fn key_disabled(&self, provider: &ProviderId, _: &KeyId, reason: DisableReason, _: Timestamp) {
        *lock(&self.disabled).entry((provider.as_str().to_owned(), reason.status())).or_default() += 1;
    }

    fn attempted(&self, record: &AttemptRecord) {
        self.attempt(record);
    }
}

/// Serves `GET /metrics`, `/readyz` and `/healthz` on `address` without a token, until the
/// returned handle is dropped (a scraper's address on a private network).
pub async fn listen(
    address: std::net::SocketAddr,
    render: Arc<dyn Fn() -> String + Send + Sync>,
    ready: keypool_gateway::Readiness,
) -> Result<MetricsListener, String> {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    let listener =
        tokio::net::TcpListener::bind(address).await.map_err(|e| format!("--metrics-listen {address}: {e}"))?;
    if !address.ip().is_loopback() {
        tracing::warn!(%address, "metrics are served without a token on {address}: keep it on a private network");
    }
    let app = axum::Router::new()
        .route(
            "/metrics",
            axum::routing::get(move || {
                let render = render.clone();
                async move {
                    let text = tokio::task::spawn_blocking(move || render()).await.unwrap_or_default();
                    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], text).into_response()
                }
            }),
        )
        .route(
            "/readyz",
            axum::routing::get(move || {
                let ready = ready.clone();
                async move {
                    match ready() {
                        Ok(()) => (StatusCode::OK, "ready\n".to_owned()),
                        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {why}\n")),
                    }
                }
            }),
        )
        .route("/healthz", axum::routing::get(|| async { "ok\n" }));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let served = axum::serve(listener, app).with_graceful_shutdown(async move {
            let _ = stopped.await;
        });
        if let Err(error) = served.await {
            tracing::error!(%error, "the metrics listener stopped");
        }
    });
    tracing::info!(%address, "metrics served without a token");
    Ok(MetricsListener { _stop: stop })
}

/// The metrics listener; it stops when dropped.
pub struct MetricsListener {
    _stop: tokio::sync::oneshot::Sender<()>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped_and_a_histogram_is_cumulative() {
        let mut out = String::new();
        sample(&mut out, "m", &[("label", "a\"b\\c\nd")], 1.0);
        assert_eq!(out, "m{label=\"a\\\"b\\\\c\\nd\"} 1\n");
        let metrics = Metrics::new();
        for ms in [0, 2, 2, 30_000] {
            metrics.added.observe(Duration::from_millis(ms));
        }
        let mut text = String::new();
        metrics.render_added(&mut text);
        assert!(text.contains("keypool_added_seconds_bucket{le=\"0.0005\"} 1\n"), "{text}");
        assert!(text.contains("keypool_added_seconds_bucket{le=\"0.0025\"} 3\n"), "cumulative: {text}");
        assert!(
            text.contains("keypool_added_seconds_bucket{le=\"+Inf\"} 4\n") && text.contains("_count 4\n"),
            "{text}"
        );
    }
}

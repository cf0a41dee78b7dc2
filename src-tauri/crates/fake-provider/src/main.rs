//! `keypool-fake-provider [--port N] [--limit KEY=REQUESTS/WINDOW_MS ...] [--clock-offset-ms MS]
//! [--whole-second-resets]`: serves the fake provider on 127.0.0.1 until killed. Prints
//! `listening on http://127.0.0.1:PORT` once it accepts connections. Each `--limit` enforces and
//! announces a per-key rate window (e.g. `--limit key1=5/2000`: 5 requests per 2 s).
//! `--clock-offset-ms` puts the provider's clock (its `date` header, its Anthropic-style reset
//! instants, its windows) ahead of this machine's (negative: behind); `--whole-second-resets`
//! announces those instants in whole seconds, truncated.
//! Gemini's quotas are a project's: `--project KEY=PROJECT` puts a key in a project (a key in
//! none is a project of its own) and `--project-limit PROJECT=REQUESTS/WINDOW_MS[/PER_DAY]`
//! enforces its per-minute quota (REQUESTS per WINDOW_MS) and per-day quota on all its keys
//! together, per model, answering Google's 429 with `QuotaFailure` and `RetryInfo`.

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut port = 0u16;
    let mut limits = Vec::new();
    let (mut projects, mut project_limits) = (Vec::new(), Vec::new());
    let mut clock = keypool_fake_provider::ProviderClock::default();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = args.next().and_then(|p| p.parse().ok()).expect("--port takes a number"),
            "--limit" => {
                limits.push(args.next().and_then(|l| parse_limit(&l)).expect("--limit takes KEY=REQUESTS/WINDOW_MS"))
            }
            "--clock-offset-ms" => {
                clock.offset_ms = args.next().and_then(|o| o.parse().ok()).expect("--clock-offset-ms takes a number")
            }
            "--whole-second-resets" => clock.whole_second_resets = true,
            "--project" => projects.push(
                args.next()
                    .and_then(|p| p.split_once('=').map(|(k, p)| (k.to_owned(), p.to_owned())))
                    .expect("--project takes KEY=PROJECT"),
            ),
            "--project-limit" => project_limits.push(
                args.next()
                    .and_then(|l| parse_project_limit(&l))
                    .expect("--project-limit takes PROJECT=REQUESTS/WINDOW_MS[/PER_DAY]"),
            ),
            other => panic!(
                "unknown argument {other}; usage: keypool-fake-provider [--port N] [--limit KEY=REQUESTS/WINDOW_MS] \
                 [--clock-offset-ms MS] [--whole-second-resets] [--project KEY=PROJECT] \
                 [--project-limit PROJECT=REQUESTS/WINDOW_MS[/PER_DAY]]"
            ),
        }
    }
    let provider = keypool_fake_provider::FakeProvider::start_on(port).await;
    for (key, limit) in limits {
        provider.limit(&key, limit);
    }
    provider.provider_clock(clock);
    for (key, project) in projects {
        provider.project(&key, &project);
    }
    for (project, limit) in project_limits {
        provider.project_limit(&project, limit);
    }
    println!("listening on {}", provider.url());
    tokio::signal::ctrl_c().await.ok();
}

fn parse_project_limit(text: &str) -> Option<(String, keypool_fake_provider::gemini::ProjectLimit)> {
    let (project, limit) = text.rsplit_once('=')?;
    let mut numbers = limit.split('/');
    let requests = numbers.next()?.parse().ok()?;
    let window_ms = numbers.next()?.parse().ok()?;
    let per_day = match numbers.next() {
        Some(per_day) => Some(per_day.parse().ok()?),
        None => None,
    };
    Some((project.to_owned(), keypool_fake_provider::gemini::ProjectLimit { requests, window_ms, per_day }))
}

fn parse_limit(text: &str) -> Option<(String, keypool_fake_provider::RateLimit)> {
    let (key, limit) = text.rsplit_once('=')?;
    let (requests, window_ms) = limit.split_once('/')?;
    Some((
        key.to_owned(),
        keypool_fake_provider::RateLimit { requests: requests.parse().ok()?, window_ms: window_ms.parse().ok()? },
    ))
}

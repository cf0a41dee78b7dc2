//! `keypool-state-bench [--requests N]`: the pool's state under requests that each invent a new
//! session id and a new model name (as a careless or hostile local API client may). Prints, every
//! tenth of the run, the process's resident memory, the sessions bound and the scopes kept over
//! all keys. A benchmark, not a test: it prints figures.

use std::sync::Arc;
use std::time::Duration;

use keypool::{
    Announced, Demand, EnvResolver, KeyEntry, KeyId, KeyLoader, KeyPool, LoadError, PoolConfig, ProviderId, Secret,
    SelectionRequest, SessionId, Timestamp, UserLimits, Window,
};

struct Keys(Vec<KeyEntry>);

impl KeyLoader for Keys {
    fn load(&self, _: &ProviderId) -> Result<Vec<KeyEntry>, LoadError> {
        Ok(self.0.clone())
    }
}

fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0.0);
    pages * 4096.0 / (1024.0 * 1024.0)
}

fn main() {
    let requests: u32 =
        std::env::args().skip_while(|a| a != "--requests").nth(1).and_then(|n| n.parse().ok()).unwrap_or(100_000);
    let provider = ProviderId::from("p");
    let start = Timestamp::from_millis(1_800_000_000_000);
    let keys = (0..10)
        .map(|i| KeyEntry {
            id: KeyId::from(format!("key-{i}")),
            provider_id: provider.clone(),
            label: None,
            api_key: Secret::from(format!("sk-bench-{i:032}")),
            enabled: true,
            weight: 1,
            sort_order: i,
            created_at: start,
            limits: UserLimits::default(),
            sealed: false,
            quota_group: None,
        })
        .collect();
    let pool = KeyPool::new(PoolConfig::default(), Arc::new(Keys(keys)), Arc::new(EnvResolver));
    println!("requests rss_mib sessions scopes");
    let mut now = start;
    for i in 0..=requests {
        if i % (requests / 10).max(1) == 0 {
            let scopes: usize = pool.status(&provider, now).unwrap().iter().map(|k| k.budgets.len()).sum();
            println!("{i} {:.1} {} {scopes}", rss_mib(), pool.session_count());
        }
        let session =
            SessionId::from(format!("random-session-{:016x}", u64::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        let model = format!("random-model-{:016x}", u64::from(i).wrapping_mul(0xC2B2_AE3D_27D4_EB4F));
        let demand = Demand { scope: Some(&model), tokens: 100 };
        let selection =
            pool.select(SelectionRequest::new(&provider).for_session(&session).needing(demand), now).unwrap();
        let window = Window { limit: Some(500), remaining: 499, reset_at: now + Duration::from_secs(60) };
        pool.report_answer(&selection.key_id, Some(&model), &Announced { requests: Some(window), tokens: None });
        now = now + Duration::from_millis(1);
    }
}

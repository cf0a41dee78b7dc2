//! Provider requests go through no proxy the user did not choose. This binary sets the proxy
//! variables of its own process (every test binary is a process of its own), so that a client
//! that read them would send everything to the listener standing in for the proxy.

use std::io::Read;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use keypool::{
    DisableReason, KeyEntry, KeyId, KeyLoader, KeyPool, LoadError, ManualClock, MapResolver, PoolConfig, ProviderId,
    Secret, SessionId, Timestamp, UserLimits,
};
use keypool_fake_provider::FakeProvider;
use keypool_llm::{
    AttemptRecord, CancellationToken, ChatMessage, CompletionRequest, CompletionService, ProviderEndpoint,
    ProviderKind, ProxyChoice, Recorder, Role, SimulatedTime, StopReason,
};

struct OneKey;

impl KeyLoader for OneKey {
    fn load(&self, provider: &ProviderId) -> Result<Vec<KeyEntry>, LoadError> {
        Ok(vec![KeyEntry {
            id: KeyId::from("k"),
            provider_id: provider.clone(),
            label: None,
            api_key: Secret::from("key-proxytest000001"),
            enabled: true,
            weight: 1,
            sort_order: 0,
            created_at: Timestamp::EPOCH,
            limits: UserLimits::default(),
            sealed: false,
            quota_group: None,
        }])
    }
}

impl Recorder for OneKey {
    fn key_disabled(&self, _: &ProviderId, _: &KeyId, _: DisableReason, _: Timestamp) {}
    fn attempt(&self, _: AttemptRecord) {}
}

/// A listener that takes connections and remembers the first bytes of each.
fn proxy_stand_in() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let mut first = [0u8; 256];
            let n = stream.read(&mut first).unwrap_or(0);
            record.lock().unwrap().push(String::from_utf8_lossy(&first[..n]).into_owned());
        }
    });
    (url, seen)
}

fn request(base_url: String) -> CompletionRequest {
    CompletionRequest {
        session: SessionId::from("chat"),
        endpoint: ProviderEndpoint {
            id: ProviderId::from("p"),
            name: "P".into(),
            kind: ProviderKind::Openai,
            base_url: base_url.into(),
            provider_key: None,
        },
        model: "m".into(),
        messages: vec![ChatMessage::new(Role::User, "hi")],
        max_tokens: 16,
        stream: true,
        source: "chat".into(),
        preferred_key: None,
    }
}

#[tokio::test]
async fn no_proxy_unless_chosen_and_never_for_this_machine() {
    let (proxy, seen) = proxy_stand_in();
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"] {
        // SAFETY-free in edition 2021; this binary's only test sets them before any client exists.
        std::env::set_var(name, &proxy);
    }
    let fake = FakeProvider::start().await;
    let clock = Arc::new(ManualClock::new(Timestamp::from_millis(1_800_000_000_000)));
    let resolver = Arc::new(MapResolver::new());
    let pool = Arc::new(KeyPool::new(PoolConfig::default(), Arc::new(OneKey), resolver.clone()));
    let service =
        CompletionService::new(pool, clock.clone(), resolver, Arc::new(OneKey), Arc::new(SimulatedTime::new(clock)));
    let ask = |base_url: String| {
        let service = service.clone();
        async move { service.complete(&request(base_url), &mut |_| {}, &CancellationToken::new()).await }
    };

    let outcome = ask(format!("{}/v1", fake.url())).await;
    assert!(matches!(outcome.end, StopReason::Finished), "the chat reaches the provider: {:?}", outcome.end);
    assert!(seen.lock().unwrap().is_empty(), "the environment's proxy saw nothing: {:?}", seen.lock().unwrap());

    service.set_proxy(&ProxyChoice::System).unwrap();
    let outcome = ask(format!("{}/v1", fake.url())).await;
    assert!(matches!(outcome.end, StopReason::Finished), "the system's proxy is not for this machine");
    assert!(seen.lock().unwrap().is_empty(), "loopback never goes through a proxy");

    service.set_proxy(&ProxyChoice::Url(proxy.clone())).unwrap();
    let _ = ask("https://provider.example/v1".to_owned()).await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "the chosen proxy carries an https request elsewhere: {seen:?}");
    assert!(seen[0].starts_with("CONNECT provider.example:443"), "as a tunnel, the key inside TLS: {seen:?}");
}

//! Where the endpoint serves: on threads of its own, not on the runtime that started it.

use std::sync::mpsc;
use std::time::Duration;

use keypool_gateway::{token_hash, Gateway};
use keypool_llm::ProviderKind;

use crate::support::*;

#[tokio::test]
async fn it_answers_while_the_runtime_that_started_it_is_blocked() {
    // The endpoint is started from a single-threaded runtime whose thread then blocks: nothing
    // that runtime was left to run can run. The fake provider runs on this test's runtime.
    let (release, blocked) = mpsc::channel::<()>();
    let api = LocalApi::started_by(ProviderKind::Openai, None, &["a"], |routes, service, clock| {
        let (started, gateway) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let gateway = Gateway::start(0, token_hash(TOKEN), routes, service, clock).await.expect("a free port");
                let _ = started.send(gateway);
                // Blocks this runtime's only thread until the test ends.
                let _ = blocked.recv();
            });
        });
        async move { gateway.await.expect("the endpoint started") }
    })
    .await;

    // Two connections at once, each answered.
    let ask = |n: usize| {
        let body = json!({ "model": "m", "messages": [{ "role": "user", "content": format!("hi {n}") }] });
        let url = api.url("/v1/chat/completions");
        async move {
            let client = reqwest::Client::new();
            client.post(url).bearer_auth(TOKEN).json(&body).send().await.map(|answer| answer.status().as_u16())
        }
    };
    let answered = tokio::time::timeout(Duration::from_secs(20), futures_util::future::join(ask(1), ask(2))).await;
    let (first, second) = answered.expect("answered while the starting runtime is blocked");
    assert_eq!((first.unwrap(), second.unwrap()), (200, 200), "both answered");
    assert_eq!(api.fake.seen().len(), 2, "both went upstream");
    assert_eq!(api.gateway.stats().requests, 2, "and were counted");
    drop(release);
}

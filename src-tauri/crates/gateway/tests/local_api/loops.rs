//! A provider that leads back to the local API itself: refused with a 508 that names it, at
//! once when its base URL is the endpoint's own address, and by the hop mark when the way back
//! is longer (here through a TCP proxy).

use tokio::net::TcpListener;

use crate::support::*;

/// A TCP proxy on a free loopback port to `to`: what a reverse proxy or another name for this
/// machine would be.
async fn proxy_to(to: std::net::SocketAddr) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(to).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    format!("http://{address}/v1")
}

#[tokio::test]
async fn a_provider_at_the_endpoints_own_address_is_refused_naming_it() {
    let api = LocalApi::start(&["a"]).await;
    api.point_at(&api.url("/v1"));
    let response = api.chat(&chat_body("gpt-x", false), &[]).await;
    assert_eq!(response.status(), 508);
    assert_eq!(response.headers().get("x-should-retry").and_then(|v| v.to_str().ok()), Some("false"));
    let error: Value = response.json().await.unwrap();
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("provider Fake points at this Keypool"), "names the provider: {error}");
    assert_eq!(error["error"]["code"], "loop_detected", "OpenAI's shape: {error}");
    assert!(api.fake.seen().is_empty() && api.attempts().is_empty(), "nothing was sent anywhere");
}

#[tokio::test]
async fn a_request_that_comes_back_by_another_way_is_refused_by_its_hop_mark() {
    let api = LocalApi::start(&["a"]).await;
    let address = api.gateway.addresses()[0];
    api.point_at(&proxy_to(address).await);
    let response = api.chat(&chat_body("gpt-x", true), &[]).await;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert_eq!(status, 508, "{text}");
    assert!(text.contains("came back to the Keypool that sent it"), "says why: {text}");
    assert!(api.fake.seen().is_empty(), "the provider saw nothing");
    assert_eq!(api.attempts().len(), 1, "one attempt went round once, and no more: {:?}", api.attempts());

    // Pointed at the provider again, its requests carry one mark, new each time.
    api.point_at(&format!("{}/v1", api.fake.url()));
    for _ in 0..2 {
        assert_eq!(api.chat(&chat_body("gpt-x", false), &[]).await.status(), 200);
    }
    let marks: Vec<String> = api.fake.seen().iter().map(|s| s.hop.clone().unwrap_or_default()).collect();
    assert!(marks.iter().all(|m| m.len() == 32), "one mark each: {marks:?}");
    assert_ne!(marks[0], marks[1], "nothing ties two requests together");
}

//! What a client controls is bounded, and only this machine's names are served.

use crate::support::*;

#[tokio::test]
async fn a_model_or_session_longer_than_256_bytes_is_refused_before_anything_goes_upstream() {
    let api = LocalApi::start(&["a"]).await;
    let long = "m".repeat(257);
    let answer = api.chat(&chat_body(&long, false), &[]).await;
    assert_eq!(answer.status(), 400, "a 257-byte model is refused");
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error", "in the OpenAI dialect: {body}");
    let session = "s".repeat(257);
    let answer = api.chat(&chat_body("m", false), &[("x-keypool-session", &session)]).await;
    assert_eq!(answer.status(), 400, "so is a 257-byte session id");
    assert!(api.fake.seen().is_empty(), "nothing was sent upstream");

    let at_the_bound = "m".repeat(256);
    let answer = api.chat(&chat_body(&at_the_bound, false), &[("x-keypool-session", &"s".repeat(256))]).await;
    assert_eq!(answer.status(), 200, "256 bytes of each is fine");
}

#[tokio::test]
async fn a_request_for_another_host_is_misdirected() {
    let api = LocalApi::start(&["a"]).await;
    let answer = api.chat(&chat_body("m", false), &[("host", "rebound.example:4141")]).await;
    assert_eq!(answer.status(), 421, "a DNS-rebinding page's Host is not served, even with the token");
    let answer = api.chat(&chat_body("m", false), &[("host", "localhost")]).await;
    assert_eq!(answer.status(), 200, "localhost is");
    assert_eq!(api.fake.seen().len(), 1, "only the request to this machine went upstream");
    api.gateway.allow_hosts(["keypool.team.example".to_owned()]);
    let answer = api.chat(&chat_body("m", false), &[("host", "keypool.team.example")]).await;
    assert_eq!(answer.status(), 200, "a host the server was told to answer to is served");
}

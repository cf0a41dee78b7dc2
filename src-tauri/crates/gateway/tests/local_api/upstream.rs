//! The way to a plain-http upstream (a server on this machine or its network): hyper's own client
//! under the rules reqwest's plain-http client keeps. A redirect is followed only within the
//! upstream's origin, and the key never goes anywhere else.

use crate::support::*;

#[tokio::test]
async fn a_redirect_within_the_upstreams_origin_is_followed_with_the_request_as_it_was() {
    let api = LocalApi::start(&["a"]).await;
    let here = api.fake.url();
    api.fake.script("key-a", [Reply::Redirect { status: 307, to: here.clone() }, Reply::text(&["Hello ", "there"])]);
    let answer = api.chat(&chat_body("m", false), &[]).await;
    assert_eq!(answer.status(), 200, "answered after the redirect");
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "Hello there");
    let seen = api.fake.seen();
    assert_eq!(seen.len(), 2, "asked once, then again where it was sent: {seen:?}");
    assert!(seen.iter().all(|s| s.key == "key-a" && s.model == "m"), "the same request, key and body: {seen:?}");
    assert_eq!(seen[0].path, seen[1].path);
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_and_the_key_never_goes_there() {
    let api = LocalApi::start(&["a"]).await;
    let elsewhere = FakeProvider::start().await;
    api.fake.always("key-a", Reply::Redirect { status: 307, to: elsewhere.url() });
    for stream in [false, true] {
        let answer = api.chat(&chat_body("m", stream), &[]).await;
        assert_eq!(answer.status(), 502, "stream {stream}: no answer to pass on");
        let body: Value = answer.json().await.unwrap();
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("redirected to another origin"), "said plainly: {message}");
    }
    assert!(elsewhere.seen().is_empty(), "nothing reached the other server: {:?}", elsewhere.seen());
    assert_eq!(api.fake.seen().len(), 2, "each request went upstream once");
}

#[tokio::test]
async fn a_redirect_loop_within_the_origin_ends_after_five_redirects() {
    let api = LocalApi::start(&["a"]).await;
    api.fake.always("key-a", Reply::Redirect { status: 308, to: api.fake.url() });
    let answer = api.chat(&chat_body("m", false), &[]).await;
    assert_eq!(answer.status(), 502);
    assert_eq!(api.fake.seen().len(), 6, "the request and five redirects, no more");
}

#[tokio::test]
async fn an_upstream_that_refuses_connections_is_said_to_be_unreachable() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let api = LocalApi::over(&format!("http://127.0.0.1:{port}/v1"), &["a"]).await;
    let answer = api.chat(&chat_body("m", false), &[]).await;
    assert_eq!(answer.status(), 502);
    let body: Value = answer.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("could not reach the provider: connection failed"), "{message}");
}

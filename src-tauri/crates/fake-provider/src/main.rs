//! `keypool-fake-provider [--port N]`: serves the fake provider on 127.0.0.1 until killed.
//! Prints `listening on http://127.0.0.1:PORT` once it accepts connections.

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut port = 0u16;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = args.next().and_then(|p| p.parse().ok()).expect("--port takes a number"),
            other => panic!("unknown argument {other}; usage: keypool-fake-provider [--port N]"),
        }
    }
    let provider = keypool_fake_provider::FakeProvider::start_on(port).await;
    println!("listening on {}", provider.url());
    tokio::signal::ctrl_c().await.ok();
}

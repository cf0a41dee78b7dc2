//! No key, key prefix or preview ever reaches Redis: not in a value, not in a message, not in a
//! command a member sends (MONITOR sees every one, those the scripts run included).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::support::*;

/// Everything Redis answers a connection that sent `command` first (MONITOR, SUBSCRIBE), read in
/// the background until stopped.
struct Listener {
    stop: Arc<AtomicBool>,
    heard: Arc<Mutex<Vec<u8>>>,
    thread: std::thread::JoinHandle<()>,
}

impl Listener {
    fn start(port: u16, command: &[&str]) -> Listener {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("Redis accepts a connection");
        let mut request = format!("*{}\r\n", command.len());
        for word in command {
            request.push_str(&format!("${}\r\n{word}\r\n", word.len()));
        }
        stream.write_all(request.as_bytes()).expect("the command is sent");
        stream.set_read_timeout(Some(Duration::from_millis(50))).expect("a read timeout");
        let (stop, heard) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(Vec::new())));
        let (stopping, hearing) = (stop.clone(), heard.clone());
        let thread = std::thread::spawn(move || {
            let mut buffer = [0u8; 65536];
            loop {
                match stream.read(&mut buffer) {
                    Ok(0) => return,
                    Ok(n) => hearing.lock().unwrap().extend_from_slice(&buffer[..n]),
                    // Nothing more for now: done once stopped (all that was sent has been read).
                    Err(_) if stopping.load(Ordering::SeqCst) => return,
                    Err(_) => {}
                }
            }
        });
        let listener = Listener { stop, heard, thread };
        let started = std::time::Instant::now();
        // Its first reply (`+OK`, the subscription) says Redis took the command.
        while listener.heard.lock().unwrap().is_empty() {
            assert!(started.elapsed() < Duration::from_secs(20), "Redis answers {command:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
        listener
    }

    fn stop(self) -> Vec<u8> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().expect("the listener ends");
        Arc::try_unwrap(self.heard).expect("the listener is done").into_inner().unwrap()
    }
}

/// Every value Redis holds, of every type, as the server answers for it, and its DUMP.
fn everything(rig: &Rig) -> Vec<u8> {
    assert!(rig.redis.lock().unwrap().team_keys().len() >= 4, "the team wrote its state");
    rig.redis.lock().unwrap().dump()
}

fn runs_of(value: &str) -> Vec<&str> {
    (0..=value.len() - 12).map(|i| &value[i..i + 12]).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dump_of_every_value_message_and_command_holds_no_run_of_any_key() {
    let labels = ["x", "y", "z", "w"];
    let rig = Rig::start(&labels).await;
    let port = rig.redis.lock().unwrap().port();
    let monitor = Listener::start(port, &["MONITOR"]);
    let messages = Listener::start(port, &["SUBSCRIBE", &format!("{{keypool:{TEAM}}}:events")]);

    assert_eq!(rig.ask(&rig.b, "warm-up").await.0, 200, "B serves first");
    rig.fake.script(&key("x"), [Reply::status_with(429, &[("retry-after", "30")])]);
    rig.fake.always(&key("y"), Reply::status(401));
    rig.fake.script(&key("z"), [Reply::QuotaExceeded]);
    rig.fake.limit(&key("w"), RateLimit { requests: 50, window_ms: 60_000 });
    for i in 0..8 {
        let member = if i % 2 == 0 { &rig.a } else { &rig.b };
        assert_eq!(rig.ask(member, &format!("turn-{i}")).await.0, 200, "every request is answered");
    }
    rig.a.enable("y");
    until("B knows every kind of state", || {
        let now = rig.now();
        let states: Vec<KeyState> = labels.iter().map(|label| rig.b.status(label, now).state).collect();
        let windowed = rig.b.status("w", now).budgets.iter().any(|b| b.requests.is_some());
        states.contains(&KeyState::Cooling) && states.contains(&KeyState::Exhausted) && windowed
    })
    .await;

    let mut haystack = everything(&rig);
    haystack.extend(monitor.stop());
    haystack.extend(messages.stop());
    let text = String::from_utf8_lossy(&haystack);
    assert!(text.contains("EVALSHA"), "the monitor saw the members' commands");
    for label in labels {
        let value = key(label);
        for run in runs_of(&value) {
            assert!(!text.contains(run), "a 12-character run of key {label} ({run:?}) reached Redis");
        }
        let preview = keypool::preview(&value);
        assert!(!text.contains(&preview), "the preview of key {label} reached Redis");
    }
}

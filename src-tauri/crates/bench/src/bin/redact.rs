//! `keypool-redact-bench`: what masking keys in upstream text costs with 10, 1 000 and 10 000 keys
//! in the pool: building the redactor (once per change of the pool's keys) and redacting a 1 KiB
//! error body and a 64 KiB one. Medians of repeated runs; a benchmark, not a test.

use std::time::{Duration, Instant};

use keypool::Secret;
use keypool_llm::redact::Redactor;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm.split_whitespace().nth(1).and_then(|p| p.parse::<f64>().ok()).unwrap_or(0.0) * 4096.0 / 1048576.0
}

fn main() {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    println!("keys key_chars build_ms redact_1k_us redact_64k_us rss_mib");
    for (count, length) in [(10, 156), (1_000, 156), (10_000, 39), (10_000, 156)] {
        let secrets: Vec<Secret> = (0..count)
            .map(|_| {
                let body: String = (0..length).map(|_| alphabet[(random() % 64) as usize] as char).collect();
                Secret::from(format!("sk-proj-{body}"))
            })
            .collect();
        let builds: Vec<Duration> = (0..3)
            .map(|_| {
                let started = Instant::now();
                std::hint::black_box(Redactor::new(&secrets));
                started.elapsed()
            })
            .collect();
        let redactor = Redactor::new(&secrets);
        let mut text = |size: usize| -> String {
            let mut text: String = (0..size).map(|_| alphabet[(random() % 64) as usize] as char).collect();
            text.replace_range(size / 2..size / 2 + 20, &secrets[count / 2].expose()[10..30]);
            text
        };
        let (small, large) = (text(1024), text(65536));
        let time = |text: &str| {
            median(
                (0..21)
                    .map(|_| {
                        let started = Instant::now();
                        std::hint::black_box(redactor.redact(text));
                        started.elapsed()
                    })
                    .collect(),
            )
        };
        println!(
            "{count} {} {:.1} {:.1} {:.1} {:.1}",
            length + 8,
            median(builds).as_secs_f64() * 1e3,
            time(&small).as_secs_f64() * 1e6,
            time(&large).as_secs_f64() * 1e6,
            rss_mib()
        );
    }
}

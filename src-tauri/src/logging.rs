//! Tracing to stderr and to `keypool.log` in the log directory; the level comes from `RUST_LOG`
//! (default `info`).

use std::path::Path;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter};

pub const LOG_FILE_NAME: &str = "keypool.log";

pub fn init(log_dir: &Path) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let file_layer = match std::fs::create_dir_all(log_dir) {
        Ok(()) => {
            let appender = tracing_appender::rolling::never(log_dir, LOG_FILE_NAME);
            Some(fmt::layer().with_ansi(false).with_writer(appender))
        }
        Err(error) => {
            eprintln!("keypool: cannot create the log directory {}: {error}", log_dir.display());
            None
        }
    };
    let result = tracing_subscriber::registry()
        .with(filter)
        .with(fmt::layer().with_writer(std::io::stderr))
        .with(file_layer)
        .try_init();
    if result.is_err() {
        tracing::debug!("a tracing subscriber was already installed");
    }
}

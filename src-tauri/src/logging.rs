//! Tracing to stderr and to `keypool.log` in the log directory; the level comes from `RUST_LOG`
//! (default `info`). The directory is the user's alone (0700) and the file too (0600); looser
//! ones from before are tightened, and the log says so.

use std::path::Path;

use keypool_api::files;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter};

pub const LOG_FILE_NAME: &str = "keypool.log";

pub fn init(log_dir: &Path) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let log_file = log_dir.join(LOG_FILE_NAME);
    let prepared = files::private_dir(log_dir).and_then(|dir| Ok((dir, files::private_file(&log_file)?)));
    let (file_layer, privacy) = match prepared {
        Ok(privacy) => {
            // The appender opens the file for appending and leaves its permissions as they are.
            let appender = tracing_appender::rolling::never(log_dir, LOG_FILE_NAME);
            (Some(fmt::layer().with_ansi(false).with_writer(appender)), Some(privacy))
        }
        Err(error) => {
            eprintln!("keypool: cannot prepare the log file {}: {error}", log_file.display());
            (None, None)
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
    if let Some((dir, file)) = privacy {
        files::log_privacy(log_dir, dir);
        files::log_privacy(&log_file, file);
    }
}

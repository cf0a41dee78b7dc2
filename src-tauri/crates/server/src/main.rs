//! `keypool-server`: see the library's documentation (`src/lib.rs`).

fn main() -> std::process::ExitCode {
    keypool_server::run_cli(std::env::args_os())
}

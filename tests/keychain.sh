#!/usr/bin/env bash
# The keychain suite against a real Secret Service: gnome-keyring in a private D-Bus session,
# unlocked with a throwaway password on stdin, in a throwaway HOME. Then the same code with no
# session bus at all, which must fall back to the database and say so.
set -euo pipefail
cd "$(dirname "$0")/.."
# The throwaway HOME below must not hide the toolchain.
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"

# Build first, outside the session, so the session only runs tests. `--workspace --test api` (the
# api crate's one integration test) rather than `-p keypool-api`: with one package selected, the
# dependencies' features differ from the workspace's and half the graph would build again.
cargo test --workspace --locked --test api --no-run --quiet

home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
mkdir -p "$home/run" && chmod 700 "$home/run"

HOME="$home" XDG_DATA_HOME="$home/.local/share" XDG_RUNTIME_DIR="$home/run" \
  dbus-run-session -- bash -euo pipefail -c '
    # --unlock reads the password from stdin and creates the login keyring with it.
    eval "$(printf %s keypool-test-password | gnome-keyring-daemon --unlock --components=secrets)"
    eval "$(gnome-keyring-daemon --start --components=secrets)"
    export GNOME_KEYRING_CONTROL
    cargo test --workspace --locked --test api --quiet -- --ignored --test-threads=1 keychain::secret_service::keys_live \
      keychain::secret_service::a_plaintext_database
  ' 2> >(grep -v -e "Failed to set fd limit" -e "discover_other_daemon" >&2)

env -u DBUS_SESSION_BUS_ADDRESS HOME="$home" XDG_RUNTIME_DIR="$home/run" \
  cargo test --workspace --locked --test api --quiet -- --ignored keychain::secret_service::no_session_no_keychain

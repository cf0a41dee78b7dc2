#!/usr/bin/env bash
# `npm run bench:app`: what Keypool costs the people who run it. Builds the release bundles (skip
# with KEYPOOL_BENCH_NO_BUILD=1 to measure the last build again), then measures the release binary
# under Xvfb: sizes, cold start to first paint, memory (beside a blank Tauri window's, the floor),
# switching to a 1 000-message chat.
# Not a test: it prints figures and fails only if it cannot measure them.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${KEYPOOL_BENCH_NO_BUILD:-}" != 1 ]; then npx tauri build; fi
cargo build --release -p keypool-fake-provider
# The floor: a blank Tauri window, built as `tauri build` builds the app (assets served, not a dev URL).
cargo build --release -p keypool-blank-window --features tauri/custom-protocol

target=${CARGO_TARGET_DIR:-target}
export KEYPOOL_APP_BINARY="$PWD/$target/release/keypool"
case $target in /*) export KEYPOOL_APP_BINARY="$target/release/keypool" ;; esac
export KEYPOOL_FAKE_PROVIDER_BINARY="${KEYPOOL_APP_BINARY%/keypool}/keypool-fake-provider"
export KEYPOOL_BUNDLE_DIR="${KEYPOOL_APP_BINARY%/keypool}/bundle"
export KEYPOOL_BLANK_WINDOW_BINARY="${KEYPOOL_APP_BINARY%/keypool}/keypool-blank-window"
xvfb-run -a -s "-screen 0 1280x800x24" node tests/bench/app.mjs

#!/usr/bin/env bash
# Builds the real app (debug, self-contained) and drives its window under Xvfb through
# WebKitWebDriver. Screenshots go to tests/artifacts/ (git-ignored). With KEYPOOL_APP_BINARY set,
# it drives that binary instead of building one (npm test: the one its .deb holds). Test files as
# arguments run only those (`npm run test:e2e -- tests/e2e/gemini.test.mjs`); none, every one.
set -euo pipefail
cd "$(dirname "$0")/../.."

target=${CARGO_TARGET_DIR:-$PWD/target}
if [ -z "${KEYPOOL_APP_BINARY:-}" ]; then
  npx tauri build --debug --no-bundle
  export KEYPOOL_APP_BINARY="$target/debug/keypool"
fi
# The fake provider, and keypool-server (team.test.mjs joins one to the app's team): built as the
# Rust tests build them (their integration tests run both binaries), so after `cargo test
# --workspace` in npm test this builds nothing. `cargo build -p …` would build them again: with
# only those packages selected, their dependencies' features differ from the workspace's.
cargo test --workspace --locked --no-run --quiet
export KEYPOOL_FAKE_PROVIDER_BINARY="$target/debug/keypool-fake-provider"
export KEYPOOL_SERVER_BINARY="$target/debug/keypool-server"
# The coding agents' CLIs (agents.test.mjs runs them against the app's local API), cached.
source tests/agents/install.sh
mkdir -p tests/artifacts
files=("$@")
if [ ${#files[@]} -eq 0 ]; then files=(tests/e2e/*.test.mjs); fi
xvfb-run -a -s "-screen 0 1280x800x24" node --test --test-concurrency=1 "${files[@]}"

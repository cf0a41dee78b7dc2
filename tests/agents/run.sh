#!/usr/bin/env bash
# The coding agents, the real CLIs from npm (Codex CLI, Claude Code, Gemini CLI), through
# keypool-server against the fake provider.
# Each CLI is pinned and installed into a cache folder (install.sh). The binaries under test are
# the ones the Rust tests built (target/debug/keypool-server, keypool-fake-provider).
set -euo pipefail
cd "$(dirname "$0")/../.."

source tests/agents/install.sh

target=${CARGO_TARGET_DIR:-$PWD/target}
cargo test --workspace --locked --no-run --quiet
export KEYPOOL_FAKE_PROVIDER_BINARY="$target/debug/keypool-fake-provider"
export KEYPOOL_SERVER_BINARY="$target/debug/keypool-server"
node --test --test-concurrency=1 tests/agents/*.test.mjs

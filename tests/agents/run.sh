#!/usr/bin/env bash
# The coding agents, the real CLIs from npm, through keypool-server against the fake provider.
# Each CLI is pinned and installed into a cache folder of its own (never into the app's
# node_modules, which `npm start` installs): $KEYPOOL_AGENTS_CACHE, by default
# ~/.cache/keypool-agents/<package>@<version>. The binaries under test are the ones the Rust tests
# built (target/debug/keypool-server, keypool-fake-provider).
set -euo pipefail
cd "$(dirname "$0")/../.."

cache=${KEYPOOL_AGENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/keypool-agents}
install() {
  local package=$1 version=$2 dir="$cache/$1@$2"
  if [ ! -x "$dir/node_modules/.bin/${3}" ]; then
    echo "keypool: installing $package@$version into $dir"
    mkdir -p "$dir"
    npm install --no-audit --no-fund --no-save --prefix "$dir" "$package@$version" >/dev/null
  fi
  echo "$dir/node_modules/.bin/$3"
}
KEYPOOL_CODEX=$(install @openai/codex 0.169.0 codex | tail -n1)
export KEYPOOL_CODEX

target=${CARGO_TARGET_DIR:-$PWD/target}
cargo test --workspace --locked --no-run --quiet
export KEYPOOL_FAKE_PROVIDER_BINARY="$target/debug/keypool-fake-provider"
export KEYPOOL_SERVER_BINARY="$target/debug/keypool-server"
node --test --test-concurrency=1 tests/agents/*.test.mjs

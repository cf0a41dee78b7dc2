#!/usr/bin/env bash
# The coding agents, the real CLIs from npm (Codex CLI, Claude Code, Gemini CLI), through
# keypool-server against the fake provider.
# Each CLI is pinned and installed into a cache folder of its own (never into the app's
# node_modules, which `npm start` installs): $KEYPOOL_AGENTS_CACHE, by default
# ~/.cache/keypool-agents/<package>@<version>. The binaries under test are the ones the Rust tests
# built (target/debug/keypool-server, keypool-fake-provider).
set -euo pipefail
cd "$(dirname "$0")/../.."

cache=${KEYPOOL_AGENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/keypool-agents}
# Installs $1@$2 (no install scripts: none of the three needs one to run) unless its program
# $3, a path under node_modules, is there; prints that program's path.
install() {
  local package=$1 version=$2 dir="$cache/$1@$2"
  if [ ! -x "$dir/node_modules/$3" ]; then
    echo "keypool: installing $package@$version into $dir" >&2
    mkdir -p "$dir"
    npm install --no-audit --no-fund --no-save --ignore-scripts --prefix "$dir" "$package@$version" >/dev/null
  fi
  echo "$dir/node_modules/$3"
}
KEYPOOL_CODEX=$(install @openai/codex 0.169.0 .bin/codex)
# Claude Code's npm package holds its native program in a package per platform (about 370 MB);
# its postinstall only links it, so the test runs it where it lies.
case "$(uname -m)" in aarch64 | arm64) arch=arm64 ;; *) arch=x64 ;; esac
KEYPOOL_CLAUDE=$(install @anthropic-ai/claude-code 2.1.328 "@anthropic-ai/claude-code-linux-$arch/claude")
KEYPOOL_GEMINI=$(install @google/gemini-cli 0.61.0 .bin/gemini)
export KEYPOOL_CODEX KEYPOOL_CLAUDE KEYPOOL_GEMINI

target=${CARGO_TARGET_DIR:-$PWD/target}
cargo test --workspace --locked --no-run --quiet
export KEYPOOL_FAKE_PROVIDER_BINARY="$target/debug/keypool-fake-provider"
export KEYPOOL_SERVER_BINARY="$target/debug/keypool-server"
node --test --test-concurrency=1 tests/agents/*.test.mjs

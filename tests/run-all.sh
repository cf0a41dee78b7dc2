#!/usr/bin/env bash
# Runs every test suite, prints each runner's summary, and exits non-zero if any failed.
# Suites keep running after a failure so one run shows everything that is wrong.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
suite() {
  local name=$1
  shift
  printf '\n=== %s: %s\n' "$name" "$*"
  local started=$SECONDS
  if "$@"; then
    printf '=== %s: passed in %ss\n' "$name" $((SECONDS - started))
  else
    printf '=== %s: FAILED in %ss\n' "$name" $((SECONDS - started))
    failed+=("$name")
  fi
}

suite "Rust format" cargo fmt --all --check
suite "Rust lints" cargo clippy --workspace --all-targets --locked -- -D warnings
suite "Rust tests" cargo test --workspace --locked
suite "Keychain (Secret Service)" bash tests/keychain.sh
# The real coding-agent CLIs (pinned, installed into a cache folder) through keypool-server.
suite "Coding agents" bash tests/agents/run.sh
suite "UI types" npm run --silent typecheck
suite "UI lints" npm run --silent lint
# Settings → About's third-party list is what Cargo.lock and package-lock.json ship now.
suite "Third-party licences" node --test tests/licences/
suite "UI unit tests" npx vitest run --config ui/vite.config.ts
# The .deb and .rpm, then the end-to-end tests against the binary the .deb holds; built in the dev
# profile on the dependencies the Rust tests built (`npm run test:bundle` does the same in release).
suite "Bundles and end-to-end tests" bash tests/bundle/run.sh debug

echo
if ((${#failed[@]})); then
  echo "keypool: failed suites: ${failed[*]}"
  exit 1
fi
echo "keypool: all suites passed"

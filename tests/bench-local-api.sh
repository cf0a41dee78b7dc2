#!/usr/bin/env bash
# What the local API adds to a request, and what it carries: Keypool's endpoint vs the fake
# provider called directly, at concurrency 1 and 64, whole and streamed replies (release
# builds; the fake runs as its own process). With LITELLM_URL=http://127.0.0.1:4000/v1 and
# LITELLM_KEY set, the same load through that LiteLLM proxy (configured on the fake, see the
# README) for comparison. A benchmark, not a test: it prints figures and always succeeds.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --quiet -p keypool-fake-provider -p keypool-bench --bin keypool-local-api-bench
port=${FAKE_PORT:-18099}
./target/release/keypool-fake-provider --port "$port" > /dev/null &
fake=$!
trap 'kill $fake 2>/dev/null || true' EXIT
until curl -s -o /dev/null "http://127.0.0.1:$port/v1/models"; do :; done

bench=./target/release/keypool-local-api-bench
upstream="http://127.0.0.1:$port/v1"
for stream in "" --stream; do
  for concurrency in 1 64; do
    requests=$((concurrency == 1 ? 3000 : 20000))
    for through in direct keypool; do
      $bench --upstream "$upstream" --keys k1,k2,k3 --requests "$requests" --concurrency "$concurrency" --through "$through" $stream
    done
    if [[ -n "${LITELLM_URL:-}" ]]; then
      $bench --upstream "$upstream" --keys k1 --requests $((requests / 5)) --concurrency "$concurrency" --warmup 100 \
        --through "$LITELLM_URL" --token "${LITELLM_KEY:-}" $stream
    fi
  done
done

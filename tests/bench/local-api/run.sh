#!/usr/bin/env bash
# npm run bench:local-api: what Keypool's local API carries and adds, beside nginx, in one run.
#
# The upstream is nginx answering every request with a fixed OpenAI chat completion
# (upstream.conf); the reference is nginx doing nothing but forwarding to it with kept-alive
# connections (proxy.conf); Keypool's endpoint (release build, `keypool-local-api-bench --serve`,
# a temporary store with three keys, the usage ledger on) forwards to the same upstream through
# its pool, and a second one with the ledger off (`--no-ledger`: what recording costs). wrk sends
# the same body to each (chat.lua): at concurrency 64 for throughput, at 1 for latency. `keypool-server` (release build, the headless pool: its own store from a config file
# with the same three keys, request log lines off as nginx's access log is) forwards to it too.
# All of it shares this machine's cores, so the ratio is the figure that travels.
# A benchmark, not a test: it prints a table and always succeeds.
#   DURATION=10 (seconds per throughput run)  LATENCY_DURATION=5  KEYPOOL_BENCH_NO_BUILD=1
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=tests/bench/local-api
duration=${DURATION:-10}
latency_duration=${LATENCY_DURATION:-5}

bash .ci/ensure-deps.sh > /dev/null
build_dir=${CARGO_TARGET_DIR:-target}
if [[ -z "${KEYPOOL_BENCH_NO_BUILD:-}" ]]; then
  cargo build --release --quiet -p keypool-bench -p keypool-server --bin keypool-local-api-bench --bin keypool-server
fi

dir=$(mktemp -d)
mkdir -p "$dir/logs" "$dir/temp"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
upstream_port=$(free_port)
proxy_port=$(free_port)
server_port=$(free_port)
sed "s/UPSTREAM_PORT/$upstream_port/" $here/upstream.conf > "$dir/upstream.conf"
sed "s/UPSTREAM_PORT/$upstream_port/; s/PROXY_PORT/$proxy_port/" $here/proxy.conf > "$dir/proxy.conf"
nginx -c "$dir/upstream.conf" -p "$dir" -g 'daemon off;' & pids+=($!)
nginx -c "$dir/proxy.conf" -p "$dir" -g 'daemon off;' & pids+=($!)
# Keypool's endpoint in the bench binary, with "$@" for flags; once it listens, $dir/$name.txt
# holds its `url=… token=…`.
start_endpoint() {
  local name=$1
  shift
  "$build_dir/release/keypool-local-api-bench" --upstream "http://127.0.0.1:$upstream_port/v1" --keys k1,k2,k3 \
    --requests 1 --serve "$@" > "$dir/$name.txt" 2>&1 & pids+=($!)
  local pid=$!
  until grep -q 'url=' "$dir/$name.txt"; do
    kill -0 "$pid" 2> /dev/null || { cat "$dir/$name.txt"; exit 1; }
    sleep 0.1
  done
}
endpoint_url() { sed -n 's/url=\([^ ]*\) .*/\1/p' "$dir/$1.txt"; }
endpoint_token() { sed -n 's/.*token=\(.*\)/\1/p' "$dir/$1.txt"; }
start_endpoint keypool
# The same without the usage ledger: what recording every attempt costs (not a target row).
start_endpoint unrecorded --no-ledger
keypool_url=$(endpoint_url keypool)
TOKEN=$(endpoint_token keypool)
export TOKEN
unrecorded_url=$(endpoint_url unrecorded)
UNRECORDED_TOKEN=$(endpoint_token unrecorded)

mkdir -p "$dir/server"
cat > "$dir/server.toml" << TOML
[[providers]]
name = "bench"
kind = "openai"
base_url = "http://127.0.0.1:$upstream_port/v1"
models = ["bench-model"]
[[providers.keys]]
key = "k1"
[[providers.keys]]
key = "k2"
[[providers.keys]]
key = "k3"
TOML
RUST_LOG=warn "$build_dir/release/keypool-server" serve --data-dir "$dir/server" --listen "127.0.0.1:$server_port" \
  --config "$dir/server.toml" --token-file "$dir/server-token" > "$dir/server.txt" 2>&1 & pids+=($!)
server_pid=$!
until curl -s -o /dev/null "http://127.0.0.1:$server_port/healthz"; do
  kill -0 "$server_pid" 2> /dev/null || { cat "$dir/server.txt"; exit 1; }
  sleep 0.1
done
# Idle: started, its store open, no request served yet.
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
server_idle_rss=$(rss_kib "$server_pid")
SERVER_TOKEN=$(cat "$dir/server-token")

until curl -s -o /dev/null "http://127.0.0.1:$upstream_port/" && curl -s -o /dev/null "http://127.0.0.1:$proxy_port/"; do sleep 0.1; done

targets=("direct (nginx upstream)|http://127.0.0.1:$upstream_port"
  "nginx as a reverse proxy|http://127.0.0.1:$proxy_port"
  "Keypool local API|$keypool_url"
  "Keypool local API, no usage ledger|$unrecorded_url"
  "keypool-server|http://127.0.0.1:$server_port")

# wrk's latency ("102.00us", "1.20ms", "1.01s") in milliseconds.
ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'; }

declare -A rps p50 p99
for target in "${targets[@]}"; do
  name=${target%%|*} url=${target#*|}
  case $name in
    "Keypool local API, no usage ledger") export TOKEN=$UNRECORDED_TOKEN ;;
    keypool-server) export TOKEN=$SERVER_TOKEN ;;
  esac
  # A warm-up, so every connection pool is full before the counting run.
  wrk -t2 -c64 -d2s -s $here/chat.lua "$url" > /dev/null
  rps[$name]=$(wrk -t2 -c64 -d"${duration}s" -s $here/chat.lua "$url" | awk '/Requests\/sec/ { print $2 }')
  latency=$(wrk -t1 -c1 -d"${latency_duration}s" --latency -s $here/chat.lua "$url")
  p50[$name]=$(ms "$(echo "$latency" | awk '$1 == "50%" { print $2 }')")
  p99[$name]=$(ms "$(echo "$latency" | awk '$1 == "99%" { print $2 }')")
done

direct="direct (nginx upstream)" proxy="nginx as a reverse proxy"
echo
echo "Local API, $(nproc) cores shared by wrk, nginx and the proxy; wrk c=64 ${duration} s, c=1 ${latency_duration} s; $(date -u +%F)"
echo
echo "| through | requests/s at c=64 | ÷ nginx proxy | p50 at c=1 | over direct | p99 at c=1 |"
echo "|---|---|---|---|---|---|"
for target in "${targets[@]}"; do
  name=${target%%|*}
  awk -v n="$name" -v r="${rps[$name]}" -v pr="${rps[$proxy]}" -v a="${p50[$name]}" -v d="${p50[$direct]}" -v b="${p99[$name]}" \
    'BEGIN { printf "| %s | %.0f | %.2f | %.3f ms | %+.3f ms | %.3f ms |\n", n, r, r / pr, a, a - d, b }'
done
echo
awk -v k="$server_idle_rss" -v l="$(rss_kib "$server_pid")" \
  'BEGIN { printf "keypool-server RSS: %.1f MiB idle (started, nothing served), %.1f MiB after the runs above\n", k / 1024, l / 1024 }'

# The issue's targets, as rows of the benches' one table (tests/bench/summary.mjs).
keypool="Keypool local API"
rows=$(awk -v kr="${rps[$keypool]}" -v sr="${rps[keypool-server]}" -v pr="${rps[$proxy]}" \
  -v kp="${p50[$keypool]}" -v sp="${p50[keypool-server]}" -v dp="${p50[$direct]}" \
  -v k99="${p99[$keypool]}" -v s99="${p99[keypool-server]}" -v rss="$server_idle_rss" '
  function row(what, figure, goal, met) {
    return sprintf("{\"what\":\"%s\",\"figure\":\"%s\",\"goal\":\"%s\",\"met\":%s}", what, figure, goal, met ? "true" : "false")
  }
  BEGIN {
    printf "[%s,%s,%s,%s,%s,%s,%s]",
      row("local API requests/s at c=64 ÷ nginx proxy", sprintf("%.2f", kr / pr), "≥ 0.9", kr / pr >= 0.9),
      row("local API p50 at c=1 over direct", sprintf("%+.3f ms", kp - dp), "≤ +0.05 ms", kp - dp <= 0.05),
      row("local API p99 at c=1", sprintf("%.3f ms", k99), "≤ 0.3 ms", k99 <= 0.3),
      row("keypool-server requests/s at c=64 ÷ nginx proxy", sprintf("%.2f", sr / pr), "≥ 0.9", sr / pr >= 0.9),
      row("keypool-server p50 at c=1 over direct", sprintf("%+.3f ms", sp - dp), "≤ +0.05 ms", sp - dp <= 0.05),
      row("keypool-server p99 at c=1", sprintf("%.3f ms", s99), "≤ 0.3 ms", s99 <= 0.3),
      row("keypool-server RSS idle", sprintf("%.1f MiB", rss / 1024), "≤ 25 MB", rss * 1024 <= 25e6)
  }')
node tests/bench/summary.mjs add "$rows"

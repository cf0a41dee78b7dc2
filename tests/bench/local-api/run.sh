#!/usr/bin/env bash
# npm run bench:local-api: what Keypool's local API carries and adds, beside nginx, in one run.
#
# The upstream is nginx answering every request with a fixed OpenAI chat completion, whole or
# as a 40-event SSE stream (upstream.conf); the reference is nginx doing nothing but forwarding
# to it with kept-alive connections, one worker, unbuffered (proxy.conf). Keypool's endpoint
# (release build, `keypool-local-api-bench --serve`, a temporary store with three keys, the usage
# ledger on) forwards to the same upstream through its pool, and a second one with the ledger off
# (`--no-ledger`: what recording costs). `keypool-server` (release build, the headless pool: its
# own store from a config file with the same three keys, request log lines off as nginx's access
# log is, the ledger on) forwards to it too. wrk sends the same body to each (chat.lua): at
# concurrency 64 for throughput, at 1 for latency.
#
# Then the CPU one request costs the proxy process (utime + stime from /proc/<pid>/stat over the
# requests wrk counted, at c=64), nginx and keypool-server taking turns in each round, for a
# whole completion, the 40-event stream, and a translated stream (an Anthropic Messages client
# routed to the OpenAI-kind provider: `[[routes]]`); the medians of the rounds. All of it shares
# this machine's cores, so the ratios are the figures that travel. Last, long_streams.py holds a
# thousand slow streams open through keypool-server: its RSS per stream, its CPU per event.
# A benchmark, not a test: it prints tables and always succeeds.
#   DURATION=10 (seconds per throughput run)  LATENCY_DURATION=5  ROUNDS=5 CPU_DURATION=5 (the CPU
#   runs)  CPU_ONLY=1 (only the CPU table)  KEYPOOL_BENCH_NO_BUILD=1  KEYPOOL_SERVER=PATH (another
#   keypool-server binary)  KEYPOOL_SERVER_BEFORE=PATH (a second binary measured in turn with the
#   first: a change's CPU before and after, from one run)  PERF_DIR=DIR (perf records each run into DIR/PROXY-ANSWER.data,
#   with call graphs; its figures are then perf's too; for symbols, a build not stripped:
#   CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=line-tables-only; with
#   PERF_EVENTS, each of those events is recorded instead of the CPU's time)  PERF_STAT=1
#   (perf counts each proxy's system calls and context switches per request; PERF_EVENTS=LIST
#   counts those events instead, e.g. uprobes set with `perf probe -x …/libc.so.6 malloc`)  LONG_STREAMS=0 (not
#   the long streams: long_streams.py, STREAMS=1000 WINDOW=15 WINDOWS=3)  LEDGER=postgres://…
#   (keypool-server writes its team ledger there too; with KEYPOOL_SERVER_BEFORE set to the same
#   binary, "before" is the SQLite ledger alone and "after" the two: what the team ledger costs)
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=tests/bench/local-api
duration=${DURATION:-10}
latency_duration=${LATENCY_DURATION:-5}
rounds=${ROUNDS:-5}
cpu_duration=${CPU_DURATION:-5}
cpu_only=${CPU_ONLY:-}
perf_dir=${PERF_DIR:-}
perf_stat=${PERF_STAT:-}

bash .ci/ensure-deps.sh > /dev/null
# perf (Debian's linux-perf) only when asked for: the bench's own dependency, not npm test's.
if [[ -n ${PERF_DIR:-}${PERF_STAT:-} ]] && ! command -v perf > /dev/null; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends linux-perf
fi
build_dir=${CARGO_TARGET_DIR:-target}
if [[ -z "${KEYPOOL_BENCH_NO_BUILD:-}" ]]; then
  cargo build --release --quiet -p keypool-bench -p keypool-server --bin keypool-local-api-bench --bin keypool-server
fi
server_binary=${KEYPOOL_SERVER:-$build_dir/release/keypool-server}

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
upstream_pid=$!
nginx -c "$dir/proxy.conf" -p "$dir" -g 'daemon off;' & pids+=($!)
proxy_pid=$!
# Keypool's endpoint in the bench binary, with "$@" for flags; once it listens, $dir/$name.txt
# holds its `url=… token=…`.
start_endpoint() {
  local name=$1
  shift
  "$build_dir/release/keypool-local-api-bench" --upstream "http://127.0.0.1:$upstream_port/v1" --keys k1,k2,k3 \
    --requests 1 --serve "$@" > "$dir/$name.txt" 2>&1 & pids+=($!)
  local pid=$!
  until grep -q 'url=' "$dir/$name.txt" 2> /dev/null; do
    kill -0 "$pid" 2> /dev/null || { cat "$dir/$name.txt"; exit 1; }
    sleep 0.1
  done
}
endpoint_url() { sed -n 's/url=\([^ ]*\) .*/\1/p' "$dir/$1.txt"; }
endpoint_token() { sed -n 's/.*token=\(.*\)/\1/p' "$dir/$1.txt"; }
if [[ -z $cpu_only ]]; then
  start_endpoint keypool
  # The same without the usage ledger: what recording every attempt costs (not a target row).
  start_endpoint unrecorded --no-ledger
  keypool_url=$(endpoint_url keypool)
  KEYPOOL_TOKEN=$(endpoint_token keypool)
  unrecorded_url=$(endpoint_url unrecorded)
  UNRECORDED_TOKEN=$(endpoint_token unrecorded)
fi

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
# The same upstream's streamed answer, and the Anthropic model a translated request asks for.
[[providers]]
name = "bench-stream"
kind = "openai"
base_url = "http://127.0.0.1:$upstream_port/stream/v1"
models = ["bench-stream"]
[[providers.keys]]
key = "k1"
[[providers.keys]]
key = "k2"
[[providers.keys]]
key = "k3"
[[routes]]
model = "claude-bench"
to = "bench-stream/bench-stream"
TOML
# LEDGER: the measured server's config names the team ledger too (before any [[table]]).
if [[ -n ${LEDGER:-} ]]; then
  { printf 'ledger = "%s"\n' "$LEDGER"; cat "$dir/server.toml"; } > "$dir/server-ledger.toml"
fi
# keypool-server NAME BINARY PORT [CONFIG]: started with that config in $dir/NAME, its pid in
# $started_pid.
start_server() {
  local name=$1 binary=$2 port=$3 config=${4:-$dir/server.toml}
  mkdir -p "$dir/$name"
  RUST_LOG=warn "$binary" serve --data-dir "$dir/$name" --listen "127.0.0.1:$port" \
    --config "$config" --token-file "$dir/$name-token" > "$dir/$name.txt" 2>&1 & pids+=($!)
  started_pid=$!
  until curl -s -o /dev/null "http://127.0.0.1:$port/healthz"; do
    kill -0 "$started_pid" 2> /dev/null || { cat "$dir/$name.txt"; exit 1; }
    sleep 0.1
  done
}
if [[ -n ${LEDGER:-} ]]; then
  start_server server "$server_binary" "$server_port" "$dir/server-ledger.toml"
else
  start_server server "$server_binary" "$server_port"
fi
server_pid=$started_pid
# KEYPOOL_SERVER_BEFORE: another build measured in turn with this one, for a change's before and
# after in one run (the CPU table only).
before_binary=${KEYPOOL_SERVER_BEFORE:-}
if [[ -n $before_binary ]]; then
  before_port=$(free_port)
  start_server before "$before_binary" "$before_port"
  before_pid=$started_pid
  BEFORE_TOKEN=$(cat "$dir/before-token")
fi
# Idle: started, its store open, no request served yet.
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
server_idle_rss=$(rss_kib "$server_pid")
SERVER_TOKEN=$(cat "$dir/server-token")

until curl -s -o /dev/null "http://127.0.0.1:$upstream_port/" && curl -s -o /dev/null "http://127.0.0.1:$proxy_port/"; do
  kill -0 "$upstream_pid" "$proxy_pid" 2> /dev/null || { cat "$dir"/logs/*; exit 1; }
  sleep 0.1
done

if [[ -z $cpu_only ]]; then
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
      "Keypool local API") export TOKEN=$KEYPOOL_TOKEN ;;
      "Keypool local API, no usage ledger") export TOKEN=$UNRECORDED_TOKEN ;;
      keypool-server) export TOKEN=$SERVER_TOKEN ;;
      *) export TOKEN=bench ;;
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
fi

# CPU time of process $1 and its children (an nginx master and its worker), in clock ticks.
cpu_ticks() {
  local total=0 pid
  for pid in "$1" $(pgrep -P "$1"); do
    total=$((total + $(sed 's/.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }')))
  done
  echo "$total"
}
ticks_per_s=$(getconf CLK_TCK)
# One run at c=64 of ANSWER ($2) through $1 (nginx | keypool-server): the µs of CPU per request.
cpu_per_request() {
  local proxy=$1 answer=$2 url pid token path=/v1/chat/completions
  case $proxy in
    nginx) url="http://127.0.0.1:$proxy_port" pid=$proxy_pid token=bench ;;
    keypool-server) url="http://127.0.0.1:$server_port" pid=$server_pid token=$SERVER_TOKEN ;;
    before) url="http://127.0.0.1:$before_port" pid=$before_pid token=$BEFORE_TOKEN ;;
  esac
  [[ $proxy == nginx && $answer == stream ]] && path=/stream/v1/chat/completions
  ANSWER=$answer TOKEN=$token WRK_PATH=$path wrk -t2 -c64 -d1s -s $here/chat.lua "$url" > /dev/null
  local before out after perf=()
  if [[ -n $perf_dir ]]; then
    local sampled=(-F 2999)
    [[ -n ${PERF_EVENTS:-} ]] && sampled=(-e "$PERF_EVENTS")
    perf=(perf record --quiet "${sampled[@]}" --call-graph dwarf,32768 -o "$perf_dir/$proxy-$answer.data" -p "$(echo "$pid" $(pgrep -P "$pid") | tr ' ' ,)" --)
  elif [[ -n $perf_stat ]]; then
    local all
    all=$(echo "$pid" $(pgrep -P "$pid") | tr ' ' ,)
    perf=(perf stat -x, -e "${PERF_EVENTS:-raw_syscalls:sys_enter,context-switches}" -o "$dir/perf-stat" -p "$all" --)
  fi
  before=$(cpu_ticks "$pid")
  out=$(ANSWER=$answer TOKEN=$token WRK_PATH=$path "${perf[@]}" wrk -t2 -c64 -d"${cpu_duration}s" -s $here/chat.lua "$url")
  # What the proxy finishes after the last answer (the ledger's last batch) counts too.
  sleep 0.2
  after=$(cpu_ticks "$pid")
  if grep -q -E 'Non-2xx|Socket errors' <<< "$out"; then
    echo "$proxy, $answer: $(grep -E 'Non-2xx|Socket errors' <<< "$out" | tr -s ' ')" >&2
  fi
  local requests
  requests=$(awk '/requests in/ { print $1 }' <<< "$out")
  if [[ -n $perf_stat ]]; then
    awk -F, -v n="$requests" -v what="$proxy $answer" '$3 != "" && $1 ~ /^[0-9]/ { printf "%s: %.2f %s per request\n", what, $1 / n, $3 }' "$dir/perf-stat" >&2
  fi
  awk -v t=$((after - before)) -v hz="$ticks_per_s" -v n="$requests" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A cpu
runs=("nginx whole" "keypool-server whole" "nginx stream" "keypool-server stream" "keypool-server translated")
if [[ -n $before_binary ]]; then runs+=("before whole" "before stream" "before translated"); fi
for ((round = 1; round <= rounds; round++)); do
  # Every other round in the opposite order, so neither proxy always follows the other.
  order=("${runs[@]}")
  if ((round % 2 == 0)); then order=(); for ((i = ${#runs[@]} - 1; i >= 0; i--)); do order+=("${runs[i]}"); done; fi
  for run in "${order[@]}"; do
    cpu[$run]+=" $(cpu_per_request $run)"
  done
done
declare -A cpu_median
for run in "${runs[@]}"; do
  # shellcheck disable=SC2086
  cpu_median[$run]=$(median ${cpu[$run]})
done
echo
echo "CPU per request (utime + stime of the proxy's process over the requests wrk counted), wrk c=64,"
echo "medians of $rounds rounds of ${cpu_duration} s; $(nproc) cores shared by wrk, the upstream and the proxy; $(date -u +%F)"
echo
echo "| answer | nginx proxy | keypool-server | ratio |"
echo "|---|---|---|---|"
awk -v n="${cpu_median[nginx whole]}" -v k="${cpu_median[keypool-server whole]}" \
  'BEGIN { printf "| whole chat completion | %.1f µs | %.1f µs | %.2f× |\n", n, k, k / n }'
awk -v n="${cpu_median[nginx stream]}" -v k="${cpu_median[keypool-server stream]}" \
  'BEGIN { printf "| 40-event SSE stream | %.1f µs | %.1f µs | %.2f× |\n", n, k, k / n }'
awk -v s="${cpu_median[keypool-server stream]}" -v t="${cpu_median[keypool-server translated]}" \
  'BEGIN { printf "| the stream translated (Anthropic client, OpenAI provider) | — | %.1f µs | %.2f× the stream as-is |\n", t, t / s }'
for run in "${runs[@]}"; do echo "  $run:${cpu[$run]}"; done
if [[ -n $before_binary ]]; then
  echo
  echo "| answer | before ($before_binary) | after | after ÷ before |"
  echo "|---|---|---|---|"
  for answer in whole stream translated; do
    awk -v a="$answer" -v b="${cpu_median[before $answer]}" -v k="${cpu_median[keypool-server $answer]}" \
      'BEGIN { printf "| %s | %.1f µs | %.1f µs | %.2f× |\n", a, b, k, k / b }'
  done
fi

# The issue's targets, as rows of the benches' one table (tests/bench/summary.mjs).
rows=$(awk -v nw="${cpu_median[nginx whole]}" -v kw="${cpu_median[keypool-server whole]}" \
  -v ns="${cpu_median[nginx stream]}" -v ks="${cpu_median[keypool-server stream]}" -v kt="${cpu_median[keypool-server translated]}" '
  function row(what, figure, goal, met) {
    return sprintf("{\"what\":\"%s\",\"figure\":\"%s\",\"goal\":\"%s\",\"met\":%s}", what, figure, goal, met ? "true" : "false")
  }
  BEGIN {
    printf "[%s,%s,%s]",
      row("keypool-server CPU per whole completion ÷ nginx proxy", sprintf("%.2f×", kw / nw), "≤ 1.25×", kw / nw <= 1.25),
      row("keypool-server CPU per 40-event stream ÷ nginx proxy", sprintf("%.2f×", ks / ns), "≤ 1.25×", ks / ns <= 1.25),
      row("keypool-server CPU per translated stream ÷ as-is stream", sprintf("%.2f×", kt / ks), "≤ 1.3×", kt / ks <= 1.3)
  }')
node tests/bench/summary.mjs add "$rows"

# Long streams: a thousand held open at once through keypool-server (long_streams.py).
if [[ -z $cpu_only && ${LONG_STREAMS:-1} != 0 ]]; then
  KEYPOOL_SERVER=$server_binary python3 $here/long_streams.py
fi

#!/usr/bin/env bash
# `npm run bench`: `bench:app` and `bench:local-api` one after the other, then the targets both
# measured, as one table (each bench's full figures are printed above it).
set -euo pipefail
cd "$(dirname "$0")/../.."
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
export KEYPOOL_BENCH_SUMMARY=$summary
bash tests/bench/run.sh
bash tests/bench/local-api/run.sh
echo
echo "Targets (issue 25), $(nproc) cores, $(date -u +%F)"
node tests/bench/summary.mjs print "$summary"

#!/usr/bin/env bash
# bench.sh: the benchmarks of BENCHMARKS.md, on loopback only; everything it starts
# stops by itself.
#   * stripped release binary size;
#   * cold start: exec -> first answered tools/list on a seeded SQLite database;
#   * warm tools/list throughput and p50/p99 at 1, 8 and 64 concurrent connections, with
#     the server pinned to CPU 0 and wrk pinned to CPU 1;
#   * RSS after start and peak RSS under load.
# Needs wrk (Debian package `wrk`; installed here when missing) and taskset.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DURATION=${BENCH_DURATION:-10s}
RUNS=${BENCH_COLD_RUNS:-30}

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
cargo build --release --quiet
BIN=$PWD/target/release/kobana-finance-mcp
WORK=$(mktemp -d /tmp/kfin-bench.XXXXXX)
SERVER_PID=""
cleanup() { [[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

export KFIN_JWT_SECRET=bench-secret-not-for-production
export KFIN_PUBLIC_URL=http://127.0.0.1:8080
export KFIN_RATE_LIMIT_READS=1000000000
DB="sqlite:$WORK/bench.db"
"$BIN" seed --database-url "$DB" >/dev/null
TOKEN=$("$BIN" token --user 0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01)
export KFIN_BENCH_TOKEN=$TOKEN

echo "binary: $(stat -c %s "$BIN") bytes ($(numfmt --to=iec "$(stat -c %s "$BIN")")), stripped: $(file -b "$BIN" | grep -o 'stripped\|not stripped')"
echo "cold start ($RUNS runs): $(python3 benches/cold_start.py "$BIN" "$DB" "$TOKEN" "$RUNS")"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
KFIN_LOG=${KFIN_LOG:-info} timeout 900 taskset -c 0 "$BIN" serve --addr "127.0.0.1:$PORT" --database-url "$DB" >/dev/null 2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/.well-known/oauth-protected-resource" && break; sleep 0.05; done
SERVER_PID=$(pgrep -P "$SERVER_PID" || echo "$SERVER_PID")
echo "RSS after start: $(awk '/VmRSS/ {print $2" "$3}' /proc/$SERVER_PID/status)"
for c in 1 8 64; do
  out=$(timeout 120 taskset -c 1 wrk -t1 -c"$c" -d"$DURATION" --latency -s benches/tools_list.lua "http://127.0.0.1:$PORT/" | grep '^RESULT')
  echo "tools/list, $c connection(s): ${out#RESULT }"
done
echo "peak RSS under load: $(awk '/VmHWM/ {print $2" "$3}' /proc/$SERVER_PID/status)"

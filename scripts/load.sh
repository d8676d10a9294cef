#!/usr/bin/env bash
# load.sh: `make load` — a bounded load test against PostgreSQL, loopback only.
#
# Starts the RELEASE server (built once with `cargo build --release` if missing, or
# LOAD_BINARY=path) on 127.0.0.1 against a fresh PostgreSQL database with the demo
# data and rate limits raised, drives it with LOAD_CLIENTS (64) concurrent clients for
# LOAD_SECONDS (60) of mixed reads and writes (tests/it/load/, `external_load`), checks
# integrity in SQL, prints throughput and p50/p99 per kind, then stops the server and
# drops the database. The report is kept in target/load/report.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ADMIN_URL=${KFIN_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
CLIENTS=${LOAD_CLIENTS:-64}
DURATION=${LOAD_SECONDS:-60}
OUT=$PWD/target/load
mkdir -p "$OUT"

BIN=${LOAD_BINARY:-target/release/kobana-finance-mcp}
if [[ ! -x $BIN ]]; then
  echo "building the release server (once)…"
  cargo build --release --quiet
fi
# The driver: a test binary, built before the server starts so the build does not
# share the machine with the measurement.
cargo test --quiet --test it --no-run 2>/dev/null

db="kfin_load_$(date +%s)_$$"
base=${ADMIN_URL%/*}
DB_URL="$base/$db"
psql "$ADMIN_URL" -w -qAtc "CREATE DATABASE $db" >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
secret="load-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
server_pid=""
cleanup() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  psql "$ADMIN_URL" -w -qAtc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "server: $BIN on 127.0.0.1:$port, PostgreSQL database $db"
KFIN_JWT_SECRET=$secret KFIN_PUBLIC_URL="http://127.0.0.1:$port" \
KFIN_RATE_LIMIT_READS=1000000000 KFIN_RATE_LIMIT_WRITES=1000000000 \
  "$BIN" serve --addr "127.0.0.1:$port" --database-url "$DB_URL" >"$OUT/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$OUT/server.log" >&2; exit 1; }
  sleep 0.2
done

echo "driving it: $CLIENTS clients for ${DURATION}s…"
KFIN_LOAD_ADDR="127.0.0.1:$port" KFIN_LOAD_PUBLIC_URL="http://127.0.0.1:$port" KFIN_LOAD_DATABASE_URL="$DB_URL" \
KFIN_JWT_SECRET=$secret LOAD_CLIENTS=$CLIENTS LOAD_SECONDS=$DURATION KFIN_LOAD_REPORT="$OUT/report.md" \
  timeout $((DURATION + 600)) cargo test --quiet --test it -- --ignored load::external_load --nocapture
echo "report: $OUT/report.md"

if [[ ${LOAD_BANKING:-1} != 0 ]]; then
  # Money through the bank: the suite's in-process server and the stand-in of the
  # banking API (failing 10 % of its calls, 5 % after acting), on PostgreSQL.
  echo "banking run: $CLIENTS clients for ${DURATION}s dispatching and charging, the gateway failing…"
  KFIN_TEST_DATABASE=postgres LOAD_CLIENTS=$CLIENTS LOAD_SECONDS=$DURATION KFIN_LOAD_BANKING_REPORT="$OUT/banking.md" \
    timeout $((DURATION + 600)) cargo test --quiet --test it -- --ignored load::banking::external_banking_load --nocapture
  echo "report: $OUT/banking.md"
fi

if [[ ${LOAD_OUTAGE:-1} != 0 ]]; then
  # The shared server is not touched: the outage run starts (and stops) its own cluster.
  kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  server_pid=""
  OUTAGE_SECONDS=${LOAD_OUTAGE_SECONDS:-60}
  echo "outage run: $CLIENTS clients for ${OUTAGE_SECONDS}s, PostgreSQL restarted and its connections terminated twice…"
  LOAD_BINARY=$(realpath "$BIN") LOAD_CLIENTS=$CLIENTS LOAD_OUTAGE_SECONDS=$OUTAGE_SECONDS KFIN_LOAD_OUTAGE_REPORT="$OUT/outage.md" \
    timeout $((OUTAGE_SECONDS + 600)) cargo test --quiet --test it -- --ignored load::external_outage --nocapture
  echo "report: $OUT/outage.md"
fi

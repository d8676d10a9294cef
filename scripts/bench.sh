#!/usr/bin/env bash
# bench.sh: the benchmarks of BENCHMARKS.md, on loopback only; everything it starts
# stops by itself.
#   * stripped release binary size;
#   * cold start: exec -> first answered tools/list on a seeded SQLite database, as a
#     local server (benches/cold_start.py) and in Lambda mode under a stand-in of the
#     Lambda Runtime API (benches/lambda_cold.py: init, first invocation);
#   * per-request cost against the ceiling (benches/bench.py): tools/list for the owner
#     and tools/call finance_payables_list with 100k payables, at 1, 8 and 64
#     connections, on SQLite and PostgreSQL (when one answers), CPU per request and
#     req/s of the product and of a bare hyper server answering the same bytes
#     (benches/ceiling), server on CPU 0 and wrk on CPU 1; RSS after start and peak;
#   * the authorization server's /token against its ceiling (benches/token.py) and a
#     person's whole sign-in through a company's OpenID provider (benches/sign_in.py).
# Knobs: BENCH_DURATION (10s), BENCH_ROUNDS (2), BENCH_CONNECTIONS ("1 8 64"),
# BENCH_PAYABLES (100000), BENCH_BACKENDS ("sqlite postgres"), BENCH_COLD_RUNS (30),
# BENCH_PG_ADMIN_URL (postgres://postgres@127.0.0.1:5432/test), BENCH_ONLY (requests whose label holds
# one of these |-separated words), BENCH_NO_BUILD=1 (with
# BENCH_BIN / BENCH_CEILING: other binaries, e.g. a symbolised build for perf).
# Needs wrk and sqlite3 (Debian packages; installed here when missing), taskset, psql.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=${BENCH_COLD_RUNS:-30}

for pkg in wrk sqlite3; do
  command -v "$pkg" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$pkg" >/dev/null; }
done
if [[ -z ${BENCH_NO_BUILD:-} ]]; then
  cargo build --release --quiet --bin kobana-finance-mcp
  cargo build --release --quiet --manifest-path benches/ceiling/Cargo.toml --target-dir target/ceiling
fi
BIN=${BENCH_BIN:-$PWD/target/release/kobana-finance-mcp}
CEILING=${BENCH_CEILING:-$PWD/target/ceiling/release/kobana-finance-ceiling}
WORK=$(mktemp -d /tmp/kfin-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

echo "binary: $(stat -c %s "$BIN") bytes ($(numfmt --to=iec "$(stat -c %s "$BIN")")), $(file -b "$BIN" | grep -o 'not stripped\|stripped')"

export KFIN_PUBLIC_URL=http://127.0.0.1:8080
DB="sqlite:$WORK/cold.db"
KFIN_JWT_SECRET=bench-secret-not-for-production "$BIN" seed --database-url "$DB" >/dev/null
TOKEN=$(KFIN_JWT_SECRET=bench-secret-not-for-production "$BIN" token --user 0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01)
echo "cold start, serve -> first tools/list ($RUNS runs): $(KFIN_JWT_SECRET=bench-secret-not-for-production python3 benches/cold_start.py "$BIN" "$DB" "$TOKEN" "$RUNS")"
unset KFIN_PUBLIC_URL
echo "cold start, Lambda mode -> first tools/list ($RUNS runs): $(python3 benches/lambda_cold.py "$BIN" "$DB" events/v2/tools-list.json "$RUNS")"
echo
python3 benches/bench.py "$BIN" "$CEILING"
echo
python3 benches/token.py "$BIN" "$CEILING"
echo
python3 benches/sign_in.py "$BIN"

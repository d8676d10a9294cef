#!/usr/bin/env bash
# bench-lists.sh: latency of GET /v1/payables?limit=25 (first page and a deep page ~1000
# pages in, by keyset cursor) with N payables in one workspace, on SQLite and on
# PostgreSQL; and of the same first page through MCP (tools/call finance_payables_list
# with a fields projection) and of the owner's tools/list. See "List pagination at
# scale" and "Tools" in BENCHMARKS.md. `make bench-tools` runs it with 100k payables.
#
# For each backend and each N: a fresh database (SQLite: a temp file; PostgreSQL:
# CREATE DATABASE kfin_bench_<random> on the admin URL, dropped at the end), `migrate` +
# `seed`, N payables bulk-inserted with SQL (benches/payables_seed_{sqlite,pg}.sql), the
# plan of the list query (EXPLAIN QUERY PLAN / EXPLAIN ANALYZE), then the release server
# pinned to CPU 0 and wrk pinned to CPU 1 (1 thread; 1 and 8 connections). Loopback only;
# everything it starts stops by itself.
#
#   BENCH_DURATION=10s BENCH_SIZES="10000 1000000" BENCH_BACKENDS="sqlite postgres" \
#   BENCH_DEEP_PAGES=1000 BENCH_PG_ADMIN_URL=postgres://postgres@127.0.0.1:5432/test \
#   scripts/bench-lists.sh
# BENCH_NO_BUILD=1 skips `cargo build --release`; BENCH_BIN=path uses another binary. Needs wrk, taskset, curl, sqlite3, psql.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DURATION=${BENCH_DURATION:-10s}
SIZES=${BENCH_SIZES:-10000 1000000}
BACKENDS=${BENCH_BACKENDS:-sqlite postgres}
DEEP_PAGES=${BENCH_DEEP_PAGES:-1000}
PG_ADMIN=${BENCH_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/test}
PG_BASE=${PG_ADMIN%/*}
WS=2b93f876-769a-4bdc-b23e-304957f313b4
OWNER=0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01

# wrk and the sqlite3 CLI come from Debian's packages when missing.
for pkg in wrk sqlite3; do
  command -v "$pkg" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$pkg" >/dev/null; }
done
for tool in wrk taskset curl sqlite3 psql; do
  command -v "$tool" >/dev/null || { echo "bench-lists: $tool is missing" >&2; exit 1; }
done
[[ -n ${BENCH_NO_BUILD:-} ]] || cargo build --release --quiet
BIN=${BENCH_BIN:-$PWD/target/release/kobana-finance-mcp}
WORK=$(mktemp -d /tmp/kfin-bench-lists.XXXXXX)
SERVER_PID=""
PG_DB=""
stop_server() {
  if [[ -n $SERVER_PID ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""; fi
}
drop_pg() {
  if [[ -n $PG_DB ]]; then timeout 60 psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" >/dev/null 2>&1 || true; PG_DB=""; fi
}
cleanup() { stop_server; drop_pg; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

export KFIN_JWT_SECRET=bench-secret KFIN_RATE_LIMIT_READS=1000000000 KFIN_LOG=off
SELECT=$(grep -v '^--' benches/payables_list_select.sql)
SCOPE="billings.workspace_id = \$1 AND billings.kind = 'payable'"
KEYSET="(billings.due_date, billings.id) > (\$2, \$3)"
ORDER="ORDER BY billings.due_date ASC, billings.id ASC LIMIT 26"
RESULTS=$WORK/results.md
echo "| backend | N | page | connections | p50 ms | p99 ms | req/s |" >"$RESULTS"
echo "|---|---|---|---|---|---|---|" >>"$RESULTS"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# The (due_date, id) of the last row of page DEPTH-1: the cursor of page DEPTH, for its EXPLAIN.
deep_key_sql() { echo "SELECT due_date || ' ' || id FROM billings WHERE workspace_id = '$WS' AND kind = 'payable' ORDER BY due_date, id LIMIT 1 OFFSET $(((DEPTH - 1) * 25 - 1))"; }

explain_sqlite() {
  local db=$1 key due id
  key=$(sqlite3 "$db" "$(deep_key_sql)"); due=${key% *}; id=${key#* }
  echo "EXPLAIN QUERY PLAN, first page:"
  sqlite3 "$db" "EXPLAIN QUERY PLAN $SELECT WHERE ${SCOPE//\$1/'$WS'} $ORDER" | sed 's/^/    /'
  echo "EXPLAIN QUERY PLAN, page $DEPTH (after $due $id):"
  local keyset=${KEYSET//\$2/"'$due'"}
  sqlite3 "$db" "EXPLAIN QUERY PLAN $SELECT WHERE ${SCOPE//\$1/'$WS'} AND ${keyset//\$3/"'$id'"} $ORDER" | sed 's/^/    /'
  echo "timing in the sqlite3 CLI (first page, page $DEPTH):"
  printf '.timer on\n%s;\n%s;\n' "$SELECT WHERE ${SCOPE//\$1/'$WS'} $ORDER" "$SELECT WHERE ${SCOPE//\$1/'$WS'} AND ${keyset//\$3/"'$id'"} $ORDER" \
    | sqlite3 "$db" | grep '^Run Time' | sed 's/^/    /'
}

explain_pg() {
  local url=$1 key due id
  key=$(psql -qAt "$url" -c "$(deep_key_sql)"); due=${key% *}; id=${key#* }
  echo "EXPLAIN ANALYZE (the server's statement, prepared with text parameters as sqlx binds them):"
  psql -q "$url" -v ON_ERROR_STOP=1 <<SQL | sed 's/^/    /'
PREPARE first_page(text) AS $SELECT WHERE $SCOPE $ORDER;
PREPARE deep_page(text, text, text) AS $SELECT WHERE $SCOPE AND $KEYSET $ORDER;
\echo -- first page, custom plan
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE first_page('$WS');
\echo -- page $DEPTH (after $due $id), custom plan
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE deep_page('$WS', '$due', '$id');
SET plan_cache_mode = force_generic_plan;
\echo -- first page, generic plan (what a long-lived prepared statement may switch to)
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE first_page('$WS');
\echo -- page $DEPTH, generic plan
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE deep_page('$WS', '$due', '$id');
SQL
}

run_wrk() { # label connections url [script]
  local out
  out=$(timeout 120 taskset -c 1 wrk -t1 -c"$2" -d"$DURATION" --latency -s "${4:-benches/list_get.lua}" "$3" | grep '^RESULT')
  echo "  $1, $2 connection(s): ${out#RESULT }"
  local p50 p99 rps
  rps=$(sed -n 's/.*rps=\([0-9.]*\).*/\1/p' <<<"$out"); p50=$(sed -n 's/.*p50_ms=\([0-9.]*\).*/\1/p' <<<"$out"); p99=$(sed -n 's/.*p99_ms=\([0-9.]*\).*/\1/p' <<<"$out")
  echo "| $BACKEND | $N | $1 | $2 | $p50 | $p99 | $rps |" >>"$RESULTS"
  grep -q 'errors=0' <<<"$out" || echo "  WARNING: wrk counted errors" >&2
}

for BACKEND in $BACKENDS; do
  for N in $SIZES; do
    echo "== $BACKEND, N=$N payables"
    # The deep page: page DEEP_PAGES, or the last full page but one when N is smaller.
    DEPTH=$(( DEEP_PAGES < N / 25 - 1 ? DEEP_PAGES : N / 25 - 1 ))
    case $BACKEND in
      sqlite) DB_FILE=$WORK/bench-$N.db; URL="sqlite:$DB_FILE" ;;
      postgres)
        PG_DB=kfin_bench_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
        timeout 60 psql -q "$PG_ADMIN" -c "CREATE DATABASE $PG_DB" >/dev/null
        URL="$PG_BASE/$PG_DB" ;;
      *) echo "unknown backend $BACKEND" >&2; exit 1 ;;
    esac
    timeout 120 "$BIN" migrate --database-url "$URL" >/dev/null
    timeout 120 "$BIN" seed --database-url "$URL" >/dev/null
    start=$(date +%s.%N)
    case $BACKEND in
      sqlite) { echo "CREATE TEMP TABLE bench_params AS SELECT $N AS n;"; cat benches/payables_seed_sqlite.sql; } \
                | timeout 1800 sqlite3 "$DB_FILE" >/dev/null
              count=$(sqlite3 "$DB_FILE" "SELECT COUNT(*) FROM billings WHERE workspace_id = '$WS' AND kind = 'payable'") ;;
      postgres) timeout 1800 psql -q "$URL" -v ON_ERROR_STOP=1 -v n="$N" -f benches/payables_seed_pg.sql >/dev/null
                count=$(psql -qAt "$URL" -c "SELECT COUNT(*) FROM billings WHERE workspace_id = '$WS' AND kind = 'payable'") ;;
    esac
    printf '  inserted %s payables (workspace total %s) in %.1f s\n' "$N" "$count" "$(echo "$(date +%s.%N) - $start" | bc)"
    case $BACKEND in
      sqlite) explain_sqlite "$DB_FILE" ;;
      postgres) explain_pg "$URL" ;;
    esac

    PORT=$(free_port)
    BASE=http://127.0.0.1:$PORT
    export KFIN_PUBLIC_URL=$BASE
    timeout 900 taskset -c 0 "$BIN" serve --addr "127.0.0.1:$PORT" --database-url "$URL" >/dev/null 2>"$WORK/server.log" &
    SERVER_PID=$!
    for _ in $(seq 200); do curl -s -o /dev/null "$BASE/.well-known/oauth-protected-resource" && break; sleep 0.05; done
    KFIN_BENCH_TOKEN=$("$BIN" token --user "$OWNER" --audience api)
    export KFIN_BENCH_TOKEN
    AUTH="Authorization: Bearer $KFIN_BENCH_TOKEN"
    first=$(curl -sf -H "$AUTH" "$BASE/v1/payables?limit=25")
    echo "  first page: $(grep -o '"due_date":"[^"]*"' <<<"$first" | head -1), $(grep -o '"id":"b0000000[^"]*"' <<<"$first" | wc -l) bench rows"
    # Follow next_cursor DEPTH pages in.
    cursor=""
    walk_start=$(date +%s.%N)
    for ((page = 1; page < DEPTH; page++)); do
      body=$(curl -sf -H "$AUTH" "$BASE/v1/payables?limit=25${cursor:+&cursor=$cursor}")
      cursor=$(grep -o '"next_cursor":"[^"]*"' <<<"$body" | cut -d'"' -f4)
      [[ -n $cursor ]] || { echo "  the walk ended at page $page (no next_cursor)" >&2; break; }
    done
    printf '  followed next_cursor to page %d in %.1f s\n' "$page" "$(echo "$(date +%s.%N) - $walk_start" | bc)"
    DEEP_URL="$BASE/v1/payables?limit=25&cursor=$cursor"
    deep=$(curl -sf -H "$AUTH" "$DEEP_URL")
    echo "  page $DEPTH starts at $(grep -o '"due_date":"[^"]*"' <<<"$deep" | head -1)"
    for c in 1 8; do run_wrk "first page" "$c" "$BASE/v1/payables?limit=25"; done
    for c in 1 8; do run_wrk "page $DEPTH" "$c" "$DEEP_URL"; done
    # The same first page through the MCP door: tools/call finance_payables_list with a
    # fields projection, and tools/list for the owner (the whole catalogue).
    KFIN_BENCH_TOKEN=$("$BIN" token --user "$OWNER")
    export KFIN_BENCH_TOKEN
    call=$(curl -sf -X POST -H "Authorization: Bearer $KFIN_BENCH_TOKEN" -H 'Content-Type: application/json' \
      -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: finance_payables_list' \
      --data "$(sed -n "s/^wrk.body = '\(.*\)'\$/\1/p;s/^  \.\. '\(.*\)'\$/\1/p" benches/tools_call.lua | tr -d '\n')" "$BASE/")
    grep -q '"isError":true' <<<"$call" && { echo "  tools/call answered an error: ${call:0:300}" >&2; exit 1; }
    echo "  tools/call answer: $(grep -o 'Bench payable #[0-9]*' <<<"$call" | wc -l) bench rows (of 25), ${#call} bytes"
    for c in 1 8; do run_wrk "tools/call first page" "$c" "$BASE/" benches/tools_call.lua; done
    for c in 1 8; do run_wrk "tools/list (owner)" "$c" "$BASE/" benches/tools_list.lua; done
    echo "  server peak RSS: $(awk '/VmHWM/ {print $2" "$3}' /proc/"$(pgrep -P "$SERVER_PID" || echo "$SERVER_PID")"/status 2>/dev/null || echo '?')"
    stop_server
    drop_pg
    [[ $BACKEND == sqlite ]] && rm -f "$DB_FILE" "$DB_FILE"-wal "$DB_FILE"-shm
  done
done
echo
cat "$RESULTS"

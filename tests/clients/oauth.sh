#!/usr/bin/env bash
# oauth.sh: real MCP clients sign in to a fresh local server through its authorization
# server (SPEC section 6), a headless browser answering the development login and the
# consent page: tests/clients/oauth_clients.py (its docstring lists every check).
#
# Usage: tests/clients/oauth.sh BIN
#   BIN  the kobana-finance-mcp binary (e.g. target/debug/kobana-finance-mcp)
#
# 1. scripts/ensure-tools.sh (the venv with mcp and Selenium, Node 22, the TypeScript
#    SDK, the Inspector); the browser must be there (Debian's chromium and
#    chromium-driver: .ci/run installs them; scripts/test.sh skips this suite loudly
#    when they are missing outside CI);
# 2. a certificate for IP:127.0.0.1 made by openssl (in the scratch directory, never
#    kept): the HTTPS server of the clients' metadata documents presents it, and the
#    server trusts it (and only it) for those documents;
# 3. `BIN serve` as `make run` starts it — on its generated development secret, so the
#    development login is offered — on a free loopback port with a fresh SQLite
#    database, KFIN_OAUTH_DEV_CLIENT_METADATA=1 and KFIN_OAUTH_DEV_CA=<the certificate>;
# 4. oauth_clients.py: the Python mcp provider by DCR and by CIMD, the TypeScript SDK's
#    provider by DCR and by CIMD (oauth_node.mjs), the Inspector CLI by DCR; each signs
#    in, lists the tools, calls one, refreshes its token and calls with the new one;
#    then the same browser opens the server's address (/ and /mcp): the page for people.
# Prints the clients' PASS/FAIL lines and ends with `N passed, N failed`. Exit status 0
# only if nothing failed. Everything listens on 127.0.0.1 only and stops when this
# script exits (the server by the EXIT trap, the rest inside oauth_clients.py).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN_ARG=${1:?usage: tests/clients/oauth.sh BIN}
BIN=$(cd "$(dirname "$BIN_ARG")" && pwd)/$(basename "$BIN_ARG")

# shellcheck source=../support/local-server.sh
source "$HERE/../support/local-server.sh"

need_browser_tools || exit 1
command -v openssl >/dev/null 2>&1 || { echo "error: openssl is not installed (it makes the test certificate)" >&2; exit 1; }

make_temp_workdir kfin-oauth
CERT="$KFIN_WORKDIR/documents-cert.pem"
KEY="$KFIN_WORKDIR/documents-key.pem"
# A leaf certificate (CA:FALSE) for IP:127.0.0.1, valid one day; the server trusts it as
# its own anchor.
if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
  -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" -addext "basicConstraints=critical,CA:FALSE" \
  -keyout "$KEY" -out "$CERT" >"$KFIN_WORKDIR/openssl.log" 2>&1; then
  echo "error: openssl could not make the test certificate:" >&2
  sed 's/^/    /' "$KFIN_WORKDIR/openssl.log" >&2
  exit 1
fi

export KFIN_OAUTH_DEV_CLIENT_METADATA=1 KFIN_OAUTH_DEV_CA="$CERT"
start_dev_login_server "$BIN" "$KFIN_WORKDIR" || exit 1

echo
out=$(NODE22="$NODE22" timeout 600 "$PYTHON" "$HERE/oauth_clients.py" "$KFIN_URL" --cert "$CERT" --key "$KEY" 2>&1)
rc=$?
printf '%s\n' "$out"
passed=$(grep -c '^PASS ' <<<"$out")
failed=$(grep -c '^FAIL ' <<<"$out")
if [[ $rc -ne 0 && $failed -eq 0 ]]; then
  echo "FAIL oauth clients: oauth_clients.py exited $rc without reporting a check"
  failed=1
fi

echo
if [[ $failed -gt 0 ]]; then
  echo "last lines of the server log:"
  tail -n 20 "$KFIN_SERVER_LOG" | sed 's/^/    /'
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]

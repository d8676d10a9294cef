#!/usr/bin/env bash
# run.sh: drive a fresh local server with the official MCP client libraries.
#
# Usage: tests/clients/run.sh BIN
#   BIN  the kobana-finance-mcp binary (e.g. target/debug/kobana-finance-mcp)
#
# Starts `BIN serve` on a free loopback port with a fresh SQLite database (as
# tests/conformance/run.sh does), mints a demo-owner token with `BIN token`, and runs:
#   python_client.py  (PyPI mcp)  --mode auto        on /     (discover -> 2026-07-28)
#   python_client.py  (PyPI mcp)  --mode 2026-07-28  on /mcp  (the alias)
#   python_client.py  (PyPI mcp)  --mode legacy      on /     (initialize -> 2025-06-18)
#   node_client.mjs   (npm sdk)                      on /     (initialize -> 2025-06-18)
#   node_client.mjs   (npm sdk)                      on /mcp
# Every client lists the tools and calls read tools; the two 2026-07-28 Python runs also
# settle a payable of their own through the library's confirmation driver (form
# elicitation answered by the client's callback) and check it changed exactly once, and
# the legacy run checks that a destructive tool is refused there.
# Each client prints one `PASS ...` / `FAIL ...` line per check; this script counts them
# and ends with `N passed, N failed`. Exit status 0 only if nothing failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN_ARG=${1:?usage: tests/clients/run.sh BIN}
BIN=$(cd "$(dirname "$BIN_ARG")" && pwd)/$(basename "$BIN_ARG")

# shellcheck source=../support/local-server.sh
source "$HERE/../support/local-server.sh"

"$REPO_ROOT/scripts/ensure-tools.sh" || exit 1
PYTHON="$TOOLS_DIR/venv/bin/python"

make_temp_workdir kfin-clients
start_local_server "$BIN" "$KFIN_WORKDIR" || exit 1
export KFIN_TOKEN

passed=0
failed=0

# run_client NAME CMD...: run one client, echo its lines, count its checks. A client
# that exits non-zero without a FAIL line (a crash) counts as one failure.
run_client() {
  local name=$1
  shift
  echo
  echo "=== $name"
  local out rc
  out=$(timeout 120 "$@" 2>&1)
  rc=$?
  printf '%s\n' "$out"
  local p f
  p=$(grep -c '^PASS ' <<<"$out")
  f=$(grep -c '^FAIL ' <<<"$out")
  if [[ $rc -ne 0 && $f -eq 0 ]]; then
    echo "FAIL $name: exited $rc without reporting a check"
    f=1
  fi
  passed=$((passed + p))
  failed=$((failed + f))
}

run_client "python mcp, auto (discover)" "$PYTHON" "$HERE/python_client.py" "$KFIN_URL/" --mode auto
run_client "python mcp, 2026-07-28 on /mcp" "$PYTHON" "$HERE/python_client.py" "$KFIN_URL/mcp" --mode 2026-07-28
run_client "python mcp, legacy (initialize)" "$PYTHON" "$HERE/python_client.py" "$KFIN_URL/" --mode legacy
run_client "node sdk, initialize" "$NODE22" "$HERE/node_client.mjs" "$KFIN_URL/"
run_client "node sdk, initialize on /mcp" "$NODE22" "$HERE/node_client.mjs" "$KFIN_URL/mcp"

echo
if [[ $failed -gt 0 ]]; then
  echo "last lines of the server log:"
  tail -n 20 "$KFIN_SERVER_LOG" | sed 's/^/    /'
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]

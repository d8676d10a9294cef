#!/usr/bin/env bash
# bench-compare.sh BEFORE AFTER: the cold-start figures of make bench for two release
# binaries in one run, paired (run i of one, then run i of the other, the order
# alternating: benches/paired_cold.py), so the machine's drift falls on both alike;
# loopback only, everything it starts stops by itself.
#   * the stripped binaries' sizes;
#   * serve: exec -> first answered tools/list on a seeded SQLite database
#     (benches/cold_start.py), with the resident set after that answer and its peak;
#   * Lambda mode: init and first invocation under the Runtime API stand-in
#     (benches/lambda_cold.py), keys from KFIN_JWT_SECRET;
#   * Lambda mode with the signing keys from Secrets Manager (moto_server on loopback,
#     as scripts/ensure-tools.sh installs it): the cold start that fetches the keys
#     before its first GET next, the AWS code's path in production.
# Knobs: BENCH_COLD_RUNS (pairs, 60). Needs python3 and, for the
# Secrets Manager part, target/tools/venv (moto and boto3); without it that part is skipped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BEFORE=${1:?usage: bench-compare.sh BEFORE_BIN AFTER_BIN}
AFTER=${2:?usage: bench-compare.sh BEFORE_BIN AFTER_BIN}
RUNS=${BENCH_COLD_RUNS:-60}
WORK=$(mktemp -d /tmp/kfin-compare.XXXXXX)
MOTO_PID=""
cleanup() {
  [[ -n $MOTO_PID ]] && kill "$MOTO_PID" 2>/dev/null && wait "$MOTO_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

SECRET=bench-secret-not-for-production
USER_ID=0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01
for side in before after; do
  bin=$([[ $side == before ]] && echo "$BEFORE" || echo "$AFTER")
  echo "$side: $(stat -c %s "$bin") bytes ($(numfmt --to=iec "$(stat -c %s "$bin")")), $(file -b "$bin" | grep -o 'not stripped\|stripped')"
  # Each binary's own database: its migrations, its seed.
  KFIN_JWT_SECRET=$SECRET "$bin" seed --database-url "sqlite:$WORK/$side.db" >/dev/null
done

VENV=target/tools/venv
if [[ -x $VENV/bin/moto_server ]]; then
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$VENV/bin/moto_server" -H 127.0.0.1 -p "$PORT" >/dev/null 2>&1 &
  MOTO_PID=$!
  export AWS_ENDPOINT_URL=http://127.0.0.1:$PORT AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=testing \
    AWS_SECRET_ACCESS_KEY=testing AWS_EC2_METADATA_DISABLED=true
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
  "$VENV/bin/python" - <<'EOF'
import boto3, json, os
boto3.client("secretsmanager", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1").create_secret(
    Name="kobana-finance/bench-keys", SecretString=json.dumps({"jwt_keys": ["kobana-finance-replay-fixtures"]}))
EOF
else
  echo "no moto_server in $VENV (scripts/ensure-tools.sh): the Secrets Manager cold start is skipped" >&2
fi

export KFIN_PUBLIC_URL=http://127.0.0.1:8080
TOKEN=$(KFIN_JWT_SECRET=$SECRET "$AFTER" token --user "$USER_ID")
B="$BEFORE sqlite:$WORK/before.db"
A="$AFTER sqlite:$WORK/after.db"
# shellcheck disable=SC2086 # B and A are a binary and its database, two words each
echo "serve: $(KFIN_JWT_SECRET=$SECRET python3 benches/paired_cold.py serve $B $A "$TOKEN" "$RUNS")"
unset KFIN_PUBLIC_URL
# shellcheck disable=SC2086
echo "lambda: $(python3 benches/paired_cold.py lambda $B $A events/v2/tools-list.json "$RUNS")"
if [[ -n $MOTO_PID ]]; then
  # shellcheck disable=SC2086
  echo "lambda, keys from Secrets Manager: $(BENCH_SECRET_ID=kobana-finance/bench-keys \
    python3 benches/paired_cold.py lambda $B $A events/v2/tools-list.json "$RUNS")"
fi

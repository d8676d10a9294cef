#!/usr/bin/env bash
# fetch-db-ca.sh: writes certs/db-ca-bundle.pem, the CA bundle the deployed function
# checks the database's certificate against (sslmode=verify-full). Run it before
# `sam build`; template.yaml ships certs/ as a layer (/opt/db-ca-bundle.pem).
#
# Where the certificates come from (both published by AWS over HTTPS):
#   * Amazon RDS's global bundle — the certificate authorities of every region's RDS and
#     Aurora instances (RDS user guide: "Using SSL/TLS to encrypt a connection to a DB
#     instance or cluster"):
#       https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem
#     A single region's bundle is https://truststore.pki.rds.amazonaws.com/REGION/REGION-bundle.pem
#     (set RDS_CA_URL to use it).
#   * Amazon Trust Services' root CAs, which sign RDS Proxy endpoints' certificates
#     (ACM): https://www.amazontrust.com/repository/AmazonRootCA{1,2,3,4}.pem
# The script refuses anything that is not a list of PEM certificates, and prints the
# number of certificates and the bundle's SHA-256 so the deploy log records what shipped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RDS_CA_URL=${RDS_CA_URL:-https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem}
OUT=certs/db-ca-bundle.pem
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
fetch() { curl --fail --silent --show-error --location --proto '=https' --tlsv1.2 --max-time 60 "$1" | tr -d '\r'; echo; }
fetch "$RDS_CA_URL" >"$tmp"
for n in 1 2 3 4; do
  fetch "https://www.amazontrust.com/repository/AmazonRootCA$n.pem" >>"$tmp"
done
count=$(grep -c -- '-----BEGIN CERTIFICATE-----' "$tmp" || true)
if [[ $count -lt 5 ]] || grep -v -e '^-----\(BEGIN\|END\) CERTIFICATE-----$' -e '^[A-Za-z0-9+/=]*$' "$tmp" | grep -q .; then
  echo "error: what was downloaded is not a PEM certificate bundle ($count certificates)" >&2
  exit 1
fi
if command -v openssl >/dev/null 2>&1; then
  openssl crl2pkcs7 -nocrl -certfile "$tmp" | openssl pkcs7 -print_certs -noout >/dev/null
fi
mkdir -p certs
mv "$tmp" "$OUT"
trap - EXIT
echo "$OUT: $count certificates, sha256 $(sha256sum "$OUT" | cut -d' ' -f1)"

#!/usr/bin/env bash
# fuzz-seeds.sh: (re)makes the seed corpora in fuzz/corpus/ (committed; small files).
#
#   request_pipeline  every row of the protocol matrix (tests/it/protocol_matrix.rs writes
#                     them with KFIN_FUZZ_SEEDS), plus /v1 requests of every kind
#   mcp_name          the Mcp-Name values of the matrix and edge cases of the base64 form
#   money             amounts at and beyond the format's edges
#   cursor            list queries (filters, sorts, limits, cursors); NUL-separated
#                     fields: query, sort choice, cursor value, cursor id
#   request_state     NUL-separated state fields (user, workspace, tool, digest, nonce,
#                     expiry) and a few raw tokens
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
C=fuzz/corpus
rm -rf "$C" && mkdir -p "$C"/{request_pipeline,mcp_name,money,cursor,request_state}

KFIN_TEST_DATABASE=sqlite KFIN_FUZZ_SEEDS="$PWD/$C/request_pipeline" cargo nextest run --test it -E 'test(/^protocol_matrix::/)' >/dev/null 2>&1 \
  || { echo "the protocol matrix failed: run cargo nextest run --test it -E 'test(/^protocol_matrix::/)'" >&2; exit 1; }

seed() { local target=$1 name=$2; shift 2; printf "$@" >"$C/$target/$name"; }
# /v1 requests: reads, filters, a create, an action, a patch, a delete, refusals.
seed request_pipeline rest-list 'GET /v1/payables?status[in]=pending,paid&due_date[gte]=2026-01-01&sort=-due_date&limit=5\nauthorization: Bearer $API_TOKEN\n\n'
seed request_pipeline rest-aggregates 'GET /v1/receivables/aggregates?company_id=c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11\nauthorization: Bearer $API_TOKEN\n\n'
seed request_pipeline rest-get 'GET /v1/payables/b1110000-0001-4000-8000-000000000001\nauthorization: Bearer $API_TOKEN\n\n'
seed request_pipeline rest-create 'POST /v1/payables\nauthorization: Bearer $API_TOKEN\ncontent-type: application/json\nx-idempotency-key: seed-1\n\n{"company_id":"c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11","description":"Seed","amount":"10.50","due_date":"2026-12-20","person_name":"Fornecedor","installments":2}'
seed request_pipeline rest-settle 'POST /v1/payables/b1110000-0001-4000-8000-000000000004/settle\nauthorization: Bearer $API_TOKEN\ncontent-type: application/json\n\n{"payment_date":"2026-11-21","financial_account_id":"a1b2c3d4-0001-4000-8000-000000000001","interest_amount":"1.00"}'
seed request_pipeline rest-transfer 'POST /v1/transfers\nauthorization: Bearer $API_TOKEN\ncontent-type: application/json\n\n{"from_account_id":"a1b2c3d4-0001-4000-8000-000000000001","to_account_id":"a1b2c3d4-0001-4000-8000-000000000002","amount":"1.00","occurred_at":"2026-11-30","description":"Seed"}'
seed request_pipeline rest-patch 'PATCH /v1/people/9e000000-0001-4000-8000-000000000004\nauthorization: Bearer $API_TOKEN\ncontent-type: application/json\n\n{"notes":null,"emails":["a@b.com"]}'
seed request_pipeline rest-delete 'DELETE /v1/taxes/7a000000-0001-4000-8000-000000000003\nauthorization: Bearer $API_TOKEN\n\n'
seed request_pipeline rest-cursor 'GET /v1/financial-transactions?limit=1&cursor=eyJzIjoib2NjdXJyZWRfYXQiLCJkIjp0cnVlfQ.AAAA\nauthorization: Bearer $API_TOKEN\n\n'
seed request_pipeline rest-bad-json 'POST /v1/companies\nauthorization: Bearer $API_TOKEN\ncontent-type: application/json\n\n{"name":'
seed request_pipeline rest-link 'POST /v1/attachments/a7000000-0001-4000-8000-000000000001/links\nauthorization: Bearer $API_TOKEN\ncontent-type: application/json\n\n{"type":"receivable","id":"b1110000-0001-4000-8000-000000000005"}'
seed request_pipeline rest-upload 'POST /v1/attachments\nauthorization: Bearer $API_TOKEN\ncontent-type: multipart/form-data; boundary=XyZ\n\n--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\na,b\r\n1,2\r\n--XyZ--\r\n'
seed request_pipeline well-known 'GET /.well-known/oauth-protected-resource/mcp\n\n'
seed request_pipeline tool-list-filters 'POST /mcp\nauthorization: Bearer $MCP_TOKEN\nmcp-protocol-version: 2025-06-18\ncontent-type: application/json\n\n{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"finance_companies_list","arguments":{"filters":{"active":true},"limit":2,"fields":["name"]}}}'

for v in 'finance_workspaces_list' '=?base64?ZmluYW5jZV93b3Jrc3BhY2VzX2xpc3Q=?=' '=?base64?ZmluYW5jZV93b3Jrc3BhY2VzX2xpc3Q?=' \
         '=?base64?Zm!uYW5jZV93b3Jrc3BhY2VzX2xpc3Q=?=' '=?BASE64?ZmluYW5jZQ==?=' '=?base64??=' '=?base64?/w==?=' '=?base64?SGVsbG8sIOS4lueVjA==?=' \
         '  finance_payables_list	' '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='; do
  printf '%s' "$v" >"$C/mcp_name/$(printf '%s' "$v" | sha1sum | cut -c1-12)"
done
for v in 1500.00 0.5 0.05 -10.10 9999999999999.99 10000000000000.00 -0.00 00001.10 1. .5 1.234 1e3 1,00 ' 1.00' +1.00 0x1.00 -; do
  printf '%s' "$v" >"$C/money/$(printf '%s' "$v" | sha1sum | cut -c1-12)"
done
seed cursor filters 'type[in]=debit,credit&amount[gte]=10.50&occurred_at[lt]=2026-12-01&sort=-amount&limit=100\000\001\0001050\000id-1'
seed cursor pending 'is_pending=true&financial_account_id=a1b2c3d4-0001-4000-8000-000000000001\000\000\0002026-11-02\0007e000000-0001-4000-8000-000000000003'
seed cursor bad 'cursor=garbage&limit=0&sort=-nope\000\003\001\000'
seed request_state plain 'user-1\000workspace-1\000finance_payables_settle\000digest\000nonce\0001767225600'
seed request_state unicode 'usuário\000w\000t\000\000\000-1'
seed request_state token 'eyJ1IjoidSJ9.AAAA'
echo "seed corpora in $C: $(find "$C" -type f | wc -l) files"

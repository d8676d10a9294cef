-- wrk script: a 2026-07-28 tools/call of finance_reconciliations_suggest on the first
-- 37 days of the bench's transactions (about 10,000 unreconciled rows; the call looks
-- at the oldest 200) against its 100,000 pending payables, with a bearer token from
-- $KFIN_BENCH_TOKEN.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("KFIN_BENCH_TOKEN")
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "finance_reconciliations_suggest"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"finance_reconciliations_suggest","arguments":'
  .. '{"account_id":"a1b2c3d4-0001-4000-8000-000000000001","from":"2026-01-01","to":"2026-02-06","limit":200},'
  .. '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'

done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.0f p50_ms=%.3f p99_ms=%.3f requests=%d errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, summary.requests,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
end

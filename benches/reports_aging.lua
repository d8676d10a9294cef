-- wrk script: a 2026-07-28 tools/call of finance_reports_aging over the bench's 100,000
-- pending payables (every one of them counted, grouped by person), with a bearer token
-- from $KFIN_BENCH_TOKEN.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("KFIN_BENCH_TOKEN")
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "finance_reports_aging"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"finance_reports_aging","arguments":'
  .. '{"kind":"payable","as_of":"2026-07-01","group_by":"person"},'
  .. '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'

done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.0f p50_ms=%.3f p99_ms=%.3f requests=%d errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, summary.requests,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
end

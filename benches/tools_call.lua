-- wrk script: a 2026-07-28 tools/call of finance_payables_list (limit 25, fields
-- projection) with a bearer token from $KFIN_BENCH_TOKEN, or, when $KFIN_BENCH_TOKENS
-- holds several (space-separated), each request the next of them: as many users.
-- scripts/bench-lists.sh checks one answer with curl first (not an isError result).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("KFIN_BENCH_TOKEN")
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "finance_payables_list"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"finance_payables_list","arguments":'
  .. '{"limit":25,"fields":["id","description","amount","due_date","status","person_name"]},'
  .. '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'

local tokens = {}
for token in string.gmatch(os.getenv("KFIN_BENCH_TOKENS") or "", "%S+") do
  tokens[#tokens + 1] = token
end
if #tokens > 0 then
  local next_token = 0
  request = function()
    next_token = next_token % #tokens + 1
    wrk.headers["Authorization"] = "Bearer " .. tokens[next_token]
    return wrk.format()
  end
end

done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.0f p50_ms=%.3f p99_ms=%.3f requests=%d errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, summary.requests,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
end

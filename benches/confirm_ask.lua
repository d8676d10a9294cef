-- wrk script: the question of a confirmed tool — a 2026-07-28 tools/call of
-- finance_payables_send_to_bank on the demo's service charge (a TED from the connected
-- checking account) by a client that declares form elicitation, answered
-- input_required with the question and its requestState. Building the question reads
-- what the payment depends on (the payable, its coordinates, its dispatches, the source
-- account) and binds it; the yes builds it once more, in the payment's transaction, so
-- this is also what a confirmation adds to the operation it runs.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("KFIN_BENCH_TOKEN")
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "finance_payables_send_to_bank"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"finance_payables_send_to_bank","arguments":'
  .. '{"id":"b1110000-0001-4000-8000-000000000008"},'
  .. '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}'

done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.0f p50_ms=%.3f p99_ms=%.3f requests=%d errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, summary.requests,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
end

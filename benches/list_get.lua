-- wrk script: GET of the URL given on the command line (e.g. /v1/payables?limit=25) with
-- the API bearer token from $KFIN_BENCH_TOKEN. Used by scripts/bench-lists.sh.
wrk.method = "GET"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("KFIN_BENCH_TOKEN")

done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.0f p50_ms=%.3f p99_ms=%.3f requests=%d errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, summary.requests,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
end

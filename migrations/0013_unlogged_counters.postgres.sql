-- Rate-limit counters are not written to the WAL: every request, reads included,
-- updates one, and a durable write would make each request wait for a WAL flush.
-- After a crash PostgreSQL empties an unlogged table (a failover to a replica finds it
-- empty too): every caller's count starts again at zero, which can let a caller spend
-- up to one more window's budget and never refuses a good request. Revocations stay in
-- revoked_tokens, which is logged.
ALTER TABLE rate_limit_counters SET UNLOGGED;

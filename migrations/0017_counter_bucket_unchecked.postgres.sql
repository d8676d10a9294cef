-- The counters' bucket loses its CHECK on PostgreSQL. Every request's statement writes
-- one counter row, and PostgreSQL turns a table's CHECK expressions from their stored
-- text into a plan again for each statement that writes the table (about 10 µs of the
-- database's CPU per request, measured). One statement writes these rows, its bucket
-- taken from the code's two budgets ('read', 'write'); the counters are disposable (an
-- unlogged table, emptied by a crash). SQLite keeps its CHECK: it is compiled into the
-- prepared statement there and costs nothing per request.
ALTER TABLE rate_limit_counters DROP CONSTRAINT rate_limit_counters_bucket_check;

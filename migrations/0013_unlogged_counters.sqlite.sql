-- SQLite has no unlogged tables; its counters stay as they are (one file, one writer).
SELECT 1;

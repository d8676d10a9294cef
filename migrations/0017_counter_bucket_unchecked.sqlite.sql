-- SQLite keeps the counters' CHECK on their bucket (see the PostgreSQL migration).
SELECT 1;

-- Bulk payables for the list benchmark (SQLite), run by scripts/bench-lists.sh, which
-- prepends `CREATE TEMP TABLE bench_params AS SELECT <N> AS n;` and pipes it into the
-- sqlite3 CLI. Same rows as payables_seed_pg.sql: demo workspace Acme / company Acme
-- Comércio, every NOT NULL and CHECK column filled, due dates spread over six years.
.bail on
PRAGMA journal_mode = WAL;
PRAGMA synchronous = OFF;
PRAGMA cache_size = -262144;
BEGIN;
INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date,
                      billing_type, status, person_id, category_id, created_at, updated_at, created_via, updated_via,
                      created_by, updated_by)
WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < (SELECT n FROM bench_params))
SELECT printf('b0000000-0000-4000-8000-%012x', i),
       '2b93f876-769a-4bdc-b23e-304957f313b4',
       'c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11',
       'payable',
       'Bench payable #' || i,
       1000 + (i * 37) % 100000,
       date('2023-01-01', '+' || ((i * 7919) % 2191) || ' days'),
       date('2023-01-01', '+' || ((i * 7919) % 2191) || ' days'),
       'normal',
       'pending',
       CASE WHEN i % 2 = 0 THEN '9e000000-0001-4000-8000-000000000001' ELSE '9e000000-0001-4000-8000-000000000002' END,
       CASE WHEN i % 2 = 0 THEN 'ca7e0000-0001-4000-8000-000000000004' ELSE 'ca7e0000-0001-4000-8000-000000000005' END,
       '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'system', 'system',
       '0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01', '0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01'
  FROM seq;
COMMIT;
-- No ANALYZE: the server never runs it, so the planner sees what production sees.

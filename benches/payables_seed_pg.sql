-- Bulk payables for the list benchmark (PostgreSQL), run by scripts/bench-lists.sh:
--   psql -v n=1000000 -f benches/payables_seed_pg.sql <bench database>
-- Demo workspace Acme / company Acme Comércio (created by `kobana-finance-mcp seed`).
-- Every NOT NULL and CHECK column of `billings` is filled; due dates spread over six
-- years (2023-01-01 + 0..2190 days, scattered), ids valid UUID strings.
\set ON_ERROR_STOP on
INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date,
                      billing_type, status, person_id, category_id, created_at, updated_at, created_via, updated_via,
                      created_by, updated_by)
SELECT 'b0000000-0000-4000-8000-' || lpad(to_hex(i), 12, '0'),
       '2b93f876-769a-4bdc-b23e-304957f313b4',
       'c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11',
       'payable',
       'Bench payable #' || i,
       1000 + (i * 37) % 100000,
       to_char(date '2023-01-01' + ((i * 7919) % 2191)::int, 'YYYY-MM-DD'),
       to_char(date '2023-01-01' + ((i * 7919) % 2191)::int, 'YYYY-MM-DD'),
       'normal',
       'pending',
       CASE WHEN i % 2 = 0 THEN '9e000000-0001-4000-8000-000000000001' ELSE '9e000000-0001-4000-8000-000000000002' END,
       CASE WHEN i % 2 = 0 THEN 'ca7e0000-0001-4000-8000-000000000004' ELSE 'ca7e0000-0001-4000-8000-000000000005' END,
       '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'system', 'system',
       '0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01', '0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01'
  FROM generate_series(1::bigint, :n) AS i;
ANALYZE;

-- Bulk posted transactions for the cash-flow and suggestion benchmarks (PostgreSQL),
-- run by benches/bench.py after the payables (psql -v n=<N>): the same rows as
-- transactions_seed_sqlite.sql.
\set ON_ERROR_STOP on
INSERT INTO financial_transactions (id, workspace_id, company_id, financial_account_id, description, amount_cents,
                                    occurred_at, transaction_type, is_pending, created_at, updated_at, created_via, updated_via)
SELECT '7e000000-0000-4000-8000-' || lpad(to_hex(i), 12, '0'),
       '2b93f876-769a-4bdc-b23e-304957f313b4',
       'c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11',
       'a1b2c3d4-0001-4000-8000-000000000001',
       'Bench movement #' || i,
       1000 + (i * 37) % 100000,
       to_char(date '2026-01-01' + ((i * 365) / :n)::int, 'YYYY-MM-DD'),
       CASE WHEN i % 2 = 0 THEN 'debit' ELSE 'credit' END,
       0,
       '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'system', 'system'
  FROM generate_series(1::bigint, :n) AS i;
ANALYZE;

-- Bulk posted transactions for the cash-flow and suggestion benchmarks (SQLite), run
-- by benches/bench.py after the payables: BENCH_TRANSACTIONS (100,000) rows in Acme's
-- checking account over 2026 (one every ~5 minutes of the year), debits and credits
-- alternating, amounts from the payables' formula so that suggestions find matches.
-- The caller prepends `CREATE TEMP TABLE bench_tx AS SELECT <N> AS n;`.
.bail on
PRAGMA synchronous = OFF;
BEGIN;
INSERT INTO financial_transactions (id, workspace_id, company_id, financial_account_id, description, amount_cents,
                                    occurred_at, transaction_type, is_pending, created_at, updated_at, created_via, updated_via)
WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < (SELECT n FROM bench_tx))
SELECT printf('7e000000-0000-4000-8000-%012x', i),
       '2b93f876-769a-4bdc-b23e-304957f313b4',
       'c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11',
       'a1b2c3d4-0001-4000-8000-000000000001',
       'Bench movement #' || i,
       1000 + (i * 37) % 100000,
       date('2026-01-01', '+' || ((i * 365) / (SELECT n FROM bench_tx)) || ' days'),
       CASE WHEN i % 2 = 0 THEN 'debit' ELSE 'credit' END,
       0,
       '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'system', 'system'
  FROM seq;
COMMIT;

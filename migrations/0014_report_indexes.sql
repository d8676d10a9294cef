-- Covering indexes for the reports, so that each reads an index alone, never the rows:
-- * the pending bills by due date (the cash flow's index) also hold the person, for the
--   aging by person;
-- * the bills by competence date, for the income statement on the competence basis;
-- * the ledger by competence date (a movement without one counts on its date), for the
--   same statement, and the ledger by date also holds the category and the company,
--   for the statement on the cash basis.
DROP INDEX billings_flow;
CREATE INDEX billings_flow
    ON billings (workspace_id, status, due_date, kind, amount_cents, company_id, payment_approval, person_id);
CREATE INDEX billings_competence
    ON billings (workspace_id, competence_date, status, kind, category_id, amount_cents, company_id, payment_approval);
DROP INDEX financial_transactions_flow;
CREATE INDEX financial_transactions_flow
    ON financial_transactions (workspace_id, occurred_at, financial_account_id, is_pending, transaction_type, amount_cents,
                               transfer_id, category_id, company_id);
CREATE INDEX financial_transactions_competence
    ON financial_transactions (workspace_id, (COALESCE(competence_date, occurred_at)), is_pending, transaction_type,
                               category_id, amount_cents, transfer_id, billing_id, company_id);

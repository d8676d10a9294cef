-- Covering indexes for the cash flow (and any report summing the ledger or the pending
-- bills by date): each statement reads the index alone, never the rows.
CREATE INDEX financial_transactions_flow
    ON financial_transactions (workspace_id, occurred_at, financial_account_id, is_pending, transaction_type, amount_cents, transfer_id);
CREATE INDEX billings_flow ON billings (workspace_id, status, due_date, kind, amount_cents, company_id);

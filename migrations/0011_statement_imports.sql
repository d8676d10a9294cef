-- Bank statement imports: a transaction read from a statement keeps the statement's own
-- id of the movement (OFX FITID, or a key derived from a CSV row), unique per account,
-- so importing the same file again creates nothing.
ALTER TABLE financial_transactions ADD COLUMN statement_fitid TEXT;
CREATE UNIQUE INDEX financial_transactions_statement_fitid
    ON financial_transactions (workspace_id, financial_account_id, statement_fitid);

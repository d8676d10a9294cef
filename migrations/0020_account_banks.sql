-- An account names its bank by id (`bank_id`, a row of the bank list) instead of a COMPE
-- code of its own: the code and the name are the list's, read with the account. The codes
-- accounts had become their bank's id; a code the list does not know leaves the account
-- without a bank.
ALTER TABLE financial_accounts ADD COLUMN bank_id TEXT REFERENCES banks (id);
UPDATE financial_accounts
   SET bank_id = (SELECT banks.id FROM banks WHERE banks.code = financial_accounts.bank_code AND banks.listed = 1)
 WHERE bank_code IS NOT NULL;
ALTER TABLE financial_accounts DROP COLUMN bank_code;
CREATE INDEX financial_accounts_by_bank ON financial_accounts (workspace_id, bank_id);

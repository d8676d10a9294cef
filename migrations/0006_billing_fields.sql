-- Fields of the real finance API's payables and receivables: whether a bill is relevant
-- to income tax (IR), unset by default.
ALTER TABLE billings ADD COLUMN ir_relevant INTEGER CHECK (ir_relevant IN (0, 1));
-- A payable's operation: a payment (a bill, a tax) or a transfer to the payee's account.
ALTER TABLE billings ADD COLUMN operation_kind TEXT CHECK (operation_kind IN ('payment', 'transfer'));

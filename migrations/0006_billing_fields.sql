-- Fields of the real finance API's payables and receivables: whether a bill is relevant
-- to income tax (IR), unset by default.
ALTER TABLE billings ADD COLUMN ir_relevant INTEGER CHECK (ir_relevant IN (0, 1));

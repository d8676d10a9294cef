-- A payable's dispatch may also be a TED to a bank account (`ted`, `POST
-- /v2/transfer/ted`) or a tax guide paid by its data (`tax`, `POST /v2/payment/taxes`):
-- the kinds a dispatch is kept with are widened to them.
ALTER TABLE payment_dispatches DROP CONSTRAINT payment_dispatches_payment_kind_check;
ALTER TABLE payment_dispatches ADD CONSTRAINT payment_dispatches_payment_kind_check
    CHECK (payment_kind IN ('bank_billet', 'utility', 'pix', 'pix_transfer', 'ted', 'tax'));

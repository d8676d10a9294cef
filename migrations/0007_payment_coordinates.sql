-- A payable's payment coordinates: what the bank needs to pay it (a boleto's barcode, a
-- Pix code or key, a transfer's bank and account, a tax slip's kind and data), to whom
-- and when. One row per payable that has any; the payable's record reads it.
CREATE TABLE payment_coordinates (
    billing_id           TEXT PRIMARY KEY REFERENCES billings (id),
    workspace_id         TEXT NOT NULL REFERENCES workspaces (id),
    barcode              TEXT,
    pix_copia_e_cola     TEXT,
    pix_key              TEXT,
    pix_key_type         TEXT CHECK (pix_key_type IN ('cpf', 'cnpj', 'email', 'phone', 'random')),
    bank_code            TEXT,
    bank_ispb            TEXT,
    agency               TEXT,
    agency_digit         TEXT,
    account_number       TEXT,
    account_digit        TEXT,
    transfer_purpose     TEXT,
    tax_kind             TEXT CHECK (tax_kind IN ('itbi', 'icms', 'iss', 'iptu', 'fgts', 'dare', 'darf', 'gru', 'gps')),
    tax_data             TEXT,
    beneficiary_name     TEXT,
    beneficiary_document TEXT,
    scheduled_to         TEXT,
    CHECK ((pix_key IS NULL) = (pix_key_type IS NULL)),
    CHECK (tax_data IS NULL OR tax_kind IS NOT NULL)
);

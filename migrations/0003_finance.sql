-- The finance records. Portable SQL (SQLite and PostgreSQL): ids are UUID strings,
-- money is integer cents (BIGINT), percentages are basis points (INTEGER, 10000 = 100 %),
-- dates are 'YYYY-MM-DD' strings, timestamps RFC 3339 UTC strings, flags 0/1 INTEGERs.
-- Every row carries its workspace_id; every write records created_via/updated_via
-- ('api', 'mcp', 'system') and created_by/updated_by (the user id).

-- Plano de contas: a tree of at most three levels; children share their parent's type.
CREATE TABLE categories (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    company_id    TEXT NOT NULL REFERENCES companies (id),
    name          TEXT NOT NULL,
    parent_id     TEXT REFERENCES categories (id),
    level         INTEGER NOT NULL CHECK (level BETWEEN 1 AND 3),
    category_type TEXT NOT NULL CHECK (category_type IN ('debit', 'credit')),
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    created_via   TEXT NOT NULL CHECK (created_via IN ('api', 'mcp', 'system')),
    updated_via   TEXT NOT NULL CHECK (updated_via IN ('api', 'mcp', 'system')),
    created_by    TEXT,
    updated_by    TEXT
);
CREATE INDEX categories_by_company ON categories (workspace_id, company_id, name, id);
CREATE INDEX categories_by_parent ON categories (parent_id);

-- Cost/revenue centers (rateio targets).
CREATE TABLE classification_centers (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    company_id   TEXT NOT NULL REFERENCES companies (id),
    name         TEXT NOT NULL,
    center_type  TEXT NOT NULL CHECK (center_type IN ('cost', 'revenue', 'both')),
    description  TEXT,
    active       INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    created_via  TEXT NOT NULL CHECK (created_via IN ('api', 'mcp', 'system')),
    updated_via  TEXT NOT NULL CHECK (updated_via IN ('api', 'mcp', 'system')),
    created_by   TEXT,
    updated_by   TEXT
);
CREATE INDEX classification_centers_by_company ON classification_centers (workspace_id, company_id, name, id);

-- Vendors and customers. Soft-deleted; one live document per company.
CREATE TABLE people (
    id              TEXT PRIMARY KEY,
    workspace_id    TEXT NOT NULL REFERENCES workspaces (id),
    company_id      TEXT NOT NULL REFERENCES companies (id),
    name            TEXT NOT NULL,
    legal_name      TEXT,
    nickname        TEXT,
    kind            TEXT CHECK (kind IN ('natural', 'juridical')),
    document_type   TEXT CHECK (document_type IN ('cpf', 'cnpj')),
    document_number TEXT,
    is_customer     INTEGER NOT NULL DEFAULT 0 CHECK (is_customer IN (0, 1)),
    is_supplier     INTEGER NOT NULL DEFAULT 0 CHECK (is_supplier IN (0, 1)),
    active          INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    emails          TEXT,
    phones          TEXT,
    notes           TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    created_via     TEXT NOT NULL CHECK (created_via IN ('api', 'mcp', 'system')),
    updated_via     TEXT NOT NULL CHECK (updated_via IN ('api', 'mcp', 'system')),
    created_by      TEXT,
    updated_by      TEXT,
    deleted_at      TEXT
);
CREATE UNIQUE INDEX people_live_document ON people (workspace_id, company_id, document_number)
    WHERE document_number IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX people_by_company ON people (workspace_id, company_id, name, id);

-- Withholding taxes catalogue (workspace-scoped).
CREATE TABLE taxes (
    id                  TEXT PRIMARY KEY,
    workspace_id        TEXT NOT NULL REFERENCES workspaces (id),
    name                TEXT NOT NULL,
    default_rate_bp     INTEGER CHECK (default_rate_bp BETWEEN 0 AND 10000),
    default_withholding INTEGER NOT NULL DEFAULT 1 CHECK (default_withholding IN (0, 1)),
    active              INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    created_via         TEXT NOT NULL CHECK (created_via IN ('api', 'mcp', 'system')),
    updated_via         TEXT NOT NULL CHECK (updated_via IN ('api', 'mcp', 'system')),
    created_by          TEXT,
    updated_by          TEXT,
    UNIQUE (workspace_id, name)
);

-- Bank, cash, investment and credit accounts. The balance is computed from realised
-- transactions plus the opening balance, never stored.
CREATE TABLE financial_accounts (
    id                    TEXT PRIMARY KEY,
    workspace_id          TEXT NOT NULL REFERENCES workspaces (id),
    company_id            TEXT NOT NULL REFERENCES companies (id),
    name                  TEXT NOT NULL,
    account_type          TEXT NOT NULL CHECK (account_type IN ('checking', 'savings', 'cash', 'investment', 'credit')),
    bank_code             TEXT,
    agency                TEXT,
    agency_digit          TEXT,
    account_number        TEXT,
    account_digit         TEXT,
    active                INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    disable_reconcile     INTEGER NOT NULL DEFAULT 0 CHECK (disable_reconcile IN (0, 1)),
    opening_balance_cents BIGINT NOT NULL DEFAULT 0,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL,
    created_via           TEXT NOT NULL CHECK (created_via IN ('api', 'mcp', 'system')),
    updated_via           TEXT NOT NULL CHECK (updated_via IN ('api', 'mcp', 'system')),
    created_by            TEXT,
    updated_by            TEXT
);
CREATE INDEX financial_accounts_by_company ON financial_accounts (workspace_id, company_id, name, id);

-- Payables and receivables ("billings"), one table, told apart by kind.
CREATE TABLE billings (
    id                    TEXT PRIMARY KEY,
    workspace_id          TEXT NOT NULL REFERENCES workspaces (id),
    company_id            TEXT NOT NULL REFERENCES companies (id),
    kind                  TEXT NOT NULL CHECK (kind IN ('payable', 'receivable')),
    description           TEXT NOT NULL,
    amount_cents          BIGINT NOT NULL CHECK (amount_cents > 0),
    due_date              TEXT NOT NULL,
    competence_date       TEXT NOT NULL,
    billing_type          TEXT NOT NULL CHECK (billing_type IN ('normal', 'recurring', 'installment')),
    status                TEXT NOT NULL CHECK (status IN ('pending', 'paid', 'received', 'cancelled')),
    person_id             TEXT REFERENCES people (id),
    category_id           TEXT REFERENCES categories (id),
    expected_account_id   TEXT REFERENCES financial_accounts (id),
    financial_account_id  TEXT REFERENCES financial_accounts (id),
    payment_method_kind   TEXT,
    document              TEXT,
    document_number       TEXT,
    document_date         TEXT,
    notes                 TEXT,
    group_id              TEXT,
    installment_number    INTEGER,
    total_installments    INTEGER,
    recurrence_period     TEXT CHECK (recurrence_period IN ('weekly', 'biweekly', 'monthly', 'quarterly', 'yearly')),
    payment_date          TEXT,
    interest_cents        BIGINT,
    discount_cents        BIGINT,
    ticket_cents          BIGINT,
    transaction_id        TEXT,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL,
    created_via           TEXT NOT NULL CHECK (created_via IN ('api', 'mcp', 'system')),
    updated_via           TEXT NOT NULL CHECK (updated_via IN ('api', 'mcp', 'system')),
    created_by            TEXT,
    updated_by            TEXT
);
CREATE INDEX billings_by_due ON billings (workspace_id, kind, due_date, id);
CREATE INDEX billings_by_group ON billings (group_id);

-- The ledger: realised (or pending, forecast) movements of an account.
CREATE TABLE financial_transactions (
    id                   TEXT PRIMARY KEY,
    workspace_id         TEXT NOT NULL REFERENCES workspaces (id),
    company_id           TEXT NOT NULL REFERENCES companies (id),
    financial_account_id TEXT NOT NULL REFERENCES financial_accounts (id),
    description          TEXT NOT NULL,
    bank_description     TEXT,
    document             TEXT,
    document_date        TEXT,
    amount_cents         BIGINT NOT NULL CHECK (amount_cents > 0),
    occurred_at          TEXT NOT NULL,
    competence_date      TEXT,
    transaction_type     TEXT NOT NULL CHECK (transaction_type IN ('debit', 'credit')),
    category_id          TEXT REFERENCES categories (id),
    person_id            TEXT REFERENCES people (id),
    payment_method_kind  TEXT,
    classified           INTEGER NOT NULL DEFAULT 0 CHECK (classified IN (0, 1)),
    is_pending           INTEGER NOT NULL DEFAULT 0 CHECK (is_pending IN (0, 1)),
    notes                TEXT,
    auto_created         INTEGER NOT NULL DEFAULT 0 CHECK (auto_created IN (0, 1)),
    transfer_id          TEXT,
    billing_id           TEXT REFERENCES billings (id),
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL,
    created_via          TEXT NOT NULL CHECK (created_via IN ('api', 'mcp', 'system')),
    updated_via          TEXT NOT NULL CHECK (updated_via IN ('api', 'mcp', 'system')),
    created_by           TEXT,
    updated_by           TEXT
);
CREATE INDEX financial_transactions_by_date ON financial_transactions (workspace_id, occurred_at, id);
CREATE INDEX financial_transactions_by_account ON financial_transactions (financial_account_id);
CREATE INDEX financial_transactions_by_billing ON financial_transactions (billing_id);
CREATE INDEX financial_transactions_by_transfer ON financial_transactions (transfer_id);

-- Apportionment (rateio) of a transaction or a billing across classification centers.
-- Each row has a percentage (basis points), an amount (cents), or both.
CREATE TABLE allocations (
    owner_type               TEXT NOT NULL CHECK (owner_type IN ('transaction', 'billing')),
    owner_id                 TEXT NOT NULL,
    workspace_id             TEXT NOT NULL REFERENCES workspaces (id),
    classification_center_id TEXT NOT NULL REFERENCES classification_centers (id),
    position                 INTEGER NOT NULL,
    percentage_bp            INTEGER CHECK (percentage_bp BETWEEN 0 AND 10000),
    amount_cents             BIGINT CHECK (amount_cents >= 0),
    PRIMARY KEY (owner_type, owner_id, classification_center_id)
);
CREATE INDEX allocations_by_center ON allocations (classification_center_id);

-- Withholding tax charges of a billing (replace-all on write).
CREATE TABLE billing_tax_charges (
    billing_id   TEXT NOT NULL REFERENCES billings (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    tax_id       TEXT NOT NULL REFERENCES taxes (id),
    amount_cents BIGINT NOT NULL CHECK (amount_cents >= 0),
    withholding  INTEGER NOT NULL DEFAULT 1 CHECK (withholding IN (0, 1)),
    PRIMARY KEY (billing_id, tax_id)
);
CREATE INDEX billing_tax_charges_by_tax ON billing_tax_charges (tax_id);

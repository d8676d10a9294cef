-- Companies as the /v1 API serves them: CNPJ, headquarters or branch, active flag,
-- registration, tax regime and address (JSON). One active company per CNPJ in a workspace.
ALTER TABLE companies RENAME COLUMN document TO cnpj;
ALTER TABLE companies ADD COLUMN company_type TEXT NOT NULL DEFAULT 'matriz' CHECK (company_type IN ('matriz', 'filial'));
ALTER TABLE companies ADD COLUMN active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1));
ALTER TABLE companies ADD COLUMN municipal_registration TEXT;
ALTER TABLE companies ADD COLUMN tax_regime TEXT;
ALTER TABLE companies ADD COLUMN address TEXT;
CREATE UNIQUE INDEX companies_active_cnpj ON companies (workspace_id, cnpj) WHERE active = 1 AND deleted_at IS NULL;
CREATE INDEX companies_by_created ON companies (workspace_id, created_at, id);

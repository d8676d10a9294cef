-- The bank list: the participants of the Central Bank's STR, global to every workspace,
-- known by their ISPB (the id is a name-based UUID of it, the same on every deployment).
-- The migration loads the list the binary ships (data/banks/banks.csv) after this SQL;
-- `banks import` refreshes it. A participant that left the list stays, unlisted
-- (`listed` 0), so the accounts that name it keep their bank; a COMPE code is unique
-- among the listed ones only (a code may pass to another participant).
CREATE TABLE banks (
    id          TEXT PRIMARY KEY,
    ispb        TEXT NOT NULL UNIQUE,
    code        TEXT,
    short_name  TEXT NOT NULL,
    name        TEXT NOT NULL,
    listed      INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    updated_at  TEXT NOT NULL
);
CREATE UNIQUE INDEX banks_listed_code ON banks (code) WHERE listed = 1 AND code IS NOT NULL;
CREATE INDEX banks_by_name ON banks (name, id);

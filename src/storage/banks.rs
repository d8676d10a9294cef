//! The bank list (`banks`): the participants of the Central Bank's STR, global to every
//! workspace. Loaded by a migration from the list the binary ships
//! (`data/banks/banks.csv`) and refreshed from the Bank's `ParticipantesSTR.csv` by
//! `kobana-finance-mcp banks import` (or the `{"kfin":"banks-import"}` invocation): an
//! upsert by ISPB in the caller's transaction. A participant that left the list stays,
//! unlisted, so the accounts that name it keep their bank; it is no longer offered
//! (`GET /v1/banks`) nor taken for a new account or a payee.

use serde::Serialize;

use super::sql::{self, Conn};
use super::{Db, Error};
use crate::domain::banks::{self, bank_id, Participant};

/// The list the binary ships, loaded by the migration that creates the table.
pub const SHIPPED: &[u8] = include_bytes!("../../data/banks/banks.csv");

/// A participant as a refresh names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Named {
    pub id: String,
    pub ispb: String,
    pub code: Option<String>,
    pub name: String,
}

/// A participant whose name or code changed: the one it had, the one it has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Renamed {
    pub id: String,
    pub ispb: String,
    pub code: Option<String>,
    pub name: String,
    pub previous_code: Option<String>,
    pub previous_name: String,
}

/// What a refresh changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Refresh {
    /// How many participants the file lists.
    pub listed: usize,
    /// New to the list (or back on it after having left).
    pub added: Vec<Named>,
    /// Another name (long or short) or another code.
    pub renamed: Vec<Renamed>,
    /// Listed before, not in the file: kept, unlisted.
    pub dropped: Vec<Named>,
    pub unchanged: usize,
}

/// Why an import changed nothing.
#[derive(Debug)]
pub enum ImportError {
    /// The file is not a list of participants: the line and what is wrong with it.
    File(banks::Refusal),
    Database(Error),
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImportError::File(refusal) => write!(f, "the file is not a list of STR participants: {refusal}"),
            ImportError::Database(e) => write!(f, "the database: {e}"),
        }
    }
}

impl From<Error> for ImportError {
    fn from(e: Error) -> ImportError {
        ImportError::Database(e)
    }
}

/// Refreshes the list from a file in the Bank's layout (or the shipped one), in one
/// transaction: the whole file or nothing.
pub async fn import(db: &Db, file: &[u8]) -> Result<Refresh, ImportError> {
    let participants = banks::parse(file).map_err(ImportError::File)?;
    let mut tx = db.begin().await?;
    let outcome = refresh(&mut tx, &participants, &crate::clock::now_rfc3339()).await?;
    tx.commit().await?;
    Ok(outcome)
}

/// Loads the shipped list (the migration that creates the table).
pub async fn load_shipped(conn: &mut Conn) -> Result<(), Error> {
    let participants = banks::parse(SHIPPED).map_err(|e| Error::Corrupt(format!("the shipped bank list: {e}")))?;
    refresh(conn, &participants, &crate::clock::now_rfc3339()).await.map(drop)
}

/// What the table holds of one participant.
struct Stored {
    code: Option<String>,
    short_name: String,
    name: String,
    listed: bool,
}

/// Makes `participants` the list, in the caller's transaction (see the module's
/// documentation); `now` stamps the rows it writes.
pub async fn refresh(conn: &mut Conn, participants: &[Participant], now: &str) -> Result<Refresh, Error> {
    let stored: std::collections::HashMap<String, Stored> =
        sql::query("SELECT ispb, code, short_name, name, listed FROM banks")
            .map_all(&mut *conn, |row| {
                Ok((
                    row.try_get::<String, _>(0)?,
                    Stored {
                        code: row.try_get(1)?,
                        short_name: row.try_get(2)?,
                        name: row.try_get(3)?,
                        listed: row.try_get::<i64, _>(4)? == 1,
                    },
                ))
            })
            .await?
            .into_iter()
            .collect();
    // Every code is free again before the file's are set (a code may pass from a
    // participant that left to one that joined).
    sql::query("UPDATE banks SET listed = 0 WHERE listed = 1").execute(&mut *conn).await?;
    let mut outcome = Refresh { listed: participants.len(), ..Refresh::default() };
    for p in participants {
        let id = bank_id(&p.ispb);
        let named = || Named { id: id.clone(), ispb: p.ispb.clone(), code: p.code.clone(), name: p.name.clone() };
        match stored.get(&p.ispb) {
            None => {
                sql::query(
                    "INSERT INTO banks (id, ispb, code, short_name, name, listed, updated_at)
                     VALUES ($1, $2, $3, $4, $5, 1, $6)",
                )
                .bind(&id)
                .bind(&p.ispb)
                .bind(p.code.as_deref())
                .bind(&p.short_name)
                .bind(&p.name)
                .bind(now)
                .execute(&mut *conn)
                .await?;
                outcome.added.push(named());
            }
            Some(before) => {
                let same = before.code == p.code && before.short_name == p.short_name && before.name == p.name;
                let stamp = if same { None } else { Some(now) };
                sql::query(
                    "UPDATE banks SET code = $1, short_name = $2, name = $3, listed = 1,
                            updated_at = COALESCE($4, updated_at)
                      WHERE ispb = $5",
                )
                .bind(p.code.as_deref())
                .bind(&p.short_name)
                .bind(&p.name)
                .bind(stamp)
                .bind(&p.ispb)
                .execute(&mut *conn)
                .await?;
                if !before.listed {
                    outcome.added.push(named());
                } else if same {
                    outcome.unchanged += 1;
                } else {
                    outcome.renamed.push(Renamed {
                        id: id.clone(),
                        ispb: p.ispb.clone(),
                        code: p.code.clone(),
                        name: p.name.clone(),
                        previous_code: before.code.clone(),
                        previous_name: before.name.clone(),
                    });
                }
            }
        }
    }
    let listed: std::collections::HashSet<&str> = participants.iter().map(|p| p.ispb.as_str()).collect();
    let mut dropped: Vec<Named> = stored
        .iter()
        .filter(|(ispb, before)| before.listed && !listed.contains(ispb.as_str()))
        .map(|(ispb, before)| Named {
            id: bank_id(ispb),
            ispb: ispb.clone(),
            code: before.code.clone(),
            name: before.name.clone(),
        })
        .collect();
    dropped.sort_by(|a, b| a.ispb.cmp(&b.ispb));
    outcome.dropped = dropped;
    Ok(outcome)
}

/// The listed bank with this COMPE code: its id.
pub async fn by_code(conn: &mut Conn, code: &str) -> Result<Option<String>, Error> {
    sql::query("SELECT id FROM banks WHERE code = $1 AND listed = 1")
        .bind(code)
        .map_optional(conn, |row| row.try_get(0))
        .await
}

/// Whether `id` is a listed bank with a COMPE code (one an account may name).
pub async fn is_offered(conn: &mut Conn, id: &str) -> Result<bool, Error> {
    let found: Option<i64> = sql::query("SELECT 1 FROM banks WHERE id = $1 AND listed = 1 AND code IS NOT NULL")
        .bind(id)
        .map_optional(conn, |row| row.try_get(0))
        .await?;
    Ok(found.is_some())
}

/// Whether a listed participant has this ISPB.
pub async fn is_listed_ispb(conn: &mut Conn, ispb: &str) -> Result<bool, Error> {
    let found: Option<i64> = sql::query("SELECT 1 FROM banks WHERE ispb = $1 AND listed = 1")
        .bind(ispb)
        .map_optional(conn, |row| row.try_get(0))
        .await?;
    Ok(found.is_some())
}

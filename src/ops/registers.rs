//! The category, classification center and person of a bill or a transaction, by id or
//! by name (`*_name`, mutually exclusive with `*_id`): a name finds the company's record
//! of the record's polarity, or creates it (audited as any create of that register).

use crate::error::ApiError;
use crate::ops::categories::Categories;
use crate::ops::cost_centers::CostCenters;
use crate::ops::machinery::crud::{self, Table};
use crate::ops::machinery::refs::{category, center, exclusive, first_id, person, CompanyRef, Found, Polarity};
use crate::ops::machinery::stamps::Stamp;
use crate::ops::people::People;
use crate::ops::OpContext;
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn};

/// The record whose references are resolved: its workspace, company and polarity, and
/// the caller writing it (a reference by name may create the record it names).
#[derive(Clone, Copy)]
pub struct Owner<'a, 'c> {
    pub ctx: &'a OpContext<'c>,
    pub ws: &'a Membership,
    pub company: &'a CompanyRef,
    pub polarity: Polarity,
}

impl Owner<'_, '_> {
    /// The category of a record: by id (same company, type = polarity) or found/created by
    /// name as a root category of that type.
    pub async fn category(&self, conn: &mut Conn, id: Option<&str>, name: Option<&str>) -> Found {
        let Owner { ws, company, polarity, .. } = *self;
        exclusive("category_id", id, "category_name", name)?;
        if let Some(id) = id {
            return category(conn, ws, company, "category_id", id, &[polarity.transaction_type()]).await.map(Some);
        }
        let Some(name) = name.map(str::trim) else { return Ok(None) };
        let found = sql::query("SELECT id FROM categories WHERE workspace_id = $1 AND company_id = $2 AND name = $3 AND category_type = $4 ORDER BY level, id LIMIT 1")
            .bind(&ws.workspace_id)
            .bind(&company.id)
            .bind(name)
            .bind(polarity.transaction_type());
        if let Some(id) = first_id(conn, found).await? {
            return Ok(Some(id));
        }
        let insert = "INSERT INTO categories (id, workspace_id, company_id, name, parent_id, level, category_type, created_at, updated_at,
                                     created_via, updated_via, created_by, updated_by)
             VALUES ($1, $2, $3, $4, NULL, 1, $5, $6, $6, $7, $7, $8, $8)";
        self.create_named::<Categories>(conn, insert.to_string(), name, Some(polarity.transaction_type()))
            .await
            .map(Some)
    }

    /// The classification center of a record by id, or found/created by name (type cost for
    /// debit, revenue for credit; an existing `both` center matches either).
    pub async fn center(&self, conn: &mut Conn, id: Option<&str>, name: Option<&str>) -> Found {
        let Owner { ws, company, polarity, .. } = *self;
        exclusive("classification_center_id", id, "classification_center_name", name)?;
        if let Some(id) = id {
            return center(conn, ws, company, polarity, "classification_center_id", id).await.map(Some);
        }
        let Some(name) = name.map(str::trim) else { return Ok(None) };
        let [own, both] = polarity.center_types();
        let found = sql::query(
            "SELECT id FROM classification_centers WHERE workspace_id = $1 AND company_id = $2 AND name = $3
                AND center_type IN ($4, $5) ORDER BY id LIMIT 1",
        )
        .bind(&ws.workspace_id)
        .bind(&company.id)
        .bind(name)
        .bind(own)
        .bind(both);
        if let Some(id) = first_id(conn, found).await? {
            return Ok(Some(id));
        }
        let insert = "INSERT INTO classification_centers (id, workspace_id, company_id, name, center_type, active, created_at, updated_at,
                                                 created_via, updated_via, created_by, updated_by)
             VALUES ($1, $2, $3, $4, $5, 1, $6, $6, $7, $7, $8, $8)";
        self.create_named::<CostCenters>(conn, insert.to_string(), name, Some(own)).await.map(Some)
    }

    /// The person of a record by id (same company, not deleted), or found/created by name
    /// (a supplier for debit, a customer for credit; an existing person found by name is
    /// marked as such).
    pub async fn person(&self, conn: &mut Conn, id: Option<&str>, name: Option<&str>) -> Found {
        let Owner { ctx, ws, company, polarity } = *self;
        exclusive("person_id", id, "person_name", name)?;
        if let Some(id) = id {
            return person(conn, ws, company, "person_id", id).await.map(Some);
        }
        let Some(name) = name.map(str::trim) else { return Ok(None) };
        let flag = match polarity {
            Polarity::Debit => "is_supplier",
            Polarity::Credit => "is_customer",
        };
        let found = sql::query("SELECT id FROM people WHERE workspace_id = $1 AND company_id = $2 AND name = $3 AND deleted_at IS NULL ORDER BY id LIMIT 1")
            .bind(&ws.workspace_id)
            .bind(&company.id)
            .bind(name);
        if let Some(id) = first_id(conn, found).await? {
            sql::query(format!(
                "UPDATE people SET {flag} = 1, updated_at = $1, updated_via = $2, updated_by = $3 WHERE id = $4 AND {flag} = 0"
            ))
            .stamp_now(ctx)
            .bind(&id)
            .execute(&mut *conn)
            .await
            ?;
            return Ok(Some(id));
        }
        let insert = format!(
            "INSERT INTO people (id, workspace_id, company_id, name, {flag}, active, created_at, updated_at,
                                 created_via, updated_via, created_by, updated_by)
             VALUES ($1, $2, $3, $4, 1, 1, $5, $5, $6, $6, $7, $7)"
        );
        self.create_named::<People>(conn, insert, name, None).await.map(Some)
    }

    /// Creates the `T` a reference by name asks for: `sql` takes the id, workspace,
    /// company and name, then `extra` when given, then the creation stamp (at, via, by);
    /// the write is audited as any create of a `T`.
    async fn create_named<T: Table>(
        &self,
        conn: &mut Conn,
        sql: String,
        name: &str,
        extra: Option<&str>,
    ) -> Result<String, ApiError> {
        let id = uuid::Uuid::new_v4().to_string();
        let mut insert = sql::query(sql).bind(&id).bind(&self.ws.workspace_id).bind(&self.company.id).bind(name);
        if let Some(extra) = extra {
            insert = insert.bind(extra);
        }
        insert.stamp_now(self.ctx).execute(&mut *conn).await?;
        crud::audit::<T>(self.ctx, conn, self.ws, "create", &id).await?;
        Ok(id)
    }
}

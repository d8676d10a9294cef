//! Categories (`/v1/categories`, scope `finance.categories`): the chart of accounts, a
//! tree of at most three levels.
//!
//! Rules: a category belongs to a company of the workspace; a child is one level below
//! its parent (at most level 3, else 422 `max_depth`), in the same company, and of the
//! same type (422 `type_mismatch`). The parent never changes (no re-parenting). A type
//! change is made on a root and cascades to every descendant in the same transaction;
//! it is refused (422 `in_use`) while records of the subtree would be left with a
//! category of the other direction. Deleting needs a leaf (422 `has_children`) that no
//! transaction, payable or receivable uses (422 `in_use` with the usage).

use crate::domain::text::quoted;
use crate::ops::machinery::stamps::Stamp;
use crate::ops::machinery::stamps::Stamps;
use crate::storage::{sql, Conn};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::machinery::common::{body_id, required, required_if_sent, unprocessable};
use super::machinery::crud::{self, record_table};
use super::machinery::list::ListRequest;
use super::machinery::list::{list_spec, ListSpec};
use super::machinery::refs::{self, not_in_workspace};
use super::machinery::resource::{Declaration, Deletable, Op, Records, Writable};
use super::OpContext;
use super::Page;
use crate::domain::dates::Timestamp;
use crate::domain::roles::{Access, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::storage::db_error;
use crate::storage::identity::Membership;
use crate::storage::row::decode_text;

/// The deepest level of the tree (1 = root).
pub const MAX_LEVEL: i64 = 3;

/// The direction of the records a category classifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CategoryType {
    Debit,
    Credit,
}

impl CategoryType {
    pub fn as_str(self) -> &'static str {
        match self {
            CategoryType::Debit => "debit",
            CategoryType::Credit => "credit",
        }
    }

    fn parse(s: &str) -> Option<CategoryType> {
        match s {
            "debit" => Some(CategoryType::Debit),
            "credit" => Some(CategoryType::Credit),
            _ => None,
        }
    }
}

/// `POST /v1/categories`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CategoryCreate {
    #[schemars(extend("format" = "uuid"))]
    pub company_id: String,
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 255))]
    pub name: String,
    /// `debit` (costs) or `credit` (revenue); a child has its parent's type.
    #[serde(rename = "type")]
    pub category_type: CategoryType,
    /// The parent category (same company); the new one is one level below it, at most
    /// level 3. Absent for a root. Immutable.
    #[serde(default)]
    #[schemars(extend("format" = "uuid"))]
    pub parent_id: Option<String>,
}

/// `PATCH /v1/categories/{id}`: only the name and the type change; a type change
/// cascades to the descendants. The parent and the company cannot change.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CategoryUpdate {
    #[schemars(with = "String", pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 255))]
    pub name: Option<String>,
    #[serde(rename = "type")]
    #[schemars(with = "CategoryType")]
    pub category_type: Option<CategoryType>,
}

/// A category as `/v1` returns it (flat; the tree is built from `parent_id`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Category {
    pub id: String,
    pub company_id: String,
    pub name: String,
    pub parent_id: Option<String>,
    /// 1 = root, at most 3.
    pub level: i64,
    #[serde(rename = "type")]
    pub category_type: CategoryType,
    #[serde(flatten)]
    pub stamps: Stamps,
}

/// The `"/v1/categories"` resource: its list, its reads, writes and delete.
pub struct Categories;

impl Records for Categories {
    const LIST: &'static ListSpec = &LIST;
    const RESOURCE: Resource = Resource::Categories;
    const COLLECTION: &'static str = "/v1/categories";
    const NOUN: &'static str = "category";
    type Row = Category;
    type Record = Category;
    async fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Page<Category>, ApiError> {
        crud::list::<Self>(ctx, conn, ws, request).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Category, ApiError> {
        crud::get::<Self>(ctx, conn, ws, id).await
    }
    fn label(c: &Category) -> String {
        format!("{} ({} category, level {})", quoted(&c.name), c.category_type.as_str(), c.level)
    }
}

impl Writable for Categories {
    type Create = CategoryCreate;
    type Created = Category;
    type Update = CategoryUpdate;
    async fn create(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        input: CategoryCreate,
    ) -> Result<Category, ApiError> {
        ctx.authorize(ws, Resource::Categories, Access::Write)?;
        let company_id = body_id("company_id", &input.company_id)?;
        let parent_id = input.parent_id.as_deref().map(|p| body_id("parent_id", p)).transpose()?;
        let name = required("name", &input.name)?;
        refs::company(conn, ws, "company_id", &company_id).await?;
        let level = match &parent_id {
            None => 1,
            Some(parent_id) => {
                let parent = crud::fetch::<Categories>(conn, ws, parent_id)
                    .await?
                    .ok_or_else(|| not_in_workspace("parent_id", "Parent category"))?;
                if parent.company_id != company_id {
                    return Err(unprocessable(
                        "parent_id",
                        "company_mismatch",
                        "The parent category belongs to another company",
                    ));
                }
                if parent.level >= MAX_LEVEL {
                    return Err(ApiError::new(ErrorCode::UnprocessableEntity, "Categories have at most three levels")
                        .with_details(json!({"field": "parent_id", "reason": "max_depth", "max_level": MAX_LEVEL})));
                }
                // The type of a tree changes at its root: hold the root, then read the
                // parent's type as it now is.
                lock(conn, ws, parent.parent_id.as_deref().unwrap_or(&parent.id)).await?;
                let parent = crud::fetch::<Categories>(conn, ws, parent_id)
                    .await?
                    .ok_or_else(|| not_in_workspace("parent_id", "Parent category"))?;
                if parent.category_type != input.category_type {
                    return Err(unprocessable("type", "type_mismatch", "A category must have the type of its parent"));
                }
                parent.level + 1
            }
        };
        let id = uuid::Uuid::new_v4().to_string();
        let now = Timestamp::now();
        sql::query(
            "INSERT INTO categories (id, workspace_id, company_id, name, parent_id, level, category_type, created_at, updated_at,
                                     created_via, updated_via, created_by, updated_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $9, $10, $10)",
        )
        .bind(&id)
        .bind(&ws.workspace_id)
        .bind(&company_id)
        .bind(name)
        .bind(parent_id.as_deref())
        .bind(level)
        .bind(input.category_type.as_str())
        .stamp(ctx, &now)
        .execute(&mut *conn)
        .await
        .map_err(|e| {
            foreign_key(e, || match &parent_id {
                Some(_) => not_in_workspace("parent_id", "Parent category"),
                None => not_in_workspace("company_id", "Company"),
            })
        })?;
        crud::created::<Categories>(ctx, conn, ws, &id).await
    }
    async fn update(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
        input: CategoryUpdate,
    ) -> Result<Category, ApiError> {
        ctx.authorize(ws, Resource::Categories, Access::Write)?;
        let current = crud::find::<Categories>(conn, ws, id).await?;
        let name = required_if_sent("name", input.name.as_deref())?.unwrap_or(&current.name).to_string();
        let new_type = input.category_type.unwrap_or(current.category_type);
        let now = Timestamp::now();
        // The category's own row first: its lock orders this change after (or before) any
        // creation of a child in its tree.
        sql::query(
            "UPDATE categories SET name = $1, updated_at = $2, updated_via = $3, updated_by = $4 WHERE workspace_id = $5 AND id = $6",
        )
        .bind(&name)
        .stamp(ctx, &now)
        .bind(&ws.workspace_id)
        .bind(&current.id)
        .execute(&mut *conn)
        .await
        ?;
        let mut cascaded = Vec::new();
        if new_type != current.category_type {
            if let Some(parent_id) = &current.parent_id {
                let parent = crud::fetch::<Categories>(conn, ws, parent_id)
                    .await?
                    .ok_or_else(|| ApiError::not_found("Category"))?;
                if parent.category_type != new_type {
                    return Err(unprocessable("type", "type_mismatch", "A category must have the type of its parent"));
                }
            }
            let used = usage(conn, ws, &current.id, SUBTREE).await?;
            if used != (0, 0, 0) {
                return Err(in_use("Records of this category tree would change direction", used));
            }
            let rows = sql::query(SUBTREE).bind(&ws.workspace_id).bind(&current.id).fetch_all(&mut *conn).await?;
            for row in rows {
                let member: String = row.try_get(0)?;
                sql::query(
                    "UPDATE categories SET category_type = $1, updated_at = $2, updated_via = $3, updated_by = $4 WHERE workspace_id = $5 AND id = $6",
                )
                .bind(new_type.as_str())
                .stamp(ctx, &now)
                .bind(&ws.workspace_id)
                .bind(&member)
                .execute(&mut *conn)
                .await
                ?;
                if member != current.id {
                    cascaded.push(member);
                }
            }
        }
        crud::audit::<Categories>(ctx, conn, ws, "update", &current.id).await?;
        for member in &cascaded {
            crud::audit::<Categories>(ctx, conn, ws, "update", member).await?;
        }
        crud::find::<Categories>(conn, ws, &current.id).await
    }
}

impl Deletable for Categories {
    /// Deletes a leaf category that no record uses.
    async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        ctx.authorize(ws, Resource::Categories, Access::Delete)?;
        let current = crud::find::<Categories>(conn, ws, id).await?;
        let children: i64 = sql::query("SELECT COUNT(*) FROM categories WHERE workspace_id = $1 AND parent_id = $2")
            .bind(&ws.workspace_id)
            .bind(&current.id)
            .fetch_one(&mut *conn)
            .await
            .and_then(|row| row.try_get(0))?;
        if children > 0 {
            return Err(ApiError::new(
                ErrorCode::UnprocessableEntity,
                "The category has subcategories; delete them first",
            )
            .with_details(json!({"reason": "has_children", "children": children})));
        }
        let used =
            usage(conn, ws, &current.id, "SELECT id FROM categories WHERE workspace_id = $1 AND id = $2").await?;
        if used != (0, 0, 0) {
            return Err(in_use("The category is still in use", used));
        }
        // A child or a record added meanwhile makes the delete fail on its foreign key.
        crud::deleted::<Categories>(ctx, conn, ws, &current.id, |e| {
            foreign_key(e, || {
                ApiError::new(ErrorCode::UnprocessableEntity, "The category is still in use")
                    .with_details(json!({"reason": "in_use"}))
            })
        })
        .await
    }
}

/// The `/v1/categories` operations.
pub static OPERATIONS: Declaration = Declaration::of::<Categories>(&[
    Op::list::<Categories>("List categories").tool(
        "finance_categories_list",
        "List categories",
        "Lists a company's chart of accounts: a tree of up to 3 levels, debit (expenses) or credit (income). Its id is \
category_id on bills and transactions.",
    ),
    Op::get::<Categories>("Get a category").tool(
        "finance_categories_get",
        "Get a category",
        "One category, with its parent and level.",
    ),
    Op::create::<Categories>("Create a category").tool(
        "finance_categories_create",
        "Create a category",
        "Creates a category, optionally under parent_id (same company, at most 3 levels).",
    ),
    Op::update::<Categories>("Update a category").tool(
        "finance_categories_update",
        "Update a category",
        "Renames a category or changes its type (cascades to its descendants). Parent and company cannot change.",
    ),
    Op::delete::<Categories>("Delete a category").tool(
        "finance_categories_delete",
        "Delete a category",
        "Deletes a category without children that nothing uses. Asks the user to confirm.",
    ),
]);

pub static LIST: ListSpec = list_spec!(categories;
    filters: company_id: Uuid, parent_id: Uuid, type = category_type: Enum(&["debit", "credit"]), level: Integer, name: Text;
    sorts: name, created_at, level;
    default: name);

/// The ids of a category's subtree (itself and its descendants; the tree has three
/// levels at most). Binds: `$1` workspace, `$2` the category.
const SUBTREE: &str =
    "SELECT id FROM categories WHERE workspace_id = $1 AND (id = $2 OR parent_id = $2 OR parent_id IN \
    (SELECT id FROM categories WHERE workspace_id = $1 AND parent_id = $2))";

decode_text!(CategoryType, CategoryType::parse);

record_table!(impl Table for Categories as "Category", audited as "category"; categories => Category |row| {
    id, company_id, name, parent_id, level, category_type
});

/// A foreign-key violation on a write means a referenced row vanished meanwhile, or a
/// row still refers to the one being removed.
fn foreign_key(err: crate::storage::Error, on_violation: impl FnOnce() -> ApiError) -> ApiError {
    match &err {
        db if db.is_foreign_key_violation() => on_violation(),
        _ => db_error(err),
    }
}

/// How many transactions, payables and receivables use the categories selected by
/// `subquery` (binds `$1` workspace, `$2` category).
async fn usage(conn: &mut Conn, ws: &Membership, id: &str, subquery: &str) -> Result<(i64, i64, i64), ApiError> {
    let sql = format!(
        "SELECT (SELECT COUNT(*) FROM financial_transactions WHERE workspace_id = $1 AND category_id IN ({subquery})),
                (SELECT COUNT(*) FROM billings WHERE workspace_id = $1 AND kind = 'payable' AND category_id IN ({subquery})),
                (SELECT COUNT(*) FROM billings WHERE workspace_id = $1 AND kind = 'receivable' AND category_id IN ({subquery}))"
    );
    let row = sql::query(sql).bind(&ws.workspace_id).bind(id).fetch_one(&mut *conn).await?;
    Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?))
}

fn in_use(message: &str, (transactions, payables, receivables): (i64, i64, i64)) -> ApiError {
    ApiError::new(ErrorCode::UnprocessableEntity, message).with_details(json!({
        "reason": "in_use",
        "usage": { "transactions": transactions, "payables": payables, "receivables": receivables },
    }))
}

/// Takes the row lock of a category (a write that changes nothing), so that a type
/// change of its tree and the creation of a child below it happen one after the other.
async fn lock(conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
    sql::query("UPDATE categories SET updated_at = updated_at WHERE workspace_id = $1 AND id = $2")
        .bind(&ws.workspace_id)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

#[cfg(test)]
mod deletes {
    use super::Categories;
    use crate::auth::keys::{KeyStore, Keys};
    use crate::auth::Identity;
    use crate::domain::roles::{all_scopes, Role, ScopeSet};
    use crate::error::ApiError;
    use crate::ops::machinery::crud::{deleted, fetch};
    use crate::ops::machinery::resource::Writable;
    use crate::ops::taxes::Taxes;
    use crate::ops::OpContext;
    use crate::ops::{Channel, Services};
    use crate::storage::identity::Membership;
    use crate::storage::{blob::BlobStore, migrate, seed, Db};
    use crate::storage::{sql, Conn};

    async fn audited(conn: &mut Conn, action: &str, id: &str) -> i64 {
        sql::query("SELECT COUNT(*) FROM audit_events WHERE action = $1 AND target_id = $2")
            .bind(action)
            .bind(id)
            .scalar(&mut *conn)
            .await
            .unwrap()
    }

    /// Every plain hard delete ends in `crud::deleted`: the row goes and its audit line is written; a
    /// delete the database refuses answers the resource's own error and writes none.
    #[tokio::test]
    async fn a_delete_removes_the_record_and_audits_it_or_answers_the_resources_refusal() {
        let db = Db::connect("sqlite::memory:", 1).await.unwrap();
        migrate::run(&db).await.unwrap();
        seed::run(&db).await.unwrap();
        let config = crate::config::Config::from_env(Some("sqlite::memory:".into())).unwrap();
        let (keys, blobs) = (KeyStore::fixed(Keys::from_secret("secret", None)), BlobStore::database());
        let gateway = crate::gateway::Gateway::new(&crate::config::GatewayConfig::none(), &crate::aws::Aws::default());
        let identity = Identity {
            user_id: seed::DEMO_OWNER.into(),
            scopes: ScopeSet::parse(&all_scopes().join(" ")),
            jti: None,
            client_id: None,
        };
        let ws = Membership {
            workspace_id: seed::DEMO_WORKSPACE_ACME.into(),
            workspace_name: "Acme".into(),
            role: Role::Owner,
        };
        let ctx = OpContext {
            state: Services { config: &config, db: &db, keys: &keys, blobs: &blobs, gateway: &gateway },
            identity: &identity,
            channel: Channel::Api,
            memberships: std::slice::from_ref(&ws),
        };
        let mut conn = db.acquire().await.unwrap();

        let input = serde_json::from_value(serde_json::json!({"name": "Deleted by the test"})).unwrap();
        let tax = Taxes::create(&ctx, &mut conn, &ws, input).await.unwrap();
        deleted::<Taxes>(&ctx, &mut conn, &ws, &tax.id, crate::storage::db_error).await.unwrap();
        assert!(fetch::<Taxes>(&mut conn, &ws, &tax.id).await.unwrap().is_none());
        assert_eq!(audited(&mut conn, "taxes.delete", &tax.id).await, 1);

        let parent: String =
            sql::query("SELECT parent_id FROM categories WHERE workspace_id = $1 AND parent_id IS NOT NULL LIMIT 1")
                .bind(&ws.workspace_id)
                .scalar(&mut conn)
                .await
                .unwrap();
        let refused = deleted::<Categories>(&ctx, &mut conn, &ws, &parent, |e| {
            assert!(e.is_foreign_key_violation(), "{e}");
            ApiError::new(crate::error::ErrorCode::UnprocessableEntity, "refused")
        })
        .await
        .unwrap_err();
        assert_eq!(refused.message, "refused");
        assert!(fetch::<Categories>(&mut conn, &ws, &parent).await.unwrap().is_some());
        assert_eq!(audited(&mut conn, "categories.delete", &parent).await, 0);
    }
}

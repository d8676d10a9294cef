//! `/v1/companies` routes: the record shapes of the declaration, nothing of its own.

use axum::Router;

use super::records;
use crate::app::AppState;
use crate::ops::companies::{self, Companies};

pub fn routes() -> Router<AppState> {
    records::routes::<Companies>(&companies::OPERATIONS, Vec::new())
}

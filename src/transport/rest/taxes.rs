//! `/v1/taxes` routes: the record shapes of the declaration, nothing of its own.

use axum::Router;

use super::records;
use crate::app::AppState;
use crate::ops::taxes::{self, Taxes};

pub fn routes() -> Router<AppState> {
    records::routes::<Taxes>(&taxes::OPERATIONS, Vec::new())
}

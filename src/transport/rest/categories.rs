//! `/v1/categories` routes: the record shapes of the declaration, nothing of its own.

use axum::Router;

use super::records;
use crate::app::AppState;
use crate::ops::categories::{self, Categories};

pub fn routes() -> Router<AppState> {
    records::routes::<Categories>(&categories::OPERATIONS, Vec::new())
}

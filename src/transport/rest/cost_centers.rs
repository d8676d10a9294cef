//! `/v1/classification_centers` routes: the record shapes of the declaration, nothing of its own.

use axum::Router;

use super::records;
use crate::app::AppState;
use crate::ops::cost_centers::{self, CostCenters};

pub fn routes() -> Router<AppState> {
    records::routes::<CostCenters>(&cost_centers::OPERATIONS, Vec::new())
}

//! A register record named instead of identified: a bill's or a transaction's
//! `person_name`, `category_name` or `classification_center_name`, which finds the
//! record of that name or creates it (exclusive with the `*_id` beside it).

use std::ops::Deref;

use serde::{Deserialize, Serialize};

/// A name that finds or creates a record: 1 to 255 characters of one plain line
/// ([`super::text::is_plain`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(transparent)]
pub struct Name(String);

impl Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

string_schema!(Name, { "type": "string", "minLength": 1, "maxLength": 255, "pattern": super::text::PLAIN_PATTERN });

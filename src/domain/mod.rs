//! Domain rules that do not depend on transport or storage.

pub mod roles;
pub mod dates;
pub mod documents;
pub mod money;

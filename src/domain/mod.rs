//! Domain rules that do not depend on transport or storage: roles and scopes, money,
//! dates, Brazilian documents. Pure functions and types, so every layer above can use
//! them and they can be tested alone.

pub mod roles;
pub mod dates;
pub mod documents;
pub mod money;

//! Domain rules that do not depend on transport or storage: the types of money, dates,
//! statuses and payment methods that both generate the request schemas and refuse bad
//! input, and the rules written on them (roles and scopes, tax ids, apportionment,
//! series). Pure functions and types, so every layer above can use them and they can
//! be tested alone.

pub mod apportionment;
pub mod bills;
pub mod channel;
pub mod dates;
pub mod documents;
pub mod money;
pub mod payment;
pub mod roles;

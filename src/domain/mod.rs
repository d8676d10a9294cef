//! Domain rules that do not depend on transport or storage: the types of money, dates,
//! statuses and payment methods that both generate the request schemas and refuse bad
//! input, and the rules written on them (roles, tax ids, apportionment, series).

pub mod apportionment;
pub mod bills;
pub mod channel;
pub mod dates;
pub mod documents;
pub mod money;
pub mod payment;
pub mod roles;

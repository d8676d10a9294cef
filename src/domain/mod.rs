//! Domain rules that do not depend on transport or storage.

pub mod roles;

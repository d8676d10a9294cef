//! Domain rules that do not depend on transport or storage: the types of money, dates,
//! statuses and payment methods that both generate the request schemas and refuse bad
//! input, and the rules written on them (roles and scopes, tax ids, apportionment,
//! series). Pure functions and types, so every layer above can use them and they can
//! be tested alone.

/// Implements `JsonSchema` for a domain type that travels as a JSON string: the schema
/// given, written inline wherever the type is used (it is small, and a tool's schema
/// must stand alone). A macro because each type needs its own `JsonSchema` impl (the
/// trait is foreign, so no blanket implementation can serve them), and
/// `schemars::json_schema!` takes the schema as written.
macro_rules! string_schema {
    ($ty:ident, $schema:tt) => {
        impl schemars::JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!($schema)
            }
        }
    };
}

pub mod apportionment;
pub mod banks;
pub mod bills;
pub mod buckets;
pub mod channel;
pub mod coordinates;
pub mod csv;
pub mod dates;
pub mod documents;
pub mod email;
pub mod money;
pub mod names;
pub mod payment;
pub mod percent;
pub mod roles;
pub mod shown;
pub mod statement;
pub mod text;

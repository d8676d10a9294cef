//! What every operation shares, below the resources: the declaration of an operation
//! and its rows ([`resource`]), list compilation ([`list`], [`page`], [`pick`]), request
//! and query validation ([`validate`], [`period`]), references to another record
//! ([`refs`]), the generic record table ([`crud`]) and its stamps ([`stamps`]),
//! idempotency keys ([`idempotency`]), rate limits ([`rate_limit`]), id completion
//! ([`complete`]), the OpenAPI document's pieces ([`openapi`]) and the common refusals
//! ([`common`]). Nothing here names a resource: the resources import this folder, never
//! the other way round.

pub mod common;
pub mod complete;
pub mod crud;
pub mod idempotency;
pub mod list;
pub mod openapi;
pub mod page;
pub mod period;
pub mod pick;
pub mod rate_limit;
pub mod refs;
pub mod resource;
pub mod stamps;
pub mod validate;

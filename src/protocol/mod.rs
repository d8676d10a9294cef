//! The protocol layer: JSON-RPC 2.0 messages, protocol eras and versions, and the
//! request headers that must agree with the body. Nothing here knows about HTTP
//! bodies, tokens or finance; it turns a parsed JSON value plus headers into a
//! validated request (or the exact JSON-RPC error the contract prescribes).

pub mod era;
pub mod headers;
pub mod rpc;

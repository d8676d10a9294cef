//! Kobana Finance MCP server.
//!
//! The layout follows a request's path:
//! transport (HTTP, limits, Lambda) → protocol (JSON-RPC, eras, headers) → mcp (methods,
//! tools, resources) → ops (the `/v1` operations) → domain (rules) → storage. Beside
//! them, under transport: oauth (the authorization server MCP clients sign in with).
//! Lower layers never reach into higher ones.

pub mod app;
pub mod auth;
pub mod aws;
pub mod cli;
pub mod clock;
pub mod config;
pub mod domain;
pub mod error;
pub mod gateway;
pub mod https;
pub mod kept;
#[cfg(test)]
mod layering;
pub mod mcp;
pub mod oauth;
pub mod ops;
pub mod protocol;
pub mod storage;
pub mod transport;

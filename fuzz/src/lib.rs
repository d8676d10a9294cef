//! Fuzz targets for the Kobana Finance MCP server (see README "Fuzzing").

pub mod pipeline;
pub mod properties;
pub mod raw;

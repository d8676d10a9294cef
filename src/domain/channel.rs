//! The door a write came through (the REST API, an MCP tool, or the server itself):
//! recorded as `created_via`/`updated_via` and in the audit log. Storage records it, so
//! it lives below the operations.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Api,
    Mcp,
    System,
}

impl Channel {
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Api => "api",
            Channel::Mcp => "mcp",
            Channel::System => "system",
        }
    }
}

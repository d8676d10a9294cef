use crate::mcp::tools::ToolSpec; pub static TOOLS: &[ToolSpec] = &[];

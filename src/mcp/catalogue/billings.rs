use crate::mcp::tools::ToolSpec; pub static PAYABLES: &[ToolSpec] = &[]; pub static RECEIVABLES: &[ToolSpec] = &[];

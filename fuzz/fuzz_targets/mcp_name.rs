#![no_main]
//! See `properties::mcp_name`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kobana_finance_mcp_fuzz::properties::mcp_name(data));

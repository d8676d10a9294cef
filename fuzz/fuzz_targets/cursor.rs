#![no_main]
//! See `properties::cursor`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kobana_finance_mcp_fuzz::properties::cursor(data));

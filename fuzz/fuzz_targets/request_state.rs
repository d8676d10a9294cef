#![no_main]
//! See `properties::request_state`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kobana_finance_mcp_fuzz::properties::request_state(data));

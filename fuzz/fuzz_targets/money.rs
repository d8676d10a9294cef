#![no_main]
//! See `properties::money`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| kobana_finance_mcp_fuzz::properties::money(data));

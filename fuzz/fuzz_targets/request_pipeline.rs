#![no_main]
//! Raw request (method, path, headers, body) → the real router: never a panic, always
//! one of the contract's statuses and headers (see `raw::check`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| kobana_finance_mcp_fuzz::pipeline::run(data));

#![no_main]
//! libFuzzer target: see `harness/parse_invocation.rs`.

#[path = "../harness/mod.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::parse_invocation::run(data));

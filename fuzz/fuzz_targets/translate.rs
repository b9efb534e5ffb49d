#![no_main]
//! libFuzzer target: see `harness/translate.rs`.

#[path = "../harness/mod.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::translate::run(data));

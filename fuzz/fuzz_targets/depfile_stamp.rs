#![no_main]
//! libFuzzer target: see `harness/formats.rs`.

#[path = "../harness/formats.rs"]
mod formats;

libfuzzer_sys::fuzz_target!(|data: &[u8]| formats::depfile_stamp(data));

#![no_main]
//! libFuzzer target: see `harness/heap_ops.rs`.

#[path = "../harness/mod.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::heap_ops::run(data);
});

#![no_main]
//! libFuzzer target: see `harness/src/heap_ops.rs`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    neuron_fuzz_harness::heap_ops::run(data);
});

#![no_main]
//! libFuzzer target: see `harness/translate.rs`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| neuron_fuzz_harness::translate::run(data));

#![no_main]
//! libFuzzer target: see `harness/parse_invocation.rs`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| neuron_fuzz_harness::parse_invocation::run(data));

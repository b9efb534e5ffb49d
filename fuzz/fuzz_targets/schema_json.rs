#![no_main]
//! libFuzzer target: see `harness/src/formats.rs`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| neuron_fuzz_harness::formats::schema_json(data));

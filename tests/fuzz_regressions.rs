//! Replays the fuzz targets' committed inputs as plain tests: every
//! regression input (a crash the fuzzers found, kept after the fix) and
//! every seed of `fuzz/seeds/`. The harnesses are the fuzz targets' own
//! (the `neuron-fuzz-harness` crate, `fuzz/harness/`), so a replay checks exactly what the fuzzer checked.

use neuron_fuzz_harness::replay::replay;

#[test]
fn parse_invocation_inputs() {
    replay("parse_invocation", neuron_fuzz_harness::parse_invocation::run);
}

#[test]
fn heap_ops_inputs() {
    replay("heap_ops", |d| {
        neuron_fuzz_harness::heap_ops::run(d);
    });
}

#[test]
fn translate_inputs() {
    replay("translate", neuron_fuzz_harness::translate::run);
}

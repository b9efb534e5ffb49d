//! Replays the committed inputs of the fuzz targets for the tool's
//! parsers (`fuzz/harness/src/formats.rs`: `.npy`, the C++ scanner,
//! `customop.json`, depfiles and stamps) as plain tests, with the
//! targets' own harness.

use neuron_fuzz_harness::formats;
use neuron_fuzz_harness::replay::replay;

#[test]
fn npy_read_inputs() {
    replay("npy_read", formats::npy_read);
}

#[test]
fn scan_source_inputs() {
    replay("scan_source", formats::scan_source);
}

#[test]
fn schema_json_inputs() {
    replay("schema_json", formats::schema_json);
}

#[test]
fn depfile_stamp_inputs() {
    replay("depfile_stamp", formats::depfile_stamp);
}

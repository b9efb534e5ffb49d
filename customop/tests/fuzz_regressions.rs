//! Replays the committed inputs of the fuzz targets for the tool's
//! parsers (`fuzz/harness/src/formats.rs`: `.npy`, the C++ scanner,
//! `customop.json`, depfiles and stamps) as plain tests, with the
//! targets' own harness.

use neuron_fuzz_harness::formats;
use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut n = 0;
    for dir in ["regressions", "seeds"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else { continue };
        let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files {
            eprintln!("replay {}", f.display());
            run(&std::fs::read(&f).unwrap());
            n += 1;
        }
    }
    assert!(n > 0, "no inputs for {target}");
}

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

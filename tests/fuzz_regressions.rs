//! Replays the fuzz targets' committed inputs as plain tests: every
//! regression input (a crash the fuzzers found, kept after the fix) and
//! every seed of `fuzz/seeds/`. The harnesses are the fuzz targets' own
//! (the `neuron-fuzz-harness` crate, `fuzz/harness/`), so a replay checks exactly what the fuzzer checked.

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut n = 0;
    for dir in ["regressions", "seeds"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else { continue };
        let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files {
            let data = std::fs::read(&f).unwrap();
            eprintln!("replay {}", f.display());
            run(&data);
            n += 1;
        }
    }
    assert!(n > 0, "no inputs for {target}");
}

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

//! The replay of a target's committed inputs as a plain test: every
//! regression input (a crash the fuzzers found, kept after the fix) and
//! every seed, in name order, through the target's own harness.

use std::path::Path;

/// Runs `run` on each file of `fuzz/regressions/<target>/` and
/// `fuzz/seeds/<target>/`; panics if there is none (a replay that checks
/// nothing would pass silently).
pub fn replay(target: &str, run: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut n = 0;
    for dir in ["regressions", "seeds"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else { continue };
        let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files {
            eprintln!("replay {}", f.display());
            run(&std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display())));
            n += 1;
        }
    }
    assert!(n > 0, "no inputs for {target}");
}

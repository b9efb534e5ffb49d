//! Reliability steps of `cargo xtask test` (issue 6): the fuzz smoke runs
//! and the Miri run. `docs/reliability.md` says how to run them longer.

use crate::{nightly_cargo, root, run, Result};
use std::path::PathBuf;

/// The fuzz targets (`fuzz/fuzz_targets/`).
pub const FUZZ_TARGETS: &[&str] = &["parse_invocation", "heap_ops", "translate", "npy_read", "scan_source", "schema_json", "depfile_stamp"];
/// Seconds each target runs in the smoke run (`FUZZ_SECS` overrides):
/// seven targets, enough to replay the seeds and regressions and explore a
/// little; the CI run's whole budget is 25 minutes, and long exploration
/// is a separate job (docs/reliability.md, "Longer runs").
const FUZZ_SECS: u32 = 10;

/// `cargo xtask fuzz-smoke`: builds the targets and runs each for a bounded time on the committed seeds and
/// regression inputs (new inputs go to a scratch corpus under target/).
/// A crash, a failed assertion or a leak fails the step.
pub fn fuzz_smoke() -> Result {
    let secs: u32 = std::env::var("FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(FUZZ_SECS);
    let fuzz = root().join("fuzz");
    run(nightly_cargo().current_dir(&fuzz).args(["fuzz", "build"]))?;
    let mut failed = Vec::new();
    for t in FUZZ_TARGETS {
        let scratch: PathBuf = crate::xtask_target_base().join("fuzz-smoke").join(t);
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
        let mut cmd = nightly_cargo();
        cmd.current_dir(&fuzz).args(["fuzz", "run", t]).arg(&scratch);
        for dir in ["seeds", "regressions"] {
            let d = fuzz.join(dir).join(t);
            if d.is_dir() {
                cmd.arg(d);
            }
        }
        cmd.args(["--", &format!("-max_total_time={secs}"), "-rss_limit_mb=4096", "-print_final_stats=1"]);
        if let Err(e) = run(&mut cmd) {
            failed.push(format!("{t}: {e} (the input is in fuzz/artifacts/{t}/)"));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("; "))
    }
}

/// `cargo xtask miri`: the runtime's pure-logic tests under Miri (unit
/// tests, pure.rs on the fake core, heap_model.rs with fewer cases; the
/// mock-based files are compiled out under `cfg(miri)`), then the root
/// crate's `with_core` re-entry test. Isolation is off only so that
/// proptest can read its failure-persistence path.
pub fn miri() -> Result {
    run(nightly_cargo().current_dir(root()).env("MIRIFLAGS", "-Zmiri-disable-isolation -Zmiri-permissive-provenance").env("PROPTEST_CASES", "4").args([
        "miri",
        "test",
        "-p",
        "neuron-runtime",
    ]))?;
    // The C surface's re-entry guard on the host binding (`with_core`),
    // and the accessor's host token, on a fake core: the C-ABI crate's unit
    // tests Miri can run.
    run(nightly_cargo().current_dir(root()).env("MIRIFLAGS", "-Zmiri-disable-isolation -Zmiri-permissive-provenance").args([
        "miri",
        "test",
        "-p",
        "neuron-capi",
        "--lib",
        "binding::",
    ]))
}

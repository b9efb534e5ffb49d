//! This crate is the one place for the QEMU command line, the plugin's
//! build and the target-directory rule: no other Rust source of the
//! repository spells them out (a second copy drifts, as two once did).

use std::path::{Path, PathBuf};

/// What only this crate may write, and what each one is.
const OWNED: &[(&str, &str)] = &[
    ("\"-cpu\"", "the emulated core on a QEMU command line (command::command)"),
    ("\"-semihosting-config\"", "the QEMU command line (command::command)"),
    ("\"-pthread\"", "the plugin's compile line (plugin::FLAGS)"),
    ("perf/profile.c\")", "the plugin's source (plugin::SOURCE)"),
    ("var_os(\"CARGO_TARGET_DIR\")", "the target-directory rule (target_dir::of)"),
    ("var(\"CARGO_TARGET_DIR\")", "the target-directory rule (target_dir::of)"),
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        if name == "target" || name == ".git" || name == "emulator" && p.parent().is_some_and(|d| d.ends_with("customop")) {
            continue;
        }
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_other_crate_builds_a_qemu_line_a_plugin_or_a_target_dir() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    sources(&repo, &mut files);
    assert!(files.len() > 100, "the repository's sources were not found from {}", repo.display());
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            for (pat, what) in OWNED {
                if line.contains(pat) {
                    found.push(format!("{}:{}: {what}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "use customop-emulator instead of writing these again:\n{}", found.join("\n"));
}

//! The project's own Python environment: a virtualenv under the target
//! directory (`python-venv/`) holding the pinned, hash-checked ziglang
//! (the emulated cores' C++ compiler) and NumPy (the docs' snippets), as
//! `xtask/python-requirements.txt` lists them. Setup never installs into
//! the machine's interpreter (no `--break-system-packages` over Debian's
//! guard), and pip there reads no configuration of the machine's or the
//! user's (`--isolated`): with `--require-hashes`, no index can hand over
//! other bytes. The commands run with `PYTHON` naming it (the variable
//! customop's device builds take), unless the caller set one.

use crate::{run, Result};
use std::path::PathBuf;
use std::process::Command;

/// The requirements, pinned with their hashes.
pub(crate) const REQUIREMENTS: &str = include_str!("../python-requirements.txt");

/// The virtualenv's directory.
pub(crate) fn dir() -> PathBuf {
    crate::xtask_target_base().join("python-venv")
}

/// Its interpreter.
pub(crate) fn python() -> PathBuf {
    dir().join("bin/python3")
}

/// Whether it is there with the pinned ziglang and NumPy in it.
pub(crate) fn ok() -> bool {
    let py = python();
    let zig = Command::new(&py).args(["-P", "-m", "ziglang", "version"]).current_dir("/").output();
    let zig_ok = zig.is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == crate::preflight::ZIGLANG_VERSION);
    zig_ok && Command::new(&py).args(["-P", "-c", "import numpy"]).current_dir("/").output().is_ok_and(|o| o.status.success())
}

/// The pip command that installs the requirements into the virtualenv.
fn pip_install(requirements: &std::path::Path) -> Command {
    let mut c = Command::new(python());
    c.args(["-P", "-m", "pip", "install", "--isolated", "--no-input", "--disable-pip-version-check", "--require-hashes", "--no-deps", "-r"])
        .arg(requirements)
        .current_dir("/");
    c
}

/// Makes the virtualenv (with the machine's `python3`) and installs the
/// requirements into it.
pub(crate) fn install() -> Result {
    if !python().is_file() {
        run(crate::preflight::python3().arg("-m").arg("venv").arg(dir()).current_dir("/"))?;
    }
    let reqs = tempfile::Builder::new().prefix("xtask-requirements-").suffix(".txt").tempfile().map_err(|e| format!("a temporary file: {e}"))?;
    std::fs::write(reqs.path(), REQUIREMENTS).map_err(|e| format!("{}: {e}", reqs.path().display()))?;
    run(&mut pip_install(reqs.path()))?;
    println!("xtask: ziglang and NumPy installed, hash-checked, into {} (PYTHON for the tools)", dir().display());
    Ok(())
}

/// Has the tools this process runs use the virtualenv's Python, unless
/// `PYTHON` is already set (a user's choice wins) or it is not there.
pub(crate) fn export() {
    if std::env::var_os("PYTHON").is_none() && python().is_file() {
        std::env::set_var("PYTHON", python());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_requirement_is_pinned_with_a_hash() {
        let mut text = REQUIREMENTS.lines().filter(|l| !l.trim_start().starts_with('#')).collect::<Vec<_>>().join("\n");
        text = text.replace("\\\n", " ");
        let reqs: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(reqs.len() >= 2, "{reqs:?}");
        for r in &reqs {
            let name = r.split_whitespace().next().unwrap();
            assert!(name.contains("=="), "{name}: pinned to one version");
            assert!(r.contains("--hash=sha256:"), "{name}: hash-checked");
        }
        assert!(reqs.iter().any(|r| r.starts_with(&format!("ziglang=={}", crate::preflight::ZIGLANG_VERSION))), "the verified ziglang");
    }

    #[test]
    fn pip_reads_no_configuration_and_takes_only_hashed_files() {
        let c = pip_install(std::path::Path::new("r.txt"));
        let args: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        for a in ["-P", "--isolated", "--require-hashes", "--no-deps"] {
            assert!(args.iter().any(|x| x == a), "{a}: {args:?}");
        }
        assert_eq!(c.get_program(), python().as_os_str());
    }
}

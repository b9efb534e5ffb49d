//! Running a Python module (`python -m ziglang ...`) without the working
//! directory on `sys.path`: `python -m` puts it first, so a `ziglang/`
//! folder in a shared project directory, in `/tmp` or in someone else's
//! checkout would run as the user instead of the package. Python 3.11 and
//! later have `-P` for exactly this; an older one runs the module through
//! a `-c` program that drops the working directory (the first entry)
//! before importing anything (`sys` is built in, found on no path). Not
//! `-I`: it also ignores `PYTHONPATH` and the user's site directory, where
//! `pip install --user ziglang` puts the package.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The arguments before the module's own that run `module` with no
/// working directory on `sys.path`, for Python `python`.
fn prefix(python: &Path, module: &str) -> Vec<String> {
    if has_safe_path_flag(python) {
        vec!["-P".into(), "-m".into(), module.into()]
    } else {
        vec!["-c".into(), format!("import sys; del sys.path[0]; import runpy; runpy.run_module({module:?}, run_name='__main__', alter_sys=True)")]
    }
}

/// `python -m module` (arguments to follow), run safely (see the module).
pub fn command(python: &Path, module: &str) -> Command {
    let mut c = Command::new(python);
    c.args(prefix(python, module));
    c
}

/// Whether `python` takes `-P` (asked once per Python, from `/`, where no
/// one else's module can be).
fn has_safe_path_flag(python: &Path) -> bool {
    static SEEN: Mutex<Vec<(PathBuf, bool)>> = Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, ok)) = seen.iter().find(|(p, _)| p == python) {
        return *ok;
    }
    let ok = Command::new(python).args(["-P", "-c", ""]).current_dir("/").output().is_ok_and(|o| o.status.success());
    seen.push((python.to_path_buf(), ok));
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `json/` package in the working directory shadows nothing: both
    /// forms import the standard library's.
    #[test]
    fn the_working_directory_is_not_on_the_path() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("json")).unwrap();
        std::fs::write(d.path().join("json/__init__.py"), "raise SystemExit('the planted json ran')").unwrap();
        std::fs::write(d.path().join("json/__main__.py"), "raise SystemExit('the planted json ran')").unwrap();
        std::fs::write(d.path().join("runpy.py"), "raise SystemExit('the planted runpy ran')").unwrap();
        let python = Path::new("python3");
        if Command::new(python).arg("-V").output().is_err() {
            return eprintln!("skipped: no python3");
        }
        for p in [
            prefix(python, "json.tool"),
            vec!["-c".into(), format!("import sys; del sys.path[0]; import runpy; runpy.run_module({:?}, run_name='__main__', alter_sys=True)", "json.tool")],
        ] {
            let mut c = Command::new(python);
            c.args(&p).current_dir(d.path()).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
            let mut child = c.spawn().unwrap();
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"[1, 2]").unwrap();
            let o = child.wait_with_output().unwrap();
            assert!(o.status.success(), "{p:?}: {}", String::from_utf8_lossy(&o.stderr));
            assert!(String::from_utf8_lossy(&o.stdout).contains('1'), "{p:?}");
        }
        // Unprotected, the planted package runs: the test can see it.
        let o = Command::new(python).args(["-m", "json.tool"]).current_dir(d.path()).stdin(std::process::Stdio::null()).output().unwrap();
        assert!(String::from_utf8_lossy(&o.stderr).contains("the planted json ran"));
    }
}

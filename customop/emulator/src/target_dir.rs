//! Where cargo puts a workspace's build output, as cargo itself decides
//! it: `$CARGO_TARGET_DIR` (a relative one is relative to the directory
//! cargo runs in), else the workspace's `target/`; the device builds
//! (`cargo xtask build-xtensa`: the Xtensa runtimes and images) go to its
//! `xtensa/` folder.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable that moves cargo's output.
pub const ENV: &str = "CARGO_TARGET_DIR";

/// The target directory of the workspace at `workspace` for a cargo run
/// in `cwd`, given the value of [`ENV`] (an empty value is unset).
pub fn resolve(workspace: &Path, cwd: &Path, env: Option<OsString>) -> PathBuf {
    match env {
        Some(d) if !d.is_empty() => {
            let d = PathBuf::from(d);
            if d.is_absolute() {
                d
            } else {
                cwd.join(d)
            }
        }
        _ => workspace.join("target"),
    }
}

/// [`resolve`] with this process's [`ENV`].
pub fn of(workspace: &Path, cwd: &Path) -> PathBuf {
    resolve(workspace, cwd, std::env::var_os(ENV))
}

/// The device builds' folder of the target directory `target`.
pub fn xtensa(target: &Path) -> PathBuf {
    target.join("xtensa")
}

/// Where the device build's crates land (`libcpp_qemu.a`, ...).
pub fn device_artifacts(target: &Path, release: bool) -> PathBuf {
    xtensa(target).join("xtensa-target").join(if release { "release" } else { "debug" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_moves_it_relative_to_where_cargo_runs() {
        let (ws, cwd) = (Path::new("/repo"), Path::new("/home/me/work"));
        assert_eq!(resolve(ws, cwd, None), Path::new("/repo/target"));
        assert_eq!(resolve(ws, cwd, Some("".into())), Path::new("/repo/target"));
        assert_eq!(resolve(ws, cwd, Some("/t".into())), Path::new("/t"));
        assert_eq!(resolve(ws, cwd, Some("out".into())), Path::new("/home/me/work/out"));
        assert_eq!(device_artifacts(Path::new("/t"), true), Path::new("/t/xtensa/xtensa-target/release"));
    }
}

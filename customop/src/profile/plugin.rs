//! The profile's TCG plugin (`perf/profile.c` and its check,
//! `perf/profile_check.h`, compiled into the tool):
//! built with the host's C compiler into the build directory's work
//! folder, once per source version, and loaded with QEMU's `-plugin`.

use crate::error::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The plugin's source.
pub const SOURCE: &str = include_str!("../../../perf/profile.c");
/// Its check's part (`#include`d by [`SOURCE`]).
pub const CHECK: &str = include_str!("../../../perf/profile_check.h");

/// The built plugin under `work` (built if missing or stale: its file
/// name carries the source's hash, so a changed source builds anew).
pub fn built(work: &Path) -> Result<PathBuf> {
    let dir = work.join("profile");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
    let hash = xxhash_rust::xxh3::xxh3_64(format!("{SOURCE}{CHECK}").as_bytes());
    let so = dir.join(format!("libcustomop_profile-{hash:016x}.so"));
    if so.exists() {
        return Ok(so);
    }
    let src = dir.join("profile.c");
    crate::atomic::write_if_changed(&dir.join("profile_check.h"), CHECK)?;
    crate::atomic::write_if_changed(&src, SOURCE)?;
    let tmp = crate::atomic::temp_in(&dir, "plugin-", ".so")?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out =
        Command::new(&cc).args(["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-pthread", "-o"]).arg(tmp.as_os_str()).arg(&src).output().map_err(|e| {
            Error::new(
                ErrorKind::Environment,
                format!("--profile builds a QEMU plugin with the C compiler `{cc}`: cannot run it: {e} (apt-get install gcc, or set CC)"),
            )
        })?;
    if !out.status.success() {
        return Err(Error::new(
            ErrorKind::Environment,
            format!("--profile: building the QEMU plugin {} with `{cc}` failed:\n{}", src.display(), String::from_utf8_lossy(&out.stderr)),
        ));
    }
    crate::atomic::persist(tmp, &so)?;
    Ok(so)
}

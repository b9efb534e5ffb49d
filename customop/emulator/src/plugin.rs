//! The TCG plugin behind `customop run --profile`, the emulated cores'
//! check and `cargo xtask perf` (`perf/profile.c` and its check's part,
//! `perf/profile_check.h`, compiled into the tools): built with the host's
//! C compiler (`$CC`, else `cc`) once per source version, and loaded with
//! QEMU's `-plugin` ([`crate::command::plugin`]).

use std::ffi::OsString;
use std::fmt;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The plugin's source.
pub const SOURCE: &str = include_str!("../../../perf/profile.c");
/// Its check's part (`#include`d by [`SOURCE`]).
pub const CHECK: &str = include_str!("../../../perf/profile_check.h");
/// How the plugin is compiled (before `-o OUT SOURCE`).
pub const FLAGS: [&str; 6] = ["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-pthread"];

/// Why the plugin could not be built; the message says what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError(pub String);

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BuildError {}

/// The C compiler the plugin is built with: `$CC`, else `cc`.
pub fn compiler() -> OsString {
    std::env::var_os("CC").filter(|c| !c.is_empty()).unwrap_or_else(|| "cc".into())
}

/// The plugin API version to build for QEMU `version`: 1 before QEMU 9.0,
/// 2 from 9.0 on (which refuses 1); QEMU before 4.2 has no plugins.
pub fn api_for(version: (u32, u32, u32)) -> Result<u32, BuildError> {
    match version {
        (major, minor, _) if (major, minor) < (4, 2) => Err(BuildError(format!(
            "{} {major}.{minor} has no TCG plugins, which the emulated cores' profile and check need; install QEMU {} \
             (Debian: apt-get install qemu-system-misc), or turn the check off with NEURON_QEMU_CHECK=0",
            crate::command::QEMU,
            crate::command::TESTED
        ))),
        (major, _, _) if major < 9 => Ok(1),
        _ => Ok(2),
    }
}

/// The plugin's file name: it carries the hash of the sources and of how
/// they are compiled (the API version included), so a changed source
/// builds anew.
pub fn file_name(cc: &OsString, api: u32) -> String {
    let mut key = format!("{SOURCE}\0{CHECK}\0{}\0{api}\0", FLAGS.join(" ")).into_bytes();
    key.extend_from_slice(cc.as_encoded_bytes());
    format!("libcustomop_profile-{:016x}.so", xxhash_rust::xxh3::xxh3_64(&key))
}

/// The built plugin in `dir` (made, private to the user, if missing) for
/// the QEMU on `PATH`, built first if it is not there. The sources are compiled in a fresh
/// private scratch directory and the result linked in under its final
/// name, which never replaces a file: a concurrent build's result (the
/// same bytes) is taken as it is.
pub fn built(dir: &Path) -> Result<PathBuf, BuildError> {
    let io = |what: &str, p: &Path, e: std::io::Error| BuildError(format!("the QEMU plugin: cannot {what} {}: {e}", p.display()));
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| io("create", dir, e))?;
    let version = crate::command::version().map_err(BuildError)?;
    let api = api_for(version)?;
    let cc = compiler();
    let so = dir.join(file_name(&cc, api));
    if so.is_file() {
        return Ok(so);
    }
    let scratch = tempfile::Builder::new().prefix(".plugin-").tempdir_in(dir).map_err(|e| io("make a scratch directory in", dir, e))?;
    for (name, text) in [("profile.c", SOURCE), ("profile_check.h", CHECK)] {
        let p = scratch.path().join(name);
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&p).map_err(|e| io("create", &p, e))?;
        f.write_all(text.as_bytes()).map_err(|e| io("write", &p, e))?;
    }
    let out = scratch.path().join("plugin.so");
    let src = scratch.path().join("profile.c");
    let ran = Command::new(&cc).args(FLAGS).arg(format!("-DPLUGIN_API={api}")).arg("-o").arg(&out).arg(&src).output().map_err(|e| {
        BuildError(format!(
            "the emulated cores' profile and check use a QEMU plugin built with the C compiler `{}`: cannot run it: {e} (apt-get install gcc, or set CC)",
            cc.to_string_lossy()
        ))
    })?;
    if !ran.status.success() {
        return Err(BuildError(format!(
            "building the QEMU plugin with `{}` failed:\n{}",
            cc.to_string_lossy(),
            String::from_utf8_lossy(&ran.stderr).trim_end()
        )));
    }
    match std::fs::hard_link(&out, &so) {
        Ok(()) => Ok(so),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && so.is_file() => Ok(so),
        Err(e) => Err(io("place the built plugin at", &so, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_follows_the_sources_and_the_compiler() {
        let a = file_name(&"cc".into(), 1);
        assert!(a.starts_with("libcustomop_profile-") && a.ends_with(".so"), "{a}");
        assert_eq!(a, file_name(&"cc".into(), 1));
        assert_ne!(a, file_name(&"clang".into(), 1));
        assert_ne!(a, file_name(&"cc".into(), 2));
    }

    #[test]
    fn each_qemu_gets_the_api_it_speaks() {
        assert_eq!(api_for((7, 2, 15)), Ok(1));
        assert_eq!(api_for((8, 2, 0)), Ok(1));
        assert_eq!(api_for((9, 0, 0)), Ok(2));
        assert_eq!(api_for((10, 0, 2)), Ok(2));
        let old = api_for((4, 1, 0)).unwrap_err().0;
        assert!(old.contains("no TCG plugins") && old.contains(crate::command::TESTED), "{old}");
    }

    #[test]
    fn a_file_already_at_the_name_is_used_and_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let api = api_for(crate::command::version().unwrap()).unwrap();
        let so = dir.path().join(file_name(&compiler(), api));
        std::fs::write(&so, b"not rebuilt").unwrap();
        assert_eq!(built(dir.path()).unwrap(), so);
        assert_eq!(std::fs::read(&so).unwrap(), b"not rebuilt");
    }

    #[test]
    fn it_builds_with_the_hosts_compiler_and_leaves_no_scratch() {
        let dir = tempfile::tempdir().unwrap();
        let so = built(dir.path()).expect("the host has a C compiler (cc)");
        assert!(std::fs::read(&so).unwrap().starts_with(b"\x7fELF"));
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, [so.file_name().unwrap().to_owned()], "only the plugin stays");
    }
}

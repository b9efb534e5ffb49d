//! The device runtime a C++ kernel links against: one Rust staticlib
//! holding `libneuroncustomop` for the platform and the board pieces the
//! image needs (two Rust staticlibs in one image would each carry `core`
//! and `compiler_builtins`). Both are crates of `kernels/`:
//!
//! - `cpp-fll` (`libcpp_fll.a`): the library for the Q7 platform table and
//!   the board's vector table, for the per-core FLL images;
//! - `cpp-qemu` (`libcpp_qemu.a`): the library for the QEMU platform
//!   table, the QEMU board and the runner of `customop run --on qemu`.
//!
//! They are built with `cargo xtask build-xtensa` (which owns the pinned
//! nightly and its flags); cargo makes that a no-op when nothing changed.
//! `CUSTOMOP_XTENSA_LIBS=DIR` names a directory holding both archives
//! instead (no build).

use crate::error::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment variable naming a directory with prebuilt archives.
pub const ENV_DIR: &str = "CUSTOMOP_XTENSA_LIBS";

/// Which device runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// The Q7 FLL images' (`cpp-fll`).
    Fll,
    /// The emulated cluster's (`cpp-qemu`).
    Qemu,
}

impl Runtime {
    /// The crate in `kernels/`.
    pub fn package(self) -> &'static str {
        match self {
            Self::Fll => "cpp-fll",
            Self::Qemu => "cpp-qemu",
        }
    }

    /// The archive's file name.
    pub fn archive(self) -> &'static str {
        match self {
            Self::Fll => "libcpp_fll.a",
            Self::Qemu => "libcpp_qemu.a",
        }
    }
}

/// The repository this tool was built from (where `kernels/` is).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Where `cargo xtask build-xtensa` puts release artifacts. It runs in
/// the repository's root (see [`archive`]), so a relative
/// `CARGO_TARGET_DIR` is relative to that root (customop-emulator's rule).
fn artifact_dir() -> PathBuf {
    let root = repo_root();
    customop_emulator::target_dir::device_artifacts(&customop_emulator::target_dir::of(&root, &root), true)
}

/// The archive of `r`: from [`ENV_DIR`], else built (or found current).
pub fn archive(r: Runtime) -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os(ENV_DIR) {
        let p = Path::new(&dir).join(r.archive());
        return if p.is_file() {
            Ok(p)
        } else {
            Err(Error::new(ErrorKind::Environment, format!("{ENV_DIR}={}: no {} there", Path::new(&dir).display(), r.archive())))
        };
    }
    let root = repo_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = root.join("kernels/Cargo.toml");
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(&root).args(["xtask", "build-xtensa", "--release", "--manifest-path"]).arg(&manifest).args(["-p", r.package()]);
    crate::progress::step(&format!(
        "building the device runtime {} for Xtensa with cargo (only when it changed; the first time takes about a minute)",
        r.package()
    ));
    crate::progress::detail(&format!("customop: {}", crate::compiler::shell_line(&cmd)));
    let out = cargo_with_progress(&mut cmd).map_err(|e| {
        Error::new(ErrorKind::Environment, format!("cannot run {} to build the device runtime {}: {e}", Path::new(&cargo).display(), r.package()))
    })?;
    if !out.status.success() {
        return Err(Error::new(
            ErrorKind::Environment,
            format!(
                "building the device runtime {} failed (`cargo xtask build-xtensa --release --manifest-path kernels/Cargo.toml -p {}`; \
                 it needs the Rust toolchain nightly-2026-10-15 with rust-src):\n{}",
                r.package(),
                r.package(),
                out.stderr
            ),
        ));
    }
    let p = artifact_dir().join(r.archive());
    if !p.is_file() {
        return Err(Error::new(ErrorKind::Environment, format!("the device runtime built, but {} is missing", p.display())));
    }
    Ok(p)
}

/// What cargo did: its status and its stderr.
struct Ran {
    status: std::process::ExitStatus,
    stderr: String,
}

/// Runs cargo with its stderr read line by line: each crate it compiles
/// is a progress step (how far the build is), every line a `-v` detail.
fn cargo_with_progress(cmd: &mut Command) -> std::io::Result<Ran> {
    use std::io::BufRead;
    cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn()?;
    let mut stderr = String::new();
    let mut crates = 0;
    if let Some(err) = child.stderr.take() {
        for line in std::io::BufReader::new(err).lines() {
            let line = line?;
            crate::progress::detail(&line);
            if let Some(what) = line.trim_start().strip_prefix("Compiling ") {
                crates += 1;
                if crate::progress::level() == crate::progress::Level::Steps {
                    crate::progress::step(&format!("  device runtime: crate {crates}: {what}"));
                }
            }
            stderr.push_str(&line);
            stderr.push('\n');
        }
    }
    Ok(Ran { status: child.wait()?, stderr })
}

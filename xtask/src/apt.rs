//! Debian packages, installed without ever removing one. apt may resolve a
//! dependency by removing what the user has (a newer `qemu-utils` from
//! backports breaks Debian 12's `qemu-system-common`, say), so its
//! simulation is asked first, and the install itself says `--no-remove`.
//!
//! `qemu-system-misc` has a way round such a conflict: only its
//! `qemu-system-xtensa` is needed, a program that no other package
//! shares. When installing the package would remove something, that
//! program is unpacked from the package's own `.deb` (`apt-get download`,
//! `dpkg-deb -x`) into `/usr/local/bin`, the libraries it links against
//! are installed with apt (under the same guard), and nothing is removed.

use crate::{run, Result};
use std::path::Path;
use std::process::Command;

/// The Debian package that carries `qemu-system-xtensa`.
pub(crate) const QEMU_PACKAGE: &str = "qemu-system-misc";
/// The one program of [`QEMU_PACKAGE`] the tools run.
pub(crate) const QEMU_PROGRAM: &str = customop_emulator::command::QEMU;
/// Where an unpacked [`QEMU_PROGRAM`] goes: on root's `PATH`, owned by no
/// package.
const LOCAL_BIN: &str = "/usr/local/bin";

/// Installs `pkgs` (without recommends), never removing a package: when
/// apt would remove one, stops naming it and the command the user could
/// run themselves; `qemu-system-misc` is then unpacked instead.
pub(crate) fn install(pkgs: &[&str]) -> Result {
    run(Command::new("apt-get").args(["update", "-qq"]))?;
    let (qemu, rest): (Vec<&str>, Vec<&str>) = pkgs.iter().partition(|p| **p == QEMU_PACKAGE);
    if !rest.is_empty() {
        if let Some(removed) = install_checked(&rest)? {
            return Err(refusal(&rest, &removed));
        }
    }
    if !qemu.is_empty() {
        if let Some(removed) = install_checked(&qemu)? {
            eprintln!(
                "xtask: installing {QEMU_PACKAGE} would remove {} (apt resolves a conflict that way); unpacking its {QEMU_PROGRAM} into {LOCAL_BIN} instead",
                removed.join(", ")
            );
            unpack_qemu(&removed)?;
        }
    }
    Ok(())
}

/// Installs `pkgs` unless apt's simulation removes something: then
/// nothing is done and the packages it would remove are returned.
fn install_checked(pkgs: &[&str]) -> Result<Option<Vec<String>>> {
    let sim = Command::new("apt-get").args(apt_args(pkgs, true)).output().map_err(|e| format!("apt-get: {e}"))?;
    let removed = removals(&String::from_utf8_lossy(&sim.stdout));
    if !removed.is_empty() {
        return Ok(Some(removed));
    }
    run(Command::new("apt-get").env("DEBIAN_FRONTEND", "noninteractive").args(apt_args(pkgs, false)))?;
    Ok(None)
}

/// What is said when installing `pkgs` would remove `removed`.
fn refusal(pkgs: &[&str], removed: &[String]) -> String {
    let pkgs = pkgs.join(" ");
    format!(
        "installing {pkgs} would remove {} (apt resolves a conflict that way); nothing was installed or removed.\n\
         If you accept that, run as root: apt-get install --no-install-recommends {pkgs}\n\
         or install versions of {pkgs} that do not conflict, then run the command again.",
        removed.join(", ")
    )
}

/// apt-get's arguments to install `pkgs`, never with recommends: the
/// install with `--no-remove`; its dry run (`simulate`) without it, so
/// that apt lists what it would remove (`Remv` lines) instead of stopping.
fn apt_args<'a>(pkgs: &[&'a str], simulate: bool) -> Vec<&'a str> {
    let mut a = if simulate { vec!["install", "--simulate", "-qq"] } else { vec!["install", "-y", "-qq", "--no-remove"] };
    a.push("--no-install-recommends");
    a.extend_from_slice(pkgs);
    a
}

/// The packages an `apt-get --simulate` transcript removes (its `Remv
/// NAME [version]` lines).
fn removals(transcript: &str) -> Vec<String> {
    let mut v: Vec<String> =
        transcript.lines().filter_map(|l| l.strip_prefix("Remv ")).filter_map(|r| r.split_whitespace().next()).map(str::to_owned).collect();
    v.sort();
    v.dedup();
    v
}

/// [`QEMU_PROGRAM`] from [`QEMU_PACKAGE`]'s `.deb`, into [`LOCAL_BIN`]
/// (written under a temporary name, linked in only where no file is),
/// with the libraries the package depends on that the machine lacks.
/// `removed`: what installing the package would have removed.
fn unpack_qemu(removed: &[String]) -> Result {
    let target = Path::new(LOCAL_BIN).join(QEMU_PROGRAM);
    if target.symlink_metadata().is_ok() {
        return Err(format!(
            "{} exists but is not a program on PATH; installing {QEMU_PACKAGE} would remove {}. Move it away, or make it qemu-system-xtensa 7.2 or newer, then run the command again",
            target.display(),
            removed.join(", ")
        ));
    }
    let on_path = std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d == Path::new(LOCAL_BIN)));
    if !on_path {
        return Err(format!(
            "installing {QEMU_PACKAGE} would remove {}, and {LOCAL_BIN} (where its {QEMU_PROGRAM} would be unpacked instead) is not on PATH",
            removed.join(", ")
        ));
    }
    let work = tempfile::Builder::new().prefix("xtask-qemu-").tempdir().map_err(|e| format!("a scratch directory: {e}"))?;
    let version = unpack_qemu_in(work.path(), &target, &[])?;
    println!(
        "xtask: {QEMU_PROGRAM} {version} unpacked from {QEMU_PACKAGE}'s package as {} (its libraries installed with apt); {} kept, nothing removed. To undo: rm {}",
        target.display(),
        removed.join(", "),
        target.display()
    );
    Ok(())
}

/// [`unpack_qemu`]'s steps in the scratch directory `work`, with apt
/// options `apt_opts` (another package list): the package's version.
pub(crate) fn unpack_qemu_in(work: &Path, target: &Path, apt_opts: &[String]) -> Result<String> {
    // Downloading a package installs and removes nothing. As root into a
    // directory only root may write (apt's own user `_apt` could not: apt
    // would fall back to root with a warning).
    run(Command::new("apt-get").current_dir(work).args(["-o", "APT::Sandbox::User=root"]).args(apt_opts).args(["download", "-qq", QEMU_PACKAGE]))?;
    let deb = std::fs::read_dir(work)
        .map_err(|e| format!("{}: {e}", work.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .ok_or_else(|| format!("apt-get download {QEMU_PACKAGE} left no .deb in {}", work.display()))?;
    let field = |name: &str| -> Result<String> {
        let o = Command::new("dpkg-deb").arg("-f").arg(&deb).arg(name).output().map_err(|e| format!("dpkg-deb: {e}"))?;
        if !o.status.success() {
            return Err(format!("dpkg-deb -f {} {name}: {}", deb.display(), String::from_utf8_lossy(&o.stderr).trim()));
        }
        Ok(String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let libs: Vec<String> = library_depends(&field("Depends")?).into_iter().filter(|p| !installed(p)).collect();
    if !libs.is_empty() {
        let libs: Vec<&str> = libs.iter().map(String::as_str).collect();
        if let Some(removed) = install_checked(&libs)? {
            return Err(refusal(&libs, &removed));
        }
    }
    let root = work.join("root");
    run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root))?;
    place(&root.join("usr/bin").join(QEMU_PROGRAM), target)?;
    field("Version")
}

/// Copies `program` to `target` through a fresh temporary beside it (the
/// program's mode copied with its bytes), linked in only if nothing is
/// at `target` by then: a file, link, device or FIFO there stays as it is.
fn place(program: &Path, target: &Path) -> Result {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = customop_outpath::temp_in(dir, &format!(".{name}."), ".tmp").map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::copy(program, &tmp).map_err(|e| format!("{} to {}: {e}", program.display(), tmp.display()))?;
    tmp.persist_noclobber(target).map_err(|e| format!("{}: {}", target.display(), e.error))
}

/// The packages of a `Depends:` field that are not QEMU's own (those are
/// what conflicts; the program needs only their libraries): the first of
/// each set of alternatives, without version or architecture.
fn library_depends(depends: &str) -> Vec<String> {
    depends
        .split(',')
        .filter_map(|d| d.split('|').next())
        .map(|d| d.split(['(', ':']).next().unwrap_or("").trim().to_owned())
        .filter(|d| !d.is_empty() && !d.starts_with("qemu-"))
        .collect()
}

/// Whether Debian package `pkg` is installed.
fn installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${db:Status-Abbrev}", pkg])
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).starts_with("ii"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_apt_call_can_remove_a_package() {
        let install = apt_args(&["qemu-system-misc"], false);
        assert_eq!(install, ["install", "-y", "-qq", "--no-remove", "--no-install-recommends", "qemu-system-misc"]);
        // The dry run changes nothing and lists removals instead of stopping.
        let dry = apt_args(&["qemu-system-misc"], true);
        assert!(dry.contains(&"--simulate") && !dry.contains(&"-y"), "{dry:?}");
        // The only apt-get calls are the update, the dry run, the install
        // after it, and the download (which installs nothing).
        let src = include_str!("apt.rs");
        let calls = src.matches(concat!("Command::new(\"apt", "-get\")")).count();
        assert_eq!(calls, 4, "a new apt-get call must go through install_checked");
        let other = include_str!("preflight.rs").matches(concat!("\"apt", "-get\"")).count();
        assert_eq!(other, 0, "preflight installs through apt::install");
    }

    #[test]
    fn a_removal_in_apt_simulation_is_found() {
        // `apt-get install --simulate -qq` as it prints (Debian 12).
        let t = "Remv qemu-utils [1:10.0.2+ds-1~bpo12+1]\nInst qemu-system-misc (1:7.2+dfsg-7+deb12u18 Debian:12.12/stable [amd64])\nConf qemu-system-misc (1:7.2+dfsg-7+deb12u18 Debian:12.12/stable [amd64])\n";
        assert_eq!(removals(t), ["qemu-utils"]);
        assert!(removals("Inst qemu-system-misc (1:7.2 Debian [amd64])\nConf qemu-system-misc\n").is_empty());
        let msg = refusal(&["chromium"], &removals(t));
        assert!(msg.contains("would remove qemu-utils") && msg.contains("nothing was installed or removed"), "{msg}");
    }

    #[test]
    fn the_unpacked_qemu_needs_the_packages_libraries_not_qemus_own() {
        // qemu-system-misc's Depends on Debian 12 (shortened), with an
        // alternative and an architecture qualifier added.
        let d = "libaio1 (>= 0.3.93), libc6 (>= 2.34), libcapstone4 (>= 4), libfdt1 (>= 1.6.1), libslirp0 (>= 4.7.0), \
                 zlib1g (>= 1:1.2.0), qemu-system-common (= 1:7.2+dfsg-7+deb12u18+b3), qemu-system-data (>> 1:7.2+dfsg~), \
                 libjpeg62-turbo | libjpeg8, python3:any";
        assert_eq!(library_depends(d), ["libaio1", "libc6", "libcapstone4", "libfdt1", "libslirp0", "zlib1g", "libjpeg62-turbo", "python3"]);
    }

    #[test]
    fn the_program_is_placed_only_where_nothing_is() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("prog");
        std::fs::write(&program, b"\x7fELF program").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        // A new path: the program, executable, and no temporary left.
        let fresh = bin.join("qemu-system-xtensa");
        place(&program, &fresh).unwrap();
        assert_eq!(std::fs::read(&fresh).unwrap(), b"\x7fELF program");
        assert_eq!(std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o755);
        assert_eq!(std::fs::read_dir(&bin).unwrap().count(), 1, "a temporary was left");
        // A regular file, a symlink (to a file of the user's) and a FIFO
        // already there stay what they were.
        let file = bin.join("file");
        std::fs::write(&file, b"mine").unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"linked").unwrap();
        let link = bin.join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let fifo = bin.join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path it is given.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for p in [&file, &link, &fifo] {
            assert!(place(&program, p).is_err(), "{} was replaced", p.display());
        }
        assert_eq!(std::fs::read(&file).unwrap(), b"mine");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"linked");
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(std::fs::read_dir(&bin).unwrap().count(), 4, "a temporary was left");
    }

    #[test]
    fn an_installed_package_is_told_from_a_missing_one() {
        // dpkg is what every Debian machine has; no package has this name.
        if Path::new("/var/lib/dpkg/status").exists() {
            assert!(installed("dpkg"));
            assert!(!installed("surely-no-such-package-xtask"));
        }
    }
}

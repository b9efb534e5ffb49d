//! The QEMU command line of every emulated run: the tests, the main job,
//! `cargo xtask qemu-run` and `perf`, `customop run --on qemu`, its
//! profile and its check all start QEMU through [`command`], so a flag
//! every run needs cannot be forgotten in one of them.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

/// The emulator (Debian: `qemu-system-misc`).
pub const QEMU: &str = "qemu-system-xtensa";

/// The emulated core: windowed registers, 32 address registers and
/// relocatable vectors, the options the device code is built for; one
/// that QEMU 7.2 and 10.0 both ship.
pub const CPU: &str = "de212";

/// What installs [`QEMU`], for messages.
pub const QEMU_INSTALL: &str = "apt-get install qemu-system-misc";

/// The QEMU versions the emulated runs, their profile and their check are
/// tested with (Debian 12's and its backports').
pub const TESTED: &str = "7.2 and 10.0";

/// The version of the [`QEMU`] on `PATH` (major, minor, micro), asked once
/// per process.
pub fn version() -> Result<(u32, u32, u32), String> {
    static ASKED: std::sync::OnceLock<Result<(u32, u32, u32), String>> = std::sync::OnceLock::new();
    ASKED
        .get_or_init(|| {
            let out = Command::new(QEMU).arg("--version").output().map_err(|e| format!("cannot run {QEMU}: {e} ({QEMU_INSTALL})"))?;
            let text = String::from_utf8_lossy(&out.stdout);
            parse_version(&text).ok_or_else(|| format!("{QEMU} --version printed no version this tool can read: {:?}", text.lines().next().unwrap_or("")))
        })
        .clone()
}

/// The version in `qemu-system-* --version`'s first line
/// (`QEMU emulator version 10.0.2 (Debian ...)`).
pub fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let rest = text.lines().next()?.split("version ").nth(1)?;
    let word = rest.split_whitespace().next()?;
    let mut parts = word.split('.').map(|p| p.trim_end_matches(|c: char| !c.is_ascii_digit()).parse::<u32>().ok());
    Some((parts.next()??, parts.next().flatten().unwrap_or(0), parts.next().flatten().unwrap_or(0)))
}

/// The machine a run on `cores` cores uses: `sim` for one core, `virt`
/// (the cluster board, up to 8 cores) for several.
pub fn machine_for(cores: u32) -> &'static str {
    if cores == 1 {
        "sim"
    } else {
        "virt"
    }
}

/// `s` as one item of a QEMU option list (`-semihosting-config`,
/// `-device`, `-plugin` are comma-separated: a literal comma is doubled).
pub fn escape(s: &str) -> String {
    s.replace(',', ",,")
}

/// `qemu-system-xtensa` for `image` on `machine` with `cores` cores and
/// semihosting; the guest's argv is `image cpus=N guest_args...`. The
/// caller adds a loaded file ([`load`]), a plugin ([`plugin`]) and the
/// stdio set-up.
pub fn command(image: &Path, machine: &str, cores: u32, guest_args: &[String]) -> Command {
    let mut semi = String::from("enable=on,target=native");
    for a in [image.display().to_string(), format!("cpus={cores}")].iter().chain(guest_args) {
        semi.push_str(",arg=");
        semi.push_str(&escape(a));
    }
    let mut cmd = Command::new(QEMU);
    cmd.args(["-M", machine, "-cpu", CPU, "-smp", &cores.to_string()])
        // No network: `-M virt` otherwise creates a virtio NIC whose option
        // ROM (efi-virtio.rom) comes from `ipxe-qemu`, only a *recommended*
        // package of qemu-system-misc, so QEMU fails at start on a machine
        // installed with --no-install-recommends. Nothing in a run may
        // reach out either.
        .args(["-nic", "none"])
        // `-serial stdio`: QEMU sends semihosting writes (fd 1 and 2) to
        // the first serial chardev, so every core's lines arrive in order
        // on stdout.
        .args(["-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot"])
        .args(["-semihosting-config", &semi])
        .arg("-kernel")
        .arg(image);
    cmd
}

/// Has QEMU load `file` raw at guest address `addr` before the cores start.
pub fn load(cmd: &mut Command, file: &Path, addr: u64) {
    cmd.arg("-device").arg(format!("loader,file={},addr=0x{addr:x},force-raw=on", escape(&file.display().to_string())));
}

/// Has QEMU load the TCG plugin `spec` (`lib.so,arg=value,...`, its
/// items escaped with [`escape`]).
pub fn plugin(cmd: &mut Command, spec: &OsStr) {
    cmd.arg("-plugin").arg(spec);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(c: &Command) -> Vec<String> {
        c.get_args().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn every_machine_runs_without_a_nic_on_the_one_core() {
        for m in ["sim", "virt"] {
            let a = args(&command(Path::new("x.elf"), m, 8, &[]));
            assert!(a.windows(2).any(|w| w == ["-nic", "none"]), "{m}: {a:?}");
            assert!(a.windows(2).any(|w| w == ["-cpu", CPU]), "{m}: {a:?}");
            assert!(a.windows(2).any(|w| w == ["-M", m]), "{m}: {a:?}");
        }
        assert_eq!((machine_for(1), machine_for(2), machine_for(8)), ("sim", "virt", "virt"));
    }

    #[test]
    fn versions_are_read_from_the_first_line() {
        assert_eq!(parse_version("QEMU emulator version 7.2.15 (Debian 1:7.2+dfsg-7+deb12u18)\nCopyright"), Some((7, 2, 15)));
        assert_eq!(parse_version("QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)"), Some((10, 0, 2)));
        assert_eq!(parse_version("QEMU emulator version 9.1.0-rc1"), Some((9, 1, 0)));
        assert_eq!(parse_version("something else"), None);
    }

    #[test]
    fn guest_arguments_and_loaded_files_escape_commas() {
        let mut c = command(Path::new("x.elf"), "sim", 1, &["a,b".into()]);
        let a = args(&c);
        let semi = a.iter().position(|x| x == "-semihosting-config").map(|i| &a[i + 1]).unwrap();
        assert_eq!(semi, "enable=on,target=native,arg=x.elf,arg=cpus=1,arg=a,,b");
        load(&mut c, Path::new("/w/in,v.bin"), 0x6000_0000);
        plugin(&mut c, OsStr::new("p.so,arg=1"));
        let a = args(&c);
        assert!(a.windows(2).any(|w| w == ["-device", "loader,file=/w/in,,v.bin,addr=0x60000000,force-raw=on"]), "{a:?}");
        assert!(a.windows(2).any(|w| w == ["-plugin", "p.so,arg=1"]), "{a:?}");
    }
}

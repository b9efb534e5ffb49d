//! The one place a QEMU command line is built: every run (tests, the main
//! job, `qemu-run`, the perf counts) goes through [`command`], so a flag
//! every run needs cannot be forgotten in one of them.

use crate::Result;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) const QEMU: &str = "qemu-system-xtensa";
/// Windowed, 32 address registers, relocatable vectors (TOOLCHAIN.md).
pub(crate) const QEMU_CPU: &str = "de212";

/// `qemu-system-xtensa` for `elf` on `machine` with `smp` cores and
/// semihosting; the guest's argv is `elf cpus=N guest_args...`. The caller
/// adds what is particular to it (a plugin) and the stdio set-up.
pub(crate) fn command(elf: &Path, machine: &str, smp: u32, guest_args: &[String]) -> Command {
    // `-semihosting-config` is comma-separated; a literal comma is doubled.
    let mut semi = String::from("enable=on,target=native");
    for a in [elf.display().to_string(), format!("cpus={smp}")].iter().chain(guest_args) {
        semi.push_str(",arg=");
        semi.push_str(&a.replace(',', ",,"));
    }
    let mut cmd = Command::new(QEMU);
    cmd.args(["-M", machine, "-cpu", QEMU_CPU, "-smp", &smp.to_string()])
        // No network: `-M virt` otherwise creates a virtio NIC whose option
        // ROM (efi-virtio.rom) comes from `ipxe-qemu`, only a *recommended*
        // package of qemu-system-misc, so QEMU fails at start on a machine
        // installed with --no-install-recommends. The cores need no NIC.
        .args(["-nic", "none"])
        // `-serial stdio`: QEMU 7.2 sends semihosting writes (fd 1 and 2)
        // to the first serial chardev, so all guest output arrives in
        // order on stdout.
        .args(["-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot"])
        .args(["-semihosting-config", &semi])
        .arg("-kernel")
        .arg(elf);
    cmd
}

pub struct RunOutcome {
    /// Guest exit status (QEMU's exit code); `None` on timeout or signal.
    pub status: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Run `elf` on QEMU with semihosting; guest argv = `elf cpus=N extra...`.
/// Output is echoed and captured.
pub fn qemu_run(elf: &Path, machine: &str, smp: u32, timeout: Duration, extra: &[String]) -> Result<RunOutcome> {
    let mut cmd = command(elf, machine, smp, extra);
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    eprintln!("xtask: running {cmd:?} (timeout {}s)", timeout.as_secs_f32());
    let mut child = cmd.spawn().map_err(|e| format!("{QEMU}: {e}"))?;
    let pump = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut all = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                all.extend_from_slice(&buf[..n]);
                let _ = std::io::stderr().lock().write_all(&buf[..n]);
            }
            String::from_utf8_lossy(&all).into_owned()
        })
    };
    let out_t = pump(Box::new(child.stdout.take().expect("piped")));
    let err_t = pump(Box::new(child.stderr.take().expect("piped")));
    let start = Instant::now();
    let (status, timed_out) = loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break (st.code(), false);
        }
        if start.elapsed() >= timeout {
            let _ = child.kill();
            let _ = child.wait();
            break (None, true);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    if timed_out {
        eprintln!("xtask: TIMEOUT after {}s: QEMU killed", timeout.as_secs_f32());
    }
    Ok(RunOutcome { status, timed_out, stdout, stderr })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(c: &Command) -> Vec<String> {
        c.get_args().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn every_machine_runs_without_a_nic() {
        for m in ["sim", "virt"] {
            let a = args(&command(Path::new("x.elf"), m, 8, &[]));
            assert!(a.windows(2).any(|w| w == ["-nic", "none"]), "{m}: {a:?}");
        }
    }

    #[test]
    fn guest_arguments_escape_commas() {
        let a = args(&command(Path::new("x.elf"), "sim", 1, &["a,b".into()]));
        let semi = a.iter().position(|x| x == "-semihosting-config").map(|i| &a[i + 1]).unwrap();
        assert_eq!(semi, "enable=on,target=native,arg=x.elf,arg=cpus=1,arg=a,,b");
    }
}

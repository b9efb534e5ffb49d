//! xtask's QEMU runs (tests, the main job, `qemu-run`, the perf counts):
//! the command line is customop-emulator's, the one every run uses.

use crate::Result;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) use customop_emulator::command::QEMU;

/// `qemu-system-xtensa` for `elf` on `machine` with `smp` cores and
/// semihosting (customop-emulator's one command line); the guest's argv
/// is `elf cpus=N guest_args...`.
pub(crate) fn command(elf: &Path, machine: &str, smp: u32, guest_args: &[String]) -> Command {
    customop_emulator::command::command(elf, machine, smp, guest_args)
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

//! Running a `--target qemu` image on the emulated cluster: QEMU with the
//! invocation file loaded into hbm_scratch ([`crate::qemu_blob`]), the
//! runner's lines parsed back (per-core status, printf entries, the output
//! as hex). One core runs on machine `sim`, several on `virt` (what
//! `cargo xtask qemu-run` uses), always `-nic none` (no network device:
//! nothing in a run may reach out).

use crate::error::{Error, ErrorKind, Result};
use crate::qemu_blob::{Blob, AREA_NX};
use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use customop_emulator::command::{QEMU, QEMU_INSTALL};
use customop_emulator::sandbox::Confinement;

/// Seconds a run may take (`CUSTOMOP_QEMU_TIMEOUT` overrides).
pub const DEFAULT_TIMEOUT: u64 = 120;
/// A TCG plugin for the run: the value is QEMU's `-plugin` argument
/// (`lib.so,arg=...`). How `cargo xtask perf` counts the instructions of a
/// C++ kernel (`perf/profile.c` with `marks=FILE`); the plugin's messages
/// go to the file named by [`PLUGIN_LOG_ENV`].
pub const PLUGIN_ENV: &str = "CUSTOMOP_QEMU_PLUGIN";
/// The plugin's log (`-d plugin -D FILE`), required with [`PLUGIN_ENV`].
pub const PLUGIN_LOG_ENV: &str = "CUSTOMOP_QEMU_PLUGIN_LOG";
/// More QEMU arguments, separated by whitespace: how tests/exact_count.rs
/// has QEMU log every instruction it runs (`-singlestep -d exec,nochain
/// -D FILE`), the count the plugin's is checked against.
pub const ARGS_ENV: &str = "CUSTOMOP_QEMU_ARGS";

/// One core's result as the runner printed it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreRun {
    /// The core.
    pub cpu: u32,
    /// What the launcher returned.
    pub returned: i32,
    /// `customop_status()` after the call (first marshalling failure).
    pub status: i32,
    /// `neuron_last_error()` after the call.
    pub last_error: i32,
    /// The core's printf entries.
    pub printf: Vec<String>,
}

impl CoreRun {
    /// The run status as the simulator computes it: the marshalling
    /// status, else the launcher's result.
    pub fn code(&self) -> i32 {
        if self.status != 0 {
            self.status
        } else {
            self.returned.abs()
        }
    }
}

/// What a QEMU run gave.
#[derive(Clone, Debug)]
pub struct QemuRun {
    /// Per core, by core number.
    pub cores: Vec<CoreRun>,
    /// The output's bytes.
    pub output: Vec<u8>,
    /// The check's verdict (`crate::device_check`): the first finding's
    /// code and every finding in words.
    pub check: Option<(i32, String)>,
}

impl QemuRun {
    /// 0 if every core succeeded and the check found nothing, else the
    /// check's code (a finding explains what follows from it), else the
    /// first failing core's code.
    pub fn code(&self) -> i32 {
        self.check.as_ref().map(|c| c.0).unwrap_or_else(|| self.cores.iter().map(CoreRun::code).find(|c| *c != 0).unwrap_or(0))
    }

    /// The per-core report: status and printf output.
    pub fn report(&self) -> String {
        let mut s = String::new();
        for c in &self.cores {
            s.push_str(&format!("qemu core {}: returned {}, status {}, last error {}\n", c.cpu, c.returned, c.status, c.last_error));
            for l in &c.printf {
                s.push_str(&format!("  printf: {l}\n"));
            }
        }
        if let Some((_, words)) = &self.check {
            s.push_str(words);
            s.push('\n');
        }
        s
    }
}

fn env_error(msg: String) -> Error {
    Error::new(ErrorKind::Environment, msg)
}

/// Runs `image` on `cores` emulated cores with `blob` loaded (from a
/// fresh private file in `dir`, removed after the run). `bound`:
/// the user's time bound and the option that gave it (`--timeout`,
/// `timeout=`), a [`ErrorKind::TimedOut`] when passed; without it,
/// `CUSTOMOP_QEMU_TIMEOUT` (or [`DEFAULT_TIMEOUT`]) seconds.
/// `plugin`: a `-plugin` value (`--profile`'s, or the check's), which
/// takes the place of [`PLUGIN_ENV`]'s, and the files it uses. QEMU runs
/// confined to them, the image and the invocation (its semihosting would
/// otherwise give the kernel the user's files), except under the
/// maintainers' hooks [`PLUGIN_ENV`] and [`ARGS_ENV`], whose files only
/// they know; `check`: the check's findings
/// file and op, read after the run (a finding is the run's verdict, also
/// when the run then crashed).
pub fn run(
    image: &Path,
    blob: &Blob,
    dir: &Path,
    cores: u32,
    bound: Option<(Duration, &str)>,
    plugin: Option<(&str, Confinement)>,
    check: Option<(&Path, &str)>,
) -> Result<QemuRun> {
    // The invocation holds the input tensors: a fresh file only this user
    // can read, created exclusively (never a name someone else could have
    // made first or linked elsewhere), gone when the run ends.
    let mut blob_file = tempfile::Builder::new().prefix("invocation-").suffix(".bin").tempfile_in(dir).map_err(|e| Error::io("create a file in", dir, e))?;
    std::io::Write::write_all(&mut blob_file, &blob.bytes).map_err(|e| Error::io("write", blob_file.path(), e))?;
    let default = Duration::from_secs(std::env::var("CUSTOMOP_QEMU_TIMEOUT").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_TIMEOUT));
    let timeout = bound.map_or(default, |(d, _)| d);
    let mut cmd = customop_emulator::command::command(image, customop_emulator::command::machine_for(cores), cores, &[]);
    customop_emulator::command::load(&mut cmd, blob_file.path(), AREA_NX);
    let mut files = Confinement::new();
    let hooked = std::env::var_os(ARGS_ENV).is_some() || (plugin.is_none() && std::env::var_os(PLUGIN_ENV).is_some());
    if let Some((p, theirs)) = plugin {
        customop_emulator::command::plugin(&mut cmd, p.as_ref());
        files = theirs;
    } else if let Some(plugin) = std::env::var_os(PLUGIN_ENV) {
        let log = std::env::var_os(PLUGIN_LOG_ENV).ok_or_else(|| env_error(format!("{PLUGIN_ENV} is set but {PLUGIN_LOG_ENV} (its log file) is not")))?;
        customop_emulator::command::plugin(&mut cmd, &plugin);
        cmd.args(["-d", "plugin", "-D"]).arg(log);
    }
    if let Some(more) = std::env::var_os(ARGS_ENV) {
        cmd.args(more.to_string_lossy().split_whitespace());
    }
    if !hooked {
        files.read(image).read(blob_file.path());
        let enforced = files.apply(&mut cmd).map_err(env_error)?;
        if enforced == customop_emulator::sandbox::Enforced::None {
            // Said once a process: the run goes on, but not silently.
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                eprintln!(
                    "customop: note: this Linux kernel has no Landlock, so the emulated cores' runs are not confined: a kernel's semihosting calls reach your files (`customop env` shows it)"
                )
            });
        }
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| env_error(format!("cannot run {QEMU}: {e} ({QEMU_INSTALL})")))?;
    let pump = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut v);
            }
            String::from_utf8_lossy(&v).into_owned()
        })
    };
    let out_t = pump(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let err_t = pump(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| env_error(format!("waiting for {QEMU}: {e}")))? {
            break Some(st);
        }
        if start.elapsed() >= timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    let all = format!("{stdout}{stderr}");
    let Some(status) = status else {
        return Err(match bound {
            Some((d, option)) => Error::new(
                ErrorKind::TimedOut,
                format!("the emulated run did not finish within {option} {} s and was stopped; its output:\n{all}", d.as_secs_f64()),
            ),
            None => Error::new(
                ErrorKind::RunFailed,
                format!("the emulated run did not finish in {} s (CUSTOMOP_QEMU_TIMEOUT; --timeout sets a bound); its output:\n{all}", timeout.as_secs()),
            ),
        });
    };
    let parsed = parse(&stdout, cores, blob.out_bytes);
    let verdict = match check {
        Some((file, op)) => checked(image, file, op)?,
        None => None,
    };
    match (status.code(), parsed) {
        (Some(0), Ok(r)) => Ok(QemuRun { check: verdict, ..r }),
        // A finding explains a run that then failed (an overflowing stack
        // tramples what lies below it): the finding is the verdict.
        (_, parsed) if verdict.is_some() => {
            let mut r = parsed.unwrap_or_else(|_| QemuRun { cores: Vec::new(), output: Vec::new(), check: None });
            r.check = verdict.map(|(c, w)| (c, format!("{w}\nthe emulated run's output:\n{all}")));
            Ok(r)
        }
        (Some(0), Err(why)) => Err(Error::new(ErrorKind::RunFailed, format!("the emulated run's output is incomplete: {why}; its output:\n{all}"))),
        (code, _) => Err(Error::new(
            ErrorKind::RunFailed,
            format!(
                "the emulated run failed (QEMU exit status {code:?}: 101 panic, 102 exception, 103 abort, 1 runner error); its output:\n{all}{}",
                crate::device_fault::explain(image, &all)
            ),
        )),
    }
}

fn hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// Parses the runner's lines (other lines are ignored).
pub fn parse(stdout: &str, cores: u32, out_bytes: u64) -> std::result::Result<QemuRun, String> {
    let mut runs: Vec<Option<CoreRun>> = vec![None; cores as usize];
    let mut printf: Vec<Vec<String>> = vec![Vec::new(); cores as usize];
    let mut output = Vec::new();
    let mut done = false;
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("customop-core ") {
            let w: Vec<&str> = rest.split_whitespace().collect();
            let num = |i: usize| w.get(i).and_then(|v| v.trim_end_matches(':').parse::<i64>().ok());
            match (num(0), num(2), num(4), num(6)) {
                (Some(c), Some(r), Some(s), Some(e)) if (c as usize) < runs.len() => {
                    runs[c as usize] = Some(CoreRun { cpu: c as u32, returned: r as i32, status: s as i32, last_error: e as i32, printf: Vec::new() })
                }
                _ => return Err(format!("malformed line `{line}`")),
            }
        } else if let Some(rest) = line.strip_prefix("customop-printf ") {
            let (c, text) = rest.split_once(": ").unwrap_or((rest.trim_end_matches(':'), ""));
            if let Some(p) = c.parse::<usize>().ok().and_then(|c| printf.get_mut(c)) {
                p.push(text.to_owned());
            }
        } else if let Some(rest) = line.strip_prefix("customop-out ") {
            let (off, h) = rest.split_once(' ').ok_or_else(|| format!("malformed line `{line}`"))?;
            if off.parse::<usize>().ok() != Some(output.len()) {
                return Err(format!("output chunk at {off}, expected {}", output.len()));
            }
            output.extend(hex(h).ok_or_else(|| format!("malformed hex in `{line}`"))?);
        } else if line == "customop-done" {
            done = true;
        } else if line.starts_with("customop-error") {
            return Err(line.to_owned());
        }
    }
    if !done {
        return Err("no customop-done line".into());
    }
    if output.len() as u64 != out_bytes {
        return Err(format!("{} output bytes, expected {out_bytes}", output.len()));
    }
    let mut cores_out = Vec::new();
    for (i, r) in runs.into_iter().enumerate() {
        let mut r = r.ok_or_else(|| format!("no status line of core {i}"))?;
        r.printf = std::mem::take(&mut printf[i]);
        cores_out.push(r);
    }
    Ok(QemuRun { cores: cores_out, output, check: None })
}

/// The check's verdict of op `op` from its findings file.
fn checked(image: &Path, file: &Path, op: &str) -> Result<Option<(i32, String)>> {
    let findings = crate::device_check::findings::read(file)?;
    if findings.is_empty() {
        return Ok(None);
    }
    let elf = std::fs::read(image).ok().and_then(|b| neuron_image::elf::Elf::parse(&b).ok());
    let lines = elf.as_ref().and_then(|e| customop_symbols::Lines::open(image, e).ok());
    Ok(crate::device_check::words::verdict(op, &findings, lines.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runner_lines_parse_and_a_missing_piece_is_an_error() {
        let text = "q7-qemu-board: start\ncustomop-core 1: returned 0 status 0 last_error 0\ncustomop-core 0: returned -1 status 35 last_error 35\n\
                    customop-printf 0: x=3\ncustomop-out 0 0a0b\ncustomop-out 2 ff\ncustomop-done\n";
        let r = parse(text, 2, 3).unwrap();
        assert_eq!(r.output, [10, 11, 255]);
        assert_eq!(r.cores[0].printf, ["x=3"]);
        assert_eq!((r.cores[0].code(), r.cores[1].code(), r.code()), (35, 0, 35));
        assert!(parse(text, 3, 3).unwrap_err().contains("core 2"));
        assert!(parse(text, 2, 4).unwrap_err().contains("3 output bytes"));
        assert!(parse(&text.replace("customop-done\n", ""), 2, 3).is_err());
    }
}

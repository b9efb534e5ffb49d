//! The check of every load and store on the emulated cores: the profile's
//! plugin (`perf/profile.c`) keeps a shadow of the device's memory, fed
//! by the runtime's trace port (what it hands out and takes back) and by
//! where the host placed the inputs and the output ([`tensors_file`]);
//! its findings ([`findings`]) become the run's failure in the host
//! sanitizer's codes and words ([`words`]), with core, op and line.
//!
//! On by default for `--on qemu|both`; `NEURON_QEMU_CHECK=0` turns it off.

pub mod findings;
pub mod words;

use crate::error::{Error, ErrorKind, Result};
use crate::qemu_blob::Blob;
use std::path::Path;

/// The environment variable that turns the check off (`0`).
pub const ENV: &str = "NEURON_QEMU_CHECK";

/// Whether emulated runs are checked.
pub fn enabled() -> bool {
    std::env::var_os(ENV).is_none_or(|v| v != "0")
}

/// One checked run in the making: the plugin arguments to add and where
/// the findings go.
pub struct Session {
    /// `check=FILE,tensors=FILE` (appended to a `-plugin` value).
    pub args: String,
    /// The findings file.
    pub findings: tempfile::TempPath,
    tensors: tempfile::TempPath,
}

impl Session {
    /// Lets the confined emulator read the tensors file and write the
    /// findings.
    pub fn confine(&self, files: &mut customop_emulator::sandbox::Confinement) {
        files.read(&self.tensors).write(&self.findings);
    }
}

/// The plugin's `tensors=` file: `i lo hi arg` per input, `o lo hi` for
/// the output, NX addresses (hex).
pub fn tensors_file(blob: &Blob) -> String {
    let mut s = String::new();
    for (i, (lo, n)) in blob.inputs.iter().enumerate() {
        s.push_str(&format!("i {lo:x} {:x} {i}\n", lo + n));
    }
    if blob.out_bytes > 0 {
        let lo = blob.out_nx();
        s.push_str(&format!("o {lo:x} {:x}\n", lo + blob.out_bytes));
    }
    s
}

/// Writes the files of a checked run of `blob` under `work`.
pub fn start(work: &Path, blob: &Blob) -> Result<Session> {
    let dir = work.join("profile");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
    let tensors = crate::atomic::temp_in(&dir, "tensors-", ".txt")?;
    std::fs::write(&tensors, tensors_file(blob)).map_err(|e| Error::io("write", &tensors, e))?;
    let findings = crate::atomic::temp_in(&dir, "findings-", ".txt")?;
    for p in [&*tensors, &*findings] {
        if p.display().to_string().contains(',') {
            return Err(Error::new(
                ErrorKind::BadInput,
                format!("{} has a comma, which QEMU's -plugin option cannot carry; use a build directory without one (or {ENV}=0)", p.display()),
            ));
        }
    }
    let args = format!("check={},tensors={}", findings.display(), tensors.display());
    Ok(Session { args, findings, tensors })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tensors_file_names_each_input_with_its_index_then_the_output() {
        let a = [1.0f32, 2.0, 3.0].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>();
        let args = [crate::qemu_blob::Arg { kind: 1, dtype: 12, shape: &[3], data: &a }];
        let blob = crate::qemu_blob::build("op", &args, 12, &[2], 4).unwrap();
        let t = tensors_file(&blob);
        let lines: Vec<&str> = t.lines().collect();
        let (lo, out) = (crate::qemu_blob::AREA_NX + 128, blob.out_nx());
        assert_eq!(lines, [format!("i {lo:x} {:x} 0", lo + 12), format!("o {out:x} {:x}", out + 8)]);
    }
}

//! README's main job: a vendor-style C++ kernel (`examples/vendor-relu`:
//! compute source + `NEURON_LIBRARY` shape file, untouched) built with
//! `customop build --target qemu --multicore` and run with `customop run
//! --on both --cores 8`: on eight emulated Xtensa cores and on the host
//! simulator, the two outputs compared bit for bit by customop; then the
//! output checked here against the reference, relu(x) = max(x, 0).

use crate::{root, run, xtask_target_base, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The input's shape: 1073 elements, not a multiple of 8, so the last
/// core's remainder is exercised.
const SHAPE: [usize; 2] = [37, 29];

/// The input: a deterministic mix of signs, zeros and magnitudes.
fn input() -> Vec<f32> {
    (0..SHAPE[0] * SHAPE[1]).map(|i| ((i * 7919) % 2001) as f32 / 100.0 - 10.0).collect()
}

/// A little-endian f32 `.npy` of `shape` (customop's codec).
pub(crate) fn npy_f32(shape: &[usize], v: &[f32]) -> Result<Vec<u8>> {
    customop_npy::render(&customop_npy::Array::from_f32(&shape.iter().map(|&d| d as u64).collect::<Vec<_>>(), v))
}

/// The f32 payload of a `.npy` written by customop (`<f4`, C order).
pub(crate) fn read_npy_f32(p: &Path) -> Result<Vec<f32>> {
    let b = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let a = customop_npy::parse_bytes(&b).map_err(|e| format!("{}: {e}", p.display()))?;
    if a.dtype != customop_npy::Dtype::Fp32 {
        return Err(format!("{}: output dtype is {:?}, not float32", p.display(), a.dtype));
    }
    Ok(a.to_f32())
}

fn customop(bin: &Path) -> Command {
    let mut c = Command::new(bin);
    c.current_dir(root());
    c
}

pub(crate) fn run_example() -> Result<u8> {
    crate::preflight::ensure(crate::preflight::For::MainJob)?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(cargo).current_dir(root()).args(["build", "--release", "-p", "customop"]))?;
    let bin = xtask_target_base().join("release/customop");
    let work: PathBuf = xtask_target_base().join("main-job");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let x = input();
    let x_npy = work.join("x.npy");
    customop_outpath::write(&x_npy, &npy_f32(&SHAPE, &x)?).map_err(|e| format!("{}: {e}", x_npy.display()))?;

    let src = root().join("examples/vendor-relu");
    let dir = work.join("relu_ops");
    println!("xtask: main job: customop build --target qemu --multicore of examples/vendor-relu (relu.cpp + shape.cpp, unchanged)");
    run(customop(&bin)
        .args(["build", "--name", "relu_ops", "--multicore", "--target", "qemu", "--compute"])
        .arg(src.join("relu.cpp"))
        .arg("--shape")
        .arg(src.join("shape.cpp"))
        .arg("--out")
        .arg(&dir))?;
    let y_npy = work.join("y.npy");
    let _ = std::fs::remove_file(&y_npy);
    println!("xtask: main job: customop run --on both --cores 8 (8 emulated Xtensa cores and the host simulator)");
    let st = customop(&bin)
        .arg("run")
        .arg(&dir)
        .args(["relu_forward"])
        .arg(&x_npy)
        .arg("-o")
        .arg(&y_npy)
        .args(["--on", "both", "--cores", "8", "--report"])
        .status()
        .map_err(|e| format!("{}: {e}", bin.display()))?;
    if !st.success() {
        println!("xtask: run-example: FAIL (customop run --on both: {st})");
        return Ok(1);
    }
    let y = read_npy_f32(&y_npy)?;
    let want: Vec<f32> = x.iter().map(|v| if *v > 0.0 { *v } else { 0.0 }).collect();
    let bad: Vec<usize> = (0..want.len()).filter(|&i| y.get(i).map(|v| v.to_bits()) != Some(want[i].to_bits())).collect();
    if y.len() != want.len() || !bad.is_empty() {
        println!("xtask: run-example: FAIL ({} elements, want {}; {} differ from the reference, first at {:?})", y.len(), want.len(), bad.len(), bad.first());
        return Ok(1);
    }
    println!(
        "xtask: run-example: PASS (vendor-style C++ relu on 8 emulated cores: output equals the host simulator's bit for bit and the reference, {} elements)",
        want.len()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_round_trip_and_header_alignment() {
        let v = [1.5f32, -2.0, 0.0];
        let b = npy_f32(&[3], &v).unwrap();
        let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("x.npy");
        std::fs::write(&p, &b).unwrap();
        assert_eq!(read_npy_f32(&p).unwrap(), v);
        let _ = std::fs::remove_file(&p);
    }

    #[test]
    fn the_input_has_both_signs_and_a_remainder() {
        let x = input();
        assert!(x.iter().any(|v| *v < 0.0) && x.iter().any(|v| *v > 0.0));
        assert_ne!(x.len() % 8, 0);
    }
}

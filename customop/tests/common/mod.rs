//! Shared by the `customop` integration tests: run the real binary, build
//! each test kernel once per test binary (and, through the tool's own
//! cache, once across runs), write and read `.npy` files.

// Included by several test binaries; each uses only some of it.
#![allow(dead_code)]

use customop::npy::{self, Array, Dtype};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

/// The test kernels' directory.
pub fn kernels() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels")
}

/// Holds an exclusive lock on this test binary's scratch tree for the
/// life of the process: two runs of the same binary (two `cargo test` in
/// one worktree) take turns instead of rebuilding each other's files. The
/// tree stays from run to run, so the tool's build cache serves reruns.
fn lock_scratch(root: &Path) {
    use std::os::unix::io::AsRawFd;
    static LOCK: OnceLock<std::fs::File> = OnceLock::new();
    LOCK.get_or_init(|| {
        std::fs::create_dir_all(root).expect("create the scratch root");
        let f = std::fs::File::create(root.join(".lock")).expect("create the scratch lock");
        // SAFETY: flock on a file descriptor this File owns; the File is
        // kept in a static, so the lock lasts until the process exits.
        let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
        assert_eq!(rc, 0, "flock the scratch tree");
        f
    });
}

/// A scratch directory of this test binary (per binary: test binaries run
/// in parallel under some runners, and builds must not share objects).
pub fn scratch(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("customop").join(env!("CARGO_CRATE_NAME"));
    lock_scratch(&root);
    let d = root.join(name);
    std::fs::create_dir_all(&d).expect("create the scratch directory");
    d
}

/// Runs `customop` with `args`.
pub fn customop(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_customop")).args(args).output().expect("run customop")
}

/// stdout + stderr.
pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Runs `customop` and asserts exit status 0.
pub fn customop_ok(args: &[&str]) -> String {
    let o = customop(args);
    let t = text(&o);
    assert!(o.status.success(), "customop {args:?} failed ({}):\n{t}", o.status);
    t
}

/// Builds kernel directory `kernel` (its `shape*.cpp` files are the shape
/// sources, the other `.cpp` files the compute sources) with `extra`
/// build flags, once per test binary; returns the build directory.
pub fn built(kernel: &str, extra: &[&str]) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let key = format!("{kernel} {}", extra.join(" "));
    let mut map = BUILT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = map.get(&key) {
        return d.clone();
    }
    let src = kernels().join(kernel);
    let out = scratch("builds").join(key.replace([' ', '-', '='], "_"));
    let mut args: Vec<String> = vec!["build".into(), "--name".into(), kernel.into(), "--out".into(), out.display().to_string()];
    let mut files: Vec<PathBuf> = std::fs::read_dir(&src).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "cpp")).collect();
    files.sort();
    for f in files {
        let shape = f.file_name().unwrap().to_str().unwrap().starts_with("shape");
        args.push(if shape { "--shape" } else { "--compute" }.into());
        args.push(f.display().to_string());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    customop_ok(&refs);
    map.insert(key, out.clone());
    out
}

/// Writes `a` as `.npy` in this binary's scratch directory.
pub fn npy_file(name: &str, a: &Array) -> PathBuf {
    let p = scratch("npy").join(name);
    npy::write(&p, a).unwrap();
    p
}

/// An f32 array.
pub fn f32s(shape: &[u64], v: &[f32]) -> Array {
    Array::from_f32(shape, v)
}

/// An i32 array.
pub fn i32s(shape: &[u64], v: &[i32]) -> Array {
    Array { dtype: Dtype::Int32, shape: shape.to_vec(), data: v.iter().flat_map(|x| x.to_le_bytes()).collect() }
}

/// The elements of an i32 array.
pub fn to_i32(a: &Array) -> Vec<i32> {
    assert_eq!(a.dtype, Dtype::Int32);
    a.data.as_chunks::<4>().0.iter().map(|c| i32::from_le_bytes(*c)).collect()
}

/// Runs `op` of build `dir` with `args` on `cores` through the binary;
/// returns the output array and the tool's text.
pub fn run_op(dir: &Path, op: &str, args: &[&str], cores: u32, tag: &str) -> (Array, String) {
    let out = scratch("out").join(format!("{tag}-{op}-{cores}.npy"));
    let _ = std::fs::remove_file(&out);
    let d = dir.display().to_string();
    let o = out.display().to_string();
    let c = cores.to_string();
    let mut a = vec!["run", d.as_str(), op];
    a.extend_from_slice(args);
    a.extend_from_slice(&["-o", o.as_str(), "--cores", c.as_str(), "--report"]);
    let t = customop_ok(&a);
    (npy::read(&out).unwrap(), t)
}

/// Deterministic values in [lo, hi) (a small LCG: no dependency).
pub fn values(n: usize, lo: f32, hi: f32, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            lo + (hi - lo) * ((s >> 40) as f32 / (1u64 << 24) as f32)
        })
        .collect()
}

/// Asserts `got` equals `want` within `tol` (relative to max(1, |want|)).
pub fn assert_close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * w.abs().max(1.0), "{what}: element {i}: got {g}, want {w}");
    }
}

/// `v` as a 16-bit float array of `dt` (F16 or Bf16); every value must be
/// 0 or a normal number the type holds exactly (test data, not rounding).
pub fn floats16(dt: customop::npy::Dtype, shape: &[u64], v: &[f32]) -> Array {
    let bits = |x: f32| -> u16 {
        let b = x.to_bits();
        match dt {
            customop::npy::Dtype::Bfloat16 => {
                assert_eq!(b & 0xffff, 0, "{x} is not exact in bfloat16");
                (b >> 16) as u16
            }
            _ if x == 0.0 => 0,
            _ => {
                let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
                assert!((1..31).contains(&exp) && b & 0x1fff == 0, "{x} is not exact in float16");
                ((b >> 16) & 0x8000) as u16 | (exp as u16) << 10 | ((b >> 13) & 0x3ff) as u16
            }
        }
    };
    Array { dtype: dt, shape: shape.to_vec(), data: v.iter().flat_map(|x| bits(*x).to_le_bytes()).collect() }
}

/// One case of a kernel: its op, the input's shape and values, the
/// expected output values.
pub type Case = (&'static str, Vec<u64>, Vec<f32>, Vec<f32>);

/// The `accessor_forms` kernel's inputs and expected outputs: `pair_sum`
/// ([5, 8] -> [5, 4]) and `plane_scale` ([3, 4, 5]).
pub fn accessor_forms_cases() -> [Case; 2] {
    let x2 = values(40, -4.0, 4.0, 31);
    let pairs = x2.as_chunks::<2>().0.iter().map(|p| p[0] + p[1]).collect();
    let x3 = values(60, -4.0, 4.0, 32);
    let scaled = x3.iter().enumerate().map(|(k, v)| v * (k / 20 + 1) as f32).collect();
    [("pair_sum", vec![5, 8], x2, pairs), ("plane_scale", vec![3, 4, 5], x3, scaled)]
}

/// `x`'s row-wise softmax as the `libm` kernel computes it (the same order of
/// operations), with the device libm's `expf`.
pub fn libm_softmax_rows(x: &[f32], cols: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks(cols) {
        let m = row[1..].iter().fold(row[0], |m, &v| if v > m { v } else { m });
        let e: Vec<f32> = row.iter().map(|&v| neuron_libm::elementary::expf(v - m)).collect();
        let sum = e.iter().fold(0.0f32, |s, &v| s + v);
        let inv = 1.0 / sum;
        out.extend(e.iter().map(|v| v * inv));
    }
    out
}

/// The `libm` kernel's `math_mix` of one element, with the device libm.
pub fn libm_math_mix(v: f32) -> f32 {
    let a = v.abs();
    neuron_libm::elementary::logf(a + 1.0)
        + neuron_libm::elementary::tanhf(v)
        + neuron_libm::elementary::sqrtf(a)
        + neuron_libm::elementary::powf(a + 0.5, 1.7)
        + neuron_libm::elementary::sinf(v) * neuron_libm::elementary::cosf(v)
}

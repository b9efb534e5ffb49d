//! `customop run -o` of an output of a MiB and more: the output lives in
//! the output file's own pages (no copy out). The file is a valid `.npy`
//! (its header padded to a page), a run that fails leaves the previous
//! file as it was and no temporary, and the guards around the output and
//! the check for unwritten elements hold there as in HBM.

mod common;
use common::*;
use customop::npy;
use std::path::{Path, PathBuf};

/// 1 Mi + 5 floats (4 MiB and a piece of a page), half of them negative.
fn input() -> PathBuf {
    let n = (1 << 20) + 5;
    npy_file("big_x.npy", &f32s(&[n as u64], &values(n, -1.0, 1.0, 7)))
}

/// Runs `op` with `-o out`; the process's output.
fn run(op: &str, out: &Path) -> std::process::Output {
    let dir = built("big_output", &[]);
    let (d, x, o) = (dir.display().to_string(), input().display().to_string(), out.display().to_string());
    customop(&["run", &d, op, &x, "-o", &o])
}

/// The names in `dir` that are not `keep`.
fn others(dir: &Path, keep: &Path) -> Vec<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p != keep).map(|p| p.display().to_string()).collect()
}

#[test]
fn a_large_output_is_a_valid_npy_with_its_data_at_a_page() {
    let dir = scratch("in_file_pass");
    let out = dir.join("y.npy");
    let o = run("relu_big", &out);
    assert!(o.status.success(), "{}", text(&o));
    let bytes = std::fs::read(&out).unwrap();
    let layout = npy::parse_header(&bytes).unwrap();
    assert_eq!(layout.offset, 4096, "the header is padded to a page");
    assert_eq!(bytes.len() as u64, 4096 + layout.bytes);
    let x = npy::read(&input()).unwrap();
    let y = npy::read(&out).unwrap();
    let want: Vec<f32> = x.data.as_chunks::<4>().0.iter().map(|c| f32::from_le_bytes(*c).max(0.0)).collect();
    let got: Vec<f32> = y.data.as_chunks::<4>().0.iter().map(|c| f32::from_le_bytes(*c)).collect();
    assert!(got == want, "the output is the input's ReLU");
    assert!(others(&dir, &out).is_empty(), "{:?}", others(&dir, &out));
}

#[test]
fn a_store_past_either_end_or_an_unwritten_half_fails_and_keeps_the_last_output() {
    let dir = scratch("in_file_fail");
    let out = dir.join("y.npy");
    let before = npy::render(&f32s(&[2], &[4.0, 2.0])).unwrap();
    for (op, says) in [
        ("overrun_by_one", "kernel wrote past the end of the output: guard bytes 0..=3"),
        ("underrun_by_one", "kernel wrote before the start of the output: guard bytes 4092..=4095"),
        ("half_written", "524291 of 1048581 output elements were never written: [524290, 1048581)"),
    ] {
        std::fs::write(&out, &before).unwrap();
        let o = run(op, &out);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(7), "{op} must fail:\n{t}");
        assert!(t.contains(says), "{op}: no {says:?} in:\n{t}");
        assert_eq!(std::fs::read(&out).unwrap(), before, "{op}: a failed run leaves the last output as it was");
        assert!(others(&dir, &out).is_empty(), "{op}: {:?}", others(&dir, &out));
    }
}

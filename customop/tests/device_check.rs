//! The emulated cores' check of every load and store (`customop run --on
//! both` with a `--target qemu` build): each finding class has a breaking
//! kernel, which fails the run with the finding's code and words, its
//! buffer and the kernel's line, and a correct twin, which passes with the
//! simulator's and the device's outputs bit-identical; single core and 8
//! cores.
//!
//! Needs the Xtensa toolchain and qemu-system-xtensa (see device_qemu.rs).

mod common;
use common::*;
use customop::npy::{self, Array};
use std::path::Path;

const QEMU: &[&str] = &["--target", "qemu"];
const MC: &[&str] = &["--target", "qemu", "--multicore"];

/// `customop run DIR OP X --on both --cores N`: the exit status, the text
/// and the output (if the run wrote one).
fn both(dir: &Path, op: &str, x: &Array, cores: u32) -> (Option<i32>, String, Option<Array>) {
    let tag = dir.file_name().unwrap().to_string_lossy().into_owned();
    let xs = npy_file(&format!("check-{tag}-{op}-x.npy"), x).display().to_string();
    let out = scratch("out").join(format!("check-{tag}-{op}-{cores}.npy"));
    let _ = std::fs::remove_file(&out);
    let (d, o, c) = (dir.display().to_string(), out.display().to_string(), cores.to_string());
    let r = customop(&["run", &d, op, &xs, "-o", &o, "--cores", &c, "--on", "both"]);
    (r.status.code(), text(&r), npy::read(&out).ok())
}

/// The run fails (exit 7) and its text says each of `says`.
fn fails(dir: &Path, op: &str, x: &Array, cores: u32, says: &[&str]) {
    let (code, t, out) = both(dir, op, x, cores);
    assert_eq!(code, Some(7), "{op} must fail the run:\n{t}");
    for s in says {
        assert!(t.contains(s), "{op}: no {s:?} in:\n{t}");
    }
    assert!(out.is_none(), "{op}: a failed run writes no output");
}

/// The run passes with no finding; returns the output.
fn passes(dir: &Path, op: &str, x: &Array, cores: u32) -> Array {
    let (code, t, out) = both(dir, op, x, cores);
    assert_eq!(code, Some(0), "{op} must pass:\n{t}");
    assert!(t.contains("outputs bit-identical") && !t.contains("emulated-core check"), "{op}:\n{t}");
    out.unwrap()
}

fn ramp(n: usize) -> Array {
    f32s(&[n as u64], &(0..n).map(|i| i as f32 - 3.0).collect::<Vec<_>>())
}

fn floats(a: &Array) -> Vec<f32> {
    a.to_f32()
}

#[test]
fn a_tcm_malloc_block_summed_before_anything_is_written_fails_as_float_and_int32() {
    let dir = built("device_check", QEMU);
    let words = ["error 115", "core 0: uninitialised read of a tcm_malloc block of 64 bytes", "the first at element 0", "heap_reads.cpp:19"];
    fails(&dir, "tcm_sum_unwritten", &ramp(16), 1, &words);
    let ints = i32s(&[16], &(0..16).map(|i| i * 5 - 7).collect::<Vec<_>>());
    fails(&dir, "tcm_isum_unwritten", &ints, 1, &words);
    let o = passes(&dir, "tcm_sum_cleared", &ramp(16), 1);
    assert_eq!(floats(&o)[..3], [-9.0, -6.0, -3.0]);
    let o = passes(&dir, "tcm_isum_cleared", &ints, 1);
    assert_eq!(to_i32(&o)[..3], [-21, -6, 9]);
}

#[test]
fn malloc_counters_incremented_before_they_are_zeroed_fail_and_calloc_ones_pass() {
    let dir = built("device_check", QEMU);
    let v = i32s(&[16], &(0..16).map(|i| (i * 7) % 4).collect::<Vec<_>>());
    fails(&dir, "count_malloc", &v, 1, &["error 115", "uninitialised read of a malloc/new block of 64 bytes", "heap_reads.cpp:38"]);
    let o = passes(&dir, "count_calloc", &v, 1);
    assert_eq!(to_i32(&o), vec![4; 16]);
}

#[test]
fn a_reallocd_array_keeps_what_was_written_and_its_growth_is_unwritten() {
    let dir = built("device_check_realloc", QEMU);
    fails(
        &dir,
        "grown_read_early",
        &ramp(16),
        1,
        &["error 115", "uninitialised read of a malloc/new block of 64 bytes", "the first at element 8", "grow.cpp:16"],
    );
    let o = passes(&dir, "grown_written_first", &ramp(16), 1);
    assert_eq!(floats(&o), floats(&ramp(16)));
}

#[test]
fn a_recursion_past_its_stack_size_fails_on_the_emulated_cores_too() {
    // ~130 KiB of frames that call no library function, in a kernel built
    // for 64 KiB: both sides find it, the device's naming the line.
    let dir = built("stack_recursion", &["--target", "qemu", "--cflags", "-DSTACK_SIZE=65536"]);
    fails(
        &dir,
        "deep_recursion",
        &ramp(16),
        1,
        &[
            "error 112",
            "on both the simulator and the emulated cluster",
            "emulated-core check: error 112: op `deep_recursion`, core 0",
            "past the 65536 B it has on the device",
            "recursion.cpp:8",
        ],
    );
    let o = passes(&dir, "shallow_recursion", &ramp(16), 1);
    assert_eq!(floats(&o)[..4], [-6.0, -4.0, -2.0, 0.0]);
    // On 8 cores, each core's recursion.
    let mc = built("device_check_stack_mc", &["--target", "qemu", "--multicore", "--cflags", "-DSTACK_SIZE=65536"]);
    fails(&mc, "deep_slices", &ramp(64), 8, &["error 112", "emulated-core check: error 112: op `deep_slices`, core 7", "recursion_mc.cpp:11"]);
    let o = passes(&mc, "shallow_slices", &ramp(64), 8);
    assert_eq!(floats(&o)[..4], [-6.0, -4.0, -2.0, 0.0]);
}

#[test]
fn a_block_used_after_its_free_or_written_past_its_end_fails() {
    let dir = built("device_check", QEMU);
    fails(&dir, "read_after_free", &ramp(16), 1, &["error 122", "use after free: read of element 0 of a tcm_malloc block of 64 bytes", "heap_reads.cpp:63"]);
    let o = passes(&dir, "read_before_free", &ramp(16), 1);
    assert_eq!(floats(&o)[..2], [-6.0, -4.0]);
    fails(
        &dir,
        "write_past_end",
        &ramp(16),
        1,
        &["error 121", "outside every live block and tensor, just past the end of a malloc/new block of 64 bytes", "heap_reads.cpp:77"],
    );
    passes(&dir, "write_to_end", &ramp(16), 1);
}

#[test]
fn a_write_into_an_input_and_reads_of_unwritten_tensors_fail_on_the_emulated_cores() {
    let dir = built("sanitizer", QEMU);
    fails(
        &dir,
        "clamp_in_place",
        &ramp(8),
        1,
        &["error 114", "emulated-core check: error 114: op `clamp_in_place`, core 0: wrote into input 0 at element 0", "sanitizer.cpp:30"],
    );
    fails(&dir, "empty_accumulate", &ramp(8), 1, &["error 115", "uninitialised read of a torch::empty tensor of 32 bytes", "sanitizer.cpp:12"]);
    fails(&dir, "add_into_dst", &ramp(8), 1, &["error 115", "uninitialised read of the output", "sanitizer.cpp:44"]);
    passes(&dir, "zeros_accumulate", &ramp(8), 1);
    passes(&dir, "set_then_add_dst", &ramp(8), 1);
}

#[test]
fn multicore_findings_name_the_core_and_their_twins_pass() {
    let dir = built("device_check_mc", MC);
    let x = ramp(64);
    fails(&dir, "slice_sum_unwritten", &x, 8, &["error 115", "core 7: uninitialised read of a tcm_malloc block of 32 bytes", "heap_reads_mc.cpp:26"]);
    assert_eq!(floats(&passes(&dir, "slice_sum_cleared", &x, 8))[..2], [-9.0, -6.0]);
    fails(&dir, "all_write_first", &x, 8, &["error 109", "both wrote element 0 of the output", "heap_reads_mc.cpp:50"]);
    passes(&dir, "one_writes_first", &x, 8);
    fails(&dir, "slice_after_free", &x, 8, &["error 122", "use after free: read of element 0 of a tcm_malloc block of 32 bytes", "heap_reads_mc.cpp"]);
    passes(&dir, "slice_before_free", &x, 8);
    fails(&dir, "slice_past_end", &x, 8, &["error 121", "just past the end of a malloc/new block of 32 bytes", "heap_reads_mc.cpp"]);
    passes(&dir, "slice_to_end", &x, 8);
    fails(&dir, "doubled_into_input", &x, 8, &["error 114", "wrote into input 0 at element", "heap_reads_mc.cpp"]);
    passes(&dir, "doubled_into_output", &x, 8);
    let rules = built("device_rules_mc", MC);
    fails(&rules, "peek_neighbour", &x, 8, &["error 116", "of the output, which core", "rules_mc.cpp"]);
    passes(&rules, "double_tcm", &x, 8);
}

#[test]
fn the_check_is_off_with_neuron_qemu_check_0() {
    let dir = built("device_check", QEMU);
    let xs = npy_file("check-off-x.npy", &ramp(16)).display().to_string();
    let out = scratch("out").join("check-off.npy");
    let d = dir.display().to_string();
    let o = out.display().to_string();
    let r = std::process::Command::new(env!("CARGO_BIN_EXE_customop"))
        .args(["run", &d, "read_after_free", &xs, "-o", &o, "--on", "qemu"])
        .env("NEURON_QEMU_CHECK", "0")
        .output()
        .unwrap();
    let t = text(&r);
    assert!(r.status.success() && !t.contains("emulated-core check"), "{t}");
}

//! What the device enforces, the simulator enforces too (SPEC §12): for
//! each rule a vendor-style kernel that crosses it and a correct twin that
//! passes, run through `customop run` as a kernel author does.

mod common;
use common::*;
use customop::npy::{self, Array};
use std::path::{Path, PathBuf};

/// Runs `op` of `dir` on `x` with `extra` flags; returns the process and
/// the output's path.
fn run(dir: &Path, op: &str, x: &Array, extra: &[&str]) -> (std::process::Output, PathBuf) {
    let f = npy_file(&format!("{op}_x.npy"), x).display().to_string();
    let out = scratch("out").join(format!("{op}{}.npy", extra.join("").replace(['-', '='], "_")));
    let _ = std::fs::remove_file(&out);
    let (d, o) = (dir.display().to_string(), out.display().to_string());
    let mut args = vec!["run", d.as_str(), op, f.as_str(), "-o", o.as_str(), "--report"];
    args.extend_from_slice(extra);
    (customop(&args), out)
}

/// The run must fail with exit 7 and say each of `says`.
fn fails(dir: &Path, op: &str, x: &Array, extra: &[&str], says: &[&str]) {
    let (r, out) = run(dir, op, x, extra);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(7), "{op} must fail the run:\n{t}");
    for s in says {
        assert!(t.contains(s), "{op}: no {s:?} in:\n{t}");
    }
    assert!(!out.exists(), "{op}: a failed run writes no output");
}

/// The run must pass; returns the output and the tool's text.
fn passes(dir: &Path, op: &str, x: &Array, extra: &[&str]) -> (Array, String) {
    let (r, out) = run(dir, op, x, extra);
    let t = text(&r);
    assert!(r.status.success(), "{op} must pass:\n{t}");
    (npy::read(&out).unwrap(), t)
}

/// The kernel line a finding names: `file:N (in function`, where line N of
/// kernel `kernel`'s `file` is the first holding `statement`.
fn at(kernel: &str, file: &str, statement: &str, function: &str) -> String {
    let src = std::fs::read_to_string(kernels().join(kernel).join(file)).unwrap();
    let n = src.lines().position(|l| l.contains(statement)).unwrap_or_else(|| panic!("no {statement:?} in {file}")) + 1;
    format!("{file}:{n} (in {function}(")
}

fn ramp(n: usize) -> Array {
    f32s(&[n as u64], &(0..n).map(|i| i as f32 - 3.0).collect::<Vec<_>>())
}

fn floats(a: &Array) -> Vec<f32> {
    a.data.as_chunks::<4>().0.iter().map(|c| f32::from_le_bytes(*c)).collect()
}

#[test]
fn streams_take_their_buffers_from_the_tcm_pool() {
    let dir = built("device_rules", &[]);
    let (o, _) = passes(&dir, "tcm_with_streams", &ramp(64), &[]);
    assert_eq!(floats(&o), [1.0, 0.0], "12 KiB does not fit beside two open streams, and does once they are closed");
}

#[test]
fn a_kernel_over_the_local_stack_fails_and_names_the_flag() {
    let dir = built("device_rules", &[]);
    fails(&dir, "big_stack", &ramp(64), &[], &["error 112", "op `big_stack`, core 0", "local stack of 8192 B", "-DSTACK_SIZE="]);
    let (o, _) = passes(&dir, "small_stack", &ramp(64), &[]);
    assert_eq!(floats(&o)[..4], [-6.0, -4.0, -2.0, 0.0]);
    // The same kernel, asking for the stack it needs, runs.
    let big = built("device_rules", &["--cflags", "-DSTACK_SIZE=65536"]);
    let (o, _) = passes(&big, "big_stack", &ramp(64), &[]);
    assert_eq!(floats(&o)[..4], [-6.0, -4.0, -2.0, 0.0]);
    // A declared size smaller than the use fails the same way.
    let short = built("device_rules", &["--cflags", "-DSTACK_SIZE=12288"]);
    fails(&short, "big_stack", &ramp(64), &[], &["error 112", "the 12288 B its -DSTACK_SIZE asks for"]);
}

#[test]
fn a_kernel_deeper_than_the_painted_stack_is_judged_and_reported_as_more() {
    let dir = built("device_rules", &[]);
    // 256 KiB of locals: past the painted 128 KiB, the stack rule still
    // sees the whole use, and the report's high water is a lower bound
    // (the painted 128 KiB and the 4 KiB left unpainted above them).
    fails(&dir, "deep_stack", &ramp(64), &[], &["error 112", "op `deep_stack`, core 0", "local stack of 8192 B", "-DSTACK_SIZE="]);
    let roomy = built("device_rules", &["--cflags", "-DSTACK_SIZE=524288"]);
    let (o, t) = passes(&roomy, "deep_stack", &ramp(64), &[]);
    assert_eq!(floats(&o)[..4], [-6.0, -4.0, -2.0, 0.0]);
    assert!(t.contains("stack more than 135168 B") && t.contains("of the 524288 B it has on the device"), "{t}");
}

#[test]
fn a_returned_tensor_of_another_shape_fails() {
    let dir = built("device_rules", &[]);
    let x = f32s(&[3, 4], &[0.5; 12]);
    fails(&dir, "wrong_shape", &x, &[], &["error 110", "shape"]);
    let (o, _) = passes(&dir, "right_shape", &x, &[]);
    assert_eq!(o.shape, [3, 4]);
}

#[test]
fn malloc_comes_from_the_cores_one_mib_heap() {
    let dir = built("device_rules", &[]);
    let (o, t) = passes(&dir, "heap_sizes", &ramp(8), &[]);
    assert_eq!(floats(&o), [1.0, 0.0], "8 MiB is null on the device, 64 KiB is not");
    assert!(t.contains("libc heap 65536 B") || t.contains("libc heap 655"), "the report counts the kernel's malloc on the core's heap:\n{t}");
    let (r, _) = run(&dir, "vector_too_big", &ramp(8), &[]);
    let t = text(&r);
    assert!(!r.status.success(), "{t}");
    assert!(t.contains("operator new") && t.contains("error 10"), "a failed new is the abort report:\n{t}");
}

/// A store past a block's end into a freed neighbour overwrites the heap's
/// free list (it lives in free heap memory): the next malloc refuses
/// with error 17 and the run fails, instead of handing out wild memory.
#[test]
fn a_heap_overflow_into_a_freed_block_is_a_corrupt_heap() {
    let dir = built("heap_corruption", &[]);
    fails(&dir, "overflow_into_freed", &ramp(8), &[], &["error 17", "heap's free list was overwritten", "op `overflow_into_freed`"]);
    let (o, _) = passes(&dir, "stays_in_bounds", &ramp(8), &[]);
    assert_eq!(floats(&o), [0.0], "the twin's malloc is not null");
}

#[test]
fn a_fifth_stream_is_a_warning_and_runs() {
    let dir = built("device_rules", &[]);
    let (o, t) = passes(&dir, "five_streams", &ramp(16), &[]);
    assert_eq!(floats(&o)[..3], [-15.0, -10.0, -5.0]);
    assert!(t.contains("op `five_streams`, core 0: 2 stream accessor(s) opened without a buffer"), "{t}");
    assert!(t.contains("per-element speed"), "{t}");
}

#[test]
fn the_dimension_rule_is_the_devices() {
    let dir = built("device_rules", &[]);
    let x = Array { dtype: npy::Dtype::Fp32, shape: vec![65536, 1, 1, 1, 1], data: vec![0; 65536 * 4] };
    let (r, _) = run(&dir, "small_stack", &x, &[]);
    let t = text(&r);
    assert!(!r.status.success(), "{t}");
    assert!(t.contains("up to 8 dims of at most 65,535 each, or up to 4 dims of at most 4,294,967,295 each"), "{t}");
    // Four dims may be wide.
    let x = Array { dtype: npy::Dtype::Fp32, shape: vec![65536, 1, 1, 1], data: vec![0; 65536 * 4] };
    let (r, _) = run(&dir, "small_stack", &x, &[]);
    assert!(!text(&r).contains("up to 8 dims"), "{}", text(&r));
}

#[test]
fn multicore_kernels_use_tcm_only() {
    let dir = built("device_rules_mc", &["--multicore"]);
    fails(&dir, "double_elem", &ramp(64), &[], &["error 113", "op `double_elem`", "argument 0", "tcm_accessor"]);
    let (o, t) = passes(&dir, "double_tcm", &ramp(64), &[]);
    assert_eq!(floats(&o), floats(&ramp(64)).iter().map(|v| v * 2.0).collect::<Vec<_>>());
    assert!(t.contains("the device keeps core 0's printf output only"), "{t}");
    assert!(t.contains("printf not kept on the device: in multicore mode only core 0's printf output is"), "{t}");
}

#[test]
fn reading_what_nothing_wrote_fails_and_names_the_tensor() {
    let dir = built("sanitizer", &[]);
    fails(
        &dir,
        "empty_accumulate",
        &ramp(8),
        &[],
        &[
            "error 115",
            "op `empty_accumulate`, core 0",
            "uninitialised read",
            "8 element read(s)",
            "first at element 0 at ",
            // The line of the first read: the accumulation into `empty`.
            &at("sanitizer", "sanitizer.cpp", "o[i] += in[i]", "empty_accumulate"),
        ],
    );
    let (o, _) = passes(&dir, "zeros_accumulate", &ramp(8), &[]);
    assert_eq!(floats(&o), floats(&ramp(8)));
    let line = at("sanitizer", "sanitizer.cpp", "o[i] = o[i] + in[i]", "add_into_dst");
    fails(&dir, "add_into_dst", &ramp(8), &[], &["error 115", "uninitialised read of the output", "8 element read(s)", &line]);
    let (o, _) = passes(&dir, "set_then_add_dst", &ramp(8), &[]);
    assert_eq!(floats(&o), floats(&ramp(8)).iter().map(|v| v * 2.0).collect::<Vec<_>>());
}

/// tcm_malloc memory holds the run's fill (a NaN in every float type);
/// copied out to a tensor unwritten, it is an uninitialised read of the
/// buffer.
#[test]
fn copying_out_tcm_memory_nothing_wrote_is_an_uninitialised_read() {
    let dir = built("sanitizer", &[]);
    fails(&dir, "tcm_half_written", &ramp(8), &[], &["error 115", "uninitialised read of a tcm_malloc buffer", "4 element read(s)", "first at element 4"]);
}

#[test]
fn a_write_into_an_input_fails() {
    let dir = built("sanitizer", &[]);
    let line = at("sanitizer", "sanitizer.cpp", "if (a[i] < 0.0f) a[i] = 0.0f;", "clamp_in_place");
    fails(
        &dir,
        "clamp_in_place",
        &ramp(8),
        &[],
        &["error 114", "op `clamp_in_place`, core 0: wrote into argument 0 at element 0", "3 element write(s)", &line],
    );
    // Through a raw pointer no hook sees: found by the input's page hashes.
    fails(&dir, "scale_input_raw", &ramp(8), &[], &["error 114", "op `scale_input_raw`: argument 0 changed during the run, in its bytes [0, 32)"]);
}

#[test]
fn a_core_reading_what_another_core_writes_fails() {
    let dir = built("device_rules_mc", &["--multicore"]);
    let line = at("device_rules_mc", "rules_mc.cpp", "o.tensor_to_tcm", "peek_neighbour");
    fails(&dir, "peek_neighbour", &ramp(64), &[], &["error 116", "op `peek_neighbour`", "of the output, which core", "no barrier between cores", &line]);
}

#[test]
fn a_recursion_whose_deep_frames_call_no_library_function_is_judged_by_its_depth() {
    // ~130 KiB of frames, none calling the library, in a kernel that asks
    // for 64 KiB: it would overflow on the device. The twin (~32 KiB) fits.
    let roomy = built("stack_recursion", &["--cflags", "-DSTACK_SIZE=65536"]);
    fails(&roomy, "deep_recursion", &ramp(16), &[], &["error 112", "op `deep_recursion`, core 0", "the 65536 B its -DSTACK_SIZE asks for", "-DSTACK_SIZE="]);
    let (o, _) = passes(&roomy, "shallow_recursion", &ramp(16), &[]);
    assert_eq!(floats(&o)[..4], [-6.0, -4.0, -2.0, 0.0]);
    // Without -DSTACK_SIZE: ~40 KiB over the 8 KiB local stack fails, ~2 KiB passes.
    let dir = built("stack_recursion", &[]);
    fails(&dir, "local_overflow", &ramp(16), &[], &["error 112", "local stack of 8192 B"]);
    let (o, t) = passes(&dir, "local_fits", &ramp(16), &[]);
    assert_eq!(floats(&o)[..4], [-6.0, -4.0, -2.0, 0.0]);
    assert!(t.contains("of the 8192 B it has on the device"), "{t}");
    // On 8 cores each core's recursion is judged.
    let mc = built("stack_recursion", &["--multicore", "--cflags", "-DSTACK_SIZE=65536"]);
    fails(&mc, "deep_recursion", &ramp(16), &["--cores", "8"], &["error 112", "core 7"]);
}

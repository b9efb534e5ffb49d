//! A kernel that indexes past a tensor fails naming the tensor, the
//! index, the dimension's size and the kernel's file:line of the access
//! (the C++ header captures the accessor's caller on the host); its
//! correct twin passes.

mod common;
use common::*;

/// The line of `kernels/error_sites/sums.cpp` marked with `marker`.
fn line_of(marker: &str) -> usize {
    let src = std::fs::read_to_string(kernels().join("error_sites/sums.cpp")).unwrap();
    1 + src.lines().position(|l| l.contains(marker)).unwrap_or_else(|| panic!("no {marker:?} in sums.cpp"))
}

/// Runs `op` on `x`, which must fail (exit 7); returns the tool's text.
fn failing(op: &str, x: &npy_file_arg::Arg) -> String {
    let dir = built("error_sites", &[]).display().to_string();
    let out = scratch("out").join(format!("{op}.npy")).display().to_string();
    let r = customop(&["run", &dir, op, &x.0, "-o", &out]);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(7), "{op}: {t}");
    t
}

mod npy_file_arg {
    /// An input file's path.
    pub struct Arg(pub String);
}

fn input(name: &str, shape: &[u64]) -> npy_file_arg::Arg {
    let n: u64 = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| i as f32 + 1.0).collect();
    npy_file_arg::Arg(npy_file(name, &f32s(shape, &v)).display().to_string())
}

fn assert_has(t: &str, want: &[&str]) {
    for w in want {
        assert!(t.contains(w), "no {w:?} in:\n{t}");
    }
}

#[test]
fn a_read_one_past_the_input_names_tensor_index_size_and_line() {
    let x = input("past_x.npy", &[8]);
    let t = failing("prefix_past", &x);
    let at = format!("sums.cpp:{}", line_of("// PAST:"));
    assert_has(
        &t,
        &["verdict: error 83", "argument 0 (shape [8]), index 8 of dimension 0, whose size is 8, at ", &at, "what to do: fix the index at the line"],
    );

    // The twin, in bounds, passes with the prefix sums.
    let (o, _) = run_op(&built("error_sites", &[]), "prefix", &[&x.0], 1, "twin");
    assert_eq!(o.to_f32(), [1.0, 3.0, 6.0, 10.0, 15.0, 21.0, 28.0, 36.0]);
}

#[test]
fn an_inner_dimension_is_named_by_its_position() {
    let x = input("rows_x.npy", &[3, 5]);
    let t = failing("row_sums_past", &x);
    let at = format!("sums.cpp:{}", line_of("// ROW PAST"));
    assert_has(&t, &["error 83", "argument 0 (shape [3, 5]), index 5 of dimension 1, whose size is 5, at ", &at]);
}

#[test]
fn an_accessor_of_the_wrong_type_or_rank_and_a_stream_past_its_end_name_their_lines() {
    let x = input("kinds_x.npy", &[6]);
    let t = failing("wrong_type", &x);
    assert_has(&t, &["error 85", "argument 0 (shape [6]), at ", &format!("sums.cpp:{}", line_of("// WRONG TYPE"))]);
    let t = failing("wrong_rank", &x);
    assert_has(&t, &["verdict: error 84", "argument 0 (shape [6]), at ", &format!("sums.cpp:{}", line_of("// WRONG RANK"))]);
    let t = failing("stream_past", &x);
    assert_has(&t, &["error 87", "argument 0 (shape [6]), element 6 (in order) of its 6, at ", &format!("sums.cpp:{}", line_of("// STREAM PAST"))]);
}

#[test]
fn out_of_memory_names_the_heap_the_size_and_what_is_free() {
    let x = input("oom_x.npy", &[8]);
    let t = failing("huge_scratch", &x);
    // 2^32 floats asked for; the heap's own numbers follow, then the
    // line of the torch::empty.
    let at = format!("sums.cpp:{}", line_of("// HUGE"));
    assert_has(
        &t,
        &[
            "verdict: error 10",
            "the HBM heap: 17179869184 bytes asked for, ",
            " bytes free, the largest free block ",
            "free the tensors and blocks",
            &at,
            "what to do: ",
        ],
    );
}

#[test]
fn a_returned_dtype_names_both_dtypes_and_the_conversion() {
    let x = input("dtype_x.npy", &[8]);
    let t = failing("counts_as_int", &x);
    assert_has(
        &t,
        &[
            "verdict: error 35",
            "the kernel returned a tensor of dtype int32, the output is float32",
            "make the result with torch::kFloat and write float elements",
            "make the shape function's output int32",
        ],
    );
}

#[test]
fn an_input_of_a_dtype_that_does_not_marshal_names_it_and_the_conversion() {
    // A float64 .npy (as np.save writes np.arange(4.0)).
    let mut b = customop::npy::render(&f32s(&[4], &[0.0; 4])).unwrap();
    let at = b.windows(3).position(|w| w == b"<f4").unwrap();
    b[at..at + 3].copy_from_slice(b"<f8");
    b.extend_from_slice(&[0; 16]);
    let p = scratch("npy").join("f64.npy");
    std::fs::write(&p, b).unwrap();
    let dir = built("error_sites", &[]).display().to_string();
    let out = scratch("out").join("f64-out.npy").display().to_string();
    let r = customop(&["run", &dir, "prefix", p.to_str().unwrap(), "-o", &out]);
    let t = text(&r);
    assert!(!r.status.success(), "{t}");
    assert_has(&t, &["dtype float64 ('<f8') does not marshal", "x.astype(np.float32) (torch: x.to(torch.float32))"]);
}

#[test]
fn a_tensor_operation_on_mismatched_shapes_names_its_line() {
    let x = input("shapes_x.npy", &[8]);
    let t = failing("add_bias", &x);
    assert_has(&t, &["verdict: error 89", &format!("sums.cpp:{}", line_of("// SHAPES")), "what to do: give the operation operands of the same shape"]);
}

//! C++ kernels end to end: each kernel in `tests/cpp/` (the kernel, its
//! generated-style wrapper, `<fn>_stack_switch` and `get_func_*` table) is
//! compiled by g++ with its driver, linked against the host
//! `libneuroncustomop.a`, and run: the driver places tensors in mock HBM
//! through the simulator's C API, runs each op on 1 core and its SPMD form
//! on 8 cores (numel % 8 != 0), and checks the output against a reference
//! it computes itself; it exits non-zero on any mismatch.

mod cpp;

#[test]
fn elementwise_fp32_relu_affine_on_1_and_8_cores() {
    let exe = cpp::build("relu_affine", &["relu_affine.cpp", "driver_relu_affine.cpp"]);
    let out = cpp::run_ok(&exe, &[]);
    assert!(out.contains("ok: relu_affine_mc on 8 core(s), numel 2405 (numel % 8 = 5)"), "{out}");
    assert!(out.contains("ok: relu_affine on 1 core(s), numel 1001"), "{out}");
}

#[test]
fn int32_row_sum_through_translate_on_1_and_8_cores() {
    let exe = cpp::build("row_sum", &["row_sum.cpp", "driver_row_sum.cpp"]);
    let out = cpp::run_ok(&exe, &["--big"]);
    assert!(out.contains("ok: row_sum_mc on 8 core(s), [301, 13] (rows % 8 = 5)"), "{out}");
    assert!(out.contains("ok: row_sum on 1 core(s), [301, 13]"), "{out}");
    assert!(out.contains("ok: row_sum_mc on 8 core(s), [1029, 4099]"), "{out}");
}

/// The header defines the array lengths of the ABI structs and the device
/// layout of the hit table itself (cbindgen emits constants of the root
/// crate only); they must be the Rust values.
#[test]
fn header_defines_are_the_rust_constants() {
    let h = std::fs::read_to_string(cpp::repo().join("include/neuroncustomop.h")).unwrap();
    use neuroncustomop::runtime::{hit_table, marshal, translate};
    for (name, value) in [
        ("NEURON_TRANSLATE_RECORDS", translate::RECORDS),
        ("NEURON_MAX_DIMS", marshal::tensor::MAX_DIMS),
        ("NEURON_HIT_TABLE_OFFSET", translate::DEVICE_HIT_TABLE_OFFSET),
        ("NEURON_HIT_SLOT_BYTES", translate::DEVICE_HIT_SLOT_BYTES),
        ("NEURON_HIT_SLOTS", hit_table::HIT_SLOTS),
    ] {
        let line = format!("#define {name} {value}\n");
        assert!(h.contains(&line), "include/neuroncustomop.h lacks `{}` (update cbindgen.toml)", line.trim());
    }
}

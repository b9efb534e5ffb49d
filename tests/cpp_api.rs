//! The C++ API (`include/neuroncustomop.hpp`): the relu examples of
//! `examples/cpp/` compiled with `g++ -std=c++17 -Wall -Werror` against
//! the host staticlib and run on the simulator, and a kernel exercising
//! the rest of the header (streams, coherency, ops, FP16/BF16 types).

mod cpp;

#[test]
fn relu_examples_per_element_and_tcm_on_8_cores() {
    let exe = cpp::build("example_relu", &["../../examples/cpp/relu.cpp", "../../examples/cpp/relu_driver.cpp"]);
    let out = cpp::run_ok(&exe, &[]);
    assert!(out.contains("ok: relu on 1 core(s), numel 1000"), "{out}");
    assert!(out.contains("ok: relu_tcm on 8 core(s), numel 5000"), "{out}");
    assert!(out.contains("ok: relu_tcm on 8 core(s), numel 12003"), "{out}");
}

#[test]
fn streams_coherency_half_ops_and_2d_accessors_from_cpp() {
    let exe = cpp::build("cpp_api_kernel", &["../cpp_api/api_kernel.cpp", "../cpp_api/driver.cpp"]);
    let out = cpp::run_ok(&exe, &[]);
    for line in ["ok: streams", "ok: coherency", "ok: half_ops", "ok: grid"] {
        assert!(out.contains(line), "{out}");
    }
}

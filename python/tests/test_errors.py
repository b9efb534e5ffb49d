"""Every expected failure is a ``neuroncustomop.Error`` with ``.code``
(the customop exit status of its kind), ``.kind`` and ``.message``;
nothing crashes the interpreter."""

import numpy as np
import pytest

import neuroncustomop
from conftest import kernel_dir, sources


def raises(code, kind, fn, *args, **kwargs):
    with pytest.raises(neuroncustomop.Error) as info:
        fn(*args, **kwargs)
    e = info.value
    assert (e.code, e.kind) == (code, kind), e.message
    assert str(e) == e.message and isinstance(e, Exception)
    return e


def test_a_build_failure_carries_the_compilers_diagnostics(tmp_path):
    compute, shape = sources("broken")
    e = raises(4, "compile", neuroncustomop.load, "broken", compute, shape, build_directory=tmp_path)
    assert "broken.cpp:5" in e.message and "error:" in e.message and "this_member_does_not_exist" in e.message


def test_a_refused_source_and_bad_load_arguments(tmp_path):
    compute, _ = sources("relu2d")
    no_library = tmp_path / "shape.cpp"
    no_library.write_text("#include <torch/torch.h>\n// no NEURON_LIBRARY block\n")
    e = raises(3, "refused", neuroncustomop.load, "k", compute, [no_library], build_directory=tmp_path / "b")
    assert "NEURON_LIBRARY" in e.message
    shape = kernel_dir("relu2d") / "shape.cpp"
    raises(2, "usage", neuroncustomop.load, "bad name!", compute, [shape], build_directory=tmp_path / "c")
    raises(2, "usage", neuroncustomop.load, "k", [], [shape], build_directory=tmp_path / "d")
    raises(2, "usage", neuroncustomop.load, "k", 42, [shape], build_directory=tmp_path / "e")
    raises(2, "usage", neuroncustomop.load, "k", compute, [shape], build_directory=tmp_path / "f", extra_cflags="-I'open")
    e = raises(5, "io", neuroncustomop.load, "k", [tmp_path / "missing.cpp"], [shape], build_directory=tmp_path / "g")
    assert "missing.cpp" in e.message


def test_wrong_dtypes_are_refused_with_the_conversion_to_use(built):
    ops = built("relu2d")
    e = raises(6, "bad_input", ops.relu_forward, np.ones((2, 2)))
    assert "float64 does not marshal" in e.message and "astype(numpy.float32)" in e.message
    raises(6, "bad_input", ops.relu_forward, np.ones((2, 2), dtype=bool))
    raises(6, "bad_input", ops.relu_forward, np.ones((2, 2), dtype=np.complex64))
    raises(6, "bad_input", ops.relu_forward, np.array(["a", "b"]))
    # A nested list of Python floats is float64 too.
    raises(6, "bad_input", ops.relu_forward, [[1.0, 2.0]])


def test_every_form_of_a_float32_argument_gives_the_same_result(built):
    """An exact ndarray is read as it is; a list, a subclass, a strided
    view and a big-endian array go through numpy.asarray and a copy: all
    five give the same output."""
    ops = built("relu2d")
    x = np.array([[1.5, -2.0], [-0.5, 3.0]], np.float32)
    want = np.maximum(x, 0)
    forms = [x, x.tolist(), np.ma.masked_array(x), np.asfortranarray(x), x.astype(">f4")]
    for form in forms[:1] + forms[2:]:
        np.testing.assert_array_equal(ops.relu_forward(form), want)
    # A list of Python floats is float64: refused as such, not misread.
    assert "float64 does not marshal" in raises(6, "bad_input", ops.relu_forward, forms[1]).message
    # Big-endian int32 is still int32, and a refused type is still named.
    e = raises(6, "bad_input", ops.relu_forward, np.ones((2, 2), dtype=">i8").astype(np.uint64))
    assert "uint64" in e.message


def test_shapes_that_are_not_tensors_are_refused(built):
    ops = built("relu2d")
    e = raises(6, "bad_input", ops.relu_forward, np.array(1.0, np.float32))
    assert "0-d" in e.message
    raises(6, "bad_input", ops.relu_forward, np.ones((1,) * 9, np.float32))
    raises(6, "bad_input", ops.relu_forward, np.ones((3, 0), np.float32))


def test_a_tensor_of_the_wrong_rank_fails_the_run_with_its_report(built):
    # A 2-D kernel given a 1-D tensor: its t_in.size(1) is the first error
    # (96, where libtorch throws), then the zero-size factory (45, the
    # invocation's status) and the accessor of the wrong rank (84).
    e = raises(7, "run_failed", built("relu2d").relu_forward, np.ones(5, np.float32))
    assert "error 96" in e.message and not e.report.ok and e.report.cores[0].status == 45
    # The verdict, the core's errors in order and the unwritten output, as fields.
    assert e.report.verdict[0] == 96 and "core 0: first error 96" in e.report.verdict[1]
    codes = [code for code, _, _ in e.report.cores[0].errors]
    assert codes[0] == 96 and 45 in codes and 84 in codes and not any(handled for _, _, handled in e.report.cores[0].errors)
    assert e.report.unwritten.startswith("5 of 5 output elements were never written")


def test_arguments_that_do_not_fit_the_op(built):
    ops = built("scalar_args")
    x = np.ones(4, np.float32)
    e = raises(6, "bad_input", ops.affine, x, 1.0)
    assert "takes 3 argument(s) (const torch::Tensor&, const torch::Scalar&, int64_t), 2 given" in e.message
    raises(6, "bad_input", ops.affine, 1.0, 1.0, 1)
    # An int, but past 64 bits: said so, not "give an int".
    e = raises(6, "bad_input", ops.affine, x, 1.0, 2**63)
    assert "9223372036854775808 is outside the 64-bit integer range [-9223372036854775808, 9223372036854775807]" in e.message
    raises(6, "bad_input", ops.affine, x, x, 1)
    raises(6, "bad_input", ops.affine, x, "2", 1)
    raises(6, "bad_input", ops.affine, x, True, 1)
    raises(6, "bad_input", ops.affine, x, 1.0, 1.5)
    raises(6, "bad_input", ops.offset_int, np.ones(3, np.int32), 2**63, 1.0)
    raises(6, "bad_input", ops.offset_int, np.ones(3, np.int32), 1, None)


def test_cores_and_unknown_ops(built):
    ops = built("relu2d")
    x = np.ones((2, 2), np.float32)
    for cores in [0, 9, -1, "8", 2.0, True]:
        raises(2, "usage", ops.relu_forward, x, cores=cores)
    raises(2, "usage", ops.relu_forward, x, core=8)
    raises(2, "usage", ops.relu_forward, x, report="yes")
    e = raises(6, "bad_input", getattr, ops, "relu_fwd")
    assert "its ops: relu_forward, relu_backward" in e.message
    assert not hasattr(ops, "__wrapped__")
    # An unknown op is also an AttributeError: hasattr, getattr with a
    # default and a notebook's probes see a missing attribute.
    assert isinstance(e, neuroncustomop.UnknownOpError) and isinstance(e, AttributeError)
    assert not hasattr(ops, "relu_fwd") and not hasattr(ops, "_repr_html_")
    assert getattr(ops, "relu_fwd", None) is None


def test_a_failed_run_and_a_failed_shape_function(built):
    ops = built("failing", multicore=True)
    x = np.ones(8, np.float32)
    for cores in [1, 8]:
        e = raises(7, "run_failed", ops.wrong_dtype, x, cores=cores)
        assert "error 35" in e.message and f"on {cores} core(s)" in e.message
        assert not e.report.ok and len(e.report.cores) == cores and all(c.status == 35 for c in e.report.cores)
        assert str(e.report) in e.message
    e = raises(8, "shape_failed", ops.no_shape, x)
    assert "undefined_shape" in e.message and "undefined tensor" in e.message
    # The library goes on working after its failures.
    np.testing.assert_array_equal(built("relu2d").relu_forward(-x.reshape(2, 4)), np.zeros((2, 4), np.float32))

"""The customop crate's vendor-style kernels through ``load()``, on 1 and
8 cores, against NumPy references."""

import numpy as np
import pytest

import neuroncustomop

rng = np.random.default_rng(14)


def floats(*shape):
    return rng.uniform(-3, 3, size=shape).astype(np.float32)


# (kernel, built multicore, cores): a single-core build runs on one core,
# its multicore form (slicing the work by get_cpu_id()) on eight.
SINGLE_AND_MULTI = [("{}", False, 1), ("{}_mc", True, 8)]


def variants(kernel):
    return pytest.mark.parametrize(
        "name,multicore,cores", [(k.format(kernel), m, c) for k, m, c in SINGLE_AND_MULTI], ids=["1-core", "8-core"]
    )


@variants("relu2d")
def test_relu_forward_and_backward_match_numpy(built, name, multicore, cores):
    ops = built(name, multicore=multicore)
    x = floats(19, 23)
    y = ops.relu_forward(x, cores=cores)
    assert y.dtype == np.float32 and y.shape == (19, 23)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    g = floats(19, 23)
    np.testing.assert_array_equal(ops.relu_backward(g, x, cores=cores), np.where(x > 0, g, 0))


def test_a_single_core_build_defaults_to_one_core_and_a_multicore_build_to_eight(built):
    x = floats(5000)
    mc = built("tcm_multicore", multicore=True)
    assert mc.multicore
    np.testing.assert_array_equal(mc.relu_multicore(x), np.maximum(x, 0))
    # On one core, get_cpu_count() is still 8: only core 0's share is
    # computed, and the run fails naming the elements never written.
    share = (x.size + 7) // 8
    with pytest.raises(neuroncustomop.Error) as e:
        mc.relu_multicore(x, cores=1)
    assert e.value.code == 7 and len(e.value.report.cores) == 1
    assert e.value.report.unwritten.startswith(f"{x.size - share} of {x.size} output elements were never written: [{share}, {x.size})")
    _, rep = built("relu2d").relu_forward(floats(3, 4), report=True)
    assert len(rep.cores) == 1


def test_tcm_and_stream_kernels(built):
    x = floats(5000)
    np.testing.assert_array_equal(built("tcm_single").relu_tcm(x), np.maximum(x, 0))
    x = floats(6, 7)
    np.testing.assert_array_equal(built("stream").scale_stream(x), x * np.float32(2) + np.float32(1))


def test_a_single_core_build_is_refused_on_eight_cores_before_it_runs(built):
    ops = built("tcm_single")
    with pytest.raises(neuroncustomop.Error) as e:
        ops.relu_tcm(floats(16), cores=8)
    assert e.value.code == 2 and e.value.kind == "usage"
    assert "was built without multicore=True: a single-core op runs on 1 core" in e.value.message


def test_scalar_arguments_take_python_numbers(built):
    ops = built("scalar_args")
    cores = 1
    x = floats(33)
    np.testing.assert_allclose(ops.affine(x, 2.5, 3, cores=cores), x * np.float32(2.5) + 3, rtol=1e-6)
    # An integral Scalar marshals as int64; NumPy scalars are numbers too.
    np.testing.assert_allclose(ops.affine(x, 2, np.int64(-1), cores=cores), x * 2 - 1, rtol=1e-6)
    i = np.arange(-10, 10, dtype=np.int32)
    np.testing.assert_array_equal(ops.offset_int(i, 5, 2.0, cores=cores), (i + 5) * 2)
    np.testing.assert_array_equal(ops.offset_int(i, -3, np.float32(0.5)), ((i - 3) * 0.5).astype(np.int32))


INTEGER = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("dtype", INTEGER + ["float16", "float32"])
@variants("dtypes")
def test_every_numpy_dtype_marshals_both_ways(built, dtype, name, multicore, cores):
    ops = built(name, multicore=multicore)
    x = (rng.uniform(-100, 100, size=(4, 9))).astype(dtype)
    y = ops.flip_any(x, cores=cores)
    assert y.dtype == np.dtype(dtype) and y.shape == x.shape
    np.testing.assert_array_equal(y, ~x if dtype in INTEGER else -x)


@variants("dtypes")
def test_bfloat16_in_and_out_as_ml_dtypes(built, name, multicore, cores):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = floats(3, 5).astype(ml_dtypes.bfloat16)
    y = built(name, multicore=multicore).flip_any(x, cores=cores)
    assert y.dtype == np.dtype(ml_dtypes.bfloat16) and y.shape == (3, 5)
    np.testing.assert_array_equal(y.astype(np.float32), -x.astype(np.float32))


def test_bfloat16_as_uint16_bit_patterns_without_ml_dtypes(built, monkeypatch):
    import sys

    bits = np.array([0x3FC0, 0xC040, 0x0000, 0x4120], dtype=np.uint16)  # 1.5, -3.0, 0, 10
    # ml_dtypes "not installed": importing it fails.
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)
    y = built("dtypes").flip_any(bits)
    assert y.dtype == np.uint16
    np.testing.assert_array_equal(y, bits ^ 0x8000)  # negated: the sign bit flips


def test_non_contiguous_and_big_endian_arrays_are_gathered_into_c_order(built):
    ops = built("relu2d")
    base = floats(23, 19)
    for view in [base.T, base[::2, 1::3], np.asfortranarray(base), base.astype(">f4")]:
        assert view.dtype.byteorder == ">" or not view.flags.c_contiguous
        np.testing.assert_array_equal(ops.relu_forward(view), np.maximum(np.ascontiguousarray(view, dtype=np.float32), 0))


class ArrayInterfaceOnly:
    """A tensor that is not an ndarray (as a CPU torch.Tensor is): only the array interface."""

    def __init__(self, a):
        self._a = a
        self.__array_interface__ = a.__array_interface__


def test_any_object_with_the_array_interface_is_a_tensor(built):
    x = floats(4, 6)
    np.testing.assert_array_equal(built("relu2d").relu_forward(ArrayInterfaceOnly(x)), np.maximum(x, 0))


def test_a_cpu_torch_tensor_works_where_torch_is_installed(built):
    torch = pytest.importorskip("torch")
    x = torch.randn(5, 8)
    np.testing.assert_array_equal(built("relu2d").relu_forward(x), np.maximum(x.numpy(), 0))


def test_ops_are_listed_and_described(built):
    ops = built("relu2d")
    assert ops.ops == ["relu_forward", "relu_backward"]
    assert set(dir(ops)) >= {"relu_forward", "relu_backward"}
    assert ops.relu_backward.params == ["const torch::Tensor&", "const torch::Tensor&"]
    assert ops.library_file.is_file() and ops.library_file.parent == ops.build_directory


def test_the_gil_is_released_while_a_kernel_runs(built, tmp_path):
    """The handshake kernel creates `entered` and waits for `go`, which the
    main thread creates once it sees `entered`: that can happen before
    the kernel's 5 s timeout only if the call released the GIL."""
    import threading
    import time

    ops = built("handshake")
    entered, go = tmp_path / "entered", tmp_path / "go"
    paths = np.frombuffer(f"{entered}\0{go}\0".encode(), dtype=np.uint8)
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("seen", ops.handshake(paths)))
    t.start()
    deadline = time.monotonic() + 10
    while not entered.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    go.touch()
    t.join()
    np.testing.assert_array_equal(result["seen"], [1])

"""The package never loses a file, never runs stale code and refuses what
it would silently change: value arguments out of range for their kind,
load() flags of the wrong type, ops whose names collide with the
library's attributes, the vendor layout (build_directory=os.getcwd()),
and load() from several processes at once."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import neuroncustomop
from conftest import kernel_dir, sources


def raises(code, fn, *args, **kwargs):
    with pytest.raises(neuroncustomop.Error) as info:
        fn(*args, **kwargs)
    assert info.value.code == code, info.value.message
    return info.value


def test_values_out_of_range_for_their_kind_are_refused(built):
    ops = built("scalar_args")
    x = np.ones(4, np.float32)
    # A Scalar whose integer value would saturate to int64 max.
    e = raises(6, ops.affine, x, 1e20, 1)
    assert "outside the 64-bit integer range a Scalar's integer value has" in e.message
    # A double that would arrive as infinity, or as 0.
    e = raises(6, ops.offset_int, np.ones(3, np.int32), 1, 1e39)
    assert "1e39 overflows float32" in e.message
    e = raises(6, ops.offset_int, np.ones(3, np.int32), 1, 1e-50)
    assert "1e-50 underflows float32" in e.message
    raises(6, ops.affine, x, -1e-50, 1)
    # What fits still runs.
    np.testing.assert_array_equal(ops.affine(x, 2.0, 1), np.full(4, 3.0, np.float32))


def test_load_flags_of_the_wrong_type_are_a_neuroncustomop_error(tmp_path):
    compute, shape = sources("relu2d")
    e = raises(2, neuroncustomop.load, "relu2d", compute, shape, build_directory=tmp_path, multicore="yes")
    assert "multicore='yes': give True or False" in e.message
    raises(2, neuroncustomop.load, "relu2d", compute, shape, build_directory=tmp_path, verbose=1)
    e = raises(2, neuroncustomop.load, "x" * 300, compute, shape, build_directory=tmp_path)
    assert "at most 64" in e.message


VENDOR_RELU = textwrap.dedent(
    """\
    #include <torch/torch.h>

    torch::Tensor name(const torch::Tensor& t) {
        torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
        auto in = t.accessor<float, 1>();
        auto o = out.accessor<float, 1>();
        for (int64_t i = 0; i < t.size(0); i++) o[i] = in[i] > 0 ? in[i] : 0.0f;
        return out;
    }

    torch::Tensor ops(const torch::Tensor& t) {
        torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
        auto in = t.accessor<float, 1>();
        auto o = out.accessor<float, 1>();
        for (int64_t i = 0; i < t.size(0); i++) o[i] = -in[i];
        return out;
    }
    """
)

VENDOR_SHAPE = textwrap.dedent(
    """\
    #include <torch/torch.h>
    #include "torchneuron/register.h"

    torch::Tensor same_shape(torch::Tensor t) {
        return torch::zeros(t.sizes(), torch::kFloat);
    }

    NEURON_LIBRARY(relu_ops, m) {
        m.def("name", &same_shape, "name");
        m.def("ops", &same_shape, "ops");
    }
    """
)


def vendor_folder(path):
    path.mkdir(parents=True, exist_ok=True)
    (path / "relu.cpp").write_text(VENDOR_RELU)
    (path / "shape.cpp").write_text(VENDOR_SHAPE)
    return path


def test_the_vendor_layout_and_ops_named_like_attributes(tmp_path, monkeypatch):
    folder = vendor_folder(tmp_path / "tutorial")
    before = {f: (folder / f).read_bytes() for f in ("relu.cpp", "shape.cpp")}
    # As the vendor tutorial does: the build directory is the current folder.
    monkeypatch.chdir(folder)
    lib = neuroncustomop.load("relu", ["relu.cpp"], ["shape.cpp"], build_directory=os.getcwd())
    assert (folder / "librelu.so").is_file()
    assert {f: (folder / f).read_bytes() for f in before} == before
    x = np.array([-1.0, 2.0], np.float32)
    # `name` and `ops` are the library's own attributes: the ops are reached by subscript.
    assert lib.name == "relu" and lib.ops == ["name", "ops"]
    np.testing.assert_array_equal(lib["name"](x), np.array([0.0, 2.0], np.float32))
    np.testing.assert_array_equal(lib["ops"](x), np.array([1.0, -2.0], np.float32))
    assert "name" in lib and "nope" not in lib
    e = raises(6, lambda: lib["nope"])
    assert "its ops: name, ops" in e.message
    raises(2, lambda: lib[0])


def test_a_file_the_build_did_not_write_is_never_replaced(tmp_path):
    folder = vendor_folder(tmp_path / "foreign")
    (folder / "librelu.so").write_bytes(b"someone else's library")
    e = raises(5, neuroncustomop.load, "relu", [folder / "relu.cpp"], [folder / "shape.cpp"], build_directory=folder)
    assert "librelu.so exists and was not written by `customop build`" in e.message
    assert (folder / "librelu.so").read_bytes() == b"someone else's library"


LOAD_AND_RUN = textwrap.dedent(
    """\
    import sys, numpy as np, neuroncustomop
    folder = sys.argv[1]
    lib = neuroncustomop.load("relu", [folder + "/relu.cpp"], [folder + "/shape.cpp"], build_directory=folder + "/build")
    y = lib["name"](np.array([-1.0, 3.0], np.float32))
    assert y.tolist() == [0.0, 3.0], y
    print("ok")
    """
)


def test_load_from_several_processes_at_once(tmp_path):
    folder = vendor_folder(tmp_path / "shared")
    procs = [subprocess.Popen([sys.executable, "-c", LOAD_AND_RUN, str(folder)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    for p, out in zip(procs, outs):
        assert p.returncode == 0 and out.strip().endswith("ok"), out

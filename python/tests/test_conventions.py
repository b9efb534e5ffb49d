"""The conventions of torch.utils.cpp_extension and the vendor's
custom_op.load: __version__, load_inline, on=, timeout=, extra_ldflags,
load_built, and errors that keep the exit status and the runtime's error
code apart."""

import importlib.metadata
import pathlib

import numpy as np
import pytest

import neuroncustomop
from conftest import REPO

RELU = (REPO / "examples" / "relu" / "relu.cpp").read_text()
SHAPE = (REPO / "examples" / "relu" / "shape.cpp").read_text()
X = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)


def test_the_version_is_the_packages():
    assert neuroncustomop.__version__ == importlib.metadata.version("neuroncustomop")
    assert "load_inline" in neuroncustomop.__all__ and "load_built" in neuroncustomop.__all__


def test_load_inline_builds_source_strings_and_reuses_them(tmp_path):
    ops = neuroncustomop.load_inline("inl", [RELU], [SHAPE], build_directory=tmp_path / "b")
    np.testing.assert_array_equal(ops.relu_forward(X), np.maximum(X, 0))
    assert (tmp_path / "b" / "inline" / "compute0.cpp").read_text() == RELU
    again = neuroncustomop.load_inline("inl", [RELU], [SHAPE], build_directory=tmp_path / "b")
    assert again.build_log.compiled == [] and not again.build_log.linked
    changed = RELU.replace("in_acc[i][j] : 0.0f;", "in_acc[i][j] : 1.0f;")
    assert changed != RELU
    ops2 = neuroncustomop.load_inline("inl", [changed], [SHAPE], build_directory=tmp_path / "b")
    assert ops2.relu_forward(X)[0, 0] == 1.0
    with pytest.raises(neuroncustomop.Error) as e:
        neuroncustomop.load_inline("inl", 3, [SHAPE], build_directory=tmp_path / "b")
    assert e.value.exit_code == 2 and "compute_sources" in e.value.message


def test_a_compile_warning_is_kept_and_ldflags_reach_the_linker(tmp_path):
    warn = RELU.replace("{\n    torch::Tensor t_out", "{\n    int unused = 1;\n    torch::Tensor t_out", 1)
    ops = neuroncustomop.load_inline("w", [warn], [SHAPE], build_directory=tmp_path / "w", extra_cflags=["-Wall"])
    assert any("unused variable" in w for w in ops.build_log.warnings), ops.build_log.warnings
    with pytest.raises(neuroncustomop.Error) as e:
        neuroncustomop.load_inline("l", [RELU], [SHAPE], build_directory=tmp_path / "l", extra_ldflags=["-lno_such_library_42"])
    assert e.value.exit_code == 4 and "no_such_library_42" in e.value.message


def test_load_built_opens_a_build_and_takes_timeout_and_on(tmp_path):
    built = neuroncustomop.load_inline("lb", [RELU], [SHAPE], build_directory=tmp_path / "lb")
    lib = neuroncustomop.load_built(built.build_directory, timeout=30)
    np.testing.assert_array_equal(lib.relu_forward(X), np.maximum(X, 0))
    assert lib.on == "sim"
    with pytest.raises(neuroncustomop.Error) as e:
        neuroncustomop.load_built(built.build_directory, on="gpu")
    assert e.value.exit_code == 2 and "on='gpu'" in e.value.message


def test_a_failed_run_carries_the_exit_status_and_the_runtimes_error_apart(built):
    lib = built("failing")
    op = lib[lib.ops[0]]
    with pytest.raises(neuroncustomop.Error) as e:
        op(*[np.ones((4, 4), np.float32) if k == "tensor" else 1 for k in op.kinds])
    assert e.value.exit_code == 7 == e.value.code
    assert isinstance(e.value.error, int) and e.value.error != 0
    assert f"error {e.value.error}:" in e.value.message
    with pytest.raises(neuroncustomop.Error) as e:
        lib[lib.ops[0]](1, 2, 3, 4, 5, 6, 7)
    assert e.value.exit_code == 6 and e.value.error is None


@pytest.mark.parametrize("on", ["qemu", "both"])
def test_the_emulated_cores_from_python(tmp_path, on):
    ops = neuroncustomop.load_inline("q", [RELU], [SHAPE], build_directory=tmp_path / "q", on=on, timeout=300)
    assert ops.on == on
    y = ops.relu_forward(X)
    np.testing.assert_array_equal(y, np.maximum(X, 0))
    y, report = ops.relu_forward(X, report=True)
    assert report.ok


def test_custom_op_load_takes_timeout_extra_ldflags_and_on(tmp_path):
    import os

    if not os.environ.get("NEURONCUSTOMOP_REQUIRE_TORCH"):
        pytest.importorskip("torch")
    import torch

    from neuroncustomop import custom_op

    src = tmp_path / "src"
    src.mkdir()
    (src / "relu.cpp").write_text(RELU)
    (src / "shape.cpp").write_text(SHAPE.replace("my_ops", "conv_ops"))
    lib = custom_op.load(
        name="conv", compute_srcs=[src / "relu.cpp"], shape_srcs=[src / "shape.cpp"], build_directory=tmp_path / "b", timeout=60, extra_ldflags=["-lm"], on="both"
    )
    assert lib.on == "both"
    t = torch.from_numpy(X.copy())
    assert torch.equal(torch.ops.conv_ops.relu_forward(t), torch.relu(t))
    with pytest.raises(custom_op.OpError) as e:
        custom_op.load(name="conv", compute_srcs=[src / "relu.cpp"], shape_srcs=[src / "shape.cpp"], build_directory=tmp_path / "b", timeout=0)
    assert e.value.exit_code == 2 and "timeout=" in e.value.message


ROUNDS_ON_THE_DEVICE = r"""
#include <torch/torch.h>
// Scales by one: on the device by a factor a hair above one, as a device
// libm whose last bit differs from the host's would.
torch::Tensor scale_one(const torch::Tensor& t_in) {
    torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
    auto in = t_in.accessor<float, 1>();
    auto out = t_out.accessor<float, 1>();
#ifdef __XTENSA__
    const float k = 1.0f + 2e-7f;
#else
    const float k = 1.0f;
#endif
    for (int64_t i = 0; i < t_in.size(0); i++) out[i] = in[i] * k;
    return t_out;
}
"""

SCALE_SHAPE = r"""
#include <torch/torch.h>
#include "torchneuron/register.h"
torch::Tensor s(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }
NEURON_LIBRARY(tolerant, m) { m.def("scale_one", &s, "scale_one"); }
"""


def test_on_both_takes_rtol_and_atol_as_assert_close_does(tmp_path):
    ops = neuroncustomop.load_inline("tolerant", [ROUNDS_ON_THE_DEVICE], [SCALE_SHAPE], build_directory=tmp_path / "t", on="both", timeout=300)
    x = np.linspace(1, 100, 64, dtype=np.float32)
    with pytest.raises(neuroncustomop.Error) as e:
        ops.scale_one(x)
    assert e.value.exit_code == 11 and "the largest difference is" in e.value.message
    y = ops.scale_one(x, rtol=1e-6)
    np.testing.assert_allclose(y, x, rtol=1e-6)
    with pytest.raises(neuroncustomop.Error) as e:
        ops.scale_one(x, rtol=-1)
    assert e.value.exit_code == 2
    sim = neuroncustomop.load_inline("tolerant", [ROUNDS_ON_THE_DEVICE], [SCALE_SHAPE], build_directory=tmp_path / "s")
    with pytest.raises(neuroncustomop.Error) as e:
        sim.scale_one(x, atol=1e-6)
    assert e.value.exit_code == 2 and 'on="both"' in e.value.message


def test_include_paths_name_the_kernel_headers_as_cpp_extension_does():
    paths = neuroncustomop.include_paths()
    assert paths and all(pathlib.Path(p).is_absolute() for p in paths)
    assert any((pathlib.Path(p) / "torch" / "torch.h").is_file() for p in paths), paths


def test_an_ops_signature_and_help_show_what_users_pass(built):
    import inspect
    import pydoc

    op = built("scalar_args")
    op = op[op.ops[0]]
    sig = inspect.signature(op)
    names = list(sig.parameters)
    assert names[-6:] == ["cores", "report", "timeout", "profile", "rtol", "atol"], sig
    positional = [p for p in sig.parameters.values() if p.kind is inspect.Parameter.POSITIONAL_ONLY]
    assert [p.annotation for p in positional] == op.params and len(positional) == len(op.kinds)
    assert sig.parameters["cores"].default == 1 and sig.parameters["report"].default is False
    text = pydoc.render_doc(op, renderer=pydoc.plaintext)
    assert "cores=None, report=False, timeout=None, profile=None" in text.replace("\n |  ", " "), text

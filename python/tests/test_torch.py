"""``neuroncustomop.custom_op``: the vendor's PyTorch workflow (build with
``custom_op.load``, call ``torch.ops.<lib>.<op>``, wrap the ops in a
``torch.autograd.Function``) on the simulator."""

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import HERE, kernel_dir, sources

# CI installs torch and sets this: a missing torch is then a failure, not a skip.
if os.environ.get("NEURONCUSTOMOP_REQUIRE_TORCH"):
    import torch
else:
    torch = pytest.importorskip("torch")

import neuroncustomop  # noqa: E402
from neuroncustomop import custom_op  # noqa: E402
from torch.library import opcheck  # noqa: E402


def load(kernel, build_root, multicore=False, **kw):
    compute, shape = sources(kernel)
    return custom_op.load(
        name=kernel, compute_srcs=compute, shape_srcs=shape, build_directory=build_root / f"torch_{kernel}", multicore=multicore, **kw
    )


@pytest.fixture(scope="module")
def libs(build_root):
    """Every test library registered once: my_ops (the MLP's ReLU),
    relu2d_mc_ops (its 8-core form), dtype_ops and dtype_mc_ops (every
    dtype), scalar_ops (value arguments), failing_ops (a failing kernel
    and a failing shape function)."""
    return {
        "my_ops": load("mlp_relu", build_root),
        "relu2d_mc_ops": load("relu2d_mc", build_root, multicore=True),
        "dtype_ops": load("dtypes", build_root),
        "scalar_ops": load("scalar_args", build_root),
        "dtype_mc_ops": load("dtypes_mc", build_root, multicore=True),
        "failing_ops": load("failing", build_root, multicore=True),
    }


class Relu(torch.autograd.Function):
    """The vendor tutorial's my_ops.Relu, as its users write it."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return torch.ops.my_ops.relu_forward(input)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        return torch.ops.my_ops.relu_backward(grad, input), None


class ReluMc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return torch.ops.relu2d_mc_ops.relu_forward(input)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        return torch.ops.relu2d_mc_ops.relu_backward(grad, input), None


class MLP(torch.nn.Module):
    """The tutorial's 3-layer MLP; `relu` is the activation."""

    def __init__(self, relu, input_size=28 * 28, output_size=10, layers=(120, 84)):
        super().__init__()
        self.relu = relu
        self.fc1 = torch.nn.Linear(input_size, layers[0])
        self.fc2 = torch.nn.Linear(layers[0], layers[1])
        self.fc3 = torch.nn.Linear(layers[1], output_size)

    def forward(self, x):
        r1 = self.relu(self.fc1(x))
        r2 = self.relu(self.fc2(r1))
        return torch.log_softmax(self.fc3(r2), dim=1)


def data(steps, batch=16, seed=0):
    """One batch, `steps` times: the loss on it falls as the model fits it."""
    g = torch.Generator().manual_seed(seed)
    x, y = torch.rand(batch, 28 * 28, generator=g), torch.randint(0, 10, (batch,), generator=g)
    return [(x, y)] * steps


def train(model, batches, compile=None):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    step_fn = model if compile is None else torch.compile(model, **compile)
    losses = []
    for x, y in batches:
        opt.zero_grad()
        loss = torch.nn.functional.nll_loss(step_fn(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def twins(relu):
    torch.manual_seed(7)
    ours = MLP(relu)
    torch.manual_seed(7)
    reference = MLP(torch.relu)
    return ours, reference


def assert_bit_identical(a, b):
    for (name, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        assert torch.equal(p, q), f"parameter {name} differs"


@pytest.mark.parametrize("relu", [Relu.apply, ReluMc.apply], ids=["1-core", "8-core"])
def test_the_tutorials_mlp_trains_bit_identical_to_torch_relu(libs, relu):
    ours, reference = twins(relu)
    batches = data(6)
    losses = train(ours, batches)
    assert train(reference, batches) == losses
    assert_bit_identical(ours, reference)
    assert losses[-1] < losses[0], losses


def test_the_mlp_compiles_with_aot_eager_fullgraph_and_with_inductor(libs):
    batches = data(3, seed=1)
    # aot_eager runs the traced graph with eager kernels: bit-identical to
    # eager torch.relu. Inductor generates its own code for the rest of the
    # model (log_softmax, the losses): bit-identical to the torch.relu model
    # compiled the same way.
    for options, reference_options in [(dict(backend="aot_eager", fullgraph=True), None), (dict(fullgraph=True), dict(fullgraph=True))]:
        torch._dynamo.reset()
        ours, reference = twins(Relu.apply)
        losses = train(ours, batches, compile=options)
        assert train(reference, batches, compile=reference_options) == losses
        assert_bit_identical(ours, reference)
        assert losses[-1] < losses[0]


def test_opcheck_passes_for_every_op(libs):
    f = torch.randn(6, 10)
    cases = [
        (torch.ops.my_ops.relu_forward, (f,)),
        (torch.ops.my_ops.relu_backward, (torch.randn(6, 10), f)),
        (torch.ops.relu2d_mc_ops.relu_forward, (f,)),
        (torch.ops.relu2d_mc_ops.relu_backward, (torch.randn(6, 10), f)),
        (torch.ops.dtype_ops.flip_any, (torch.randint(-50, 50, (3, 7), dtype=torch.int16),)),
        (torch.ops.dtype_ops.flip_any, (torch.randn(3, 7).to(torch.bfloat16),)),
        (torch.ops.dtype_ops.plus_two_16bit, (torch.randn(4, 4).to(torch.float16),)),
        (torch.ops.dtype_mc_ops.flip_any, (torch.randn(5, 9).to(torch.float16),)),
        (torch.ops.scalar_ops.affine, (torch.randn(9), 2.5, 3)),
        (torch.ops.scalar_ops.affine, (torch.randn(9), -2, 0)),
        (torch.ops.scalar_ops.offset_int, (torch.arange(-4, 4, dtype=torch.int32), 5, 0.5)),
    ]
    for op, args in cases:
        opcheck(op, args)


def test_fake_tensor_mode_runs_the_shape_function_and_never_the_kernel(libs, build_root):
    runs = []
    load("scalar_args", build_root, report=lambda op, rep: runs.append(op))
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(5, 3, dtype=torch.int32)
        y = torch.ops.scalar_ops.offset_int(x.reshape(15), 1, 2.0)
        z = torch.ops.scalar_ops.affine(torch.empty(8), 1.5, 2)
        w = torch.ops.dtype_ops.flip_any(torch.empty(2, 3, 4, dtype=torch.bfloat16))
    assert (y.shape, y.dtype) == ((15,), torch.int32)  # the shape function says int
    assert (z.shape, z.dtype) == ((8,), torch.float32)
    assert (w.shape, w.dtype) == ((2, 3, 4), torch.bfloat16)
    assert runs == []
    torch.ops.scalar_ops.affine(torch.ones(2), 1.0, 1)
    assert runs == ["scalar_ops.affine"]
    # A shape function that fails fails under fake tensors too, with its code.
    with FakeTensorMode(), pytest.raises(custom_op.OpError) as e:
        torch.ops.failing_ops.no_shape(torch.empty(4))
    assert e.value.code == 8 and "undefined tensor" in e.value.message


def test_every_dtype_round_trips_including_bf16_and_fp16(libs):
    for dtype in [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]:
        x = torch.randint(0, 100, (4, 9)).to(dtype)
        y = torch.ops.dtype_ops.flip_any(x)
        assert y.dtype == dtype and torch.equal(y, ~x)
    for dtype in [torch.float16, torch.bfloat16, torch.float32]:
        x = torch.randn(5, 6).to(dtype)
        y = torch.ops.dtype_ops.flip_any(x)
        assert y.dtype == dtype and torch.equal(y, -x)
        if dtype != torch.float32:
            small = torch.arange(-8, 8).reshape(4, 4).to(dtype) / 4
            assert torch.equal(torch.ops.dtype_ops.plus_two_16bit(small), small + 2)
    # Views are gathered: a transpose and a strided slice.
    base = torch.randn(6, 8)
    for view in [base.T, base[::2, 1::3]]:
        assert torch.equal(torch.ops.my_ops.relu_forward(view), torch.relu(view))


def test_a_multicore_library_runs_on_eight_cores_and_on_one_when_asked(libs, build_root):
    cores = []
    load("relu2d_mc", build_root, multicore=True, report=lambda op, rep: cores.append(len(rep.cores)))
    x = torch.randn(37, 5)
    assert torch.equal(torch.ops.relu2d_mc_ops.relu_forward(x), torch.relu(x))
    # cores=1 on a multicore build: the kernel's 8-way slicing leaves 7/8
    # of the output unwritten, a failed run, as the vendor's model says.
    lib = load("dtypes_mc", build_root, multicore=True, cores=1, report=lambda op, rep: cores.append(len(rep.cores)))
    assert lib.multicore
    e = raises_op_error(7, torch.ops.dtype_mc_ops.flip_any, torch.ones(3, 11, dtype=torch.int64))
    assert "run it on 8" in e.message and len(e.report.cores) == 1
    load("dtypes_mc", build_root, multicore=True, report=lambda op, rep: cores.append(len(rep.cores)))
    y = torch.randint(-9, 9, (3, 11), dtype=torch.int64)
    assert torch.equal(torch.ops.dtype_mc_ops.flip_any(y), ~y)
    assert cores == [8, 8]
    with pytest.raises(custom_op.OpError) as e:
        load("mlp_relu", build_root, cores=8)
    assert e.value.code == 2 and "without multicore=True" in e.value.message
    for bad in [2, 8.0, "8", True]:
        with pytest.raises(custom_op.OpError) as e:
            load("mlp_relu", build_root, cores=bad)
        assert e.value.code == 2
    with pytest.raises(custom_op.OpError, match="give a callable"):
        load("mlp_relu", build_root, report=True)
    load("mlp_relu", build_root)  # registered again for the other tests


def test_load_library_registers_a_prebuilt_library_in_a_fresh_process(libs, build_root, tmp_path):
    so = libs["my_ops"].library_file
    assert so.name == "libmlp_relu.so"
    script = tmp_path / "use.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            import torch
            from neuroncustomop import custom_op

            custom_op.load_library({str(so)!r})
            x = torch.tensor([[-1.5, 2.0], [3.0, -0.25]])
            y = torch.ops.my_ops.relu_forward(x)
            g = torch.ops.my_ops.relu_backward(torch.ones(2, 2), x)
            print(y.tolist(), g.tolist())
            custom_op.load_library({str(so.parent)!r})  # the build directory works too
            print(sorted(custom_op.registered()))
            """
        )
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[[0.0, 2.0], [3.0, 0.0]] [[0.0, 1.0], [1.0, 0.0]]", "['my_ops']"]


def test_a_second_library_in_one_process_warns_that_the_device_refuses_it(libs, tmp_path):
    first, second = libs["my_ops"].library_file, libs["dtype_ops"].library_file
    script = tmp_path / "two.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import warnings
            from neuroncustomop import custom_op

            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                custom_op.load_library({str(first)!r})
                custom_op.load_library({str(first)!r})  # the same library again: no warning
                print(len(seen))
                custom_op.load_library({str(second)!r})
                print(len(seen), seen[-1].category.__name__, str(seen[-1].message))
            """
        )
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "0", r.stdout
    assert lines[1].startswith("1 RuntimeWarning custom_op: NEURON_LIBRARY(dtype_ops) is a second custom-op library in this process (already: my_ops)"), r.stdout
    assert "a second is refused" in lines[1], r.stdout


def test_importing_the_package_does_not_import_torch():
    code = "import sys, neuroncustomop; neuroncustomop.load; assert 'torch' not in sys.modules, 'torch imported'"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def raises_op_error(code, fn, *args):
    with pytest.raises(custom_op.OpError) as info:
        fn(*args)
    e = info.value
    assert e.code == code, e.message
    assert isinstance(e, RuntimeError) and isinstance(e, neuroncustomop.Error)
    return e


def test_bad_dtypes_and_bad_arguments(libs):
    relu = torch.ops.my_ops.relu_forward
    e = raises_op_error(6, relu, torch.ones(2, 2, dtype=torch.float64))
    assert "torch.float64 does not marshal: convert with .float()" in e.message
    raises_op_error(6, relu, torch.ones(2, 2, dtype=torch.bool))
    raises_op_error(6, relu, torch.ones(2, 2, dtype=torch.complex64))
    raises_op_error(6, relu, torch.tensor(1.0))  # 0-d
    raises_op_error(6, relu, torch.ones(3, 0))
    raises_op_error(6, torch.ops.scalar_ops.affine, torch.ones(3), True, 1)
    # The schema is the compute function's: torch itself refuses a call that does not fit it.
    for bad in [(), (torch.ones(2, 2), torch.ones(2, 2)), ("x",)]:
        with pytest.raises((RuntimeError, TypeError)):
            relu(*bad)
    with pytest.raises((RuntimeError, TypeError)):
        torch.ops.scalar_ops.affine(torch.ones(3), 1.0, 1.5)
    assert "Tensor arg0, Scalar arg1, int arg2" in str(torch.ops.scalar_ops.affine.default._schema)
    # A kernel that fails: its code and report, as a RuntimeError.
    e = raises_op_error(7, torch.ops.failing_ops.wrong_dtype, torch.ones(8))
    assert "error 35" in e.message and not e.report.ok and len(e.report.cores) == 8
    # A backward through the op itself: no derivative is made up.
    x = torch.randn(2, 3, requires_grad=True)
    y = relu(x)
    with pytest.raises(custom_op.OpError, match="has no derivative"):
        y.sum().backward()


def test_load_errors_are_runtime_errors_with_their_code(tmp_path):
    compute, shape = sources("broken")
    e = raises_op_error(4, custom_op.load, "broken", compute, shape, [], [], tmp_path)
    assert "this_member_does_not_exist" in e.message
    raises_op_error(5, custom_op.load_library, tmp_path / "missing" / "libx.so")
    raises_op_error(6, custom_op.load_library, tmp_path)  # not a build directory


def test_extra_include_paths_reach_the_compiler(tmp_path, build_root):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "factor.h").write_text("#define FACTOR 5.0f\n")
    src = tmp_path / "scale.cpp"
    src.write_text('#include "factor.h"\n' + (kernel_dir("reload") / "scale.cpp").read_text().replace("2.0f;  // FACTOR", "FACTOR;"))
    custom_op.load("inc", [src], [kernel_dir("reload") / "shape.cpp"], extra_include_paths=[str(inc)], build_directory=tmp_path / "b")
    assert torch.equal(torch.ops.reload_ops.scale(torch.ones(3)), torch.full((3,), 5.0))


def test_loading_again_replaces_the_ops(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for f in ["scale.cpp", "shape.cpp"]:
        (src / f).write_text((kernel_dir("reload") / f).read_text())
    x = torch.arange(4.0)

    def build():
        return custom_op.load("reload", [src / "scale.cpp"], [src / "shape.cpp"], build_directory=tmp_path / "build")

    build()
    compiled = torch.compile(lambda t: torch.ops.reload_ops.scale(t) + 1, backend="aot_eager", fullgraph=True)
    assert torch.equal(torch.ops.reload_ops.scale(x), x * 2)
    assert torch.equal(compiled(x), x * 2 + 1)
    (src / "scale.cpp").write_text((src / "scale.cpp").read_text().replace("2.0f;  // FACTOR", "3.0f;  // FACTOR"))
    build()
    assert torch.equal(torch.ops.reload_ops.scale(x), x * 3)
    opcheck(torch.ops.reload_ops.scale, (x,))
    torch._dynamo.reset()
    assert torch.equal(compiled(x), x * 3 + 1)


def test_torch_export_traces_through_the_op(libs):
    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.ops.scalar_ops.affine(torch.ops.my_ops.relu_forward(x).reshape(-1), 2.0, 1) * 3

    x = torch.randn(4, 6)
    exported = torch.export.export(Model(), (x,))
    targets = {str(n.target) for n in exported.graph.nodes if n.op == "call_function"}
    assert {"my_ops.relu_forward.default", "scalar_ops.affine.default"} <= targets, targets
    assert torch.equal(exported.module()(x), (torch.relu(x).reshape(-1) * 2 + 1) * 3)


def test_a_contiguous_tensor_reaches_the_simulator_from_its_own_memory(libs):
    op = libs["my_ops"].relu_forward
    x = torch.randn(8, 5)
    name, shape, data = custom_op._packed(op, 0, x)
    assert (name, shape) == ("float32", (8, 5)) and data.__array_interface__["data"][0] == x.data_ptr()
    # A view that is not contiguous is gathered first (into a new tensor).
    name, shape, data = custom_op._packed(op, 0, x.T)
    assert shape == (5, 8) and data.__array_interface__["data"][0] != x.data_ptr()
    # bfloat16 travels as its bytes too.
    b = torch.randn(3, 3).to(torch.bfloat16)
    name, _, data = custom_op._packed(op, 0, b)
    assert name == "bfloat16" and data.nbytes == 18 and data.__array_interface__["data"][0] == b.data_ptr()

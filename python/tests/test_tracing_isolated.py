"""Tracing never kills the interpreter: under PyTorch's fake tensors
(what ``torch.compile`` and ``torch.export`` trace with) a shape function
that crashes or never returns is an ``OpError``, as in an eager call, and
Python lives on. Each case runs in its own interpreter, so that a
regression is this test's failure (exit 139, a hang), not pytest's death."""

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import kernel_dir

if not os.environ.get("NEURONCUSTOMOP_REQUIRE_TORCH"):
    pytest.importorskip("torch")

PROLOGUE = """
import sys, time
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from neuroncustomop import custom_op

k = sys.argv[1]
custom_op.load(name="shape_crash", compute_srcs=[k + "/ops.cpp"], shape_srcs=[k + "/shape.cpp"],
               build_directory=sys.argv[2], timeout=3)
ops = torch.ops.shape_crash_ops
"""


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    """One build for the module's interpreters (the later ones find it current)."""
    return tmp_path_factory.mktemp("shape_crash") / "build"


def run(build, body):
    script = PROLOGUE + textwrap.dedent(body) + "\nprint('alive')\n"
    p = subprocess.run(
        [sys.executable, "-c", script, str(kernel_dir("shape_crash")), str(build)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    out = p.stdout + p.stderr
    assert p.returncode == 0 and "alive" in p.stdout, f"exit {p.returncode}:\n{out}"
    return p.stdout


def test_a_crashing_shape_function_under_fake_tensors_is_an_op_error(build_dir):
    out = run(
        build_dir,
        """
        # Eager: the crash is an OpError with its crash report.
        try:
            ops.crashy(torch.ones(3))
        except custom_op.OpError as e:
            eager = e
        print("eager:", eager.code, eager.message.splitlines()[0])
        with FakeTensorMode():
            ok = ops.crashy(torch.empty(4))  # another size is fine
            assert ok.shape == (4,), ok.shape
            try:
                ops.crashy(torch.empty(3))
                raise SystemExit("the crash was not reported")
            except custom_op.OpError as e:
                fake = e
        print("fake:", fake.code, fake.message.splitlines()[0])
        assert fake.code == eager.code, (fake.code, eager.code)
        assert "shape function `crashy_shape`" in fake.message and "SIGSEGV" in fake.message, fake.message
        """,
    )
    assert "fake:" in out


def test_a_crashing_shape_function_under_torch_compile_is_an_error_not_a_death(build_dir):
    run(
        build_dir,
        """
        f = torch.compile(lambda t: ops.crashy(t) + 1, backend="aot_eager", fullgraph=True)
        assert torch.equal(f(torch.ones(4)), torch.full((4,), 2.0))
        try:
            f(torch.ones(3))
            raise SystemExit("the crash was not reported")
        except Exception as e:  # dynamo wraps it; the OpError is in the chain
            chain, c = [], e
            while c is not None:
                chain.append(c)
                c = c.__cause__ or c.__context__
            assert any(isinstance(c, custom_op.OpError) for c in chain) or "SIGSEGV" in str(e), repr(e)
        """,
    )


def test_a_shape_function_that_never_returns_is_bounded_by_timeout(build_dir):
    out = run(
        build_dir,
        """
        t0 = time.monotonic()
        with FakeTensorMode():
            try:
                ops.spinning(torch.empty(5))
                raise SystemExit("the hang was not bounded")
            except custom_op.OpError as e:
                print("took", round(time.monotonic() - t0, 1), e.message.splitlines()[0])
                assert "timeout" in e.message, e.message
            assert ops.spinning(torch.empty(6)).shape == (6,)
        """,
    )
    took = float(out.split("took ")[1].split()[0])
    assert took < 30, out

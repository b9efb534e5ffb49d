"""``profile=DIR`` on an op call of a library loaded for the emulated
cores: the run goes through the profiling instrument, DIR gets the same
files as ``customop run --profile``, and the report carries the profile."""

import numpy as np
import pytest

import neuroncustomop
from conftest import REPO

RELU = (REPO / "examples" / "relu" / "relu.cpp").read_text()
SHAPE = (REPO / "examples" / "relu" / "shape.cpp").read_text()
X = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)


def test_a_profiled_call_writes_the_profile_and_reports_it(tmp_path):
    ops = neuroncustomop.load_inline("prof", [RELU], [SHAPE], build_directory=tmp_path / "b", on="qemu", timeout=300)
    y, rep = ops.relu_forward(X, report=True, profile=tmp_path / "prof")
    np.testing.assert_array_equal(y, np.maximum(X, 0))
    for f in ["profile.json", "flamegraph.svg", "trace.json"]:
        assert (tmp_path / "prof" / f).is_file(), f
    assert rep.profile_dir == str(tmp_path / "prof")
    p = rep.profile
    assert p["modeled_ns"] > 0 and len(p["cores"]) == 1 and p["cores"][0]["instructions"] > 0, p
    # The kernel's own lines are named, with their share of the time.
    kernel = [line for line in p["lines"] if not line["library"] and line["file"].endswith("compute0.cpp")]
    assert any(line["line"] > 0 for line in kernel), p["lines"][:5]
    assert "modeled" in rep.profile_summary, rep.profile_summary
    # A call without profile= carries none.
    _, plain = ops.relu_forward(X, report=True)
    assert plain.profile is None and plain.profile_dir is None


def test_profile_needs_the_emulated_cores(tmp_path):
    ops = neuroncustomop.load_inline("prof_sim", [RELU], [SHAPE], build_directory=tmp_path / "s")
    with pytest.raises(neuroncustomop.Error) as e:
        ops.relu_forward(X, profile=tmp_path / "p")
    assert e.value.exit_code == 2 and 'on="qemu"' in e.value.message, e.value.message
    assert not (tmp_path / "p").exists()

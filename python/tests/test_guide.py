"""docs/kernel-guide.md's Python path as printed: its relu.cpp, shape.cpp
and test_relu.py, run with pytest in a fresh directory."""

import re
import subprocess
import sys

from conftest import REPO

GUIDE = (REPO / "docs" / "kernel-guide.md").read_text()


def block(lang, first_line):
    m = re.search(rf"```{lang}\n({re.escape(first_line)}\n.*?)```", GUIDE, re.S)
    assert m, f"the guide has no ```{lang} block starting with {first_line!r}"
    return m.group(1)


def test_the_guides_pytest_example_passes_as_printed(tmp_path):
    (tmp_path / "relu.cpp").write_text(block("cpp", "// relu.cpp"))
    (tmp_path / "shape.cpp").write_text(block("cpp", "// shape.cpp"))
    (tmp_path / "relu_mc.cpp").write_text(block("cpp", "// relu_mc.cpp"))
    (tmp_path / "test_relu.py").write_text(block("python", "# test_relu.py"))
    claimed = re.search(r"pytest -q test_relu.py +# (\d+) passed", GUIDE)
    assert claimed, "the guide says how many tests pass"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_relu.py"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{claimed.group(1)} passed" in r.stdout, r.stdout
    assert (tmp_path / "build" / "my_ops" / "libmy_ops.so").is_file()
    assert (tmp_path / "build" / "my_ops_mc" / "libmy_ops_mc.so").is_file()


def test_the_guides_pytorch_script_prints_what_the_guide_shows(tmp_path):
    import os

    import pytest

    if not os.environ.get("NEURONCUSTOMOP_REQUIRE_TORCH"):
        pytest.importorskip("torch")
    mlp = tmp_path / "mlp"
    mlp.mkdir()
    (mlp / "relu.cpp").write_text(block("cpp", "// mlp/relu.cpp"))
    (mlp / "shape.cpp").write_text(block("cpp", "// mlp/shape.cpp"))
    (mlp / "train.py").write_text(block("python", "# mlp/train.py"))
    shown = re.search(r"cd mlp && python train.py\n```\n\nprints[^\n]*\n[^`]*```text\n(.*?)```", GUIDE, re.S)
    assert shown, "the guide shows what train.py prints"
    r = subprocess.run([sys.executable, "train.py"], cwd=mlp, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    # The losses vary with torch's version; everything else is as shown.
    numbers = re.compile(r"\d+\.\d{4}")
    assert numbers.sub("N", r.stdout) == numbers.sub("N", shown.group(1)), r.stdout
    first, last = map(float, re.search(r"Loss (\S+) -> (\S+)", r.stdout).groups())
    assert last < first
    assert "Parameters bit-identical to torch.relu's: True" in r.stdout
    assert (mlp / "librelu.so").is_file()

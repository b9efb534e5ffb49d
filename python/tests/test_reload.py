"""Reloading a library while other threads call its ops returns promptly:
the calls already made finish on the old code, later ones reach the new
code, and no call fails, hangs or returns a wrong result. The rounds run
in an interpreter of their own, each bounded to 90 s (a hang is a
failure, not a stuck test run; a round takes 3 to 15 s). 4 rounds in CI;
NEURONCUSTOMOP_RELOAD_ROUNDS=N runs more."""

import os
import subprocess
import sys

import pytest

from conftest import HERE, kernel_dir

ROUNDS = int(os.environ.get("NEURONCUSTOMOP_RELOAD_ROUNDS", "4"))
ROUND_BOUND_S = 90


@pytest.mark.parametrize("flavour", ["numpy", "torch"])
def test_reloading_under_load_never_hangs(tmp_path, flavour):
    if flavour == "torch" and not os.environ.get("NEURONCUSTOMOP_REQUIRE_TORCH"):
        pytest.importorskip("torch")
    rounds = ROUNDS if flavour == "numpy" else 2
    cmd = [sys.executable, str(HERE / "reload_under_load.py"), str(kernel_dir("reload")), str(tmp_path), str(rounds)]
    if flavour == "torch":
        cmd.append("torch")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=ROUND_BOUND_S * rounds + 60)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"reloading under load hung:\n{e.stdout or ''}{e.stderr or ''}")
    assert p.returncode == 0 and p.stdout.rstrip().endswith("ok"), f"exit {p.returncode}\n{p.stdout}{p.stderr}"

"""The emulated cores' check's cost (issue 40), measured in one run of this
script.

`customop run --on qemu` of the [ROWS, 4096] float32 relus (ROWS=32 unless
the environment says) of
customop/tests/kernels/profile_relus (element accessor and TCM staging,
1 core) and profile_relu_mc (TCM, 8 cores) with the check (the default)
against the same run with NEURON_QEMU_CHECK=0. Prints the best of 3 wall
times and the ratio (the issue's bound: 5x).

    cargo build -p customop && python3 perf/qemu_check_cost.py [TOOL]
"""

import os
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cost_common import best, build as build_in, root  # noqa: E402

tool = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "target/debug/customop"
work = root / "target/qemu-check-cost"
work.mkdir(parents=True, exist_ok=True)


def build(name, folder, *extra):
    return build_in(tool, work, name, folder, "--target", "qemu", *extra)


x = work / "x.npy"
rows = int(os.environ.get("ROWS", "32"))
np.save(x, np.random.default_rng(0).standard_normal((rows, 4096), dtype=np.float32))


one = build("profile_relus", "profile_relus")
mc = build("profile_relu_mc", "profile_relu_mc", "--multicore")
checked = dict(os.environ)
checked.pop("NEURON_QEMU_CHECK", None)
plain = dict(checked, NEURON_QEMU_CHECK="0")
print("| run | checked | plain | ratio |")
print("|---|---:|---:|---:|")
for label, d, op, cores in [
    ("element accessor, 1 core", one, "relu_element", 1),
    ("TCM staging, 1 core", one, "relu_tcm", 1),
    ("TCM, 8 cores", mc, "relu_mc", 8),
]:
    cmd = [str(tool), "run", str(d), op, str(x), "-o", str(work / "out.npy"), "--on", "qemu", "--cores", str(cores)]
    c, p = best(cmd, checked), best(cmd, plain)
    print(f"| {label} | {c:.2f} s | {p:.2f} s | {c / p:.2f}x |")

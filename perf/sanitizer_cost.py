"""The sanitizer's cost (issue 25), measured in one run of this script.

`customop run` of a relu over a 4 MiB float32 tensor (the element kernel
allocates its output on the core's 5 MiB HBM heap) with the sanitizer
(the default) against the same run with NEURON_SIM_SANITIZE=0: the
element-accessor kernel (a hook per element), the TCM kernel (a hook per
copy) on 1 core, and the TCM kernel on 8 cores (whose verdict no longer
needs the 16 attribution runs when the hooks saw every write; without the
sanitizer they run). Prints the best of 3 wall times and the ratio.

    cargo build --release -p customop && python3 perf/sanitizer_cost.py
"""

import os
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cost_common import best, build as build_in, root  # noqa: E402

tool = root / "target/release/customop"
work = root / "target/sanitizer-cost"
work.mkdir(parents=True, exist_ok=True)


def build(name, folder, *extra):
    return build_in(tool, work, name, folder, *extra)


x = work / "x.npy"
np.save(x, np.random.default_rng(0).standard_normal((1024, 1024), dtype=np.float32))


def row(label, lib, op, cores):
    cmd = [str(tool), "run", str(lib), op, str(x), "-o", str(work / "y.npy"), "--cores", str(cores)]
    on = best(cmd, dict(os.environ))
    off = best(cmd, dict(os.environ, NEURON_SIM_SANITIZE="0"))
    print(f"{label:<28} sanitizer {on:7.3f} s   without {off:7.3f} s   ratio {on / off:5.2f}x")


if not tool.exists():
    sys.exit("build it first: cargo build --release -p customop")
row("element accessor, 1 core", build("relu2d", "relu2d"), "relu_forward", 1)
row("TCM, 1 core", build("tcm_ops", "tcm_single"), "relu_tcm", 1)
row("TCM, 8 cores", build("tcm_mc", "tcm_multicore", "--multicore"), "relu_multicore", 8)

"""What the cost scripts share: building a test kernel with the tool and
timing a command (best of 3 wall times)."""

import pathlib
import subprocess
import time

root = pathlib.Path(__file__).resolve().parent.parent
kernels = root / "customop/tests/kernels"


def build(tool, work, name, folder, *extra):
    """`customop build` of customop/tests/kernels/FOLDER into WORK/NAME
    (its shape*.cpp files as the shape sources, the rest as compute)."""
    srcs = sorted((kernels / folder).glob("*.cpp"))
    args = [str(tool), "build", "--name", name, "--out", str(work / name), *extra]
    for s in srcs:
        args += ["--shape" if s.name.startswith("shape") else "--compute", str(s)]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return work / name


def best(cmd, env):
    """The best of 3 wall times of `cmd` under `env`, output discarded."""
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return min(times)

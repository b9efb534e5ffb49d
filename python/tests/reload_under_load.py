"""Rounds of reloading under load, run as its own process by
test_reload.py (a hang there is a timeout, not a stuck test run). In
each round 8 threads call a library's op without pause while the main
thread edits the kernel's factor and loads the library again, 4 times.
Every result must be the factor of the library the call went to; no
call may fail; each round must end within 90 s (a hang, not a slow
machine: a round takes 3 to 15 s).

Usage: python reload_under_load.py KERNEL_DIR WORK_DIR ROUNDS [torch]
"""

import pathlib
import sys
import threading
import time

import numpy as np

import neuroncustomop

kernel, work, rounds = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
use_torch = sys.argv[4:] == ["torch"]
src = work / "src"
src.mkdir(parents=True, exist_ok=True)
shape = src / "shape.cpp"
shape.write_text((kernel / "shape.cpp").read_text())
template = (kernel / "scale.cpp").read_text()
assert "2.0f;  // FACTOR" in template


def build(factor):
    (src / "scale.cpp").write_text(template.replace("2.0f;  // FACTOR", f"{factor}.0f;  // FACTOR"))
    # Each factor is an exact float: a result names the build it came from.
    if use_torch:
        from neuroncustomop import custom_op

        custom_op.load(name="reload", compute_srcs=[src / "scale.cpp"], shape_srcs=[shape], build_directory=work / "build")
        import torch

        return lambda x: torch.ops.reload_ops.scale(torch.from_numpy(x)).numpy(), factor
    lib = neuroncustomop.load("reload", [src / "scale.cpp"], [shape], build_directory=work / "build")
    return lib.scale, factor


def reload_round(r, current):
    """One round: 8 callers of `current[0]`, 4 reloads, each with the next factor."""
    first = current[0][1]
    stop = threading.Event()
    failures = []
    calls = [0] * 8
    x = np.arange(1, 65, dtype=np.float32)

    def caller(i):
        while not stop.is_set():
            op, factor = current[0]
            try:
                y = op(x)
            except Exception as e:  # noqa: BLE001 - every failure is reported
                failures.append(f"thread {i}: {type(e).__name__}: {e}")
                return
            if use_torch:
                # torch.ops names the newest registration: a factor loaded
                # since the call's library is right, an older one is not.
                if not any(np.array_equal(y, x * f) for f in range(factor, first + 5)):
                    failures.append(f"thread {i}: got {y[:4]} for factor >= {factor}")
                    return
            elif not np.array_equal(y, x * factor):
                failures.append(f"thread {i}: got {y[:4]}, want factor {factor}")
                return
            calls[i] += 1

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for factor in range(first + 1, first + 5):
        current[0] = build(factor)
        if failures:
            break
    stop.set()
    for t in threads:
        t.join()
    assert not failures, f"round {r}: " + "\n".join(failures)
    assert all(calls), f"round {r}: a thread made no call: {calls}"
    op, factor = current[0]
    assert np.array_equal(op(x), x * factor)
    return sum(calls)


current = [build(2)]
for r in range(rounds):
    t0 = time.monotonic()
    n = reload_round(r, current)
    took = time.monotonic() - t0
    print(f"round {r}: {n} calls during 4 reloads, {took:.1f} s", flush=True)
    assert took < 90, f"round {r} took {took:.1f} s: a reload or a call hung"
print("ok")

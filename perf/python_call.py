"""The cost of a Python op call against numpy.maximum on the same array, in
one run (issue 28): a relu kernel (perf/python_call/) called on 16 and on
1 Mi float32 elements. Run with a python that has numpy and the built
`neuroncustomop` package; prints one JSON object on stdout:

    {"call16_ratio": R, "call1m_ratio": R, "call16_us": t, "call1m_us": t,
     "numpy16_us": t, "numpy1m_us": t}

Each time is the minimum over several rounds of the mean of a batch of
calls, so load on a shared machine does not dominate. The build goes to
a temporary directory (or $PYTHON_CALL_BUILD, kept between runs).
"""

import json
import os
import pathlib
import sys
import tempfile
import time

# numpy.maximum uses no BLAS: its idle threads would only take the CPU.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy  # noqa: E402

import neuroncustomop  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent / "python_call"


def best_us(f, batch, rounds):
    """The fastest of `rounds` batches of `batch` calls of f, per call, in µs."""
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(batch):
            f()
        best = min(best, (time.perf_counter() - t) / batch)
    return best * 1e6


def measure(lib, n, batch, rounds):
    x = numpy.random.default_rng(n).standard_normal(n).astype(numpy.float32)
    want = numpy.maximum(x, 0)
    got = lib.relu_forward(x)
    if not numpy.array_equal(got, want):
        sys.exit(f"python_call: relu_forward on {n} elements gave a wrong result")
    call = best_us(lambda: lib.relu_forward(x), batch, rounds)
    ref = best_us(lambda: numpy.maximum(x, 0), batch * 20, rounds)
    return call, ref


def main():
    build = os.environ.get("PYTHON_CALL_BUILD")
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(build) if build else pathlib.Path(tmp) / "relu"
        lib = neuroncustomop.load("python_call_relu", [HERE / "relu.cpp"], [HERE / "shape.cpp"], build_directory=out)
        call16, np16 = measure(lib, 16, 50, 7)
        call1m, np1m = measure(lib, 1 << 20, 3, 5)
    print(
        json.dumps(
            {
                "call16_ratio": round(call16 / np16, 2),
                "call1m_ratio": round(call1m / np1m, 2),
                "call16_us": round(call16, 2),
                "call1m_us": round(call1m, 2),
                "numpy16_us": round(np16, 3),
                "numpy1m_us": round(np1m, 2),
            }
        )
    )


if __name__ == "__main__":
    main()

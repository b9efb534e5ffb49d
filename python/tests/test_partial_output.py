"""A failed run's error carries the output as the kernel left it (the
CLI's ``--keep-output``): what it wrote, and the fill (``0xFF`` bytes, a
NaN in a float tensor) where it wrote nothing."""

import numpy as np
import pytest

import neuroncustomop

X = np.arange(8, dtype=np.float32)


def check(e):
    assert e.exit_code == 7 and e.error == 83, e.message
    out = e.output
    assert out.dtype == np.float32 and out.shape == (8,)
    np.testing.assert_array_equal(out[:4], X[:4] * 10)
    # The element the refused read went to is 0 (a refused read reads 0);
    # the rest were never written: the fill.
    assert out[4] == 0 and np.isnan(out[5:]).all(), out


def test_the_error_of_a_failed_run_carries_its_partial_output(built):
    lib = built("partial")
    with pytest.raises(neuroncustomop.Error) as info:
        lib.half_then_past(X)
    check(info.value)
    # And again on the same worker: the next call's output is its own.
    with pytest.raises(neuroncustomop.Error) as info:
        lib.half_then_past(X)
    check(info.value)


def test_a_run_in_a_child_carries_it_too(built):
    import threading

    # While one call holds the library's worker, another thread's call
    # runs in a one-shot child: its failure carries the output as well.
    lib = built("partial")
    errors = []

    def call():
        try:
            lib.half_then_past(X)
        except neuroncustomop.Error as e:
            errors.append(e)

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 4
    for e in errors:
        check(e)

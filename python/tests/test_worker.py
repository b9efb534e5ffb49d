"""An op call runs in the library's persistent worker process (issue 28):
one simulator, reset between calls. These tests check that the worker is
reused, that a call never sees what an earlier one left (memory, a
failed verdict, a sanitizer finding), and that after a crash or a
timeout the next call gets a new worker that works. The kernels are the
customop crate's vendor-style ``crashes`` and ``sanitizer`` sets."""

import faulthandler
import os
import sys
import threading
import time

import numpy as np
import pytest

import neuroncustomop
from conftest import sources

RAMP = np.arange(8, dtype=np.float32)


@pytest.fixture(autouse=True)
def quiet_faulthandler():
    """As test_crashes: the worker would chain to pytest's faulthandler."""
    was = faulthandler.is_enabled()
    faulthandler.disable()
    yield
    if was:
        faulthandler.enable(file=sys.__stderr__)


def children():
    """This process's live child processes."""
    me = os.getpid()
    out = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z":
            out.add(int(pid))
    return out


def test_calls_share_one_worker_and_each_gets_its_own_result(built):
    lib = built("crashes")
    before = children()
    for k in range(5):
        x = RAMP + k
        np.testing.assert_array_equal(lib.copy_through(x, cores=1), x)
    workers = children() - before
    # One worker (made by the first call, or already there from an earlier test).
    assert len(workers) <= 1, workers
    again = children()
    np.testing.assert_array_equal(lib.copy_through(RAMP, cores=1), RAMP)
    assert children() == again


def test_a_finding_fires_on_every_call_and_a_failure_does_not_poison_the_next(built):
    lib = built("sanitizer")
    for _ in range(3):
        with pytest.raises(neuroncustomop.Error) as info:
            lib.empty_accumulate(RAMP)
        assert "error 115" in info.value.message, info.value.message
        np.testing.assert_array_equal(lib.zeros_accumulate(RAMP), RAMP)
    # Read before written: fails each time, never reading an earlier output.
    for _ in range(2):
        with pytest.raises(neuroncustomop.Error) as info:
            lib.add_into_dst(RAMP)
        assert "uninitialised read of the output" in info.value.message
        np.testing.assert_array_equal(lib.set_then_add_dst(RAMP), RAMP * 2)


def test_sizes_grow_and_shrink_across_calls(built):
    lib = built("crashes")
    for n in [4, 1 << 20, 3, 70000, 8]:
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        np.testing.assert_array_equal(lib.copy_through(x, cores=1), x)


def test_a_value_between_tensors_takes_its_place_in_the_staged_layout(built):
    """Arguments are written where the worker's simulator places them,
    a value's place counted among the tensors': wrong counting would put
    `y` where the simulator expects something else (error 119)."""
    lib = built("axpy_between")
    for n in [5, 300000, 17, 4096]:
        rng = np.random.default_rng(n)
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        got = lib.axpy(x, 2.5, y)
        np.testing.assert_array_equal(got, np.float32(2.5) * x + y)


def test_a_raw_store_into_an_input_is_found_where_the_caller_staged_it(built):
    """The caller writes the input straight into the worker's simulated
    HBM; its pages are hashed there before and after the run, so a store
    no hook sees is still found, call after call, and the caller's own
    array is never touched."""
    lib = built("sanitizer")
    for n in [8, 1 << 20]:
        x = np.arange(n, dtype=np.float32)
        for _ in range(2):
            with pytest.raises(neuroncustomop.Error) as info:
                lib.scale_input_raw(x)
            assert "error 114" in info.value.message, info.value.message
            assert "argument 0 changed during the run, in its bytes [0, " in info.value.message
        np.testing.assert_array_equal(x, np.arange(n, dtype=np.float32))
        np.testing.assert_array_equal(lib.zeros_accumulate(x), x)


def test_after_a_crash_or_a_timeout_a_new_worker_serves_the_next_call(built):
    lib = built("crashes")
    np.testing.assert_array_equal(lib.copy_through(RAMP, cores=1), RAMP)
    first = children()
    with pytest.raises(neuroncustomop.KernelCrashed):
        lib.call_abort(np.zeros(4, np.float32))
    np.testing.assert_array_equal(lib.copy_through(RAMP, cores=1), RAMP)
    second = children()
    assert len(second - first) == 1, (first, second)
    with pytest.raises(neuroncustomop.RunTimedOut):
        lib.spin_forever(np.zeros(4, np.float32), timeout=0.3)
    np.testing.assert_array_equal(lib.copy_through(RAMP + 1, cores=1), RAMP + 1)
    assert len(children() - second) == 1, (second, children())


def test_a_worker_killed_between_calls_is_replaced(built):
    lib = built("crashes")
    np.testing.assert_array_equal(lib.copy_through(RAMP, cores=1), RAMP)
    for pid in children():
        os.kill(pid, 9)
    np.testing.assert_array_equal(lib.copy_through(RAMP, cores=1), RAMP)


def test_a_change_of_the_simulators_environment_gets_a_new_worker(built, monkeypatch):
    """NEURON_SIM_* are read when the simulator is made: a worker forked
    before a change is replaced, as a child forked per call saw it."""
    lib = built("sanitizer")
    with pytest.raises(neuroncustomop.Error) as info:
        lib.empty_accumulate(RAMP)
    assert "error 115" in info.value.message
    monkeypatch.setenv("NEURON_SIM_SANITIZE", "0")
    # Unwatched: no sanitizer finding (the coverage verdict may remain).
    try:
        lib.empty_accumulate(RAMP)
        unwatched = ""
    except neuroncustomop.Error as e:
        unwatched = e.message
    assert "error 115" not in unwatched, unwatched
    monkeypatch.delenv("NEURON_SIM_SANITIZE")
    with pytest.raises(neuroncustomop.Error) as info:
        lib.empty_accumulate(RAMP)
    assert "error 115" in info.value.message


def test_a_forked_python_process_makes_its_own_worker_and_leaves_the_parents(built):
    """A process forked from this one (multiprocessing's fork) holds a copy
    of the library, not its worker: it forks its own, and neither kills
    nor talks to this one's."""
    lib = built("crashes")
    np.testing.assert_array_equal(lib.copy_through(RAMP, cores=1), RAMP)
    before = children()
    pid = os.fork()
    if pid == 0:
        try:
            ok = np.array_equal(lib.copy_through(RAMP + 2, cores=1), RAMP + 2)
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert before <= children(), (before, children())
    np.testing.assert_array_equal(lib.copy_through(RAMP + 3, cores=1), RAMP + 3)
    assert before <= children()


def test_a_worker_outlives_the_thread_whose_call_made_it(built):
    """A worker dies with its process, not with the thread whose call
    forked it: a call from a short-lived thread leaves it to the next."""
    compute, shape = sources("crashes")
    # A library of its own (the build is current: nothing recompiles), so
    # no worker exists before the thread's call.
    lib = neuroncustomop.load("crashes", compute, shape, build_directory=built("crashes").build_directory)
    t = threading.Thread(target=lambda: lib.copy_through(RAMP, cores=1))
    t.start()
    t.join()
    time.sleep(0.2)
    before = children()
    np.testing.assert_array_equal(lib.copy_through(RAMP, cores=1), RAMP)
    assert children() == before, (before, children())

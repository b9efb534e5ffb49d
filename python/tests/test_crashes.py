"""A kernel or shape function that crashes raises ``KernelCrashed`` with
the crash report (core, op, signal) instead of killing the interpreter; a
run is bounded by ``timeout=`` (``RunTimedOut``) and stopped by Ctrl-C
(``KeyboardInterrupt``); after each, the next call works. The kernels are
the customop crate's ``crashes`` (vendor-style C++); ``copy_through`` is
their correct twin."""

import faulthandler
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import neuroncustomop
from conftest import sources

ZEROS = np.zeros(4, np.float32)


@pytest.fixture(autouse=True)
def quiet_faulthandler():
    """pytest enables faulthandler; the run's child process would chain
    to it and print this process's Python stack for the child's crash."""
    was = faulthandler.is_enabled()
    faulthandler.disable()
    yield
    if was:
        faulthandler.enable(file=sys.__stderr__)


def twin_works(lib):
    x = np.arange(4, dtype=np.float32)
    # One core: the twin copies the whole tensor (not sliced by core).
    np.testing.assert_array_equal(lib.copy_through(x, cores=1), x)


def test_a_kernel_that_floods_stderr_keeps_its_start_and_its_crash_report(built):
    """The worker's stderr is kept within a bound (its first and last MiB):
    a kernel printing without end does not take the caller's memory."""
    lib = built("chatter")
    with pytest.raises(neuroncustomop.KernelCrashed) as info:
        lib.chatter_then_crash(ZEROS)
    m = info.value.message
    assert "progress 000000: " in m and "progress 099999: " in m
    assert "bytes of the run's stderr left out here" in m
    assert "the kernel crashed in op chatter_then_crash: SIGSEGV" in m, m[-2000:]
    assert len(m) < 3 << 20
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(lib.quiet_copy(x), x)


@pytest.mark.parametrize(
    "op, sig, says",
    [
        ("recurse_forever", "SIGSEGV", "stack overflow (SIGSEGV at address"),
        ("call_abort", "SIGABRT", "SIGABRT (abort() was called"),
        ("divide_by_zero", "SIGFPE", "SIGFPE (an integer division by zero or overflow)"),
        ("store_through_null", "SIGSEGV", "SIGSEGV (a load or store at an address nothing is mapped at: a null or wild pointer) at address 0x0"),
        ("illegal_instruction", "SIGILL", "SIGILL (an illegal instruction) at address 0x"),
    ],
)
def test_a_crashing_kernel_raises_with_its_report_and_the_next_call_works(built, op, sig, says):
    lib = built("crashes")
    with pytest.raises(neuroncustomop.KernelCrashed) as info:
        getattr(lib, op)(ZEROS)
    e = info.value
    assert isinstance(e, neuroncustomop.Error) and (e.code, e.kind) == (12, "crashed"), e.message
    assert f"op `{op}`: the kernel on 1 core(s) crashed ({sig})" in e.message, e.message
    assert f"abort on core 0: the kernel crashed in op {op}: {says}" in e.message, e.message
    twin_works(lib)


def test_a_stack_overflow_on_eight_cores_names_a_core_and_the_high_water(built):
    lib = built("crashes", multicore=True)
    with pytest.raises(neuroncustomop.KernelCrashed) as info:
        lib.recurse_forever(ZEROS)
    m = info.value.message
    assert "the kernel on 8 core(s) crashed" in m and "stack overflow" in m and "the op's stack high water is" in m, m
    assert any(f"abort on core {c}: the kernel crashed in op recurse_forever" in m for c in range(8)), m
    twin_works(lib)


def test_a_crashing_shape_function_raises(built):
    lib = built("crashes")
    with pytest.raises(neuroncustomop.KernelCrashed) as info:
        lib.shape_null_store(ZEROS)
    m = info.value.message
    assert "the shape function `null_store_shape` crashed (SIGSEGV)" in m and "at address 0x0" in m, m
    twin_works(lib)
    with pytest.raises(neuroncustomop.KernelCrashed) as info:
        lib.shape_recurses(ZEROS)
    m = info.value.message
    assert "the shape function `recurse_shape` crashed" in m and "the shape function crashed (neuron_sim_call): stack overflow" in m, m
    twin_works(lib)


def test_timeout_stops_a_kernel_or_shape_function_that_never_ends(built, build_root):
    lib = built("crashes")
    t = time.monotonic()
    with pytest.raises(neuroncustomop.RunTimedOut) as info:
        lib.spin_forever(ZEROS, timeout=0.5)
    e = info.value
    assert isinstance(e, TimeoutError) and isinstance(e, neuroncustomop.Error) and (e.code, e.kind) == (13, "timed_out")
    assert "op `spin_forever`: the kernel on 1 core(s) did not finish within 0.5 s (timeout=)" in e.message, e.message
    assert time.monotonic() - t < 15
    twin_works(lib)
    # load(timeout=) bounds every op of the library; an op's timeout= overrides it.
    compute, shape = sources("crashes")
    bounded = neuroncustomop.load("crashes", compute, shape, build_directory=lib.build_directory, timeout=0.5)
    with pytest.raises(neuroncustomop.RunTimedOut) as info:
        bounded.shape_spins(ZEROS)
    assert "the shape function `spin_shape` did not finish within 0.5 s" in info.value.message
    twin_works(bounded)
    np.testing.assert_array_equal(bounded.copy_through(ZEROS, timeout=None), ZEROS)
    for bad in (0, -1, True, "1", float("nan")):
        with pytest.raises(neuroncustomop.Error) as info:
            lib.copy_through(ZEROS, timeout=bad)
        assert info.value.code == 2 and "timeout=" in info.value.message


def run_script(script, *args, **kw):
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


@pytest.mark.parametrize("chatty", [0, 1])
def test_ctrl_c_interrupts_a_running_kernel_and_the_next_call_works(built, chatty):
    lib = built("crashes")
    compute, shape = sources("crashes")
    p = run_script(
        """
        import sys, numpy as np, neuroncustomop
        import signal
        # Python installs its Ctrl-C handler only where SIGINT is not
        # ignored; a harness started in the background ignores it.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        lib = neuroncustomop.load("crashes", sys.argv[1].split(","), sys.argv[2].split(","), build_directory=sys.argv[3])
        chatty = float(sys.argv[4])
        if chatty:
            # Ctrl-C reaches another thread, so nothing breaks the wait's
            # poll: only its own ticks can hear it.
            import threading, time
            threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        print("ready", flush=True)
        try:
            lib.spin_forever(np.array([0, chatty, 0, 0], np.float32))
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        print(lib.copy_through(np.arange(4, dtype=np.float32)).tolist(), flush=True)
        """,
        ",".join(map(str, compute)),
        ",".join(map(str, shape)),
        lib.build_directory,
        chatty,
    )
    assert p.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert time.monotonic() - sent < 10
    assert p.returncode == 0, err
    assert out.split() == ["interrupted", "[0.0,", "1.0,", "2.0,", "3.0]"], (out, err)


def test_an_address_space_limit_names_the_simulated_hbm(built):
    lib = built("crashes")
    compute, shape = sources("crashes")
    p = run_script(
        """
        import resource, sys, numpy as np, neuroncustomop
        lib = neuroncustomop.load("crashes", sys.argv[1].split(","), sys.argv[2].split(","), build_directory=sys.argv[3])
        resource.setrlimit(resource.RLIMIT_AS, (20 << 30, 20 << 30))
        try:
            lib.copy_through(np.zeros(4, np.float32))
        except neuroncustomop.Error as e:
            print(e.code, e.message)
        """,
        ",".join(map(str, compute)),
        ",".join(map(str, shape)),
        lib.build_directory,
    )
    out, err = p.communicate(timeout=120)
    assert out.startswith("10 ") and "cannot reserve 64 GiB of address space for the simulated HBM" in out, (out, err)
    assert "NEURON_SIM_HBM_GIB" in out

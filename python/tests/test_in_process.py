"""``load(..., isolate=False)``: every call runs the kernel in the Python
process (the CLI's ``--no-fork``), so a debugger attached to Python stops
in it, and a crash ends Python instead of raising. Uses the customop
crate's ``crashes`` kernels (vendor-style C++)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import neuroncustomop
from conftest import kernel_dir, sources

SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    import neuroncustomop

    lib = neuroncustomop.load_built(sys.argv[1], isolate=sys.argv[2] == "isolate")
    x = np.array([0.0, 1.5, 2.5], dtype=np.float32)
    y, rep = lib.copy_through(x, report=True)
    assert (y == x).all() and rep.ok, (y, rep)
    print("copied", flush=True)
    if len(sys.argv) > 3:
        try:
            lib.store_through_null(x)
        except neuroncustomop.KernelCrashed:
            print("raised", flush=True)
    print("after", flush=True)
    """
)


def run_script(tmp_path, lib_dir, isolate, crash):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    args = [sys.executable, str(script), str(lib_dir), "isolate" if isolate else "here"] + (["crash"] if crash else [])
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def test_a_call_in_this_process_returns_the_output_and_report(built, tmp_path):
    lib = built("crashes")
    p = run_script(tmp_path, lib.build_directory, isolate=False, crash=False)
    assert p.returncode == 0 and p.stdout.split() == ["copied", "after"], p.stdout + p.stderr


def test_a_crash_in_this_process_ends_python_where_an_isolated_one_raises(built, tmp_path):
    lib = built("crashes")
    isolated = run_script(tmp_path, lib.build_directory, isolate=True, crash=True)
    assert isolated.returncode == 0 and isolated.stdout.split() == ["copied", "raised", "after"], isolated.stdout + isolated.stderr
    here = run_script(tmp_path, lib.build_directory, isolate=False, crash=True)
    # The kernel's SIGSEGV is Python's own: neither "raised" nor "after".
    assert here.returncode != 0 and here.stdout.split() == ["copied"], (here.returncode, here.stdout, here.stderr)


def test_gdb_on_python_stops_in_the_kernel(tmp_path):
    # Unoptimised, as the debugging guide says to build for a debugger.
    compute, shape = sources("crashes")
    out = tmp_path / "crashes_O0"
    neuroncustomop.load("crashes", compute, shape, build_directory=out, extra_cflags=["-O0"])
    src = kernel_dir("crashes") / "crashes.cpp"
    n = next(i for i, line in enumerate(src.read_text().splitlines(), 1) if "o[i] = in[i]" in line)
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    cmd = ["gdb", "-nx", "-batch", "-ex", "set breakpoint pending on", "-ex", f"break crashes.cpp:{n}", "-ex", "run", "-ex", "bt"]
    cmd += ["--args", sys.executable, str(script), str(out), "here"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except FileNotFoundError:
        pytest.fail("gdb is not installed (apt-get install gdb; cargo xtask setup installs it)")
    text = p.stdout + p.stderr
    hit = [line for line in text.splitlines() if "hit Breakpoint 1, copy_through (" in line]
    assert hit and hit[0].endswith(f"crashes.cpp:{n}"), text


@pytest.mark.parametrize(
    "kwargs, says",
    [
        ({"on": "qemu"}, 'isolate=False runs the simulator in this process; on="qemu"'),
        ({"timeout": 5}, "timeout=: a library loaded with isolate=False runs its kernels in this process"),
    ],
)
def test_isolate_false_refuses_what_it_cannot_do(built, kwargs, says):
    lib = built("crashes")
    with pytest.raises(neuroncustomop.Error) as info:
        neuroncustomop.load_built(lib.build_directory, isolate=False, **kwargs)
    assert says in info.value.message and info.value.exit_code == 2, info.value.message


def test_isolate_takes_a_bool(built):
    lib = built("crashes")
    with pytest.raises(neuroncustomop.Error) as info:
        neuroncustomop.load_built(lib.build_directory, isolate="no")
    assert "isolate='no': give True or False" in info.value.message


def test_a_call_timeout_is_refused_in_this_process(built):
    lib = neuroncustomop.load_built(built("crashes").build_directory, isolate=False)
    with pytest.raises(neuroncustomop.Error) as info:
        lib.copy_through(np.zeros(3, dtype=np.float32), timeout=5)
    assert "nothing can stop" in info.value.message and info.value.exit_code == 2, info.value.message

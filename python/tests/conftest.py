"""Shared by the neuroncustomop tests: the vendor-style test kernels (the
customop crate's, plus a few of these tests' own) built once per session
through ``neuroncustomop.load``."""

import pathlib

import pytest

import neuroncustomop

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
# The customop crate's vendor-style kernels, and this package's own.
KERNEL_DIRS = [REPO / "customop" / "tests" / "kernels", HERE / "kernels"]


def kernel_dir(name):
    for base in KERNEL_DIRS:
        if (base / name).is_dir():
            return base / name
    raise LookupError(f"no test kernel {name}")


def sources(name):
    """(compute sources, shape sources) of a kernel directory: shape*.cpp are the shape files."""
    files = sorted(kernel_dir(name).glob("*.cpp"))
    return [f for f in files if not f.name.startswith("shape")], [f for f in files if f.name.startswith("shape")]


@pytest.fixture(scope="session")
def build_root(tmp_path_factory):
    return tmp_path_factory.mktemp("builds")


@pytest.fixture(scope="session")
def built(build_root):
    """``built(kernel, multicore=False)``: the kernel's library, built once per session."""
    cache = {}

    def get(name, multicore=False):
        key = (name, multicore)
        if key not in cache:
            compute, shape = sources(name)
            out = build_root / f"{name}{'_mc' if multicore else ''}"
            cache[key] = neuroncustomop.load(name, compute, shape, build_directory=out, multicore=multicore)
        return cache[key]

    return get


def pytest_configure(config):
    # The tests register many custom-op libraries in one process on
    # purpose; the warning that the device would refuse a second one has
    # its own test (test_torch.py).
    config.addinivalue_line("filterwarnings", "ignore:custom_op.*second custom-op library:RuntimeWarning")

#!/usr/bin/env bash
# The Python package's test step: a fresh virtualenv under the target
# directory, maturin, numpy, pytest, ml_dtypes and torch in it, `pip
# install ./python`, then pytest. Exits non-zero on any failure, and when pytest
# collects no test (its exit status 5).
#
# Needs: python3 with the venv module (Debian: python3-venv), a Rust
# toolchain, g++ (the kernels are compiled with it) and nm (binutils).
# Run from anywhere: `bash python/ci.sh [pytest args...]`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
python="${PYTHON:-python3}"
venv="$here/target/ci-venv"

# A download from PyPI can fail for a moment (a reset connection, a
# registry hiccup): each install is tried three times, and a failure
# says how much disk is left (torch and its CUDA wheels need ~6 GB).
pip_install() {
    local attempt
    for attempt in 1 2 3; do
        if python -m pip install "$@"; then
            return 0
        fi
        echo "python/ci.sh: pip install $* failed (attempt $attempt of 3); free space:" >&2
        df -h "$here/target" "${TMPDIR:-/tmp}" >&2 || true
        sleep $((attempt * 10))
    done
    echo "python/ci.sh: pip install $* failed three times" >&2
    return 1
}

rm -rf "$venv"
"$python" -m venv "$venv"
# shellcheck disable=SC1091
source "$venv/bin/activate"
pip_install --quiet --upgrade pip
# ziglang: the emulated cores' compiler, as docs/quickstart.md installs it
# (the tests of on="qemu" and the quick start's snippets use it).
pip_install --quiet maturin numpy pytest ml_dtypes ziglang==0.17.1
# torch for neuroncustomop.custom_op's tests, from PyPI. Its Linux x86_64
# wheel is the CUDA build: it depends on the nvidia-* / cuda-* wheels and
# does not import without their libraries (libtorch links them), so they
# come too (torch 2.15: ~5.4 GB installed; measured 83 s with an empty
# pip cache on an idle machine, 126 s from pip's cache, which keeps the
# downloads between runs, on a loaded one: the time is mostly unpacking).
# A CPU-only wheel is on another index, not on PyPI.
start=$SECONDS
pip_install --quiet torch
echo "python/ci.sh: torch installed in $((SECONDS - start)) s"
# Exactly what a user runs (pip builds it with maturin in an isolated
# build environment); cargo's cache in python/target serves a rebuild.
pip_install "$repo/python"

cd "$here"
status=0
# A missing torch fails the torch tests instead of skipping them.
NEURONCUSTOMOP_REQUIRE_TORCH=1 python -m pytest -q --durations=15 tests "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "python/ci.sh: pytest collected no test" >&2
    exit 1
fi
exit "$status"

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

rm -rf "$venv"
"$python" -m venv "$venv"
# shellcheck disable=SC1091
source "$venv/bin/activate"
python -m pip install --quiet --upgrade pip
# ziglang: the emulated cores' compiler, as docs/quickstart.md installs it
# (the tests of on="qemu" and the quick start's snippets use it).
python -m pip install --quiet maturin numpy pytest ml_dtypes ziglang==0.17.1
# torch for neuroncustomop.custom_op's tests, from PyPI. Its Linux x86_64
# wheel is the CUDA build: it depends on the nvidia-* / cuda-* wheels and
# does not import without their libraries (libtorch links them), so they
# come too (torch 2.15: ~5.4 GB installed; measured 83 s with an empty
# pip cache on an idle machine, 126 s from pip's cache, which keeps the
# downloads between runs, on a loaded one: the time is mostly unpacking).
# A CPU-only wheel is on another index, not on PyPI.
start=$SECONDS
python -m pip install --quiet torch
echo "python/ci.sh: torch installed in $((SECONDS - start)) s"
# Exactly what a user runs (pip builds it with maturin in an isolated
# build environment); cargo's cache in python/target serves a rebuild.
python -m pip install "$repo/python"

cd "$here"
status=0
# A missing torch fails the torch tests instead of skipping them.
NEURONCUSTOMOP_REQUIRE_TORCH=1 python -m pytest -q --durations=15 tests "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "python/ci.sh: pytest collected no test" >&2
    exit 1
fi
exit "$status"

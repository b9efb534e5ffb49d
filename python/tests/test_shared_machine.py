"""Safe on a shared machine, as attacks: another local user (made with
``useradd``) pre-creates the staging and cache directories, plants links,
or prepares a build directory; the package refuses or is unaffected, and
nothing of the victim's is read or overwritten. These need root (CI runs
them as root); elsewhere they are skipped with the reason."""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import neuroncustomop
from conftest import sources

ATTACKER = "ncop-attacker"


def attacker():
    """The attacker's (uid, gid), made with useradd once; skips the test
    when that cannot be done here."""
    if os.geteuid() != 0:
        pytest.skip("another user's attack needs root (to run useradd); CI runs these as root")
    if shutil.which("useradd") is None:
        pytest.skip("no useradd")
    import pwd

    try:
        pw = pwd.getpwnam(ATTACKER)
    except KeyError:
        r = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", ATTACKER], capture_output=True, text=True)
        try:
            pw = pwd.getpwnam(ATTACKER)
        except KeyError:
            pytest.skip(f"useradd failed: {r.stderr.strip()}")
    return pw.pw_uid, pw.pw_gid


def chown_r(path, uid, gid):
    subprocess.run(["chown", "-R", f"{uid}:{gid}", str(path)], check=True)


def test_staging_another_user_prepared_is_never_used(built, tmp_path):
    """The old staging names, /tmp/neuroncustomop-<pid>-<n>, made first by
    another user (0777), each with arg0.npy a link to the victim's file: a
    call that stages its tensors (isolate=False) uses none of them, the
    victim's file keeps its bytes, and the attacker's directories get
    nothing."""
    uid, gid = attacker()
    lib = neuroncustomop.load_built(built("crashes").build_directory, isolate=False)
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's own file")
    base = pathlib.Path(tempfile.gettempdir())
    planted = []
    try:
        for n in range(256):
            d = base / f"neuroncustomop-{os.getpid()}-{n}"
            if d.exists():
                continue
            d.mkdir()
            (d / "arg0.npy").symlink_to(victim)
            os.chmod(d, 0o777)
            os.chown(d, uid, gid)
            os.lchown(d / "arg0.npy", uid, gid)
            planted.append(d)
        x = np.array([0.0, 1.5, 2.5], dtype=np.float32)
        y = lib.copy_through(x)
        assert (y == x).all()
        assert victim.read_text() == "the victim's own file"
        for d in planted:
            assert sorted(p.name for p in d.iterdir()) == ["arg0.npy"], d
    finally:
        for d in planted:
            shutil.rmtree(d, ignore_errors=True)


def test_the_default_cache_is_never_a_shared_directory(tmp_path):
    """An empty or relative XDG_CACHE_HOME is ignored (it made the cache
    relative to the working directory); with no HOME (a systemd unit,
    env -i) the cache is the passwd entry's home, never /tmp, where another
    user made /tmp/neuroncustomop first."""
    uid, gid = attacker()
    trap = pathlib.Path(tempfile.gettempdir()) / "neuroncustomop"
    made_trap = not trap.exists()
    if made_trap:
        trap.mkdir(mode=0o777)
        os.chown(trap, uid, gid)
    try:
        script = "import neuroncustomop, sys; print(neuroncustomop._native._default_build_directory('k'))"
        import pwd

        home = pathlib.Path(pwd.getpwuid(os.geteuid()).pw_dir)
        cases = [
            ({"XDG_CACHE_HOME": "", "HOME": str(tmp_path)}, tmp_path / ".cache" / "neuroncustomop" / "k"),
            ({"XDG_CACHE_HOME": "relative/cache", "HOME": str(tmp_path)}, tmp_path / ".cache" / "neuroncustomop" / "k"),
            ({"XDG_CACHE_HOME": str(tmp_path / "xdg")}, tmp_path / "xdg" / "neuroncustomop" / "k"),
            ({}, home / ".cache" / "neuroncustomop" / "k"),
        ]
        for env, want in cases:
            e = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "HOME")}
            e.update(env)
            r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=e, cwd=tmp_path, timeout=60)
            assert r.returncode == 0, r.stderr
            assert pathlib.Path(r.stdout.strip()) == want, (env, r.stdout)
            assert (want.parent.stat().st_mode & 0o777) == 0o700 or want.parent == home / ".cache" / "neuroncustomop"
        assert not (tmp_path / "relative").exists()
        if made_trap:
            assert list(trap.iterdir()) == [], "nothing was made in the trap"
    finally:
        if made_trap:
            shutil.rmtree(trap, ignore_errors=True)


def test_a_cache_another_user_owns_is_refused(tmp_path, monkeypatch):
    """XDG_CACHE_HOME pointing at a directory another user owns (their
    neuroncustomop/ in it): load() with no build_directory refuses it
    before reading anything, naming it, its owner and the variable that
    trusts it."""
    uid, gid = attacker()
    cache = tmp_path / "their-cache"
    (cache / "neuroncustomop" / "crashes").mkdir(parents=True)
    (cache / "neuroncustomop" / "crashes" / "customop.json").write_text("{}")
    chown_r(cache, uid, gid)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    compute, shape = sources("crashes")
    with pytest.raises(neuroncustomop.Error) as e:
        neuroncustomop.load("crashes", compute, shape)
    assert (e.value.kind, e.value.exit_code) == ("untrusted", 14), e.value.message
    assert f"owned by {ATTACKER} (uid {uid})" in e.value.message and "NEURONCUSTOMOP_TRUST_DIR=" in e.value.message
    assert str(cache) in e.value.message
    assert (cache / "neuroncustomop" / "crashes" / "customop.json").read_text() == "{}"
    assert sorted(p.name for p in (cache / "neuroncustomop" / "crashes").iterdir()) == ["customop.json"]


def test_a_build_directory_another_user_owns_is_refused(built, tmp_path, monkeypatch):
    """A real build copied into a directory another user owns (loading it
    would run it): load_built refuses it, load_inline writes nothing
    there; trusted through NEURONCUSTOMOP_TRUST_DIR, it loads and runs."""
    uid, gid = attacker()
    theirs = tmp_path / "theirs"
    shutil.copytree(built("crashes").build_directory, theirs, symlinks=True)
    chown_r(theirs, uid, gid)
    with pytest.raises(neuroncustomop.Error) as e:
        neuroncustomop.load_built(theirs)
    assert e.value.kind == "untrusted" and f"owned by {ATTACKER}" in e.value.message, e.value.message
    with pytest.raises(neuroncustomop.Error) as e:
        neuroncustomop.load_inline("k", ["int x;"], ["int y;"], build_directory=theirs)
    assert e.value.kind == "untrusted", e.value.message
    assert not (theirs / "inline").exists()
    monkeypatch.setenv("NEURONCUSTOMOP_TRUST_DIR", str(theirs))
    lib = neuroncustomop.load_built(theirs)
    x = np.array([1.0, 2.0], dtype=np.float32)
    assert (lib.copy_through(x) == x).all()


def test_load_inline_never_writes_through_a_planted_temporary(tmp_path):
    """The old temporary name of load_inline's sources (.<file>.<pid>.tmp)
    planted as a link to the victim's file: the source is written through a
    fresh temporary instead, and the victim's file keeps its bytes."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    out = tmp_path / "inline-build"
    (out / "inline").mkdir(parents=True, mode=0o700)
    for f in ("compute0.cpp", "shape0.cpp"):
        (out / "inline" / f".{f}.{os.getpid()}.tmp").symlink_to(victim)
    compute, shape = sources("crashes")
    neuroncustomop.load_inline("crashes", [p.read_text() for p in compute], [p.read_text() for p in shape], build_directory=out)
    assert victim.read_text() == "keep"
    assert (out / "inline" / "compute0.cpp").read_text() == compute[0].read_text()
    assert ((out / "inline" / "compute0.cpp").stat().st_mode & 0o777) == 0o600


AFFINE = """#include <torch/torch.h>

torch::Tensor affine(const torch::Tensor& x) {
    torch::Tensor y = torch::zeros(x.sizes(), torch::kFloat);
    auto in = x.accessor<float, 1>();
    auto out = y.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel(); i++) out[i] = in[i] * K + 1.0f;
    return y;
}
"""

AFFINE_SHAPE = """#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor affine_shape(torch::Tensor x) {
    return torch::zeros(x.sizes(), torch::kFloat);
}

NEURON_LIBRARY(affine_ops, m) {
    m.def("affine", &affine_shape, "affine");
}
"""


def test_a_reloaded_library_is_never_copied_through_a_planted_name(tmp_path):
    """A library rebuilt in this process is loaded from a private copy: the
    old copy names beside it (.lib<name>.so.<pid>.<n>.so), planted as links
    to the victim's file, are not written through, and the new code runs."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    out = tmp_path / "reloaded"
    x = np.array([1.0, 2.0], dtype=np.float32)
    first = neuroncustomop.load_inline("affine", [AFFINE.replace("K", "2.0f")], [AFFINE_SHAPE], build_directory=out)
    assert (first.affine(x) == x * 2 + 1).all()
    for n in range(256):
        (out / f".libaffine.so.{os.getpid()}.{n}.so").symlink_to(victim)
    second = neuroncustomop.load_inline("affine", [AFFINE.replace("K", "3.0f")], [AFFINE_SHAPE], build_directory=out)
    assert (second.affine(x) == x * 3 + 1).all()
    assert victim.read_text() == "keep"
    assert all((out / f".libaffine.so.{os.getpid()}.{n}.so").is_symlink() for n in range(256))

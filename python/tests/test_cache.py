"""``load()`` is cached: an unchanged source is not recompiled, an edited
one is, and the rebuilt library is what runs next, in the same process."""

import shutil

import numpy as np

import neuroncustomop
from conftest import kernel_dir


def object_mtimes(build_dir):
    # The compiled objects (not the `.heap.o` copies derived from them).
    objs = (build_dir / "customop-build" / "obj").glob("*.o")
    return {p.name: p.stat().st_mtime_ns for p in objs if not p.name.endswith(".heap.o")}


def test_a_second_load_compiles_nothing_and_an_edit_recompiles_one_source(tmp_path, capsys):
    src = tmp_path / "src"
    shutil.copytree(kernel_dir("stream"), src)
    out = tmp_path / "build"

    def load(verbose=False):
        return neuroncustomop.load("rebuilt", [src / "scale.cpp"], [src / "shape.cpp"], build_directory=out, verbose=verbose)

    x = np.linspace(-1, 1, 20, dtype=np.float32)
    first = load()
    assert len(first.build_log.compiled) == 4 and first.build_log.cached == [] and first.build_log.linked
    np.testing.assert_array_equal(first.scale_stream(x), x * np.float32(2) + np.float32(1))
    before = object_mtimes(out)
    lib_before = first.library_file.stat().st_mtime_ns
    assert len(before) == 4

    second = load(verbose=True)
    assert second.build_log.compiled == [] and len(second.build_log.cached) == 4 and not second.build_log.linked
    assert object_mtimes(out) == before and second.library_file.stat().st_mtime_ns == lib_before
    printed = capsys.readouterr().out
    assert "0 source(s) compiled, 4 cached, not relinked" in printed

    (src / "scale.cpp").write_text((src / "scale.cpp").read_text().replace("* 2.0f", "* 3.0f"))
    third = load(verbose=True)
    assert third.build_log.compiled == [str(src / "scale.cpp")] and len(third.build_log.cached) == 3 and third.build_log.linked
    after = object_mtimes(out)
    assert [n for n in after if after[n] != before[n]] == [n for n in after if n.startswith("scale-")]
    assert f"compiled {src / 'scale.cpp'}" in capsys.readouterr().out
    # The rebuilt library is loaded anew; the old object still runs the old code.
    np.testing.assert_array_equal(third.scale_stream(x), x * np.float32(3) + np.float32(1))
    np.testing.assert_array_equal(first.scale_stream(x), x * np.float32(2) + np.float32(1))


def test_changed_flags_recompile(tmp_path):
    src = kernel_dir("relu2d")
    args = ("flags", [src / "relu.cpp"], [src / "shape.cpp"])
    assert len(neuroncustomop.load(*args, build_directory=tmp_path).build_log.compiled) == 4
    lib = neuroncustomop.load(*args, build_directory=tmp_path, extra_cflags=["-DUNUSED_FLAG=1"])
    assert len(lib.build_log.compiled) == 4 and lib.build_log.linked
    x = np.array([[-1.0, 2.0]], np.float32)
    np.testing.assert_array_equal(lib.relu_forward(x), [[0.0, 2.0]])

"""Build vendor-style GPSIMD custom ops and run them on the host simulator
(or on emulated Xtensa cores under QEMU).

As ``torch.utils.cpp_extension``: ``neuroncustomop.load`` builds compute
and shape sources and returns the ops as NumPy callables;
``load_inline`` does the same from source strings; ``load_built`` opens a
library built before (by ``load`` or ``customop build``).
``neuroncustomop.custom_op`` is the vendor's ``custom_op`` module, which
registers the ops as ``torch.ops.<library>.<op>`` (importing it imports
torch; nothing else here does).

Every failure raises :class:`Error`: ``.exit_code`` (the ``customop``
exit status of its kind), ``.kind``, ``.error`` (a failed kernel's
runtime error code, else None) and ``.message``.
"""

import hashlib
import os
import pathlib
import tempfile

from . import _native
from ._native import (
    ACCEPTED_DTYPES,
    BuildLog,
    CoreReport,
    Error,
    KernelCrashed,
    Library,
    Op,
    Report,
    RunTimedOut,
    UnknownOpError,
    __version__,
    include_paths,
    load,
    load_built,
)

__all__ = [
    "ACCEPTED_DTYPES",
    "BuildLog",
    "CoreReport",
    "Error",
    "KernelCrashed",
    "Library",
    "Op",
    "Report",
    "RunTimedOut",
    "UnknownOpError",
    "__version__",
    "include_paths",
    "load",
    "load_built",
    "load_inline",
]


def _usage(message):
    e = Error(message)
    e.code = e.exit_code = 2
    e.kind, e.error, e.message = "usage", None, message
    return e


def _strings(value, what):
    if isinstance(value, str):
        return [value]
    try:
        items = list(value)
    except TypeError:
        raise _usage(f"{what}: give a list of source strings") from None
    if not all(isinstance(s, str) for s in items):
        raise _usage(f"{what}: give a list of source strings")
    return items


def _write_sources(directory, stem, sources):
    """Each source as ``directory/<stem><i>.cpp``, rewritten only when its
    text changed (so an unchanged source is not recompiled)."""
    paths = []
    for i, text in enumerate(sources):
        path = directory / f"{stem}{i}.cpp"
        if not path.is_file() or path.read_text() != text:
            # A fresh temporary of a random name, made exclusively and 0600
            # (mkstemp), renamed into place.
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(text)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        paths.append(path)
    return paths


def load_inline(name, compute_sources, shape_sources, build_directory=None, **kwargs):
    """``load`` from source strings, as ``torch.utils.cpp_extension.load_inline``:
    ``compute_sources`` and ``shape_sources`` are lists of C++ source texts
    (a single string is one source). They are written to
    ``<build_directory>/inline/compute<i>.cpp`` and ``shape<i>.cpp`` (compiler
    messages name those files) and built as ``load`` builds files; every other
    keyword (``multicore``, ``extra_cflags``, ``extra_ldflags``, ``verbose``,
    ``timeout``, ``on``, ``isolate``) is ``load``'s. ``build_directory=None`` builds
    under ``~/.cache/neuroncustomop/NAME-<hash of the sources>``."""
    compute = _strings(compute_sources, "compute_sources")
    shape = _strings(shape_sources, "shape_sources")
    if not isinstance(name, str):
        raise _usage("name: give a string")
    if build_directory is None:
        digest = hashlib.sha256("\0".join(compute + ["\1"] + shape).encode()).hexdigest()[:12]
        build_directory = _native._default_build_directory(f"{name}-{digest}")
    # Checked before anything is written there: a build directory another
    # user owns or can write is refused (Error kind "untrusted").
    _native._own_build_directory(os.fspath(build_directory))
    inline = pathlib.Path(build_directory) / "inline"
    inline.mkdir(mode=0o700, exist_ok=True)
    return load(
        name,
        _write_sources(inline, "compute", compute),
        _write_sources(inline, "shape", shape),
        build_directory=build_directory,
        **kwargs,
    )

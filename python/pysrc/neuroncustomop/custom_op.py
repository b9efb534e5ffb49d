"""The vendor's ``custom_op`` module (``torch_neuronx.xla_impl.custom_op``),
on the host simulator: a training script changes one import,
``from neuroncustomop import custom_op``, and runs unchanged.

``load`` builds a library and registers each of its ops as
``torch.ops.<NEURON_LIBRARY name>.<op>``; ``load_library`` registers the
ops of a library built before (in this process or another). Each op is a
``torch.library`` op with

- a CPU kernel that runs the compute function on a fresh simulator, on 1
  core (8 for a ``multicore=True`` build): a contiguous CPU tensor's bytes
  go from its own memory into the simulated HBM, the output comes back as
  a tensor over the simulator's bytes (no copy on either side);
- a fake kernel (``register_fake``) that runs only the shape function, on
  the host, so ``FakeTensorMode``, ``torch.compile`` and ``torch.export``
  trace through the op without running it;
- an autograd kernel that makes no derivative up: a backward through the
  op itself raises, as the vendor's ops have no derivative either; the
  vendor's pattern is a ``torch.autograd.Function`` whose ``forward`` and
  ``backward`` call the ops (grad mode is off inside both, so this kernel
  never runs there).

Failures raise :class:`OpError`, a ``neuroncustomop.Error`` (``.exit_code``,
``.kind``, ``.error``, ``.message``, and ``.report`` for a failed run) that
is also a ``RuntimeError``, which is what torch code expects from an op.

Importing this module imports torch; ``import neuroncustomop`` does not.
"""

import os
import shlex
import threading
import warnings

import torch

from . import _native

__all__ = ["OpError", "load", "load_library", "registered"]


class OpError(_native.Error, RuntimeError):
    """A failure of a custom op or of ``load``: a ``neuroncustomop.Error``
    (``.exit_code``, ``.kind``, ``.error``, ``.message``, ``.report`` for a
    failed run) that is also a ``RuntimeError``."""


def _error(code, kind, message, report=None, error=None):
    e = OpError(message)
    e.code = e.exit_code = code
    e.kind, e.message, e.error = kind, message, error
    if report is not None:
        e.report = report
    return e


def _converted(e):
    """The ``OpError`` for a native ``neuroncustomop.Error``."""
    return _error(e.exit_code, e.kind, e.message, getattr(e, "report", None), getattr(e, "error", None))


def _usage(message):
    return _error(2, "usage", message)


def _bad_input(message):
    return _error(6, "bad_input", message)


# The eight dtypes that marshal, by the names the native layer speaks.
_DTYPE_NAMES = {
    torch.uint8: "uint8",
    torch.int8: "int8",
    torch.int16: "int16",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float32: "float32",
}
_DTYPES = {name: dtype for dtype, name in _DTYPE_NAMES.items()}
_HINTS = {
    torch.float64: ": convert with .float() (no dtype wider than 32-bit floats marshals)",
    torch.bool: ": convert with .to(torch.uint8)",
}

# The schema type of each compute-function parameter kind. torch's `int`
# is 64-bit and its `float` a double: an `int` parameter's range is
# checked when the op is called (it marshals as 32 bits).
_SCHEMA_TYPES = {"tensor": "Tensor", "scalar": "Scalar", "int": "int", "long_long": "int", "float": "float", "double": "float"}

class _Registration:
    """One NEURON_LIBRARY's registration: torch's library object, the native
    library behind it, what its kernels call (``{op: (Op, cores, report)}``,
    swapped on a reload) and the schemas registered."""

    def __init__(self, tlib, lib, current, schema):
        self.tlib, self.lib, self.current, self.schema = tlib, lib, current, schema


# NEURON_LIBRARY name -> its _Registration.
_REGISTERED = {}
# Registering and reloading are one thread's at a time.
_RELOADING = threading.Lock()


def registered():
    """The libraries this process registered: ``{NEURON_LIBRARY name: neuroncustomop.Library}``."""
    return {ns: r.lib for ns, r in _REGISTERED.items()}


def _dtype_name(op, i, t):
    name = _DTYPE_NAMES.get(t.dtype)
    if name is None:
        raise _bad_input(
            f"argument {i + 1} of op `{op.name}` ({op.params[i]}): dtype {t.dtype} does not marshal"
            f"{_HINTS.get(t.dtype, '')} (accepted: {', '.join(str(d) for d in _DTYPE_NAMES)})"
        )
    return name


def _tensor(op, i, a):
    if not isinstance(a, torch.Tensor):
        raise _bad_input(f"argument {i + 1} of op `{op.name}` ({op.params[i]}) is a tensor: {type(a).__name__} given")
    return a


def _packed(op, i, a):
    """Argument ``i`` as ``_run_bytes`` takes it: a tensor as (dtype name,
    shape, its bytes as a uint8 ndarray sharing its memory), a number as is."""
    if op.kinds[i] != "tensor":
        return a
    t = _tensor(op, i, a)
    name = _dtype_name(op, i, t)
    if t.device.type != "cpu":
        raise _bad_input(f"argument {i + 1} of op `{op.name}` is on {t.device}: the simulator's kernel takes CPU tensors (.cpu())")
    # Below autograd here; detach only drops the flag .numpy() refuses.
    t = t.detach()
    if not t.is_contiguous():
        t = t.contiguous()
    t = t.resolve_conj().resolve_neg()
    if t.dim() == 0 or t.numel() == 0:
        return (name, tuple(t.shape), None)  # refused by shape, with its message
    return (name, tuple(t.shape), t.reshape(-1).view(torch.uint8).numpy())


def _described(op, args):
    """The arguments as ``_output_spec`` takes them: a tensor as (dtype
    name, shape), its sizes made concrete (a symbolic size is specialised:
    the shape function is C++ and runs on numbers)."""
    out, device = [], None
    for i, a in enumerate(args):
        if op.kinds[i] != "tensor":
            out.append(a)
            continue
        t = _tensor(op, i, a)
        out.append((_dtype_name(op, i, t), tuple(int(s) for s in t.shape)))
        device = device or t.device
    return tuple(out), device or torch.device("cpu")


def _cpu_kernel(current, name, qualname):
    """The CPU kernel of ``torch.ops.<ns>.<name>``: the op, cores and
    report callback are read from ``current`` once per call, so that a
    reload swaps them between calls without touching the registration."""

    def kernel(*args):
        op, cores, report = current[name]
        if len(args) != len(op.kinds):
            raise _bad_input(f"op `{op.name}` takes {len(op.kinds)} argument(s) ({', '.join(op.params)}), {len(args)} given")
        packed = tuple(_packed(op, i, a) for i, a in enumerate(args))
        try:
            data, dtype, shape, rep = _native._run_bytes(op, packed, cores)
        except _native.Error as e:
            raise _converted(e) from None
        if report is not None:
            report(qualname, rep)
        return torch.from_numpy(data).view(_DTYPES[dtype]).reshape(shape)

    return kernel


def _fake_kernel(current, name):
    def fake(*args):
        op = current[name][0]
        described, device = _described(op, args)
        try:
            dtype, shape = _native._output_spec(op, described)
        except _native.Error as e:
            raise _converted(e) from None
        return torch.empty(shape, dtype=_DTYPES[dtype], device=device)

    return fake


def _no_derivative(qualname):
    def setup_context(ctx, inputs, output):
        pass

    def backward(ctx, *grads):
        raise _usage(
            f"torch.ops.{qualname} has no derivative (a custom op's never has one): call it inside a "
            f"torch.autograd.Function whose backward calls the op's backward op, as the vendor's tutorial does"
        )

    return setup_context, backward


def _register(lib, cores, report):
    names = sorted(set(lib.libraries))
    if len(names) != 1:
        raise _usage(f"library `{lib.name}`: its shape sources declare NEURON_LIBRARY {names}; torch.ops takes one library name per build")
    ns = names[0]
    if cores is not None and (type(cores) is not int or cores not in (1, 8)):
        raise _usage(f"cores={cores!r}: an op runs on 1 core or on all 8 GPSIMD cores")
    if cores == 8 and not lib.multicore:
        raise _usage(f"cores=8: `{lib.name}` was built without multicore=True: a single-core op runs on 1 core")
    if report is not None and not callable(report):
        raise _usage("report=: give a callable, called as report(op_name, neuroncustomop.Report) after each successful run")
    ops = {name: (lib[name], cores, report) for name in lib.ops}  # by subscript: `name`, `ops` are attributes
    schema = {name: _schema(name, op) for name, (op, _, _) in ops.items()}
    with _RELOADING:
        old = _REGISTERED.get(ns)
        others = sorted(n for n in _REGISTERED if n != ns)
        if old is None and others:
            # The simulator runs any number; the device does not.
            warnings.warn(
                f"custom_op: NEURON_LIBRARY({ns}) is a second custom-op library in this process (already: {', '.join(others)}); "
                "on the device a model carries one custom-op library and a second is refused: put the ops in one "
                "NEURON_LIBRARY to run them there",
                RuntimeWarning,
                stacklevel=3,
            )
        if old is not None and old.schema == schema:
            # Reloading with the same ops and signatures: the registrations
            # stay and the ops they call are swapped. A call made before
            # runs on the old library, one made after on the new; no call
            # meets an op being unregistered (torch's dispatcher is not
            # safe against that while other threads call it).
            old.current.update(ops)
            old.lib = lib
            return lib
        if old is not None:
            # Other ops or signatures: the old registrations go first.
            del _REGISTERED[ns]
            old.tlib._destroy()
        try:
            tlib = torch.library.Library(ns, "DEF")
        except RuntimeError as e:
            raise _usage(f"NEURON_LIBRARY({ns}): torch already has a library of that name ({e})") from None
        current = dict(ops)
        for name in ops:
            qualname = f"{ns}::{name}"
            tlib.define(schema[name])
            tlib.impl(name, _cpu_kernel(current, name, f"{ns}.{name}"), "CPU")
            torch.library.register_fake(qualname, _fake_kernel(current, name), lib=tlib)
            setup_context, backward = _no_derivative(f"{ns}.{name}")
            torch.library.register_autograd(qualname, backward, setup_context=setup_context, lib=tlib)
        _REGISTERED[ns] = _Registration(tlib, lib, current, schema)
    return lib


def _schema(name, op):
    params = ", ".join(f"{_SCHEMA_TYPES[k]} arg{i}" for i, k in enumerate(op.kinds))
    return f"{name}({params}) -> Tensor"


def _include_flags(paths):
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    try:
        return ["-I" + os.fspath(p) for p in paths]
    except TypeError:
        raise _usage("extra_include_paths: give a list of directories") from None


def load(
    name,
    compute_srcs,
    shape_srcs,
    extra_cflags=[],
    extra_include_paths=[],
    build_directory=None,
    multicore=False,
    verbose=False,
    *,
    cores=None,
    report=None,
    timeout=None,
    extra_ldflags=None,
    on="sim",
    isolate=True,
):
    """Builds the library (unchanged sources are not rebuilt) and registers
    its ops as ``torch.ops.<NEURON_LIBRARY name>.<op>``, replacing any
    registered under that name before. The vendor's parameters and
    defaults; ``build_directory=None`` builds under
    ``~/.cache/neuroncustomop/NAME``. Extras: ``cores`` (1 or 8: every run's
    cores, by default 8 for a multicore build, else 1) and ``report`` (a
    callable, given ``(op_name, neuroncustomop.Report)`` after each
    successful run; a failed run's error carries its report), ``timeout``
    (seconds: every run's bound, and the shape function's while tracing; ``None``, the default: no bound), ``extra_ldflags`` (linker flags,
    as ``torch.utils.cpp_extension``'s) and ``on`` (``"sim"``, ``"qemu"``
    or ``"both"``: where each run goes; the emulated cores need a
    ``--target qemu`` build, which ``load`` then makes) and ``isolate``
    (``False``: each run in this process, so that a debugger attached to
    Python stops in the kernel; a crash then ends Python).
    Returns the ``neuroncustomop.Library`` (its NumPy ops work too)."""
    flags = extra_cflags if extra_cflags is not None else []
    includes = _include_flags(extra_include_paths if extra_include_paths is not None else [])
    if includes and isinstance(flags, str):
        flags = flags + " " + " ".join(shlex.quote(i) for i in includes)
    elif includes:
        try:
            flags = list(flags) + includes
        except TypeError:
            raise _usage("extra_cflags: give a list of strings") from None
    try:
        lib = _native.load(
            name,
            compute_srcs,
            shape_srcs,
            build_directory=build_directory,
            multicore=multicore,
            extra_cflags=flags,
            verbose=verbose,
            timeout=timeout,
            extra_ldflags=extra_ldflags,
            on=on,
            isolate=isolate,
        )
    except _native.Error as e:
        raise _converted(e) from None
    return _register(lib, cores, report)


def load_library(path, *, cores=None, report=None, timeout=None, on="sim", isolate=True):
    """Registers the ops of a library built before (by ``load`` here or in
    another process, or by ``customop build``): ``path`` is its
    ``lib<name>.so`` or its build directory. Same extras as ``load``."""
    try:
        lib = _native.load_built(os.fspath(path), timeout=timeout, on=on, isolate=isolate)
    except _native.Error as e:
        raise _converted(e) from None
    except TypeError:
        raise _usage(f"load_library: {path!r} is not a path") from None
    return _register(lib, cores, report)

"""Build vendor-style GPSIMD custom ops and run them on the host simulator.

``neuroncustomop.load`` returns the ops as NumPy callables;
``neuroncustomop.custom_op`` is the vendor's ``custom_op`` module, which
registers them as ``torch.ops.<library>.<op>`` (importing it imports
torch; nothing else here does).
"""

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
    load,
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
    "load",
]

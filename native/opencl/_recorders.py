"""The table of operator recorders: how each operator runs on OpenCL.

Each family module (`<family>.py` here) registers its operators' recorders with
`@recorder(...)`; the table is filled by importing every such module the first time
it is asked (`find_recorder`), so no list of operators is kept anywhere else.  The
dispatch sizes the families share (`round_up`, `local_2d`) live here too.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FLOATS = ("float32", "float16")


@dataclass
class Recorder:
    """How one operator runs on OpenCL: `fn(k, op, inputs, outputs)` records its kernel
    dispatches through the step builder `k` (see _plan.StepBuilder); `family` names its
    .cl file; `dtypes` the element types of its `type_input`; `supports(op, inputs)`
    (optional) refuses what it does not cover, given what is known of the inputs before
    any run (Info: dtype, shape with None for unknown dims or rank, value of
    initializers), so such a node is left to the CPU alone instead of failing its whole
    partition at plan time; `program_dtype(dtype)` (optional) names the element type of
    the program it dispatches from, when that is not the type input's, so the session
    builds that program up front."""

    fn: object
    family: str
    dtypes: tuple | None
    type_input: int = 0
    supports: object = None
    program_dtype: object = None

    def program_for(self, dtype) -> np.dtype:
        """The element type of the program it dispatches from, for a node whose type input
        is `dtype`: the same, or `program_dtype(dtype)` (data movement uses one program
        per element size).  DeviceError when there is none."""
        return np.dtype(self.program_dtype(dtype) if self.program_dtype is not None else dtype)


_recorders: dict[tuple[str, str], Recorder] = {}
_scanned = False


def recorder(*op_types: str, family: str, domain: str = "", dtypes=FLOATS, type_input: int = 0, supports=None,
             program_dtype=None):
    """Register the recorder of op types (used as a decorator in a family module)."""
    def register(fn):
        for t in op_types:
            _recorders[(domain, t)] = Recorder(fn, family, tuple(dtypes) if dtypes else None, type_input, supports,
                                               program_dtype)
        return fn
    return register


def find_recorder(domain: str, op_type: str) -> Recorder | None:
    global _scanned
    if not _scanned:
        for info in pkgutil.iter_modules([str(HERE)]):
            if not info.name.startswith("_"):
                importlib.import_module(f"{__package__}.{info.name}")
        _scanned = True
    return _recorders.get((domain, op_type))


def recorder_ops() -> list[str]:
    """'domain::op' of every operator the OpenCL provider can run."""
    find_recorder("", "")
    return sorted(f"{d or 'ai.onnx'}::{t}" for d, t in _recorders)


# -- dispatch sizes shared by the families --------------------------------------------------------
def round_up(n: int, m: int) -> int:
    """n rounded up to a multiple of m (global sizes must be multiples of local sizes)."""
    return -(-int(n) // m) * m


def local_2d(n0: int, size: int) -> tuple:
    """A work-group of `size` work-items, as wide along dim 0 (n0 work-items) as useful."""
    l0 = 1 << max(min(int(n0), size) - 1, 0).bit_length()
    return (l0, size // l0, 1)

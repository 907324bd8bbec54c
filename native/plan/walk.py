"""The walk every plan is made by, whatever the provider.

Given what is known of a partition's inputs for one signature (`known_infos`), the
walk goes through the operators in order: each node's output dtypes and shapes come
from its operator's `infer` (the one statement of its semantics); outputs that follow
from shapes and constants alone are folded here (`fold`, on the C kernels) and never
become steps; every other node is handed to the provider's `record(op, inputs,
outputs)`, which returns the step it will run.
"""

from __future__ import annotations

import math

import numpy as np

from ..ops import Info, Op
from .eager import run_eager
from .memory import check_size, limit


_STRING = np.dtype(object)


class Dynamic(Exception):
    """This signature cannot be planned ahead: a node's output shape depends on data
    computed at run time (or a provider cannot record the node for these inputs).
    The CPU partition then runs node by node."""


def known_infos(initializers: dict, feeds: dict, by_value=frozenset()) -> dict[str, Info]:
    """What a plan knows before its walk: initializers (not fed) with their values, and
    the fed values' dtypes and shapes -- with their content for the names in `by_value`,
    whose bytes are part of the plan's signature.  A string tensor is an object one,
    whatever numpy dtype was fed."""
    infos = {n: Info.of(v) for n, v in initializers.items() if n not in feeds}
    for name, v in feeds.items():
        if np.dtype(v.dtype).kind in "OUS":
            shape = tuple(v.shape)
            infos[name] = Info(_STRING, shape, None, (name, np.arange(math.prod(shape), dtype=np.int64).reshape(shape)))
        elif name in by_value and isinstance(v, np.ndarray):
            infos[name] = Info.of(v)
        else:
            infos[name] = Info(np.dtype(v.dtype), tuple(v.shape))
    return infos


def fold(op: Op, inputs: list[Info | None], pool) -> tuple[list, bool]:
    """A node's output infos at planning time, and whether they are constants: values
    that follow from shapes alone (Shape, Size) or from constant inputs, computed here
    once on the C kernels (never for random ops).  Data movement of strings read at run
    time (a column picked out of a string input) is done here too, on their numbers
    (Info.strings): it is no step, and the op reading its result reads the input."""
    moved = _moved_strings(op, inputs)
    if moved is not None:
        return moved, True
    outs = op.infer(inputs)
    if all(o is None or o.value is not None for o in outs):
        return outs, True
    if op.kernel is not None and op.deterministic and all(i.value is not None for i in inputs if i is not None):
        values = run_eager(op, [i.value if i is not None else None for i in inputs], pool)
        return [Info.of(v) if v is not None else o for v, o in zip(values, outs)], True
    return outs, False


def _moved_strings(op: Op, inputs: list[Info | None]) -> list | None:
    """The outputs of a data-movement op on strings of one input (their numbers moved by
    the op's int64 kernel, its other inputs constant), or None."""
    if not op.moves:
        return None
    moved = op.moved_inputs(len(inputs))
    given = [inputs[k] for k in moved if inputs[k] is not None]
    if not given or any(i.strings is None for i in given) or len({i.strings[0] for i in given}) != 1:
        return None
    if any(i is not None and i.value is None for k, i in enumerate(inputs) if k not in moved):
        return None
    source = given[0].strings[0]
    arrays = [(i.strings[1] if k in moved else i.value) if i is not None else None for k, i in enumerate(inputs)]
    numbers = run_eager(op, arrays, None)
    return [Info(_STRING, tuple(v.shape), None, (source, v)) if v is not None else None for v in numbers]


def walk(ops, infos: dict[str, Info], record, pool=None) -> list:
    """The steps of a plan: `record(op, inputs, outputs)` for every node not folded.
    `infos` (from known_infos) gains every value's info as the walk goes; folded values
    keep their content there.  Raises Dynamic where a value input (a shape, axes, a
    size) is computed at run time, and ResourceExhausted for an output over the memory
    limit -- before anything is allocated."""
    steps = []
    for op in ops:
        node = op.node
        ins = [infos[n] if n else None for n in node.input]
        for i in op.value_inputs:
            if i < len(ins) and ins[i] is not None and ins[i].value is None:
                raise Dynamic(f"{op.where}: input {i} ('{node.input[i]}') is computed at run time")
        outs, constant = fold(op, ins, pool)
        if constant:
            for name, o in zip(node.output, outs):
                if name and o is not None:
                    infos[name] = o
            continue
        for o in outs:
            if o is not None and o.size * np.dtype(o.dtype).itemsize > limit():
                check_size(o.size * np.dtype(o.dtype).itemsize,
                           f"{op.where}: a {list(o.shape)} {np.dtype(o.dtype).name} output")
        steps.append(record(op, ins, outs))
        for name, o in zip(node.output, outs):
            if name and o is not None:
                infos[name] = Info(o.dtype, tuple(o.shape))
    return steps

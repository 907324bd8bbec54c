"""Operator semantics, one file per operator, found by class name.

`lookup(domain, op_type, opset)` returns the operator class for a node: the class
named `op_type` or `op_type_<since>` with the largest `since` not above `opset`;
`make_op(node, graph)` the operator for a node of a graph.
Nothing lists the operators by hand: every module in this folder is scanned.

A session's custom operators (SessionOptions.register_custom_op, docs/custom_ops.md)
are not files here: while the session is made or runs, `custom(table)` makes `lookup`
answer with them first, for their (domain, op type) at any opset.
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import pkgutil
import re

from ..._errors import NotImplemented
from ._base import REQUIRED, Alias, AliasKind, Info, Launch, Op, Runtime, View  # noqa: F401
from ._base import _attribute_value as attribute_value  # (what custom operators, outside, use)
from ._host import _HostOp as HostOp

# (domain, op type) -> operator class of the session being made or run (None: none)
_custom: contextvars.ContextVar = contextvars.ContextVar("mlrt_custom_ops", default=None)

_VERSIONED = re.compile(r"^(?P<op>[A-Za-z][A-Za-z0-9]*?)(?:_(?P<since>\d+))?$")


@functools.cache
def registry() -> dict[tuple[str, str], list[tuple[int, type]]]:
    table: dict[tuple[str, str], list[tuple[int, type]]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name, obj in vars(module).items():
            if not (isinstance(obj, type) and issubclass(obj, Op) and obj is not Op
                    and obj.__module__ == module.__name__ and not name.startswith("_")):
                continue
            m = _VERSIONED.match(name)
            if not m:
                continue
            since = int(m.group("since") or 1)
            table.setdefault((obj.domain, m.group("op")), []).append((since, obj))
    for versions in table.values():
        versions.sort(key=lambda v: v[0])
    return table


def lookup(domain: str, op_type: str, opset: int) -> type | None:
    """The operator class for a node ("" is the default domain, as graph.py loads it)."""
    table = _custom.get()
    if table:
        cls = table.get((domain, op_type))
        if cls is not None:
            return cls
    best = None
    for since, cls in registry().get((domain, op_type), []):
        if since <= opset:
            best = cls
    return best


def custom(table: dict | None):
    """Make `lookup` answer with `table` ((domain, op type) -> operator class) first, in
    this thread, until the returned token is handed to `custom_done`."""
    return _custom.set(table or None)


def custom_idle() -> bool:
    """Whether no session in this thread has custom operators in force."""
    return _custom.get() is None


def custom_done(token) -> None:
    _custom.reset(token)


def all_ops() -> list[tuple[str, str]]:
    return sorted(registry())


def make_op(node, graph) -> Op:
    """The operator for `node` at its graph's opset; NotImplemented when there is none.
    An operator `prepare` made for the node is handed out (once) instead of a new one."""
    opset = graph.opset(node.domain)
    cls = lookup(node.domain, node.op_type, opset)
    if cls is None:
        raise NotImplemented(f"node '{node.name or node.op_type}': operator {node.domain or 'ai.onnx'}::"
                             f"{node.op_type} (opset {opset}) is not implemented")
    ready = graph.prepared.pop(id(node), None) if graph.prepared else None
    if ready is not None and ready[0] is node and type(ready[1]) is cls:
        return ready[1]
    return cls(node, opset)


@functools.cache
def _made_ahead() -> frozenset:
    """(domain, op type) of the operators made ahead."""
    return frozenset(key for key, versions in registry().items() if any(cls.made_ahead for _, cls in versions))


def prepare(graph) -> None:
    """Make the operators that are slow to make (`Op.made_ahead`: tables from large
    attributes) now, for `make_op` to hand out: the session calls this while onnx's
    checker works in its child process.  One that fails is left to fail when made."""
    kinds = _made_ahead()
    if not any(domain in graph.opsets for domain, _ in kinds):
        return
    for node in graph.nodes:
        if (node.domain, node.op_type) not in kinds:
            continue
        opset = graph.opset(node.domain)
        cls = lookup(node.domain, node.op_type, opset)
        if cls is not None and cls.made_ahead:
            try:
                graph.prepared[id(node)] = (node, cls(node, opset))
            except Exception:
                pass

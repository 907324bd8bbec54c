"""Helpers the rewrite passes share."""

import numpy as np
from onnx import helper


def attrs(node) -> dict:
    """A node's attributes as Python values, by name."""
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def variable_names(graph) -> set[str]:
    """Values that can change between runs: graph inputs and overridable initializers."""
    return {v.name for v in graph.overridable} | {v.name for v in graph.inputs}


def lookups(graph):
    """(variable names, graph output names, name -> the node writing it, name -> the nodes
    reading it) of a graph as it is now."""
    producer = {o: n for n in graph.nodes for o in n.output if o}
    readers: dict[str, list] = {}
    for node in graph.nodes:
        for name in graph.reads(node):
            readers.setdefault(name, []).append(node)
    return variable_names(graph), {o.name for o in graph.outputs}, producer, readers


def constant(graph, name: str, variable: set[str] | None = None):
    """The array behind a name if it is a constant initializer, else None (`variable`:
    variable_names(graph), where the caller has it)."""
    if not name or name in (variable if variable is not None else variable_names(graph)):
        return None
    return graph.initializers.get(name)


def per_channel(value: np.ndarray, channels: int, out_rank: int):
    """The constant as a (channels,) vector if it varies along axis 1 (N, C, ...) only."""
    if value.size == 1:
        return np.full(channels, value.reshape(()), dtype=value.dtype)
    shape = list(value.shape)
    if len(shape) > out_rank:
        return None
    shape = [1] * (out_rank - len(shape)) + shape  # right-aligned against (N, C, spatial...)
    if shape[0] != 1 or shape[1] != channels or any(d != 1 for d in shape[2:]):
        return None
    return value.reshape(channels)


def prune_initializers(graph) -> None:
    """Drop initializers nothing reads any more (overridable ones stay: they are inputs)."""
    used = graph.names_read() | {v.name for v in graph.overridable}
    for name in list(graph.initializers):
        if name not in used:
            del graph.initializers[name]


def drop_unread_dequantize(graph) -> None:
    """Drop the DequantizeLinear nodes nothing reads (a fusion took the quantized input of
    each of their readers; a node of several readers is left to the last one)."""
    while True:
        read = graph.names_read() | {o.name for o in graph.outputs}
        keep = [n for n in graph.nodes if n.op_type != "DequantizeLinear" or n.domain != "" or n.output[0] in read]
        if len(keep) == len(graph.nodes):
            return
        graph.nodes[:] = keep

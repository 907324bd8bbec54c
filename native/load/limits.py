"""The node limit: a model of more nodes than `session.max_node_count` (subgraphs
included) is refused before anything else is done with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._errors import InvalidArgument, InvalidModel
from ..graph import subgraphs

if TYPE_CHECKING:
    import onnx

MAX_NODES = 10_000_000  # nodes in a model, subgraphs included (session.max_node_count)
MAX_NODES_KEY = "session.max_node_count"


def parse_max_nodes(config: dict) -> int:
    """The node-count limit from a session's config entries: `session.max_node_count`, an
    integer > 0 (MAX_NODES when not set)."""
    text = config.get(MAX_NODES_KEY)
    if text is None:
        return MAX_NODES
    try:
        value = int(str(text).strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise InvalidArgument(f"session config entry '{MAX_NODES_KEY}' must be an integer > 0, got {text!r}")
    return value


def count_nodes(g: onnx.GraphProto) -> int:
    """The nodes of a graph and of all its subgraphs, at any depth (no recursion)."""
    count, stack = 0, [g]
    while stack:
        graph = stack.pop()
        count += len(graph.node)
        for n in graph.node:
            stack += subgraphs(n)
    return count


def check_node_count(model: onnx.ModelProto, limit: int) -> None:
    """InvalidModel when the model has more than `limit` nodes, subgraphs included."""
    n = count_nodes(model.graph)
    if n > limit:
        raise InvalidModel(f"the model has {n:,} nodes (subgraphs included), over the limit of {limit:,} "
                           f"(session config entry '{MAX_NODES_KEY}')")


__all__ = ["MAX_NODES", "MAX_NODES_KEY", "check_node_count", "count_nodes", "parse_max_nodes"]

"""Remove Identity nodes, and Dropout nodes in inference (their mask unread), by
renaming readers of the output to read the input.  A node whose output is a graph
output, or is read from inside a subgraph, stays (the name must survive)."""

LEVEL = 1
ORDER = 10


def _removable(node, graph_outputs, read) -> bool:
    if node.op_type == "Identity":
        pass
    elif node.op_type == "Dropout":
        if len(node.output) > 1 and node.output[1] and (node.output[1] in read or node.output[1] in graph_outputs):
            return False
        if len(node.input) > 2 and node.input[2]:  # training_mode given: leave it to the kernel
            return False
    else:
        return False
    return node.domain == "" and node.output[0] not in graph_outputs


def apply(graph, context) -> int:
    if not any(n.op_type in ("Identity", "Dropout") for n in graph.nodes):
        return 0  # (the common case: nothing to index)
    outputs = {o.name for o in graph.outputs} | graph.read_by_subgraphs()  # names that must survive
    readers: dict[str, list] = {}  # name -> nodes with it among their inputs, kept true as inputs are renamed
    for node in graph.nodes:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    read = set(readers)
    removed = 0
    for node in list(graph.nodes):
        if not _removable(node, outputs, read):
            continue
        src, dst = node.input[0], node.output[0]
        for other in readers.pop(dst, ()):
            for k, name in enumerate(other.input):
                if name == dst:
                    other.input[k] = src
            readers.setdefault(src, []).append(other)
        graph.nodes.remove(node)
        removed += 1
    return removed

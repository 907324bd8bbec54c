"""A residual Add and the LayerNormalization after it -> one com.microsoft
SkipLayerNormalization (as onnxruntime fuses them on the CPU):

    LayerNormalization(Add(input, skip), gamma, beta)        axis -1, float32
    LayerNormalization(Add(Add(input, bias), skip), gamma, beta)

input and skip of one known shape (equal dims, or the same symbolic names), gamma, beta
and a bias of the last dim's length (1-D; the bias a constant initializer, added by an
Add whose result only the other Add reads).  The Add's sum may be read elsewhere too
(pre-norm transformers carry it on): it becomes the fused node's fourth output.  The
LayerNormalization's mean and inverse-deviation outputs must be unread.  The node does
the adds and the norm in one pass over each row (kernels/normalize.c), so the sum is no
tensor of its own unless something reads it; its additions run in the order
input + skip + bias, a rounding apart from the graph's (input + bias) + skip.  Only in a
session on the CPU alone: the OpenCL provider has LayerNormalization but no
SkipLayerNormalization, and the fused node would leave it for the CPU."""

from onnx import helper

from ._util import constant, lookups

LEVEL = 2
ORDER = 62


def apply(graph, context) -> int:
    if set(context.providers) != {"CPUExecutionProvider"}:
        return 0
    if not any(n.op_type == "LayerNormalization" and n.domain == "" for n in graph.nodes):
        return 0
    variable, outputs, producer, readers = lookups(graph)

    def shape(name):
        """The known dims of a float32 value (a graph output declared without them: the inferred ones)."""
        for t in (graph.type_of(name), graph.value_types.get(name)):
            if t is not None and t.elem_type == 1 and t.shape is not None and None not in t.shape:
                return tuple(t.shape)
        return None

    def vector(name, n) -> bool:
        """A float 1-D value of n elements."""
        value = constant(graph, name, variable)
        if value is not None:
            return value.dtype.name == "float32" and value.shape == (n,)
        return shape(name) == (n,)

    def only_for(name, node) -> bool:
        rs = readers.get(name, ())
        return name not in outputs and len(rs) == 1 and rs[0] is node and list(node.input).count(name) == 1

    def match(ln):
        """(inputs of the fused node, the sum's name or "", nodes it replaces) or None."""
        if len(ln.input) < 2 or any(o and (o in outputs or readers.get(o)) for o in ln.output[1:]):
            return None
        attrs = {a.name: helper.get_attribute_value(a) for a in ln.attribute}
        add = producer.get(ln.input[0])
        if add is None or add.op_type != "Add" or add.domain != "" or len(add.input) != 2:
            return None
        full = shape(add.output[0])
        if not full or attrs.get("axis", -1) not in (-1, len(full) - 1) or not isinstance(full[-1], int):
            return None
        h = full[-1]
        gamma, beta = ln.input[1], ln.input[2] if len(ln.input) > 2 else ""
        if not vector(gamma, h) or (beta and not vector(beta, h)):
            return None
        u, v = add.input
        gone, bias = [add], ""
        for a, b in ((u, v), (v, u)):  # (input + bias) + skip, either side
            inner = producer.get(a)
            if (inner is not None and inner.op_type == "Add" and inner.domain == "" and len(inner.input) == 2
                    and only_for(a, add)):
                for x, c in (inner.input, inner.input[::-1]):
                    value = constant(graph, c, variable)
                    if value is not None and value.dtype.name == "float32" and value.shape == (h,) and shape(x) == full:
                        u, v, bias = x, b, c
                        gone.append(inner)
                        break
            if bias:
                break
        if shape(u) != full or shape(v) != full:
            return None
        summed = add.output[0]
        keep = summed in outputs or any(r is not ln for r in readers.get(summed, ()))
        return [u, v, gamma, beta, bias], summed if keep else "", gone

    replaced: dict[int, object] = {}
    removed: set[int] = set()
    for ln in list(graph.nodes):
        if ln.op_type != "LayerNormalization" or ln.domain != "":
            continue
        found = match(ln)
        if found is None or any(id(n) in removed for n in found[2]):
            continue
        inputs, summed, gone = found
        while inputs and not inputs[-1]:
            inputs.pop()
        eps = next((helper.get_attribute_value(a) for a in ln.attribute if a.name == "epsilon"), 1e-5)
        outs = [ln.output[0]] + (["", "", summed] if summed else [])
        node = helper.make_node("SkipLayerNormalization", inputs, outs, name=ln.name or f"SkipLayerNorm_{ln.output[0]}",
                                domain="com.microsoft", epsilon=float(eps))
        removed.update(id(n) for n in gone)
        removed.add(id(ln))
        for n in gone + [ln]:
            for r in graph.reads(n):
                readers[r] = [m for m in readers.get(r, ()) if m is not n]
        for r in node.input:
            if r:
                readers.setdefault(r, []).append(node)
        for o in node.output:
            if o:
                producer[o] = node
        replaced[id(ln)] = node
    if replaced:
        graph.nodes[:] = [replaced.get(id(n), n) for n in graph.nodes if id(n) in replaced or id(n) not in removed]
        graph.reorder()
    return len(replaced)

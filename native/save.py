"""The optimized graph written as a model onnxruntime loads (SessionOptions.optimized_model_filepath):
its nodes in portable form (native/optimizer/_portable.py), its initializers inline or,
past a size, in an external data file the session config names."""

from __future__ import annotations

from .load import source_files
from .optimizer._portable import EXTERNAL_FILE, EXTERNAL_MIN_SIZE, declare_inputs, external_options, portable, save


def save_optimized(graph, path, config: dict, source) -> None:
    """Write `graph` (a session's, optimized) to `path`; `config` is the session's config
    entries (EXTERNAL_FILE, EXTERNAL_MIN_SIZE), `source` what the model was read from (its
    own data files are never overwritten)."""
    import onnx
    from onnx import numpy_helper

    def dtype_of(name):
        if name in graph.initializers:
            return graph.initializers[name].dtype
        t = graph.type_of(name)
        return onnx.helper.tensor_dtype_to_np_dtype(t.elem_type) if t is not None and t.elem_type else None

    nodes, constants = portable(graph.nodes, graph.opset(""), dtype_of)
    m = onnx.ModelProto()
    m.CopyFrom(graph.model)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    del m.graph.initializer[:]
    m.graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in {**graph.initializers, **constants}.items())
    declare_inputs(m, [v.name for v in graph.inputs], [v.name for v in graph.overridable])
    declared = {o.domain for o in m.opset_import}
    for domain in sorted({n.domain for n in nodes} - declared - {"ai.onnx"}):
        m.opset_import.append(onnx.helper.make_opsetid(domain, 1))  # e.g. com.microsoft for fused nodes
    external, min_size = external_options(config)
    save(m, path, external, min_size, source_files=lambda: source_files(source))


__all__ = ["EXTERNAL_FILE", "EXTERNAL_MIN_SIZE", "save_optimized"]

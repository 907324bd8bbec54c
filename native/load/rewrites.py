"""The rewrites a model gets as it is read, before onnx's checker sees it: the default
domain spelled one way and the domains nodes use imported, free input dimensions
fixed, model-local functions expanded."""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING

from ..._errors import InvalidModel
from ..graph import subgraphs

if TYPE_CHECKING:
    import onnx

log = logging.getLogger("mlrt")

def default_domain(model: onnx.ModelProto) -> bool:
    """Spell the default domain one way, "", in the opset imports and every node
    (subgraphs included): ONNX allows "ai.onnx" too (onnxruntime takes both, onnx's
    checker only ""), and nothing past loading has to know.  And import the domains
    nodes use that the model does not (`_import_used_domains`).  True if it changed
    the model."""
    imports = {}
    for o in model.opset_import:
        domain = "" if o.domain == "ai.onnx" else o.domain
        imports[domain] = max(imports.get(domain, 0), o.version)
    changed = len(imports) != len(model.opset_import) or any(o.domain == "ai.onnx" for o in model.opset_import)
    if changed:
        import onnx
        del model.opset_import[:]
        model.opset_import.extend(onnx.helper.make_opsetid(d, v) for d, v in imports.items())

    used = set()  # the domains of the graph's nodes

    def respell(nodes) -> bool:
        found = False
        for n in nodes:
            if n.domain == "ai.onnx":
                n.domain = ""
                found = True
            used.add(n.domain)
            for sub in subgraphs(n):
                found |= respell(sub.node)
        return found

    changed |= respell(model.graph.node)
    for f in model.functions:
        for n in f.node:
            if n.domain == "ai.onnx":
                n.domain = ""
                changed = True
    return _import_used_domains(model, used) or changed


@functools.cache
def _newest_opsets() -> dict:
    """domain -> the newest opset version onnx or mlrt's operators know of it."""
    import onnx

    from ..ops import registry
    newest = {"": onnx.defs.onnx_opset_version(), "ai.onnx.ml": onnx.defs.onnx_ml_opset_version()}
    for s in onnx.defs.get_all_schemas_with_history():
        newest[s.domain] = max(newest.get(s.domain, 0), s.since_version)
    for (domain, _), versions in registry().items():
        newest.setdefault(domain, max(since for since, _ in versions))
    return newest


def _import_used_domains(model: onnx.ModelProto, used: set) -> bool:
    """Import each operator domain nodes use (`used`) but the model does not import, at
    the newest version known (a session's custom operators: version 1), as onnxruntime
    does: onnx's checker refuses such a model, onnxruntime runs it.  An import no node
    uses whose version is out of range (onnx takes 32 bits) is dropped.  A model that
    imports nothing is left to be refused, and a domain nobody knows stays unimported
    (the checker names it).  True if it changed the model."""
    if not len(model.opset_import):
        return False
    changed = False
    for o in list(model.opset_import):
        if o.domain not in used and not -(1 << 31) <= o.version < 1 << 31:
            model.opset_import.remove(o)
            changed = True
    missing = used - {o.domain for o in model.opset_import}
    if not missing:
        return changed
    import onnx

    from ..ops import _custom
    known = dict(_newest_opsets())
    known.update({domain: 1 for domain, _ in (_custom.get() or {}) if domain not in known})
    for domain in sorted(missing & set(known)):
        model.opset_import.append(onnx.helper.make_opsetid(domain, known[domain]))
        log.warning("nodes of domain '%s' run at its opset %d: the model does not import that domain "
                    "(onnxruntime takes its newest version too)", domain or "ai.onnx", known[domain])
        changed = True
    return changed


def fix_dimensions(model: onnx.ModelProto, by_name: dict | None = None, by_denotation: dict | None = None) -> bool:
    """Give free dimensions of the model's inputs a size: those named in `by_name`
    (their dim_param, wherever it appears in the graph's declared types) and those
    whose denotation is in `by_denotation` (e.g. DATA_BATCH).  A fixed dimension stays
    as it is.  True if it changed the model."""
    by_name, by_denotation = dict(by_name or {}), dict(by_denotation or {})
    g = model.graph
    initializers = {t.name for t in g.initializer}
    changed = False
    for vi in g.input:
        if vi.name in initializers or not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            continue
        for dim in vi.type.tensor_type.shape.dim:
            if dim.HasField("dim_value"):
                continue
            size = by_denotation.get(dim.denotation) if dim.denotation else None
            if size is not None:
                if dim.dim_param and dim.dim_param not in by_name:
                    by_name[dim.dim_param] = size  # the same name elsewhere in the graph follows
                dim.dim_value = size
                changed = True
    if not by_name:
        return changed
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            for dim in vi.type.tensor_type.shape.dim:
                if dim.HasField("dim_param") and dim.dim_param in by_name:
                    dim.dim_value = by_name[dim.dim_param]
                    changed = True
    return changed

def calls_local_functions(model: onnx.ModelProto) -> bool:
    """Whether a node (in the graph or a subgraph) calls one of the model's own functions."""
    if not len(model.functions):
        return False
    local = {(f.domain, f.name) for f in model.functions}

    def calls(g) -> bool:
        for node in g.node:
            if (node.domain, node.op_type) in local:
                return True
            for a in node.attribute:
                if any(calls(sub) for sub in list(a.graphs) + ([a.g] if a.HasField("g") else [])):
                    return True
        return False

    return calls(model.graph)

def inline_local_functions(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with its model-local functions expanded in place (the way exporters such as
    torch.onnx.export(dynamo=True) write modules), as onnxruntime runs them."""
    import onnx.inliner
    try:
        return onnx.inliner.inline_local_functions(model)
    except Exception as exc:
        raise InvalidModel(f"the model's local functions cannot be expanded: {str(exc).strip().splitlines()[0]}") \
            from None


__all__ = ["calls_local_functions", "default_domain", "fix_dimensions", "inline_local_functions"]

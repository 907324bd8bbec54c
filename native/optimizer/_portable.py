"""The optimized graph as other runtimes read it (SessionOptions.optimized_model_filepath).

The fusion passes make two kinds of node that only mlrt runs as they are:
- FusedConv (com.microsoft) with an activation onnxruntime's FusedConv does not have
  ("HardSwish", "Swish") or with none: written as Conv, Add of Z, then the activation in
  standard operators (HardSigmoid and Mul; Sigmoid and Mul);
- Gelu in the default domain below opset 20 (where ONNX has no Gelu): written as the
  Erf form it was fused from.
FusedConv with any other activation (onnxruntime's own, or one mlrt does not know) is
kept as it is.  The nodes that come out read
and write the same names as the node they replace, plus new intermediate names made
unique with the node's output name."""

from __future__ import annotations

import math

import numpy as np
from onnx import helper


def portable(nodes, opset: int, dtype_of=None) -> tuple[list, dict[str, np.ndarray]]:
    """`nodes` (NodeProtos of the default-domain opset `opset`) with mlrt-only nodes
    written in standard operators; returns them and the scalar constants they need,
    of the type `dtype_of(value name)` gives for the value they meet (float32 if None)."""
    out, constants = [], {}

    def const(name: str, value: float, like: str) -> str:
        dtype = dtype_of(like) if dtype_of else None
        constants[name] = np.array(value, dtype if dtype is not None else np.float32)
        return name

    for node in nodes:
        if node.domain == "com.microsoft" and node.op_type == "FusedConv":
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            act = attrs.pop("activation", b"")
            act = act.decode() if isinstance(act, bytes) else act
            params = list(attrs.pop("activation_params", []) or [])
            if act not in ("", "Identity", "HardSwish", "Swish"):  # onnxruntime's own, or unknown: as it is
                out.append(node)
                continue
            y = node.output[0]
            stem = f"{y}__mlrt"
            inputs = list(node.input)
            z = inputs[3] if len(inputs) > 3 and inputs[3] else ""
            conv_out = f"{stem}_conv" if (z or act) else y
            conv_inputs = inputs[:3]
            while conv_inputs and not conv_inputs[-1]:
                conv_inputs.pop()
            out.append(helper.make_node("Conv", conv_inputs, [conv_out], name=node.name, **attrs))
            v = conv_out
            if z:
                summed = f"{stem}_sum" if act else y
                out.append(helper.make_node("Add", [v, z], [summed], name=f"{node.name}_z"))
                v = summed
            if act == "HardSwish":
                alpha, beta = (params + [1 / 6, 0.5][len(params):])[:2]
                gate = f"{stem}_gate"
                out.append(helper.make_node("HardSigmoid", [v], [gate], alpha=float(alpha), beta=float(beta),
                                            name=f"{node.name}_hardsigmoid"))
                out.append(helper.make_node("Mul", [v, gate], [y], name=f"{node.name}_mul"))
            elif act == "Swish":
                alpha = float(params[0]) if params else 1.0
                scaled = v
                if alpha != 1.0:
                    scaled = f"{stem}_scaled"
                    out.append(helper.make_node("Mul", [v, const(f"{stem}_alpha", alpha, v)], [scaled],
                                                name=f"{node.name}_alpha"))
                gate = f"{stem}_gate"
                out.append(helper.make_node("Sigmoid", [scaled], [gate], name=f"{node.name}_sigmoid"))
                out.append(helper.make_node("Mul", [v, gate], [y], name=f"{node.name}_mul"))
        elif (node.domain in ("", "ai.onnx") and node.op_type == "Gelu" and opset < 20
              and all(a.name != "approximate" or a.s in (b"", b"none") for a in node.attribute)):
            x, y = node.input[0], node.output[0]
            stem = f"{y}__mlrt"
            out += [
                helper.make_node("Div", [x, const(f"{stem}_sqrt2", math.sqrt(2.0), x)], [f"{stem}_scaled"],
                                 name=f"{node.name}_div"),
                helper.make_node("Erf", [f"{stem}_scaled"], [f"{stem}_erf"], name=f"{node.name}_erf"),
                helper.make_node("Add", [f"{stem}_erf", const(f"{stem}_one", 1.0, x)], [f"{stem}_sum"],
                                 name=f"{node.name}_add"),
                helper.make_node("Mul", [x, f"{stem}_sum"], [f"{stem}_prod"], name=f"{node.name}_mul"),
                helper.make_node("Mul", [f"{stem}_prod", const(f"{stem}_half", 0.5, x)], [y], name=f"{node.name}_half"),
            ]
        else:
            out.append(node)
    return out, constants

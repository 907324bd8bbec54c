"""The optimized graph as other runtimes read it (SessionOptions.optimized_model_filepath).

The fusion passes make two kinds of node that only mlrt runs as they are:
- FusedConv (com.microsoft) with an activation onnxruntime's FusedConv does not have
  ("HardSwish", "Swish") or with none: written as Conv, Add of Z, then the activation in
  standard operators (HardSigmoid and Mul; Sigmoid and Mul);
- Gelu in the default domain below opset 20 (where ONNX has no Gelu): written as the
  Erf form it was fused from;
- ConvIntegerToFloat (com.microsoft, mlrt's own): written as the chain it was fused
  from, ConvInteger, Cast, Mul by x_scale * w_scale, Add of the bias, Relu or Clip (its
  per-channel vectors reshaped to (channels, 1, ...));
- FusedConvMaxPool (com.microsoft, mlrt's own): written as FusedConv (itself written
  out as above where onnxruntime's has not its activation), then MaxPool.
FusedConv with any other activation (onnxruntime's own, or one mlrt does not know) is
kept as it is.  The nodes that come out read
and write the same names as the node they replace, plus new intermediate names made
unique with the node's output name.

`declare_inputs` and `save` write the model out: the graph inputs its IR version asks
for (before IR 4 every initializer is also a graph input), and its large weights in an
external data file when asked (or when the model would pass protobuf's 2 GB limit)."""

from __future__ import annotations

import math
import os
import re

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

    nodes = [n for node in nodes for n in _conv_then_pool(node)]
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
        elif node.domain == "com.microsoft" and node.op_type == "ConvIntegerToFloat":
            out += _conv_integer_chain(node, constants)
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


def _conv_then_pool(node) -> list:
    """FusedConvMaxPool as FusedConv -> MaxPool (other nodes as they are)."""
    if node.domain != "com.microsoft" or node.op_type != "FusedConvMaxPool":
        return [node]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    pool = {k.removeprefix("pool_"): attrs.pop(k) for k in list(attrs) if k.startswith("pool_")}
    if not pool.get("ceil_mode"):  # (an attribute of opset 10 on: the model's own may be older)
        pool.pop("ceil_mode", None)
    y = node.output[0]
    conv_out = f"{y}__mlrt_conv"
    return [helper.make_node("FusedConv", list(node.input), [conv_out], name=node.name, domain="com.microsoft",
                             **attrs),
            helper.make_node("MaxPool", [conv_out], [y], name=f"{node.name}_maxpool", **pool)]


def _conv_integer_chain(node, constants: dict) -> list:
    """ConvIntegerToFloat as ConvInteger -> Cast -> Mul [-> Add] [-> Relu | Clip]."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    act = attrs.pop("activation", b"")
    act = act.decode() if isinstance(act, bytes) else act
    params = [float(v) for v in attrs.pop("activation_params", []) or []]
    ins = list(node.input) + [""] * (7 - len(node.input))
    x, w, x_s, w_s, x_z, w_z, bias = ins[:7]
    y, name = node.output[0], node.name
    stem = f"{y}__mlrt"
    shape = f"{stem}_channels"  # (-1, 1, ...): a per-channel vector against (N, C, spatial...)
    constants[shape] = np.array([-1] + [1] * len(attrs["kernel_shape"]), np.int64)
    conv_in = [x, w, x_z, w_z]
    while conv_in and not conv_in[-1]:
        conv_in.pop()
    scale = f"{stem}_scale"
    out = [helper.make_node("Reshape", [w_s, shape], [f"{stem}_w_scale"], name=f"{name}_w_scale"),
           helper.make_node("Mul", [x_s, f"{stem}_w_scale"], [scale], name=f"{name}_scale"),
           helper.make_node("ConvInteger", conv_in, [f"{stem}_acc"], name=name, **attrs),
           helper.make_node("Cast", [f"{stem}_acc"], [f"{stem}_accf"], to=1, name=f"{name}_cast")]
    v, steps = f"{stem}_accf", ["mul"] + (["bias"] if bias else []) + (["act"] if act else [])
    for k, step in enumerate(steps):
        dst = y if k == len(steps) - 1 else f"{stem}_{step}"
        if step == "mul":
            out.append(helper.make_node("Mul", [v, scale], [dst], name=f"{name}_mul"))
        elif step == "bias":
            out.append(helper.make_node("Reshape", [bias, shape], [f"{stem}_b"], name=f"{name}_b"))
            out.append(helper.make_node("Add", [v, f"{stem}_b"], [dst], name=f"{name}_add"))
        elif act == "Relu":
            out.append(helper.make_node("Relu", [v], [dst], name=f"{name}_relu"))
        else:
            lo, hi = (params + [-math.inf, math.inf][len(params):])[:2]
            constants[f"{stem}_lo"], constants[f"{stem}_hi"] = np.array(lo, np.float32), np.array(hi, np.float32)
            out.append(helper.make_node("Clip", [v, f"{stem}_lo", f"{stem}_hi"], [dst], name=f"{name}_clip"))
        v = dst
    return out


EXTERNAL_FILE = "session.optimized_model_external_initializers_file_name"
EXTERNAL_MIN_SIZE = "session.optimized_model_external_initializers_min_size_in_bytes"
DEFAULT_MIN_SIZE = 1024
ALIGN_FROM, ALIGNMENT = 1 << 20, 4096  # tensors of 1 MiB or more start at a multiple of 4 KiB (for mmap)
_PROTOBUF_LIMIT = (1 << 31) - (16 << 20)  # bytes of initializers past which a model cannot be one file


def external_options(config: dict) -> tuple[str | None, int]:
    """The external data file name and size threshold the session config entries ask for
    (None: keep the weights in the model).  As onnxruntime, the threshold is read only
    with a file name, and must then be a plain whole number (InvalidArgument otherwise)."""
    from ..._errors import InvalidArgument
    name = config.get(EXTERNAL_FILE) or None
    if name is None:
        return None, DEFAULT_MIN_SIZE
    text = config.get(EXTERNAL_MIN_SIZE, str(DEFAULT_MIN_SIZE))
    if not re.fullmatch(r"[0-9]+", text):
        raise InvalidArgument(f"session config entry {EXTERNAL_MIN_SIZE} must be a whole number of bytes, got '{text}'")
    return name, int(text)


def declare_inputs(model, inputs: list[str], overridable: list[str]) -> None:
    """Set `model`'s graph inputs: `inputs` (the names of its true inputs, declared as
    the model declared them), then its initializers -- where IR < 4 all of them, as
    that IR asks (its readers take every initializer declared as an input to be a
    constant), else those named in `overridable` that are still there.  An optimized
    graph has initializers of its own (folded constants, fused weights) and has lost
    some of the model's: the model's list of inputs is right for neither."""
    from onnx import helper
    g = model.graph
    declared = {vi.name: vi for vi in g.input}
    written = {t.name: t for t in g.initializer}
    keep = [declared[n] for n in inputs if n in declared]
    if model.ir_version < 4:
        extra = [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in g.initializer]
    else:
        extra = [declared[n] for n in overridable if n in declared and n in written]
    del g.input[:]
    g.input.extend(keep + extra)


def save(model, path: str, external: str | None = None, min_size: int = DEFAULT_MIN_SIZE,
         source_files=None) -> str | None:
    """Write `model` to `path`; with `external` (a file name relative to the model's
    folder, inside it), every initializer of `min_size` bytes or more, in subgraphs too,
    goes to that file as onnxruntime writes it (strings and empty tensors stay in).
    Returns the external data file's path where one was written, else None.  A model
    whose initializers would pass protobuf's 2 GB limit gets one anyway (`path` +
    ".data").  An existing data file is replaced, unless it is one of `source_files()`
    (where given: the files the model being saved was read from), which are never
    written over (InvalidArgument)."""
    import onnx
    from ..._errors import InvalidArgument
    if not external and sum(t.ByteSize() for t in model.graph.initializer) > _PROTOBUF_LIMIT:
        external = os.path.basename(path) + ".data"
    if not external:
        onnx.save(model, path)
        return None
    data_path, location = _data_file(path, external)
    if os.path.lexists(data_path) and source_files is not None and \
            os.path.realpath(data_path) in {os.path.realpath(f) for f in source_files()}:
        raise InvalidArgument(f"external data file {data_path} is a file the model being optimized was read from: "
                              f"writing there would destroy it; choose another name in {EXTERNAL_FILE}")
    if os.path.lexists(data_path):
        os.remove(data_path)  # (a link is replaced, not written through)
    out = []

    def write(offset: int, raw: bytes) -> None:  # (the file is made when the first tensor goes there)
        if not out:
            out.append(open(data_path, "xb"))
        out[0].write(b"\0" * (offset - out[0].tell()))
        out[0].write(raw)

    try:
        _externalize(model, location, min_size, write)
    except BaseException:
        if out:
            out[0].close()
            os.remove(data_path)
        raise
    if out:
        out[0].close()
    onnx.save(model, path)
    return data_path if out else None


def _data_file(path: str, external: str) -> tuple[str, str]:
    """The external data file's path and its location as the model writes it: relative
    to the model's folder and inside it (a subfolder must exist), never the model
    itself.  InvalidArgument otherwise: onnxruntime writes "../" locations that no
    runtime will read back, and fails on absolute ones."""
    from ..._errors import InvalidArgument
    folder = os.path.dirname(os.path.abspath(path))
    data_path = os.path.normpath(os.path.join(folder, external))
    where = f"external data file '{external}' (session config entry {EXTERNAL_FILE})"
    if os.path.isabs(external) or not data_path.startswith(folder + os.sep) or data_path == os.path.abspath(path) \
            or "\0" in external:
        raise InvalidArgument(f"{where} must be a file name beside the model {path}, or in a folder under it "
                              "(models read external data from their own folder only)")
    parent = os.path.dirname(data_path)
    if not os.path.isdir(parent):
        raise InvalidArgument(f"{where}: there is no folder {parent} to write it in")
    real, real_parent = os.path.realpath(folder), os.path.realpath(parent)
    if real_parent != real and not real_parent.startswith(real + os.sep):
        raise InvalidArgument(f"{where}: folder {parent} is a link that leads out of the model's folder {folder}")
    if os.path.isdir(data_path):
        raise InvalidArgument(f"{where}: {data_path} is a folder")
    return data_path, os.path.relpath(data_path, folder).replace(os.sep, "/")


def _externalize(model, location: str, min_size: int, write) -> None:
    """Make the initializers of `min_size` bytes or more (not strings, not empty) refer to
    `location`, laid out one after the other as onnxruntime lays them out (a subgraph's
    before the graph holding it; ALIGN_FROM bytes or more aligned), each handed to
    `write(offset, bytes)` in order."""
    from onnx import TensorProto, numpy_helper
    end = 0

    def visit(graph):
        nonlocal end
        for node in graph.node:
            for a in node.attribute:
                for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                    visit(sub)
        for t in graph.initializer:
            if t.data_type == TensorProto.STRING or t.data_location == TensorProto.EXTERNAL:
                continue
            try:  # (typed fields, as a subgraph may hold them, in raw form)
                raw = t.raw_data if t.HasField("raw_data") else numpy_helper.from_array(numpy_helper.to_array(t)).raw_data
            except Exception:  # noqa: BLE001 - a type onnx cannot convert stays in the model
                continue
            size = len(raw)
            if not size or size < min_size:
                continue
            offset = -(-end // ALIGNMENT) * ALIGNMENT if size >= ALIGN_FROM else end
            write(offset, raw)
            end = offset + size
            for field in ("raw_data", "float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
                t.ClearField(field)
            del t.external_data[:]
            for key, value in (("location", location), ("offset", offset), ("length", size)):
                entry = t.external_data.add()
                entry.key, entry.value = key, str(value)
            t.data_location = TensorProto.EXTERNAL

    visit(model.graph)

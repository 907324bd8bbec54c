"""The kinds of models people deploy, built here as ONNX graphs (random weights, real
architectures) or fetched as data from public packages, for benchmarks/suite.py.

Each builder returns (ModelProto or path, feeds).  Graphs are written the way
exporters write them: torch-style Conv with bias and Clip(0, 6) for ReLU6, Sigmoid * x
for SiLU, MatMul + Add + Softmax attention with Reshape/Transpose heads, ai.onnx.ml
operators from skl2onnx.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
LIGHT_NAMES = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet", "squeezenet",
               "vgg19", "zfnet512")


class Graph:
    """A small graph writer: unique names, random initializers, opset 17 by default."""

    def __init__(self, seed: int = 0):
        self.nodes, self.inits, self.n = [], [], 0
        self.rng = np.random.default_rng(seed)

    def name(self, base: str) -> str:
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, value, base: str = "c") -> str:
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, *shape, scale: float | None = None) -> str:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        s = scale if scale is not None else (2.0 / max(fan_in, 1)) ** 0.5
        return self.const((self.rng.standard_normal(shape) * s).astype(np.float32), "w")

    def op(self, op_type: str, inputs: list, n_out: int = 1, domain: str = "", **attrs):
        outs = [self.name(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.name(op_type), domain=domain, **attrs))
        return outs[0] if n_out == 1 else outs

    def conv(self, x: str, c_in: int, c_out: int, k: int = 1, stride: int = 1, group: int = 1) -> str:
        w = self.weight(c_out, c_in // group, k, k)
        b = self.const((self.rng.standard_normal(c_out) * 0.01).astype(np.float32), "b")
        return self.op("Conv", [x, w, b], kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4,
                       group=group)

    def act(self, x: str, kind: str) -> str:
        if kind == "relu6":
            return self.op("Clip", [x, self.const(np.float32(0)), self.const(np.float32(6))])
        if kind == "hardswish":
            return self.op("HardSwish", [x])
        if kind == "silu":
            return self.op("Mul", [x, self.op("Sigmoid", [x])])
        if kind == "relu":
            return self.op("Relu", [x])
        raise ValueError(kind)

    def model(self, inputs, outputs, opset: int = 17, extra_opsets=()) -> onnx.ModelProto:
        g = helper.make_graph(self.nodes, "bench", inputs, outputs, self.inits)
        ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
        return helper.make_model(g, opset_imports=ops, producer_name="mlrt-benchmarks")


def _tensor(name, shape, elem=T.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


# -- mobile CNNs ---------------------------------------------------------------------------------------
def mobilenet_v2(act: str = "relu6", size: int = 224):
    """MobileNetV2 (inverted residuals, depthwise 3x3), BN folded into Conv as torch
    exports it; `act` relu6 (Clip), hardswish or silu (Sigmoid * x)."""
    g = Graph(1)
    x = g.act(g.conv("input", 3, 32, 3, 2), act)
    c = 32
    for t, c_out, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                           (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            stride = s if i == 0 else 1
            h = x
            hidden = c * t
            if t != 1:
                h = g.act(g.conv(h, c, hidden), act)
            h = g.act(g.conv(h, hidden, hidden, 3, stride, group=hidden), act)
            h = g.conv(h, hidden, c_out)
            x = g.op("Add", [x, h]) if stride == 1 and c == c_out else h
            c = c_out
    x = g.act(g.conv(x, c, 1280), act)
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x])])
    y = g.op("Gemm", [x, g.weight(1000, 1280), g.const(np.zeros(1000, np.float32))], transB=1)
    m = g.model([_tensor("input", [1, 3, size, size])], [_tensor(y, [1, 1000])])
    return m, {"input": np.random.default_rng(0).standard_normal((1, 3, size, size)).astype(np.float32)}


def depthwise(channels: int, size: int = 56):
    """One depthwise 3x3 Conv (with bias)."""
    g = Graph(2)
    y = g.conv("x", channels, channels, 3, 1, group=channels)
    m = g.model([_tensor("x", [1, channels, size, size])], [_tensor(y, [1, channels, size, size])])
    return m, {"x": np.random.default_rng(0).standard_normal((1, channels, size, size)).astype(np.float32)}


# -- a YOLO-style detector -----------------------------------------------------------------------------------
def yolo_like(size: int = 320):
    """A YOLOv8-n-like detector: Conv + SiLU stages, C2f blocks (Split, bottlenecks,
    Concat), an SPPF of MaxPools, a top-down neck with Resize (nearest x2) and Concat,
    and a head of 3 scales concatenated into [1, 84, anchors]."""
    g = Graph(3)

    def cbs(x, ci, co, k=1, s=1):
        return g.act(g.conv(x, ci, co, k, s), "silu")

    def c2f(x, ci, co, n):
        y = cbs(x, ci, co)
        a, b = g.op("Split", [y, g.const(np.array([co // 2, co // 2], np.int64))], n_out=2, axis=1)
        parts = [a, b]
        for _ in range(n):
            h = cbs(cbs(parts[-1], co // 2, co // 2, 3), co // 2, co // 2, 3)
            parts.append(g.op("Add", [parts[-1], h]))
        return cbs(g.op("Concat", parts, axis=1), co // 2 * (2 + n), co)

    x = cbs("images", 3, 16, 3, 2)
    x = cbs(x, 16, 32, 3, 2)
    x = c2f(x, 32, 32, 1)
    x = cbs(x, 32, 64, 3, 2)
    p3 = c2f(x, 64, 64, 2)
    x = cbs(p3, 64, 128, 3, 2)
    p4 = c2f(x, 128, 128, 2)
    x = cbs(p4, 128, 256, 3, 2)
    x = c2f(x, 256, 256, 1)
    s = cbs(x, 256, 128)  # SPPF
    m1 = g.op("MaxPool", [s], kernel_shape=[5, 5], pads=[2] * 4)
    m2 = g.op("MaxPool", [m1], kernel_shape=[5, 5], pads=[2] * 4)
    m3 = g.op("MaxPool", [m2], kernel_shape=[5, 5], pads=[2] * 4)
    p5 = cbs(g.op("Concat", [s, m1, m2, m3], axis=1), 512, 256)
    scales = g.const(np.array([1, 1, 2, 2], np.float32))
    up = g.op("Resize", [p5, "", scales], mode="nearest")
    n4 = c2f(g.op("Concat", [up, p4], axis=1), 384, 128, 1)
    up = g.op("Resize", [n4, "", scales], mode="nearest")
    n3 = c2f(g.op("Concat", [up, p3], axis=1), 192, 64, 1)
    heads = []
    for feat, c in ((n3, 64), (n4, 128), (p5, 256)):
        box = g.conv(cbs(cbs(feat, c, 64, 3), 64, 64, 3), 64, 64)
        cls = g.op("Sigmoid", [g.conv(cbs(cbs(feat, c, 80, 3), 80, 80, 3), 80, 80)])
        h = g.op("Concat", [box, cls], axis=1)
        heads.append(g.op("Reshape", [h, g.const(np.array([1, 144, -1], np.int64))]))
    y = g.op("Concat", heads, axis=2)
    m = g.model([_tensor("images", [1, 3, size, size])], [_tensor(y, None)])
    return m, {"images": np.random.default_rng(0).random((1, 3, size, size), np.float32)}


# -- sequence models -------------------------------------------------------------------------------------
def recurrent(kind: str = "LSTM", seq: int = 64, features: int = 64, hidden: int = 128, layers: int = 2):
    """Stacked (bidirectional on the first layer) LSTM or GRU, batch 1, as exporters
    write them (Squeeze/Transpose between layers)."""
    g = Graph(4)
    gates = 4 if kind == "LSTM" else 3
    x, f = "x", features
    for layer in range(layers):
        dirs = 2 if layer == 0 else 1
        w = g.weight(dirs, gates * hidden, f, scale=0.1)
        r = g.weight(dirs, gates * hidden, hidden, scale=0.1)
        b = g.const(np.zeros((dirs, 2 * gates * hidden), np.float32))
        y = g.op(kind, [x, w, r, b], hidden_size=hidden, direction="bidirectional" if dirs == 2 else "forward")
        y = g.op("Transpose", [y], perm=[0, 2, 1, 3])  # [seq, batch, dirs, hidden]
        x = g.op("Reshape", [y, g.const(np.array([seq, 1, dirs * hidden], np.int64))])
        f = dirs * hidden
    m = g.model([_tensor("x", [seq, 1, features])], [_tensor(x, [seq, 1, hidden])])
    return m, {"x": np.random.default_rng(0).standard_normal((seq, 1, features)).astype(np.float32)}


def torch_rnn(kind: str = "LSTM", bidirectional: bool = False, batch: int = 1, seq: int = 32, features: int = 64,
              hidden: int = 128, layers: int = 2, lengths: bool = False):
    """An nn.LSTM / nn.GRU stack as torch.onnx exports it (layout 0): inputs x [seq, batch,
    features] and h0 (and c0 for LSTM) [layers * dirs, batch, hidden], with `lengths` an
    int64 `lengths` [batch] input Cast to int32 sequence_lens (batch 8: lengths from seq
    down to seq / 2); per layer a Slice of h0 / c0 and one node with W, R and B given,
    Squeeze (forward) or Transpose + Reshape (bidirectional) of Y into the next layer;
    outputs y [seq, batch, dirs * hidden] and the final states Concat-ed over the layers."""
    g = Graph(11)
    dirs, gates = (2 if bidirectional else 1), (4 if kind == "LSTM" else 3)
    i64 = lambda *v: g.const(np.array(v, np.int64), "i")  # noqa: E731
    x, f, states = "x", features, {"h0": [], "c0": []}
    lens = g.op("Cast", ["lengths"], to=T.INT32) if lengths else ""
    for layer in range(layers):
        w = g.weight(dirs, gates * hidden, f, scale=1 / hidden ** 0.5)
        r = g.weight(dirs, gates * hidden, hidden, scale=1 / hidden ** 0.5)
        b = g.const((g.rng.uniform(-1, 1, (dirs, 2 * gates * hidden)) / hidden ** 0.5).astype(np.float32), "b")
        init = [g.op("Slice", [s, i64(layer * dirs), i64((layer + 1) * dirs), i64(0)])
                for s in (("h0", "c0") if kind == "LSTM" else ("h0",))]
        outs = g.op(kind, [x, w, r, b, lens, *init], n_out=3 if kind == "LSTM" else 2, hidden_size=hidden,
                    direction="bidirectional" if bidirectional else "forward")
        for name, v in zip(("h0", "c0"), outs[1:]):
            states[name].append(v)
        if bidirectional:
            x = g.op("Reshape", [g.op("Transpose", [outs[0]], perm=[0, 2, 1, 3]), i64(0, 0, -1)])
        else:
            x = g.op("Squeeze", [outs[0], i64(1)])
        f = dirs * hidden
    finals = [g.op("Concat", v, axis=0) for v in states.values() if v]
    inputs = [_tensor("x", [seq, batch, features])]
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((seq, batch, features)).astype(np.float32)}
    for name in ("h0", "c0")[:len(finals)]:
        inputs.append(_tensor(name, [layers * dirs, batch, hidden]))
        feeds[name] = (rng.standard_normal((layers * dirs, batch, hidden)) * 0.1).astype(np.float32)
    if lengths:
        inputs.append(_tensor("lengths", [batch], T.INT64))
        feeds["lengths"] = np.linspace(seq, seq // 2, batch).astype(np.int64)
    m = g.model(inputs, [_tensor(x, [seq, batch, dirs * hidden])]
                + [_tensor(v, [layers * dirs, batch, hidden]) for v in finals])
    return m, feeds


def crnn(width: int = 320):
    """A CNN + BiLSTM text recognizer (CRNN): conv stages over a 32-pixel line, the
    height pooled away, a bidirectional LSTM over the columns, a per-column classifier."""
    g = Graph(5)
    x, c = "image", 1
    for co, pool in ((32, (2, 2)), (64, (2, 2)), (128, (2, 1)), (128, (2, 1))):
        x = g.act(g.conv(x, c, co, 3), "relu")
        x = g.op("MaxPool", [x], kernel_shape=list(pool), strides=list(pool))
        c = co
    x = g.op("ReduceMean", [x], axes=[2], keepdims=0)          # [1, 128, W/4]
    x = g.op("Transpose", [x], perm=[2, 0, 1])                  # [W/4, 1, 128]
    hidden = 96
    y = g.op("LSTM", [x, g.weight(2, 4 * hidden, c, scale=0.1), g.weight(2, 4 * hidden, hidden, scale=0.1),
                      g.const(np.zeros((2, 8 * hidden), np.float32))], hidden_size=hidden, direction="bidirectional")
    y = g.op("Reshape", [g.op("Transpose", [y], perm=[0, 2, 1, 3]), g.const(np.array([-1, 2 * hidden], np.int64))])
    logits = g.op("Gemm", [y, g.weight(6625, 2 * hidden), g.const(np.zeros(6625, np.float32))], transB=1)
    out = g.op("Softmax", [logits], axis=-1)
    m = g.model([_tensor("image", [1, 1, 32, width])], [_tensor(out, None)])
    return m, {"image": np.random.default_rng(0).random((1, 1, 32, width), np.float32)}


def streaming_vad(chunk: int = 512, hidden: int = 64):
    """A voice-activity model in the shape of Silero VAD: an If on the sample rate picks
    one of two branches, each a Conv1d front end and an LSTM step carrying (h, c) state
    in and out, then a Sigmoid probability."""
    def branch(seed: int, stride: int) -> onnx.GraphProto:
        g = Graph(seed)
        x = g.op("Unsqueeze", ["audio", g.const(np.array([1], np.int64))])           # [1, 1, chunk]
        w = g.weight(hidden, 1, 16, scale=0.2)
        f = g.op("Relu", [g.op("Conv", [x, w], kernel_shape=[16], strides=[stride])])  # [1, hidden, steps]
        f = g.op("Transpose", [f], perm=[2, 0, 1])                                     # [steps, 1, hidden]
        y, h, c = g.op("LSTM", [f, g.weight(1, 4 * hidden, hidden, scale=0.1), g.weight(1, 4 * hidden, hidden, scale=0.1),
                                g.const(np.zeros((1, 8 * hidden), np.float32)), "", "h0", "c0"],
                       n_out=3, hidden_size=hidden)
        p = g.op("Sigmoid", [g.op("MatMul", [g.op("ReduceMean", [h], axes=[0], keepdims=0),
                                               g.weight(hidden, 1, scale=0.1)])])
        outs = []
        for name, v in (("prob", p), ("hn", h), ("cn", c)):
            g.nodes.append(helper.make_node("Identity", [v], [f"{name}_{seed}"]))
            outs.append(_tensor(f"{name}_{seed}", None))
        return helper.make_graph(g.nodes, f"branch{seed}", [], outs, g.inits)
    g = Graph(6)
    is16k = g.op("Equal", ["sr", g.const(np.array(16000, np.int64))])
    prob, hn, cn = g.op("If", [is16k], n_out=3, then_branch=branch(7, 8), else_branch=branch(8, 4))
    m = g.model([_tensor("audio", [1, chunk]), _tensor("sr", [], T.INT64), _tensor("h0", [1, 1, hidden]),
                 _tensor("c0", [1, 1, hidden])], [_tensor(prob, None), _tensor(hn, None), _tensor(cn, None)])
    rng = np.random.default_rng(0)
    return m, {"audio": rng.standard_normal((1, chunk)).astype(np.float32), "sr": np.array(16000, np.int64),
               "h0": np.zeros((1, 1, hidden), np.float32), "c0": np.zeros((1, 1, hidden), np.float32)}


def silero_vad_like(wrapped: bool = True, batch: int = 1, samples: int = 512):
    """Silero-VAD-shaped (v5): inputs `input` [batch, samples], `sr` (int64 scalar) and
    `state` [2, batch, 128] (LSTM h and c, carried between calls), outputs `output`
    [batch, 1] and `stateN`.  Wrapped, the whole network sits in an If on sr == 16000
    (the else branch a smaller 8 kHz variant), as the exported model has it; unwrapped
    (`wrapped=False`), the 16 kHz network alone, with no `sr` input.  Each network is a
    reflect Pad and a Conv whose fixed kernel is a windowed DFT (the STFT), magnitude
    by Mul/Add/Sqrt, four Conv1d+Relu encoder layers (two with stride 2), an LSTM cell
    of MatMul + Sigmoid/Tanh gates on the last frame, a Conv1d + Sigmoid decoder and a
    ReduceMean -- batch and sequence sizes read through Shape -> Gather -> Unsqueeze ->
    Concat / Slice, as torch exports them, so the dims stay symbolic; wrapped, the
    input's batch and sample counts are read once before the If and used by both
    branches (a branch reading enclosing values as shapes), small constants are
    Constant nodes (about 70 nodes a branch)."""
    def dims(g: Graph) -> tuple[str, str]:
        """batch and samples as [1] int64 tensors, read from the input's shape"""
        shape = g.op("Shape", ["input"])
        return tuple(g.op("Unsqueeze", [g.op("Gather", [shape, constant(g, np.array(k, np.int64))], axis=0),
                                        constant(g, np.array([0], np.int64))]) for k in (0, 1))

    def constant(g: Graph, value) -> str:  # small constants as Constant nodes, as torch writes them
        return g.op("Constant", [], value=numpy_helper.from_array(value))

    def network(g: Graph, n_fft: int, hop: int, widths, b: str, n: str) -> tuple[str, str]:
        i64 = lambda *v: constant(g, np.array(v, np.int64))  # noqa: E731
        scalar = lambda v: constant(g, np.array(v, np.int64))  # noqa: E731
        x = g.op("Reshape", ["input", g.op("Concat", [b, i64(1), n], axis=0)])               # [B, 1, N]
        pad = n_fft // 4
        x = g.op("Pad", [x, i64(0, 0, 0, 0, 0, pad)], mode="reflect")                        # [B, 1, N + pad]
        f = n_fft // 2 + 1
        k, t = np.arange(f)[:, None], np.arange(n_fft)[None, :]
        window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft))[None, :]
        basis = np.concatenate([np.cos(2 * np.pi * k * t / n_fft) * window,
                                -np.sin(2 * np.pi * k * t / n_fft) * window])[:, None, :].astype(np.float32)
        spec = g.op("Conv", [x, g.const(basis, "stft")], kernel_shape=[n_fft], strides=[hop])  # [B, 2F, T]
        re_ = g.op("Slice", [spec, i64(0), i64(f), i64(1)])
        im = g.op("Slice", [spec, i64(f), i64(2 * f), i64(1)])
        x = g.op("Sqrt", [g.op("Add", [g.op("Mul", [re_, re_]), g.op("Mul", [im, im])])])    # [B, F, T]
        c = f
        for co, stride in widths:
            w = g.weight(co, c, 3, scale=(1.0 / (3 * c)) ** 0.5)
            bias = g.const((g.rng.standard_normal(co) * 0.01).astype(np.float32), "b")
            x = g.op("Relu", [g.op("Conv", [x, w, bias], kernel_shape=[3], strides=[stride], pads=[1, 1])])
            c = co
        steps = g.op("Gather", [g.op("Shape", [x]), i64(2)], axis=0)                      # T'
        last = g.op("Slice", [x, g.op("Sub", [steps, i64(1)]), steps, i64(2)])             # [B, 128, 1]
        hidden = 128
        b2 = g.op("Gather", [g.op("Shape", [last]), i64(0)], axis=0)
        feat = g.op("Reshape", [last, g.op("Concat", [b2, i64(hidden)], axis=0)])          # [B, 128]
        h = g.op("Gather", ["state", scalar(0)], axis=0)                                   # [B, 128]
        cell = g.op("Gather", ["state", scalar(1)], axis=0)
        gates = g.op("Add", [g.op("Add", [g.op("MatMul", [feat, g.weight(hidden, 4 * hidden, scale=0.1)]),
                                           g.op("MatMul", [h, g.weight(hidden, 4 * hidden, scale=0.1)])]),
                             g.const((g.rng.standard_normal(4 * hidden) * 0.01).astype(np.float32), "b")])
        gi, gf, gg, go = g.op("Split", [gates, i64(hidden, hidden, hidden, hidden)], n_out=4, axis=1)
        cell = g.op("Add", [g.op("Mul", [g.op("Sigmoid", [gf]), cell]),
                            g.op("Mul", [g.op("Sigmoid", [gi]), g.op("Tanh", [gg])])])
        h = g.op("Mul", [g.op("Sigmoid", [go]), g.op("Tanh", [cell])])
        state = g.op("Concat", [g.op("Unsqueeze", [h, i64(0)]), g.op("Unsqueeze", [cell, i64(0)])], axis=0)
        y = g.op("Unsqueeze", [g.op("Relu", [h]), i64(2)])                                  # [B, 128, 1]
        y = g.op("Sigmoid", [g.op("Conv", [y, g.weight(1, hidden, 1, scale=0.1), g.const(np.zeros(1, np.float32))],
                                  kernel_shape=[1])])
        y = g.op("ReduceMean", [y], axes=[2], keepdims=0)                                   # [B, 1]
        return y, state

    class Prefixed(Graph):
        def __init__(self, seed, prefix):
            super().__init__(seed)
            self.prefix = prefix

        def name(self, base):
            return self.prefix + super().name(base)

    big = (256, 128, ((128, 1), (64, 2), (64, 2), (128, 1)))
    small = (128, 64, ((128, 1), (64, 2), (128, 1)))
    rng = np.random.default_rng(0)
    feeds = {"input": (rng.standard_normal((batch, samples)) * 0.1).astype(np.float32),
             "state": np.zeros((2, batch, 128), np.float32)}
    ins = [_tensor("input", ["batch", "samples"]), _tensor("state", [2, "batch", 128])]
    outs = [_tensor("output", ["batch", 1]), _tensor("stateN", [2, "batch", 128])]
    if not wrapped:
        g = Prefixed(11, "")
        y, state = network(g, *big, *dims(g))
        g.nodes += [helper.make_node("Identity", [y], ["output"]), helper.make_node("Identity", [state], ["stateN"])]
        return g.model(ins, outs), feeds
    top = Prefixed(13, "top_")
    batch_dim, samples_dim = dims(top)  # read once before the If, as exporters hoist what both branches use
    branches = []
    for seed, prefix, spec in ((11, "", big), (12, "else_", small)):
        g = Prefixed(seed, prefix)
        y, state = network(g, *spec, batch_dim, samples_dim)
        g.nodes += [helper.make_node("Identity", [y], [prefix + "out"]),
                    helper.make_node("Identity", [state], [prefix + "state_out"])]
        branches.append(helper.make_graph(g.nodes, prefix + "branch", [], [
            _tensor(prefix + "out", None), _tensor(prefix + "state_out", None)], g.inits))
    g = top
    is16k = g.op("Equal", ["sr", g.const(np.array(16000, np.int64))])
    g.nodes.append(helper.make_node("If", [is16k], ["output", "stateN"], name="If_sr",
                                    then_branch=branches[0], else_branch=branches[1]))
    feeds["sr"] = np.array(16000, np.int64)
    return g.model(ins[:1] + [_tensor("sr", [], T.INT64)] + ins[1:], outs), feeds


def byte_conv1d(length: int = 4096, embed: int = 64, channels: int = 256, kernel: int = 4, classes: int = 16):
    """A byte-level file classifier (MalConv-style): `input` [1, length] int64 bytes, a
    Gather embedding (257 x embed, the last row padding), Transpose to [1, embed, length],
    Conv1d with kernel = stride (non-overlapping windows) + Relu, a second Conv1d (kernel
    3, stride 1, padded) + Relu over the length / kernel positions, GlobalMaxPool over
    them, Flatten, Gemm to `classes` and Softmax."""
    g = Graph(14)
    table = g.const((g.rng.standard_normal((257, embed)) * 0.5).astype(np.float32), "embed")
    x = g.op("Transpose", [g.op("Gather", [table, "input"], axis=0)], perm=[0, 2, 1])       # [1, E, L]
    for c_in, c_out, k, stride, pad in ((embed, channels, kernel, kernel, 0), (channels, channels, 3, 1, 1)):
        w, b = g.weight(c_out, c_in, k), g.const((g.rng.standard_normal(c_out) * 0.01).astype(np.float32), "b")
        x = g.op("Relu", [g.op("Conv", [x, w, b], kernel_shape=[k], strides=[stride], pads=[pad, pad])])
    x = g.op("Flatten", [g.op("GlobalMaxPool", [x])])                                       # [1, C]
    logits = g.op("Gemm", [x, g.weight(classes, channels), g.const(np.zeros(classes, np.float32))], transB=1)
    out = g.op("Softmax", [logits], axis=-1)
    m = g.model([_tensor("input", [1, length], T.INT64)], [_tensor(out, [1, classes])])
    return m, {"input": np.random.default_rng(0).integers(0, 256, (1, length)).astype(np.int64)}


def bert_encoder(seq: int = 128, hidden: int = 256, heads: int = 4, layers: int = 4, vocab: int = 30522):
    """A BERT-style encoder as exported: Gather embeddings, then per layer Q/K/V MatMul +
    Add, Reshape/Transpose heads, scaled MatMul + mask Add + Softmax, output MatMul,
    residual Add + LayerNormalization, an Erf-GELU feed-forward."""
    g = Graph(9)
    d = hidden // heads
    x = g.op("Add", [g.op("Gather", [g.weight(vocab, hidden, scale=0.02), "input_ids"]),
                     g.weight(1, seq, hidden, scale=0.02)])
    ln = lambda v: g.op("LayerNormalization", [v, g.const(np.ones(hidden, np.float32)),  # noqa: E731
                                               g.const(np.zeros(hidden, np.float32))], axis=-1, epsilon=1e-12)
    x = ln(x)
    mask = g.op("Mul", [g.op("Sub", [g.const(np.float32(1)), g.op("Cast", [g.op("Unsqueeze", [
        "attention_mask", g.const(np.array([1, 2], np.int64))])], to=T.FLOAT)]), g.const(np.float32(-10000))])
    split = g.const(np.array([1, seq, heads, d], np.int64))
    for _ in range(layers):
        def proj(v, n_out=hidden, n_in=hidden):
            return g.op("Add", [g.op("MatMul", [v, g.weight(n_in, n_out, scale=0.05)]),
                                g.const(np.zeros(n_out, np.float32))])
        q, k, v = (g.op("Transpose", [g.op("Reshape", [proj(x), split])], perm=p)
                   for p in ([0, 2, 1, 3], [0, 2, 3, 1], [0, 2, 1, 3]))
        s = g.op("Add", [g.op("Div", [g.op("MatMul", [q, k]), g.const(np.float32(d ** 0.5))]), mask])
        a = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
        a = g.op("Reshape", [g.op("Transpose", [a], perm=[0, 2, 1, 3]), g.const(np.array([1, seq, hidden], np.int64))])
        x = ln(g.op("Add", [x, proj(a)]))
        h = proj(x, 4 * hidden)
        gelu = g.op("Mul", [g.op("Mul", [h, g.op("Add", [g.op("Erf", [g.op("Div", [h, g.const(np.float32(2 ** 0.5))])]),
                                                         g.const(np.float32(1))])]), g.const(np.float32(0.5))])
        x = ln(g.op("Add", [x, proj(gelu, hidden, 4 * hidden)]))
    m = g.model([_tensor("input_ids", [1, seq], T.INT64), _tensor("attention_mask", [1, seq], T.INT64)],
                [_tensor(x, [1, seq, hidden])])
    rng = np.random.default_rng(0)
    return m, {"input_ids": rng.integers(0, vocab, (1, seq)).astype(np.int64),
               "attention_mask": np.ones((1, seq), np.int64)}


# -- scikit-learn through skl2onnx ---------------------------------------------------------------------
def sklearn_models():
    """{name: (model, feeds)} for trees, an SVM, linear models and a pipeline, converted
    by skl2onnx (zipmap off, as deployments use it); {} when scikit-learn or skl2onnx
    is not installed (pip install scikit-learn skl2onnx)."""
    try:
        from skl2onnx import to_onnx
        from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
        from sklearn.linear_model import LinearRegression, LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.svm import SVC
    except ImportError:
        return {}
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 20)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(np.int64)
    estimators = {"sk_random_forest": RandomForestClassifier(50, max_depth=8, random_state=0),
                  "sk_gradient_boosting": GradientBoostingClassifier(n_estimators=50, random_state=0),
                  "sk_svc": SVC(probability=True, random_state=0),
                  "sk_logistic": LogisticRegression(max_iter=500),
                  "sk_linear": LinearRegression(),
                  "sk_pipeline": make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))}
    out = {}
    for name, est in estimators.items():
        est.fit(X, y.astype(np.float32) if name == "sk_linear" else y)
        options = None if name == "sk_linear" else {id(est): {"zipmap": False}}
        if name == "sk_pipeline":
            options = {id(est.steps[-1][1]): {"zipmap": False}}
        out[name] = (to_onnx(est, X[:1], options=options, target_opset={"": 17, "ai.onnx.ml": 3}), {"X": X[:1]})
    return out


def sklearn_string_models():
    """{name: (model, feeds)} for scikit-learn pipelines over a table with string columns,
    converted by skl2onnx with one input per column ([N, 1] float or string), batch 1:
    a ColumnTransformer (SimpleImputer + StandardScaler on the numbers, OneHotEncoder on
    the strings, an OrdinalEncoder -- skl2onnx's LabelEncoder -- for the linear SVM) in
    front of LogisticRegression, LinearSVC, SVC (RBF) without and with probabilities
    (string class labels); zipmap off; {} without scikit-learn, pandas or skl2onnx."""
    try:
        import pandas as pd
        from skl2onnx import to_onnx
        from skl2onnx.common.data_types import FloatTensorType, StringTensorType
        from sklearn.compose import ColumnTransformer
        from sklearn.impute import SimpleImputer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import Pipeline, make_pipeline
        from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler
        from sklearn.svm import SVC, LinearSVC
    except ImportError:
        return {}
    import warnings
    rng = np.random.default_rng(0)
    n, numeric = 400, [f"n{i}" for i in range(6)]
    cats = {"color": ["red", "green", "blue", "black", "white"], "city": ["paris", "tokyo", "lima", "oslo", "cairo",
            "perth", "quito", "delhi"], "plan": ["free", "basic", "pro"]}
    table = pd.DataFrame(rng.standard_normal((n, len(numeric))).astype(np.float32), columns=numeric)
    table = table.mask(rng.random(table.shape) < 0.05)  # missing values for the imputer
    for k, v in cats.items():
        table[k] = rng.choice(v, n)
    y = ((table["n0"].fillna(0) + (table["color"] == "red") - (table["plan"] == "free")) > 0.2).astype(np.int64)
    labels = np.where(y, "churn", "stay")

    def pipeline(clf, ordinal=False):
        numbers = make_pipeline(SimpleImputer(), StandardScaler())
        parts = [("num", numbers, numeric), ("cat", OneHotEncoder(handle_unknown="ignore"), list(cats)[:2])]
        parts.append(("ord", OrdinalEncoder(), ["plan"]) if ordinal else ("plan", OneHotEncoder(), ["plan"]))
        return Pipeline([("pre", ColumnTransformer(parts)), ("clf", clf)])

    estimators = {"sk_str_logistic": (pipeline(LogisticRegression(max_iter=500)), y),
                  "sk_str_linearsvc": (pipeline(LinearSVC(), ordinal=True), y),
                  "sk_str_svc_rbf": (pipeline(SVC()), y),
                  "sk_str_svc_rbf_proba": (pipeline(SVC(probability=True, random_state=0)), labels)}
    types = [(c, FloatTensorType([None, 1])) for c in numeric] + [(c, StringTensorType([None, 1])) for c in cats]
    row = table.iloc[:1]
    feeds = {c: row[c].to_numpy(np.float32).reshape(1, 1) for c in numeric}
    feeds["n1"] = np.array([[np.nan]], np.float32)  # one missing value, imputed
    feeds.update({c: row[c].to_numpy(object).reshape(1, 1) for c in cats})
    out = {}
    for name, (est, target) in estimators.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SVC(probability=True) is deprecated from 1.9
            est.fit(table, target)
            clf = est.steps[-1][1]
            # (a LinearSVC in a Pipeline needs an option of its own named, or skl2onnx asks it for zipmap)
            options = {id(clf): {"raw_scores": False} if isinstance(clf, LinearSVC) else {"zipmap": False}}
            out[name] = (to_onnx(est, initial_types=types, options=options,
                                 target_opset={"": 17, "ai.onnx.ml": 3}), dict(feeds))
    return out


# -- fetched: PP-OCRv4 ----------------------------------------------------------------------------------
def ppocr(part: str):
    """PP-OCRv4 detection ("det", a 640x640 page) or recognition ("rec", one 48x320
    line), fetched by samples/ocr_models.py from the rapidocr-onnxruntime wheel."""
    sys.path.insert(0, str(ROOT / "samples"))
    import ocr_models
    path = ocr_models.fetch(part)
    rng = np.random.default_rng(0)
    shape = (1, 3, 640, 640) if part == "det" else (1, 3, 48, 320)
    return str(path), {"x": rng.random(shape, np.float32)}


def light(name: str):
    path = LIGHT / f"light_{name}.onnx"
    m = onnx.load(str(path))
    feeds = {}
    inits = {i.name for i in m.graph.initializer}
    for inp in m.graph.input:
        if inp.name in inits:
            continue
        shape = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
        feeds[inp.name] = np.random.default_rng(0).random(shape, np.float32)
    return str(path), feeds


def tiny_add():
    """One Add on [1, 4]: the per-run overhead."""
    g = Graph(10)
    y = g.op("Add", ["a", "b"])
    m = g.model([_tensor("a", [1, 4]), _tensor("b", [1, 4])], [_tensor(y, [1, 4])])
    return m, {"a": np.ones((1, 4), np.float32), "b": np.ones((1, 4), np.float32)}


def wakeword_models(heads: int = 6):
    """Several small models called in turn per 80 ms of audio, as a wake-word app calls
    them: a spectrogram front end (framing MatMuls, power, mel MatMul, log), a small
    convolutional embedding of the last 76 mel frames, and `heads` keyword heads (Gemm,
    LayerNormalization, Relu, Gemm, Sigmoid) on the last 16 embeddings.  Returns a list of
    (model, feeds): the suite runs them one after the other as one entry (the per-call
    overhead of several sessions in one process)."""
    rng = np.random.default_rng(11)
    out = []
    # front end: 1280 samples -> 8 frames of 160 hop, 400 window (framed by a MatMul on a
    # [1, 8, 400] view made by Slice/Concat as exporters do), power spectrum, 32 mel bands
    g = Graph(20)
    frames = [g.op("Slice", ["audio", g.const(np.array([i * 110], np.int64)), g.const(np.array([i * 110 + 400], np.int64)),
                             g.const(np.array([1], np.int64))]) for i in range(8)]
    x = g.op("Reshape", [g.op("Concat", frames, axis=1), g.const(np.array([1, 8, 400], np.int64))])
    re, im = g.op("MatMul", [x, g.weight(400, 257)]), g.op("MatMul", [x, g.weight(400, 257)])
    power = g.op("Add", [g.op("Mul", [re, re]), g.op("Mul", [im, im])])
    mel = g.op("MatMul", [power, g.const(np.abs(rng.standard_normal((257, 32))).astype(np.float32) * 0.05, "mel")])
    y = g.op("Log", [g.op("Clip", [mel, g.const(np.float32(1e-10)), g.const(np.float32(1e10))])])
    out.append((g.model([_tensor("audio", [1, 1280])], [_tensor(y, [1, 8, 32])]),
                {"audio": rng.standard_normal((1, 1280)).astype(np.float32)}))
    # embedding: [1, 1, 76, 32] mel frames -> 96 features
    g = Graph(21)
    h = g.act(g.conv("mel", 1, 16, 3), "relu")
    h = g.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = g.act(g.conv(h, 16, 32, 3), "relu")
    h = g.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = g.act(g.conv(h, 32, 32, 3), "relu")
    h = g.op("ReduceMean", [h], axes=[2, 3], keepdims=0)
    y = g.op("Gemm", [h, g.weight(96, 32), g.const(np.zeros(96, np.float32))], transB=1)
    out.append((g.model([_tensor("mel", [1, 1, 76, 32])], [_tensor(y, [1, 96])]),
                {"mel": rng.standard_normal((1, 1, 76, 32)).astype(np.float32)}))
    # keyword heads: [1, 16, 96] embeddings -> one score each
    for k in range(heads):
        g = Graph(30 + k)
        h = g.op("Flatten", ["emb"], axis=1)
        h = g.op("Gemm", [h, g.weight(128, 16 * 96), g.const(np.zeros(128, np.float32))], transB=1)
        h = g.op("LayerNormalization", [h, g.const(np.ones(128, np.float32)), g.const(np.zeros(128, np.float32))],
                 axis=-1)
        h = g.op("Relu", [h])
        y = g.op("Sigmoid", [g.op("Gemm", [h, g.weight(1, 128), g.const(np.zeros(1, np.float32))], transB=1)])
        out.append((g.model([_tensor("emb", [1, 16, 96])], [_tensor(y, [1, 1])]),
                    {"emb": rng.standard_normal((1, 16, 96)).astype(np.float32)}))
    return out


def _int8_models() -> dict:
    """MobileNetV2 and ResNet-18, float beside their int8 forms (onnxruntime.quantization:
    QOperator, QDQ, dynamic), and the BERT-style encoder beside its quantize_dynamic form
    (benchmarks/quantized.py, imported when built: it imports this)."""
    def make(name, kind):
        import quantized
        return quantized.built(name, kind)
    kinds = {"mobilenet_v2": ("float", "qoperator", "qdq", "dynamic"), "resnet18": ("float", "qoperator", "qdq", "dynamic"),
             "bert": ("float", "dynamic")}
    return {f"{name}_{kind}": (lambda name=name, kind=kind: make(name, kind)) for name, ks in kinds.items() for kind in ks}


def suite(groups=None) -> dict[str, dict[str, object]]:
    """{group: {model name: builder()}}, builders called lazily by the suite."""
    table = {
        "light": {f"light_{n}": (lambda n=n: light(n)) for n in LIGHT_NAMES},
        "mobile": {"mobilenet_v2_relu6": lambda: mobilenet_v2("relu6"),
                   "mobilenet_v2_hardswish": lambda: mobilenet_v2("hardswish"),
                   "mobilenet_v2_silu": lambda: mobilenet_v2("silu"),
                   **{f"depthwise3x3_c{c}": (lambda c=c: depthwise(c)) for c in (32, 96, 384)}},
        "detector": {"yolo_like_320": lambda: yolo_like(320)},
        "ocr": {"ppocr_v4_det": lambda: ppocr("det"), "ppocr_v4_rec": lambda: ppocr("rec"),
                "crnn_lstm": crnn},
        "sequence": {"lstm_2layer": lambda: recurrent("LSTM"), "gru_2layer": lambda: recurrent("GRU"),
                     "lstm_torch_b1": lambda: torch_rnn("LSTM"),
                     "lstm_torch_bidi_lens_b1": lambda: torch_rnn("LSTM", True, lengths=True),
                     "lstm_torch_bidi_lens_b8": lambda: torch_rnn("LSTM", True, batch=8, lengths=True),
                     "lstm_torch_s8_h64_b1": lambda: torch_rnn("LSTM", seq=8, features=32, hidden=64),
                     "lstm_torch_h256_b8": lambda: torch_rnn("LSTM", batch=8, seq=64, features=128, hidden=256,
                                                             layers=1),
                     "gru_torch_b1": lambda: torch_rnn("GRU", seq=16, features=32, hidden=64),
                     "gru_torch_bidi_lens_b8": lambda: torch_rnn("GRU", True, batch=8, lengths=True),
                     "gru_torch_h256_b1": lambda: torch_rnn("GRU", seq=64, features=128, hidden=256, layers=1),
                     "vad_if_lstm": streaming_vad, "vad_silero_if": silero_vad_like},
        "longconv": {"byte_conv1d_4096": byte_conv1d,
                     "byte_conv1d_16384_c128": lambda: byte_conv1d(16384, channels=128),
                     "byte_conv1d_8192_k8_c512": lambda: byte_conv1d(8192, channels=512, kernel=8)},
        "transformer": {"bert_encoder_seq128": bert_encoder},
        "int8": _int8_models(),
        "sklearn": "sklearn",
        "overhead": {"add_1x4": tiny_add, "wakeword_8_models": wakeword_models},
    }
    out = {}
    for group, models in table.items():
        if groups and group not in groups:
            continue
        if models == "sklearn":
            built = {**sklearn_models(), **sklearn_string_models()}
            models = {name: (lambda v=v: v) for name, v in built.items()}
        out[group] = models
    return out

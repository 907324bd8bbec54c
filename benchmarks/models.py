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
                     "vad_if_lstm": streaming_vad},
        "transformer": {"bert_encoder_seq128": bert_encoder},
        "sklearn": "sklearn",
        "overhead": {"add_1x4": tiny_add},
    }
    out = {}
    for group, models in table.items():
        if groups and group not in groups:
            continue
        if models == "sklearn":
            built = sklearn_models()
            models = {name: (lambda v=v: v) for name, v in built.items()}
        out[group] = models
    return out

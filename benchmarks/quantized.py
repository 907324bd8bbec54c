"""Integer-quantized CNNs: mlrt against onnxruntime, and mlrt int8 against mlrt float32.

    python benchmarks/quantized.py [--models mobilenet_v2,resnet18] [--kinds qoperator,qdq,dynamic]
                                   [--runs 20] [--rounds 3] [--threads 2] [--inputs 16]

Float models come from builders (MobileNetV2 from benchmarks/models.py, a ResNet-18
written here); onnxruntime.quantization makes the quantized ones: `qoperator` and `qdq`
by quantize_static (a CalibrationDataReader over random images; uint8 activations,
the type onnxruntime's x64 kernels are fast on, or int8 with `--activations s8`, its
default; int8 weights per tensor), `dynamic` by
quantize_dynamic (DynamicQuantizeLinear + ConvInteger / MatMulInteger).

Each round times, one after the other, a block of runs of: mlrt on the quantized model,
onnxruntime on it (default options), mlrt on the float model.  Prints the medians of
the per-round times and their ratios (and the ratios of the best rounds, which a
neighbour's load on a shared host disturbs less), and how many of `--inputs` random
images give the same top-1 class in mlrt and onnxruntime (and how many give bit-equal
outputs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))

import models  # noqa: E402

import mlrt.lowlevel as ml  # noqa: E402


def resnet18(size: int = 224):
    """ResNet-18: 7 x 7 stem, max pool, four stages of two basic blocks (3 x 3 convs,
    1 x 1 projection shortcuts where the shape changes), BN folded, global average
    pool, a 1000-way Gemm."""
    g = models.Graph(3)
    x = g.act(g.conv("input", 3, 64, 7, 2), "relu")
    x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = 64
    for c_out, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for i in range(2):
            s = stride if i == 0 else 1
            h = g.act(g.conv(x, c, c_out, 3, s), "relu")
            h = g.conv(h, c_out, c_out, 3, 1)
            short = g.conv(x, c, c_out, 1, s) if (s != 1 or c != c_out) else x
            x = g.act(g.op("Add", [h, short]), "relu")
            c = c_out
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x])])
    y = g.op("Gemm", [x, g.weight(1000, 512), g.const(np.zeros(1000, np.float32))], transB=1)
    m = g.model([models._tensor("input", [1, 3, size, size])], [models._tensor(y, [1, 1000])])
    return m, {"input": np.random.default_rng(0).standard_normal((1, 3, size, size)).astype(np.float32)}


BUILDERS = {"mobilenet_v2": lambda: models.mobilenet_v2("relu6"), "resnet18": resnet18,
            "bert": models.bert_encoder}  # (bert: dynamic only, as transformers are quantized)


def images(n: int, seed: int, shape) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]


def quantize(model: onnx.ModelProto, kind: str, shape, folder: Path, activations: str,
             calibration: int = 8) -> onnx.ModelProto:
    """`model` quantized by onnxruntime.quantization as `kind` (qoperator, qdq, dynamic),
    the static kinds calibrated on `calibration` random images."""
    from onnxruntime import quantization as q

    src, dst = folder / "float.onnx", folder / f"{kind}.onnx"
    onnx.save(model, src)
    if kind == "dynamic":
        q.quantize_dynamic(str(src), str(dst))
        return onnx.load(dst)

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            self.feeds = iter([{"input": x} for x in images(calibration, 123, shape)])

        def get_next(self):
            return next(self.feeds, None)

    fmt = q.QuantFormat.QOperator if kind == "qoperator" else q.QuantFormat.QDQ
    act = q.QuantType.QUInt8 if activations == "u8" else q.QuantType.QInt8
    q.quantize_static(str(src), str(dst), Reader(), quant_format=fmt, activation_type=act,
                      weight_type=q.QuantType.QInt8)
    return onnx.load(dst)


def built(name: str, kind: str):
    """(model, feeds) of BUILDERS' `name` as float (`kind` "float") or quantized as `kind`
    (u8 activations, 4 calibration images: quick): the suite's int8 group."""
    model, feeds = BUILDERS[name]()
    if kind == "float":
        return model, feeds
    with tempfile.TemporaryDirectory() as tmp:
        shape = feeds["input"].shape if kind != "dynamic" else None
        return quantize(model, kind, shape, Path(tmp), "u8", calibration=4), feeds


def block(run, feeds, runs: int) -> float:
    run(feeds)
    t = time.perf_counter()
    for _ in range(runs):
        run(feeds)
    return (time.perf_counter() - t) / runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="mobilenet_v2,resnet18")
    ap.add_argument("--kinds", default="qoperator,qdq,dynamic")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--inputs", type=int, default=16)
    ap.add_argument("--activations", default="u8", choices=("u8", "s8"),
                    help="static quantization's activation type (u8: onnxruntime's fast x64 path; s8: its default)")
    args = ap.parse_args()
    import onnxruntime as ort

    for name in args.models.split(","):
        fmodel, feeds = BUILDERS[name]()
        shape = feeds["input"].shape if "input" in feeds else None  # (bert: token ids, dynamic only)
        opts = ml.SessionOptions()
        opts.intra_op_num_threads = args.threads
        f_mlrt = ml.InferenceSession(fmodel.SerializeToString(), opts)
        for kind in args.kinds.split(","):
            if shape is None and kind != "dynamic":
                continue
            with tempfile.TemporaryDirectory() as tmp:
                qmodel = quantize(fmodel, kind, shape, Path(tmp), args.activations)
            data = qmodel.SerializeToString()
            q_mlrt = ml.InferenceSession(data, opts)
            so = ort.SessionOptions()
            so.intra_op_num_threads = args.threads
            q_ort = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
            agree = equal = 0
            samples = [{"input": x} for x in images(args.inputs, 7, shape)] if shape else [feeds] * args.inputs
            for f in samples:
                a = q_mlrt.run(None, f)[0]
                b = q_ort.run(None, f)[0]
                agree += int(np.argmax(a) == np.argmax(b))
                equal += int(np.array_equal(a, b))
            t_q, t_o, t_f = [], [], []
            for _ in range(args.rounds):
                t_q.append(block(lambda f: q_mlrt.run(None, f), feeds, args.runs))
                t_o.append(block(lambda f: q_ort.run(None, f), feeds, args.runs))
                t_f.append(block(lambda f: f_mlrt.run(None, f), feeds, args.runs))
            mq, mo, mf = (statistics.median(t) * 1e3 for t in (t_q, t_o, t_f))
            bq, bo, bf = (min(t) * 1e3 for t in (t_q, t_o, t_f))
            print(f"{name:13s} {kind:9s} mlrt int8 {mq:8.2f} ms  onnxruntime {mo:8.2f} ms  mlrt float {mf:8.2f} ms  "
                  f"mlrt/ort {mq / mo:6.2f} (best {bq / bo:5.2f})  int8/float {mq / mf:5.2f} (best {bq / bf:5.2f})  "
                  f"top-1 agree {agree}/{args.inputs}  bit-equal {equal}/{args.inputs}", flush=True)


if __name__ == "__main__":
    main()

"""A model's latency against its compute-bound time on this machine.

    python benchmarks/compute_bound.py [--models light_resnet50] [--rounds 5] [--runs 20]
                                       [--threads 2] [--pause 1]

The compute-bound time is the model's multiply-add FLOPs (Conv, ConvTranspose, Gemm,
MatMul; shapes from onnx shape inference) over the float32 GEMM rate numpy reaches on
the same cores (square products of 1024, 2048 and 3072, the best of a few each).

Each round measures, one after the other with a pause between: numpy's GEMM rate, a
block of mlrt runs, a block of onnxruntime runs (its default options, spinning workers)
-- so a neighbour's load on a shared host weighs on the three alike.  Prints each
round's figures, then the medians of the per-round ratios latency / compute-bound.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))

import models  # noqa: E402

import mlrt.lowlevel as ml  # noqa: E402

GEMM_SIZES = (1024, 2048, 3072)
GROUPS = ["light", "mobile", "detector", "ocr", "sequence", "transformer", "overhead"]


def _dims(value_info) -> list[int] | None:
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    dims = [d.dim_value if d.HasField("dim_value") else 0 for d in t.shape.dim]
    return dims if all(d > 0 for d in dims) else None


def model_flops(model: onnx.ModelProto) -> float:
    """Multiply-add FLOPs (2 per multiply-add) of the model's Conv, ConvTranspose, Gemm
    and MatMul nodes at the shapes its inputs declare (symbolic dimensions as 1)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    inits = {i.name for i in model.graph.initializer}
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        for d in inp.type.tensor_type.shape.dim:
            if not d.HasField("dim_value") or d.dim_value <= 0:
                d.Clear()
                d.dim_value = 1
    inferred = onnx.shape_inference.infer_shapes(model)
    g = inferred.graph
    shapes = {v.name: _dims(v) for v in [*g.input, *g.value_info, *g.output]}
    shapes.update({i.name: list(i.dims) for i in g.initializer})
    total = 0.0
    for node in g.node:
        ins = [shapes.get(n) for n in node.input]
        outs = [shapes.get(n) for n in node.output]
        if node.op_type in ("Conv", "ConvTranspose"):
            x, w, y = ins[0], ins[1], outs[0]
            if not (x and w and y):
                raise ValueError(f"{node.op_type} {node.name!r}: shapes not inferred")
            if node.op_type == "Conv":  # each output element: C/group x kernel multiply-adds
                total += 2.0 * math.prod(y) * w[1] * math.prod(w[2:])
            else:  # each input element scatters into M/group x kernel outputs
                total += 2.0 * math.prod(x) * w[1] * math.prod(w[2:])
        elif node.op_type == "Gemm":
            a, b = ins[0], ins[1]
            if not (a and b):
                raise ValueError(f"Gemm {node.name!r}: shapes not inferred")
            flag = {at.name: at.i for at in node.attribute}
            (m, k), n = (a[::-1] if flag.get("transA") else a), (b[0] if flag.get("transB") else b[1])
            total += 2.0 * m * n * k
        elif node.op_type == "MatMul":
            a, b = ins[0], ins[1]
            if not (a and b):
                raise ValueError(f"MatMul {node.name!r}: shapes not inferred")
            a2, b2 = ([1] + a if len(a) == 1 else a), (b + [1] if len(b) == 1 else b)
            batch = np.broadcast_shapes(tuple(a2[:-2]), tuple(b2[:-2]))
            total += 2.0 * math.prod(batch) * a2[-2] * a2[-1] * b2[-1]
    return total


def gemm_rate(repeats: int = 3) -> float:
    """Best float32 GEMM rate numpy reaches here, FLOP/s."""
    rng = np.random.default_rng(0)
    best = 0.0
    for n in GEMM_SIZES:
        a = rng.random((n, n), np.float32)
        b = rng.random((n, n), np.float32)
        a @ b
        for _ in range(repeats):
            t0 = time.perf_counter()
            a @ b
            best = max(best, 2.0 * n**3 / (time.perf_counter() - t0))
    return best


def _block(session, feeds, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        session.run(None, feeds)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="light_resnet50", help="comma-separated names from benchmarks/models.py")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20, help="runs per block")
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads for both runtimes (0: their default)")
    ap.add_argument("--pause", type=float, default=1.0, help="seconds between blocks")
    args = ap.parse_args(argv)
    import onnxruntime as ort

    table = {}
    for group in models.suite(GROUPS).values():
        table.update(group)
    for name in args.models.split(","):
        if name not in table:  # (the scikit-learn models are built only when asked for)
            for group in models.suite(["sklearn"]).values():
                table.update(group)
        if name not in table:
            ap.error(f"no model {name!r} in benchmarks/models.py")
        model, feeds = table[name]()
        proto = onnx.load(model) if isinstance(model, str) else model
        data = proto.SerializeToString()
        flops = model_flops(proto)
        mo = ml.SessionOptions()
        oo = ort.SessionOptions()
        if args.threads:
            mo.intra_op_num_threads = oo.intra_op_num_threads = args.threads
        mine = ml.InferenceSession(data, mo)
        theirs = ort.InferenceSession(data, oo, providers=["CPUExecutionProvider"])
        for s in (mine, theirs):
            for _ in range(3):
                s.run(None, feeds)
        print(f"{name}: {flops / 1e9:.2f} GFLOP")
        ratios_m, ratios_o = [], []
        for r in range(args.rounds):
            rate = gemm_rate()
            bound = flops / rate
            time.sleep(args.pause)
            tm = _block(mine, feeds, args.runs)
            time.sleep(args.pause)
            to = _block(theirs, feeds, args.runs)
            time.sleep(args.pause)
            ratios_m.append(tm / bound)
            ratios_o.append(to / bound)
            print(f"  round {r + 1}: numpy GEMM {rate / 1e9:6.1f} GFLOP/s, compute-bound {bound * 1e3:7.2f} ms;"
                  f" mlrt {tm * 1e3:7.2f} ms ({tm / bound:.2f}x), onnxruntime {to * 1e3:7.2f} ms ({to / bound:.2f}x)")
        print(f"  median: mlrt {statistics.median(ratios_m):.2f}x, onnxruntime {statistics.median(ratios_o):.2f}x"
              f" the compute-bound time")
    return 0


if __name__ == "__main__":
    sys.exit(main())

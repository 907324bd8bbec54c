"""Classify a batch with float and quantized versions of one model, and check how the
quantized ones fare against the float one, with the graph optimizations ONNX Runtime
applies by default (ORT_ENABLE_ALL, which turns QDQ pairs into integer kernels) and with
the basic ones only.

usage: run_quantized.py FLOAT_MODEL QUANTIZED_MODEL... OUT.npz"""

import os
import sys

import numpy as np
import onnxruntime as ort

LEVELS = {"basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC, "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}


def session(path, level):
    so = ort.SessionOptions()
    so.graph_optimization_level = LEVELS[level]
    so.intra_op_num_threads = 2
    return ort.InferenceSession(path, sess_options=so, providers=["CPUExecutionProvider"])


def main():
    *models, out = sys.argv[1:]
    rng = np.random.default_rng(0)
    batch = rng.standard_normal((16, 3, 16, 16)).astype(np.float32)
    saved, reference = {}, None
    for path in models:
        name = os.path.splitext(os.path.basename(path))[0]
        for level in LEVELS:
            sess = session(path, level)
            inp = sess.get_inputs()[0]
            (probs,) = sess.run(None, {inp.name: batch})
            singles = np.concatenate([sess.run(None, {inp.name: batch[i:i + 1]})[0] for i in range(4)])
            saved[f"{name}_{level}"] = probs
            saved[f"{name}_{level}_singles"] = singles
            if level == "basic":
                ids = probs.argmax(axis=1)
                reference = ids if reference is None else reference
                print(name, inp.name, inp.type, inp.shape, [o.name for o in sess.get_outputs()])
                print(name, ids.tolist(), "agrees with float:", int((ids == reference).sum()), "/", len(ids))
                print(name, "one at a time:", singles.argmax(axis=1).tolist())
    np.savez(out, **saved)


if __name__ == "__main__":
    main()

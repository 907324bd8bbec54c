"""Control flow against the same model without it, and against onnxruntime.

    python benchmarks/control_flow.py [--runs 100] [--blocks 15] [--no-ort]

A streaming voice-activity model (models.silero_vad_like: the whole network in an If
on the sample rate, the LSTM state carried from call to call) is timed wrapped and
unwrapped on mlrt and on onnxruntime (default options), at batch 1 x 512 samples and
batch 2 x 256; then the per-call cost of the If itself: one Add on [1, 4] bare, in an
If whose condition comes from an input (planned with the branch), and in an If
decided by data (the branch run by the host operator).  All sessions live in one
process and are timed in alternating blocks of `--runs` calls with a short pause
between blocks; each line gives the best and the median block.  Quote the ratios:
on a shared machine the absolute times move from block to block.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from onnx import TensorProto as T
from onnx import helper

import mlrt.lowlevel as ml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models import silero_vad_like, tiny_add  # noqa: E402


def _block(sess, feeds: dict, runs: int) -> float:
    state_name = "state" if "state" in feeds else None
    feeds = dict(feeds)
    t0 = time.perf_counter()
    for _ in range(runs):
        out = sess.run(None, feeds)
        if state_name:
            feeds[state_name] = out[1]  # the state carried, as a streaming caller does
    return (time.perf_counter() - t0) / runs


def _time(sessions: dict, runs: int, blocks: int) -> dict:
    """{name: (best, median) seconds per call}, blocks of every session alternating."""
    for sess, feeds in sessions.values():
        _block(sess, feeds, max(runs // 5, 3))
    times: dict = {name: [] for name in sessions}
    for _ in range(blocks):
        for name, (sess, feeds) in sessions.items():
            times[name].append(_block(sess, feeds, runs))
        time.sleep(0.02)
    return {name: (min(v), statistics.median(v)) for name, v in times.items()}


def _ort(model_bytes: bytes):
    import onnxruntime as ort
    return ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])


def _ratio(t: dict, a: str, b: str) -> str:
    return f"{t[a][0] / t[b][0]:.2f} (median {t[a][1] / t[b][1]:.2f})"


def _if_add(data_decided: bool) -> tuple[bytes, dict]:
    """y = If(cond) { a + b } else { a + b }: cond = (sr == 16000), or ReduceMax(a) > 0."""
    def vi(name, elem=T.FLOAT, shape=None):
        return helper.make_tensor_value_info(name, elem, shape)

    def branch(tag):
        return helper.make_graph([helper.make_node("Add", ["a", "b"], [f"y_{tag}"])], tag, [], [vi(f"y_{tag}")])
    if data_decided:
        cond = [helper.make_node("ReduceMax", ["a"], ["m"], keepdims=0), helper.make_node("Greater", ["m", "k"], ["c"])]
        k, extra = helper.make_tensor("k", T.FLOAT, [], [0.0]), []
    else:
        cond = [helper.make_node("Equal", ["sr", "k"], ["c"])]
        k, extra = helper.make_tensor("k", T.INT64, [], [16000]), [vi("sr", T.INT64, [])]
    g = helper.make_graph(cond + [helper.make_node("If", ["c"], ["y"], then_branch=branch("t"), else_branch=branch("e"))],
                          "g", [vi("a", T.FLOAT, [1, 4]), vi("b", T.FLOAT, [1, 4])] + extra, [vi("y", T.FLOAT, [1, 4])],
                          [k])
    feeds = {"a": np.ones((1, 4), np.float32), "b": np.ones((1, 4), np.float32)}
    if not data_decided:
        feeds["sr"] = np.array(16000, np.int64)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString(), feeds


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--blocks", type=int, default=15)
    ap.add_argument("--no-ort", action="store_true", help="mlrt only")
    args = ap.parse_args(argv)
    with_ort = not args.no_ort
    for batch, samples in ((1, 512), (2, 256)):
        sessions = {}
        for wrapped, tag in ((True, "if"), (False, "flat")):
            m, feeds = silero_vad_like(wrapped, batch, samples)
            data = m.SerializeToString()
            sessions[f"mlrt {tag}"] = (ml.InferenceSession(data), feeds)
            if with_ort:
                sessions[f"ort {tag}"] = (_ort(data), feeds)
        t = _time(sessions, args.runs, args.blocks)
        print(f"VAD batch {batch} x {samples}: " + ", ".join(f"{n} {b * 1e6:.0f}/{m * 1e6:.0f} us"
                                                             for n, (b, m) in t.items()))
        print(f"  mlrt if / mlrt flat {_ratio(t, 'mlrt if', 'mlrt flat')}")
        if with_ort:
            print(f"  mlrt / ort: if {_ratio(t, 'mlrt if', 'ort if')}, flat {_ratio(t, 'mlrt flat', 'ort flat')}")
    cases = {"Add": (tiny_add()[0].SerializeToString(), tiny_add()[1]), "If(sr) Add": _if_add(False),
             "If(data) Add": _if_add(True)}
    sessions = {}
    for name, (data, feeds) in cases.items():
        sessions[f"mlrt {name}"] = (ml.InferenceSession(data), feeds)
        if with_ort:
            sessions[f"ort {name}"] = (_ort(data), feeds)
    t = _time(sessions, args.runs * 20, args.blocks)
    print("per call, best/median: " + ", ".join(f"{n} {b * 1e6:.1f}/{m * 1e6:.1f} us" for n, (b, m) in t.items()))
    if with_ort:
        print("  mlrt / ort: " + ", ".join(f"{name} {_ratio(t, f'mlrt {name}', f'ort {name}')}" for name in cases))


if __name__ == "__main__":
    main()

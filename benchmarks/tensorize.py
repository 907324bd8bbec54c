"""Frame to model input: mlrt's high-level API against cv2.dnn.blobFromImage + onnxruntime.

    python benchmarks/tensorize.py [--runs 300] [--size 1920x1080] [--device cpu|gpu]

The job: a 1920x1080 BGR frame becomes a 1x3x224x224 float32 tensor (centre crop,
resize, BGR -> RGB, values 0..1) and runs through a one-node model (Relu) whose input
carries the ONNX IMAGE denotation and Rgb8 / Normalized_0_1 metadata.

- mlrt: `binding.bind(name, VideoFrame.from_numpy(frame))` + `session.evaluate(binding)`
  (the frame is tensorized by one C kernel pass straight into the input tensor);
- the usual way: `cv2.dnn.blobFromImage(frame, 1/255, (224, 224), swapRB=True,
  crop=True)` + `onnxruntime.InferenceSession.run` (default SessionOptions).

Both run in one process, interleaved (one mlrt call, one OpenCV + onnxruntime call,
...), in blocks (all of one side's calls, a pause so onnxruntime's spinning workers go
idle, the other side's), and interleaved again with onnxruntime's spinning off (its
idle workers otherwise spin on the cores through mlrt's calls): medians and the ratio
mlrt / theirs (below 1 means mlrt is faster).  Quote ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import statistics
import time

import cv2
import numpy as np
from onnx import TensorProto, helper

from mlrt.highlevel import (LearningModel, LearningModelBinding, LearningModelDevice, LearningModelDeviceKind,
                            LearningModelSession)
from mlrt.media import VideoFrame


def one_node_model() -> bytes:
    x = helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 224, 224])
    x.type.denotation = "IMAGE"
    y = helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 3, 224, 224])
    m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["image"], ["out"])], "relu", [x], [y]),
                          opset_imports=[helper.make_opsetid("", 17)])
    helper.set_model_props(m, {"Image.BitmapPixelFormat": "Rgb8", "Image.NominalPixelRange": "Normalized_0_1"})
    return m.SerializeToString()


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--size", default="1920x1080", help="frame WIDTHxHEIGHT")
    ap.add_argument("--device", choices=["cpu", "gpu"], default="cpu", help="mlrt's LearningModelDevice")
    args = ap.parse_args(argv)
    import onnxruntime as ort

    w, h = (int(v) for v in args.size.lower().split("x"))
    frame = np.random.default_rng(0).integers(0, 256, (h, w, 3), dtype=np.uint8)
    frame = cv2.GaussianBlur(frame, (9, 9), 3)  # a photo-like picture, not pure noise
    model = one_node_model()

    kind = LearningModelDeviceKind.GPU if args.device == "gpu" else LearningModelDeviceKind.CPU
    session = LearningModelSession(LearningModel.load(model), LearningModelDevice(kind))
    binding = LearningModelBinding(session)
    theirs = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    quiet = ort.SessionOptions()  # for the third figure: onnxruntime's workers do not spin
    quiet.add_session_config_entry("session.intra_op.allow_spinning", "0")
    theirs_quiet = ort.InferenceSession(model, quiet, providers=["CPUExecutionProvider"])

    def mlrt_call():
        binding.bind("image", VideoFrame.from_numpy(frame))
        return session.evaluate(binding).outputs["out"]

    def their_call(session=theirs):
        blob = cv2.dnn.blobFromImage(frame, 1 / 255.0, (224, 224), swapRB=True, crop=True)
        return session.run(None, {"image": blob})[0]

    a, b = mlrt_call(), their_call()
    # blobFromImage resizes the whole frame and then crops, mlrt crops and then resizes
    # (Windows ML's order): the sampling differs slightly, the content is the same
    print(f"frame {w}x{h} BGR8 -> 1x3x224x224 float32 RGB 0..1 (centre crop), {args.runs} runs, mlrt on "
          f"{session.device.device_name}")
    print(f"outputs: mean |mlrt - theirs| = {float(np.abs(a - b).mean()):.4f} (0..1 scale), "
          f"max {float(np.abs(a - b).max()):.4f}")

    for _ in range(20):  # warm both
        mlrt_call(), their_call()
    mine, other = [], []
    for _ in range(args.runs):
        mine.append(_timed(mlrt_call))
        other.append(_timed(their_call))
    m, o = statistics.median(mine), statistics.median(other)
    print(f"interleaved: mlrt {m * 1e3:.3f} ms   blobFromImage + onnxruntime {o * 1e3:.3f} ms   ratio {m / o:.2f}")

    block_m, block_o = [], []
    for _ in range(3):
        block_m += [_timed(mlrt_call) for _ in range(args.runs // 3)]
        time.sleep(0.5)  # onnxruntime's spinning workers go idle
        block_o += [_timed(their_call) for _ in range(args.runs // 3)]
        time.sleep(0.5)
    m, o = statistics.median(block_m), statistics.median(block_o)
    print(f"blocks:      mlrt {m * 1e3:.3f} ms   blobFromImage + onnxruntime {o * 1e3:.3f} ms   ratio {m / o:.2f}")

    mine, other = [], []
    for _ in range(args.runs):
        mine.append(_timed(mlrt_call))
        other.append(_timed(lambda: their_call(theirs_quiet)))
    m, o = statistics.median(mine), statistics.median(other)
    print(f"interleaved, onnxruntime not spinning: mlrt {m * 1e3:.3f} ms   blobFromImage + onnxruntime "
          f"{o * 1e3:.3f} ms   ratio {m / o:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

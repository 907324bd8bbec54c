"""Run a light model on the OpenCL provider, keeping frames on the device with IOBinding.

    python samples/opencl_provider.py [--model squeezenet] [--frames 10]

The session asks for ["OpenCLExecutionProvider", "CPUExecutionProvider"]: nodes the
OpenCL provider can run go there (a GPU when there is one, else Intel's CPU OpenCL
runtime from pip), the rest stay on the CPU.  Each "frame" is uploaded once as an OrtValue on the
device; its output stays there too until the sample reads the top scores back.  The
sample prints where the nodes ran, the device, and the median latency next to the
CPU provider's.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time
from pathlib import Path

import numpy as np
import onnx

import mlrt.lowlevel as ml

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="squeezenet")
    ap.add_argument("--frames", type=int, default=10)
    args = ap.parse_args(argv)
    path = str(LIGHT / f"light_{args.model}.onnx")

    sess = ml.InferenceSession(path, providers=["OpenCLExecutionProvider", "CPUExecutionProvider"])
    placed = collections.Counter(p for _, op, p in sess.get_node_assignment() if not op.startswith("Memcpy"))
    print(f"{args.model}: " + ", ".join(f"{n} nodes on {p}" for p, n in placed.most_common()))
    from mlrt.native.opencl._device import default_device
    print(f"OpenCL device: {default_device().name}")

    (inp,), (out,) = sess.get_inputs(), sess.get_outputs()
    rng = np.random.default_rng(0)
    frames = [rng.standard_normal(inp.shape).astype(np.float32) for _ in range(args.frames)]
    binding = sess.io_binding()
    binding.bind_output(out.name, "opencl")
    times = []
    for x in frames:
        t0 = time.perf_counter()
        binding.bind_ortvalue_input(inp.name, ml.OrtValue.ortvalue_from_numpy(x, "opencl", 0))
        sess.run_with_iobinding(binding)
        (y,) = binding.get_outputs()           # still on the device
        scores = y.numpy().reshape(-1)         # read back only what is needed
        times.append(time.perf_counter() - t0)
    top = np.argsort(scores)[::-1][:3]
    print(f"last frame's top classes: {top.tolist()} (scores {np.round(scores[top], 4).tolist()})")

    cpu = ml.InferenceSession(path)
    expected = cpu.run(None, {inp.name: frames[-1]})[0].reshape(-1)
    cpu_times = []
    for x in frames:
        t0 = time.perf_counter()
        cpu.run(None, {inp.name: x})
        cpu_times.append(time.perf_counter() - t0)
    print(f"max |OpenCL - CPU| on the last frame: {np.max(np.abs(scores - expected)):.2e}")
    print(f"median latency: OpenCL {statistics.median(times[1:] or times) * 1e3:.1f} ms, "
          f"CPU provider {statistics.median(cpu_times) * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

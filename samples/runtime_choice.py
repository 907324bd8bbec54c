"""Choose the native runtime: the app-bundled copy or a system-installed one.

    python samples/runtime_choice.py [--prefix P]

A process uses one runtime, chosen before the first model is loaded, by
MLRT_RUNTIME=bundled|system|auto|<path> (with MLRT_SYSTEM_PREFIX) or by
mlrt.distribution.select_runtime(...).  This sample installs the bundled runtime
under a prefix (a temporary folder unless --prefix is given), then runs one small
model in a fresh process for each choice and prints what current_runtime() reports.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile

CHILD = r"""
import sys
import numpy as np
from onnx import TensorProto, helper
import mlrt.distribution as dist
import mlrt.lowlevel as ml

spec, prefix = sys.argv[1], sys.argv[2]
rt = dist.select_runtime(spec, prefix=prefix)        # before the first model
node = helper.make_node("Relu", ["x"], ["y"])
graph = helper.make_graph([node], "relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
y, = ml.InferenceSession(model.SerializeToString()).run(None, {"x": np.array([-2, -1, 1, 2], np.float32)})
cur = dist.current_runtime()
print(f"{spec:8} -> {cur.kind} {cur.version} (ABI {cur.abi}) at {cur.path}; Relu gives {y.tolist()}")
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", help="install/select system runtimes here (default: a temporary folder)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = args.prefix or tmp
        import mlrt.distribution as dist
        print(f"installed the bundled runtime as {dist.install(prefix)}")
        for spec in ("bundled", "system", "auto"):
            subprocess.run([sys.executable, "-c", CHILD, spec, prefix], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

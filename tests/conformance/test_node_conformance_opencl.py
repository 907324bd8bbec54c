"""All ONNX node conformance cases again with providers ["OpenCLExecutionProvider",
"CPUExecutionProvider"]: the nodes the OpenCL provider claims run on it, the rest on
the CPU, and the pass count may not drop below the same floor as the CPU run."""

import collections

from node_cases import run_all
from opencl_check import opencl_device
from test_node_conformance import FLOOR


def test_node_conformance_on_opencl(capsys):
    opencl_device()
    placed = collections.Counter()
    passed, total, failures = run_all(providers=["OpenCLExecutionProvider", "CPUExecutionProvider"], placed=placed)
    with capsys.disabled():
        print(f"\nnode conformance with OpenCL first: {passed}/{total} cases pass (floor {FLOOR}); "
              f"nodes on OpenCL: {placed['OpenCLExecutionProvider']}, on CPU: {placed['CPUExecutionProvider']}")
    assert placed["OpenCLExecutionProvider"] >= 4000, placed  # the suite really exercises the OpenCL kernels
    assert passed >= FLOOR, f"{passed} passed, below the floor of {FLOOR}; failing examples: " + \
        ", ".join(sorted(failures)[:20])

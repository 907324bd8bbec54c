"""All ONNX node conformance cases again with providers ["OpenCLExecutionProvider",
"CPUExecutionProvider"] and CPU fallback switched off: a case passes only when its
nodes ran on OpenCL (shape computations aside) and matched.  The cases that fail --
operators OpenCL has no kernel for, element types it does not take, mismatches --
must be exactly those listed in opencl.skip, each with its reason."""

import collections

from node_cases import PROVIDERS, disagreements, read_skips, read_random, read_undefined, run_all
from opencl_check import opencl_device


def test_node_conformance_on_opencl(capsys):
    device = opencl_device()
    placed = collections.Counter()
    passed, total, failures = run_all(providers=PROVIDERS["opencl"], placed=placed, undefined=read_undefined("opencl"),
                                      random=read_random("opencl"))
    with capsys.disabled():
        print(f"\nnode conformance on OpenCL ({device.name}, no CPU fallback): {passed}/{total} cases pass; "
              f"opencl.skip lists {len(read_skips('opencl'))}; nodes on OpenCL: "
              f"{placed['OpenCLExecutionProvider']}, shape nodes on the CPU: {placed['CPUExecutionProvider']}")
    assert placed["OpenCLExecutionProvider"] >= 1500, placed  # the suite really exercises the OpenCL kernels
    problems = disagreements("opencl", failures)
    assert not problems, "\n".join(problems)

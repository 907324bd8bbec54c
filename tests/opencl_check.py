"""Checking the OpenCL provider against the C kernels (the oracle chain of STYLE.md:
onnx.reference checks the C kernels, the C kernels check OpenCL).

`check_opencl` builds a one-node model, runs it as an OpenCL partition (inputs
uploaded to the device, outputs read back) and on the CPU provider, and compares:
exactly for integer and data-movement results, within the operator's tolerance for
float32 math, and within half precision for float16.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper

from mlrt._errors import DeviceError
from mlrt.native import load as loading
from oracle import make_model, run_mlrt, tolerance


def opencl_device():
    """The OpenCL device, or a pytest skip naming why there is none (the provider's code
    is imported here: a file of tests that call this collects without it)."""
    try:
        from mlrt.native.opencl._device import default_device
    except ImportError as exc:
        pytest.skip(f"the OpenCL provider cannot be imported: {exc}")
    try:
        return default_device()
    except DeviceError as exc:
        pytest.skip(f"no usable OpenCL device: {exc}")


def run_opencl(model, inputs: list, constant_inputs=()) -> list[np.ndarray]:
    """Run a model's whole graph as one OpenCL partition; outputs as host arrays."""
    device = opencl_device()
    from mlrt.native.opencl._memory import DeviceTensor
    from mlrt.native.opencl._plan import OpenCLPartition
    graph = loading.load(model.SerializeToString())
    part = OpenCLPartition(graph, device)
    names = [v.name for v in graph.inputs]
    feeds = {}
    for name, x in zip(names, [x for x in inputs if x is not None]):
        feeds[name] = x if name in part.value_names or name in constant_inputs else device.upload(x)
    out = part.run(feeds)
    return [v.numpy() if isinstance(v, DeviceTensor) else np.asarray(v) for v in (out[n] for n in part.output_names)]


def check_opencl(op_type: str, inputs: list, attrs: dict | None = None, n_outputs: int = 1, opset: int | None = None,
                 domain: str = "", rtol: float | None = None, atol: float | None = None, constants=()):
    """One node on OpenCL vs the same node on the CPU provider; returns the OpenCL outputs.
    `constants`: indexes of inputs made initializers (weights, parameters), the path
    real models take, where recorders may pack them ahead."""
    model = make_model(op_type, inputs, attrs, n_outputs=n_outputs, opset=opset, domain=domain)
    if domain:
        model.opset_import.append(helper.make_opsetid("", 17))
    fed = list(inputs)
    for i in sorted(constants, reverse=True):
        name = model.graph.node[0].input[i]
        (vi,) = [v for v in model.graph.input if v.name == name]
        model.graph.input.remove(vi)
        model.graph.initializer.append(numpy_helper.from_array(inputs[i], name))
        fed[i] = None
    expected = run_mlrt(model, fed)
    got = run_opencl(model, fed)
    op_rtol, op_atol = tolerance(op_type, model.opset_import[0].version, domain)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == e.dtype, f"{op_type} output {k}: dtype {g.dtype}, CPU gives {e.dtype}"
        assert g.shape == e.shape, f"{op_type} output {k}: shape {g.shape}, CPU gives {e.shape}"
        if e.dtype == np.float16:
            r, a = max(rtol or 0, 4e-3), max(atol or 0, 2e-3)
        elif e.dtype.kind == "f":
            r, a = rtol if rtol is not None else op_rtol, atol if atol is not None else op_atol
        else:
            np.testing.assert_array_equal(g, e, err_msg=f"{op_type} output {k}")
            continue
        np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=r, atol=a,
                                   err_msg=f"{op_type} output {k} ({e.dtype})")
    return got

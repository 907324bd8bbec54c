"""Checking the ai.onnx.ml operators against onnx.reference and onnxruntime.

`tests/oracle.py` builds one-domain models; an ai.onnx.ml model also needs the
default domain imported, and string inputs and non-tensor outputs (ZipMap's list
of maps) need their own handling.  `check_ml` runs one node in mlrt and in the
chosen oracle(s) and compares every output:

* oracle="ref": onnx.reference (the spec's executable reading);
* oracle="ort": onnxruntime, for the places where onnx.reference is incomplete or
  departs from the spec (each such test says why);
* oracle="both": both, and they must agree with mlrt.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from oracle import assert_same, run_mlrt, tolerance

ML = "ai.onnx.ml"
ML_OPSET = 5


def _elem_type(a: np.ndarray) -> int:
    if a.dtype == object or a.dtype.kind in "US":
        return TensorProto.STRING
    return helper.np_dtype_to_tensor_dtype(a.dtype)


def ml_model(op_type: str, inputs: list, attrs: dict | None = None, n_outputs: int = 1, opset: int = ML_OPSET,
             onnx_opset: int = 17, output_types: list | None = None) -> onnx.ModelProto:
    """A one-node ai.onnx.ml model (importing both the ML and the default domain)."""
    names = [f"x{i}" if a is not None else "" for i, a in enumerate(inputs)]
    outs = [f"y{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outs, domain=ML, **(attrs or {}))
    g_in = [helper.make_tensor_value_info(n, _elem_type(a), a.shape) for n, a in zip(names, inputs) if a is not None]
    if output_types:
        g_out = [t if isinstance(t, onnx.ValueInfoProto) else helper.make_tensor_value_info(n, t, None)
                 for n, t in zip(outs, output_types)]
    else:
        g_out = [helper.make_empty_tensor_value_info(n) for n in outs]
    graph = helper.make_graph([node], f"{op_type}_test", g_in, g_out)
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", onnx_opset),
                                                                  helper.make_opsetid(ML, opset)])


def _feeds(model, inputs):
    return dict(zip([i.name for i in model.graph.input], [x for x in inputs if x is not None]))


def run_ref(model, inputs) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ReferenceEvaluator(model).run(None, _feeds(model, inputs))


def run_ort(model, inputs) -> list:
    import onnxruntime as ort
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, _feeds(model, inputs))


def same(got, expected, rtol: float, atol: float, where: str = "") -> None:
    """assert_same for tensors, string tensors (any numpy string kind) and lists of maps."""
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), f"{where}: {got!r} vs {expected!r}"
        for k, (g, e) in enumerate(zip(got, expected)):
            same(g, e, rtol, atol, f"{where}[{k}]")
        return
    if isinstance(expected, dict):
        assert isinstance(got, dict) and set(got) == set(expected), f"{where}: keys {list(got)} vs {list(expected)}"
        for k in expected:
            np.testing.assert_allclose(got[k], expected[k], rtol=rtol, atol=atol, err_msg=f"{where}[{k!r}]")
        return
    expected = np.asarray(expected)
    got = np.asarray(got)
    if expected.dtype.kind in "OUS" or got.dtype.kind in "OUS":
        assert got.dtype == object, f"{where}: strings must come back as an object array, got {got.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape}, expected {expected.shape}"
        assert [str(v) for v in got.reshape(-1)] == [str(v) for v in expected.reshape(-1)], where
        return
    assert_same(got, expected, rtol, atol, where)


def check_ml(op_type: str, inputs: list, attrs: dict | None = None, *, n_outputs: int = 1, opset: int = ML_OPSET,
             oracle: str = "ref", rtol: float | None = None, atol: float | None = None,
             output_types: list | None = None, ref_float32: bool = False) -> list:
    """Run op_type in mlrt and the oracle(s); assert they agree; return mlrt's outputs.

    ref_float32: onnx.reference keeps X's float type where the spec (and onnxruntime)
    give float32; compare its values as float32."""
    model = ml_model(op_type, inputs, attrs, n_outputs, opset, output_types=output_types)
    r, a = tolerance(op_type, opset, ML)
    rtol = r if rtol is None else rtol
    atol = a if atol is None else atol
    got = run_mlrt(model, inputs)
    oracles = {"ref": [run_ref], "ort": [run_ort], "both": [run_ref, run_ort]}[oracle]
    for run in oracles:
        expected = run(model, inputs)
        if ref_float32 and run is run_ref:
            expected = [e.astype(np.float32) if isinstance(e, np.ndarray) and e.dtype.kind == "f" else e
                        for e in expected]
        assert len(got) == len(expected)
        for i, (g, e) in enumerate(zip(got, expected)):
            same(g, e, rtol, atol, f"{op_type} output {i} vs {run.__name__}")
    return got

"""Checking mlrt against oracles it did not write.

`check_node` builds a one-node model, runs it through mlrt.lowlevel and through
onnx.reference, and compares every output: exactly for integer, bool and
data-movement results, within the operator's own tolerance (`Op.tolerance`, set in
its semantics file) for floating-point math.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
from onnx import helper
from onnx.reference import ReferenceEvaluator

import mlrt.lowlevel as ml
from mlrt.native.ops import lookup

# Edge sizes (SIMD tails, single elements, empty) and edge values used by op tests.
EDGE_SIZES = (1, 2, 4, 9, 13, 127, 1000)
EDGE_VALUES = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3.4e38, -3.4e38, 0.5, -2.5],
                       dtype=np.float32)


def make_model(op_type: str, inputs: list, attrs: dict | None = None, n_outputs: int = 1, opset: int | None = None,
               domain: str = "", input_names=None, output_names=None) -> onnx.ModelProto:
    """A model holding one node over the given arrays (None for an absent optional input)."""
    opset = opset or onnx.defs.onnx_opset_version()
    in_names = list(input_names or [f"x{i}" if a is not None else "" for i, a in enumerate(inputs)])
    out_names = list(output_names or [f"y{i}" for i in range(n_outputs)])
    node = helper.make_node(op_type, in_names, out_names, domain=domain, **(attrs or {}))
    g_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                for n, a in zip(in_names, inputs) if a is not None]
    g_outputs = [helper.make_empty_tensor_value_info(n) for n in out_names if n]
    graph = helper.make_graph([node], f"{op_type}_test", g_inputs, g_outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, opset)])


def run_mlrt(model: onnx.ModelProto, inputs: list, **session_kwargs) -> list[np.ndarray]:
    sess = ml.InferenceSession(model.SerializeToString(), **session_kwargs)
    feeds = {a.name: x for a, x in zip(sess.get_inputs(), [x for x in inputs if x is not None])}
    return sess.run(None, feeds)


def run_reference(model: onnx.ModelProto, inputs: list) -> list[np.ndarray]:
    names = [n for n in model.graph.node[0].input if n]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ReferenceEvaluator(model).run(None, dict(zip(names, [x for x in inputs if x is not None])))


def tolerance(op_type: str, opset: int, domain: str = "") -> tuple[float, float]:
    cls = lookup(domain, op_type, opset)
    return cls.tolerance if cls is not None else (1e-5, 1e-6)


def assert_same(got, expected, rtol: float, atol: float, where: str = "") -> None:
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype}, expected {expected.dtype}"
    assert got.shape == expected.shape, f"{where}: shape {got.shape}, expected {expected.shape}"
    if got.dtype.name == "bfloat16":  # numpy kind "V": compare as the floats they are
        got, expected = got.astype(np.float32), expected.astype(np.float32)
    if got.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=where)


def check_node(op_type: str, inputs: list, attrs: dict | None = None, *, n_outputs: int = 1,
               opset: int | None = None, rtol: float | None = None, atol: float | None = None,
               domain: str = "") -> list[np.ndarray]:
    """Run op_type on inputs in mlrt and onnx.reference; assert they agree; return mlrt's outputs."""
    model = make_model(op_type, inputs, attrs, n_outputs, opset, domain)
    opset = model.opset_import[0].version
    r, a = tolerance(op_type, opset, domain)
    rtol = r if rtol is None else rtol
    atol = a if atol is None else atol
    got = run_mlrt(model, inputs)
    expected = run_reference(model, inputs)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert_same(g, e, rtol, atol, f"{op_type} output {i}")
    return got

"""FusedConvMaxPool (com.microsoft, mlrt's own): a conv over an image and the MaxPool
after it in one node (native/optimizer/fuse_conv_maxpool.py makes it; the kernel cases
here are small, so its lower bound on the conv's output is lifted for them).  On the direct
rows (float32, AVX2 / AVX-512) each band of the pool's rows takes its conv rows from a
buffer of a few rows; elsewhere the conv's whole output is made and pooled.  Checked
against onnxruntime's Conv, activation and MaxPool (onnx.reference's MaxPool misplaces
windows under uneven pads), and bit for bit against mlrt's own unfused nodes (the same
conv sums; max is exact), on 1 to 3 threads; the float64 case against onnx.reference."""

import json
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxruntime as ort

import mlrt
import mlrt.lowlevel as ml
from mlrt.native.optimizer import fuse_conv_maxpool
from oracle import assert_same, run_mlrt
from onnx.reference import ReferenceEvaluator

rng = np.random.default_rng(0)


@pytest.fixture
def any_size(monkeypatch):
    """The pass fuses convs of any output size (its bound is for speed, not correctness)."""
    monkeypatch.setattr(fuse_conv_maxpool, "MIN_OUTPUT_BYTES", 0)


ACTS = {"": None, "Relu": ("Relu", {}), "LeakyRelu": ("LeakyRelu", {"alpha": 0.1}), "Sigmoid": ("Sigmoid", {})}


def pair_model(xs, ws, conv_attrs, pool_attrs, act="", bias=True, dtype=np.float32):
    """Conv (+ activation) -> MaxPool over a constant W (and B), and its input."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    x = rng.standard_normal(xs).astype(dtype)
    inits = [numpy_helper.from_array(rng.standard_normal(ws).astype(dtype), "w")]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(ws[0]).astype(dtype), "b"))
    nodes = [helper.make_node("Conv", ["x", "w"] + (["b"] if bias else []), ["c"], **conv_attrs)]
    if ACTS[act]:
        nodes.append(helper.make_node(ACTS[act][0], ["c"], ["a"], **ACTS[act][1]))
    nodes.append(helper.make_node("MaxPool", [nodes[-1].output[0]], ["y"], **pool_attrs))
    g = helper.make_graph(nodes, "pair", [helper.make_tensor_value_info("x", elem, xs)],
                          [helper.make_tensor_value_info("y", elem, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), x


def run(model, x, threads=1, fuse=True):
    """The output and the FusedConvMaxPool nodes' kernel paths of a session."""
    so = ml.SessionOptions()
    so.intra_op_num_threads = threads
    so.enable_profiling = True
    s = ml.InferenceSession(model.SerializeToString(), so,
                            disabled_optimizers=None if fuse else ["fuse_conv_maxpool"])
    y = s.run(None, {"x": x})[0]
    with open(path := s.end_profiling()) as f:
        events = json.load(f)
    os.remove(path)
    return y, [e["args"].get("kernel_path") for e in events
               if e.get("cat") == "Node" and e["args"].get("op_name") == "FusedConvMaxPool"]


def fast_path() -> bool:
    """The micro-kernels' ISA (the direct rows): anything but the portable C."""
    from mlrt.native import _lib
    return _lib.ffi().string(_lib.lib().mlrt_cpu_isa_name()).decode() != "portable"


CASES = [
    # SqueezeNet's stem: 3 x 3 / 2, no pads, then 3 x 3 / 2
    ((1, 3, 61, 59), (16, 3, 3, 3), {"strides": [2, 2]}, {"kernel_shape": [3, 3], "strides": [2, 2]}),
    # pads on both, odd filter count, a batch of 2
    ((2, 3, 58, 64), (13, 3, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]},
     {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    # 2 x 2 / 2, ceil_mode (the last window hangs past the end), one input channel
    ((1, 1, 55, 57), (8, 1, 3, 3), {"pads": [1, 1, 1, 1]}, {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}),
    # uneven pads, pool stride 1, window 3 x 2, 2 x 2 conv kernel, 4 channels
    ((1, 4, 40, 70), (7, 4, 2, 2), {"pads": [0, 1, 1, 0]},
     {"kernel_shape": [3, 2], "strides": [1, 1], "pads": [2, 1, 0, 0]}),
    # conv stride 1 x 2, pool 5 x 5 / 3 (the other column strides: the rows' generic maximum)
    ((1, 3, 50, 100), (6, 3, 3, 3), {"strides": [1, 2], "pads": [1, 1, 1, 1]},
     {"kernel_shape": [5, 5], "strides": [3, 3], "pads": [2, 2, 2, 2]}),
]


@pytest.mark.parametrize("xs,ws,conv_attrs,pool_attrs", CASES)
@pytest.mark.parametrize("act", list(ACTS))
def test_fused_against_reference_and_unfused(xs, ws, conv_attrs, pool_attrs, act, any_size):
    model, x = pair_model(xs, ws, conv_attrs, pool_attrs, act)
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    unfused, none = run(model, x, fuse=False)
    assert none == []
    for threads in (1, 2, 3):
        got, paths = run(model, x, threads)
        assert len(paths) == 1, paths
        if fast_path():
            assert paths[0].startswith("conv/direct+maxpool/"), paths
        assert_same(got, expected, 1e-4, 1e-4, where=f"FusedConvMaxPool {act} on {threads} thread(s)")
        np.testing.assert_array_equal(got, unfused)


# where the conv's output is made whole, then pooled: narrow outputs (the direct path's
# tiles, not its rows), float64, a 3 x 3 stride-1 conv over one channel at any width
FALLBACK = [
    ((1, 3, 20, 20), (5, 3, 3, 3), {"strides": [2, 2]}, {"kernel_shape": [3, 3], "strides": [2, 2]}, np.float32),
    ((2, 3, 40, 44), (6, 3, 3, 3), {"pads": [1, 1, 1, 1]}, {"kernel_shape": [2, 2], "strides": [2, 2]}, np.float64),
]


@pytest.mark.parametrize("xs,ws,conv_attrs,pool_attrs,dtype", FALLBACK)
def test_fused_off_the_rows(xs, ws, conv_attrs, pool_attrs, dtype, any_size):
    model, x = pair_model(xs, ws, conv_attrs, pool_attrs, "Relu", dtype=dtype)
    expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
    for threads in (1, 2):
        got, paths = run(model, x, threads)
        assert len(paths) == 1 and "maxpool" not in paths[0], paths
        assert_same(got, expected, 1e-4 if dtype == np.float32 else 1e-10, 1e-4 if dtype == np.float32 else 1e-10,
                    where="FusedConvMaxPool, whole conv then pool")


def test_nan_and_infinity_as_unfused(any_size):
    """NaN in the input (its conv outputs NaN): MaxPool skips NaN in a window, as the unfused
    nodes do; an infinite input gives infinite maxima."""
    model, x = pair_model((1, 3, 41, 60), (8, 3, 3, 3), {"strides": [2, 2]}, {"kernel_shape": [3, 3], "strides": [2, 2]})
    x[0, 1, 7, 9] = np.nan
    x[0, 0, 30, 31:33] = np.inf
    with np.errstate(invalid="ignore"):
        unfused = run(model, x, fuse=False)[0]
        for threads in (1, 2):
            np.testing.assert_array_equal(run(model, x, threads)[0], unfused)


def test_fused_from_2mb():
    """By default only a conv whose output is 2 MB or more is fused (smaller ones stay in
    cache anyway): 64 filters at 111 x 111 (3.2 MB) are, 16 (0.8 MB) are not."""
    for filters, fused in ((64, True), (16, False)):
        model, x = pair_model((1, 3, 224, 224), (filters, 3, 3, 3), {"strides": [2, 2]},
                              {"kernel_shape": [3, 3], "strides": [2, 2]}, "Relu")
        assert len(run(model, x)[1]) == (1 if fused else 0)


def test_not_fused(any_size):
    """What the pass leaves: a conv over more than 4 channels, a kernel of more than 9
    taps, a MaxPool whose Indices are read, a conv output read elsewhere too."""
    big, x = pair_model((1, 8, 30, 30), (4, 8, 3, 3), {}, {"kernel_shape": [2, 2]})
    assert run(big, x)[1] == []
    wide, x = pair_model((1, 3, 40, 40), (4, 3, 5, 5), {}, {"kernel_shape": [2, 2]})
    assert run(wide, x)[1] == []
    model, x = pair_model((1, 3, 30, 30), (4, 3, 3, 3), {}, {"kernel_shape": [2, 2]})
    model.graph.node[-1].output.append("idx")
    model.graph.output.append(helper.make_tensor_value_info("idx", TensorProto.INT64, None))
    assert run(model, x)[1] == []
    model, x = pair_model((1, 3, 30, 30), (4, 3, 3, 3), {}, {"kernel_shape": [2, 2]})
    model.graph.output.append(helper.make_tensor_value_info("c", TensorProto.FLOAT, None))
    assert run(model, x)[1] == []


def _node_model(attrs, xs=(1, 3, 30, 30), ws=(4, 3, 3, 3), z=False):
    x = np.ones(xs, np.float32)
    names = ["x", "w", "b"] + (["z"] if z else [])
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
           for n, s in (("x", xs), ("w", ws), ("b", ws[:1]), ("z", (1, ws[0], 28, 28)))[:len(names)]]
    node = helper.make_node("FusedConvMaxPool", names, ["y"], domain="com.microsoft", **attrs)
    g = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    feeds = [x, np.ones(ws, np.float32), np.ones(ws[:1], np.float32)] + ([np.ones((1, ws[0], 28, 28), np.float32)] if z else [])
    return m, feeds


def test_node_bad_input():
    """The node written by hand: a Z, no pool window, pads as large as the window, a 3-D
    input -- each an MlrtError naming the node; a good one runs in the same process."""
    for attrs, kw in (({"pool_kernel_shape": [2, 2]}, {"z": True}), ({}, {}),
                      ({"pool_kernel_shape": [2, 2], "pool_pads": [2, 0, 0, 0]}, {}),
                      ({"pool_kernel_shape": [2, 2]}, {"xs": (1, 3, 30), "ws": (4, 3, 3)})):
        m, feeds = _node_model(attrs, **kw)
        with pytest.raises(mlrt.MlrtError, match="FusedConvMaxPool"):
            run_mlrt(m, feeds)
    m, feeds = _node_model({"pool_kernel_shape": [2, 2], "pool_strides": [2, 2], "activation": "Relu"})
    assert run_mlrt(m, feeds)[0].shape == (1, 4, 14, 14)

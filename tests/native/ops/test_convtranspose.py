"""ConvTranspose against onnx.reference: 1-D/2-D/3-D, groups, strides, dilations,
pads, output_padding, auto_pad, output_shape, bias, float64, threads, bad input."""

import numpy as np
import pytest

import mlrt
from oracle import assert_same, check_node, make_model, run_mlrt, run_reference, tolerance

rng = np.random.default_rng(0)


def convt(xs, ws, attrs=None, bias=True, dtype=np.float32, **kw):
    attrs = attrs or {}
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    group = attrs.get("group", 1)
    b = rng.standard_normal(ws[1] * group).astype(dtype) if bias else None
    if len(xs) > 4 or (group > 1 and ws[1] != xs[1] // group):
        # onnx.reference fails above 2-D and for groups with M / group != C / group
        return check_with_ort([x, w] + ([b] if bias else []), attrs)
    if group == 1 or not bias:
        return check_node("ConvTranspose", [x, w] + ([b] if bias else []), attrs, **kw)
    # onnx.reference adds B[0] to every group: check the bias-free result plus B instead
    got = run_mlrt(make_model("ConvTranspose", [x, w, b], attrs), [x, w, b])[0]
    expected = run_reference(make_model("ConvTranspose", [x, w], attrs), [x, w])[0]
    expected = expected + b.reshape(1, -1, *([1] * (len(xs) - 2)))
    assert_same(got, expected.astype(dtype), *tolerance("ConvTranspose", 22), where="ConvTranspose")


def check_with_ort(inputs, attrs):
    """onnxruntime as the oracle (float32 only there: float64 results are held to its float32 result)."""
    ort = pytest.importorskip("onnxruntime")
    f32 = [a.astype(np.float32) for a in inputs]
    model = make_model("ConvTranspose", f32, attrs, opset=13)
    model.ir_version = 8
    model.graph.output[0].type.tensor_type.elem_type = 1
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    expected = sess.run(None, {f"x{i}": a for i, a in enumerate(f32)})[0]
    got = run_mlrt(make_model("ConvTranspose", inputs, attrs, opset=13), inputs)[0]
    rtol, atol = tolerance("ConvTranspose", 13)
    assert_same(got, expected.astype(got.dtype), rtol, max(atol, 1e-4), where="ConvTranspose")


CASES = [
    ((1, 2, 3, 3), (2, 3, 3, 3), {}),
    ((2, 3, 4, 5), (3, 2, 3, 3), {"strides": [2, 2]}),
    ((1, 3, 4, 5), (3, 2, 3, 3), {"strides": [2, 3], "pads": [1, 0, 1, 2]}),
    ((1, 3, 4, 5), (3, 2, 3, 3), {"strides": [2, 2], "output_padding": [1, 1]}),
    ((1, 3, 4, 5), (3, 2, 3, 2), {"dilations": [2, 1], "strides": [1, 2]}),
    ((1, 4, 4, 5), (4, 3, 3, 3), {"group": 2, "strides": [2, 2]}),
    ((1, 4, 4, 4), (4, 1, 3, 3), {"group": 4, "pads": [1, 1, 1, 1]}),
    ((1, 3, 4, 5), (3, 2, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 3, 4, 5), (3, 2, 4, 4), {"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    ((1, 3, 3, 3), (3, 2, 3, 3), {"strides": [3, 2], "output_shape": [10, 8]}),
    ((2, 3, 7), (3, 4, 3), {"strides": [2], "pads": [1, 1]}),
    ((1, 2, 3, 4, 3), (2, 3, 2, 3, 2), {"strides": [2, 1, 2]}),
    ((1, 16, 8, 8), (16, 8, 4, 4), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 1, 1, 1), (1, 1, 1, 1), {}),
]


@pytest.mark.parametrize("xs,ws,attrs", CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_convtranspose_cases(xs, ws, attrs, bias):
    convt(xs, ws, attrs, bias)


@pytest.mark.parametrize("xs,ws,attrs", CASES[:6] + CASES[10:12])
def test_convtranspose_float64(xs, ws, attrs):
    convt(xs, ws, attrs, dtype=np.float64)


def test_convtranspose_large_threads():
    convt((2, 32, 14, 14), (32, 16, 4, 4), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, rtol=1e-4, atol=1e-4)
    x = rng.standard_normal((1, 8, 20, 20)).astype(np.float32)
    w = rng.standard_normal((8, 6, 3, 3)).astype(np.float32)
    model = make_model("ConvTranspose", [x, w], {"strides": [2, 2]})
    import mlrt.lowlevel as ml
    outs = []
    for threads in (1, 3):
        o = ml.SessionOptions()
        o.intra_op_num_threads = threads
        outs.append(run_mlrt(model, [x, w], sess_options=o)[0])
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)


def test_convtranspose_empty_batch():
    x, w = np.ones((0, 2, 3, 3), np.float32), np.ones((2, 3, 3, 3), np.float32)
    assert run_mlrt(make_model("ConvTranspose", [x, w]), [x, w])[0].shape == (0, 3, 5, 5)


@pytest.mark.parametrize("xs,ws,attrs", [((1, 3, 4, 4), (2, 2, 3, 3), {}),            # W's first dim != C
                                         ((1, 4, 4, 4), (4, 2, 3, 3), {"group": 3}),
                                         ((1, 3, 4, 4), (3, 2, 3, 3), {"pads": [5, 5, 5, 5]}),
                                         ((1, 3, 4, 4), (3, 2, 3, 3), {"strides": [2]})])
def test_convtranspose_bad_input(xs, ws, attrs):
    x, w = np.ones(xs, np.float32), np.ones(ws, np.float32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("ConvTranspose", [x, w], attrs), [x, w])

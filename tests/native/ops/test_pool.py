"""MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool against
onnx.reference: 1-D/2-D/3-D, strides, dilations, pads, auto_pad, ceil_mode,
count_include_pad, Indices and storage_order, int8/uint8, edge values, bad input."""

import numpy as np
import pytest

import mlrt
from oracle import EDGE_SIZES, assert_same, check_node, make_model, run_mlrt, tolerance

rng = np.random.default_rng(0)


def check_with_ort(op, inputs, attrs, n_outputs=1, opset=13):
    """For cases onnx.reference gets wrong (SAME_LOWER with strides, padded int8
    MaxPool, GlobalMaxPool below rank 4): onnxruntime is the oracle."""
    ort = pytest.importorskip("onnxruntime")
    model = make_model(op, inputs, attrs, n_outputs, opset)
    model.ir_version = 8
    for o, x in zip(model.graph.output, run_mlrt(model, inputs)):
        o.type.tensor_type.elem_type = {np.dtype(np.float32): 1, np.dtype(np.float64): 11, np.dtype(np.int8): 3,
                                        np.dtype(np.uint8): 2, np.dtype(np.int64): 7}[x.dtype]
    got = run_mlrt(model, inputs)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    expected = sess.run(None, {f"x{i}": x for i, x in enumerate(inputs)})
    for g, e in zip(got, expected):
        assert_same(g, e, *tolerance(op, opset), where=op)

WINDOWS = [
    ((1, 3, 8, 8), {"kernel_shape": [2, 2]}),
    ((2, 3, 9, 11), {"kernel_shape": [3, 3], "strides": [2, 2]}),
    ((1, 2, 9, 11), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 2, 9, 11), {"kernel_shape": [3, 2], "strides": [1, 3], "pads": [1, 0, 2, 1]}),
    ((1, 2, 9, 11), {"kernel_shape": [3, 3], "strides": [2, 2], "dilations": [2, 1]}),
    ((1, 2, 9, 11), {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ((1, 2, 9, 11), {"kernel_shape": [2, 4], "auto_pad": "SAME_LOWER", "strides": [2, 3]}),
    ((1, 2, 9, 11), {"kernel_shape": [3, 3], "auto_pad": "VALID", "strides": [2, 2]}),
    ((1, 2, 10, 10), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ((1, 2, 11, 10), {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1, "pads": [1, 0, 0, 1]}),
    ((2, 3, 20), {"kernel_shape": [4], "strides": [3], "pads": [1, 2]}),
    ((1, 2, 5, 6, 7), {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2], "pads": [0, 1, 1, 1, 0, 1]}),
    ((1, 1, 1, 1), {"kernel_shape": [1, 1]}),
    ((1, 64, 56, 56), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 16, 27, 27), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    # rows first, then columns (MaxPool): an SPPF's 5x5, odd windows and strides
    ((1, 8, 10, 10), {"kernel_shape": [5, 5], "pads": [2, 2, 2, 2]}),
    ((1, 2, 13, 17), {"kernel_shape": [4, 3], "strides": [3, 2], "pads": [1, 2, 0, 1]}),
    ((1, 2, 9, 11), {"kernel_shape": [1, 5], "strides": [1, 3]}),
    # column stride 2, 2- and 3-wide windows: rows read straight (16 outputs a vector, masked
    # tails), the outputs at the padding tap by tap
    ((1, 3, 9, 101), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [0, 1, 2, 2], "ceil_mode": 1}),
    ((1, 3, 6, 70), {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 0, 1]}),
    ((1, 2, 7, 67), {"kernel_shape": [4, 3], "strides": [3, 2]}),
    ((1, 2, 5, 40), {"kernel_shape": [3, 5], "strides": [1, 2], "pads": [1, 2, 1, 2]}),
    # the window is the whole plane (ResNet's last AveragePool): one pass per plane; with pads not
    ((2, 8, 7, 7), {"kernel_shape": [7, 7]}),
    ((1, 3, 5, 6), {"kernel_shape": [5, 6], "strides": [3, 3]}),
    ((1, 3, 5, 6), {"kernel_shape": [5, 6], "pads": [0, 0, 1, 0], "strides": [2, 2]}),
]


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "LpPool"])
@pytest.mark.parametrize("shape,attrs", WINDOWS)
def test_pool_windows(op, shape, attrs):
    if op == "LpPool" and attrs.get("ceil_mode"):
        attrs = {k: v for k, v in attrs.items() if k != "ceil_mode"}
    x = rng.standard_normal(shape).astype(np.float32)
    if op == "MaxPool" and attrs.get("auto_pad") == "SAME_LOWER":
        check_with_ort(op, [x], attrs)  # onnx.reference floors the SAME_LOWER output size
    else:
        check_node(op, [x], attrs)


@pytest.mark.parametrize("shape,attrs", WINDOWS[:4] + WINDOWS[8:12])
def test_averagepool_count_include_pad(shape, attrs):
    check_node("AveragePool", [rng.standard_normal(shape).astype(np.float32)], {**attrs, "count_include_pad": 1})


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "LpPool"])
def test_pool_float64(op):
    check_node(op, [rng.standard_normal((2, 3, 9, 9))], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})


@pytest.mark.parametrize("p", [1, 2, 3])
def test_lppool_p(p):
    check_node("LpPool", [rng.standard_normal((1, 3, 8, 9)).astype(np.float32)], {"kernel_shape": [3, 2], "p": p})


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_maxpool_int8(dtype):
    x = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (2, 3, 9, 9), endpoint=True).astype(dtype)
    check_node("MaxPool", [x], {"kernel_shape": [3, 3], "strides": [2, 2]})
    check_with_ort("MaxPool", [x], {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1]})


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("shape,attrs", [((1, 64, 112, 112), {"kernel_shape": [3, 3], "strides": [2, 2],
                                                              "pads": [1, 1, 1, 1]}),  # a quantized ResNet's
                                         ((1, 2, 13, 127), {"kernel_shape": [3, 5], "strides": [2, 2],
                                                            "pads": [1, 2, 2, 0], "ceil_mode": 1}),
                                         ((1, 1, 5, 5), {"kernel_shape": [3, 3], "strides": [3, 3],
                                                         "pads": [2, 2, 2, 2]}),  # windows wholly in the padding
                                         ((2, 2, 7, 1), {"kernel_shape": [4, 1], "strides": [1, 1]}),
                                         ((1, 3, 9, 70), {"kernel_shape": [2, 2], "strides": [3, 1]})])
def test_maxpool_int8_rows_then_columns(dtype, shape, attrs):
    """The 8-bit 2-D path (window rows maxed into one row, then its columns; AVX-512 at
    column stride 2) against onnxruntime, extremes included."""
    x = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, shape, endpoint=True).astype(dtype)
    x.reshape(-1)[:7] = np.iinfo(dtype).min
    x.reshape(-1)[-7:] = np.iinfo(dtype).max
    check_with_ort("MaxPool", [x], attrs)


@pytest.mark.parametrize("shape,attrs", [((1, 3, 8, 9), {"kernel_shape": [3, 3], "strides": [2, 2]}),
                                         ((2, 2, 9, 7), {"kernel_shape": [2, 3], "strides": [2, 1],
                                                         "pads": [1, 1, 0, 1]}),
                                         ((2, 2, 9, 7), {"kernel_shape": [3, 3], "dilations": [2, 2]}),
                                         ((2, 3, 12), {"kernel_shape": [3], "strides": [2]})])
@pytest.mark.parametrize("storage_order", [0, 1])
def test_maxpool_indices(shape, attrs, storage_order):
    x = rng.permutation(np.arange(np.prod(shape))).reshape(shape).astype(np.float32)  # unique maxima
    check_node("MaxPool", [x], {**attrs, "storage_order": storage_order}, n_outputs=2)


@pytest.mark.parametrize("n", EDGE_SIZES)
def test_pool_edge_sizes(n):
    x = rng.standard_normal((1, 2, n, 3)).astype(np.float32)
    for op in ("MaxPool", "AveragePool"):
        check_node(op, [x], {"kernel_shape": [1, 2]})
    check_node("GlobalAveragePool", [x])
    check_node("GlobalMaxPool", [x])


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("shape", [(1, 3, 7, 7), (2, 5, 13), (1, 2, 3, 4, 5), (2, 1000, 1, 1), (1, 3, 127, 129)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_global_pool(op, shape, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    if op == "GlobalMaxPool" and len(shape) != 4:
        # onnx.reference reduces the wrong axes below / above rank 4 (and onnxruntime has no float64 kernel)
        got = run_mlrt(make_model(op, [x]), [x])[0]
        assert_same(got, x.max(axis=tuple(range(2, x.ndim)), keepdims=True), 0, 0, where=op)
    else:
        check_node(op, [x])


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pool_empty_batch(op):
    x = np.ones((0, 3, 4, 4), np.float32)
    assert run_mlrt(make_model(op, [x]), [x])[0].shape == (0, 3, 1, 1)


@pytest.mark.parametrize("n", [1, 2, 16, 17, 40, 1024])
def test_globalmaxpool_nan_rule(n):
    """A plane's NaN is skipped unless it is the plane's first value, which then stays (the
    plain loop's rule, kept by the 16 running maxima and their tail): planes with NaN first,
    NaN in the lanes and the tail, all NaN, and none."""
    x = rng.standard_normal((1, 4, n)).astype(np.float32)
    x[0, 0, 0] = np.nan
    x[0, 1, n // 2] = x[0, 1, n - 1] = np.nan
    x[0, 2, :] = np.nan
    got = run_mlrt(make_model("GlobalMaxPool", [x]), [x])[0].ravel()
    plain = []
    for plane in x[0]:
        m = plane[0]
        for v in plane[1:]:
            m = v if v > m else m
        plain.append(m)
    assert_same(got, np.array(plain, np.float32), 0, 0, where="GlobalMaxPool NaN")
    assert np.isnan(got[0]) and np.isnan(got[2]) and (n == 1 or not np.isnan(got[1]))


def test_pool_edge_values():
    x = np.array([[[[1.0, np.inf, -np.inf, 2.0], [-np.inf, -np.inf, 3.0, 1e-40],
                    [0.5, -0.0, 1e38, 3e38], [-1.0, 2.0, -3e38, -3e38]]]], np.float32)
    for op in ("MaxPool", "AveragePool"):
        check_node(op, [x], {"kernel_shape": [2, 2]})
    check_node("GlobalMaxPool", [x])


def test_maxpool_skips_nan():
    x = np.array([[[[np.nan, 1.0], [2.0, np.nan]]]], np.float32)
    y = run_mlrt(make_model("MaxPool", [x], {"kernel_shape": [2, 2]}), [x])[0]
    assert y.ravel().tolist() == [2.0]
    # the same through the rows-then-columns path: a window of NaN only gives -inf, as tap by tap
    x = np.full((1, 1, 7, 7), np.nan, np.float32)
    x[0, 0, 0, 0], x[0, 0, 6, 6] = 5.0, -np.inf
    y = run_mlrt(make_model("MaxPool", [x], {"kernel_shape": [3, 3], "strides": [2, 2]}), [x])[0]
    assert y[0, 0, 0, 0] == 5.0 and np.isneginf(y[0, 0, 2, 2]) and np.isneginf(y[0, 0, 1, 1])


def test_maxpool_stride2_skips_nan():
    """Column stride 2 on wide rows (the vector path and its edges): each window's largest
    value that is not NaN, -inf for a window of NaN only, as tap by tap."""
    x = rng.standard_normal((1, 2, 9, 75)).astype(np.float32)
    x[rng.random(x.shape) < 0.3] = np.nan
    x[0, 1, 2:5, 10:20] = np.nan
    for kernel, pads in (([3, 3], [1, 1, 1, 1]), ([2, 2], [0, 0, 0, 0])):
        y = run_mlrt(make_model("MaxPool", [x], {"kernel_shape": kernel, "strides": [2, 2], "pads": pads}), [x])[0]
        padded = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])), constant_values=np.nan)
        expected = np.full(y.shape, -np.inf, np.float32)
        for oh in range(y.shape[2]):
            for ow in range(y.shape[3]):
                window = padded[:, :, 2 * oh:2 * oh + kernel[0], 2 * ow:2 * ow + kernel[1]].reshape(2, -1)
                for c in range(2):
                    values = window[c][~np.isnan(window[c])]
                    if values.size:
                        expected[0, c, oh, ow] = values.max()
        np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("kernel", ["avx2", "blas"])
def test_maxpool_without_avx512(kernel):
    # MLRT_SGEMM_KERNEL narrows the vector ISA the kernels use, once per process: the
    # column-stride-2 MaxPool's other paths, in a child
    import os
    import subprocess
    import sys
    code = ("import sys; sys.path.insert(0, %r); import test_pool as t; "
            "[t.test_pool_windows('MaxPool', s, dict(a)) for s, a in t.WINDOWS]; "
            "t.test_maxpool_stride2_skips_nan(); t.test_maxpool_skips_nan()") % os.path.dirname(__file__)
    env = dict(os.environ, MLRT_SGEMM_KERNEL=kernel)
    tests = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    env["PYTHONPATH"] = os.pathsep.join([tests, env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_pool_empty_batch():
    check_node("MaxPool", [np.ones((0, 3, 4, 4), np.float32)], {"kernel_shape": [2, 2]})


@pytest.mark.parametrize("op,shape,attrs", [
    ("MaxPool", (1, 3, 4, 4), {"kernel_shape": [5, 5]}),          # window larger than input
    ("MaxPool", (1, 3, 4, 4), {"kernel_shape": [2]}),             # one value for two dims
    ("AveragePool", (3, 4), {"kernel_shape": [2]}),               # no spatial dims
    ("LpPool", (1, 3, 4, 4), {"kernel_shape": [2, 2], "p": 0}),
    ("MaxPool", (1, 3, 4, 4), {"kernel_shape": [2, 2], "auto_pad": "BOGUS"}),
    ("MaxPool", (1, 3, 4, 4), {"kernel_shape": [2, 2], "strides": [0, 1]}),
    ("GlobalMaxPool", (3,), {}),
])
def test_pool_bad_input(op, shape, attrs):
    x = np.ones(shape, np.float32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model(op, [x], attrs), [x])


def test_maxpool_int_indices_type():
    x = rng.standard_normal((1, 1, 4, 4)).astype(np.float32)
    y, i = run_mlrt(make_model("MaxPool", [x], {"kernel_shape": [2, 2]}, n_outputs=2), [x])
    assert i.dtype == np.int64 and i.shape == y.shape

"""Conv against onnx.reference: 1-D/2-D/3-D, groups and depthwise, strides, dilations,
pads and auto_pad, bias, float64, the pointwise / depthwise / im2col / direct / Winograd
paths, long 1-D sequences, threads, edge values and bad input.  Each float32 case also runs on the AVX2 micro-kernel and
on BLAS (MLRT_SGEMM_KERNEL, read once per process) in test_conv_kernel_choices."""

import contextlib
import os

import numpy as np
import pytest

import mlrt
from oracle import EDGE_VALUES, assert_same, check_node, make_model, run_mlrt, run_reference

rng = np.random.default_rng(0)


def conv(xs, ws, attrs=None, bias=True, dtype=np.float32, **kw):
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    inputs = [x, w] + ([rng.standard_normal(ws[0]).astype(dtype)] if bias else [])
    return check_node("Conv", inputs, attrs or {}, **kw)


CASES = [
    ((1, 3, 7, 9), (4, 3, 3, 3), {}),                                                   # im2col, no pads
    ((2, 4, 8, 8), (6, 2, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}),                     # grouped
    ((1, 6, 9, 9), (6, 1, 3, 3), {"group": 6, "pads": [1, 1, 1, 1]}),                     # depthwise
    ((1, 6, 9, 9), (12, 1, 3, 3), {"group": 6, "pads": [1, 0, 2, 1], "strides": [2, 2]}),  # depthwise x2
    ((1, 6, 10, 11), (6, 1, 3, 3), {"group": 6, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((1, 6, 10, 11), (6, 1, 5, 3), {"group": 6, "pads": [2, 1, 2, 1], "strides": [3, 1], "dilations": [2, 1]}),
    ((2, 8, 13, 13), (16, 8, 1, 1), {}),                                                  # pointwise
    ((1, 8, 13, 13), (16, 2, 1, 1), {"group": 4}),                                        # grouped pointwise
    ((1, 8, 13, 13), (16, 8, 1, 1), {"strides": [2, 2]}),                                 # strided 1x1
    ((1, 3, 13, 17), (5, 3, 3, 3), {"strides": [2, 3], "dilations": [2, 1], "pads": [3, 0, 1, 2]}),
    ((1, 3, 13, 17), (5, 3, 3, 3), {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ((1, 3, 13, 17), (5, 3, 4, 4), {"auto_pad": "SAME_LOWER", "strides": [2, 2]}),
    ((1, 3, 13, 17), (5, 3, 3, 3), {"auto_pad": "VALID", "strides": [2, 2]}),
    ((1, 3, 13, 17), (5, 3, 3, 3), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    ((1, 3, 13, 17), (5, 3, 3, 3), {"dilations": [2, 3], "pads": [2, 1, 0, 3]}),          # direct, dilated
    ((2, 4, 9, 10), (6, 2, 2, 3), {"group": 2, "pads": [0, 0, 3, 2]}),                    # large end pads
    ((1, 2, 70, 3), (67, 2, 3, 1), {"pads": [1, 0, 1, 0]}),                               # tall and narrow
    ((2, 3, 20), (4, 3, 5), {"pads": [2, 1], "strides": [2]}),                           # 1-D
    ((2, 4, 20), (4, 1, 3), {"group": 4, "pads": [1, 1], "dilations": [2]}),            # 1-D depthwise
    ((1, 2, 5, 6, 7), (3, 2, 3, 2, 3), {"pads": [1, 0, 1, 1, 1, 0], "strides": [1, 2, 1]}),  # 3-D
    ((1, 4, 5, 6, 7), (4, 1, 3, 3, 3), {"group": 4, "pads": [1, 1, 1, 1, 1, 1]}),         # 3-D depthwise
    ((1, 2, 3, 4, 3, 4), (2, 2, 2, 2, 2, 2), {}),                                         # 4-D
    ((1, 1, 1, 1), (1, 1, 1, 1), {}),
    ((1, 3, 5, 5), (2, 3, 5, 5), {}),                                                     # window = input
    ((1, 3, 2, 2), (2, 3, 3, 3), {"pads": [2, 2, 2, 2]}),                                 # mostly padding
    # the direct path's stride phases: odd sizes, H or W of 1, strides up to 4 (5: packed)
    ((1, 3, 1, 13), (4, 3, 1, 3), {"strides": [1, 2], "pads": [0, 1, 0, 1]}),
    ((1, 2, 13, 1), (3, 2, 3, 1), {"strides": [2, 1], "pads": [1, 0, 1, 0]}),
    ((1, 3, 23, 19), (8, 3, 7, 7), {"strides": [4, 4], "pads": [3, 2, 1, 3]}),
    ((2, 5, 17, 15), (6, 5, 5, 3), {"strides": [3, 2], "dilations": [1, 2], "pads": [2, 2, 0, 1]}),
    ((1, 4, 12, 14), (6, 2, 3, 3), {"strides": [2, 2], "group": 2, "pads": [1, 1, 1, 1]}),
    ((1, 3, 9, 9), (4, 3, 3, 3), {"strides": [5, 5]}),
    # one input channel, many filters: a plain product (not depthwise)
    ((1, 1, 512), (16, 1, 16), {"strides": [8]}),
    ((2, 1, 13, 17), (8, 1, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
]


@pytest.mark.parametrize("xs,ws,attrs", CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_conv_cases(xs, ws, attrs, bias):
    conv(xs, ws, attrs, bias)


@pytest.mark.parametrize("xs,ws,attrs", CASES[:8] + CASES[14:18])
def test_conv_float64(xs, ws, attrs):
    conv(xs, ws, attrs, dtype=np.float64)


# depthwise 3 x 3 (float32 on AVX-512: rows of outputs, stride 2 split in registers, flat
# narrow planes; the portable path elsewhere): one row or column, widths 1, 2, 13, 127
# (vector tails), strides 1 to 3, asymmetric and large pads, channel multiplier 2
DEPTHWISE = [
    ((1, 3, 1, 1), (3, 1, 3, 3), {"group": 3, "pads": [1, 1, 1, 1]}),
    ((2, 3, 1, 13), (3, 1, 3, 3), {"group": 3, "pads": [1, 1, 1, 1]}),
    ((1, 3, 13, 1), (6, 1, 3, 3), {"group": 3, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((1, 3, 5, 2), (3, 1, 3, 3), {"group": 3, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((1, 3, 9, 13), (3, 1, 3, 3), {"group": 3, "pads": [0, 1, 2, 0]}),
    ((1, 3, 4, 127), (3, 1, 3, 3), {"group": 3, "pads": [1, 1, 1, 1]}),
    ((1, 3, 13, 127), (6, 1, 3, 3), {"group": 3, "pads": [1, 0, 1, 2], "strides": [2, 2]}),
    ((1, 3, 21, 33), (3, 1, 3, 3), {"group": 3, "pads": [1, 1, 1, 1], "strides": [2, 1]}),
    ((1, 3, 12, 13), (3, 1, 3, 3), {"group": 3, "pads": [2, 3, 0, 1], "strides": [1, 2]}),
    ((1, 3, 20, 15), (3, 1, 3, 3), {"group": 3, "pads": [1, 1, 1, 1], "strides": [3, 3]}),
    ((1, 3, 7, 40), (3, 1, 3, 3), {"group": 3}),
]


@pytest.mark.parametrize("xs,ws,attrs", DEPTHWISE)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_depthwise_3x3(xs, ws, attrs, bias, dtype):
    conv(xs, ws, attrs, bias, dtype=dtype)


@pytest.mark.parametrize("c", [1, 2, 13, 127])
def test_conv_channel_sizes(c):
    conv((1, c, 9, 9), (c, c, 3, 3), {"pads": [1, 1, 1, 1]}, atol=1e-4)  # sums of up to 1143 terms
    conv((1, c, 9, 9), (c, 1, 3, 3), {"group": c, "pads": [1, 1, 1, 1]})


@pytest.mark.parametrize("xs,ws,attrs", [
    ((1, 64, 28, 28), (64, 64, 3, 3), {"pads": [1, 1, 1, 1]}),   # several column tiles
    ((1, 256, 7, 7), (256, 256, 3, 3), {"pads": [1, 1, 1, 1]}),  # filter blocks
    ((3, 32, 28, 28), (96, 32, 1, 1), {}),
    ((1, 3, 64, 64), (16, 3, 7, 7), {"pads": [3, 3, 3, 3], "strides": [2, 2]}),
    ((1, 3, 224, 224), (64, 3, 7, 7), {"pads": [3, 3, 3, 3], "strides": [2, 2]}),  # a ResNet stem: tiles, phases
    ((1, 64, 28, 28), (128, 64, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((1, 96, 28, 28), (96, 1, 3, 3), {"group": 96, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    # column stride 2: both column phases split from one pass over each input row (SIMD
    # runs and their tails), starting on either phase, rows cut short by a wide input
    ((1, 3, 37, 224), (64, 3, 3, 3), {"strides": [2, 2]}),                          # SqueezeNet's stem
    ((1, 3, 33, 70), (16, 3, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}),     # YOLO's stem
    ((1, 3, 30, 91), (8, 3, 3, 3), {"pads": [2, 1, 0, 2], "strides": [2, 2]}),
    ((1, 2, 21, 77), (8, 2, 3, 3), {"pads": [0, 3, 1, 0], "strides": [3, 2]}),
    ((1, 3, 19, 80), (8, 3, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2], "dilations": [1, 2]}),
    # column stride 4: the four column phases split from one pass (runs of 16 and tails)
    ((1, 3, 23, 227), (16, 3, 11, 11), {"pads": [2, 2, 2, 2], "strides": [4, 4]}),  # AlexNet's stem
    ((1, 2, 13, 150), (8, 2, 5, 5), {"pads": [1, 3, 2, 0], "strides": [2, 4]}),
])
def test_conv_large(xs, ws, attrs):
    conv(xs, ws, attrs, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("xs,ws,attrs", [((2, 32, 64, 48), (32, 32, 3, 3), {"pads": [1, 1, 1, 1]}),
                                         ((1, 32, 64, 48), (32, 4, 3, 3), {"group": 8, "pads": [1, 1, 1, 1]}),
                                         ((1, 64, 64, 48), (96, 64, 1, 1), {}),
                                         ((1, 48, 96, 96), (48, 1, 3, 3), {"group": 48, "pads": [1, 1, 1, 1]}),
                                         ((1, 96, 56, 56), (96, 1, 3, 3), {"group": 96, "pads": [1, 1, 1, 1],
                                                                           "strides": [2, 2]}),
                                         ((1, 384, 7, 7), (384, 1, 3, 3), {"group": 384, "pads": [1, 1, 1, 1]}),
                                         ((1, 48, 96, 96), (48, 1, 5, 5), {"group": 48, "strides": [2, 2]})])
def test_conv_threads_agree(xs, ws, attrs):
    # big enough that every path splits across the pool
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    model = make_model("Conv", [x, w], attrs)
    one = run_mlrt(model, [x, w], sess_options=_options(1))[0]
    many = run_mlrt(model, [x, w], sess_options=_options(4))[0]
    np.testing.assert_allclose(one, many, rtol=1e-5, atol=1e-4)
    check_node("Conv", [x, w], attrs, rtol=1e-4, atol=1e-4)


def _options(threads):
    import mlrt.lowlevel as ml
    o = ml.SessionOptions()
    o.intra_op_num_threads = threads
    return o


def test_conv_empty_batch():
    conv((0, 3, 5, 5), (2, 3, 3, 3))


def test_conv_edge_values():
    x = np.resize(EDGE_VALUES, (1, 2, 5, 5)).astype(np.float32)
    w = np.ones((3, 2, 1, 1), np.float32)
    check_node("Conv", [x, w], {}, atol=1e-30)  # pointwise: inf and NaN propagate, denormals survive
    check_node("Conv", [x, np.ones((2, 1, 3, 3), np.float32)], {"group": 2, "pads": [1, 1, 1, 1]})
    x = np.resize(EDGE_VALUES, (1, 2, 6, 37)).astype(np.float32)
    for strides in ([1, 1], [2, 2]):  # depthwise rows, stride 1 and 2
        attrs = {"group": 2, "pads": [1, 1, 1, 1], "strides": strides}
        check_node("Conv", [x, np.ones((2, 1, 3, 3), np.float32)], attrs)


@pytest.mark.parametrize("xs,ws,attrs", [
    ((1, 4, 5, 5), (2, 3, 3, 3), {}),                   # channels differ
    ((1, 4, 5, 5), (3, 2, 3, 3), {"group": 2}),         # filters not divisible by group
    ((1, 3, 5, 5), (2, 3, 3, 3), {"kernel_shape": [2, 2]}),
    ((1, 3, 2, 2), (2, 3, 3, 3), {}),                   # window larger than input
    ((1, 3, 5, 5), (2, 3, 3, 3), {"strides": [1]}),
    ((1, 3, 5, 5), (2, 3, 3), {}),                      # rank mismatch
])
def test_conv_bad_input(xs, ws, attrs):
    x = np.ones(xs, np.float32)
    w = np.ones(ws, np.float32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Conv", [x, w], attrs), [x, w])


def test_conv_bad_bias():
    x, w, b = np.ones((1, 3, 5, 5), np.float32), np.ones((2, 3, 3, 3), np.float32), np.ones(3, np.float32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Conv", [x, w, b]), [x, w, b])


@pytest.mark.parametrize("kernel", ["avx2", "blas"])
def test_conv_kernel_choices(kernel):
    # the micro-kernel is chosen once per process: run a few cases in a child with the override
    import os
    import subprocess
    import sys
    code = ("import sys; sys.path.insert(0, %r); import test_conv as t; "
            "[t.conv(xs, ws, a, atol=1e-4) for xs, ws, a in t.CASES + t.DEPTHWISE]; "
            "t.conv((1, 13, 9, 11), (13, 13, 3, 3), {'pads': [1, 1, 1, 1]}, atol=1e-4); "
            "[t.test_conv_constant_weights(xs, ws, a, True, 2) for xs, ws, a in t.CONST_W]; "
            "[t.test_conv_winograd(xs, ws, a, 2) for xs, ws, a in t.WINOGRAD]; "
            "[t.test_conv_long_1d(xs, ws, a, 2) for xs, ws, a in t.LONG_1D]; "
            "[t.test_fusedconv_constant_weights(*f, *c, True) for f in t.FUSED[:3] for c in t.CONST_W[:2]]"
            ) % os.path.dirname(__file__)
    env = dict(os.environ, MLRT_SGEMM_KERNEL=kernel)
    tests = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    env["PYTHONPATH"] = os.pathsep.join([tests, env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


FUSED = [("Relu", None, lambda v, p: np.maximum(v, 0)),
         ("LeakyRelu", [0.1], lambda v, p: np.where(v >= 0, v, p[0] * v)),
         ("Clip", [-0.5, 0.75], lambda v, p: np.clip(v, p[0], p[1])),
         ("Sigmoid", None, lambda v, p: 1 / (1 + np.exp(-v))),
         ("Tanh", None, lambda v, p: np.tanh(v)),
         ("HardSigmoid", [0.3, 0.4], lambda v, p: np.clip(0.3 * v + 0.4, 0, 1)),
         ("HardSwish", None, lambda v, p: v * np.clip(v / 6 + 0.5, 0, 1)),
         ("HardSwish", [0.25, 0.4], lambda v, p: v * np.clip(0.25 * v + 0.4, 0, 1)),
         ("Swish", None, lambda v, p: v / (1 + np.exp(-v))),
         ("Swish", [1.7], lambda v, p: v / (1 + np.exp(-1.7 * v))),
         ("", None, lambda v, p: v)]


@pytest.mark.parametrize("name,params,fn", FUSED)
@pytest.mark.parametrize("xs,ws,attrs", [((1, 3, 9, 11), (8, 3, 3, 3), {"pads": [1, 1, 1, 1]}),          # direct
                                         ((1, 3, 9, 11), (8, 3, 3, 3), {"strides": [2, 2]}),              # packed
                                         ((1, 3, 7, 40), (8, 3, 3, 3), {"pads": [1, 1, 1, 1]}),  # direct, by rows
                                         ((1, 3, 9, 61), (8, 3, 3, 3), {"pads": [1, 0, 1, 1], "strides": [2, 2]}),
                                         ((2, 8, 7, 7), (16, 8, 1, 1), {}),                               # pointwise
                                         ((1, 6, 9, 9), (6, 1, 3, 3), {"group": 6, "pads": [1, 1, 1, 1]}),  # depthwise
                                         ((1, 4, 11, 37), (4, 1, 3, 3), {"group": 4, "pads": [1, 1, 1, 1]}),
                                         ((1, 4, 11, 37), (4, 1, 3, 3), {"group": 4, "pads": [1, 1, 1, 1],
                                                                         "strides": [2, 2]}),
                                         ((1, 2, 4, 5, 6), (3, 2, 2, 2, 2), {}),                          # 3-D
                                         ((1, 8, 301), (12, 8, 3), {"pads": [1, 1]}),                     # 1-D
                                         ((1, 8, 1203), (16, 8, 4), {"strides": [4], "pads": [1, 2]})])
@pytest.mark.parametrize("with_z", [False, True])
def test_fusedconv(name, params, fn, xs, ws, attrs, with_z):
    """com.microsoft FusedConv = activation(Conv + Z): checked as the activation of the reference Conv."""
    x, w, b, z, fattrs, expected = _fused_case(name, params, fn, xs, ws, attrs, with_z)
    inputs = [x, w, b] + ([z] if with_z else [])
    got = run_mlrt(make_model("FusedConv", inputs, fattrs, opset=1, domain="com.microsoft"), inputs)[0]
    assert_same(got, expected, 1e-4, 1e-4, where=f"FusedConv {name}")


def _fused_case(name, params, fn, xs, ws, attrs, with_z):
    """Inputs x, w, b, z (or None), FusedConv's attributes, and the expected result: the
    activation of the reference Conv (+ Z)."""
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    conv_out = run_reference(make_model("Conv", [x, w, b], attrs), [x, w, b])[0]
    z = rng.standard_normal(conv_out.shape).astype(np.float32) if with_z else None
    fattrs = {**attrs, "activation": name, **({"activation_params": params} if params else {})}
    return x, w, b, z, fattrs, fn(conv_out + (z if with_z else 0), params).astype(np.float32)


@pytest.mark.parametrize("name,params,fn", [FUSED[0], FUSED[2], FUSED[3], FUSED[8], FUSED[-1]])
@pytest.mark.parametrize("xs,attrs", [((2, 5, 37, 29), {"pads": [1, 1, 1, 1]}),
                                      ((1, 3, 67, 40), {"pads": [1, 0, 1, 2], "strides": [2, 2]}),
                                      ((1, 4, 101, 19), {"pads": [0, 1, 2, 1], "strides": [2, 1]})])
@pytest.mark.parametrize("with_z", [False, True])
def test_fusedconv_depthwise_row_bands(name, params, fn, xs, attrs, with_z):
    """Tall depthwise planes are cut into bands of rows, one per thread (the rows the convs
    around them compute on that thread): 2 and 3 threads give one thread's bits, with Z
    and with the activations the 3 x 3 path stores and those finished after it."""
    ws = (xs[1], 1, 3, 3)
    attrs = {**attrs, "group": xs[1]}
    x, w, b, z, fattrs, expected = _fused_case(name, params, fn, xs, ws, attrs, with_z)
    inputs = [x, w, b] + ([z] if with_z else [])
    model = make_model("FusedConv", inputs, fattrs, opset=1, domain="com.microsoft")
    one = run_mlrt(model, inputs, sess_options=_options(1))[0]
    assert_same(one, expected, 1e-4, 1e-4, where=f"FusedConv {name}")
    for threads in (2, 3):
        np.testing.assert_array_equal(run_mlrt(model, inputs, sess_options=_options(threads))[0], one)


def test_fusedconv_bad_input():
    x, w = np.ones((1, 3, 5, 5), np.float32), np.ones((2, 3, 3, 3), np.float32)
    z = np.ones((1, 2, 4, 4), np.float32)  # Y is (1, 2, 3, 3)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("FusedConv", [x, w, None, z], {}, opset=1, domain="com.microsoft"), [x, w, None, z])
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("FusedConv", [x, w], {"activation": "Softsign"}, opset=1, domain="com.microsoft"), [x, w])


# constant W: the plan packs it once (mlrt_conv_pack_weights) and the float32 micro-kernels
# run a strip's last columns (output sizes not a multiple of 16) on its panels; pointwise,
# strided 1x1 (packed strips) and k x k (direct) convs, channel counts 1, 13, 127, batch 2,
# groups (panels per group), filter blocks split across threads
CONST_W = [
    ((1, 13, 7, 7), (127, 13, 1, 1), {}),                                  # 49 = 48 + 1 column
    ((2, 127, 14, 14), (13, 127, 1, 1), {}),                               # 196 = 192 + 4, 13 rows
    ((1, 1, 9, 9), (13, 1, 1, 1), {}),                                     # one input channel
    ((1, 16, 1, 1), (70, 16, 1, 1), {}),                                   # one position, 70 rows
    ((2, 8, 3, 5), (24, 4, 1, 1), {"group": 2}),                           # 15 columns, 12 rows a group
    ((1, 32, 5, 5), (96, 8, 1, 1), {"group": 4}),                          # 24 rows a group
    ((1, 300, 7, 7), (40, 300, 1, 1), {}),                                 # two blocks of k
    ((1, 24, 13, 13), (40, 24, 1, 1), {"strides": [2, 2]}),                # strided 1x1, straight into Y: 49
    ((2, 13, 9, 9), (127, 13, 3, 3), {"pads": [1, 1, 1, 1]}),              # direct: grid 9 x 11 = 99
    ((1, 6, 10, 10), (20, 3, 3, 3), {"group": 2, "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 8, 30, 30), (16, 8, 1, 1), {}),                                   # 900 = 14 * 64 + 4
    ((1, 64, 47, 47), (16, 64, 1, 1), {}),                                 # few filters, packed: 2209 positions
    ((1, 4, 33, 33), (20, 4, 3, 3), {"strides": [5, 5]}),                  # packed strips: 49
    ((1, 3, 5, 6, 7), (8, 3, 2, 2, 2), {}),                                # 3-D, packed strips: 120
]


# 1-D convs over long sequences (one output row: the packed strips of kernels/conv_gemm.c,
# in column tiles across the threads; the filter vectors take rows of 256 or fewer): odd
# lengths, strides 1 to 8 (stride = kernel too), pads, dilation, groups, batch 2, an odd
# number of filters, patch rows in several blocks; each also as [N, C, 1, L] in
# test_conv_long_1d, which must take the same path
LONG_1D = [
    ((1, 64, 1031), (48, 64, 3), {"pads": [1, 1]}),
    ((2, 24, 4099), (32, 24, 4), {"strides": [4]}),                   # stride = kernel
    ((1, 16, 3001), (24, 16, 8), {"strides": [8]}),                   # stride over 4
    ((1, 20, 1500), (36, 20, 3), {"dilations": [3], "pads": [3, 2]}),
    ((1, 32, 2000), (32, 8, 5), {"group": 4, "pads": [2, 2]}),        # groups
    ((1, 8, 777), (17, 8, 7), {"strides": [2], "pads": [3, 0]}),
    ((1, 130, 1024), (64, 130, 5), {"pads": [2, 2]}),                 # 650 patch rows: 3 blocks of k
    ((1, 12, 1029), (20, 12, 5), {"strides": [4], "pads": [2, 1]}),
]


def _const_w_model(op, x, w, b, z, attrs, domain=""):
    from onnx import TensorProto, helper, numpy_helper
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)]
    inits = [numpy_helper.from_array(w, "w")] + ([numpy_helper.from_array(b, "b")] if b is not None else [])
    names = ["x", "w", "b" if b is not None else ""]
    if z is not None:
        ins.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, z.shape))
        names.append("z")
    while names[-1] == "":
        names.pop()
    node = helper.make_node(op, names, ["y"], domain=domain, **attrs)
    graph = helper.make_graph([node], "conv", ins, [helper.make_empty_tensor_value_info("y")], inits)
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(graph, opset_imports=opsets)


@pytest.mark.parametrize("xs,ws,attrs", CONST_W)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_conv_constant_weights(xs, ws, attrs, bias, threads):
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32) if bias else None
    expected = run_reference(make_model("Conv", [x, w] + ([b] if bias else []), attrs), [x, w] + ([b] if bias else []))
    with _winograd_off():  # the cases are written for the packed and direct paths
        got = run_mlrt(_const_w_model("Conv", x, w, b, None, attrs), [x], sess_options=_options(threads))
    assert_same(got[0], expected[0], 1e-4, 1e-4, where="Conv, constant W")


@pytest.mark.parametrize("name,params,fn", [f for f in FUSED if f[0] in ("Relu", "Clip", "HardSwish", "Swish", "")])
@pytest.mark.parametrize("xs,ws,attrs", [CONST_W[i] for i in (0, 1, 4, 7, 8, 11)] + [LONG_1D[1]])
@pytest.mark.parametrize("with_z", [False, True])
def test_fusedconv_constant_weights(name, params, fn, xs, ws, attrs, with_z):
    """Bias, Z and the activation finished in the micro-kernels' store (the column kernels' too)."""
    x, w, b, z, fattrs, expected = _fused_case(name, params, fn, xs, ws, attrs, with_z)
    model = _const_w_model("FusedConv", x, w, b, z, fattrs, domain="com.microsoft")
    with _winograd_off():
        got = run_mlrt(model, [x] + ([z] if with_z else []))[0]
    assert_same(got, expected, 1e-4, 1e-4, where=f"FusedConv {name}, constant W")


@contextlib.contextmanager
def _winograd_off():
    """MLRT_CONV_WINOGRAD=0 while a session plans: the Winograd path is not taken."""
    before = os.environ.get("MLRT_CONV_WINOGRAD")
    os.environ["MLRT_CONV_WINOGRAD"] = "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ["MLRT_CONV_WINOGRAD"]
        else:
            os.environ["MLRT_CONV_WINOGRAD"] = before


# Winograd F(4x4, 3x3) (kernels/conv_winograd.c): float32 3 x 3, stride 1, constant W with
# enough channels x filters (512) and tiles of 4 x 4 outputs (8)
WINOGRAD = [  # (each one the path takes: 32 channels a group or more, mlrt_conv_winograd_fits)
    ((1, 32, 16, 16), (16, 32, 3, 3), {"pads": [1, 1, 1, 1]}),               # 16 tiles, one block
    ((2, 32, 17, 17), (127, 32, 3, 3), {"pads": [1, 1, 1, 1]}),              # batch 2, 25 tiles, 3 filter blocks
    ((1, 40, 30, 29), (64, 40, 3, 3), {"pads": [2, 0, 1, 3]}),               # uneven pads, part tiles
    ((1, 128, 30, 30), (96, 64, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}),  # groups
    ((1, 300, 12, 12), (16, 300, 3, 3), {"pads": [1, 1, 1, 1]}),             # channels in 2 blocks of k
    ((1, 32, 100, 100), (16, 32, 3, 3), {}),                                 # 625 tiles: chunks of tile rows
    ((1, 32, 6, 70), (64, 32, 3, 3), {"pads": [1, 1, 1, 1]}),                # 2 x 18 tiles
]


def _exact_conv(x, w, b, attrs):
    """The reference Conv in float64: the Winograd path's own rounding is measured against it."""
    inputs = [v.astype(np.float64) for v in (x, w, b) if v is not None]
    return run_reference(make_model("Conv", inputs, attrs), inputs)[0]


def _winograd_fits(xs, ws, attrs) -> bool:
    from mlrt.native import _lib
    from mlrt.native.ops._conv import pad6
    group = attrs.get("group", 1)
    pads = attrs.get("pads", [0, 0, 0, 0])
    params = dict(group=group, n_spatial=2, kernel=pad6(ws[2:], 1), strides=pad6([1, 1], 1),
                  dilations=pad6([1, 1], 1), pads_begin=pad6(pads[:2]), pads_end=pad6(pads[2:]))
    _, struct, _ = _lib.pack_params("mlrt_conv_params", params)
    return bool(_lib.lib().mlrt_conv_winograd_fits(struct, xs[1], ws[0], xs[2], xs[3]))


def _random_conv(xs, ws, attrs, threads, gen):
    """A Conv of random X, W (a constant) and B drawn from `gen`: (x, model, the exact
    float64 result, mlrt's result on `threads` threads, the largest exact magnitude)."""
    x = gen.standard_normal(xs).astype(np.float32)
    w = gen.standard_normal(ws).astype(np.float32)
    b = gen.standard_normal(ws[0]).astype(np.float32)
    exact = _exact_conv(x, w, b, attrs)
    model = _const_w_model("Conv", x, w, b, None, attrs)
    got = run_mlrt(model, [x], sess_options=_options(threads))[0]
    return x, model, exact, got, float(np.abs(exact).max())


def _as_rows(xs, ws, attrs):
    """The same conv over [N, C, 1, L] with a 1 x k kernel."""
    twice = {"pads": lambda v: [0, v[0], 0, v[1]], "strides": lambda v: [1] + v, "dilations": lambda v: [1] + v}
    return ((xs[0], xs[1], 1, xs[2]), (ws[0], ws[1], 1, ws[2]),
            {k: twice[k](v) if k in twice else v for k, v in attrs.items()})


@pytest.mark.parametrize("xs,ws,attrs", LONG_1D)
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_conv_long_1d(xs, ws, attrs, threads):
    """Within float32 rounding of the exact conv, W constant (packed by the plan) and W an
    input, on 1, 2 and 4 threads; the [N, C, 1, L] form bit-equal to the [N, C, L] one."""
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    exact = _exact_conv(x, w, b, attrs)
    scale = float(np.abs(exact).max())
    got = run_mlrt(_const_w_model("Conv", x, w, b, None, attrs), [x], sess_options=_options(threads))[0]
    np.testing.assert_allclose(got, exact, rtol=1e-4, atol=2e-6 * scale, err_msg="Conv 1-D, constant W")
    given = run_mlrt(make_model("Conv", [x, w, b], attrs), [x, w, b], sess_options=_options(threads))[0]
    np.testing.assert_allclose(given, exact, rtol=1e-4, atol=2e-6 * scale, err_msg="Conv 1-D, W an input")
    xs4, ws4, attrs4 = _as_rows(xs, ws, attrs)
    rows = run_mlrt(_const_w_model("Conv", x.reshape(xs4), w.reshape(ws4), b, None, attrs4), [x.reshape(xs4)],
                    sess_options=_options(threads))[0]
    assert np.array_equal(rows.reshape(got.shape), got), "[N, C, 1, L] and [N, C, L] took different paths"


@pytest.mark.parametrize("xs,ws,attrs", WINOGRAD)
@pytest.mark.parametrize("threads", [1, 2])
def test_conv_winograd(xs, ws, attrs, threads):
    """Within a few ulp of the largest terms of the exact sum, and not the direct path's
    result (so the path really ran where the CPU has micro-kernels)."""
    x, model, exact, got, scale = _random_conv(xs, ws, attrs, threads, rng)
    np.testing.assert_allclose(got, exact, rtol=1e-4, atol=2e-5 * scale, err_msg="Conv, Winograd")
    with _winograd_off():
        direct = run_mlrt(model, [x], sess_options=_options(threads))[0]
    np.testing.assert_allclose(direct, exact, rtol=1e-4, atol=2e-6 * scale, err_msg="Conv, direct")
    assert _winograd_fits(xs, ws, attrs) or not _micro_kernels(), "a case the Winograd path does not take"
    if _winograd_fits(xs, ws, attrs):
        assert not np.array_equal(got, direct), "the Winograd path did not run"


@pytest.mark.parametrize("name,params,fn", [f for f in FUSED if f[0] in ("Relu", "Clip", "HardSwish", "Swish", "")])
@pytest.mark.parametrize("xs,ws,attrs", [WINOGRAD[i] for i in (0, 2, 5)])
@pytest.mark.parametrize("with_z", [False, True])
def test_fusedconv_winograd(name, params, fn, xs, ws, attrs, with_z):
    """Bias, Z and the activation finished on the Winograd path's rows."""
    x, w, b, z, fattrs, expected = _fused_case(name, params, fn, xs, ws, attrs, with_z)
    model = _const_w_model("FusedConv", x, w, b, z, fattrs, domain="com.microsoft")
    got = run_mlrt(model, [x] + ([z] if with_z else []))[0]
    scale = float(np.abs(_exact_conv(x, w, b, attrs) + (z if with_z else 0)).max())  # before the activation
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=3e-5 * scale, err_msg=f"FusedConv {name}, Winograd")


def test_conv_winograd_fits_only_3x3_stride_1():
    assert _winograd_fits((1, 64, 56, 56), (64, 64, 3, 3), {"pads": [1, 1, 1, 1]}) or not _micro_kernels()
    assert not _winograd_fits((1, 64, 7, 7), (64, 64, 3, 3), {"pads": [1, 1, 1, 1]})   # 4 tiles
    assert not _winograd_fits((1, 8, 56, 56), (8, 8, 3, 3), {"pads": [1, 1, 1, 1]})     # 8 x 8 products
    # under 32 channels the transforms cost more than they save; to 32 filters or more the
    # filter vectors are as fast until 2048 channel-filter pairs; to fewer, Winograd stays
    assert not _winograd_fits((1, 16, 38, 16), (32, 16, 3, 3), {"pads": [1, 1, 1, 1]})
    assert not _winograd_fits((1, 16, 160, 160), (16, 16, 3, 3), {"pads": [1, 1, 1, 1]})
    assert not _winograd_fits((1, 32, 56, 56), (32, 32, 3, 3), {"pads": [1, 1, 1, 1]})
    m = _micro_kernels()
    assert _winograd_fits((1, 32, 80, 80), (64, 32, 3, 3), {"pads": [1, 1, 1, 1]}) or not m   # 2048 pairs
    assert _winograd_fits((1, 64, 28, 28), (16, 64, 3, 3), {"pads": [1, 1, 1, 1]}) or not m   # 16 filters
    assert not _winograd_fits((1, 64, 56, 56), (64, 64, 5, 5), {"pads": [2, 2, 2, 2]})  # 5 x 5


def _micro_kernels() -> bool:
    """Whether this CPU has the strip micro-kernels (W packs into a nonzero size for them)."""
    from mlrt.native import _lib
    ffi = _lib.ffi()
    size = ffi.new("int64_t *")
    _lib.lib().mlrt_conv_pack_weights(1, 6, 9, ffi.NULL, 0, size, ffi.NULL)
    return size[0] > 0


def test_conv_constant_weights_equal_columns():
    """Equal input columns give bitwise equal outputs, whether a strip or a column kernel
    computes them (one sequence of fused multiply-adds per element)."""
    from mlrt.native import _lib
    if _lib.ffi().string(_lib.lib().mlrt_cpu_isa_name()) == b"portable":
        pytest.skip("the portable path multiplies on OpenBLAS, whose edge kernels round differently from its "
                    "main ones (MLRT_ISA=portable): the property is mlrt's strip kernels'")
    x = np.repeat(rng.standard_normal((1, 40, 1, 1)).astype(np.float32), 49, axis=3).reshape(1, 40, 7, 7)
    w = rng.standard_normal((37, 40, 1, 1)).astype(np.float32)
    b = rng.standard_normal(37).astype(np.float32)
    got = run_mlrt(_const_w_model("Conv", x, w, b, None, {}), [x])[0].reshape(37, 49)
    assert (got == got[:, :1]).all()


def test_conv_pack_weights_sizes():
    from mlrt.native import _lib
    ffi, lib = _lib.ffi(), _lib.lib()
    size = ffi.new("int64_t *")
    assert lib.mlrt_conv_pack_weights(2, 26, 5, ffi.NULL, 0, size, ffi.NULL) == 0
    assert size[0] in (0, 2 * 18 * 5)  # 13 rows a group fill 3 panels of 6 (0: no micro-kernels)
    assert lib.mlrt_conv_pack_weights(2, 23, 5, ffi.NULL, 0, size, ffi.NULL) != 0  # filters not divisible
    assert lib.mlrt_conv_pack_weights(0, 24, 5, ffi.NULL, 0, size, ffi.NULL) != 0


def test_conv_winograd_size_refuses_bad_sizes():
    """The C entry points answer nonsense sizes with 0 or an error status, never a crash."""
    from mlrt.native import _lib
    lib, ffi = _lib.lib(), _lib.ffi()
    assert lib.mlrt_conv_winograd_size(0, 8, 8) == 0
    assert lib.mlrt_conv_winograd_size(3, 8, 8) == 0  # filters not divisible by group
    size = ffi.new("int64_t *")
    assert lib.mlrt_conv_winograd_pack(0, 8, 8, ffi.NULL, 0, size, ffi.NULL) != 0
    assert lib.mlrt_conv_winograd_fits(ffi.NULL, 64, 64, 56, 56) == 0

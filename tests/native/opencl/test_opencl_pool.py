"""Pooling on OpenCL against the C kernels: MaxPool and AveragePool (1-D to 3-D, pads,
auto_pad, strides, dilations, ceil_mode, count_include_pad), the global pools and LRN,
float32 and float16, the configurations of the light model zoo."""

import numpy as np
import pytest
from onnx import helper

from mlrt.native.ops import lookup
from mlrt.native.opencl._recorders import find_recorder
from opencl_check import check_opencl

rng = np.random.default_rng(0)
FLOATS = [np.float32, np.float16]


def _x(*shape, dtype=np.float32):
    return (rng.standard_normal(shape) * 2).astype(dtype)


WINDOWS_2D = [
    {"kernel_shape": [3, 3]},
    {"kernel_shape": [2, 2], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 2], "strides": [2, 3], "pads": [0, 1, 2, 1]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "dilations": [2, 3], "pads": [2, 1, 2, 1]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [2, 3], "strides": [3, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
    {"kernel_shape": [4, 4], "strides": [3, 3], "auto_pad": "SAME_LOWER"},
    {"kernel_shape": [2, 3], "auto_pad": "VALID", "strides": [1, 2]},
    {"kernel_shape": [1, 1]},
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("attrs", WINDOWS_2D)
def test_maxpool_2d(attrs, dtype):
    check_opencl("MaxPool", [_x(2, 13, 11, 14, dtype=dtype)], attrs)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("include_pad", [0, 1])
@pytest.mark.parametrize("attrs", WINDOWS_2D)
def test_averagepool_2d(attrs, include_pad, dtype):
    check_opencl("AveragePool", [_x(2, 13, 11, 14, dtype=dtype)], {**attrs, "count_include_pad": include_pad})


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("channels,size", [(1, 1), (1, 127), (127, 5), (3, 200)])
def test_1d(op, channels, size):
    for attrs in ({"kernel_shape": [3], "strides": [2], "pads": [1, 1]},
                  {"kernel_shape": [2], "strides": [2], "ceil_mode": 1, "dilations": [1]},
                  {"kernel_shape": [1]}):
        if attrs["kernel_shape"][0] <= size + sum(attrs.get("pads", [0, 0])):
            check_opencl(op, [_x(2, channels, size)], attrs)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op,extra", [("MaxPool", {}), ("AveragePool", {"count_include_pad": 0}),
                                      ("AveragePool", {"count_include_pad": 1})])
def test_3d(op, extra, dtype):
    x = _x(2, 3, 5, 6, 7, dtype=dtype)
    check_opencl(op, [x], {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2], "pads": [1, 0, 1, 0, 1, 1], **extra})
    check_opencl(op, [x], {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "ceil_mode": 1, **extra})
    check_opencl(op, [x], {"kernel_shape": [2, 2, 2], "dilations": [2, 2, 1], "auto_pad": "SAME_UPPER", **extra})


def test_maxpool_nan_and_inf():
    """NaN is skipped; a window of only NaN or -inf gives -inf; +inf wins."""
    x = _x(1, 2, 6, 6)
    x[0, 0, 0, 0] = np.nan
    x[0, 0, 2:4, 2:4] = np.nan
    x[0, 1, 0:2, 0:2] = -np.inf
    x[0, 1, 4, 4] = np.inf
    check_opencl("MaxPool", [x], {"kernel_shape": [2, 2], "strides": [2, 2]})
    check_opencl("AveragePool", [x], {"kernel_shape": [2, 2], "strides": [2, 2]})


def test_windows_all_in_padding():
    """MaxPool gives 0 for a window with no element of X; AveragePool its own rule."""
    x = _x(1, 2, 3, 3)
    for op in ("MaxPool", "AveragePool"):
        check_opencl(op, [x], {"kernel_shape": [2, 2], "strides": [3, 3], "pads": [3, 3, 0, 0]})


def test_empty_batch():
    for op in ("MaxPool", "AveragePool"):
        check_opencl(op, [np.zeros((0, 3, 5, 5), np.float32)], {"kernel_shape": [2, 2]})
    for op in ("GlobalMaxPool", "GlobalAveragePool"):
        check_opencl(op, [np.zeros((2, 0, 5, 5), np.float32)])


def _op(op_type, n_outputs=1, opset=18, **attrs):
    node = helper.make_node(op_type, ["x"], [f"y{i}" for i in range(n_outputs)], **attrs)
    return lookup("", op_type, opset)(node, opset)


def test_refused_configurations():
    """MaxPool's Indices output and windows of more than 3 dims stay on the CPU."""
    supports = find_recorder("", "MaxPool").supports
    assert supports(_op("MaxPool", kernel_shape=[2, 2]), [None])
    assert not supports(_op("MaxPool", 2, kernel_shape=[2, 2]), [None])
    assert not supports(_op("MaxPool", kernel_shape=[2, 2, 2, 2]), [None])
    assert not find_recorder("", "AveragePool").supports(_op("AveragePool", kernel_shape=[1, 1, 1, 1]), [None])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["GlobalMaxPool", "GlobalAveragePool"])
@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (2, 13, 7, 7), (1, 127, 3), (2, 3, 40, 40), (1, 2, 3, 4, 5), (3, 5)])
def test_global(op, shape, dtype):
    """Small planes: a work-item each; 1024 and more: a work-group each; rank 2 and 5."""
    check_opencl(op, [_x(*shape, dtype=dtype)])


def test_global_max_nan():
    """As the C kernel: NaN skipped, except as a plane's first element."""
    x = _x(1, 3, 2000)
    x[0, 0, 5] = np.nan
    x[0, 1, 0] = np.nan
    x[0, 2, 1999] = np.inf
    check_opencl("GlobalMaxPool", [x])
    check_opencl("GlobalMaxPool", [x[:, :, :50].copy()])
    check_opencl("GlobalAveragePool", [x])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("attrs", [{"size": 1}, {"size": 3}, {"size": 4, "alpha": 0.01, "beta": 0.6, "bias": 2.0},
                                   {"size": 5, "beta": 0.5}, {"size": 2, "beta": 1.0, "alpha": 0.5},
                                   {"size": 300}])
@pytest.mark.parametrize("shape", [(1, 1, 5, 5), (2, 13, 7, 9), (1, 127, 3), (4, 13)])
def test_lrn(attrs, shape, dtype):
    check_opencl("LRN", [_x(*shape, dtype=dtype)], attrs)


# The pooling nodes of onnx/backend/test/data/light (opset 9), at the shapes they see.
LIGHT_MODELS = [
    ("MaxPool", (1, 96, 54, 54), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [0, 0, 0, 0]}),      # alexnet
    ("MaxPool", (1, 256, 12, 12), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [0, 0, 1, 1]}),
    ("MaxPool", (1, 64, 112, 112), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),   # densenet
    ("MaxPool", (1, 192, 27, 27), {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]}),    # inception
    ("MaxPool", (1, 64, 56, 56), {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 0, 0]}),     # vgg19
    ("AveragePool", (1, 128, 56, 56), {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 0, 0]}),
    ("AveragePool", (1, 1024, 6, 6), {"kernel_shape": [7, 7], "strides": [1, 1], "pads": [0, 0, 1, 1]}),
    ("AveragePool", (1, 192, 28, 28), {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]}),
    ("AveragePool", (1, 1024, 7, 7), {"kernel_shape": [7, 7], "strides": [1, 1]}),                      # resnet50
    ("AveragePool", (1, 24, 56, 56), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),  # shufflenet
    ("GlobalAveragePool", (1, 1024, 7, 7), {}),
    ("GlobalAveragePool", (1, 1000, 13, 13), {}),                                                       # squeezenet
    ("LRN", (1, 96, 54, 54), {"size": 5, "alpha": 1e-4, "beta": 0.75, "bias": 1.0}),
    ("LRN", (1, 64, 55, 55), {"size": 5, "alpha": 1e-4, "beta": 0.75, "bias": 1.0}),
    ("LRN", (1, 96, 55, 55), {"size": 5, "alpha": 5e-4, "beta": 0.75, "bias": 2.0}),                    # zfnet512
]


@pytest.mark.parametrize("op,shape,attrs", LIGHT_MODELS)
def test_light_model_configurations(op, shape, attrs):
    check_opencl(op, [rng.random(shape, dtype=np.float32) * 4], attrs, opset=9)

"""Conv and FusedConv on OpenCL against the C kernels."""

import numpy as np
import pytest
from onnx import helper

from mlrt._errors import DeviceError
from mlrt.native.opencl import conv as cl_conv
from opencl_check import check_opencl, opencl_device, run_opencl
from oracle import make_model

MS = "com.microsoft"


def _data(seed, *shapes, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) if s is not None else None for s in shapes]


def check_constant_weights(x, w, b=None, attrs=None, op_type="Conv", z=None):
    """W (and B) as initializers: the path that packs the filters on the host."""
    domain, opset = (MS, 1) if op_type == "FusedConv" else ("", None)
    inputs = [x, w, b, z][:4 if z is not None else 3]
    check_opencl(op_type, inputs, attrs, domain=domain, opset=opset, constants=(1, 2) if b is not None else (1,))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("c", [1, 3, 13])
@pytest.mark.parametrize("hw", [1, 7, 13])
def test_conv_sizes(c, hw, dtype):
    x, w, b = _data(c * hw, (1, c, hw, hw + 2), (13, c, 3, 3), (13,), dtype=dtype)
    check_opencl("Conv", [x, w, b], {"pads": [1, 1, 1, 1]})


@pytest.mark.parametrize("attrs", [
    {"strides": [2, 2]},
    {"dilations": [2, 2], "pads": [2, 2, 2, 2]},
    {"strides": [2, 3], "dilations": [2, 1], "pads": [0, 1, 2, 3]},
    {"pads": [1, 0, 2, 1]},
    {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
    {"auto_pad": "SAME_LOWER"},
    {"auto_pad": "VALID", "strides": [3, 1]},
])
def test_conv_attributes(attrs):
    x, w, b = _data(1, (2, 5, 13, 11), (20, 5, 3, 3), (20,))
    check_opencl("Conv", [x, w, b], attrs)
    check_constant_weights(x, w, b, attrs)


@pytest.mark.parametrize("group, m", [(2, 20), (13, 13), (13, 26), (13, 65)])
def test_conv_groups(group, m):
    """Groups, depthwise (one filter per group: the direct kernel) and channel multipliers."""
    c = 14 if group == 2 else 13
    x, w, b = _data(group, (2, c, 9, 10), (m, c // group, 3, 3), (m,))
    for attrs in ({"group": group, "pads": [1, 1, 1, 1]}, {"group": group, "strides": [2, 2]}):
        check_opencl("Conv", [x, w, b], attrs)
        check_constant_weights(x, w, b, attrs)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_conv_no_bias(dtype):
    x, w = _data(3, (1, 3, 13, 13), (13, 3, 3, 3), dtype=dtype)
    check_opencl("Conv", [x, w], {"pads": [1, 1, 1, 1]})
    check_constant_weights(x, w, None, {"pads": [1, 1, 1, 1]})


@pytest.mark.parametrize("n, c, hw, m", [(1, 13, 7, 20), (2, 3, 13, 9), (3, 64, 5, 2), (2, 1, 127, 13)])
def test_conv_pointwise(n, c, hw, m):
    """1x1 stride-1 convs read X directly: grids that end inside a tile of every kernel."""
    x, w, b = _data(n + c, (n, c, hw, hw), (m, c, 1, 1), (m,))
    check_opencl("Conv", [x, w, b])
    check_constant_weights(x, w, b)
    check_opencl("Conv", [x.astype(np.float16), w.astype(np.float16), b.astype(np.float16)])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("attrs", [{}, {"pads": [2, 1]}, {"strides": [2], "dilations": [3], "pads": [1, 4]}])
def test_conv_1d(attrs, dtype):
    x, w, b = _data(4, (2, 5, 127), (13, 5, 4), (13,), dtype=dtype)
    check_opencl("Conv", [x, w, b], attrs)


@pytest.mark.parametrize("attrs", [{"pads": [1] * 6}, {"strides": [2, 1, 2], "pads": [0, 1, 1, 1, 0, 2]},
                                   {"dilations": [1, 2, 1], "group": 3}])
def test_conv_3d(attrs):
    x, w, b = _data(5, (1, 6, 5, 7, 6), (9, 6 // attrs.get("group", 1), 3, 3, 2), (9,))
    check_opencl("Conv", [x, w, b], attrs)


def test_conv_large_kernel_stride():
    """An 11x11 window at stride 4 (AlexNet's first layer, scaled down): 16 stride phases."""
    x, w, b = _data(6, (1, 3, 47, 47), (16, 3, 11, 11), (16,))
    check_constant_weights(x, w, b, {"strides": [4, 4], "pads": [2, 2, 2, 2]})


def test_conv_empty_batch():
    x, w, b = _data(7, (0, 3, 7, 7), (8, 3, 3, 3), (8,))
    check_opencl("Conv", [x, w, b], {"pads": [1, 1, 1, 1]})


def test_conv_nan_propagates():
    x, w, b = _data(8, (1, 3, 7, 7), (9, 3, 3, 3), (9,))
    x[0, 1, 3, 3] = np.nan
    got = check_opencl("Conv", [x, w, b])[0]
    assert np.isnan(got[:, :, 1:4, 1:4]).all() and not np.isnan(got[:, :, 0]).any()


ACTIVATIONS = [("Relu", None), ("LeakyRelu", [0.2]), ("Clip", [-0.5, 0.75]), ("Sigmoid", None), ("Tanh", None),
               ("HardSigmoid", [0.3, 0.4]), ("HardSwish", None), ("Swish", [1.5]), ("", None)]


@pytest.mark.parametrize("activation, params", ACTIVATIONS)
@pytest.mark.parametrize("residual", [False, True])
def test_fused_conv(activation, params, residual):
    x, w, b, z = _data(9, (2, 5, 13, 21), (20, 5, 3, 3), (20,), (2, 20, 13, 21))
    attrs = {"pads": [1, 1, 1, 1]}
    if activation:
        attrs["activation"] = activation
    if params:
        attrs["activation_params"] = params
    inputs = [x, w, b] + ([z] if residual else [])
    check_opencl("FusedConv", inputs, attrs, domain=MS, opset=1)
    check_constant_weights(x, w, b, attrs, "FusedConv", z if residual else None)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_fused_conv_residual_no_bias(dtype):
    x, w, z = _data(10, (1, 4, 13, 13), (3, 4, 3, 3), (1, 3, 7, 7), dtype=dtype)
    attrs = {"strides": [2, 2], "pads": [1, 1, 1, 1], "activation": "Relu"}
    check_opencl("FusedConv", [x, w, None, z], attrs, domain=MS, opset=1)
    x, w, z = _data(11, (1, 4, 13, 13), (16, 4, 1, 1), (1, 16, 13, 13), dtype=dtype)
    check_opencl("FusedConv", [x, w, None, z], {"activation": "Relu"}, domain=MS, opset=1)


@pytest.mark.parametrize("kind", ["tiled", "blocked"])
def test_gemm_kernels(kind, monkeypatch):
    """Both GEMM kernels on this device, whichever the device would pick (GPUs: tiled)."""
    monkeypatch.setenv("MLRT_OPENCL_CONV", kind)
    x, w, b, z = _data(12, (2, 13, 9, 11), (70, 13, 3, 3), (70,), (2, 70, 5, 6))
    check_opencl("Conv", [x, w, b], {"pads": [1, 1, 1, 1], "dilations": [2, 2]})
    check_opencl("FusedConv", [x, w, b, z], {"strides": [2, 2], "pads": [1, 1, 1, 1], "activation": "LeakyRelu"},
                 domain=MS, opset=1)
    check_opencl("Conv", [x.astype(np.float16), w.astype(np.float16)], {"group": 1})
    x, w = _data(13, (1, 6, 7, 7), (8, 3, 1, 1))
    check_opencl("Conv", [x, w], {"group": 2})


def test_refuses_more_than_3d():
    opencl_device()
    x, w = _data(14, (1, 2, 3, 3, 3, 3), (2, 2, 1, 1, 1, 1))
    model = make_model("Conv", [x, w])
    from mlrt.native import load as loading
    from mlrt.native.ops import make_op
    op = make_op(helper.make_node("Conv", ["x0", "x1"], ["y0"], kernel_shape=[1, 1, 1, 1]),
                 loading.load(model.SerializeToString()))
    assert not cl_conv._supports(op, [None, None])
    with pytest.raises(DeviceError):  # as one partition, the recorder refuses it
        run_opencl(model, [x, w])
    # in a session the capability check sees W's rank and leaves the node to the CPU
    import mlrt.lowlevel as ml
    sess = ml.InferenceSession(model.SerializeToString(),
                               providers=["OpenCLExecutionProvider", "CPUExecutionProvider"])
    assert [p for _, op_type, p in sess.get_node_assignment()] == ["CPUExecutionProvider"]
    assert sess.run(None, {"x0": x, "x1": w})[0].shape == (1, 2, 3, 3, 3, 3)

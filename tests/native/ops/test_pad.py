"""Pad against onnx.reference (numpy.pad): modes, attribute and input forms, axes;
negative pads (cropping) against numpy slicing."""

import numpy as np
import pytest

import mlrt
from oracle import check_node, make_model, run_mlrt
from test_copy import DTYPES, data

I64 = np.int64
MODES = ["constant", "reflect", "edge", "wrap"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pads", [[1, 2, 3, 4], [0, 0, 0, 0], [4, 0, 0, 13], [3, 1, 2, 2], [0, 5, 0, 0]])
def test_pad_modes(mode, pads):
    x = data((4, 5), np.int32)
    check_node("Pad", [x, np.array(pads, I64)], {"mode": mode})


@pytest.mark.parametrize("mode", MODES)
def test_pad_3d_and_single_element(mode):
    check_node("Pad", [data((2, 3, 4)), np.array([1, 0, 2, 1, 3, 0], I64)], {"mode": mode})
    check_node("Pad", [data((1, 1)), np.array([2, 1, 0, 3], I64)], {"mode": mode})


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad_constant_value_types(dtype):
    x = data((3, 13), dtype)
    value = data((), dtype)
    check_node("Pad", [x, np.array([1, 2, 0, 3], I64), value])


def test_pad_axes():
    x = data((2, 3, 4))
    check_node("Pad", [x, np.array([1, 2, 3, 4], I64), np.array(9.5, np.float32), np.array([0, -1], I64)])
    check_node("Pad", [x, np.array([1, 1], I64), None, np.array([1], I64)], {"mode": "reflect"})


def test_pad_old_opsets():
    x = np.clip(np.nan_to_num(data((3, 4))), -1e3, 1e3)
    check_node("Pad", [x], {"paddings": [1, 0, 0, 2], "value": 2.0}, opset=1)
    check_node("Pad", [x], {"pads": [1, 0, 2, 3], "value": 1.5}, opset=2)
    check_node("Pad", [x], {"pads": [1, 1, 1, 1], "mode": "edge"}, opset=10)
    check_node("Pad", [(x * 10).astype(np.int64)], {"pads": [0, 2, 0, 1], "value": 7.0}, opset=2)


@pytest.mark.parametrize("mode", MODES)
def test_pad_negative_crops(mode):
    x = data((5, 6), np.float64)
    pads = [-1, 2, 1, -3]  # crop row 0 and the last 3 columns, then pad the rest
    got = run_mlrt(make_model("Pad", [x, np.array(pads, I64)], {"mode": mode}), [x, np.array(pads, I64)])[0]
    kept = x[1:, :3]
    np.testing.assert_array_equal(got, np.pad(kept, [(0, 1), (2, 0)], mode=mode))


def test_pad_empty():
    check_node("Pad", [data((0, 3)), np.array([1, 0, 1, 0], I64)])


def test_pad_bad():
    x = data((3, 4))
    for inputs, attrs in [([x, np.array([1, 2], I64)], {}), ([x, np.array([-4, 0, 0, 0], I64)], {}),
                          ([x, np.array([0, 0, 0, 0], I64)], {"mode": "mirror"}),
                          ([data((0, 2)), np.array([1, 0, 1, 0], I64)], {"mode": "edge"})]:
        with pytest.raises(mlrt.MlrtError):
            run_mlrt(make_model("Pad", inputs, attrs), inputs)

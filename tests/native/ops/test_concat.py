"""Concat and Split against onnx.reference: axes, many inputs, empty pieces, every type."""

import numpy as np
import pytest

import mlrt
from oracle import check_node, make_model, run_mlrt
from test_copy import DTYPES, data

I64 = np.int64


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_concat_axes(axis, count):
    base = [2, 3, 4]
    inputs = []
    for k in range(count):
        shape = list(base)
        shape[axis] = [1, 2, 13, 0][k % 4]
        inputs.append(data(tuple(shape)))
    check_node("Concat", inputs, {"axis": axis})


@pytest.mark.parametrize("dtype", DTYPES)
def test_concat_types(dtype):
    check_node("Concat", [data((3, 127), dtype), data((3, 1), dtype), data((3, 13), dtype)], {"axis": 1})


def test_concat_large_and_old_opset():
    check_node("Concat", [data((2, 64, 40, 40)), data((2, 32, 40, 40))], {"axis": 1})
    check_node("Concat", [data((300, 1000)), data((300, 1000))], {"axis": 1})
    check_node("Concat", [data((2, 3)), data((2, 5))], {"axis": 1}, opset=4)


def test_concat_opset1_default_axis():
    x, y = data((2, 3)), data((2, 4))
    np.testing.assert_array_equal(run_mlrt(make_model("Concat", [x, y], opset=1), [x, y])[0], np.concatenate([x, y], 1))


def test_concat_bad():
    for inputs, attrs in [([data((2, 3)), data((3, 3))], {"axis": 1}), ([data((2, 3)), data((2,))], {"axis": 0}),
                          ([data((2, 3)), data((2, 3), np.int32)], {"axis": 0}), ([data((2,))], {"axis": 1}),
                          ([data(())], {"axis": 0})]:
        with pytest.raises(mlrt.MlrtError):
            run_mlrt(make_model("Concat", inputs, attrs), inputs)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("split", [None, [2, 4], [1, 0, 5], [6]])
def test_split(axis, split):
    x = data((6, 6, 6))
    n = 2 if split is None else len(split)
    check_node("Split", [x] + ([np.array(split, I64)] if split else []), {"axis": axis}, n_outputs=n)
    check_node("Split", [x], {"axis": axis, **({"split": split} if split else {})}, n_outputs=n, opset=11)


def test_split_opset1_input():
    x = data((2, 5))
    args = [x, np.array([1, 4], I64)]  # opset 1 also took the sizes as input 1
    got = run_mlrt(make_model("Split", args, {"axis": 1}, n_outputs=2, opset=1), args)
    for g, e in zip(got, np.split(x, [1], axis=1)):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("dim,num", [(7, 3), (6, 3), (13, 4), (4, 4), (1, 1)])
def test_split_num_outputs(dim, num):
    check_node("Split", [data((2, dim))], {"axis": 1, "num_outputs": num}, n_outputs=num, opset=18)


@pytest.mark.parametrize("dtype", DTYPES)
def test_split_types(dtype):
    check_node("Split", [data((127, 5), dtype), np.array([100, 27], I64)], n_outputs=2)


def test_split_bad():
    x = data((5, 3))
    for inputs, attrs, n in [([x], {}, 2), ([x, np.array([2, 2], I64)], {}, 2), ([x, np.array([6, -1], I64)], {}, 2),
                             ([x], {"axis": 2}, 1)]:
        with pytest.raises(mlrt.MlrtError):
            run_mlrt(make_model("Split", inputs, attrs, n_outputs=n), inputs)

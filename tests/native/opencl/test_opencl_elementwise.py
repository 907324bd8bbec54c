"""Broadcasting elementwise ops on OpenCL against the C kernels."""

import numpy as np
import pytest

from opencl_check import check_opencl
from oracle import EDGE_VALUES

BINARY = ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "PRelu",
          "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]
SHAPES = [((1,), (1,)), ((13,), (13,)), ((127,), (127,)),  # same shape: one row
          ((2, 3, 4), (4,)), ((2, 1, 4), (1, 3, 1)), ((5, 1), (1, 7)),  # short rows
          ((3, 1), (1, 20)), ((4, 20), (4, 1)), ((2, 3, 17), (3, 1)), ((17, 1, 9), (5, 1)),  # vectors + tails
          ((2, 3, 4, 5), (3, 1, 5)), ((6, 1, 5, 1, 3), (4, 1, 2, 1)),  # views of rank 3 and 4
          ((), (5, 6)), ((4, 5), (1,)), ((3, 1, 1), ()),  # one side a single value
          ((), ()), ((1, 1), (1,))]  # one element
FLOATS = [np.float32, np.float16]


def _data(shape, seed, dtype, positive=False):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if positive:
        x = np.abs(x) + 0.25
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("op", BINARY)
def test_binary(op, shapes, dtype):
    a = _data(shapes[0], 1, dtype, positive=op == "Pow")
    b = _data(shapes[1], 2, dtype)
    if a.shape == b.shape and a.size > 1:
        b.flat[::3] = a.flat[::3]  # some ties
    check_opencl(op, [a, b])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu", "Equal", "Less",
                                "GreaterOrEqual"])
def test_edge_values(op, dtype):
    with np.errstate(over="ignore"):
        a = EDGE_VALUES.reshape(-1, 1).astype(dtype)
        b = EDGE_VALUES.astype(dtype)
    check_opencl(op, [a, b])  # every pair of inf, NaN, +-0, denormals, extremes
    check_opencl(op, [np.broadcast_to(a, (13, 13)).copy(), np.broadcast_to(b, (13, 13)).copy()])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["Sum", "Mean", "Max", "Min"])
def test_variadic(op, dtype):
    xs = [_data((2, 3, 4), 1, dtype), _data((4,), 2, dtype), _data((2, 1, 1), 3, dtype)]
    check_opencl(op, xs)
    check_opencl(op, [_data((13,), k, dtype) for k in range(4)])  # same shapes
    check_opencl(op, xs[:1])  # one input: a copy
    check_opencl(op, [_data((4,), 1, dtype), _data((3, 1), 2, dtype), _data((2, 1, 1), 3, dtype)])  # y bigger than all


def test_variadic_edge_values():
    a, b = EDGE_VALUES, EDGE_VALUES[::-1].copy()
    for op in ("Sum", "Mean", "Max", "Min"):
        check_opencl(op, [a, b, a[:1]])
        check_opencl(op, [a])


@pytest.mark.parametrize("exponent", [np.int32, np.int64, np.float16, np.float32])
def test_pow_exponent_types(exponent):
    base = _data((2, 3, 4), 1, np.float32)
    e = np.array([0, 1, 2, 3, -1, -2], np.float32).reshape(2, 3, 1).astype(exponent)
    check_opencl("Pow", [base, e])
    check_opencl("Pow", [base.astype(np.float16), e])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("e", [0, 1, 2, 3, -1, -2, 5, 64, 65, 0.5, 1.5, -0.5, np.nan, np.inf, -np.inf])
def test_pow_exponents(e, dtype):
    with np.errstate(over="ignore"):
        base = np.concatenate([EDGE_VALUES, _data((27,), 1, np.float32) * 2]).astype(dtype)
    check_opencl("Pow", [base, np.array(e, dtype)])  # one exponent: the vector fast paths
    mixed = np.resize(np.array([e, 2, 3, 0.5, e, -1, 1.5, e], np.float32), base.shape).astype(dtype)
    check_opencl("Pow", [base, mixed])  # lanes that disagree


def test_pow_square_and_constant_exponent():
    x = _data((127,), 1, np.float32)
    check_opencl("Pow", [x, np.array(2.0, np.float32)])
    check_opencl("Pow", [x, np.array(0.5, np.float32)])  # NaN for the negative bases on both sides
    check_opencl("Pow", [x.astype(np.float16), np.array(3.0, np.float16)])


def test_legacy_broadcast():
    a = _data((2, 3, 4, 5), 1, np.float32, positive=True)
    b = _data((3, 4), 2, np.float32)
    check_opencl("Pow", [a, b], {"broadcast": 1, "axis": 1}, opset=6)  # b lined up with a's dims 1, 2
    check_opencl("Equal", [a, a[:1, :1, :1, :1]], {"broadcast": 1}, opset=6)


def test_prelu_slope():
    x = _data((2, 3, 4, 5), 1, np.float32)
    check_opencl("PRelu", [x, np.array([0.1, 0.2, 0.3], np.float32)])  # 1-D slope along the dim of its length
    check_opencl("PRelu", [x, _data((3, 1, 1), 2, np.float32)])
    check_opencl("PRelu", [x.astype(np.float16), _data((5,), 2, np.float16)])


@pytest.mark.parametrize("op", ["Add", "Max", "Less"])
def test_empty(op):
    check_opencl(op, [np.zeros((0, 3), np.float32), np.ones((3,), np.float32)])
    check_opencl(op, [np.zeros((2, 0), np.float16), np.ones((2, 1), np.float16)])


def test_large():
    a, b = _data((64, 1000), 1, np.float32), _data((1000,), 2, np.float32)
    for op in ("Add", "Mul", "Div"):
        check_opencl(op, [a, b])
        check_opencl(op, [a, a[::-1].copy()])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.int32, np.uint8, np.bool_, np.float64])
@pytest.mark.parametrize("shapes", [((13,), (13,), (13,)), ((2, 1, 4), (3, 1), (4,)), ((), (2, 3), ()),
                                    ((127,), (1,), (127,))], ids=str)
def test_where(shapes, dtype):
    rng = np.random.default_rng(7)
    c = rng.random(shapes[0]) < 0.5
    x = (rng.standard_normal(shapes[1]) * 50).astype(dtype)
    z = (rng.standard_normal(shapes[2]) * 50).astype(dtype)
    check_opencl("Where", [c, x, z])


def test_where_edge_values():
    c = np.arange(13) % 2 == 0
    check_opencl("Where", [c, EDGE_VALUES, EDGE_VALUES[::-1].copy()])
    check_opencl("Where", [c, np.zeros((0, 13), np.float32), EDGE_VALUES])


def test_pow_with_an_exponent_type_it_lacks_stays_on_the_cpu():
    """A float64 exponent for a float32 base: the capability check leaves Pow to the CPU."""
    import mlrt.lowlevel as ml
    from oracle import make_model
    base, e = np.abs(_data((2, 3), 1, np.float32)) + 0.5, np.array([2.0, 0.5, 3.0], np.float64)
    sess = ml.InferenceSession(make_model("Pow", [base, e], opset=15).SerializeToString(),
                               providers=["OpenCLExecutionProvider", "CPUExecutionProvider"])
    assert [p for _, op, p in sess.get_node_assignment()] == ["CPUExecutionProvider"]
    np.testing.assert_allclose(sess.run(None, {"x0": base, "x1": e})[0], base ** e.astype(np.float32), rtol=1e-6)

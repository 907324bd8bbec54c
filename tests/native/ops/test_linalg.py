"""Det against onnx.reference (numpy's LAPACK): sizes, batches, types, singular and
permuted matrices, edge values, bad shapes."""

import numpy as np
import pytest

import mlrt
from oracle import check_node, make_model, run_mlrt

rng = np.random.default_rng(0)


def det(x, **kw):
    return check_node("Det", [x], {}, opset=22, **kw)[0]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 9, 13])
def test_det_sizes(n):
    det(rng.standard_normal((n, n)).astype(np.float32), rtol=1e-4, atol=1e-5)
    det(rng.standard_normal((3, n, n)), rtol=1e-10, atol=1e-12)


def test_det_batches_and_rank():
    det(rng.standard_normal((2, 3, 4, 4)), rtol=1e-10, atol=1e-12)
    out = det(rng.standard_normal((127, 5, 5)).astype(np.float32), rtol=1e-4, atol=1e-5)
    assert out.shape == (127,)
    assert det(np.zeros((0, 3, 3), np.float32)).shape == (0,)
    x = rng.standard_normal((60, 60)) / 4
    check_node("Det", [x], {}, opset=11, rtol=1e-9, atol=1e-300)


def test_det_known_values():
    def run(x):
        return run_mlrt(make_model("Det", [x], opset=22), [x])[0]

    assert run(np.eye(3)[[1, 0, 2]]) == -1.0                     # one row swap
    assert run(np.array([[1.0, 2.0], [2.0, 4.0]])) == 0.0        # singular
    assert run(np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 5.0, 6.0]])) == 0.0
    tri = np.triu(rng.standard_normal((6, 6)))
    np.testing.assert_allclose(run(tri), np.prod(np.diag(tri)), rtol=1e-12)
    empty = np.zeros((0, 0))
    assert run_mlrt(make_model("Det", [empty], opset=22), [empty])[0] == 1.0   # like numpy


def test_det_edge_values_and_types():
    x = np.array([[[np.inf, 1.0], [1.0, 1.0]], [[np.nan, 0.0], [0.0, 1.0]], [[1e-20, 0], [0, 1e-20]]], np.float32)
    det(x)
    h = rng.standard_normal((4, 3, 3)).astype(np.float16)     # the reference has no float16 Det
    got = run_mlrt(make_model("Det", [h], opset=22), [h])[0]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), np.linalg.det(h.astype(np.float64)), rtol=1e-2, atol=1e-2)


def test_det_bad_shapes():
    with pytest.raises(mlrt.MlrtError):
        det(np.zeros((2, 3), np.float32))
    with pytest.raises(mlrt.MlrtError):
        det(np.zeros(3, np.float32))

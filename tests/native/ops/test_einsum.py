"""Einsum against onnx.reference: explicit and implicit outputs, ellipsis broadcasting,
diagonals, sums, transposes, products of one to four inputs, the batched-GEMM path
and the loop nest, integer wrap-around, float16/bfloat16/float64, empty tensors,
scalars, bad equations."""

import ml_dtypes
import numpy as np
import pytest

import mlrt
from oracle import check_node, make_model, run_mlrt

rng = np.random.default_rng(0)

CASES = [
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(13, 127)]),
    ("ij->", [(13, 127)]),
    ("ij", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("ii", [(4, 4)]),
    ("ii->i", [(5, 5)]),
    ("iij->j", [(3, 3, 2)]),
    ("...ii->...i", [(3, 5, 5)]),
    ("i...->...", [(2, 3, 4)]),
    ("->", [()]),
    (",->", [(), ()]),
    ("i,i", [(5,), (5,)]),
    ("i,i", [(1,), (5,)]),
    ("i,j->ij", [(4,), (6,)]),
    ("ij,jk", [(2, 1), (3, 4)]),
    ("ij,jk->ik", [(9, 13), (13, 127)]),
    ("bij,bjk->bik", [(5, 20, 30), (5, 30, 40)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 17, 16), (2, 3, 19, 16)]),
    ("bhqk,bhkd->bqhd", [(2, 3, 17, 19), (2, 3, 19, 16)]),
    ("abc,cd->dba", [(6, 7, 8), (8, 9)]),
    ("abc,abd->cd", [(20, 30, 10), (20, 30, 12)]),
    ("iij,jk->ik", [(8, 8, 10), (10, 20)]),
    ("ab,cd->", [(30, 40), (50, 60)]),
    ("ab,cd->ac", [(30, 40), (50, 60)]),
    ("...i,...i", [(2, 3), (4, 1, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 6)]),
    ("Ab,a->Aab", [(2, 3), (4,)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 6)]),
    ("ik,jk,k->ij", [(30, 20), (40, 20), (20,)]),
    ("a,b,c,d->abcd", [(2,), (3,), (4,), (5,)]),
    (" ij , jk -> ik ", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("eq,shapes", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_einsum(eq, shapes, dtype):
    check_node("Einsum", [(rng.standard_normal(s) * 3).astype(dtype) for s in shapes], {"equation": eq})


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int64, np.uint32, np.uint64])
def test_einsum_integer_wraps(dtype):
    a = rng.integers(0, 100, (4, 30)).astype(dtype)
    b = rng.integers(0, 100, (30, 5)).astype(dtype)
    check_node("Einsum", [a, b], {"equation": "ij,jk->ik"})


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("eq,shapes", [("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ij->i", [(3, 9)]),
                                       ("ij->ji", [(3, 4)])])
def test_einsum_half_types(dtype, eq, shapes):
    check_node("Einsum", [rng.standard_normal(s).astype(dtype) for s in shapes], {"equation": eq},
               opset=28, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("eq,shapes", [("ij->ji", [(0, 3)]), ("ij,jk->ik", [(3, 0), (0, 4)]),
                                       ("ij,jk->ik", [(0, 5), (5, 4)]), ("i->", [(0,)])])
def test_einsum_empty(eq, shapes):
    check_node("Einsum", [np.ones(s, np.float32) for s in shapes], {"equation": eq})


def test_einsum_edge_values():
    a = np.array([[np.inf, 1.0], [np.nan, -0.0]], np.float32)
    check_node("Einsum", [a, a], {"equation": "ij,jk->ik"})
    check_node("Einsum", [a], {"equation": "ij->j"})


def test_einsum_large_gemm():
    a = rng.standard_normal((4, 64, 96)).astype(np.float32)
    b = rng.standard_normal((96, 4, 80)).astype(np.float32)
    check_node("Einsum", [a, b], {"equation": "bmk,kbn->nbm"})


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(2, 3), (4, 5)]),       # sizes clash
    ("ij->k", [(2, 3)]),                   # output label not in the inputs
    ("ij->ii", [(2, 2)]),                  # output label repeats
    ("ijk->i", [(2, 3)]),                  # term longer than the rank
    ("ij,jk", [(2, 3)]),                   # two terms, one input
    ("i$->i", [(2, 3)]),                   # bad character
    ("...i->i", [(2, 3)]),                 # ellipsis dims dropped from an explicit output
    ("ii->i", [(2, 3)]),                   # diagonal of unequal dims
    ("i->i->i", [(2,)]),
    ("", [()]),                            # empty equation
])
def test_einsum_bad_equation(eq, shapes):
    inputs = [np.ones(s, np.float32) for s in shapes]
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Einsum", inputs, {"equation": eq}), inputs)


@pytest.mark.parametrize("eq,shapes", [("bmk,kbn->nbm", [(6, 64, 96), (96, 6, 80)]),
                                       ("ij,jk->ik", [(50, 60), (60, 70)]), ("ijk->ki", [(30, 40, 50)]),
                                       ("ij,jk,kl->il", [(40, 50), (50, 60), (60, 30)])])
def test_einsum_threads_agree(eq, shapes):
    import mlrt.lowlevel as ml
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    model = make_model("Einsum", inputs, {"equation": eq})
    results = []
    for n in (1, 4):
        opts = ml.SessionOptions()
        opts.intra_op_num_threads = n
        results.append(run_mlrt(model, inputs, sess_options=opts)[0])
    np.testing.assert_array_equal(*results)

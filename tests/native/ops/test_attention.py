"""Attention against onnx.reference: 3-D and 4-D inputs, grouped heads, bool and float
masks (broadcast, shorter than the keys), causal masking with and without a cache,
soft capping, every qk_matmul_output mode, softmax_precision, nonpad_kv_seqlen
(opset 24), sliding windows (opset 25), float16/bfloat16/float64, edge sizes, NaN
and fully masked rows, bad input."""

import ml_dtypes
import numpy as np
import pytest

import mlrt
from oracle import check_node, make_model, run_mlrt

rng = np.random.default_rng(0)


def qkv(b=2, hq=3, hkv=3, sq=4, skv=6, d=8, dv=8, dtype=np.float32, rank=4):
    def t(h, s, n):
        x = rng.standard_normal((b, h, s, n)).astype(dtype)
        return x if rank == 4 else x.transpose(0, 2, 1, 3).reshape(b, s, h * n)
    return [t(hq, sq, d), t(hkv, skv, d), t(hkv, skv, dv)]


def heads(hq, hkv, rank):
    return {"q_num_heads": hq, "kv_num_heads": hkv} if rank == 3 else {}


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("hq,hkv", [(3, 3), (6, 3), (4, 1)])
@pytest.mark.parametrize("attrs", [{}, {"is_causal": 1}, {"scale": 0.05}, {"softcap": 2.0},
                                   {"is_causal": 1, "softcap": 1.5, "scale": 0.3}])
def test_attention_heads(rank, hq, hkv, attrs):
    check_node("Attention", qkv(hq=hq, hkv=hkv, dv=5, rank=rank), {**attrs, **heads(hq, hkv, rank)}, opset=23)


@pytest.mark.parametrize("sq,skv", [(1, 1), (1, 13), (2, 2), (13, 13), (127, 9), (70, 130)])
def test_attention_sizes(sq, skv):
    check_node("Attention", qkv(b=1, hq=2, hkv=1, sq=sq, skv=skv, d=4, dv=3), {"is_causal": 1}, opset=23)
    check_node("Attention", qkv(b=1, hq=2, hkv=2, sq=sq, skv=skv, d=16, dv=16), {}, opset=23)


@pytest.mark.parametrize("shape", [(6,), (4, 6), (1, 4, 6), (3, 4, 6), (2, 1, 4, 6), (2, 3, 4, 6), (2, 3, 1, 6),
                                   (4, 4), (2, 3, 4, 2)])
@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("causal", [0, 1])
def test_attention_masks(shape, kind, causal):
    if causal and (len(shape) == 1 or shape[-2] == 1):
        pytest.skip("onnx.reference takes the causal frontier's rows from the mask's shape")
    mask = rng.random(shape) > 0.3 if kind == "bool" else rng.standard_normal(shape).astype(np.float32)
    check_node("Attention", qkv() + [mask], {"is_causal": causal}, opset=23)


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("causal", [0, 1])
@pytest.mark.parametrize("past", [0, 1, 5])
def test_attention_cache(rank, causal, past):
    b, hq, hkv, d, dv = 2, 4, 2, 8, 6
    inputs = qkv(b=b, hq=hq, hkv=hkv, sq=3, skv=3, d=d, dv=dv, rank=rank)
    mask = rng.standard_normal((3, past + 3)).astype(np.float32)
    pk = rng.standard_normal((b, hkv, past, d)).astype(np.float32)
    pv = rng.standard_normal((b, hkv, past, dv)).astype(np.float32)
    check_node("Attention", inputs + [mask, pk, pv], {"is_causal": causal, **heads(hq, hkv, rank)},
               n_outputs=3, opset=23)


def test_attention_present_without_past():
    check_node("Attention", qkv(rank=3), heads(3, 3, 3), n_outputs=3, opset=23)


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
@pytest.mark.parametrize("causal", [0, 1])
def test_attention_qk_output(mode, causal):
    # mode 0 is the raw product; the reference soft-caps it too, so no soft cap here
    attrs = {"qk_matmul_output_mode": mode, "is_causal": causal, **({"softcap": 2.0} if mode else {})}
    inputs = qkv(hq=4, hkv=2) + [rng.random((4, 6)) > 0.4]
    model = make_model("Attention", inputs, attrs, opset=23, output_names=["y", "", "", "qk"])
    from oracle import assert_same, run_reference
    got, expected = run_mlrt(model, inputs), run_reference(model, inputs)
    for g, e in zip(got, expected):
        assert_same(g, e, 1e-4, 1e-5, f"mode {mode}")


def test_attention_qk_raw_before_softcap():
    inputs = qkv(b=1, hq=1, hkv=1)
    model = make_model("Attention", inputs, {"softcap": 0.5}, opset=23, output_names=["y", "", "", "qk"])
    _, qk = run_mlrt(model, inputs)
    q, k = inputs[0].astype(np.float64), inputs[1].astype(np.float64)
    np.testing.assert_allclose(qk, q @ k.transpose(0, 1, 3, 2) / np.sqrt(8), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("precision", [1, 10, 11, 16])
def test_attention_softmax_precision(precision):
    check_node("Attention", qkv() + [rng.random((4, 6)) > 0.3], {"softmax_precision": precision}, opset=23)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float64])
@pytest.mark.parametrize("attrs", [{}, {"is_causal": 1}, {"softcap": 2.0}])
def test_attention_types(dtype, attrs):
    # float16 / bfloat16 round every step to their type, as the reference does; but
    # the reference's bfloat16 soft cap runs in float32 (numpy promotes bfloat16 / float)
    tol = 2e-2 if dtype == ml_dtypes.bfloat16 else 2e-3
    mask = rng.standard_normal((4, 6)).astype(dtype)
    check_node("Attention", qkv(hq=6, hkv=3, dtype=dtype) + [mask], attrs, opset=23, rtol=tol, atol=tol)


@pytest.mark.parametrize("causal", [0, 1])
@pytest.mark.parametrize("lengths", [[6, 6], [3, 5], [0, 2], [1, 6]])
def test_attention_nonpad(causal, lengths):
    inputs = qkv(hq=4, hkv=2, sq=2, skv=6) + [rng.random((2, 1, 2, 6)) > 0.2, None, None,
                                               np.array(lengths, np.int64)]
    check_node("Attention", inputs, {"is_causal": causal}, opset=24)


@pytest.mark.parametrize("left,right,causal", [(2, -1, 1), (1, 2, 0), (0, 0, 0), (-1, -1, 0), (3, 1, 1)])
def test_attention_windows(left, right, causal):
    attrs = {"left_window_size": left, "right_window_size": right, "is_causal": causal}
    check_node("Attention", qkv(sq=5, skv=7), attrs, opset=25)
    pk = rng.standard_normal((2, 3, 4, 8)).astype(np.float32)
    check_node("Attention", qkv(sq=3, skv=3) + [None, pk, pk.copy()], attrs, n_outputs=3, opset=25)


def test_attention_fully_masked_rows_are_zero():
    mask = np.ones((4, 6), bool)
    mask[1] = False
    mask[3] = False
    y = check_node("Attention", qkv() + [mask], {"qk_matmul_output_mode": 0}, opset=23)[0]
    assert np.all(y[:, :, 1] == 0) and np.all(y[:, :, 3] == 0)
    inputs = qkv(sq=4, skv=4) + [None, None, None, np.array([2, 0], np.int64)]  # offset < 0: empty rows
    check_node("Attention", inputs, {"is_causal": 1}, opset=24)


def test_attention_nan_and_inf():
    q, k, v = qkv()
    q[0, 0, 1, 2] = np.nan
    k[1, 2, 3, 0] = np.inf
    v[0, 1, 4, 1] = -np.inf
    mask = np.zeros((4, 6), np.float32)
    mask[2, :] = -np.inf
    check_node("Attention", [q, k, v, mask], {}, opset=23)


def test_attention_empty():
    check_node("Attention", qkv(b=0), {}, opset=23)
    check_node("Attention", qkv(sq=0), {"is_causal": 1}, opset=23)


@pytest.mark.parametrize("inputs,attrs", [
    (qkv(hq=3, hkv=2), {}),                                   # heads do not group
    (qkv()[:2] + [rng.standard_normal((2, 3, 5, 8)).astype(np.float32)], {}),  # V length differs
    (qkv(rank=3), {}),                                         # 3-D without head counts
    (qkv(rank=3), {"q_num_heads": 5, "kv_num_heads": 3}),      # 24 not divisible by 5
    (qkv() + [np.zeros((4, 7), np.float32)], {}),              # mask longer than the keys
    (qkv() + [np.zeros((5, 4, 6), np.float32)], {}),           # mask heads do not broadcast
    (qkv() + [np.zeros((4, 6), np.int32)], {}),                # mask of another type
    (qkv()[:2] + [qkv()[2].astype(np.float64)], {}),           # mixed types
    (qkv(), {"qk_matmul_output_mode": 7}),
])
def test_attention_bad_input(inputs, attrs):
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Attention", inputs, attrs, opset=23), inputs)


def test_attention_threads_agree():
    import mlrt.lowlevel as ml
    inputs = qkv(b=3, hq=8, hkv=2, sq=70, skv=90, d=16, dv=8) + [rng.random((70, 90)) > 0.1]
    model = make_model("Attention", inputs, {"is_causal": 1}, opset=23, output_names=["y", "", "", "qk"])
    results = []
    for n in (1, 4):
        opts = ml.SessionOptions()
        opts.intra_op_num_threads = n
        results.append(run_mlrt(model, inputs, sess_options=opts))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_attention_extreme_nonpad():
    inputs = qkv(b=3, sq=2, skv=4)
    lengths = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 4], np.int64)
    y = run_mlrt(make_model("Attention", inputs + [None, None, None, lengths], {"is_causal": 1}, opset=24),
                 inputs + [None, None, None, lengths])[0]
    assert np.all(y[0] == 0)  # every key padded away
    full = run_mlrt(make_model("Attention", inputs, {"is_causal": 0}, opset=24), inputs)[0]
    np.testing.assert_allclose(y[1], full[1], rtol=1e-6)  # nothing padded, frontier past every key

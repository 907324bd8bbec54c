"""com.microsoft attention-family contrib operators (as onnxruntime's CPU kernels):
RotaryEmbedding, Attention, MultiHeadAttention, GroupQueryAttention and
EmbedLayerNormalization, each a one-node model run by mlrt and by onnxruntime (CPU,
graph optimizations off), compared within the op's tolerance (`Op.tolerance`)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import mlrt
from tests.oracle import run_mlrt, tolerance

ort = pytest.importorskip("onnxruntime")

MS = "com.microsoft"
rng = np.random.default_rng(23)


def _model(op_type, inputs, attrs=None, outputs=("y0",)):
    in_names = [f"x{i}" if a is not None else "" for i, a in enumerate(inputs)]
    while in_names and not in_names[-1]:
        in_names.pop()
    node = helper.make_node(op_type, in_names, list(outputs), domain=MS, **(attrs or {}))
    g_in = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in zip(in_names, inputs) if a is not None]
    g_out = [helper.make_empty_tensor_value_info(n) for n in outputs if n]
    graph = helper.make_graph([node], f"{op_type}_test", g_in, g_out)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])


def _run_ort(model, inputs):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feeds = {i.name: x for i, x in zip(sess.get_inputs(), [x for x in inputs if x is not None])}
    return sess.run(None, feeds)


def check(op_type, inputs, attrs=None, outputs=("y0",)):
    model = _model(op_type, inputs, attrs, outputs)
    got, want = run_mlrt(model, inputs), _run_ort(model, inputs)
    rtol, atol = tolerance(op_type, 1, MS)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (op_type, g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=op_type)
    return got


def refuses(op_type, inputs, attrs=None, outputs=("y0",)):
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(_model(op_type, inputs, attrs, outputs), inputs)


def _x(shape, dtype=np.float32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _caches(rows, half, dtype=np.float32):
    angle = np.arange(rows)[:, None] * (1.0 / 10000 ** (np.arange(half) / max(half, 1)))[None, :]
    return np.cos(angle).astype(dtype), np.sin(angle).astype(dtype)


# -- RotaryEmbedding ------------------------------------------------------------------------------

@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("b,s,heads,head", [(1, 1, 1, 2), (2, 5, 3, 8), (3, 13, 2, 16)])
def test_rotary_3d_and_4d(interleaved, b, s, heads, head):
    cos, sin = _caches(s + 7, head // 2)
    pos = rng.integers(0, s + 7, (b, s)).astype(np.int64)
    x3 = _x((b, s, heads * head))
    check("RotaryEmbedding", [x3, pos, cos, sin], {"interleaved": interleaved, "num_heads": heads})
    check("RotaryEmbedding", [x3, pos, cos, sin], {"interleaved": interleaved})
    x4 = _x((b, heads, s, head))
    check("RotaryEmbedding", [x4, pos, cos, sin], {"interleaved": interleaved})
    start = np.array([3], np.int64)
    check("RotaryEmbedding", [x3, start, cos, sin], {"interleaved": interleaved, "num_heads": heads})
    check("RotaryEmbedding", [x4, start, cos, sin], {"interleaved": interleaved})


@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_partial_dim(interleaved):
    b, s, heads, head, dim = 2, 9, 4, 16, 8
    cos, sin = _caches(32, dim // 2)
    pos = rng.integers(0, 32, (b, s)).astype(np.int64)
    attrs = {"interleaved": interleaved, "num_heads": heads, "rotary_embedding_dim": dim}
    check("RotaryEmbedding", [_x((b, s, heads * head)), pos, cos, sin], attrs)
    check("RotaryEmbedding", [_x((b, heads, s, head)), np.array([0], np.int64), cos, sin], attrs)


def test_rotary_float16():
    cos, sin = _caches(20, 4, np.float16)
    x = _x((2, 7, 16), np.float16)
    got = run_mlrt(_model("RotaryEmbedding", [x, np.array([2], np.int64), cos, sin], {"num_heads": 2}),
                   [x, np.array([2], np.int64), cos, sin])[0]
    want = _run_ort(_model("RotaryEmbedding", [x, np.array([2], np.int64), cos, sin], {"num_heads": 2}),
                    [x, np.array([2], np.int64), cos, sin])[0]
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)


def test_rotary_refusals():
    cos, sin = _caches(8, 4)
    x = _x((1, 4, 16))
    refuses("RotaryEmbedding", [x, np.array([5], np.int64), cos, sin], {"num_heads": 2})  # rows 5..8 of 8
    refuses("RotaryEmbedding", [x, np.array([[0, 1, 2, 9]], np.int64), cos, sin], {"num_heads": 2})
    refuses("RotaryEmbedding", [x, np.array([0], np.int64), cos, sin], {"num_heads": 3})  # 16 % 3
    refuses("RotaryEmbedding", [x, np.array([0], np.int64), cos, sin[:, :3]], {"num_heads": 2})
    refuses("RotaryEmbedding", [x, np.array([0, 1], np.int64), cos, sin], {"num_heads": 2})
    refuses("RotaryEmbedding", [x, np.array([0], np.int64), cos, sin], {"num_heads": 2, "is_packed_batching": 1})


# -- Attention (packed QKV weights) -------------------------------------------------------------------

def _lengths(b, total):
    return rng.integers(1, total + 1, b).astype(np.int32)


def _raw_mask(shape):
    m = (rng.random(shape) > 0.3).astype(np.int32)
    m[..., 0] = 1
    return m


@pytest.mark.parametrize("b,s,heads,head,din", [(1, 1, 1, 4, 3), (2, 5, 2, 8, 16), (3, 13, 4, 5, 7)])
@pytest.mark.parametrize("uni", [0, 1])
def test_attention_masks(b, s, heads, head, din, uni):
    hidden = heads * head
    x, w, bias = _x((b, s, din)), _x((din, 3 * hidden), scale=0.5), _x((3 * hidden,))
    attrs = {"num_heads": heads, "unidirectional": uni}
    check("Attention", [x, w], attrs)
    check("Attention", [x, w, bias], attrs)
    check("Attention", [x, w, bias, _lengths(b, s)], attrs)
    ends = _lengths(b, s)
    starts = np.minimum(rng.integers(0, s, b), ends - 1).astype(np.int32)
    check("Attention", [x, w, bias, np.concatenate([ends, starts])], attrs)
    check("Attention", [x, w, bias, _raw_mask((b, s))], attrs)
    check("Attention", [x, w, bias, _raw_mask((b, s, s))], {**attrs, "scale": 0.3})
    check("Attention", [x, w, bias, None, None, _x((1, heads, s, s))], attrs)
    check("Attention", [x, w, bias, _raw_mask((b, s)), None, _x((b, 1, s, s))], attrs)


def test_attention_fully_masked_rows_and_v_hidden():
    b, s, heads = 2, 6, 3
    x, w = _x((b, s, 10)), _x((10, 12 + 12 + 9))
    attrs = {"num_heads": heads, "qkv_hidden_sizes": [12, 12, 9]}
    mask = _raw_mask((b, s))
    mask[1] = 0  # every key of batch 1 masked: onnxruntime adds mask_filter_value everywhere
    check("Attention", [x, w, None, mask], attrs)
    check("Attention", [x, w, None, mask], {**attrs, "unidirectional": 1, "mask_filter_value": -50.0})


@pytest.mark.parametrize("b,s,p,heads,head", [(1, 1, 4, 2, 4), (2, 3, 5, 3, 8), (2, 4, 0, 1, 6)])
@pytest.mark.parametrize("uni", [0, 1])
def test_attention_past_present(b, s, p, heads, head, uni):
    hidden = heads * head
    x, w, bias = _x((b, s, 9)), _x((9, 3 * hidden), scale=0.5), _x((3 * hidden,))
    past = _x((2, b, heads, p, head))
    attrs = {"num_heads": heads, "unidirectional": uni}
    check("Attention", [x, w, bias, None, past], attrs, outputs=("y0", "y1"))
    check("Attention", [x, w, bias, _raw_mask((b, p + s)), past], attrs, outputs=("y0", "y1"))
    check("Attention", [x, w, bias, _lengths(b, p + s), past], attrs, outputs=("y0", "y1"))


def test_attention_refusals():
    x, w = _x((2, 3, 8)), _x((8, 24))
    refuses("Attention", [x, w], {"num_heads": 5})  # 8 % 5
    refuses("Attention", [x, _x((7, 24))], {"num_heads": 2})
    refuses("Attention", [x, w, _x((23,))], {"num_heads": 2})
    refuses("Attention", [x, w, None, np.ones((2, 4), np.int32)], {"num_heads": 2})  # total is 3
    refuses("Attention", [x, w, None, np.ones((2, 3), np.int64)], {"num_heads": 2})
    refuses("Attention", [x, w, None, np.ones((2, 1, 3, 3), np.int32)], {"num_heads": 2})
    refuses("Attention", [x, w, None, None, _x((2, 2, 2, 1, 3))], {"num_heads": 2})
    refuses("Attention", [x.astype(np.float64), w.astype(np.float64)], {"num_heads": 2})
    refuses("Attention", [x, w], {"num_heads": 2, "do_rotary": 1})


# -- MultiHeadAttention ------------------------------------------------------------------------------

@pytest.mark.parametrize("b,s,kv,heads,head,vhead", [(1, 1, 1, 1, 4, 4), (2, 5, 7, 2, 8, 6), (3, 13, 13, 4, 5, 5)])
def test_mha(b, s, kv, heads, head, vhead):
    q, k, v = _x((b, s, heads * head)), _x((b, kv, heads * head)), _x((b, kv, heads * vhead))
    bias = _x((2 * heads * head + heads * vhead,))
    attrs = {"num_heads": heads}
    check("MultiHeadAttention", [q, k, v], attrs)
    check("MultiHeadAttention", [q, k, v, bias], attrs)
    check("MultiHeadAttention", [q, k, v, bias, _raw_mask((b, kv))], {**attrs, "scale": 0.25})
    check("MultiHeadAttention", [q, k, v, None, _raw_mask((b, s, kv))], attrs)
    check("MultiHeadAttention", [q, k, v, None, _lengths(b, kv)], attrs)
    check("MultiHeadAttention", [q, k, v, bias, None, _x((b, 1, s, kv))], attrs)
    if s == kv:
        check("MultiHeadAttention", [q, k, v, bias, _raw_mask((b, kv))], {**attrs, "unidirectional": 1})


@pytest.mark.parametrize("b,s,p,heads,head", [(1, 1, 6, 2, 4), (2, 3, 5, 3, 8), (2, 4, 0, 1, 6)])
def test_mha_past_present(b, s, p, heads, head):
    q, k, v = _x((b, s, heads * head)), _x((b, s, heads * head)), _x((b, s, heads * head))
    pk, pv = _x((b, heads, p, head)), _x((b, heads, p, head))
    outs = ("y0", "y1", "y2")
    attrs = {"num_heads": heads}
    check("MultiHeadAttention", [q, k, v, None, None, None, pk, pv], attrs, outputs=outs)
    check("MultiHeadAttention", [q, k, v, _x((3 * heads * head,)), _raw_mask((b, p + s)), None, pk, pv], attrs,
          outputs=outs)
    check("MultiHeadAttention", [q, k, v, None, None, None, pk, pv], {**attrs, "unidirectional": 1}, outputs=outs)


def test_mha_refusals():
    q, k, v = _x((2, 3, 8)), _x((2, 4, 8)), _x((2, 4, 8))
    refuses("MultiHeadAttention", [q, k, v], {"num_heads": 3})
    refuses("MultiHeadAttention", [q, k, _x((2, 5, 8))], {"num_heads": 2})
    refuses("MultiHeadAttention", [q, k, v, _x((23,))], {"num_heads": 2})
    refuses("MultiHeadAttention", [q, k, v, None, np.ones((2, 3), np.int32)], {"num_heads": 2})
    refuses("MultiHeadAttention", [q, k, v, None, None, None, _x((2, 2, 1, 4))], {"num_heads": 2})
    refuses("MultiHeadAttention", [q, _x((2, 4, 2, 2, 4))], {"num_heads": 2})


# -- GroupQueryAttention ------------------------------------------------------------------------------

def _gqa_inputs(b, s, p, heads, kv_heads, head, packed=False):
    q = _x((b, s, (heads + 2 * kv_heads) * head if packed else heads * head))
    k = None if packed else _x((b, s, kv_heads * head))
    v = None if packed else _x((b, s, kv_heads * head))
    pk = pv = None
    if p >= 0:
        pk, pv = _x((b, kv_heads, p, head)), _x((b, kv_heads, p, head))
    total = max(p, 0) + s
    return [q, k, v, pk, pv, np.full((b,), total - 1, np.int32), np.array([total], np.int32)]


@pytest.mark.parametrize("b,s,p,heads,kv_heads,head", [(1, 1, 5, 2, 1, 8), (2, 5, 0, 4, 2, 8), (2, 1, 9, 6, 2, 16),  # (onnxruntime: head_size % 8 == 0)
                                                        (3, 13, -1, 3, 3, 24), (1, 7, 3, 8, 2, 8)])
@pytest.mark.parametrize("packed", [False, True])
def test_gqa(b, s, p, heads, kv_heads, head, packed):
    inputs = _gqa_inputs(b, s, p, heads, kv_heads, head, packed)
    attrs = {"num_heads": heads, "kv_num_heads": kv_heads}
    check("GroupQueryAttention", inputs, attrs, outputs=("y0", "y1", "y2"))
    check("GroupQueryAttention", inputs, {**attrs, "scale": 0.2, "softcap": 2.0}, outputs=("y0", "y1", "y2"))
    check("GroupQueryAttention", inputs, {**attrs, "local_window_size": 3}, outputs=("y0", "y1", "y2"))


def test_gqa_refusals():
    good = _gqa_inputs(2, 3, 4, 4, 2, 8)
    attrs = {"num_heads": 4, "kv_num_heads": 2}
    outs = ("y0", "y1", "y2")
    refuses("GroupQueryAttention", good, {"num_heads": 4, "kv_num_heads": 3}, outputs=outs)
    bad = list(good)
    bad[5] = np.array([6, 7], np.int32)  # a row with 5 past keys, past_key has 4
    refuses("GroupQueryAttention", bad, attrs, outputs=outs)
    bad = list(good)
    bad[5] = np.array([6, 1], np.int32)  # a row with fewer keys than new ones
    refuses("GroupQueryAttention", bad, attrs, outputs=outs)
    bad = list(good)
    bad[5], bad[6] = np.array([2, 3], np.int32), np.array([3], np.int32)  # a first prompt row of 4 keys
    refuses("GroupQueryAttention", bad, attrs, outputs=outs)
    bad = list(good)
    bad[5] = good[5].astype(np.int64)
    refuses("GroupQueryAttention", bad, attrs, outputs=outs)
    refuses("GroupQueryAttention", good, {**attrs, "do_rotary": 1}, outputs=outs)  # no caches
    cos, sin = _caches(4, 4)  # positions up to 6 are needed
    refuses("GroupQueryAttention", good + [cos, sin], {**attrs, "do_rotary": 1}, outputs=outs)


def check_gqa(inputs, attrs, valid=None):
    """check() for GroupQueryAttention with all three outputs; `valid` [batch]: the rows of
    a right-padded first prompt (seqlens_k + 1) whose output and present rows onnxruntime
    defines (padding rows are unspecified there), None: all."""
    model = _model("GroupQueryAttention", inputs, attrs, ("y0", "y1", "y2"))
    got, want = run_mlrt(model, inputs), _run_ort(model, inputs)
    rtol, atol = tolerance("GroupQueryAttention", 1, MS)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, (k, g.shape, w.shape)
        if valid is not None:
            axis = 1 if k == 0 else 2
            keep = np.arange(g.shape[axis])[None, :] < np.asarray(valid)[:, None]
            g, w = (g[keep], w[keep]) if k == 0 else (g.transpose(0, 2, 1, 3)[keep], w.transpose(0, 2, 1, 3)[keep])
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"GroupQueryAttention output {k}")
    return got


def _padded(b, s, p, heads, kv_heads, head, lens, total, packed=False):
    inputs = _gqa_inputs(b, s, p, heads, kv_heads, head, packed)
    inputs[5], inputs[6] = np.array(lens, np.int32), np.array([total], np.int32)
    return inputs


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("extra", [{}, {"local_window_size": 3}, {"softcap": 1.5, "scale": 0.3}])
def test_gqa_right_padded_decode(packed, extra):
    attrs = {"num_heads": 4, "kv_num_heads": 2, **extra}
    # past buffers as long as the longest row (present one row longer), then a shared-size buffer
    check_gqa(_padded(3, 1, 8, 4, 2, 8, [8, 3, 5], 9, packed), attrs)
    check_gqa(_padded(3, 1, 10, 4, 2, 8, [4, 7, 0], 8, packed), attrs)
    check_gqa(_padded(2, 1, 6, 4, 2, 8, [6, 6], 7, packed), attrs)
    # without present outputs onnxruntime 1.32 attends to the new keys alone (it reads no
    # past); mlrt keeps the cache semantics: the same output as with them
    inputs = _padded(3, 1, 8, 4, 2, 8, [8, 3, 5], 9, packed)
    alone = run_mlrt(_model("GroupQueryAttention", inputs, attrs), inputs)[0]
    np.testing.assert_array_equal(alone, check_gqa(inputs, attrs)[0])


@pytest.mark.parametrize("packed", [False, True])
def test_gqa_right_padded_prompt(packed):
    attrs = {"num_heads": 6, "kv_num_heads": 3}
    check_gqa(_padded(3, 6, -1, 6, 3, 16, [5, 2, 0], 6, packed), attrs, valid=[6, 3, 1])
    check_gqa(_padded(2, 5, 7, 6, 3, 16, [4, 1], 5, packed), attrs, valid=[5, 2])  # a past given is not read
    check_gqa(_padded(1, 4, 6, 6, 3, 16, [9], 10, packed), attrs)  # a later chunk of a prompt


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("head,half", [(16, 8), (32, 8), (32, 16)])
def test_gqa_rotary(interleaved, packed, head, half):
    attrs = {"num_heads": 4, "kv_num_heads": 2, "do_rotary": 1, "rotary_interleaved": interleaved}
    cos, sin = _caches(24, half)
    check_gqa(_padded(2, 7, -1, 4, 2, head, [6, 3], 7, packed) + [cos, sin], attrs, valid=[7, 4])
    check_gqa(_padded(3, 1, 9, 4, 2, head, [9, 2, 5], 10, packed) + [cos, sin], attrs)
    check_gqa(_padded(1, 3, 5, 4, 2, head, [7], 8, packed) + [cos, sin], {**attrs, "local_window_size": 4})


# -- EmbedLayerNormalization --------------------------------------------------------------------------

@pytest.mark.parametrize("b,s,h", [(1, 1, 4), (2, 7, 16), (3, 13, 127)])
def test_embed_layer_norm(b, s, h):
    vocab, rows, segs = 30, s + 5, 2
    ids = rng.integers(0, vocab, (b, s)).astype(np.int32)
    seg = rng.integers(0, segs, (b, s)).astype(np.int32)
    word, pos, segemb = _x((vocab, h)), _x((rows, h)), _x((segs, h))
    gamma, beta = _x((h,)), _x((h,))
    mask = _raw_mask((b, s))
    outs = ("y0", "y1", "y2")
    check("EmbedLayerNormalization", [ids, seg, word, pos, segemb, gamma, beta], outputs=("y0", "y1"))
    check("EmbedLayerNormalization", [ids, seg, word, pos, segemb, gamma, beta, mask], {"epsilon": 1e-5},
          outputs=outs)
    check("EmbedLayerNormalization", [ids, None, word, pos, None, gamma, beta, mask], outputs=outs)
    pids = rng.integers(0, rows, (1, s)).astype(np.int32)
    check("EmbedLayerNormalization", [ids, seg, word, pos, segemb, gamma, beta, mask, pids], outputs=outs)


def test_embed_layer_norm_refusals():
    ids = np.array([[1, 2, 3]], np.int32)
    word, pos, gamma, beta = _x((4, 8)), _x((5, 8)), _x((8,)), _x((8,))
    refuses("EmbedLayerNormalization", [np.array([[1, 4, 0]], np.int32), None, word, pos, None, gamma, beta])
    refuses("EmbedLayerNormalization", [ids.astype(np.int64), None, word, pos, None, gamma, beta])
    refuses("EmbedLayerNormalization", [ids, None, word, pos, None, _x((7,)), beta])
    refuses("EmbedLayerNormalization", [ids, None, word, _x((2, 8)), None, gamma, beta])  # position 2 of 2 rows
    refuses("EmbedLayerNormalization", [ids, ids, word, pos, None, gamma, beta])

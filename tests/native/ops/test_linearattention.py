"""LinearAttention and FlexAttention against onnx.reference."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import mlrt
from oracle import assert_same, check_node, make_model, run_mlrt, run_reference

rng = np.random.default_rng(0)


def qkv(b, t, hq, hkv, dk, dv, dtype=np.float32):
    q = rng.standard_normal((b, t, hq * dk)).astype(dtype)
    k = rng.standard_normal((b, t, hkv * dk))
    k = (k / np.linalg.norm(k.reshape(b, t, hkv, dk), axis=-1).repeat(dk, axis=-1)).astype(dtype)
    v = rng.standard_normal((b, t, hkv * dv)).astype(dtype)
    return q, k, v


# -- LinearAttention ------------------------------------------------------------------------------

@pytest.mark.parametrize("rule", ["linear", "gated", "delta", "gated_delta"])
@pytest.mark.parametrize("heads", [(2, 2), (4, 2), (3, 1)])
@pytest.mark.parametrize("t", [1, 7])
def test_linear_attention_rules(rule, heads, t):
    hq, hkv = heads
    dk, dv = 4, 5
    q, k, v = qkv(2, t, hq, hkv, dk, dv)
    past = rng.standard_normal((2, hkv, dk, dv)).astype(np.float32) * 0.1
    decay = -rng.uniform(0, 1, (2, t, hkv)).astype(np.float32) if "gated" in rule else None
    beta = rng.uniform(0, 1, (2, t, hkv)).astype(np.float32) if "delta" in rule else None
    attrs = {"q_num_heads": hq, "kv_num_heads": hkv, "update_rule": rule}
    check_node("LinearAttention", [q, k, v, past, decay, beta], attrs, n_outputs=2, opset=27)
    check_node("LinearAttention", [q, k, v, None, decay, beta], dict(attrs, scale=0.3), n_outputs=2, opset=27)


def test_linear_attention_per_key_decay_shared_beta_and_fp16():
    q, k, v = qkv(1, 5, 2, 2, 3, 4)
    decay = -rng.uniform(0, 1, (1, 5, 6)).astype(np.float32)           # one value per key dim
    beta = rng.uniform(0, 1, (1, 5, 1)).astype(np.float32)             # one value for all heads
    attrs = {"q_num_heads": 2, "kv_num_heads": 2}
    check_node("LinearAttention", [q, k, v, None, decay, beta], attrs, n_outputs=2, opset=27)
    h = [a.astype(np.float16) for a in (q, k, v, None, decay, beta) if a is not None]
    check_node("LinearAttention", h[:3] + [None] + h[3:], attrs, n_outputs=2, opset=27, rtol=2e-3, atol=2e-3)


def test_linear_attention_decode_equals_prefill():
    q, k, v = qkv(1, 6, 2, 1, 4, 4)
    attrs = {"q_num_heads": 2, "kv_num_heads": 1, "update_rule": "linear"}
    full, state = run_mlrt(make_model("LinearAttention", [q, k, v], attrs, n_outputs=2, opset=27), [q, k, v])
    step_model = make_model("LinearAttention", [q[:, :1], k[:, :1], v[:, :1], state], attrs, n_outputs=2, opset=27)
    s = np.zeros_like(state)
    for t in range(6):
        y, s = run_mlrt(step_model, [q[:, t:t + 1], k[:, t:t + 1], v[:, t:t + 1], s])
        np.testing.assert_allclose(y, full[:, t:t + 1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s, state, rtol=1e-5, atol=1e-6)


def test_linear_attention_bad():
    q, k, v = qkv(1, 2, 2, 2, 3, 3)
    with pytest.raises(mlrt.MlrtError):   # gated_delta (the default) needs decay and beta
        run_mlrt(make_model("LinearAttention", [q, k, v], {"q_num_heads": 2, "kv_num_heads": 2}, n_outputs=2,
                            opset=27), [q, k, v])
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("LinearAttention", [q, k, v], {"q_num_heads": 3, "kv_num_heads": 2,
                                                           "update_rule": "linear"}, n_outputs=2, opset=27), [q, k, v])


# -- FlexAttention (ai.onnx.preview) ----------------------------------------------------------------

def flex_model(inputs, attrs):
    node = helper.make_node("FlexAttention", ["q", "k", "v"], ["y"], domain="ai.onnx.preview", **attrs)
    ins = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
           for n, a in zip("qkv", inputs)]
    graph = helper.make_graph([node], "flex", ins, [helper.make_empty_tensor_value_info("y")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26),
                                                   helper.make_opsetid("ai.onnx.preview", 1)])


def mod_graph(op, scalar):
    c = helper.make_node("Constant", [], ["c"], value=helper.make_tensor("c", TensorProto.FLOAT, [], [scalar]))
    n = helper.make_node(op, ["s", "c"], ["out"])
    return helper.make_graph([c, n], "mod", [helper.make_tensor_value_info("s", TensorProto.FLOAT, None)],
                             [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)])


def flex(inputs, attrs, rtol=1e-5, atol=1e-6):
    model = flex_model(inputs, attrs)
    got = run_mlrt(model, inputs)
    want = run_reference(model, inputs)
    assert_same(got[0], want[0], rtol, atol, "FlexAttention")
    return got[0]


@pytest.mark.parametrize("heads", [(2, 2), (4, 2), (4, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_flex_attention(heads, dtype):
    hq, hkv = heads
    q = rng.standard_normal((2, hq, 5, 8)).astype(dtype)
    k = rng.standard_normal((2, hkv, 7, 8)).astype(dtype)
    v = rng.standard_normal((2, hkv, 7, 3)).astype(dtype)
    flex([q, k, v], {})
    flex([q, k, v], {"scale": 0.5})


def test_flex_attention_modifiers_and_bad():
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((1, 2, 4, 8), (1, 2, 6, 8), (1, 2, 6, 8)))
    flex([q, k, v], {"score_mod": mod_graph("Mul", 0.5)})
    flex([q, k, v], {"prob_mod": mod_graph("Add", 0.1)})
    flex([q, k, v], {"score_mod": mod_graph("Sub", 1.0), "prob_mod": mod_graph("Mul", 2.0)})
    with pytest.raises(mlrt.MlrtError):
        bad = [q, k[:, :, :, :4].copy(), v]
        run_mlrt(flex_model(bad, {}), bad)

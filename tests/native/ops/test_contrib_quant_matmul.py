"""com.microsoft quantized matrix operators (as onnxruntime's): MatMulIntegerToFloat,
DynamicQuantizeMatMul, MatMulNBits, DynamicQuantizeLSTM and the com.microsoft
QuantizeLinear / DequantizeLinear, each a one-node model run by mlrt and by onnxruntime
(CPU, graph optimizations off so it runs the op itself), compared within the op's
tolerance (`Op.tolerance`); then small float models quantized by onnxruntime's own
tools and run by both."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlrt
from tests.oracle import run_mlrt, tolerance

ort = pytest.importorskip("onnxruntime")

MS = "com.microsoft"
rng = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _own_data(request):
    """Each test draws its data from a seed of its own name, whatever ran before it."""
    rng.bit_generator.state = np.random.default_rng(zlib.crc32(request.node.name.encode())).bit_generator.state
SIZES = (1, 13, 127)


def _model(op_type, inputs, attrs=None, outputs=("y0",), initializers=()):
    """One node over inputs x0, x1, ... (None: an absent optional input); inputs whose
    index is in `initializers` are constants of the graph instead of graph inputs."""
    in_names = [f"x{i}" if a is not None else "" for i, a in enumerate(inputs)]
    node = helper.make_node(op_type, in_names, list(outputs), domain=MS, **(attrs or {}))
    g_in = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for i, (n, a) in enumerate(zip(in_names, inputs)) if a is not None and i not in initializers]
    inits = [numpy_helper.from_array(inputs[i], in_names[i]) for i in initializers if inputs[i] is not None]
    g_out = [helper.make_empty_tensor_value_info(n) for n in outputs if n]
    graph = helper.make_graph([node], f"{op_type}_test", g_in, g_out, initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])


def _feeds(inputs, initializers=()):
    return [a for i, a in enumerate(inputs) if a is not None and i not in initializers]


def _run_ort(model, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), feeds)})


def check(op_type, inputs, attrs=None, outputs=("y0",), initializers=(), tol=None):
    model = _model(op_type, inputs, attrs, outputs, initializers)
    feeds = _feeds(inputs, initializers)
    got, want = run_mlrt(model, feeds), _run_ort(model, feeds)
    rtol, atol = tol or tolerance(op_type, 1, MS)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (op_type, g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=op_type)
    return got


def _refused(op_type, inputs, attrs=None, outputs=("y0",)):
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(_model(op_type, inputs, attrs, outputs), _feeds(inputs))


def _q(shape, dtype):
    # int8 weights kept in [-64, 63]: onnxruntime's u8s8 AVX2 kernel sums pairs of
    # products in int16 and saturates beyond that (a documented onnxruntime limit)
    lo, hi = (0, 256) if dtype == np.uint8 else (-64, 64)
    return rng.integers(lo, hi, shape).astype(dtype)


def _f(shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _scale(shape):
    return rng.uniform(0.001, 0.05, shape).astype(np.float32)


# -- MatMulIntegerToFloat ----------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("a_type,b_type", [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)])
def test_matmul_integer_to_float(n, a_type, b_type):
    a, b = _q((3, n, 13), a_type), _q((13, n), b_type)
    a_s, bias = _scale(()), _f((n,))
    check("MatMulIntegerToFloat", [a, b, a_s, _scale(())])
    check("MatMulIntegerToFloat", [a, b, a_s, _scale((n,)), _q((), a_type), _q((n,), b_type), bias])
    check("MatMulIntegerToFloat", [a, b, a_s, _scale((1,)), None, _q((1,), b_type)])
    check("MatMulIntegerToFloat", [a, b, a_s, _scale((n,)), None, None, bias], initializers=(1, 3, 6))


def test_matmul_integer_to_float_long_k_and_batches():
    """K = 600 crosses the exact-float chunk of the integer product; B with batch dims."""
    a, b = _q((2, 5, 600), np.uint8), _q((600, 7), np.int8)
    check("MatMulIntegerToFloat", [a, b, _scale(()), _scale((7,)), _q((), np.uint8), _q((7,), np.int8)])
    a, b = _q((2, 1, 4, 9), np.uint8), _q((3, 9, 5), np.uint8)
    zps = [np.array(3, np.uint8), np.array(200, np.uint8)]
    check("MatMulIntegerToFloat", [a, b, _scale(()), _scale(())] + zps + [_f((5,))])


def test_matmul_integer_to_float_edges():
    a, b = _q((0, 5), np.uint8), _q((5, 4), np.int8)
    got = run_mlrt(_model("MatMulIntegerToFloat", [a, b, _scale(()), _scale(())]), [a, b, _scale(()), _scale(())])
    assert got[0].shape == (0, 4) and got[0].dtype == np.float32
    a, b = np.full((2, 3), 255, np.uint8), np.full((3, 2), 127, np.uint8)  # extremes, exact
    scales, zps = [np.array(0.5, np.float32), np.array(2.0, np.float32)], [np.array(0, np.uint8), np.array(255, np.uint8)]
    check("MatMulIntegerToFloat", [a, b] + scales + zps)
    # a NaN or infinite bias stays in its column (the scale and bias are in the product's finish)
    bias = np.array([np.nan, np.inf], np.float32)
    got = check("MatMulIntegerToFloat", [a, b] + scales + zps + [bias])[0]
    assert np.isnan(got[:, 0]).all() and np.isposinf(got[:, 1]).all()


def test_matmul_integer_to_float_refusals():
    a, b = _q((2, 5), np.uint8), _q((5, 4), np.int8)
    s = _scale(())
    _refused("MatMulIntegerToFloat", [a, _q((4, 4), np.int8), s, s])             # K differs
    _refused("MatMulIntegerToFloat", [a, b, _scale((2,)), s])                      # a_scale per row
    _refused("MatMulIntegerToFloat", [a, b, s, _scale((3,))])                      # b_scale neither
    _refused("MatMulIntegerToFloat", [a, b, s, s, None, np.array(0, np.int8), _f((5,))])     # bias not N
    _refused("MatMulIntegerToFloat", [a, b, s, s, np.array(0, np.int8)])                     # zero point type
    _refused("MatMulIntegerToFloat", [a, b, s.astype(np.float64), s])              # scale type
    _refused("MatMulIntegerToFloat", [a.astype(np.int32), b, s, s])                # A type


# -- DynamicQuantizeMatMul ---------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("b_type", [np.int8, np.uint8])
def test_dynamic_quantize_matmul(n, b_type):
    a, b, bias = _f((2, n, 13)), _q((13, n), b_type), _f((n,))
    check("DynamicQuantizeMatMul", [a, b, _scale(())])
    check("DynamicQuantizeMatMul", [a, b, _scale((n,)), _q((n,), b_type), bias])
    check("DynamicQuantizeMatMul", [a, b, _scale((1,)), _q((1,), b_type), bias], initializers=(1, 2, 3, 4))
    check("DynamicQuantizeMatMul", [np.abs(a), b, _scale(())])   # all >= 0: zero point 0
    check("DynamicQuantizeMatMul", [-np.abs(a), b, _scale(())])  # all <= 0: zero point 255


def test_dynamic_quantize_matmul_edges():
    b = _q((4, 3), np.int8)
    check("DynamicQuantizeMatMul", [np.zeros((2, 4), np.float32), b, _scale(())])  # empty range: scale 1
    check("DynamicQuantizeMatMul", [_f((5, 700), 10.0), _q((700, 3), np.int8), _scale((3,))])
    check("DynamicQuantizeMatMul", [_f((2, 3, 1, 4)), _q((3, 4, 5), np.uint8), _scale(()), np.array(128, np.uint8)])
    a = _f((0, 4))
    assert run_mlrt(_model("DynamicQuantizeMatMul", [a, b, _scale(())]), [a, b, _scale(())])[0].shape == (0, 3)


def test_dynamic_quantize_matmul_refusals():
    a, b, s = _f((2, 5)), _q((5, 4), np.int8), _scale(())
    _refused("DynamicQuantizeMatMul", [a.astype(np.float64), b, s])
    _refused("DynamicQuantizeMatMul", [a, _q((6, 4), np.int8), s])
    _refused("DynamicQuantizeMatMul", [a, b, _scale((5,))])
    _refused("DynamicQuantizeMatMul", [a, b, s, np.array(0, np.uint8)])
    _refused("DynamicQuantizeMatMul", [a, b, s, None, _f((3,))])


# -- MatMulNBits -------------------------------------------------------------------------------

def _nbits(K, N, bits=4, block_size=16, zp=None, lead=(3,), bias=False):
    """Inputs of MatMulNBits: A, random packed codes, scales and zero points of kind
    zp (None, "packed" uint8 codes or "float")."""
    k_blocks = -(-K // block_size)
    a = _f(lead + (K,))
    b = rng.integers(0, 256, (N, k_blocks, block_size * bits // 8)).astype(np.uint8)
    s = _scale((N * k_blocks,))
    z = None
    if zp == "packed":
        z = rng.integers(0, 256, (N * -(-k_blocks * bits // 8),)).astype(np.uint8)
    elif zp == "float":
        z = rng.uniform(0, 2 ** bits - 1, (N * k_blocks,)).astype(np.float32)
    ins = [a, b, s, z, None, _f((N,)) if bias else None]
    while ins[-1] is None:
        ins.pop()
    return ins, {"K": K, "N": N, "bits": bits, "block_size": block_size}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("zp", [None, "packed", "float"])
def test_matmul_nbits_4bit(n, zp):
    for K, block_size in ((n, 16), (n + 32, 32), (2 * n + 64, 128)):
        ins, attrs = _nbits(K, n, 4, block_size, zp, bias=True)
        check("MatMulNBits", ins, attrs)
        check("MatMulNBits", ins, attrs, initializers=tuple(range(1, len(ins))))  # onnxruntime prepacks these


@pytest.mark.parametrize("bits,zp", [(2, None), (2, "packed"), (2, "float"), (8, None), (8, "packed")])
def test_matmul_nbits_other_widths(bits, zp):
    ins, attrs = _nbits(45, 13, bits, 32, zp, lead=(2, 5))
    check("MatMulNBits", ins, attrs)


def test_matmul_nbits_shapes_and_accuracy_level():
    ins, attrs = _nbits(64, 9, lead=(2, 3, 4))
    check("MatMulNBits", ins, attrs)
    ins, attrs = _nbits(64, 9, lead=())  # 1-D A
    check("MatMulNBits", ins, attrs)
    ins, attrs = _nbits(40, 7, zp="packed")
    ins[2] = ins[2].reshape(7, -1)  # 2-D scales
    check("MatMulNBits", ins, attrs)
    # accuracy_level 4 lets onnxruntime quantize A to int8 (mlrt stays in float): close, not equal
    check("MatMulNBits", ins, {**attrs, "accuracy_level": 4}, initializers=(1, 2, 3), tol=(5e-2, 5e-2))
    ins, attrs = _nbits(32, 5, lead=(0,))
    assert run_mlrt(_model("MatMulNBits", ins, attrs), _feeds(ins))[0].shape == (0, 5)


def test_matmul_nbits_float16():
    ins, attrs = _nbits(48, 13, zp="float", bias=True)
    half = [x.astype(np.float16) if x is not None and x.dtype == np.float32 else x for x in ins]
    want = _run_ort(_model("MatMulNBits", half, attrs), _feeds(half))[0]
    got = run_mlrt(_model("MatMulNBits", half, attrs), _feeds(half))[0]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2, atol=2e-2)


def test_matmul_nbits_refusals():
    ins, attrs = _nbits(32, 4, zp="packed")
    _refused("MatMulNBits", ins, {**attrs, "K": 31})                      # A's last dim is not K
    _refused("MatMulNBits", ins, {**attrs, "N": 5})                       # B's shape
    _refused("MatMulNBits", ins, {**attrs, "bits": 3})
    _refused("MatMulNBits", ins, {**attrs, "block_size": 24})
    _refused("MatMulNBits", ins[:2] + [ins[2][:-1]] + ins[3:], attrs)      # scales count
    _refused("MatMulNBits", ins[:3] + [ins[3][:-1]], attrs)               # zero points count
    _refused("MatMulNBits", ins[:3] + [None, None, _f((3,))], attrs)      # bias count
    _refused("MatMulNBits", [ins[0].astype(np.float64)] + ins[1:], attrs)
    _refused("MatMulNBits", ins[:2], attrs)                               # no scales
    with pytest.raises(mlrt.NotImplemented):
        g_idx = np.arange(32, dtype=np.int32) // 16
        run_mlrt(_model("MatMulNBits", ins[:4] + [g_idx], attrs), ins[:4] + [g_idx])
    with pytest.raises(mlrt.MlrtError):                                   # K, N, block_size required
        run_mlrt(_model("MatMulNBits", ins, {"K": 32, "N": 4}), ins)


# -- com.microsoft QuantizeLinear / DequantizeLinear -----------------------------------------------

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("q_type", [np.uint8, np.int8, np.uint16, np.int16])
def test_ms_quantize_dequantize(n, q_type):
    x = _f((2, n, 5), 3.0)
    for s_shape, axis in (((), 1), ((n,), 1), ((5,), -1), ((2,), 0)):
        s = _scale(s_shape)
        z = rng.integers(0, 5, s_shape).astype(q_type)
        (q,) = check("QuantizeLinear", [x, s, z], {"axis": axis}, tol=(0, 0))
        check("DequantizeLinear", [q, s, z], {"axis": axis})
        check("DequantizeLinear", [q, s], {"axis": axis})
    check("QuantizeLinear", [x, _scale(())], tol=(0, 0))  # no zero point: uint8
    edges = np.array([0, -0.0, 1e9, -1e9, np.inf, -np.inf, 0.5, 1.5, 2.5, -0.5], np.float32)
    check("QuantizeLinear", [edges, np.array(1, np.float32), np.array(0, q_type)], tol=(0, 0))


def test_ms_quantize_float16_and_refusals():
    x = _f((3, 13), 3.0).astype(np.float16)
    s = _scale(()).astype(np.float16)
    (q,) = check("QuantizeLinear", [x, s, np.array(2, np.uint8)], tol=(0, 1))
    check("DequantizeLinear", [q, s, np.array(2, np.uint8)], tol=(1e-3, 1e-3))
    xf = _f((3, 13))
    _refused("QuantizeLinear", [xf.astype(np.float64), np.array(1, np.float64)])
    _refused("QuantizeLinear", [xf, _scale((4,)), np.zeros(4, np.uint8)])          # scale not along axis 1
    _refused("QuantizeLinear", [xf, _scale(()), np.zeros(2, np.uint8)])            # zero point shape
    _refused("DequantizeLinear", [np.zeros((3, 13), np.uint8), _scale(()), np.array(0, np.int8)])


# -- small real models quantized by onnxruntime's own tools --------------------------------------

def _float_mlp():
    w1, b1, w2 = _f((64, 48), 0.2), _f((48,)), _f((48, 17), 0.2)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["y"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 17])],
                              initializer=[numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
                                           numpy_helper.from_array(w2, "w2")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _compare(model, x, ops, tol):
    assert ops <= {n.op_type for n in model.graph.node}, [n.op_type for n in model.graph.node]
    got, want = run_mlrt(model, [x])[0], _run_ort(model, [x])[0]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_quantize_dynamic_mlp_fused_by_onnxruntime(tmp_path):
    """quantize_dynamic's MatMulInteger graph, then onnxruntime's own fusion of it into
    DynamicQuantizeMatMul / MatMulIntegerToFloat (the optimized model it saves)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    import onnx
    src, q, fused = tmp_path / "f.onnx", tmp_path / "q.onnx", tmp_path / "fused.onnx"
    onnx.save(_float_mlp(), src)
    quantize_dynamic(str(src), str(q), weight_type=QuantType.QInt8, per_channel=True)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = str(fused)
    ort.InferenceSession(str(q), so, providers=["CPUExecutionProvider"])
    model = onnx.load(fused)
    x = _f((5, 64))
    _compare(model, x, {"DynamicQuantizeMatMul"}, 1e-4)
    _compare(onnx.load(q), x, {"MatMulInteger", "DynamicQuantizeLinear"}, 1e-4)


def test_matmul_nbits_quantizer_mlp():
    try:
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    except ImportError as e:  # it needs onnx_ir, not a dependency of the dev environment
        pytest.skip(f"onnxruntime's MatMulNBits quantizer is not usable here: {e}")
    for symmetric in (True, False):
        quant = MatMulNBitsQuantizer(_float_mlp(), block_size=16, is_symmetric=symmetric)
        quant.process()
        _compare(quant.model.model, _f((3, 64)), {"MatMulNBits"}, 1e-4)


# -- DynamicQuantizeLSTM ---------------------------------------------------------------------------

def _qlstm_inputs(seq, batch, inp, hidden, dirs, per_column, w_type=np.int8, with_state=True):
    g = 4 * hidden
    sshape = (dirs, g) if per_column else (dirs,)
    w, r = _q((dirs, inp, g), w_type), _q((dirs, hidden, g), w_type)
    ws, rs = _scale(sshape) / 4, _scale(sshape) / 4
    # onnxruntime takes int8 weights only with zero points 0
    wz, rz = ((_q(sshape, w_type) // 8, _q(sshape, w_type) // 8) if w_type == np.uint8
              else (np.zeros(sshape, w_type), np.zeros(sshape, w_type)))
    opt = lambda v: v if with_state else None  # noqa: E731
    return [_f((seq, batch, inp)), w, r, opt(_f((dirs, 8 * hidden), 0.1)), None, opt(_f((dirs, batch, hidden), 0.5)),
            opt(_f((dirs, batch, hidden), 0.5)), opt(_f((dirs, 3 * hidden), 0.1)), ws, wz, rs, rz]


@pytest.mark.parametrize("hidden", (1, 13))
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("per_column", [False])  # onnxruntime 1.22+ refuses [dirs, 4H] zero points here
def test_dynamic_quantize_lstm(hidden, direction, per_column):
    dirs = 2 if direction == "bidirectional" else 1
    for w_type, with_state in ((np.int8, True), (np.uint8, False)):
        ins = _qlstm_inputs(5, 3, 7, hidden, dirs, per_column, w_type, with_state)
        const = tuple(i for i in (1, 2, 8, 9, 10, 11))
        check("DynamicQuantizeLSTM", ins, {"hidden_size": hidden, "direction": direction},
              outputs=("y0", "y1", "y2"), initializers=const)


def test_dynamic_quantize_lstm_refusals():
    ins = _qlstm_inputs(2, 1, 3, 4, 1, False)
    with pytest.raises(mlrt.NotImplemented):  # weights fed at run time
        run_mlrt(_model("DynamicQuantizeLSTM", ins, {"hidden_size": 4}), _feeds(ins))
    bad = list(ins)
    bad[8] = _scale((2,))
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(_model("DynamicQuantizeLSTM", bad, {"hidden_size": 4}, initializers=(1, 2, 8, 9, 10, 11)),
                 _feeds(bad, (1, 2, 8, 9, 10, 11)))
    bad = list(ins)
    bad[9] = bad[9].astype(np.uint8)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(_model("DynamicQuantizeLSTM", bad, {"hidden_size": 4}, initializers=(1, 2, 8, 9, 10, 11)),
                 _feeds(bad, (1, 2, 8, 9, 10, 11)))


def test_quantize_dynamic_lstm_model(tmp_path):
    from onnxruntime.quantization import quantize_dynamic
    import onnx
    hidden, inp = 16, 10
    w, r, b = _f((1, 4 * hidden, inp), 0.3), _f((1, 4 * hidden, hidden), 0.3), _f((1, 8 * hidden), 0.1)
    node = helper.make_node("LSTM", ["x", "w", "r", "b"], ["y", "y_h", "y_c"], hidden_size=hidden)
    graph = helper.make_graph([node], "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 2, inp])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "y_h", "y_c")],
                              initializer=[numpy_helper.from_array(v, n) for v, n in ((w, "w"), (r, "r"), (b, "b"))])
    src, q = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), src)
    quantize_dynamic(str(src), str(q), op_types_to_quantize=["LSTM"])
    _compare(onnx.load(q), _f((6, 2, inp)), {"DynamicQuantizeLSTM"}, 2e-2)

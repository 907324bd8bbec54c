"""RNN, GRU, LSTM against onnx.reference (directions, layouts, biases, initial states,
peepholes, linear_before_reset, float32 / float64, optional outputs, opsets 7 / 14 /
22) and, for what onnx.reference ignores (activations with alpha / beta, clip,
sequence_lens, input_forget), against onnxruntime and against the reference run on
the truncated sequences."""

import os
import subprocess
import sys

import numpy as np
import pytest
from onnx import numpy_helper

import mlrt
import mlrt.lowlevel as ml
from oracle import assert_same, check_node, make_model, run_mlrt, run_reference, tolerance

rng = np.random.default_rng(0)
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
N_OUT = {"RNN": 2, "GRU": 2, "LSTM": 3}
DIRS = {"forward": 1, "reverse": 1, "bidirectional": 2}


def make_inputs(op, seq, batch, size, hidden, direction="forward", layout=0, dtype=np.float32, bias=True,
                state=True, peepholes=True, lens=None):
    """X, W, R, B, sequence_lens, initial_h (, initial_c, P), trailing absent ones dropped."""
    nd, g = DIRS[direction], GATES[op]
    x = rng.standard_normal((batch, seq, size) if layout else (seq, batch, size)).astype(dtype)
    w = (rng.standard_normal((nd, g * hidden, size)) * 0.5).astype(dtype)
    r = (rng.standard_normal((nd, g * hidden, hidden)) * 0.5).astype(dtype)
    b = (rng.standard_normal((nd, 2 * g * hidden)) * 0.5).astype(dtype) if bias else None
    st = (batch, nd, hidden) if layout else (nd, batch, hidden)
    ins = [x, w, r, b, lens, rng.standard_normal(st).astype(dtype) if state else None]
    if op == "LSTM":
        ins += [rng.standard_normal(st).astype(dtype) if state else None,
                rng.standard_normal((nd, 3 * hidden)).astype(dtype) if peepholes else None]
    while ins[-1] is None:
        ins.pop()
    return ins


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("direction", list(DIRS))
@pytest.mark.parametrize("layout", [0, 1])
def test_directions_and_layouts(op, direction, layout):
    ins = make_inputs(op, 7, 3, 5, 4, direction, layout)
    check_node(op, ins, {"hidden_size": 4, "direction": direction, "layout": layout}, n_outputs=N_OUT[op])


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_defaults_and_float64(op, dtype):
    ins = make_inputs(op, 4, 2, 3, 5, "bidirectional", dtype=dtype, bias=False, state=False, peepholes=False)
    check_node(op, ins, {"hidden_size": 5, "direction": "bidirectional"}, n_outputs=N_OUT[op])


@pytest.mark.parametrize("direction", list(DIRS))
def test_gru_linear_before_reset(direction):
    ins = make_inputs("GRU", 6, 3, 4, 5, direction)
    check_node("GRU", ins, {"hidden_size": 5, "direction": direction, "linear_before_reset": 1}, n_outputs=2)


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("seq,batch,size,hidden", [(1, 1, 1, 1), (2, 1, 13, 2), (9, 4, 2, 13), (3, 2, 127, 9),
                                                    (40, 2, 3, 4), (5, 64, 8, 32)])
def test_sizes(op, seq, batch, size, hidden):
    ins = make_inputs(op, seq, batch, size, hidden)
    check_node(op, ins, {"hidden_size": hidden}, n_outputs=N_OUT[op])


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("opset", [7, 14, 22])
def test_opsets(op, opset):
    ins = make_inputs(op, 3, 2, 3, 4, "reverse")
    check_node(op, ins, {"hidden_size": 4, "direction": "reverse"}, n_outputs=N_OUT[op], opset=opset)


@pytest.mark.parametrize("op", list(GATES))
def test_optional_outputs(op):
    ins = make_inputs(op, 5, 2, 3, 4, "bidirectional")
    attrs = {"hidden_size": 4, "direction": "bidirectional"}
    full = run_reference(make_model(op, ins, attrs, N_OUT[op]), ins)
    names = ["Y", "Y_h", "Y_c"][:N_OUT[op]]
    for keep in range(N_OUT[op]):
        out_names = [n if k == keep else "" for k, n in enumerate(names)]
        (got,) = run_mlrt(make_model(op, ins, attrs, output_names=out_names), ins)
        assert_same(got, full[keep], *tolerance(op, 22), where=f"{op} {names[keep]} alone")


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("direction", list(DIRS))
def test_sequence_lens_against_truncated_sequences(op, direction):
    lens = np.array([5, 2, 1, 0, 3], np.int32)
    ins = make_inputs(op, 5, 5, 3, 4, direction, lens=lens)
    attrs = {"hidden_size": 4, "direction": direction}
    got = run_mlrt(make_model(op, ins, attrs, N_OUT[op]), ins)
    rtol, atol = tolerance(op, 22)
    for b, n in enumerate(lens):
        assert not got[0][n:, :, b].any(), "Y past the end of a sequence must be zero"
        if n == 0:
            assert not got[1][:, b].any()  # no step: zero states (as onnxruntime)
            continue
        one = [v[:n, b:b + 1] if k == 0 else v[:, b:b + 1] if k in (5, 6) else v for k, v in enumerate(ins)]
        one[4] = None
        want = run_reference(make_model(op, one, attrs, N_OUT[op]), one)
        np.testing.assert_allclose(got[0][:n, :, b:b + 1], want[0], rtol=rtol, atol=atol)
        for k in range(1, N_OUT[op]):
            np.testing.assert_allclose(got[k][:, b:b + 1], want[k], rtol=rtol, atol=atol)


@pytest.mark.parametrize("op", list(GATES))
def test_sequence_lens_layout1(op):
    """layout 1 with sequence_lens: the layout-0 result, transposed."""
    lens = np.array([3, 0, 4], np.int32)
    ins = make_inputs(op, 4, 3, 2, 5, "bidirectional", lens=lens)
    attrs = {"hidden_size": 5, "direction": "bidirectional"}
    want = run_mlrt(make_model(op, ins, attrs, N_OUT[op]), ins)
    ins1 = [v.transpose(1, 0, 2) if k in (0, 5, 6) and v is not None else v for k, v in enumerate(ins)]
    got = run_mlrt(make_model(op, ins1, {**attrs, "layout": 1}, N_OUT[op]), ins1)
    np.testing.assert_array_equal(got[0], want[0].transpose(2, 0, 1, 3))
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_array_equal(g, w.transpose(1, 0, 2))


def check_ort(op, ins, attrs):
    """onnxruntime as the oracle (layout 0, float32)."""
    ort = pytest.importorskip("onnxruntime")
    model = make_model(op, ins, attrs, N_OUT[op], 14)
    model.ir_version = 8
    for o in model.graph.output:
        o.type.tensor_type.elem_type = 1
    got = run_mlrt(model, ins)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    want = sess.run(None, {i.name: a for i, a in zip(sess.get_inputs(), [a for a in ins if a is not None])})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


ACTIVATION_SETS = {
    "RNN": [["LeakyRelu"], ["Affine"], ["Relu"], ["ScaledTanh"], ["Sigmoid"]],
    "GRU": [["HardSigmoid", "Softsign"], ["Sigmoid", "ScaledTanh"], ["HardSigmoid", "Elu"], ["Sigmoid", "Softplus"]],
    "LSTM": [["HardSigmoid", "Elu", "Softplus"], ["HardSigmoid", "ThresholdedRelu", "Tanh"],
             ["Sigmoid", "Relu", "Softsign"], ["Sigmoid", "Affine", "ScaledTanh"]],
}


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("direction", list(DIRS))
def test_activations_against_onnxruntime(op, direction):
    ins = make_inputs(op, 6, 3, 3, 5, direction)
    for acts in ACTIVATION_SETS[op]:
        attrs = {"hidden_size": 5, "direction": direction, "activations": acts * DIRS[direction],
                 "activation_alpha": [0.3, 0.2, 0.4, 0.1, 0.7, 0.6], "activation_beta": [0.6, 0.4, 0.3, 0.5, 0.2, 0.1]}
        check_ort(op, ins, attrs)


@pytest.mark.parametrize("acts", [["LeakyRelu"], ["HardSigmoid"], ["Elu"]])
def test_default_alpha_beta_against_onnxruntime(acts):
    """Missing alpha / beta take the ONNX operator's defaults (onnxruntime agrees for these;
    it uses 0 for Affine, ScaledTanh and ThresholdedRelu, where mlrt keeps the spec's
    operator defaults 1 / 0, 1 / 1 and 1)."""
    ins = make_inputs("RNN", 4, 2, 3, 5, "bidirectional")
    check_ort("RNN", ins, {"hidden_size": 5, "direction": "bidirectional", "activations": ["Tanh"] + acts})


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("direction", list(DIRS))
def test_clip_and_sequence_lens_against_onnxruntime(op, direction):
    ins = make_inputs(op, 6, 4, 3, 5, direction)
    check_ort(op, ins, {"hidden_size": 5, "direction": direction, "clip": 0.3})
    while len(ins) < 5:
        ins.append(None)
    ins[4] = np.array([6, 3, 1, 0], np.int32)
    check_ort(op, ins, {"hidden_size": 5, "direction": direction})
    if op == "LSTM":
        check_ort(op, ins, {"hidden_size": 5, "direction": direction, "input_forget": 1})
    if op == "GRU":
        check_ort(op, ins, {"hidden_size": 5, "direction": direction, "linear_before_reset": 1, "clip": 0.5})


@pytest.mark.parametrize("op", list(GATES))
def test_empty(op):
    for seq, batch in ((0, 2), (3, 0)):
        ins = make_inputs(op, seq, batch, 3, 4)
        got = run_mlrt(make_model(op, ins, {"hidden_size": 4}, N_OUT[op]), ins)
        assert got[0].shape == (seq, 1, batch, 4) and got[1].shape == (1, batch, 4)
        assert not got[1].any()


def test_bad_inputs():
    ins = make_inputs("LSTM", 3, 2, 3, 4)
    cases = [({"hidden_size": 5}, ins, "shape"),
             ({"hidden_size": 4, "direction": "bidirectional"}, ins, "shape"),
             ({"hidden_size": 4, "direction": "sideways"}, ins, "direction"),
             ({"hidden_size": 4, "activations": ["Sigmoid", "Tanh", "Swish"]}, ins, "activation"),
             ({"hidden_size": 4, "activations": ["Sigmoid"]}, ins, "activations"),
             ({"hidden_size": 4}, [ins[0].astype(np.float64)] + ins[1:], "type")]
    for attrs, inputs, match in cases:
        with pytest.raises(mlrt.MlrtError, match=match):
            run_mlrt(make_model("LSTM", inputs, attrs, 3), inputs)
    bad = list(ins)
    bad[4] = np.array([4, 1], np.int32)  # longer than the sequence
    with pytest.raises(mlrt.InvalidArgument, match="sequence_lens"):
        run_mlrt(make_model("LSTM", bad, {"hidden_size": 4}, 3), bad)
    # float16 has no LSTM kernel of its own: it runs on float32 copies, rounded back once
    half = [v.astype(np.float16) if v is not None and v.dtype == np.float32 else v for v in ins]
    got = run_mlrt(make_model("LSTM", half, {"hidden_size": 4}, 3), half)
    wide = run_mlrt(make_model("LSTM", ins, {"hidden_size": 4}, 3), [h.astype(np.float32) if h is not None and
                                                                     h.dtype == np.float16 else h for h in half])
    for g, w in zip(got, wide):
        assert g.dtype == np.float16
        np.testing.assert_allclose(g.astype(np.float32), w, rtol=2e-3, atol=2e-3)


# -- batch 1: matrix-vector steps, directions side by side, parts of a step across threads --

def constant_weights(model, ins):
    """The model with W and R as initializers (a constant W is transposed once by the plan)."""
    graph = model.graph
    for i in (1, 2):
        name = graph.node[0].input[i]
        graph.initializer.append(numpy_helper.from_array(ins[i], name))
        graph.input.remove(next(v for v in graph.input if v.name == name))
    return model


def contractive(ins, hidden):
    """R scaled by 1 / sqrt(hidden): a step no longer magnifies rounding differences
    (with make_inputs' R a wide RNN is chaotic, and float32 results differ in any order)."""
    ins = list(ins)
    ins[2] = (ins[2] / np.sqrt(hidden)).astype(ins[2].dtype)
    return ins


def run_threads(model, feeds, threads):
    options = ml.SessionOptions()
    options.intra_op_num_threads = threads
    return run_mlrt(model, feeds, sess_options=options)


def check_batch1(op, ins, attrs, threads=(1, 2, 4)):
    """Weights as inputs and as constants, on 1, 2 and 4 threads, against onnx.reference."""
    model = make_model(op, ins, attrs, N_OUT[op])
    want = run_reference(model, ins)
    rtol, atol = tolerance(op, 22)
    runs = [run_mlrt(model, ins)]
    feeds = [v for k, v in enumerate(ins) if k not in (1, 2)]
    runs += [run_threads(constant_weights(make_model(op, ins, attrs, N_OUT[op]), ins), feeds, t) for t in threads]
    for got in runs:
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("direction", list(DIRS))
@pytest.mark.parametrize("layout", [0, 1])
def test_batch1(op, direction, layout):
    for peepholes in (False, True):  # LSTM: the default gates, or peepholes
        ins = make_inputs(op, 9, 1, 5, 13, direction, layout, peepholes=peepholes)
        check_batch1(op, ins, {"hidden_size": 13, "direction": direction, "layout": layout}, threads=(2,))


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("hidden", [1, 16, 33, 127])
def test_batch1_sizes_and_threads(op, hidden):
    """127 units: a step in two or four parts (a partial block of 16 each) for GRU and LSTM."""
    for direction in ("forward", "bidirectional"):
        ins = contractive(make_inputs(op, 6, 1, 9, hidden, direction, bias=hidden != 16, state=hidden != 33,
                                      peepholes=False), hidden)
        check_batch1(op, ins, {"hidden_size": hidden, "direction": direction})


@pytest.mark.parametrize("direction", list(DIRS))
def test_batch1_gru_linear_before_reset(direction):
    ins = contractive(make_inputs("GRU", 7, 1, 4, 127, direction), 127)
    check_batch1("GRU", ins, {"hidden_size": 127, "direction": direction, "linear_before_reset": 1})


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("direction", list(DIRS))
def test_batch1_sequence_lens(op, direction):
    attrs = {"hidden_size": 96, "direction": direction}
    for n in (0, 1, 4, 6):
        ins = contractive(make_inputs(op, 6, 1, 3, 96, direction, lens=np.array([n], np.int32)), 96)
        feeds = [v for k, v in enumerate(ins) if k not in (1, 2)]
        for got in [run_mlrt(make_model(op, ins, attrs, N_OUT[op]), ins),
                    run_threads(constant_weights(make_model(op, ins, attrs, N_OUT[op]), ins), feeds, 2)]:
            assert not got[0][n:].any(), "Y past the end of the sequence must be zero"
            if n == 0:
                assert not any(g.any() for g in got[1:])
                continue
            one = [v[:n] if k == 0 else v for k, v in enumerate(ins)]
            one[4] = None
            want = run_reference(make_model(op, one, attrs, N_OUT[op]), one)
            rtol, atol = tolerance(op, 22)
            np.testing.assert_allclose(got[0][:n], want[0], rtol=rtol, atol=atol)
            for g, w in zip(got[1:], want[1:]):
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


@pytest.mark.parametrize("op", list(GATES))
def test_batch1_activations_and_clip_against_onnxruntime(op):
    ins = contractive(make_inputs(op, 6, 1, 3, 37, "bidirectional"), 37)
    acts = ACTIVATION_SETS[op][0] * 2
    check_ort(op, ins, {"hidden_size": 37, "direction": "bidirectional", "activations": acts,
                        "activation_alpha": [0.3, 0.2, 0.4, 0.1, 0.7, 0.6], "activation_beta": [0.6, 0.4, 0.3, 0.5]})
    check_ort(op, ins, {"hidden_size": 37, "direction": "bidirectional", "clip": 0.3})


@pytest.mark.parametrize("op", list(GATES))
def test_batch1_float64(op):
    ins = make_inputs(op, 5, 1, 4, 37, "bidirectional", dtype=np.float64)  # float64: no chaos to fear
    check_batch1(op, ins, {"hidden_size": 37, "direction": "bidirectional"})


def test_batch_with_constant_weights():
    """The batched path reads a constant W transposed once, as the one-row path does."""
    for op in GATES:
        ins = make_inputs(op, 5, 3, 7, 21, "bidirectional", peepholes=False)
        check_batch1(op, ins, {"hidden_size": 21, "direction": "bidirectional"}, threads=(2,))


# -- several batch rows: R^T in strips; directions side by side, a step's units in parts ------

def check_batched(op, ins, attrs, threads=(1, 2, 4)):
    """Constant weights (as exporters write them: R^T in strips made once) on 1, 2 and 4
    threads -- one direction at a time, or the directions side by side with a step's
    units in parts -- against onnxruntime (which honours sequence_lens), weights as
    inputs too (R^T in strips made per run)."""
    ort = pytest.importorskip("onnxruntime")
    model = make_model(op, ins, attrs, N_OUT[op], 14)
    model.ir_version = 8
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    want = sess.run(None, {i.name: a for i, a in zip(sess.get_inputs(), [a for a in ins if a is not None])})
    feeds = [v for k, v in enumerate(ins) if k not in (1, 2)]
    runs = [run_mlrt(model, ins)]
    runs += [run_threads(constant_weights(make_model(op, ins, attrs, N_OUT[op], 14), ins), feeds, t) for t in threads]
    for got in runs:
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    for got in runs[2:]:  # a batch row gets the same numbers whichever task or thread runs it
        for g, w in zip(got, runs[1]):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("direction", list(DIRS))
@pytest.mark.parametrize("batch", [2, 8, 9])
def test_batched_tasks_and_threads(op, direction, batch):
    """2, 8 and 9 rows (the strips' products 8 rows at a time, then the rest); 37 units
    (two strips, the second partial) or, with 8 and 9 rows, 96 (three strips, a step in
    two parts of 64 and 32 units on 2 and 4 threads); with and without sequence_lens
    (rows of every length, one empty)."""
    hidden = 37 if batch == 2 else 96
    for lens in (None, np.array([6, 1, 4, 0, 6, 3, 5, 2, 6][:batch], np.int32)):
        ins = contractive(make_inputs(op, 6, batch, 9, hidden, direction, lens=lens, peepholes=False), hidden)
        check_batched(op, ins, {"hidden_size": hidden, "direction": direction})


@pytest.mark.parametrize("op", ["GRU", "LSTM"])
def test_batched_exported_shapes(op):
    """The shapes torch.onnx exports (hidden 64-256, input 32-128, seq 8-64, batch 8),
    bidirectional with sequence_lens; GRU with and without linear_before_reset."""
    for seq, size, hidden in ((8, 32, 64), (16, 128, 256)):
        lens = np.linspace(seq, seq // 2, 8).astype(np.int32)
        ins = contractive(make_inputs(op, seq, 8, size, hidden, "bidirectional", lens=lens, peepholes=False), hidden)
        for lbr in ((0, 1) if op == "GRU" else (0,)):
            attrs = {"hidden_size": hidden, "direction": "bidirectional", **({"linear_before_reset": lbr} if lbr else {})}
            check_batched(op, ins, attrs, threads=(1, 2))


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_batched_projections_by_part(direction):
    """128 units in two parts of 64 (4 threads: bidirectional too), which the packed W's
    strips start on: each part's input projections made by the thread that runs its steps
    (kernels/rnn.c, part_proj_tasks); with sequence_lens."""
    lens = np.array([7, 3, 7, 1, 5, 7, 2, 6], np.int32)
    ins = contractive(make_inputs("LSTM", 7, 8, 40, 128, direction, lens=lens, peepholes=False), 128)
    check_batched("LSTM", ins, {"hidden_size": 128, "direction": direction}, threads=(1, 2, 4))


def test_batch1_portable_kernels():
    """MLRT_SGEMM_KERNEL=avx2 (read once per process, so in a child): the matrix-vector
    product through the GEMM, the gate arithmetic of every activation, and the batched
    steps' products on R^T packed in the GEMM's strips."""
    code = ("import sys; sys.path.insert(0, %r); import test_rnn as t; "
            "[t.test_batch1(op, d, 0) for op in t.GATES for d in t.DIRS]; "
            "[t.test_batch1_sizes_and_threads(op, 127) for op in t.GATES]; "
            "t.test_batch1_sequence_lens('GRU', 'bidirectional'); "
            "[t.test_batched_tasks_and_threads(op, 'bidirectional', 9) for op in t.GATES]") % os.path.dirname(__file__)
    env = dict(os.environ, MLRT_SGEMM_KERNEL="avx2")
    tests = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    env["PYTHONPATH"] = os.pathsep.join([tests, env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]

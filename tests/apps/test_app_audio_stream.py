"""App 3: an audio model fed chunk by chunk (20 chunks of 100 ms, log-mel features in
numpy), with the recurrent state carried between calls: one LSTM model (initial_h and
initial_c in, Y_h and Y_c out) and one GRU model (initial_h in, Y_h out)."""

import wave

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

MELS, HIDDEN, TAGS = 40, 32, 6


def recurrent(cell: str) -> onnx.ModelProto:
    """features[T,1,40] (+ states) -> probs[T,6] (+ next states)."""
    rng = np.random.default_rng({"LSTM": 31, "GRU": 32}[cell])
    gates = {"LSTM": 4, "GRU": 3}[cell]

    def r(name, std, *shape):
        return numpy_helper.from_array(rng.normal(0, std, shape).astype(np.float32), name)

    inits = [r("W", 0.08, 1, gates * HIDDEN, MELS), r("R", 0.15, 1, gates * HIDDEN, HIDDEN),
             r("B", 0.1, 1, 2 * gates * HIDDEN), r("w_out", 0.5, HIDDEN, TAGS), r("b_out", 0.1, TAGS),
             numpy_helper.from_array(np.array([-1, HIDDEN], np.int64), "flat")]
    state = ["h0", "c0"] if cell == "LSTM" else ["h0"]
    next_state = ["h1", "c1"] if cell == "LSTM" else ["h1"]
    # the log-mels centred per frame and scaled first, as exported front ends do
    n = helper.make_node
    nodes = [n("ReduceMean", ["features"], ["mu"], axes=[2], keepdims=1), n("Sub", ["features", "mu"], ["centered"]),
             n("Mul", ["centered", "scale"], ["x"]),
             n(cell, ["x", "W", "R", "B", "", *state], ["Y", *next_state], hidden_size=HIDDEN,
               **({"linear_before_reset": 1} if cell == "GRU" else {})),
             n("Reshape", ["Y", "flat"], ["y2"]), n("Gemm", ["y2", "w_out", "b_out"], ["logits"]),
             n("Softmax", ["logits"], ["probs"], axis=-1)]
    inits.append(numpy_helper.from_array(np.float32(0.2), "scale"))
    vi = helper.make_tensor_value_info
    states_in = [vi(s, T.FLOAT, [1, 1, HIDDEN]) for s in state]
    states_out = [vi(s, T.FLOAT, [1, 1, HIDDEN]) for s in next_state]
    g = helper.make_graph(nodes, f"streaming_{cell.lower()}",
                          [vi("features", T.FLOAT, ["frames", 1, MELS]), *states_in],
                          [vi("probs", T.FLOAT, ["frames", TAGS]), *states_out], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="tests/apps")
    onnx.checker.check_model(m)
    return m


def wav(path, rate=16000, seconds=2.0) -> None:
    t = np.arange(int(rate * seconds)) / rate
    rng = np.random.default_rng(33)
    chirp = np.sin(2 * np.pi * (200 + 1500 * t) * t) * (0.5 + 0.5 * np.sin(2 * np.pi * 1.5 * t))
    tone = 0.3 * np.sin(2 * np.pi * 3000 * t) * (t > 1.0)
    signal = 0.6 * chirp + tone + 0.05 * rng.standard_normal(t.size)
    pcm = np.clip(signal * 12000, -32768, 32767).astype(np.int16)
    with wave.open(str(path), "wb") as wf:
        wf.setnchannels(1)
        wf.setsampwidth(2)
        wf.setframerate(rate)
        wf.writeframes(pcm.tobytes())


def test_streaming_recurrent_models(tmp_path, run_app):
    audio, lstm, gru = tmp_path / "speech.wav", tmp_path / "lstm.onnx", tmp_path / "gru.onnx"
    wav(audio)
    onnx.save(recurrent("LSTM"), lstm)
    onnx.save(recurrent("GRU"), gru)
    ort, ours = run_app("stream_audio.py", audio, lstm, gru)
    assert ort.lines[0] == "20 chunks of 1600 samples" and len(ort.lines) == 1 + 2 * 21
    for model in ("lstm", "gru"):  # the tags change along the stream, and so does the state
        assert len({line.split()[-1] for line in ort.lines if line.startswith(f"{model} ")}) > 5
        assert np.abs(ort.arrays[f"{model}_h0"]).max() > 0.05
    ours.assert_matches(ort)

"""`mlrt info | run | bench | optimize` (package/_cli.py), run in-process through
mlrt.__main__.main on a small model built here and on onnx's light SqueezeNet."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlrt import lowlevel
from mlrt.__main__ import main

SQUEEZENET = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", "light_squeezenet.onnx")


@pytest.fixture
def tiny(tmp_path):
    """x float [batch, 4] -> MatMul, Relu, Softmax -> probs [batch, 3]; y int64 [2] -> Add -> y2."""
    w = numpy_helper.from_array((np.arange(12, dtype=np.float32).reshape(4, 3) - 5) / 10, "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("Relu", ["r"], ["r2"], name="relu2"),
         helper.make_node("Softmax", ["r2"], ["probs"], name="sm", axis=-1),
         helper.make_node("Add", ["y", "y"], ["y2"], name="add")],
        "tiny_graph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4]),
         helper.make_tensor_value_info("y", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 3]),
         helper.make_tensor_value_info("y2", TensorProto.INT64, [2])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="cli-test")
    helper.set_model_props(model, {"purpose": "testing"})
    path = tmp_path / "tiny.onnx"
    onnx.save(model, path)
    np.save(tmp_path / "x.npy", np.array([[1, -2, 3, 0.5]], np.float32))
    np.save(tmp_path / "y.npy", np.array([3, 4], np.int64))
    return path


def direct(model, feeds):
    session = lowlevel.InferenceSession(str(model))
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def fails(capsys, argv, *needles):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


def test_info_small_model(tiny, capsys):
    assert main(["info", str(tiny)]) == 0
    out = capsys.readouterr().out
    assert "x                        tensor(float)      [batch, 4]" in out
    assert "y2" in out and "tensor(int64)" in out
    assert "opsets: ai.onnx 17" in out
    assert "producer: cli-test" in out and "graph: tiny_graph" in out and "metadata purpose = testing" in out
    assert "Relu                                 2" in out and "MatMul                               1" in out
    assert "CPUExecutionProvider:" in out


def test_info_domain_and_light_model(capsys):
    assert main(["info", SQUEEZENET]) == 0
    out = capsys.readouterr().out
    session = lowlevel.InferenceSession(SQUEEZENET)
    for arg in session.get_inputs() + session.get_outputs():
        assert arg.name in out
    model = onnx.load(SQUEEZENET)
    convs = sum(n.op_type == "Conv" for n in model.graph.node)
    assert f"{'Conv':<32}{convs:>6}" in out
    assert f"operators ({len(model.graph.node)} nodes" in out


def test_run_matches_a_direct_run_and_saves(tiny, tmp_path, capsys):
    out_dir = tmp_path / "out"
    assert main(["run", str(tiny), "--input", f"x={tmp_path / 'x.npy'}", "--input", f"y={tmp_path / 'y.npy'}",
                 "--output-dir", str(out_dir)]) == 0
    out = capsys.readouterr().out
    expected = direct(tiny, {"x": np.load(tmp_path / "x.npy"), "y": np.load(tmp_path / "y.npy")})
    assert "probs: shape [1, 3] float32" in out and "y2: shape [2] int64" in out
    assert "top-5: " + str(int(np.argmax(expected["probs"]))) in out
    for name, value in expected.items():
        saved = np.load(out_dir / f"{name}.npy")
        assert saved.dtype == value.dtype
        np.testing.assert_array_equal(saved, value)


def test_run_npz_and_light_model(tmp_path, capsys):
    session = lowlevel.InferenceSession(SQUEEZENET)
    arg = session.get_inputs()[0]
    x = np.random.default_rng(0).standard_normal(arg.shape).astype(np.float32)
    np.savez(tmp_path / "feeds.npz", **{arg.name: x})
    assert main(["run", SQUEEZENET, "--input", str(tmp_path / "feeds.npz"), "--output-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    (expected,) = session.run(None, {arg.name: x})
    name = session.get_outputs()[0].name
    assert f"{name}: shape [{', '.join(map(str, expected.shape))}] float32" in out
    np.testing.assert_array_equal(np.load(tmp_path / f"{name}.npy"), expected)
    np.save(tmp_path / "x.npy", x)  # a one-input model takes a .npy without NAME=
    assert main(["run", SQUEEZENET, "--input", str(tmp_path / "x.npy")]) == 0
    assert f"{name}: shape [{', '.join(map(str, expected.shape))}] float32" in capsys.readouterr().out
    fails(capsys, ["run", SQUEEZENET, "--input", f"{arg.name}={tmp_path / 'feeds.npz'}"], "without NAME=")


def test_run_image(tmp_path, capsys):
    from PIL import Image
    graph = helper.make_graph([helper.make_node("ReduceMean", ["img"], ["m"], keepdims=0)], "img",
                              [helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("m", TensorProto.FLOAT, [])])
    model = tmp_path / "img.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    Image.new("RGB", (32, 16), (200, 100, 50)).save(tmp_path / "pic.png")
    assert main(["run", str(model), "--image", str(tmp_path / "pic.png"), "--output-dir", str(tmp_path)]) == 0
    assert "m: shape [] float32" in capsys.readouterr().out
    assert np.load(tmp_path / "m.npy") == pytest.approx((200 + 100 + 50) / 3, rel=1e-5)  # BGR, 0..255


def test_run_errors(tiny, tmp_path, capsys):
    x, y = f"x={tmp_path / 'x.npy'}", f"y={tmp_path / 'y.npy'}"
    fails(capsys, ["run", str(tmp_path / "missing.onnx")], "missing.onnx")
    fails(capsys, ["run", str(tiny), "--input", x], "inputs not given: y", "x tensor(float) [batch, 4]")
    fails(capsys, ["run", str(tiny), "--input", "x.npy"], "NAME=FILE.npy")
    fails(capsys, ["run", str(tiny), "--input", "x=", "--input", y], "NAME=FILE.npy")
    fails(capsys, ["run", str(tiny), "--input", f"z={tmp_path / 'x.npy'}", "--input", x, "--input", y],
          "no input z", "y tensor(int64) [2]")
    fails(capsys, ["run", str(tiny), "--input", "x=nothere.npy", "--input", y], "nothere.npy")
    np.save(tmp_path / "bad.npy", np.ones((1, 5), np.float32))
    fails(capsys, ["run", str(tiny), "--input", f"x={tmp_path / 'bad.npy'}", "--input", y], "'x'")
    fails(capsys, ["run", str(tiny), "--input", x, "--image", str(tmp_path / "x.npy")], "image-like")
    fails(capsys, ["run", str(tiny), "--input", x, "--input", y, "--output-dir", str(tmp_path / "x.npy" / "d")],
          "--output-dir")


def test_bench(tiny, capsys):
    assert main(["bench", str(tiny), "--runs", "20", "--warmup", "2", "--threads", "1", "--dim", "batch=3"]) == 0
    captured = capsys.readouterr()
    assert "20 runs after 2 warm-up" in captured.out and "x [3, 4]" in captured.out
    for word in ("p50", "p90", "p99", "mean", "runs/s"):
        assert word in captured.out
    assert "\r" in captured.err and "22/22" in captured.err
    fails(capsys, ["bench", str(tiny), "--dim", "batch"], "NAME=N")
    fails(capsys, ["bench", str(tiny), "--runs", "0"], "--runs")


@pytest.mark.parametrize("level", ["basic", "all"])
def test_optimize(tiny, tmp_path, capsys, level):
    out = tmp_path / f"opt_{level}.onnx"
    assert main(["optimize", str(tiny), str(out), "--level", level]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    feeds = {"x": np.load(tmp_path / "x.npy"), "y": np.load(tmp_path / "y.npy")}
    got, expected = direct(out, feeds), direct(tiny, feeds)
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-6)
    fails(capsys, ["optimize", str(tiny), str(tmp_path / "no" / "dir.onnx")], "no folder")


@pytest.mark.parametrize("command", [[], ["info"], ["run"], ["bench"], ["optimize"]])
def test_help_shows_examples(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    assert exit_.value.code == 0
    assert "examples:\n  mlrt " in capsys.readouterr().out

"""The `mlrt` command (package/__main__.py, package/_cli.py), run in-process through
mlrt.__main__.main on small models built here and on onnx's light models: what each
subcommand prints, and its contract -- errors and warnings in one line, status 2,
examples in every --help, --version, --dim checked, bars only on a terminal."""

from __future__ import annotations

import io
import os
import sys

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
    assert "\r" not in captured.err and "22/22" not in captured.err  # stderr is not a terminal: no bar
    fails(capsys, ["bench", str(tiny), "--dim", "batch"], "NAME=N")
    fails(capsys, ["bench", str(tiny), "--runs", "0"], "--runs")
    fails(capsys, ["bench", str(tiny), "--dim", "batch=0"], "NAME=N")


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_bench_progress_bar_only_on_a_terminal(tiny, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert main(["bench", str(tiny), "--runs", "20", "--warmup", "2"]) == 0
    assert "\r" in sys.stderr.getvalue() and "22/22" in sys.stderr.getvalue()
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert main(["bench", str(tiny), "--runs", "20", "--warmup", "2", "--quiet"]) == 0
    assert sys.stderr.getvalue() == ""


def test_a_dim_that_names_no_free_dimension_is_an_error(tiny, tmp_path, capsys):
    fails(capsys, ["bench", str(tiny), "--dim", "batch=2", "--dim", "seq=8"], "--dim seq",
          "no free dimension 'seq'", "its free dimensions: batch")
    fails(capsys, ["profile", str(tiny), "--dim", "sequence=8"], "mlrt profile: --dim sequence")
    fails(capsys, ["bench", SQUEEZENET, "--dim", "batch=8"], "it has none")


@pytest.fixture
def sequence_model(tmp_path):
    """x [batch, 4, seq] -> Conv with a window of 3: seq 1 (the default) is too short."""
    w = numpy_helper.from_array(np.ones((2, 4, 3), np.float32), "w")
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")], "seq",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, "seq"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2, None])], [w])
    path = tmp_path / "seq.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_profile_and_bench_size_free_dimensions(sequence_model, tmp_path, capsys):
    for command, printed in ((["profile", "--prefix", str(tmp_path / "p")], "Conv"), (["bench"], "x [1, 4, 16]")):
        fails(capsys, [command[0], str(sequence_model), *command[1:]], f"mlrt {command[0]}: node 'conv1'",
              "free dimensions batch, seq were given 1", "--dim seq=N")
        assert main([command[0], str(sequence_model), *command[1:], "--runs", "2", "--dim", "seq=16"]) == 0
        assert printed in capsys.readouterr().out


def test_every_error_is_one_line_with_status_2(tiny, tmp_path, capsys):
    (tmp_path / "folder.onnx").mkdir()
    (tmp_path / "bad.onnx").write_bytes(b"\x08\x07garbage\xff")
    fails(capsys, ["info", str(tmp_path / "folder.onnx")], "is a folder")
    fails(capsys, ["profile", str(tmp_path / "missing.onnx")], "mlrt profile: ", "missing.onnx")
    fails(capsys, ["profile", str(tiny), "--dim", "batch=x"], "NAME=N")
    fails(capsys, ["profile", str(tiny), "--runs", "0"], "--runs")
    fails(capsys, ["profile", str(tmp_path / "bad.onnx")], "mlrt profile: ")
    fails(capsys, ["runtime", "uninstall", "9.9.9", "--prefix", str(tmp_path / "prefix")], "mlrt runtime uninstall: ",
          "9.9.9")
    from PIL import Image
    (tmp_path / "photos").mkdir()
    Image.new("RGB", (8, 8)).save(tmp_path / "photos" / "a.png")
    photos = str(tmp_path / "photos")
    fails(capsys, ["batch", str(tmp_path / "bad.onnx"), photos, str(tmp_path / "out")], "mlrt batch: ",
          "bad.onnx is not an ONNX model")
    fails(capsys, ["batch", str(tmp_path / "folder.onnx"), photos, str(tmp_path / "out")], "is a folder")
    # usage mistakes, as argparse finds them (it exits): one line too, naming --help
    for argv, needles in ((["bench", str(tiny), "--runs", "x"], ("mlrt bench: argument --runs", "mlrt bench --help")),
                          (["frobnicate"], ("invalid choice", "mlrt --help")),
                          (["optimize", str(tiny)], ("mlrt optimize: ", "out")),
                          (["batch", str(tiny), photos, str(tmp_path / "o"), "--on-error", "ignore"], ("--on-error",)),
                          (["runtime"], ("mlrt runtime: ",))):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and all(n in err for n in needles), err


def test_an_unknown_provider_is_one_warning_line(tiny, capsys):
    assert main(["info", str(tiny), "--providers", "NoSuchExecutionProvider"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("mlrt info: warning: Specified provider 'NoSuchExecutionProvider'"), err
    assert len(err.strip().splitlines()) == 1 and "UserWarning" not in err and ".py:" not in err, err


def test_version(capsys):
    from mlrt import __version__
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out == f"mlrt {__version__}\n"


@pytest.mark.parametrize("level", ["basic", "all"])
def test_optimize(tiny, tmp_path, capsys, level):
    out = tmp_path / f"opt_{level}.onnx"
    assert main(["optimize", str(tiny), str(out), "--level", level]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert not (tmp_path / f"opt_{level}.onnx.data").exists()  # no weight of 1 KB: one file
    feeds = {"x": np.load(tmp_path / "x.npy"), "y": np.load(tmp_path / "y.npy")}
    got, expected = direct(out, feeds), direct(tiny, feeds)
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-6)
    fails(capsys, ["optimize", str(tiny), str(tmp_path / "no" / "dir.onnx")], "no folder")


LIGHT = os.path.dirname(SQUEEZENET)


@pytest.mark.parametrize("name, level", [("resnet50", "all"), ("squeezenet", "basic"), ("squeezenet", "extended")])
def test_optimized_light_models_load_again(name, level, tmp_path, capsys):
    """The light models are IR 3 graphs whose weights come from ConstantOfShape: folded,
    they are initializers that IR 3 asks to be declared as inputs, and megabytes."""
    model = os.path.join(LIGHT, f"light_{name}.onnx")
    out = tmp_path / f"{name}.{level}.onnx"
    assert main(["optimize", model, str(out), "--level", level]) == 0
    line = capsys.readouterr().out
    data = tmp_path / f"{name}.{level}.onnx.data"
    assert data.is_file() and data.stat().st_size > 1_000_000
    assert out.stat().st_size < 100_000  # the graph alone
    assert len(line.strip().splitlines()) == 1 and f"weights {data.stat().st_size / 1e6:.1f} MB in {data}" in line, line
    assert f"({out.stat().st_size / 1e3:.1f} KB;" in line and "the input" in line, line
    assert main(["info", str(out)]) == 0
    session = lowlevel.InferenceSession(model)
    arg = session.get_inputs()[0]
    x = np.random.default_rng(1).standard_normal(arg.shape).astype(np.float32)
    (expected,) = session.run(None, {arg.name: x})
    optimized = lowlevel.InferenceSession(str(out))
    assert [a.name for a in optimized.get_inputs()] == [arg.name]
    np.testing.assert_allclose(optimized.run(None, {arg.name: x})[0], expected, rtol=1e-4, atol=1e-6)
    written = onnx.load(str(out), load_external_data=False)
    assert written.ir_version == 3
    declared = {i.name for i in written.graph.input}
    assert all(t.name in declared for t in written.graph.initializer)  # as IR 3 asks
    onnx.checker.check_model(str(out))
    ort = pytest.importorskip("onnxruntime")
    (theirs,) = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, {arg.name: x})
    np.testing.assert_allclose(theirs, expected, rtol=1e-4, atol=1e-5)


def test_optimize_single_file_and_again(tmp_path, capsys):
    out = tmp_path / "sq.onnx"
    assert main(["optimize", SQUEEZENET, str(out), "--single-file"]) == 0
    assert not (tmp_path / "sq.onnx.data").exists() and out.stat().st_size > 1_000_000
    assert "weights" not in capsys.readouterr().out
    for _ in range(2):  # written again: the data file is replaced, not appended to
        assert main(["optimize", SQUEEZENET, str(out)]) == 0
        size = (tmp_path / "sq.onnx.data").stat().st_size
        assert size < 6_000_000
    assert (tmp_path / "sq.onnx.data").stat().st_mode == out.stat().st_mode  # readable by whoever reads the model
    lowlevel.InferenceSession(str(out))
    fails(capsys, ["optimize", SQUEEZENET, str(tmp_path)], "is a folder")


@pytest.mark.parametrize("command", [[], ["info"], ["run"], ["bench"], ["optimize"], ["profile"], ["batch"],
                                     ["runtime"], ["runtime", "bundle"], ["runtime", "install"],
                                     ["runtime", "list"], ["runtime", "which"], ["runtime", "uninstall"]])
def test_help_shows_examples(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "examples:\n  mlrt " in out or "example:\n  mlrt " in out

"""mlrt.highlevel.batch without Ray: the predictors called as Ray Data calls them, and
predict() on the local engine (a process pool), each checked against a plain loop
over the low-level API; video frames and tables; errors."""

import json
import subprocess
import sys

import cv2
import numpy as np
import onnx
import pytest
from PIL import Image

import mlrt
from batch_data import cnn_model, image_job, loop_reference
from mlrt.highlevel import LearningModel, LearningModelSession, VideoSource
from mlrt.highlevel import batch as B

pa = pytest.importorskip("pyarrow", reason="pyarrow (the 'batch' and 'ray' extras) writes the Parquet output")
import pyarrow.parquet as pq  # noqa: E402


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    return image_job(tmp_path_factory)


def test_local_engine_equals_a_plain_loop(images, tmp_path):
    model, paths = images
    summary = B.predict(model, paths[0].parent, tmp_path / "out", actors=2, batch_size=16, progress=False)
    assert (summary.rows, summary.engine, summary.actors, summary.kind) == (200, "local", 2, "image")
    got = B.read_results(tmp_path / "out")
    assert got["row"].tolist() == list(range(200))  # every row once
    assert got["path"].tolist() == [str(p) for p in paths]
    assert got["prob"].shape == (200, 10)
    np.testing.assert_array_equal(got["prob"], loop_reference(model, paths, 16))
    # one image at a time through the high-level API: the same classes, the scores to rounding
    session = LearningModelSession(LearningModel.load(model))
    single = np.concatenate([session.evaluate_features({"data": mlrt.media.VideoFrame.from_file(p)}).outputs["prob"]
                             for p in paths])
    np.testing.assert_allclose(got["prob"], single, rtol=0, atol=1e-6)
    assert (got["prob"].argmax(1) == single.argmax(1)).all()


def test_predictor_takes_decoded_images_as_ray_reads_them(images):
    model, paths = images
    predictor = B.ImagePredictor(model, frame_format="RGB8")
    rgb = np.empty(8, dtype=object)
    rgb[:] = [np.asarray(Image.open(p).convert("RGB")) for p in paths[:8]]
    out = B.table_columns(predictor({"row": np.arange(8), "image": rgb}))
    assert list(out) == ["row", "prob", "error"]  # pixels are not passed through; the output schema's order
    by_path = B.table_columns(B.ImagePredictor(model)({"row": np.arange(8),
                                                       "path": np.array([str(p) for p in paths[:8]], object)}))
    np.testing.assert_array_equal(out["prob"], by_path["prob"])
    np.testing.assert_array_equal(out["prob"], loop_reference(model, paths[:8], 8))


def test_a_model_with_a_fixed_batch_runs_in_steps(images, tmp_path):
    model, paths = images
    fixed = cnn_model()
    fixed.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
    fixed.graph.output[0].type.tensor_type.shape.dim[0].dim_value = 1
    onnx.save(fixed, tmp_path / "fixed.onnx")
    out = B.table_columns(B.ImagePredictor(tmp_path / "fixed.onnx")({"path": np.array([str(p) for p in paths[:5]],
                                                                                      object)}))
    np.testing.assert_array_equal(out["prob"], loop_reference(model, paths[:5], 1))


def test_video_frames(images, tmp_path):
    model, _ = images
    video = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (48, 40))
    rng = np.random.default_rng(3)
    for i in range(30):
        writer.write(np.full((40, 48, 3), 8 * i, np.uint8) + rng.integers(0, 30, (40, 48, 3), dtype=np.uint8))
    writer.release()
    summary = B.predict(model, video, tmp_path / "out", actors=2, batch_size=7, progress=False)
    assert summary.kind == "video" and summary.rows == 30
    got = B.read_results(tmp_path / "out")
    assert got["frame"].tolist() == list(range(30))
    session = LearningModelSession(LearningModel.load(model))
    with VideoSource(video) as source:
        frames = list(source)
    single = np.concatenate([session.evaluate_features({"data": f}).outputs["prob"] for f in frames])
    np.testing.assert_allclose(got["prob"], single, rtol=0, atol=1e-6)


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """A scikit-learn classifier (one [N, 4] input) and a Parquet table of 1000 rows."""
    pytest.importorskip("skl2onnx", reason="scikit-learn models come through skl2onnx (test extra)")
    from skl2onnx import to_onnx
    from sklearn.linear_model import LogisticRegression
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1000, 4)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(np.int64) + (X[:, 3] > 1)
    onx = to_onnx(LogisticRegression(max_iter=500).fit(X, y), X[:1], options={"zipmap": False})
    folder = tmp_path_factory.mktemp("table")
    onnx.save(onx, folder / "clf.onnx")
    pq.write_table(pa.table({"id": np.arange(1000) * 7, **{f"f{i}": X[:, i] for i in range(4)}}), folder / "t.parquet")
    return folder / "clf.onnx", folder / "t.parquet", X


def table_reference(model, X, batch_size):
    session = mlrt.lowlevel.InferenceSession(str(model))
    parts = [session.run(None, {"X": X[i:i + batch_size]}) for i in range(0, len(X), batch_size)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def test_local_engine_over_a_table(table, tmp_path):
    model, data, X = table
    B.predict(model, data, tmp_path / "out", actors=2, batch_size=100, progress=False,
              columns=["f0", "f1", "f2", "f3"])
    got = B.read_results(tmp_path / "out")
    assert got["row"].tolist() == list(range(1000)) and got["id"].tolist() == list(range(0, 7000, 7))
    label, prob = table_reference(model, X, 100)
    np.testing.assert_array_equal(got["label"], label)
    np.testing.assert_array_equal(got["probabilities"], prob)


def test_tabular_predictor_feeds_inputs_by_name(table):
    model, _, X = table
    predictor = B.TabularPredictor(model, keep_columns=["id"])
    out = B.table_columns(predictor({"row": np.arange(10), "id": np.arange(10), "X": X[:10].astype(np.float64)}))
    assert list(out) == ["row", "id", "label", "probabilities", "error"]
    label, prob = table_reference(model, X[:10], 10)
    np.testing.assert_array_equal(out["label"], label)


def test_cli_batch(images, tmp_path):
    model, paths = images
    run = subprocess.run([sys.executable, "-m", "mlrt", "batch", str(model), str(paths[0].parent), str(tmp_path / "o"),
                          "--engine", "local", "--actors", "1", "--batch-size", "50"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "200 rows" in run.stdout
    got = B.read_results(tmp_path / "o")
    np.testing.assert_array_equal(got["prob"], loop_reference(model, paths, 50))


def test_errors(images, tmp_path):
    model, paths = images
    with pytest.raises(mlrt.InvalidArgument, match="engine"):
        B.predict(model, paths, tmp_path / "a", engine="spark")
    with pytest.raises(mlrt.InvalidArgument, match="batch_size"):
        B.predict(model, paths, tmp_path / "a", batch_size=0)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(mlrt.InvalidArgument, match="not an empty folder"):
        B.predict(model, paths, tmp_path / "full", actors=1)
    with pytest.raises(mlrt.InvalidArgument, match="does not exist"):
        B.predict(model, tmp_path / "nothing", tmp_path / "a")
    with pytest.raises(mlrt.InvalidArgument, match="does not exist"):
        B.read_results(tmp_path / "nothing")
    (tmp_path / "junk.parquet").write_bytes(b"not parquet")
    with pytest.raises(mlrt.InvalidArgument, match="not a Parquet file"):
        B.predict(model, tmp_path / "junk.parquet", tmp_path / "a")
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n not a picture")
    with pytest.raises(mlrt.MlrtError, match="bad.png"):
        B.predict(model, [paths[0], bad], tmp_path / "b", actors=1, progress=False)
    predictor = B.ImagePredictor(model)
    with pytest.raises(mlrt.InvalidArgument, match="no column 'path'"):
        predictor({"row": np.arange(2)})
    np.testing.assert_array_equal(B.table_columns(predictor({"path": np.array([str(paths[0])], object)}))["prob"],
                                  loop_reference(model, paths[:1], 1))  # still usable


def test_ray_missing_names_the_extra(images, tmp_path, monkeypatch):
    model, paths = images
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(mlrt.InvalidArgument, match=r'pip install "ray\[data\]" pyarrow .*"\.\[ray\]" in a checkout'):
        B.predict(model, paths, tmp_path / "r", engine="ray")


def corrupt(folder, name="corrupt.png"):
    path = folder / name
    path.write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    return path


def test_a_corrupt_image_stops_the_job_naming_it_or_is_skipped_and_listed(images, tmp_path):
    model, paths = images
    bad = corrupt(tmp_path)
    inputs = [paths[0], paths[1], bad, *paths[2:9]]  # row 2 is bad; batches of 4: rows 0-3, 4-7, 8-9
    with pytest.raises(mlrt.InvalidArgument, match=r"image '.*corrupt.png': .*on_error=\"skip\""):
        B.predict(model, inputs, tmp_path / "stop", actors=2, batch_size=4, progress=False)
    summary = B.predict(model, inputs, tmp_path / "skip", actors=2, batch_size=4, progress=False, on_error="skip")
    assert summary.rows == 10 and len(summary.errors) == 1
    error = summary.errors[0]
    assert (error["row"], error["input"]) == (2, str(bad)) and "not a readable image" in error["error"]
    listed = [json.loads(line) for line in (tmp_path / "skip" / "_errors.jsonl").read_text().splitlines()]
    assert listed == summary.errors and summary.errors_file == str(tmp_path / "skip" / "_errors.jsonl")
    got = B.read_results(tmp_path / "skip")  # (the errors file is not read as a part)
    assert got["row"].tolist() == list(range(10))  # the bad row keeps its place: null outputs, "error" saying why
    assert got["path"].tolist() == [str(p) for p in inputs]
    assert [e is None for e in got["error"]] == [i != 2 for i in range(10)] and "not a readable image" in got["error"][2]
    assert np.isnan(got["prob"][2]).all()
    good = got["prob"][[i for i in range(10) if i != 2]]
    np.testing.assert_array_equal(good[:2], loop_reference(model, paths[:2], 2))
    np.testing.assert_allclose(good, loop_reference(model, [p for p in inputs if p != bad], 1), atol=1e-6)
    clean = B.predict(model, paths[:3], tmp_path / "clean", actors=1, progress=False, on_error="skip")
    assert clean.errors == [] and clean.errors_file is None and not (tmp_path / "clean" / "_errors.jsonl").exists()
    with pytest.raises(mlrt.InvalidArgument, match="on_error"):
        B.predict(model, paths, tmp_path / "x", on_error="ignore")


def test_predictor_skips_what_it_cannot_read(images, tmp_path):
    model, paths = images
    bad = corrupt(tmp_path)
    predictor = B.ImagePredictor(model, on_error="skip")
    table = predictor({"row": np.arange(10, 13), "path": np.array([str(paths[0]), str(bad), str(paths[1])], object)})
    out = B.table_columns(table)
    assert out["row"].tolist() == [10, 11, 12] and out["prob"].shape == (3, 10) and np.isnan(out["prob"][1]).all()
    assert out["error"][0] is None and "not a readable image" in out["error"][1]
    assert [(e["row"], e["input"]) for e in predictor.errors] == [(11, str(bad))]
    every_bad = predictor({"row": np.arange(2), "path": np.array([str(bad), str(tmp_path / "gone.png")], object)})
    assert every_bad.schema == table.schema  # (the same schema when no row of a batch could be read)
    out = B.table_columns(every_bad)
    assert out["row"].tolist() == [0, 1] and np.isnan(out["prob"]).all() and out["prob"].shape == (2, 10)
    assert len(predictor.errors) == 3
    rgb = np.empty(2, dtype=object)
    rgb[:] = [np.zeros((8, 8, 3), np.uint8), np.zeros((8, 8, 5), np.uint8)]  # 5 channels: no pixel format
    out = B.table_columns(predictor({"row": np.arange(2), "image": rgb}))
    assert out["row"].tolist() == [0, 1] and out["error"][0] is None and predictor.errors[-1]["input"] == "row 1"
    with pytest.raises(mlrt.InvalidArgument, match="on_error"):
        B.ImagePredictor(model, on_error="warn")


def test_a_script_without_a_main_guard_runs_the_local_engine(images, tmp_path):
    """The docs' example pasted into a script: the workers do not import it again."""
    model, paths = images
    script = tmp_path / "job.py"
    script.write_text(f"""from mlrt.highlevel import batch
print("job starts")
summary = batch.predict({str(model)!r}, {str(paths[0].parent)!r}, {str(tmp_path / 'scores')!r}, actors=2,
                        batch_size=50)
print(summary.rows, len(batch.read_results({str(tmp_path / 'scores')!r})["prob"]))
""")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["job starts", "200 200"]  # the script ran once
    assert run.stderr == "", run.stderr  # (and no progress bar: stderr is not a terminal)


def test_a_model_that_loads_but_cannot_run_is_an_error_not_a_broken_pool(images, tmp_path):
    model, paths = images
    m = cnn_model()
    m.graph.node[1].op_type, m.graph.node[1].domain = "Frobnicate", "org.example"
    m.opset_import.append(onnx.helper.make_opsetid("org.example", 1))
    onnx.save(m, tmp_path / "custom.onnx")
    with pytest.raises(mlrt.MlrtError, match="Frobnicate") as info:
        B.predict(tmp_path / "custom.onnx", paths[:4], tmp_path / "o", actors=1, progress=False)
    assert "worker process" not in str(info.value)
    with pytest.raises(mlrt.InvalidModel, match="holds no ONNX model"):
        (tmp_path / "empty.onnx").write_bytes(b"")
        B.predict(tmp_path / "empty.onnx", paths[:4], tmp_path / "o2", actors=1, progress=False)


def test_cli_batch_on_error(images, tmp_path):
    model, paths = images
    folder = tmp_path / "photos"
    folder.mkdir()
    for p in paths[:5]:
        (folder / p.name).write_bytes(p.read_bytes())
    corrupt(folder, "img0002.png")
    cli = [sys.executable, "-m", "mlrt", "batch", str(model), str(folder)]
    stop = subprocess.run([*cli, str(tmp_path / "a"), "--actors", "1"], capture_output=True, text=True, timeout=300)
    assert stop.returncode == 2 and len(stop.stderr.strip().splitlines()) == 1, stop.stderr
    assert stop.stderr.startswith("mlrt batch: image '") and "img0002.png" in stop.stderr
    assert "--on-error skip" in stop.stderr
    skip = subprocess.run([*cli, str(tmp_path / "b"), "--actors", "1", "--on-error", "skip"], capture_output=True,
                          text=True, timeout=300)
    assert skip.returncode == 0 and skip.stderr == "", skip.stderr
    assert skip.stdout.startswith("4 of 5 rows (image)")
    assert f"1 input skipped ({folder / 'img0002.png'}: " in skip.stdout
    assert skip.stdout.strip().endswith(f"listed in {tmp_path / 'b' / '_errors.jsonl'}")


def test_predictor_decodes_a_bytes_column_from_memory(images, tmp_path):
    """Rows as ray.data.read_binary_files(include_paths=True) gives them: the encoded file in
    "bytes" (decoded in memory: the files are gone before the predictor runs) and "path"
    (passed through, naming a bad one); the pixels are not passed through."""
    model, paths = images
    data = np.empty(4, dtype=object)
    data[:] = [p.read_bytes() for p in paths[:3]] + [b"\x89PNG\r\n\x1a\n truncated"]
    names = np.array([str(tmp_path / f"gone{i}.png") for i in range(4)], object)
    predictor = B.ImagePredictor(model, on_error="skip")
    out = B.table_columns(predictor({"row": np.arange(4), "path": names, "bytes": data}))
    assert list(out) == ["row", "path", "prob", "error"]
    np.testing.assert_array_equal(out["prob"][:3], loop_reference(model, paths[:3], 3))
    assert "gone3.png is not a readable image" in out["error"][3]
    assert predictor.errors[-1]["input"] == names[3]
    frame = mlrt.media.VideoFrame.from_bytes(paths[0].read_bytes())
    same = mlrt.media.VideoFrame.from_file(paths[0])
    assert (frame.width, frame.height, frame.pixel_format) == (same.width, same.height, same.pixel_format)
    with pytest.raises(mlrt.InvalidArgument, match="expected bytes"):
        mlrt.media.VideoFrame.from_bytes("not bytes")
    with pytest.raises(mlrt.InvalidArgument, match="expected a pyarrow.Table"):
        B.table_columns({"row": [1]})


def test_ray_writer_gathers_rows_by_their_outputs_size(images, tmp_path):
    """The Ray writer's rows per file: up to 1024, up to 32 MB of outputs (8 bytes an
    element at most); none where an output's size per row is not declared, or a file
    would hold no more than a batch."""
    from mlrt.highlevel import LearningModel
    from mlrt.highlevel._batch_ray import rows_per_file
    model, _ = images
    assert rows_per_file(LearningModel.load(model), 16) == 1024  # [N, 10] probabilities
    from onnx import TensorProto, helper
    def one_output(shape):
        g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
        return LearningModel.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    assert rows_per_file(one_output(["n", 100_000]), 16) == 41  # 800 KB a row
    assert rows_per_file(one_output(["n", 400_000]), 16) is None  # 3.2 MB a row: 10 rows, under a batch
    assert rows_per_file(one_output(["n", "k"]), 16) is None


def test_decoding_apart_gives_the_predictors_own_tensors(images, tmp_path):
    """decode_images (Ray Data's decoding task under decode="tasks") tensorizes as the
    predictor's binding does: the predictor evaluates its batch to the same bits; a corrupt
    image is zeros and its decode_error, null outputs and its error in the predictor's table."""
    model, paths = images
    bad = tmp_path / "corrupt.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    batch = {"row": np.arange(9), "path": np.array([str(p) for p in paths[:8]] + [str(bad)], object)}
    target = B.image_target(model)
    assert (target.channels, target.height, target.width) == (3, 32, 32)
    decoded = B.decode_images(batch, target=target, on_error="skip")
    assert decoded["tensor"].shape == (9, 3, 32, 32) and not decoded["tensor"][8].any()
    assert decoded["decode_error"][:8].tolist() == [None] * 8 and "not a readable image" in decoded["decode_error"][8]
    out = B.table_columns(B.ImagePredictor(model, on_error="skip")(decoded))
    assert list(out) == ["row", "path", "prob", "error"]  # (the tensors are not passed through)
    np.testing.assert_array_equal(out["prob"][:8], loop_reference(model, paths[:8], 8))
    assert np.isnan(out["prob"][8]).all() and "not a readable image" in out["error"][8]
    with pytest.raises(mlrt.MlrtError, match="corrupt.png"):
        B.decode_images(batch, target=target)
    with pytest.raises(mlrt.MlrtError, match="table rows"):
        B.predict(model, {"x": np.zeros(3)}, tmp_path / "o", decode="tasks", progress=False)
    with pytest.raises(mlrt.MlrtError, match="decode must be"):
        B.predict(model, paths[:4], tmp_path / "o", decode="gpu", progress=False)


def test_local_engine_decoding_apart(images, tmp_path):
    """decode="tasks" on the local engine: a pool of decoding processes feeds the evaluating
    ones; the same rows and bits as decoding in the workers, a corrupt image kept."""
    model, paths = images
    bad = tmp_path / "corrupt.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    summary = B.predict(model, [*paths[:60], bad, *paths[60:100]], tmp_path / "out", actors=1, batch_size=8,
                        decode="tasks", on_error="skip", progress=False)
    assert [(e["row"], e["input"]) for e in summary.errors] == [(60, str(bad))]
    got = B.read_results(tmp_path / "out")
    assert got["row"].tolist() == list(range(101))
    keep = [i for i in range(101) if i != 60]
    np.testing.assert_array_equal(got["prob"][keep], loop_reference(model, paths[:100], 8))
    assert np.isnan(got["prob"][60]).all()
    with pytest.raises(mlrt.MlrtError, match="corrupt.png"):
        B.predict(model, [*paths[:3], bad], tmp_path / "out2", actors=1, decode="tasks", progress=False)

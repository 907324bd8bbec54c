"""mlrt.highlevel.batch without Ray: the predictors called as Ray Data calls them, and
predict() on the local engine (a process pool), each checked against a plain loop
over the low-level API; video frames and tables; errors."""

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
    out = predictor({"row": np.arange(8), "image": rgb})
    assert sorted(out) == ["prob", "row"]  # pixels are not passed through
    by_path = B.ImagePredictor(model)({"row": np.arange(8), "path": np.array([str(p) for p in paths[:8]], object)})
    np.testing.assert_array_equal(out["prob"], by_path["prob"])
    np.testing.assert_array_equal(out["prob"], loop_reference(model, paths[:8], 8))


def test_a_model_with_a_fixed_batch_runs_in_steps(images, tmp_path):
    model, paths = images
    fixed = cnn_model()
    fixed.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
    fixed.graph.output[0].type.tensor_type.shape.dim[0].dim_value = 1
    onnx.save(fixed, tmp_path / "fixed.onnx")
    out = B.ImagePredictor(tmp_path / "fixed.onnx")({"path": np.array([str(p) for p in paths[:5]], object)})
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
    out = predictor({"row": np.arange(10), "id": np.arange(10), "X": X[:10].astype(np.float64)})
    assert sorted(out) == ["id", "label", "probabilities", "row"]
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
    np.testing.assert_array_equal(predictor({"path": np.array([str(paths[0])], object)})["prob"],
                                  loop_reference(model, paths[:1], 1))  # still usable


def test_ray_missing_names_the_extra(images, tmp_path, monkeypatch):
    model, paths = images
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(mlrt.InvalidArgument, match=r"mlrt\[ray\]"):
        B.predict(model, paths, tmp_path / "r", engine="ray")

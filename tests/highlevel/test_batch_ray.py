"""mlrt.highlevel.batch on Ray Data: a local Ray (ray.init, 2 CPUs, a 100 MB object
store, on 127.0.0.1 only) classifies 200 images and scores a Parquet table exactly as a
plain loop over the low-level API does, with no row lost or repeated, also when a worker
process is killed mid-job; a job whose outputs are many times the object store finishes
at the documented sizing; a bad input is the predictor's MlrtError, not Ray's; a
predictor's session runs the threads its actor was given; no Ray process listens beyond
loopback."""

import os
import signal
import subprocess
import sys

import numpy as np
import onnx
import pytest

import mlrt

import batch_data
from batch_data import image_job, loop_reference, ray_listeners, share_with_workers
from mlrt.highlevel import batch as B

ray = pytest.importorskip("ray", reason="Ray is the 'ray' extra (pip install '.[ray]'); CI installs it")
pytest.importorskip("pyarrow", reason="pyarrow comes with ray[data]")


@pytest.fixture(scope="module")
def local_ray():
    if ray.is_initialized():
        ray.shutdown()
    B.ray_init(num_cpus=2, object_store_memory=100 << 20, log_to_driver=False)
    share_with_workers(ray, sys.modules[__name__])
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    return image_job(tmp_path_factory)


def test_ray_images_equal_a_plain_loop(local_ray, images, tmp_path):
    model, paths = images
    summary = B.predict(model, paths[0].parent, tmp_path / "out", engine="ray", actors=2, batch_size=16)
    assert (summary.rows, summary.engine, summary.actors) == (200, "ray", 2)
    got = B.read_results(tmp_path / "out")
    assert got["row"].tolist() == list(range(200))  # each row exactly once
    assert got["path"].tolist() == [str(p) for p in paths]
    np.testing.assert_array_equal(got["prob"], loop_reference(model, paths, 16))


def test_ray_decoding_in_tasks_equals_a_plain_loop(local_ray, images, tmp_path):
    """decode="tasks": Ray Data's tasks read, decode and tensorize; the actors only evaluate."""
    model, paths = images
    bad = tmp_path / "corrupt.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    summary = B.predict(model, [*paths, bad], tmp_path / "out", engine="ray", actors=1, batch_size=16,
                        decode="tasks", on_error="skip")
    assert [(e["row"], e["input"]) for e in summary.errors] == [(200, str(bad))]
    got = B.read_results(tmp_path / "out")
    assert got["row"].tolist() == list(range(201)) and "tensor" not in got
    np.testing.assert_array_equal(got["prob"][:200], loop_reference(model, paths, 16))
    with pytest.raises(mlrt.MlrtError, match="corrupt.png"):
        B.predict(model, [*paths[:3], bad], tmp_path / "out2", engine="ray", actors=1, decode="tasks")


def test_ray_keeps_and_lists_a_corrupt_image(local_ray, images, tmp_path):
    model, paths = images
    bad = tmp_path / "corrupt.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    inputs = [*paths[:5], bad, *paths[5:10]]
    summary = B.predict(model, inputs, tmp_path / "out", engine="ray", actors=1, batch_size=4, on_error="skip")
    assert [(e["row"], e["input"]) for e in summary.errors] == [(5, str(bad))]
    assert "not a readable image" in summary.errors[0]["error"]
    assert (tmp_path / "out" / "_errors.jsonl").is_file()
    got = B.read_results(tmp_path / "out")
    assert got["row"].tolist() == list(range(11))  # the bad row in its place: null outputs, "error" saying why
    assert np.isnan(got["prob"][5]).all() and "not a readable image" in got["error"][5]
    assert all(e is None for k, e in enumerate(got["error"]) if k != 5)
    np.testing.assert_allclose(got["prob"][[k for k in range(11) if k != 5]], loop_reference(model, paths[:10], 1),
                               atol=1e-6)


def test_ray_table_equals_a_plain_loop(local_ray, tmp_path):
    pytest.importorskip("skl2onnx", reason="scikit-learn models come through skl2onnx (test extra)")
    import pyarrow as pa
    import pyarrow.parquet as pq
    from skl2onnx import to_onnx
    from sklearn.ensemble import RandomForestClassifier

    import mlrt.lowlevel as ll
    rng = np.random.default_rng(7)
    X = rng.normal(size=(600, 5)).astype(np.float32)
    y = (X[:, 0] * X[:, 1] > 0).astype(np.int64)
    onx = to_onnx(RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0).fit(X, y), X[:1],
                  options={"zipmap": False})
    onnx.save(onx, tmp_path / "rf.onnx")
    pq.write_table(pa.table({f"f{i}": X[:, i] for i in range(5)}), tmp_path / "t.parquet")
    B.predict(tmp_path / "rf.onnx", tmp_path / "t.parquet", tmp_path / "out", engine="ray", actors=2, batch_size=64)
    got = B.read_results(tmp_path / "out")
    assert got["row"].tolist() == list(range(600))
    np.testing.assert_array_equal(np.stack([got[f"f{i}"] for i in range(5)], 1), X)
    session = ll.InferenceSession(str(tmp_path / "rf.onnx"))
    label = np.concatenate([session.run(None, {"X": X[i:i + 64]})[0] for i in range(0, 600, 64)])
    prob = np.concatenate([session.run(None, {"X": X[i:i + 64]})[1] for i in range(0, 600, 64)])
    np.testing.assert_array_equal(got["label"], label)
    np.testing.assert_array_equal(got["probabilities"], prob)


class KilledOnce(B.ImagePredictor):
    """Kills its own worker process (SIGKILL) the first time it is handed row 100."""

    def __init__(self, marker, **options):
        super().__init__(**options)
        self.marker = marker

    def __call__(self, batch):
        if 100 in batch["row"].tolist() and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return super().__call__(batch)


def test_ray_worker_killed_mid_job(local_ray, images, tmp_path):
    """Ray restarts the actor and retries its batch: every row comes out exactly once."""
    model, paths = images
    marker = tmp_path / "killed"
    dataset = B.ray_dataset(paths, 16).map_batches(KilledOnce, fn_constructor_kwargs={"marker": str(marker), "model": str(model)},
                                  compute=ray.data.ActorPoolStrategy(size=2), batch_size=16, num_cpus=1,
                                  batch_format="numpy")
    dataset.write_parquet(str(tmp_path / "out"))
    assert marker.exists()  # a worker did die
    got = B.read_results(tmp_path / "out")
    assert got["row"].tolist() == list(range(200))
    np.testing.assert_array_equal(got["prob"], loop_reference(model, paths, 16))


def test_ray_listens_on_loopback_only(local_ray, images, tmp_path):
    model, paths = images
    B.predict(model, paths[:20], tmp_path / "out", engine="ray", actors=2, batch_size=10)  # workers up
    listeners = ray_listeners()
    assert listeners, "found no Ray process listening"
    beyond = [item for item in listeners if not batch_data.LOOPBACK.match(item[2][0])]
    assert not beyond, beyond
    assert os.environ.get("RAY_USAGE_STATS_ENABLED") == "0"


def _tile_model(path, width: int):
    """x [n, 4] -> Tile -> y [n, 4 width]: outputs as large as asked."""
    from onnx import TensorProto, helper, numpy_helper
    g = helper.make_graph([helper.make_node("Tile", ["x", "reps"], ["y"])], "tile",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4 * width])],
                          [numpy_helper.from_array(np.array([1, width], np.int64), "reps")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_outputs_many_times_the_object_store_at_the_documented_sizing(local_ray, tmp_path):
    """Two actors of one CPU each on this 2-CPU Ray (actors = CPUs / num_cpus, as docs/batch.md
    says) and 800 MB of outputs through a 100 MB object store: the actors leave Ray Data's
    writer its quarter CPU, and the job finishes (it used to wait for the writer forever).
    The [rows, 4] input column arrives as Arrow list rows and is stacked back."""
    import threading
    model = _tile_model(tmp_path / "tile.onnx", 100_000)
    x = np.random.default_rng(3).random((500, 4), dtype=np.float32)
    done = {}
    job = threading.Thread(target=lambda: done.update(summary=B.predict(
        model, {"x": x}, tmp_path / "out", engine="ray", actors=2, batch_size=16)), daemon=True)
    job.start()
    job.join(timeout=240)
    assert not job.is_alive(), "the job did not finish in 240 s (sizing deadlock?)"
    assert done["summary"].rows == 500
    import pyarrow.parquet as pq
    table = pq.read_table(tmp_path / "out", columns=["row", "y"])
    assert table.num_rows == 500 and sorted(table.column("row").to_pylist()) == list(range(500))
    k = table.column("row").to_pylist().index(123)
    np.testing.assert_array_equal(np.asarray(table.column("y")[k].as_py())[:8], np.tile(x[123], 2))


def test_a_bad_input_raises_the_predictors_error_not_rays(local_ray, images, tmp_path):
    """on_error="raise" on Ray: the MlrtError the actor raised, naming the file, one line
    (no RayTaskError chained); `mlrt batch --engine ray`: one line, exit status 2."""
    model, paths = images
    bad = tmp_path / "corrupt.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    with pytest.raises(mlrt.InvalidArgument, match=r"image '.*corrupt.png'") as caught:
        B.predict(model, [*paths[:3], bad], tmp_path / "out", engine="ray", actors=1, batch_size=2)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert "RayTaskError" not in str(caught.value) and len(str(caught.value).splitlines()) == 1


class ThreadsProbe(B.TabularPredictor):
    """Answers with the threads its session was made with."""

    def __call__(self, batch):
        return {"row": batch["row"], "threads": np.full(len(batch["row"]), self.threads)}


@pytest.mark.parametrize("cpus", [1, 2])
def test_a_predictor_in_a_pipeline_runs_its_actors_cpus(local_ray, tmp_path, cpus):
    """A user's own map_batches (no predict()): the session's threads are the CPUs Ray gave
    the actor (num_cpus), not one per core of the node."""
    model = _tile_model(tmp_path / "tile.onnx", 1)
    ds = ray.data.from_items([{"row": i, "x": np.zeros(4, np.float32)} for i in range(8)])
    ds = ds.map_batches(ThreadsProbe, fn_constructor_kwargs={"model": str(model)}, batch_size=4,
                        compute=ray.data.ActorPoolStrategy(size=1), num_cpus=cpus, batch_format="numpy")
    assert {int(r["threads"]) for r in ds.take_all()} == {cpus}


def test_output_none_returns_the_dataset(local_ray, images, tmp_path):
    """predict(..., output=None) on Ray: the job as a Dataset, not yet run, to go on with."""
    model, paths = images
    ds = B.predict(model, paths[:20], None, engine="ray", actors=1, batch_size=8)
    assert isinstance(ds, ray.data.Dataset)
    rows = sorted(ds.take_all(), key=lambda r: r["row"])
    assert [r["row"] for r in rows] == list(range(20))
    np.testing.assert_array_equal(np.stack([r["prob"] for r in rows]), loop_reference(model, paths[:20], 8))
    with pytest.raises(mlrt.InvalidArgument, match="engine"):
        B.predict(model, paths[:20], None, engine="local")


def test_cli_on_ray_ends_in_one_line_and_status_2(local_ray, images, tmp_path):
    """`mlrt batch --engine ray` (its own Ray, in a child): a corrupt image ends the job with
    the predictor's one line and exit status 2, no Python traceback (Ray's logs and progress
    lines kept off the console); with --on-error skip it finishes and says what it skipped."""
    model, paths = images
    folder = tmp_path / "photos"
    folder.mkdir()
    for p in paths[:3]:
        (folder / p.name).write_bytes(p.read_bytes())
    (folder / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    cli = [sys.executable, "-m", "mlrt", "batch", str(model), str(folder)]
    env = dict(os.environ, RAY_ADDRESS="")  # (a Ray of its own, not the tests')
    stop = subprocess.run([*cli, str(tmp_path / "a"), "--engine", "ray", "--actors", "1"], capture_output=True,
                          text=True, timeout=300, env=env)
    lines = stop.stderr.strip().splitlines()
    assert stop.returncode == 2 and lines[-1].startswith("mlrt batch: image '") and "bad.png" in lines[-1], stop.stderr
    assert "Traceback" not in stop.stderr and len(lines) <= 2, stop.stderr  # (at most a line of Ray's C++ core)
    skip = subprocess.run([*cli, str(tmp_path / "b"), "--engine", "ray", "--actors", "1", "--on-error", "skip"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert skip.returncode == 0 and skip.stdout.startswith("3 of 4 rows (image)"), skip.stdout + skip.stderr


def test_both_engines_write_one_schema(local_ray, images, tmp_path):
    """The same job on Ray and on the local engine: the same columns, types, field metadata
    and order (row, the columns passed through, the outputs, error), and the same rows,
    the unreadable one included (null outputs, its error)."""
    import pyarrow.parquet as pq
    model, paths = images
    bad = tmp_path / "corrupt.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    inputs = [*paths[:5], bad, *paths[5:7]]
    B.predict(model, inputs, tmp_path / "ray", engine="ray", actors=1, batch_size=4, on_error="skip")
    B.predict(model, inputs, tmp_path / "local", engine="local", actors=1, batch_size=4, on_error="skip",
              progress=False)
    schemas = [pq.read_schema(sorted((tmp_path / e).glob("*.parquet"))[0]) for e in ("ray", "local")]
    fields = [[(f.name, f.type, f.metadata) for f in s] for s in schemas]
    assert fields[0] == fields[1] and [f[0] for f in fields[0]] == ["row", "path", "prob", "error"], fields
    got = [B.read_results(tmp_path / e) for e in ("ray", "local")]
    assert got[0]["row"].tolist() == got[1]["row"].tolist() == list(range(8))
    assert list(got[0]["error"]) == list(got[1]["error"]) and got[0]["error"][5]
    np.testing.assert_array_equal(got[0]["prob"], got[1]["prob"])  # (NaN rows alike)


def test_read_binary_files_feeds_the_predictor_bytes(local_ray, images, tmp_path):
    """ray.data.read_binary_files(include_paths=True) -> ImagePredictor: each image decoded
    from the bytes Ray read (the predictor never opens the file), as a plain loop gives."""
    model, paths = images
    folder = tmp_path / "photos"
    folder.mkdir()
    for p in paths[:12]:
        (folder / p.name).write_bytes(p.read_bytes())
    ds = ray.data.read_binary_files(str(folder), include_paths=True)
    ds = ds.map_batches(B.ImagePredictor, fn_constructor_kwargs={"model": str(model)}, batch_size=4,
                        compute=ray.data.ActorPoolStrategy(size=1), num_cpus=1, batch_format="numpy")
    rows = sorted(ds.take_all(), key=lambda r: r["path"])
    assert [os.path.basename(r["path"]) for r in rows] == [p.name for p in paths[:12]]
    assert all(r["error"] is None and "bytes" not in r for r in rows)
    np.testing.assert_allclose(np.stack([r["prob"] for r in rows]), loop_reference(model, paths[:12], 1), atol=1e-6)

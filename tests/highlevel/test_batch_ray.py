"""mlrt.highlevel.batch on Ray Data: a local Ray (ray.init, 2 CPUs, on 127.0.0.1 only)
classifies 200 images and scores a Parquet table exactly as a plain loop over the
low-level API does, with no row lost or repeated, also when a worker process is
killed mid-job; no Ray process listens beyond loopback."""

import os
import signal
import sys

import numpy as np
import onnx
import pytest

import batch_data
from batch_data import image_job, loop_reference, ray_listeners, share_with_workers
from mlrt.highlevel import batch as B

ray = pytest.importorskip("ray", reason="Ray is the 'ray' extra (pip install '.[ray]'); CI installs it")
pytest.importorskip("pyarrow", reason="pyarrow comes with ray[data]")


@pytest.fixture(scope="module")
def local_ray():
    if ray.is_initialized():
        ray.shutdown()
    B.ray_init(num_cpus=2, object_store_memory=150 << 20, log_to_driver=False)
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


def test_ray_skips_and_lists_a_corrupt_image(local_ray, images, tmp_path):
    model, paths = images
    bad = tmp_path / "corrupt.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    inputs = [*paths[:5], bad, *paths[5:10]]
    summary = B.predict(model, inputs, tmp_path / "out", engine="ray", actors=1, batch_size=4, on_error="skip")
    assert [(e["row"], e["input"]) for e in summary.errors] == [(5, str(bad))]
    assert "not a readable image" in summary.errors[0]["error"]
    assert (tmp_path / "out" / "_errors.jsonl").is_file()
    got = B.read_results(tmp_path / "out")
    assert got["row"].tolist() == [0, 1, 2, 3, 4, 6, 7, 8, 9, 10]
    np.testing.assert_allclose(got["prob"], loop_reference(model, paths[:10], 1), atol=1e-6)


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

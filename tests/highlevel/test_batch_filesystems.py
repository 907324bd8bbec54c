"""mlrt.highlevel.batch with its inputs and outputs on another filesystem: an S3-compatible
server (moto's, started by this module on 127.0.0.1, never a real cloud) holds the
images, a Parquet table and the outputs.  On both engines the workers read the images'
bytes from S3 (the driver only lists them) and the outputs are written there as Parquet,
the same rows as a plain loop over the local copies; by URI (s3://..., the endpoint in
its query) and by a filesystem object (pyarrow's, or fsspec's); a corrupt image kept and
listed; what is refused, and how."""

import os

import numpy as np
import pytest

import batch_data
from batch_data import image_job, loop_reference, share_with_workers
from mlrt import MlrtError
from mlrt.highlevel import batch as B

moto_server = pytest.importorskip("moto.server", reason="moto (a test extra) serves S3 on 127.0.0.1 for these tests")
pa = pytest.importorskip("pyarrow", reason="pyarrow (the 'batch' and 'ray' extras) reads and writes the Parquet")
import pyarrow.fs as pafs  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

N = 40  # images; a corrupt one sorts after them


@pytest.fixture(scope="module")
def s3():
    """A bucket "jobs" on a moto server on 127.0.0.1: (pyarrow filesystem, URI query naming it)."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    keys = {"AWS_ACCESS_KEY_ID": "mlrt-test", "AWS_SECRET_ACCESS_KEY": "mlrt-test", "AWS_DEFAULT_REGION": "us-east-1"}
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update(keys)  # (read by URIs' filesystems, here and in the workers, which inherit them)
    fs = pafs.S3FileSystem(access_key="mlrt-test", secret_key="mlrt-test", endpoint_override=f"{host}:{port}",
                           scheme="http", region="us-east-1", allow_bucket_creation=True)
    fs.create_dir("jobs")
    try:
        yield fs, f"?endpoint_override={host}:{port}&scheme=http&region=us-east-1"
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def uploaded(s3, tmp_path_factory):
    """The image job's model and local pictures, the pictures (and a corrupt one, last) put
    in s3://jobs/in/."""
    fs, _ = s3
    model, paths = image_job(tmp_path_factory, N)
    for p in paths:
        with fs.open_output_stream(f"jobs/in/{p.name}") as f:
            f.write(p.read_bytes())
    with fs.open_output_stream("jobs/in/zz-corrupt.png") as f:
        f.write(b"\x89PNG\r\n\x1a\n truncated")
    return model, paths


def _uri(s3, path: str) -> str:
    return f"s3://{path}{s3[1]}"


def _check(got, model, paths, batch_size):
    """The job's rows: every image once in order, the outputs of a plain loop over the
    local copies, the corrupt one null with its error."""
    assert got["row"].tolist() == list(range(N + 1))
    assert got["path"].tolist() == [f"jobs/in/{p.name}" for p in paths] + ["jobs/in/zz-corrupt.png"]
    np.testing.assert_array_equal(got["prob"][:N], loop_reference(model, paths, batch_size))
    assert np.isnan(got["prob"][N]).all() and "not a readable image" in got["error"][N]
    assert all(e is None for e in got["error"][:N])


def test_local_engine_reads_and_writes_s3_by_uri(s3, uploaded):
    model, paths = uploaded
    summary = B.predict(model, _uri(s3, "jobs/in"), _uri(s3, "jobs/out-local"), actors=2, batch_size=8,
                        on_error="skip", progress=False)
    assert (summary.rows, summary.kind, summary.output) == (N + 1, "image", "s3://jobs/out-local")
    assert [(e["row"], e["input"]) for e in summary.errors] == [(N, "jobs/in/zz-corrupt.png")]
    assert summary.errors_file == "s3://jobs/out-local/_errors.jsonl"
    fs = s3[0]
    assert fs.get_file_info("jobs/out-local/_errors.jsonl").size > 0
    _check(B.read_results(_uri(s3, "jobs/out-local")), model, paths, 8)


def test_a_filesystem_object_pyarrow_or_fsspec(s3, uploaded):
    model, paths = uploaded
    fs = s3[0]
    B.predict(model, "jobs/in", "jobs/out-fs", filesystem=fs, actors=1, batch_size=8, on_error="skip",
              progress=False)
    _check(B.read_results("jobs/out-fs", filesystem=fs), model, paths, 8)
    fsspec = pytest.importorskip("fsspec", reason="fsspec comes with ray[data]")
    from fsspec.implementations.arrow import ArrowFSWrapper
    wrapped = ArrowFSWrapper(fs)  # (an fsspec filesystem: wrapped back for pyarrow by mlrt)
    assert isinstance(wrapped, fsspec.AbstractFileSystem)
    _check(B.read_results("jobs/out-fs", filesystem=wrapped), model, paths, 8)


def test_a_predictor_reads_paths_through_its_filesystem(s3, uploaded):
    model, paths = uploaded
    predictor = B.ImagePredictor(model, filesystem=s3[0])
    out = B.table_columns(predictor({"row": np.arange(3), "path": np.array([f"jobs/in/{p.name}" for p in paths[:3]],
                                                                          dtype=object)}))
    np.testing.assert_array_equal(out["prob"], loop_reference(model, paths[:3], 3))
    with pytest.raises(MlrtError, match=r"image 'jobs/in/missing.png': cannot be read"):
        predictor({"row": np.arange(1), "path": np.array(["jobs/in/missing.png"], dtype=object)})


def test_cli_takes_uris(s3, uploaded):
    import subprocess
    import sys
    model, _ = uploaded
    run = subprocess.run([sys.executable, "-m", "mlrt", "batch", str(model), _uri(s3, "jobs/in"),
                          _uri(s3, "jobs/out-cli"), "--on-error", "skip", "--actors", "1", "--quiet"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert f"{N} of {N + 1} rows (image)" in run.stdout and "s3://jobs/out-cli" in run.stdout
    assert B.read_results(_uri(s3, "jobs/out-cli"))["row"].tolist() == list(range(N + 1))


def test_file_uris_are_local_paths(uploaded, tmp_path):
    model, paths = uploaded
    B.predict(model, f"file://{paths[0].parent}", f"file://{tmp_path / 'out'}", actors=1, batch_size=8,
              progress=False)
    got = B.read_results(tmp_path / "out")
    assert got["path"].tolist() == [str(p) for p in paths]  # (local paths, read as files here)
    np.testing.assert_array_equal(got["prob"], loop_reference(model, paths, 8))


def test_refused_clearly(s3, uploaded, tmp_path):
    model, _ = uploaded
    with pytest.raises(MlrtError, match="does not exist"):
        B.predict(model, _uri(s3, "jobs/nothing-here"), tmp_path / "o1", progress=False)
    with pytest.raises(MlrtError, match="exists and is not an empty folder"):
        B.predict(model, _uri(s3, "jobs/in"), _uri(s3, "jobs/in"), progress=False)
    with pytest.raises(MlrtError, match="different filesystems"):
        B.predict(model, [_uri(s3, "jobs/in/img0000.png"), str(uploaded[1][1])], tmp_path / "o2", progress=False)
    with pytest.raises(MlrtError, match="filesystem must be"):
        B.predict(model, "jobs/in", tmp_path / "o3", filesystem=object(), progress=False)
    with pytest.raises(MlrtError, match="neither pyarrow nor fsspec"):
        B.predict(model, "nosuchscheme://x/y", tmp_path / "o4", progress=False)


# -- Ray: the actors read the images from S3, Ray Data writes the outputs there, a table comes from S3 --

@pytest.fixture(scope="module")
def local_ray(s3):
    ray = pytest.importorskip("ray", reason="Ray is the 'ray' extra (pip install '.[ray]'); CI installs it")
    if ray.is_initialized():
        ray.shutdown()
    B.ray_init(num_cpus=2, object_store_memory=100 << 20, log_to_driver=False)  # (after s3: the keys inherited)
    share_with_workers(ray, batch_data)
    yield ray
    ray.shutdown()


def test_ray_reads_and_writes_s3(s3, uploaded, local_ray):
    model, paths = uploaded
    summary = B.predict(model, _uri(s3, "jobs/in"), _uri(s3, "jobs/out-ray"), engine="ray", actors=2, batch_size=8,
                        on_error="skip")
    assert [(e["row"], e["input"]) for e in summary.errors] == [(N, "jobs/in/zz-corrupt.png")]
    _check(B.read_results(_uri(s3, "jobs/out-ray")), model, paths, 8)


def test_ray_reads_a_parquet_table_on_s3_in_its_tasks(s3, local_ray, tmp_path):
    fs = s3[0]
    # a linear model over 3 columns: y = x @ w
    from onnx import TensorProto, helper, numpy_helper, save
    w = np.array([[1.0], [-2.0], [0.5]], np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "lin",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 1])],
                              [numpy_helper.from_array(w, "w")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "lin.onnx")
    X = np.random.default_rng(2).normal(size=(300, 3)).astype(np.float32)
    for name, part in (("a", X[:200]), ("b", X[200:])):  # two files, row groups of 64 rows
        pq.write_table(pa.table({"x": pa.FixedSizeListArray.from_arrays(pa.array(part.ravel()), 3)}),
                       f"jobs/t/{name}.parquet", filesystem=fs, row_group_size=64)

    def forbidden(*args, **kwargs):
        raise AssertionError("the driver read the table's rows")
    with pytest.MonkeyPatch.context() as patch:  # here only the footers: Ray Data's tasks read the rows
        for where, name in ((pq, "read_table"), (pq.ParquetFile, "read"), (pq.ParquetFile, "read_row_group"),
                            (pq.ParquetFile, "iter_batches")):
            patch.setattr(where, name, forbidden)
        summary = B.predict(tmp_path / "lin.onnx", "jobs/t", "jobs/out-table", filesystem=fs, engine="ray",
                            actors=1, batch_size=64)
    assert summary.rows == 300
    got = B.read_results("jobs/out-table", filesystem=fs)
    assert got["row"].tolist() == list(range(300))
    np.testing.assert_allclose(got["y"][:, 0], X @ w[:, 0], rtol=1e-6)

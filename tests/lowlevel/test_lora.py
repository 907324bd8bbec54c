"""LoRA adapters (lowlevel/_lora.py): LoraAdapter, AdapterFormat and
RunOptions.add_active_adapter, against onnxruntime itself: files go both ways
between the two, runs with adapters active give onnxruntime's outputs, and what
onnxruntime refuses mlrt refuses with its own error classes, the session staying usable.

onnxruntime is imported here as itself (nothing installs mlrt in its place)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import mlrt
import mlrt.lowlevel as ml
from mlrt.lowlevel import _lora

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the oracle these tests compare with")

TOL = {"rtol": 1e-5, "atol": 1e-5}  # float32 MatMul/Add, summed in other orders by the two runtimes
D, R0, R1 = 13, 4, 2  # model width, the model's own LoRA rank, the adapters' rank
rng = np.random.default_rng(7)
W = rng.standard_normal((D, D)).astype(np.float32)
A0, B0 = rng.standard_normal((D, R0)).astype(np.float32), rng.standard_normal((R0, D)).astype(np.float32)
A1, B1 = rng.standard_normal((D, R1)).astype(np.float32), rng.standard_normal((R1, D)).astype(np.float32)
A2, B2 = rng.standard_normal((D, R1)).astype(np.float32), rng.standard_normal((R1, D)).astype(np.float32)
X = rng.standard_normal((9, D)).astype(np.float32)


@pytest.fixture(autouse=True)
def real_onnxruntime():
    if ort is ml or "mlrt" in getattr(ort, "__file__", "mlrt"):
        pytest.skip("onnxruntime is mlrt here (a test installed it): these tests need the real one")


def lora_model(merged: bool = False) -> bytes:
    """y = x @ W + (x @ lora_A) @ lora_B, lora_A and lora_B overridable initializers of a
    free rank "r"; merged: y = x @ (W + lora_A @ lora_B), a subgraph of initializers only,
    which an optimizer must not fold since the initializers are overridable."""
    inputs = [helper.make_tensor_value_info("x", T.FLOAT, ["N", D]),
              helper.make_tensor_value_info("lora_A", T.FLOAT, [D, "r"]),
              helper.make_tensor_value_info("lora_B", T.FLOAT, ["r", D])]
    inits = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(A0, "lora_A"),
             numpy_helper.from_array(B0, "lora_B")]
    if merged:
        nodes = [helper.make_node("MatMul", ["lora_A", "lora_B"], ["delta"]),
                 helper.make_node("Add", ["W", "delta"], ["w_eff"]), helper.make_node("MatMul", ["x", "w_eff"], ["y"])]
    else:
        nodes = [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("MatMul", ["x", "lora_A"], ["xa"]),
                 helper.make_node("MatMul", ["xa", "lora_B"], ["xab"]), helper.make_node("Add", ["xw", "xab"], ["y"])]
    g = helper.make_graph(nodes, "lora", inputs, [helper.make_tensor_value_info("y", T.FLOAT, ["N", D])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=9).SerializeToString()


def expected(a, b, x=X):
    return x @ W + (x @ a) @ b


def adapter_file(rt, path, params: dict, adapter_version=0, model_version=0) -> str:
    """An adapter file written by `rt`'s AdapterFormat (onnxruntime's or mlrt's)."""
    f = rt.AdapterFormat()
    f.set_adapter_version(adapter_version)
    f.set_model_version(model_version)
    f.set_parameters({k: rt.OrtValue.ortvalue_from_numpy(v) for k, v in params.items()})
    f.export_adapter(str(path))
    return str(path)


def ort_file(path, params: dict, adapter_version=0, model_version=0) -> str:
    return adapter_file(ort, path, params, adapter_version, model_version)


def mlrt_file(path, params: dict, adapter_version=0, model_version=0) -> str:
    return adapter_file(ml, path, params, adapter_version, model_version)


_held = []  # onnxruntime's RunOptions do not keep their adapters alive: the tests do


def adapters(module, *paths):
    """RunOptions of `module` (onnxruntime or mlrt.lowlevel) with the adapters at `paths` active."""
    ro = module.RunOptions()
    for p in paths:
        a = module.LoraAdapter()
        a.Load(p)
        ro.add_active_adapter(a)
        _held.append(a)
    return ro


@pytest.fixture(scope="module")
def sessions():
    return (ml.InferenceSession(lora_model()),
            ort.InferenceSession(lora_model(), providers=["CPUExecutionProvider"]))


def test_onnxruntime_file_runs_in_mlrt_as_in_onnxruntime(tmp_path, sessions):
    mine, theirs = sessions
    path = ort_file(tmp_path / "a1.onnx_adapter", {"lora_A": A1, "lora_B": B1}, 5, 2)
    base = mine.run(None, {"x": X})[0]
    np.testing.assert_allclose(base, theirs.run(None, {"x": X})[0], **TOL)
    np.testing.assert_allclose(base, expected(A0, B0), **TOL)
    got = mine.run(None, {"x": X}, adapters(ml, path))[0]
    np.testing.assert_allclose(got, theirs.run(None, {"x": X}, adapters(ort, path))[0], **TOL)
    np.testing.assert_allclose(got, expected(A1, B1), **TOL)
    assert not np.allclose(got, base)
    # the run without the adapter is unchanged, before and after, quick path or not
    np.testing.assert_array_equal(mine.run(None, {"x": X})[0], base)
    np.testing.assert_array_equal(mine.run(None, {"x": X}, ml.RunOptions())[0], base)


def test_mlrt_file_loads_in_onnxruntime(tmp_path, sessions):
    mine, theirs = sessions
    path = mlrt_file(tmp_path / "a1.onnx_adapter", {"lora_A": A1, "lora_B": B1}, 3, 11)
    ort.LoraAdapter().Load(path)
    back = ort.AdapterFormat.read_adapter(path)
    assert (back.get_format_version(), back.get_adapter_version(), back.get_model_version()) == (1, 3, 11)
    got = {k: v.numpy() for k, v in back.get_parameters().items()}
    assert sorted(got) == ["lora_A", "lora_B"]
    np.testing.assert_array_equal(got["lora_A"], A1)
    np.testing.assert_array_equal(got["lora_B"], B1)
    theirs_y = theirs.run(None, {"x": X}, adapters(ort, path))[0]
    np.testing.assert_allclose(theirs_y, expected(A1, B1), **TOL)
    np.testing.assert_allclose(mine.run(None, {"x": X}, adapters(ml, path))[0], theirs_y, **TOL)


@pytest.mark.parametrize("array", [
    np.arange(13, dtype=np.float32), rng.standard_normal((127, 9)).astype(np.float32),
    np.arange(6, dtype=np.float16).reshape(2, 3), np.arange(4, dtype=np.float64).reshape(1, 4),
    np.arange(-4, 5, dtype=np.int8), np.arange(9, dtype=np.uint8), np.arange(2, dtype=np.int16),
    np.arange(2, dtype=np.uint16), np.arange(2, dtype=np.int32), np.arange(2, dtype=np.uint32),
    np.array([-(2**62), 2**62], np.int64), np.array([2**63], np.uint64), np.zeros((0, 4), np.float32),
    np.ones((1, 1, 1, 2), np.float32)], ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_round_trip_both_ways(tmp_path, array):
    params = {"p": array, "q": array[..., :1].copy()}
    for write in (mlrt_file, ort_file):
        path = write(tmp_path / f"{write.__name__}.bin", params, -7, 2**31 - 1)
        for module in (ml, ort):
            back = module.AdapterFormat.read_adapter(path)
            assert (back.get_format_version(), back.get_adapter_version(), back.get_model_version()) == \
                   (1, -7, 2**31 - 1), (write.__name__, module.__name__)
            got = {k: v.numpy() for k, v in back.get_parameters().items()}
            assert sorted(got) == ["p", "q"]
            for k, v in params.items():
                assert got[k].dtype == v.dtype and got[k].shape == v.shape, (write.__name__, module.__name__)
                np.testing.assert_array_equal(got[k], v)


def test_types_only_mlrt_reads_back(tmp_path):
    """bfloat16 and float8 parameters load in onnxruntime's LoraAdapter, though its
    AdapterFormat cannot give them as numpy arrays; mlrt gives the ml_dtypes arrays."""
    import ml_dtypes
    params = {"bf": np.arange(5).astype(ml_dtypes.bfloat16), "f8": np.arange(3).astype(ml_dtypes.float8_e4m3fn)}
    path = mlrt_file(tmp_path / "bf.bin", params)
    ort.LoraAdapter().Load(path)
    got = {k: v.numpy() for k, v in ml.AdapterFormat.read_adapter(path).get_parameters().items()}
    for k, v in params.items():
        assert got[k].dtype == v.dtype
        np.testing.assert_array_equal(got[k].astype(np.float32), v.astype(np.float32))


def test_adapter_format_defaults_and_parameters_as_arrays(tmp_path):
    f, ref = ml.AdapterFormat(), ort.AdapterFormat()
    assert (f.get_format_version(), f.get_adapter_version(), f.get_model_version(), f.get_parameters()) == \
           (ref.get_format_version(), ref.get_adapter_version(), ref.get_model_version(), ref.get_parameters())
    f.set_parameters({"lora_A": A1})  # a numpy array is taken as well as an OrtValue
    assert isinstance(f.get_parameters()["lora_A"], ml.OrtValue)
    f.export_adapter(tmp_path / "p.bin")  # and an os.PathLike path
    np.testing.assert_array_equal(ml.AdapterFormat.read_adapter(tmp_path / "p.bin").get_parameters()["lora_A"].numpy(),
                                  A1)


def _both(sessions, feed, *paths):
    """The outputs of mlrt and onnxruntime, or the exception each raised."""
    out = []
    for module, session in zip((ml, ort), sessions):
        try:
            out.append(session.run(None, feed, adapters(module, *paths))[0])
        except Exception as exc:  # noqa: BLE001 - compared below
            out.append(exc)
    return out


@pytest.mark.parametrize("case", ["feed gives the names too", "first adapter wins", "first adapter wins, reversed",
                                  "A and B from two adapters", "same adapter twice", "no parameters",
                                  "an adapter gives x over the feed's"])
def test_semantics_as_onnxruntime(tmp_path, sessions, case):
    f1 = ort_file(tmp_path / "1.bin", {"lora_A": A1, "lora_B": B1})
    f2 = ort_file(tmp_path / "2.bin", {"lora_A": A2, "lora_B": B2})
    feed, paths, want = {"x": X}, (f1,), expected(A1, B1)
    if case == "feed gives the names too":  # the adapter's value is used
        feed = {"x": X, "lora_A": A2, "lora_B": B2}
    elif case == "first adapter wins":
        paths = (f1, f2)
    elif case == "first adapter wins, reversed":
        paths, want = (f2, f1), expected(A2, B2)
    elif case == "A and B from two adapters":
        paths, want = (ort_file(tmp_path / "a.bin", {"lora_A": A2}), ort_file(tmp_path / "b.bin", {"lora_B": B1})), \
            expected(A2, B1)
    elif case == "same adapter twice":
        paths = (f1, f1)
    elif case == "no parameters":
        paths, want = (ort_file(tmp_path / "e.bin", {}),), expected(A0, B0)
    elif case == "an adapter gives x over the feed's":
        paths, want = (ort_file(tmp_path / "x.bin", {"x": X + 1}),), expected(A0, B0, X + 1)
    mine, theirs = _both(sessions, feed, *paths)
    np.testing.assert_allclose(theirs, want, **TOL)  # (what onnxruntime does, stated)
    np.testing.assert_allclose(mine, theirs, **TOL)


def test_adapter_not_loaded_adds_nothing(sessions):
    mine, theirs = sessions
    ro, ref = ml.RunOptions(), ort.RunOptions()
    _held.extend((ml.LoraAdapter(), ort.LoraAdapter()))
    ro.add_active_adapter(_held[-2])
    ref.add_active_adapter(_held[-1])
    np.testing.assert_allclose(mine.run(None, {"x": X}, ro)[0], theirs.run(None, {"x": X}, ref)[0], **TOL)
    assert repr(ml.LoraAdapter()) == "<LoraAdapter (not loaded)>"


def test_load_again_replaces_and_active_adapter_follows(tmp_path, sessions):
    """RunOptions hold the adapter, not a copy of its parameters: Load again, and the
    next run with those options uses the new ones (as onnxruntime)."""
    mine, _ = sessions
    a = ml.LoraAdapter()
    a.Load(ort_file(tmp_path / "1.bin", {"lora_A": A1, "lora_B": B1}))
    ro = ml.RunOptions()
    ro.add_active_adapter(a)
    np.testing.assert_allclose(mine.run(None, {"x": X}, ro)[0], expected(A1, B1), **TOL)
    a.Load(ort_file(tmp_path / "2.bin", {"lora_A": A2, "lora_B": B2}))
    np.testing.assert_allclose(mine.run(None, {"x": X}, ro)[0], expected(A2, B2), **TOL)


def test_merged_weights_are_not_folded(tmp_path):
    """W + lora_A @ lora_B is a subgraph of initializers only: the optimizer keeps it,
    the initializers being overridable, and the adapter's values flow through it."""
    path = ort_file(tmp_path / "1.bin", {"lora_A": A1, "lora_B": B1})
    mine = ml.InferenceSession(lora_model(merged=True))
    theirs = ort.InferenceSession(lora_model(merged=True), providers=["CPUExecutionProvider"])
    want = theirs.run(None, {"x": X}, adapters(ort, path))[0]
    np.testing.assert_allclose(want, X @ (W + A1 @ B1), **TOL)
    np.testing.assert_allclose(mine.run(None, {"x": X}, adapters(ml, path))[0], want, **TOL)
    np.testing.assert_allclose(mine.run(None, {"x": X})[0], theirs.run(None, {"x": X})[0], **TOL)


def test_run_with_ort_values_and_run_async(tmp_path, sessions):
    mine, theirs = sessions
    path = ort_file(tmp_path / "1.bin", {"lora_A": A1, "lora_B": B1})
    want = theirs.run_with_ort_values(None, {"x": ort.OrtValue.ortvalue_from_numpy(X)}, adapters(ort, path))[0].numpy()
    got = mine.run_with_ort_values(None, {"x": ml.OrtValue.ortvalue_from_numpy(X)}, adapters(ml, path))[0].numpy()
    np.testing.assert_allclose(got, want, **TOL)
    import threading
    done, out = threading.Event(), {}

    def callback(results, user_data, err):
        out["y"], out["err"] = results, err
        done.set()

    mine.run_async(None, {"x": X}, callback, None, adapters(ml, path))
    assert done.wait(60) and not out["err"], out.get("err")
    np.testing.assert_allclose(out["y"][0], want, **TOL)


def test_io_binding_runs_use_the_adapter(tmp_path, sessions):
    """A difference: onnxruntime's run_with_iobinding ignores active adapters (it warns
    that they have no effect); mlrt's feeds their parameters as run() does."""
    mine, _ = sessions
    path = ort_file(tmp_path / "1.bin", {"lora_A": A1, "lora_B": B1})
    binding = mine.io_binding()
    binding.bind_cpu_input("x", X)
    binding.bind_output("y")
    mine.run_with_iobinding(binding, adapters(ml, path))
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], expected(A1, B1), **TOL)


@pytest.mark.parametrize("params, feed, match", [
    ({"lora_A": A1, "lora_B": B1, "nope": A1}, {"x": X}, r"parameter 'nope' is not an input of this model "
                                                        r"\(inputs: x; overridable initializers: lora_A, lora_B\)"),
    ({"y": X}, {"x": X}, "parameter 'y' is not an input"),  # an output
    ({"W": W}, {"x": X}, "parameter 'W' is not an input"),  # an initializer that is not overridable
    ({"lora_A": A1.astype(np.float64), "lora_B": B1}, {"x": X},
     "parameter 'lora_A' is double, the model's input is float"),
    ({"lora_A": np.ones((5, R1), np.float32), "lora_B": B1}, {"x": X},
     r"parameter 'lora_A' has shape \[5, 2\], the model's input has shape \[13, 'r'\] \(dimension 0 differs\)"),
    ({"lora_A": np.ones((D, R1, 1), np.float32), "lora_B": B1}, {"x": X}, "has shape .* the model's input has rank 2"),
    ({"x": X}, {}, "input 'x' is missing"),
], ids=["unknown name", "an output", "a plain initializer", "dtype", "shape", "rank", "required input"])
def test_run_errors_as_onnxruntime(tmp_path, sessions, params, feed, match):
    path = ort_file(tmp_path / "bad.bin", params)
    mine, theirs = _both(sessions, feed, path)
    assert isinstance(theirs, (ort.capi.onnxruntime_pybind11_state.InvalidArgument, ValueError)), theirs
    assert isinstance(mine, mlrt.InvalidArgument), mine
    with pytest.raises(mlrt.InvalidArgument, match=match):
        raise mine
    if match != "input 'x' is missing":
        assert f"LoRA adapter '{path}'" in str(mine)  # the file is named
    # the session is still usable, with and without adapters
    np.testing.assert_allclose(sessions[0].run(None, {"x": X})[0], expected(A0, B0), **TOL)
    good = ort_file(tmp_path / "good.bin", {"lora_A": A1, "lora_B": B1})
    np.testing.assert_allclose(sessions[0].run(None, {"x": X}, adapters(ml, good))[0], expected(A1, B1), **TOL)


def _bad_files(tmp_path) -> dict:
    good = Path(ort_file(tmp_path / "good.bin", {"lora_A": A1, "lora_B": B1})).read_bytes()
    files = {"garbage": b"this is not an adapter file, not at all" * 3, "empty": b"", "short": b"TORT",
             "truncated": good[:len(good) // 2], "header only": good[:12]}
    out = {}
    for name, data in files.items():
        out[name] = tmp_path / f"{name.replace(' ', '_')}.bin"
        out[name].write_bytes(data)
    old = _lora.FORMAT_VERSION
    try:
        _lora.FORMAT_VERSION = 2  # (as a newer writer would mark its files)
        out["format version 2"] = mlrt_file(tmp_path / "v2.bin", {"lora_A": A1})
    finally:
        _lora.FORMAT_VERSION = old
    return out


@pytest.mark.parametrize("load", ["LoraAdapter.Load", "AdapterFormat.read_adapter"])
def test_bad_files_refused_as_by_onnxruntime(tmp_path, load):
    def mlrt_load(p):
        return ml.AdapterFormat.read_adapter(p) if load == "AdapterFormat.read_adapter" else ml.LoraAdapter().Load(p)

    def ort_load(p):
        return ort.AdapterFormat.read_adapter(str(p)) if load == "AdapterFormat.read_adapter" else \
            ort.LoraAdapter().Load(str(p))

    missing = tmp_path / "missing.onnx_adapter"
    with pytest.raises(RuntimeError):
        ort_load(missing)
    with pytest.raises(mlrt.NoSuchFile, match=f"{load}: the adapter file '.*missing.onnx_adapter' does not exist"):
        mlrt_load(missing)
    with pytest.raises(FileNotFoundError):  # (NoSuchFile is one)
        mlrt_load(missing)
    with pytest.raises(mlrt.InvalidModel, match="is a directory"):
        mlrt_load(tmp_path)
    with pytest.raises(mlrt.InvalidArgument, match="must be a str or os.PathLike"):
        mlrt_load(3)
    for name, path in _bad_files(tmp_path).items():
        with pytest.raises(RuntimeError):
            ort_load(path)
        with pytest.raises(mlrt.InvalidModel, match=f"'{path}' is not a valid onnxruntime adapter file: ") as info:
            mlrt_load(path)
        assert not isinstance(info.value, mlrt.NoSuchFile), name
        if name == "format version 2":
            assert "format version is 2; this mlrt reads version 1" in str(info.value)
        if name == "garbage":
            assert "no 'TORT' identifier" in str(info.value)


def test_failed_load_keeps_what_was_loaded(tmp_path, sessions):
    a = ml.LoraAdapter()
    a.Load(ort_file(tmp_path / "1.bin", {"lora_A": A1, "lora_B": B1}))
    (tmp_path / "bad.bin").write_bytes(b"\0" * 64)
    with pytest.raises(mlrt.InvalidModel):
        a.Load(tmp_path / "bad.bin")
    ro = ml.RunOptions()
    ro.add_active_adapter(a)
    np.testing.assert_allclose(sessions[0].run(None, {"x": X}, ro)[0], expected(A1, B1), **TOL)


def test_damaged_files_never_escape_as_other_errors(tmp_path):
    """Bytes of a good file changed at random: each loads or is refused with InvalidModel
    (flatbuffers' Python reader has no verifier: _lora checks every position it reads)."""
    good = Path(mlrt_file(tmp_path / "g.bin", {"lora_A": A1, "lora_B": np.arange(3, dtype=np.int64)})).read_bytes()
    r = np.random.default_rng(3)
    path = tmp_path / "d.bin"
    for _ in range(300):
        data = bytearray(good)  # (a copy to change)
        for _ in range(r.integers(1, 4)):
            data[r.integers(len(data))] = r.integers(256)
        path.write_bytes(bytes(data[:r.integers(len(data) // 2, len(data) + 1)]))
        try:
            ml.LoraAdapter().Load(path)
        except mlrt.InvalidModel:
            pass


@pytest.mark.parametrize("params, match", [
    ({"p": np.array([True, False])}, "parameter 'p' is bool; adapter parameters are tensors of float, uint8"),
    ({"p": np.array(["a"], dtype=object)}, "parameter 'p' is object"),
    ({"p": np.array([1 + 2j], np.complex64)}, "parameter 'p' is complex64"),
    ({"p": np.array(3.5, np.float32)}, r"'p' is a scalar \(shape \[\]\)"),
    ({"": A1}, "parameter names must be non-empty strings"),
    ({3: A1}, "parameter names must be non-empty strings"),
    ({"p": [1.0, 2.0]}, "parameter 'p' must be an OrtValue or a numpy array, got list"),
    ([("p", A1)], "expected a dict of name -> OrtValue"),
])
def test_set_parameters_refuses_what_onnxruntime_cannot_load(params, match):
    f = ml.AdapterFormat()
    f.set_parameters({"keep": A1})
    with pytest.raises(mlrt.InvalidArgument, match=match):
        f.set_parameters(params)
    assert list(f.get_parameters()) == ["keep"]  # unchanged


def test_versions_and_export_errors(tmp_path):
    f = ml.AdapterFormat()
    for bad in (2**31, -2**31 - 1, "3", 3.0, True):
        with pytest.raises(mlrt.InvalidArgument, match="version"):
            f.set_adapter_version(bad)
        with pytest.raises(mlrt.InvalidArgument, match="version"):
            f.set_model_version(bad)
    f.set_adapter_version(np.int64(4))
    assert f.get_adapter_version() == 4 and type(f.get_adapter_version()) is int
    with pytest.raises(mlrt.InvalidArgument, match="export_adapter: cannot write '.*nowhere/a.bin'"):
        f.export_adapter(tmp_path / "nowhere" / "a.bin")


def test_add_active_adapter_takes_only_adapters():
    ro = ml.RunOptions()
    for bad in ("adapter.onnx_adapter", None, ml.AdapterFormat()):
        with pytest.raises(mlrt.InvalidArgument, match="add_active_adapter: expected a LoraAdapter"):
            ro.add_active_adapter(bad)
    assert ro._adapters == []


def test_names_where_onnxruntime_has_them():
    from mlrt.lowlevel._compat import _submodules
    mods = _submodules(ml)
    assert mods["onnxruntime.capi.onnxruntime_inference_collection"].AdapterFormat is ml.AdapterFormat
    assert mods["onnxruntime.capi._pybind_state"].LoraAdapter is ml.LoraAdapter
    assert {"LoraAdapter", "AdapterFormat"} <= set(ml.__all__)
    public = {n for n in dir(ort.AdapterFormat) if not n.startswith("_")}
    assert public <= set(dir(ml.AdapterFormat))
    assert {n for n in dir(ort.LoraAdapter) if not n.startswith("_")} <= set(dir(ml.LoraAdapter))


def test_flatbuffers_imported_only_for_files():
    code = ("import sys, mlrt.lowlevel as ml; ro = ml.RunOptions(); ro.add_active_adapter(ml.LoraAdapter()); "
            "f = ml.AdapterFormat(); f.set_adapter_version(2); print('flatbuffers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False"]

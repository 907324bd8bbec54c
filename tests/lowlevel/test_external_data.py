"""External data stays inside the model's folder, and its offsets and lengths inside
its file: every way out is refused with InvalidModel naming the tensor, before any
byte is read (issue 14).  A refused model leaves the process able to load the next.
Files given in memory (SessionOptions.add_external_initializers_from_files_in_memory)
are read as onnxruntime 1.32 reads them, checked against it, and never out of bounds."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt
import mlrt.lowlevel as ml

try:  # (the oracle for what onnxruntime accepts; the checks of mlrt alone run without it)
    import onnxruntime as ort
except ImportError:
    ort = None
needs_ort = pytest.mark.skipif(ort is None, reason="onnxruntime (the oracle) is not installed")

WEIGHTS = np.array([1.0, -5.0, 2.0], np.float32)


def _model(location: str, offset: int | None = None, length: int | None = None) -> onnx.ModelProto:
    """y = x + b, b stored externally at `location`."""
    b = helper.make_tensor("b", T.FLOAT, [3], [0.0, 0.0, 0.0])
    b.ClearField("float_data")
    b.data_location = T.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            entry = b.external_data.add()
            entry.key, entry.value = key, str(value)
    g = helper.make_graph([helper.make_node("Add", ["x", "b"], ["y"])], "ext",
                          [helper.make_tensor_value_info("x", T.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [3])], [b])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _save(folder, model, name="m.onnx"):
    path = folder / name
    path.write_bytes(model.SerializeToString())
    return path


def _refused(path, match):
    with pytest.raises(mlrt.InvalidModel, match=match):
        ml.InferenceSession(str(path))


@pytest.fixture
def folder(tmp_path):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (model_dir / "w.bin").write_bytes(WEIGHTS.tobytes())
    (tmp_path / "secret.bin").write_bytes(WEIGHTS.tobytes())
    return model_dir


def test_inside_the_folder_loads(folder):
    path = _save(folder, _model("w.bin"))
    np.testing.assert_array_equal(ml.InferenceSession(str(path)).run(None, {"x": np.ones(3, np.float32)})[0],
                                  WEIGHTS + 1)


def test_in_a_subfolder_loads(folder):
    (folder / "sub").mkdir()
    (folder / "sub" / "w.bin").write_bytes(WEIGHTS.tobytes())
    path = _save(folder, _model("sub/w.bin"))
    assert ml.InferenceSession(str(path)).run(None, {"x": np.zeros(3, np.float32)})[0].tolist() == WEIGHTS.tolist()


@pytest.mark.parametrize("location", ["../secret.bin", "sub/../../secret.bin", "./../secret.bin"])
def test_parent_paths_refused(folder, location):
    (folder / "sub").mkdir(exist_ok=True)
    _refused(_save(folder, _model(location)), "outside the model folder")


def test_absolute_path_refused(folder):
    _refused(_save(folder, _model(str(folder.parent / "secret.bin"))), "outside the model folder")
    _refused(_save(folder, _model("/etc/passwd")), "outside the model folder")


def test_symlink_leaving_the_folder_refused(folder):
    os.symlink(folder.parent / "secret.bin", folder / "link.bin")
    _refused(_save(folder, _model("link.bin")), "outside the model folder")
    os.symlink(folder.parent, folder / "up")
    _refused(_save(folder, _model("up/secret.bin")), "outside the model folder")


def test_symlink_inside_the_folder_loads(folder):
    os.symlink(folder / "w.bin", folder / "alias.bin")
    assert ml.InferenceSession(str(_save(folder, _model("alias.bin")))).run(
        None, {"x": np.zeros(3, np.float32)})[0].tolist() == WEIGHTS.tolist()


def test_model_reached_through_a_symlinked_folder_loads(folder, tmp_path):
    os.symlink(folder, tmp_path / "linked")
    _save(folder, _model("w.bin"))
    assert ml.InferenceSession(str(tmp_path / "linked" / "m.onnx")).run(
        None, {"x": np.zeros(3, np.float32)})[0].tolist() == WEIGHTS.tolist()


def test_missing_file_directory_and_special_files_refused(folder):
    _refused(_save(folder, _model("nothing.bin")), "missing")
    (folder / "dir.bin").mkdir()
    _refused(_save(folder, _model("dir.bin")), "missing|not a regular file")
    os.mkfifo(folder / "pipe.bin")  # reading a FIFO would block forever
    _refused(_save(folder, _model("pipe.bin")), "missing|not a regular file")


@pytest.mark.parametrize("offset,length", [(13, None), (0, 13), (8, 8), (-4, None), (None, -1), (4, None), (0, 8)])
def test_offsets_and_lengths_checked(folder, offset, length):
    """Past the end of the file, negative, or fewer bytes than the tensor's 3 floats."""
    _refused(_save(folder, _model("w.bin", offset, length)), "offset|length|bytes|past the end")


@pytest.mark.parametrize("location", ["w.bin\0x", "", "."])
def test_odd_locations_refused(folder, location):
    _refused(_save(folder, _model(location)), "external data")


@pytest.mark.parametrize("cwd_has_it", [False, True])
def test_model_bytes_with_external_data_refused(folder, tmp_path, monkeypatch, cwd_has_it):
    """Given as bytes, a model has no folder.  onnxruntime looks in the working directory:
    it fails where the file is not there ('does not exist'), and at its default level
    even where it is ('model_path must not be empty').  mlrt never looks there, and names
    the tensor, the file and the two ways out."""
    monkeypatch.chdir(folder if cwd_has_it else tmp_path)
    data = _model("w.bin").SerializeToString()
    if ort is not None:
        with pytest.raises(Exception, match="model_path must not be empty" if cwd_has_it else "does not exist.*w.bin"):
            ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    with pytest.raises(mlrt.InvalidModel, match="'b'.*'w.bin'.*given as bytes.*from_files_in_memory"):
        ml.InferenceSession(data)


def test_a_missing_data_file_is_no_such_file(folder):
    path = _save(folder, _model("gone.bin"))
    with pytest.raises(mlrt.NoSuchFile, match="gone.bin"):
        ml.InferenceSession(str(path))
    with pytest.raises(FileNotFoundError):
        ml.InferenceSession(str(path))


def test_after_a_refusal_the_next_model_loads(folder):
    _refused(_save(folder, _model("../secret.bin"), "bad.onnx"), "outside")
    good = _save(folder, _model("w.bin"))
    assert ml.InferenceSession(str(good)).run(None, {"x": np.zeros(3, np.float32)})[0].tolist() == WEIGHTS.tolist()


# -- files given in memory --------------------------------------------------------------------------
X = np.ones(3, np.float32)
OTHER = np.array([10.0, 20.0, 30.0], np.float32)


def _in_memory(runtime, source, names, buffers, lengths):
    so = runtime.SessionOptions()
    so.add_external_initializers_from_files_in_memory(names, buffers, lengths)
    return runtime.InferenceSession(source, so, providers=["CPUExecutionProvider"])


def _both(source, names, buffers, lengths) -> list:
    """y for x = 1 from onnxruntime (where installed) and mlrt, the files given in memory."""
    runtimes = ([ort] if ort is not None else []) + [ml]
    return [_in_memory(rt, source, names, buffers, lengths).run(None, {"x": X})[0] for rt in runtimes]


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "uint8", "float32", "2d"])
def test_a_model_given_as_bytes_with_its_data_in_memory(kind):
    raw = WEIGHTS.tobytes()
    buffer = {"bytes": raw, "bytearray": bytearray(raw), "memoryview": memoryview(raw),
              "uint8": np.frombuffer(raw, np.uint8).copy(), "float32": WEIGHTS.copy(),
              "2d": np.frombuffer(raw, np.uint8).reshape(3, 4).copy()}[kind]
    for y in _both(_model("w.bin").SerializeToString(), ["w.bin"], [buffer], [12]):
        np.testing.assert_array_equal(y, WEIGHTS + 1)


def test_a_model_at_a_path_reads_memory_first(folder, tmp_path):
    """The buffer wins over a file beside the model, and stands in for one that is not there."""
    here = _save(folder, _model("w.bin"))  # (folder/w.bin holds WEIGHTS)
    (tmp_path / "bare").mkdir()
    bare = _save(tmp_path / "bare", _model("w.bin"))
    for path in (here, bare):
        for y in _both(str(path), ["w.bin"], [OTHER.tobytes()], [12]):
            np.testing.assert_array_equal(y, OTHER + 1)


@pytest.mark.parametrize("location,name", [("w.bin", "./w.bin"), ("./w.bin", "w.bin"), (".//w.bin", "././w.bin")])
def test_leading_dot_slash_does_not_matter(location, name):
    for y in _both(_model(location).SerializeToString(), [name], [OTHER.tobytes()], [12]):
        np.testing.assert_array_equal(y, OTHER + 1)


@pytest.mark.parametrize("location", ["../up.bin", "/abs/w.bin", "sub/w.bin"])
def test_any_location_may_be_given_in_memory(location):
    """No file is opened, so the folder rule has nothing to guard."""
    for y in _both(_model(location).SerializeToString(), [location], [OTHER.tobytes()], [12]):
        np.testing.assert_array_equal(y, OTHER + 1)


def _plus(model: onnx.ModelProto, location: str, offset: int | None = None, length: int | None = None):
    """`model` (y = x + b) made y = x + b + c, c three floats stored externally at `location`."""
    c = _model(location, offset, length).graph.initializer[0]
    c.name = "c"
    model.graph.initializer.append(c)
    model.graph.node[0].output[0] = "t"
    model.graph.node.append(helper.make_node("Add", ["t", "c"], ["y"]))
    return model


def test_offset_and_length_inside_the_buffer():
    """Two tensors in one buffer; the file is the first `length` bytes of the buffer."""
    raw = b"pad!" + WEIGHTS.tobytes() + OTHER.tobytes() + b"tail" * 4
    for y in _both(_plus(_model("w.bin", 4, 12), "w.bin", 16, 12).SerializeToString(), ["w.bin"], [raw], [28]):
        np.testing.assert_array_equal(y, 1 + WEIGHTS + OTHER)


def test_names_no_tensor_uses_are_ignored_but_every_location_must_be_given(folder):
    data = _model("w.bin").SerializeToString()
    for y in _both(data, ["w.bin", "unused.bin"], [WEIGHTS.tobytes(), b"x"], [12, 1]):
        np.testing.assert_array_equal(y, WEIGHTS + 1)
    path = str(_save(folder, _model("w.bin")))  # (folder/w.bin is there, but is not read once any are given)
    for source in (data, path):
        if ort is not None:
            with pytest.raises(Exception, match="not found from the table"):
                _in_memory(ort, source, ["other.bin"], [WEIGHTS.tobytes()], [12])
        with pytest.raises(mlrt.InvalidModel, match="'b'.*'w.bin' is not among the files given in memory"):
            _in_memory(ml, source, ["other.bin"], [WEIGHTS.tobytes()], [12])


@pytest.mark.parametrize("offset,length,size", [
    (8, 12, 12),       # past the end
    (-4, 12, 12),      # negative offset
    (2 ** 62, 12, 12),  # far past the end
    (4, 8, 12),        # fewer bytes than the tensor's 12
    (None, None, 8),   # the file (the buffer's first 8 bytes) is too short
    (None, None, 0),
])
def test_bad_offsets_and_lengths_are_refused(offset, length, size):
    data = _model("w.bin", offset, length).SerializeToString()
    buffer = WEIGHTS.tobytes()
    if ort is not None:
        with pytest.raises(Exception, match="out of bounds|size mismatch"):
            _in_memory(ort, data, ["w.bin"], [buffer], [size])
    with pytest.raises(mlrt.InvalidModel, match="initializer 'b'.*'w.bin' given in memory"):
        _in_memory(ml, data, ["w.bin"], [buffer], [size])


ORT_REFUSES = {  # what onnxruntime's binding refuses at once (a TypeError, or a RuntimeError it raises)
    "counts": (["w.bin"], [b"1234", b"5678"], [4]),
    "duplicate": (["w.bin", "./w.bin"], [b"1234", b"5678"], [4, 4]),
    "negative_length": (["w.bin"], [b"1234"], [-1]),
    "float_length": (["w.bin"], [b"1234"], [4.0]),
    "ortvalue": (["w.bin"], ["ortvalue"], [12]),
    "str_buffer": (["w.bin"], ["1234"], [4]),
    "list_buffer": (["w.bin"], [[1, 2, 3, 4]], [4]),
    "str_names": ("w.bin", [b"1234"], [4]),
    "int_name": ([7], [b"1234"], [4]),
}


@pytest.mark.parametrize("case", sorted(ORT_REFUSES))
def test_wrong_arguments_are_refused_at_once_and_add_nothing(case):
    names, buffers, lengths = ORT_REFUSES[case]
    buffers = [ml.OrtValue.ortvalue_from_numpy(WEIGHTS) if b == "ortvalue" else b for b in buffers]
    if ort is not None:
        theirs = [ort.OrtValue.ortvalue_from_numpy(WEIGHTS) if isinstance(b, ml.OrtValue) else b for b in buffers]
        with pytest.raises((TypeError, RuntimeError)):
            ort.SessionOptions().add_external_initializers_from_files_in_memory(names, theirs, lengths)
    so = ml.SessionOptions()
    with pytest.raises(mlrt.InvalidArgument, match="add_external_initializers_from_files_in_memory"):
        so.add_external_initializers_from_files_in_memory(names, buffers, lengths)
    so.add_external_initializers_from_files_in_memory(["w.bin"], [WEIGHTS.tobytes()], [12])  # (nothing was added)
    assert ml.InferenceSession(_model("w.bin").SerializeToString(), so).run(None, {"x": X})[0].tolist() == \
        (WEIGHTS + 1).tolist()


def test_a_name_given_twice_over_two_calls_is_refused():
    so = ml.SessionOptions()
    so.add_external_initializers_from_files_in_memory(["w.bin"], [WEIGHTS.tobytes()], [12])
    with pytest.raises(mlrt.InvalidArgument, match="given already"):
        so.add_external_initializers_from_files_in_memory(["./w.bin"], [OTHER.tobytes()], [12])
    if ort is not None:
        so = ort.SessionOptions()
        so.add_external_initializers_from_files_in_memory(["w.bin"], [WEIGHTS.tobytes()], [12])
        with pytest.raises(RuntimeError, match="already been added"):
            so.add_external_initializers_from_files_in_memory(["./w.bin"], [OTHER.tobytes()], [12])


def test_a_length_past_the_buffer_is_refused():
    """onnxruntime takes the length as given and reads past the buffer (it crashes the
    process when the offset lies there: not run here); mlrt refuses it at once."""
    with pytest.raises(mlrt.InvalidArgument, match="buffer holds 12 bytes"):
        ml.SessionOptions().add_external_initializers_from_files_in_memory(["w.bin"], [WEIGHTS.tobytes()], [13])


def test_a_buffer_is_read_when_the_session_is_made():
    """Held, not copied, as onnxruntime holds it: a change before the session counts; and
    the session lets it go (a bytearray can be resized again)."""
    buffer = bytearray(WEIGHTS.tobytes())
    so = ml.SessionOptions()
    so.add_external_initializers_from_files_in_memory(["w.bin"], [buffer], [12])
    buffer[:] = OTHER.tobytes()
    sess = ml.InferenceSession(_model("w.bin").SerializeToString(), so)
    buffer.extend(b"more")
    np.testing.assert_array_equal(sess.run(None, {"x": X})[0], OTHER + 1)
    del buffer[4:]  # shorter than its length now
    with pytest.raises(mlrt.InvalidArgument, match="now holds 4 bytes"):
        ml.InferenceSession(_model("w.bin").SerializeToString(), so)


def test_a_buffer_not_in_c_order_is_read_in_c_order():
    """mlrt reads a buffer's bytes in C order (what bytes(buffer) gives); onnxruntime
    reads its memory as it lies, which for a strided or Fortran-order array is not."""
    strided = np.repeat(WEIGHTS, 2)[::2]
    fortran = np.asfortranarray(np.frombuffer(WEIGHTS.tobytes() * 2, np.uint8).reshape(4, 6))
    so = ml.SessionOptions()
    so.add_external_initializers_from_files_in_memory(["w.bin", "f.bin"], [strided, fortran], [12, 24])
    sess = ml.InferenceSession(_plus(_model("w.bin"), "f.bin", 12, 12).SerializeToString(), so)
    np.testing.assert_array_equal(sess.run(None, {"x": X})[0], 1 + WEIGHTS + WEIGHTS)


@needs_ort
def test_an_optimized_model_saved_from_memory_loads_from_disk(tmp_path):
    so = ml.SessionOptions()
    so.add_external_initializers_from_files_in_memory(["w.bin"], [WEIGHTS.tobytes()], [12])
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    so.add_session_config_entry("session.optimized_model_external_initializers_file_name", "opt.bin")
    so.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "0")
    ml.InferenceSession(_model("w.bin").SerializeToString(), so)
    assert (tmp_path / "opt.bin").read_bytes() == WEIGHTS.tobytes()
    for sess in (ort.InferenceSession(so.optimized_model_filepath, providers=["CPUExecutionProvider"]),
                 ml.InferenceSession(so.optimized_model_filepath)):
        np.testing.assert_array_equal(sess.run(None, {"x": X})[0], WEIGHTS + 1)

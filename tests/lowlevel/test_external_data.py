"""External data stays inside the model's folder, and its offsets and lengths inside
its file: every way out is refused with InvalidModel naming the tensor, before any
byte is read (issue 14).  A refused model leaves the process able to load the next."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt
import mlrt.lowlevel as ml

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


def test_model_bytes_with_external_data_refused(folder):
    with pytest.raises(mlrt.InvalidModel, match="given as bytes"):
        ml.InferenceSession(_model("w.bin").SerializeToString())


def test_after_a_refusal_the_next_model_loads(folder):
    _refused(_save(folder, _model("../secret.bin"), "bad.onnx"), "outside")
    good = _save(folder, _model("w.bin"))
    assert ml.InferenceSession(str(good)).run(None, {"x": np.zeros(3, np.float32)})[0].tolist() == WEIGHTS.tolist()

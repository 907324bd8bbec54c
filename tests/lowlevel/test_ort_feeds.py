"""Feeds in every form onnxruntime converts, and the error texts apps match on
(lowlevel/_feeds.py), each held against onnxruntime itself in the same process.

Where onnxruntime takes a feed, mlrt gives the same output.  Where onnxruntime's result
is an accident (a bytes string turned into its repr, a big-endian array read as
little-endian, scalars and tuples refused), mlrt's defined behaviour is asserted and the
case says so.  Where both refuse, mlrt's message contains onnxruntime's sentence and
its exception is of the class onnxruntime raises (or onnxruntime's class's mlrt name)."""

from __future__ import annotations

import contextlib
import re
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt
import mlrt.lowlevel as ml

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the oracle these cases are held against")


def identity(elem: int, shape) -> bytes:
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", elem, shape)],
                          [helper.make_tensor_value_info("y", elem, shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


MODELS = {"i32": (T.INT32, [None]), "u8": (T.UINT8, [None]), "f32": (T.FLOAT, [2, 3]), "str": (T.STRING, [None]),
          "scalar": (T.FLOAT, []), "bool": (T.BOOL, [None]), "f16": (T.FLOAT16, [None]), "i64": (T.INT64, [None])}


@pytest.fixture(scope="module")
def sessions():
    made = {}
    for key, (elem, shape) in MODELS.items():
        data = identity(elem, shape)
        made[key] = (ml.InferenceSession(data), ort.InferenceSession(data, providers=["CPUExecutionProvider"]))
    return made


def _readonly(a):
    a.flags.writeable = False
    return a


# (id, model, feed) onnxruntime takes: mlrt gives the same array, dtype and shape
SAME = [
    ("list->int32", "i32", lambda: [1, 2, 3]),
    ("list->uint8", "u8", lambda: [1, 2, 255]),
    ("float list->int32 (truncated)", "i32", lambda: [1.5, 2.0, -3.7]),
    ("nested int lists->float", "f32", lambda: [[1, 2, 3], [4, 5, 6]]),
    ("nested float lists->float", "f32", lambda: [[1.5, 2, 3], [4, 5, 6]]),
    ("bool and int lists->float", "f32", lambda: [[True, False, True], [1, 2, 3]]),
    ("str lists->float", "f32", lambda: [["1.5", "2", "3"], ["4", "5", "6"]]),
    ("list of float64 arrays->float", "f32", lambda: [np.zeros(3), np.ones(3)]),
    ("list of numpy scalars->int64", "i64", lambda: [np.int64(1), np.int64(2)]),
    ("int list->bool", "bool", lambda: [1, 0, 2]),
    ("list->float16", "f16", lambda: [1.0, 2.5]),
    ("empty list->int32", "i32", lambda: []),
    ("str list->string", "str", lambda: ["ab", "c"]),
    ("int list->string (str of each)", "str", lambda: [1, 2]),
    ("numpy U->string", "str", lambda: np.array(["ab", "c"])),
    ("object str->string", "str", lambda: np.array(["ab", "c"], dtype=object)),
    ("non-contiguous", "f32", lambda: np.arange(12, dtype=np.float32).reshape(3, 4)[:2, :3]),
    ("read-only", "f32", lambda: _readonly(np.arange(6, dtype=np.float32).reshape(2, 3))),
    ("Fortran order", "f32", lambda: np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))),
    ("strided", "i64", lambda: np.arange(6, dtype=np.int64)[::2]),
    ("zero strides", "i64", lambda: np.broadcast_to(np.int64(7), (3,))),
    ("masked array", "f32", lambda: np.ma.array(np.ones((2, 3), np.float32))),
]


@pytest.mark.parametrize("model,feed", [c[1:] for c in SAME], ids=[c[0] for c in SAME])
def test_feeds_onnxruntime_converts(sessions, model, feed):
    ours, theirs = sessions[model]
    want = theirs.run(None, {"x": feed()})[0]
    got = ours.run(None, {"x": feed()})[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tolist() == want.tolist()


# (id, model, feed, what mlrt defines, why onnxruntime's result is not followed)
DEFINED = [
    ("bytes list->string: decoded", "str", lambda: [b"ab", "c\u00e9".encode()], ["ab", "c\u00e9"], "repr: \"b'ab'\""),
    ("object bytes->string: decoded", "str", lambda: np.array([b"ab", b"c"], dtype=object), ["ab", "c"], "repr"),
    ("numpy S->string: each element", "str", lambda: np.array([b"ab", b"c"]), ["ab", "c"], "runs on: 'abc'"),
    ("void->string: NULs dropped", "str", lambda: np.array([b"ab", b"c"]).view(np.void), ["ab", "c"], "'c\\x00'"),
    ("big-endian float: by value", "f32", lambda: np.arange(6, dtype=">f4").reshape(2, 3),
     [[0, 1, 2], [3, 4, 5]], "reads the bytes as little-endian"),
    ("Python float scalar", "scalar", lambda: 3.0, 3.0, "refused"),
    ("Python int scalar", "scalar", lambda: 3, 3.0, "refused"),
    ("numpy float32 scalar", "scalar", lambda: np.float32(3), 3.0, "refused"),
    ("tuple->int64", "i64", lambda: (1, 2), [1, 2], "refused"),
    ("range->int64", "i64", lambda: range(3), [0, 1, 2], "refused"),
]


@pytest.mark.parametrize("model,feed,want,ort_does", [c[1:] for c in DEFINED], ids=[c[0] for c in DEFINED])
def test_feeds_mlrt_defines(sessions, model, feed, want, ort_does):
    ours, theirs = sessions[model]
    got = ours.run(None, {"x": feed()})[0]
    assert got.tolist() == want
    assert got.dtype == (object if model == "str" else np.float32 if model in ("f32", "scalar") else np.int64)
    try:  # (what onnxruntime does instead, so this case says something true about it)
        theirs_got = theirs.run(None, {"x": feed()})[0].tolist()
    except Exception:  # noqa: BLE001 - any refusal
        assert ort_does == "refused"
    else:
        assert ort_does != "refused" and theirs_got != want


def _ort_text(exc: Exception) -> str:
    """onnxruntime's sentence without its status prefix ("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : ")."""
    return re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", str(exc)).strip()


def _one_line(text: str) -> str:
    return " ".join(text.split())


# (id, model, feed, output names, the class mlrt raises: onnxruntime's, or the mlrt name of onnxruntime's)
REFUSED = [
    ("missing input", "f32", {}, None, ValueError),
    ("unknown input beside the inputs", "f32", {"x": np.zeros((2, 3), np.float32), "zz": np.ones(1)}, None, ml.InvalidArgument),
    ("unknown input instead of one", "f32", {"zz": np.zeros((2, 3), np.float32)}, None, ValueError),
    ("unknown output", "f32", {"x": np.zeros((2, 3), np.float32)}, ["q"], ml.InvalidArgument),
    ("wrong type", "f32", {"x": np.zeros((2, 3), np.float64)}, None, ml.InvalidArgument),
    ("wrong type int", "i32", {"x": np.zeros(3, np.int64)}, None, ml.InvalidArgument),
    ("wrong rank", "f32", {"x": np.zeros((2, 3, 1), np.float32)}, None, ml.InvalidArgument),
    ("wrong dimension", "f32", {"x": [[1, 2], [3, 4]]}, None, ml.InvalidArgument),
    ("two wrong dimensions", "f32", {"x": np.zeros((3, 4), np.float32)}, None, ml.InvalidArgument),
    ("numeric array->string", "str", {"x": np.array([1, 2])}, None, ml.InvalidArgument),
]


@pytest.mark.parametrize("model,feed,outputs,cls", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_errors_contain_onnxruntimes_sentence(sessions, model, feed, outputs, cls):
    ours, theirs = sessions[model]
    with pytest.raises(Exception) as theirs_raised:
        theirs.run(outputs, feed)
    with pytest.raises(ml.InvalidArgument) as ours_raised:
        ours.run(outputs, feed)
    assert isinstance(ours_raised.value, cls)
    assert _one_line(_ort_text(theirs_raised.value)) in _one_line(str(ours_raised.value))
    assert "\n" not in str(ours_raised.value)
    ok = {"x": np.zeros((2, 3), np.float32)} if model == "f32" else {"x": ["a"]} if model == "str" else {"x": [1]}
    ours.run(None, ok)  # still usable


# feeds the declared type cannot hold: both refuse, mlrt naming the input and the value
UNCONVERTIBLE = [("256->uint8", "u8", [1, 256]), ("2**40->int32", "i32", [2 ** 40]), ("NaN->int32", "i32", [np.nan]),
                 ("None in a list", "i64", [1, None]), ("ragged lists", "f32", [[1, 2, 3], [4, 5]]),
                 ("text->float", "f32", [["a", "b", "c"], ["d", "e", "f"]]), ("non-UTF-8 bytes", "str", [b"\xff"])]


@pytest.mark.parametrize("model,feed", [c[1:] for c in UNCONVERTIBLE], ids=[c[0] for c in UNCONVERTIBLE])
def test_unconvertible_lists_refused(sessions, model, feed):
    ours, theirs = sessions[model]
    if model != "str":  # (onnxruntime takes any bytes as a string: the repr of them)
        with pytest.raises(Exception, match="Could not create tensor from given input list|setting an array"):
            theirs.run(None, {"x": feed})
    with pytest.raises(ml.InvalidArgument, match="input 'x'") as raised:
        ours.run(None, {"x": feed})
    said = str(raised.value)
    assert "Could not create tensor from given input list" in said or "UTF-8" in said


def test_none_feed_named(sessions):
    ours, _ = sessions["i32"]
    with pytest.raises(ml.InvalidArgument, match=r"input 'x' is None"):
        ours.run(None, {"x": None})


@pytest.mark.parametrize("options", ["SessionOptions", "RunOptions"])
def test_config_entry_never_set(options):
    theirs, ours = getattr(ort, options)(), getattr(ml, options)()
    get = "get_session_config_entry" if options == "SessionOptions" else "get_run_config_entry"
    with pytest.raises(RuntimeError) as theirs_raised:
        getattr(theirs, get)("no.such.key")
    with pytest.raises(RuntimeError) as ours_raised:
        getattr(ours, get)("no.such.key")
    assert isinstance(ours_raised.value, mlrt.NotAvailable) and isinstance(ours_raised.value, ml.InvalidArgument)
    assert str(theirs_raised.value) in str(ours_raised.value)


def test_version_names_the_api_level():
    """"1.32.0+mlrt.0.1.0": the onnxruntime API implemented, never newer than the
    onnxruntime these tests hold it against, with mlrt's version as the local label."""
    from packaging.version import Version

    from mlrt.lowlevel import _module_level
    ours = Version(ml.__version__)
    assert ours.release == Version(_module_level.ONNXRUNTIME_API).release
    assert Version(ort.__version__).release >= ours.release
    assert ours.local == "mlrt." + mlrt.__version__.replace("+", ".").replace("-", ".")
    assert ml.get_version_string() == ml.__version__ == _module_level.version


PROVIDER_ARGS = [
    ("none", None, None), ("names", ["CPUExecutionProvider"], None),
    ("tuples, options made str", [("CPUExecutionProvider", {"a": 1, 2: True})], None),
    ("names and options", ["CPUExecutionProvider"], [{"k": "v"}]),
    ("unknown provider kept", ["FooExecutionProvider", "CPUExecutionProvider"], None),
    ("duplicate dropped", ["CPUExecutionProvider", ("CPUExecutionProvider", {"a": "b"})], None),
    ("lengths differ", ["CPUExecutionProvider"], [{}, {}]), ("tuple with options", [("CPUExecutionProvider", {})], [{}]),
    ("one-item tuple", [("CPUExecutionProvider",)], None), ("options not dicts", ["CPUExecutionProvider"], ["x"]),
    ("not a sequence", 3, None),
]


@pytest.mark.parametrize("providers,options", [c[1:] for c in PROVIDER_ARGS], ids=[c[0] for c in PROVIDER_ARGS])
def test_check_and_normalize_provider_args(providers, options):
    from onnxruntime.capi.onnxruntime_inference_collection import check_and_normalize_provider_args as theirs

    from mlrt.lowlevel import check_and_normalize_provider_args as ours
    available = ["CPUExecutionProvider"]
    try:
        with _warnings() as theirs_warned:
            want = theirs(providers, options, available)
    except ValueError as exc:
        with pytest.raises(ml.InvalidArgument) as raised:
            ours(providers, options, available)
        assert str(exc) in str(raised.value)
        return
    with _warnings() as ours_warned:
        assert ours(providers, options, available) == want
    assert [str(w.message) for w in ours_warned] == [str(w.message) for w in theirs_warned]


def test_provider_name_as_a_string():
    """onnxruntime iterates over a str's letters; mlrt takes it as one name."""
    assert ml.check_and_normalize_provider_args("CPUExecutionProvider", None, ["CPUExecutionProvider"]) == \
        (["CPUExecutionProvider"], [{}])


def test_collection_module_names():
    from onnxruntime.capi import onnxruntime_inference_collection as theirs
    assert ml.get_ort_device_type("dml") == 4 and ml.get_vendor_id_for_device_type("cuda") == 0x10DE
    for name in ("cpu", "gpu", "npu", "cuda", "dml", "cann", "webgpu"):
        assert ml.get_ort_device_type(name) == theirs.get_ort_device_type(name)
        assert ml.get_vendor_id_for_device_type(name) == theirs.get_vendor_id_for_device_type(name)
    with pytest.raises(ml.InvalidArgument, match="Unsupported device type: tpu"):
        ml.get_ort_device_type("tpu")


@contextlib.contextmanager
def _warnings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def _sequence_model() -> bytes:
    g = helper.make_graph([helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)], "g",
                          [helper.make_tensor_sequence_value_info("s", T.FLOAT, None)],
                          [helper.make_tensor_value_info("y", T.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


def test_sequence_feeds_take_the_declared_element_type():
    """A sequence input: arrays of its element type as onnxruntime takes them, lists made
    that type (onnxruntime refuses lists there), arrays of another type refused by both."""
    data = _sequence_model()
    ours, theirs = ml.InferenceSession(data), ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    arrays = [np.array([1, 2], np.float32), np.array([3], np.float32)]
    assert ours.run(None, {"s": arrays})[0].tolist() == theirs.run(None, {"s": arrays})[0].tolist()
    got = ours.run(None, {"s": [[1, 2], [3.5]]})[0]
    assert got.dtype == np.float32 and got.tolist() == [1, 2, 3.5]
    with pytest.raises(Exception):
        theirs.run(None, {"s": [np.array([1, 2])]})
    with pytest.raises(ml.InvalidArgument, match=r"input 's\[0\]': expected tensor\(float\)"):
        ours.run(None, {"s": [np.array([1, 2])]})


def test_optional_feeds_as_onnxruntime():
    optional = helper.make_optional_type_proto(helper.make_tensor_type_proto(T.FLOAT, [2]))
    g = helper.make_graph([helper.make_node("OptionalHasElement", ["o"], ["y"])], "g",
                          [helper.make_value_info("o", optional)], [helper.make_tensor_value_info("y", T.BOOL, [])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    ours, theirs = ml.InferenceSession(m.SerializeToString()), ort.InferenceSession(
        m.SerializeToString(), providers=["CPUExecutionProvider"])
    for feed in (np.zeros(2, np.float32), None, [1.0, 2.0]):
        assert ours.run(None, {"o": feed})[0] == theirs.run(None, {"o": feed})[0]


def test_sequence_of_maps_fed_as_dicts():
    """seq(map(...)) elements stay dicts (mlrt runs this model; onnxruntime refuses SequenceLength on maps)."""
    maps = helper.make_sequence_type_proto(helper.make_map_type_proto(T.STRING, helper.make_tensor_type_proto(
        T.FLOAT, None)))
    g = helper.make_graph([helper.make_node("SequenceLength", ["s"], ["n"])], "g", [helper.make_value_info("s", maps)],
                          [helper.make_tensor_value_info("n", T.INT64, [])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    assert ml.InferenceSession(m.SerializeToString()).run(None, {"s": [{"a": 1.0}, {"b": 2.0}]})[0] == 2

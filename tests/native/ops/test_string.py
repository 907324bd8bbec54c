"""String operators against onnx.reference: StringNormalizer, StringConcat, StringSplit,
RegexFullMatch."""

import numpy as np
import pytest

import mlrt
from oracle import assert_same, check_node, make_model, run_mlrt, run_reference


def check_strings(op_type, inputs, attrs=None, opset=20):
    """Like check_node, for ops whose onnx.reference result is a numpy str (<U) array
    where the spec (and onnxruntime, and the conformance data) have object strings."""
    model = make_model(op_type, inputs, attrs, opset=opset)
    got = run_mlrt(model, inputs)[0]
    expected = np.asarray(run_reference(model, inputs)[0])
    assert got.dtype == object, f"{op_type}: dtype {got.dtype}, expected object"
    assert_same(got.astype(str), expected.astype(str), 0, 0, op_type)


def S(*items, shape=None):
    a = np.array(list(items), dtype=object)
    return a.reshape(shape) if shape is not None else a


WORDS = S("monday", "Tuesday", "WEDNESDAY", "thursday", "Monday", "friday", "mOnDaY")


# -- StringNormalizer (opset 10) ---------------------------------------------------------
# onnx.reference strips accents and drops empty strings, which the spec does not ask
# for; the inputs here avoid both so the reference is a fair oracle.
@pytest.mark.parametrize("action", ["NONE", "LOWER", "UPPER"])
@pytest.mark.parametrize("sensitive", [0, 1])
@pytest.mark.parametrize("stopwords", [None, ["monday"], ["Monday", "friday"], ["nothing"]])
def test_normalizer(action, sensitive, stopwords):
    attrs = {"case_change_action": action, "is_case_sensitive": sensitive}
    if stopwords is not None:
        attrs["stopwords"] = stopwords
    if not sensitive and action == "NONE" and stopwords:
        pytest.skip("onnx.reference ignores is_case_sensitive=0 when case_change_action is NONE; "
                    "see test_normalizer_insensitive_without_case_change")
    check_strings("StringNormalizer", [WORDS], attrs, opset=10)
    check_strings("StringNormalizer", [WORDS.reshape(1, -1)], attrs, opset=10)


def test_normalizer_insensitive_without_case_change():
    attrs = {"stopwords": ["monday", "FRIDAY"]}
    got = run_mlrt(make_model("StringNormalizer", [WORDS], attrs, opset=10), [WORDS])[0]
    assert list(got) == ["Tuesday", "WEDNESDAY", "thursday"]
    attrs["is_case_sensitive"] = 1
    got = run_mlrt(make_model("StringNormalizer", [WORDS], attrs, opset=10), [WORDS])[0]
    assert list(got) == ["Tuesday", "WEDNESDAY", "thursday", "Monday", "friday", "mOnDaY"]


@pytest.mark.parametrize("x", [S("monday", "monday"), S("MONDAY", shape=(1, 1)), S(shape=(0,))])
def test_normalizer_everything_dropped(x):
    attrs = {"case_change_action": "UPPER", "stopwords": ["monday"]}
    got = run_mlrt(make_model("StringNormalizer", [x], attrs, opset=10), [x])[0]
    assert got.dtype == object and got.shape == (1,) * x.ndim and got.reshape(-1)[0] == ""


def test_normalizer_unicode_case():
    x = S("Straße", "ÉTÉ", "Ωmega")
    got = run_mlrt(make_model("StringNormalizer", [x], {"case_change_action": "LOWER"}, opset=10), [x])[0]
    assert list(got) == ["straße", "été", "ωmega"]


@pytest.mark.parametrize("shape", [(2, 3), (1, 2, 3), ()])
def test_normalizer_bad_shape(shape):
    x = np.full(shape, "a", dtype=object)
    with pytest.raises(mlrt.MlrtError, match=r"\[C\]"):
        run_mlrt(make_model("StringNormalizer", [x], {}, opset=10), [x])


# -- StringConcat (opset 20) -------------------------------------------------------------
@pytest.mark.parametrize("a,b", [
    (S("abc", "def"), S(".com", ".net")),
    (S("a", "b", "c", "d", shape=(2, 2)), S("!")),
    (S("x", shape=()), S("y", shape=())),
    (S("", "q"), S("", "")),
    (S("ünï", "日本"), S("cødé", "語")),
    (S(shape=(0, 3)), S("z", "y", "x")),
    (S(*[str(i) for i in range(13)], shape=(13, 1)), S(*[chr(97 + i) for i in range(9)])),
])
def test_concat(a, b):
    check_strings("StringConcat", [a, b])


def test_concat_shapes_must_broadcast():
    a, b = S("a", "b"), S("a", "b", "c")
    with pytest.raises(mlrt.MlrtError, match="broadcast"):
        run_mlrt(make_model("StringConcat", [a, b], opset=20), [a, b])


def test_concat_needs_strings():
    a, b = np.array([1.0], np.float32), S("x")
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("StringConcat", [a, b], opset=20), [a, b])


# -- StringSplit (opset 20) --------------------------------------------------------------
@pytest.mark.parametrize("x", [S("hello world", "a  b   c", "  lead and trail  ", "", "one"),
                               S("a,b,,c", ",x,", "", ",", "no-delim"),
                               S("1-2-3", "4--5", "6", "7-8", shape=(2, 2)),
                               S(shape=(0,)), S(shape=(2, 0))])
@pytest.mark.parametrize("attrs", [{}, {"delimiter": ""}, {"delimiter": ","}, {"delimiter": "-"},
                                   {"delimiter": "--"}, {"maxsplit": 1}, {"delimiter": ",", "maxsplit": 0},
                                   {"delimiter": "-", "maxsplit": 2}])
def test_split(x, attrs):
    check_node("StringSplit", [x], attrs, n_outputs=2, opset=20)


def test_split_scalar():
    # onnx.reference cannot split a rank-0 tensor; the spec's result is shape [pieces]
    x = S("a b  c", shape=())
    y, z = run_mlrt(make_model("StringSplit", [x], {}, n_outputs=2, opset=20), [x])
    assert y.dtype == object and list(y) == ["a", "b", "c"]
    assert z.dtype == np.int64 and z.shape == () and int(z) == 3


# -- RegexFullMatch (opset 20) -----------------------------------------------------------
@pytest.mark.parametrize("pattern", [r"www\.[\w.-]+\.\bcom\b", r"[a-z]+", r"", r".*", r"(ab)+c?", r"\d{2,3}",
                                     r"[^@]+@[^@]+\.(com|org)"])
@pytest.mark.parametrize("x", [S("www.google.com", "www.bbc.co.uk", "abab", "ababc", "12", "1234", "",
                                 "me@site.org", "x@y.net"),
                               S("aa", "", "b1", "zz", shape=(2, 2)), S("abc", shape=()), S(shape=(0,))])
def test_regex(pattern, x):
    check_node("RegexFullMatch", [x], {"pattern": pattern}, opset=20)


def test_regex_bad_pattern():
    x = S("a")
    with pytest.raises(mlrt.MlrtError, match="regular expression"):
        run_mlrt(make_model("RegexFullMatch", [x], {"pattern": "(unclosed"}, opset=20), [x])


def test_regex_needs_strings():
    x = np.array([1, 2], np.int64)
    with pytest.raises(mlrt.MlrtError, match="string"):
        run_mlrt(make_model("RegexFullMatch", [x], {"pattern": "1"}, opset=20), [x])

"""What run() takes as a tensor input, and the words it refuses a feed with.

onnxruntime converts some feeds and refuses others; mlrt takes what it takes, the same
way, and defines the cases where onnxruntime's result is an accident (docs/lowlevel.md,
"Feeds"):

- a list, a tuple or nested lists (and a range): made an array *of the input's declared
  type*, as numpy's `np.array(value, dtype=...)` makes it (ints fed to a float input,
  floats truncated for an int input, 0/1 for bool); a value the type cannot hold (256
  for uint8, NaN for int32, None) is refused;
- a Python scalar (int, float, bool, str, bytes): the same, as a 0-d array (onnxruntime
  refuses scalars; mlrt takes them);
- a numpy array or scalar, or anything with `__array__`: taken as it is, and its dtype
  must be the declared one (as onnxruntime), except the byte order: a big-endian array is
  read by value (onnxruntime reads its bytes as little-endian: garbage);
- a string input takes str, bytes (UTF-8, as ONNX strings are), numpy U, S and void
  arrays (void elements are bytes with their trailing NULs dropped, as numpy's S reads
  them) and object arrays; bytes are decoded, not turned into their repr (onnxruntime
  gives "b'ab'" for b"ab"), and anything else is str() of it, as onnxruntime does.

Errors keep mlrt's wording (what, where, and what to do) and end with onnxruntime's own
sentence for the same mistake, which apps and their tests match on.
"""

from __future__ import annotations

import re

import numpy as np

from .._errors import InvalidArgument

_FIX = "Please fix either the inputs/outputs or the model."
_PY_SCALARS = (int, float, bool, complex, str, bytes)


def names_error(inputs, feed_names, missing, unknown) -> InvalidArgument:
    """The error for a feed whose names do not fit the model: the inputs `missing` first,
    as onnxruntime checks them first, else the `unknown` names."""
    if missing:
        said = "; ".join(f"input '{a.name}' is missing ({a.type} with shape {a.shape})" for a in missing)
        if unknown:
            said += f"; {_names(unknown)} {'is' if len(unknown) == 1 else 'are'} not an input of this model"
        return InvalidArgument(f"{said}. Required inputs ({[a.name for a in missing]}) are missing from input "
                               f"feed ({list(feed_names)}).")
    expected = ", ".join(a.name for a in inputs)
    return InvalidArgument(f"input {_names(unknown)} {'is' if len(unknown) == 1 else 'are'} not an input of this "
                           f"model (inputs: {expected}). Invalid input name: {unknown[0]}")


def output_error(name, known) -> InvalidArgument:
    return InvalidArgument(f"'{name}' is not an output of this model (outputs: {', '.join(known)}). "
                           f"Invalid output name:{name}")


def _names(names) -> str:
    return ", ".join(f"'{n}'" for n in names)


def sequence(name: str, type_string: str, value) -> list:
    """A sequence input's elements: tensors of its declared element type, as `tensor`
    takes them; maps (seq(map(...))) as dicts."""
    elem = element_type(type_string)
    if not re.fullmatch(r"seq\(tensor\(\w+\)\)", type_string or ""):
        return [dict(v) if isinstance(v, dict) else np.asarray(v) for v in value]
    return [tensor(f"{name}[{i}]", elem, f"tensor({type_name(elem)})", v) for i, v in enumerate(value)]


def element_type(type_string: str) -> int:
    """The ONNX element type of the tensors in onnxruntime's spelling of a tensor, sequence
    or optional type ("seq(tensor(float))" -> FLOAT), 0 when it names none."""
    from onnx import TensorProto
    m = re.fullmatch(r"(?:\w+\()*tensor\((\w+)\)\)*", type_string or "")
    try:
        return TensorProto.DataType.Value(m.group(1).upper()) if m else 0
    except ValueError:
        return 0


def type_name(elem_type: int) -> str:
    from onnx import TensorProto
    return TensorProto.DataType.Name(elem_type).lower() if elem_type else "undefined"


def tensor(name: str, elem_type: int, type_string: str, value) -> np.ndarray:
    """The host array fed as input `name` of ONNX element type `elem_type` (0: any)."""
    from onnx import TensorProto, helper
    want = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)) if elem_type else None
    string = elem_type == TensorProto.STRING
    if value is None:
        raise InvalidArgument(f"input '{name}' is None: feed {type_string} as a numpy array (or a list)")
    if isinstance(value, (list, tuple, range)) or (isinstance(value, _PY_SCALARS) and not isinstance(value, np.generic)):
        arr = _from_python(name, value, want, string, type_string)
    else:
        try:
            arr = np.asarray(value)
        except Exception as exc:
            raise InvalidArgument(f"input '{name}': cannot be read as an array ({exc})") from None
    if string and arr.dtype.kind in "OUSV":
        return strings(name, arr)
    if want is not None and arr.dtype != want:
        if arr.dtype.kind == want.kind and arr.dtype.newbyteorder("=") == want:
            return arr.astype(want)  # the other byte order: read by value
        convert = "np.object_" if string else f"np.{want.name}"
        raise InvalidArgument(f"input '{name}': expected {type_string}, got an array of {arr.dtype} (convert with "
                              f".astype({convert})). Unexpected input data type. Actual: ({_actual(arr.dtype)}) , "
                              f"expected: ({type_string})")
    return arr


def _from_python(name, value, want, string, type_string) -> np.ndarray:
    """A list, tuple or Python scalar made an array of the declared type."""
    try:
        if string:
            arr = np.array(value, dtype=object)
            if arr.ndim and any(isinstance(v, (list, tuple)) for v in arr.flat):
                raise ValueError("the lists are not all of one length")
            return arr
        return np.array(value, dtype=want)
    except (ValueError, TypeError, OverflowError) as exc:
        raise InvalidArgument(f"input '{name}': {_shown(value)} cannot be made a {type_string} ({exc}). Could not "
                              "create tensor from given input list") from None


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _actual(dtype: np.dtype) -> str:
    from ._ortvalue import _type_string
    try:
        return _type_string(dtype.newbyteorder("="))
    except (KeyError, TypeError, ValueError):
        return f"numpy {dtype}"


def strings(name: str, arr: np.ndarray) -> np.ndarray:
    """An object array of str from a numpy U, S, void or object array."""
    if arr.dtype.kind == "V":
        arr = arr.view(f"S{arr.dtype.itemsize}") if arr.dtype.itemsize else np.zeros(arr.shape, "S1")
    if arr.dtype.kind == "S":
        try:
            return np.char.decode(arr, "utf-8").astype(object)
        except UnicodeDecodeError as exc:
            raise InvalidArgument(f"input '{name}': a bytes element is not UTF-8, as ONNX strings are "
                                  f"({exc})") from None
    if arr.dtype.kind == "U":
        return arr.astype(object)
    out = np.empty(arr.shape, dtype=object)
    for i, v in np.ndenumerate(arr):
        if isinstance(v, (bytes, bytearray, np.bytes_)):
            try:
                v = bytes(v).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidArgument(f"input '{name}': element {list(i)} is bytes that are not UTF-8, as ONNX "
                                      f"strings are ({exc})") from None
        out[i] = v if type(v) is str else str(v)
    return out


def shape(name: str, want: tuple, arr) -> None:
    """Refuse `arr` unless its shape fits the declared one (a non-positive or named dim
    takes any size)."""
    got = tuple(arr.shape)
    if len(got) != len(want):
        raise InvalidArgument(f"input '{name}': expected rank {len(want)} (shape {list(want)}), got shape "
                              f"{list(got)}. Invalid rank for input: {name} Got: {len(got)} Expected: {len(want)} "
                              f"{_FIX}")
    bad = [(d, w, g) for d, (w, g) in enumerate(zip(want, got)) if isinstance(w, int) and w > 0 and w != g]
    if bad:
        said = ", ".join(f"dimension {d} must be {w}, got {g}" for d, w, g in bad)
        indices = " ".join(f"index: {d} Got: {g} Expected: {w}" for d, w, g in bad)
        raise InvalidArgument(f"input '{name}': {said} (expected shape {list(want)}, got {list(got)}). Got invalid "
                              f"dimensions for input: {name} for the following indices {indices} {_FIX}")

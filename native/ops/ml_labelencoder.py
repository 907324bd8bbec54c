"""LabelEncoder (ai.onnx.ml): maps each element of X through a key -> value table; shape
kept, output type = the values' type.

Opset 1: classes_strings; strings map to their index (default_int64 if absent),
int64 indexes to their string (default_string if out of range).  Opsets 2 and 4:
keys_* and values_* (strings, int64s, floats; from 4 also keys_tensor /
values_tensor of any listed type and default_tensor).  A missing key gives the
default of the values' type (_Unused, -1, -0.0 unless set); from opset 4 a float
NaN key matches NaN inputs; a repeated key keeps its last value (as the spec says;
onnxruntime keeps the first).  Strings to numbers run on the C kernel (kernels/
ml_string.c, the keys sorted once here); the rest in Python (run_host)."""

import numpy as np

from ..._errors import InvalidArgument
from ._base import Info, Launch
from ._host import strings
from ._ml import _MlOp, is_strings, string_keys

_STR = np.dtype(object)


def _encode(op, x: np.ndarray, keys: np.ndarray, values: np.ndarray, default, nan_matches: bool = False) -> np.ndarray:
    """values[i] where x == keys[i], default elsewhere (keys: object or numeric arrays);
    with nan_matches a NaN key matches NaN inputs."""
    if keys.dtype == _STR or x.dtype.kind in "OUS":
        if (keys.dtype == _STR) != (x.dtype.kind in "OUS"):
            raise op.bad(f"X is {x.dtype.name if x.dtype != _STR else 'string'} but the keys are "
                         f"{keys.dtype.name if keys.dtype != _STR else 'strings'}")
        table = dict(zip(keys.tolist(), values.tolist()))
        flat = [table.get(k, default) for k in strings(x).reshape(-1).tolist()]
        out = np.empty(len(flat), dtype=values.dtype)
        out[:] = flat
        return out.reshape(x.shape)
    if x.dtype.kind != keys.dtype.kind and not (x.dtype.kind in "iu" and keys.dtype.kind in "iu"):
        raise op.bad(f"X is {x.dtype.name} but the keys are {keys.dtype.name}")
    out = np.full(x.shape, default, dtype=values.dtype)
    if keys.size == 0 or x.size == 0:
        return out
    if keys.dtype.kind == "f":
        nan = np.isnan(keys)
        if nan.any() and nan_matches:
            out[np.isnan(x)] = values[np.flatnonzero(nan)[-1]]
        keys, values = keys[~nan], values[~nan]
    # last occurrence wins: unique over the reversed table
    rk = keys[::-1]
    uniq, first = np.unique(rk, return_index=True)
    vals = values[::-1][first]
    pos = np.clip(np.searchsorted(uniq, x), 0, max(uniq.size - 1, 0))
    hit = uniq.size > 0
    found = (uniq[pos] == x) if hit else np.zeros(x.shape, bool)
    out[found] = vals[pos[found]]
    return out


class _Lookup(_MlOp):
    """A lookup from strings to numbers on the C kernel (`table`: the sorted keys and the
    values, the default last, or None where it runs in Python); other inputs and string
    outputs run in run_host."""

    params = None
    tolerance = (0.0, 0.0)
    table = None

    def make_table(self, keys, values, default) -> None:
        """The kernel's tables for string keys -> numeric values."""
        if values.dtype == _STR or values.dtype.kind not in "biuf":
            return
        made = string_keys(keys)
        if made is not None:
            rows, last = made
            self.table = (rows, np.append(values[last], np.asarray(default, values.dtype)).astype(values.dtype))

    def out_dtype(self, x) -> np.dtype:
        raise NotImplementedError

    def strings_or_int64(self, x) -> np.dtype:
        """The output type of a two-way map between strings and int64: int64 for string X,
        strings for int64 X; any other X refused."""
        if is_strings(x.dtype):
            return np.dtype(np.int64)
        if np.dtype(x.dtype) != np.int64:
            raise self.bad(f"X must be string or int64, got {np.dtype(x.dtype).name}")
        return _STR

    def takes(self, dtypes):
        return self.table is not None and bool(dtypes) and is_strings(dtypes[0])

    def infer(self, inputs):
        x = self.need(inputs, 0)
        return [Info(self.out_dtype(x), tuple(x.shape))]

    def launch(self, inputs, outputs):
        return Launch(self.op_type, None, extra=list(self.table))

    def x_of(self, values) -> np.ndarray:
        x = values[0] if values else None
        if not isinstance(x, np.ndarray):
            raise InvalidArgument(f"{self.where}: input 0 (X) must be a tensor, got {type(x).__name__}")
        return x

    def bad(self, message: str) -> InvalidArgument:
        return InvalidArgument(f"{self.where}: {message}")


class LabelEncoder(_Lookup):
    attributes = {"classes_strings": None, "default_int64": -1, "default_string": "_Unused"}

    def __init__(self, node, opset):
        super().__init__(node, opset)
        classes = list(self.a.classes_strings or [])
        self.make_table(classes, np.arange(len(classes), dtype=np.int64), int(self.a.default_int64))

    def out_dtype(self, x):
        return self.strings_or_int64(x)

    def run_host(self, values, runtime):
        x = self.x_of(values)
        classes = np.empty(len(self.a.classes_strings or []), dtype=object)
        classes[:] = list(self.a.classes_strings or [])
        if x.dtype.kind in "OUS":
            return [_encode(self, x, classes, np.arange(classes.size, dtype=np.int64), int(self.a.default_int64))]
        if x.dtype != np.int64:
            raise self.bad(f"X must be string or int64, got {x.dtype.name}")
        return [_encode(self, x, np.arange(classes.size, dtype=np.int64), classes, self.a.default_string)]


class LabelEncoder_2(_Lookup):
    nan_matches = False
    attributes = {"keys_strings": None, "keys_int64s": None, "keys_floats": None, "keys_tensor": None,
                  "values_strings": None, "values_int64s": None, "values_floats": None, "values_tensor": None,
                  "default_string": "_Unused", "default_int64": -1, "default_float": -0.0, "default_tensor": None}

    def __init__(self, node, opset):
        super().__init__(node, opset)
        self.keys = self._pick("keys")
        self.values = self._pick("values")
        if self.keys.size != self.values.size:
            raise self.fail(f"{self.keys.size} keys but {self.values.size} values")
        self.default = self._default()
        if self.keys.dtype == _STR:
            self.make_table(self.keys.tolist(), self.values, self.default)

    def out_dtype(self, x):
        if (self.keys.dtype == _STR) != is_strings(x.dtype):
            raise self.bad(f"X is {np.dtype(x.dtype).name if not is_strings(x.dtype) else 'string'} but the keys "
                           f"are {self.keys.dtype.name if self.keys.dtype != _STR else 'strings'}")
        return self.values.dtype

    def _pick(self, kind: str) -> np.ndarray:
        given = [(name, getattr(self.a, f"{kind}_{name}")) for name in ("strings", "int64s", "floats", "tensor")]
        given = [(n, v) for n, v in given if v is not None]
        if len(given) != 1:
            raise self.fail(f"exactly one of {kind}_strings, {kind}_int64s, {kind}_floats, {kind}_tensor must be "
                            f"set, got {', '.join(n for n, _ in given) or 'none'}")
        name, v = given[0]
        if name == "strings" or (name == "tensor" and np.asarray(v).dtype.kind in "OUS"):
            arr = np.empty(len(np.asarray(v).reshape(-1)), dtype=object)
            arr[:] = [s.decode() if isinstance(s, bytes) else str(s) for s in np.asarray(v).reshape(-1)]
            return arr
        dtype = {"int64s": np.int64, "floats": np.float32}.get(name)
        return np.asarray(v, dtype=dtype).reshape(-1)

    def _default(self):
        vt = self.values.dtype
        if self.a.default_tensor is not None:
            d = np.asarray(self.a.default_tensor).reshape(-1)
            if d.size != 1:
                raise self.fail(f"default_tensor must hold one value, got {d.size}")
            if vt == _STR:
                return d[0].decode() if isinstance(d[0], bytes) else str(d[0])
            return d.astype(vt)[0]
        if vt == _STR:
            return self.a.default_string
        if vt.kind == "f":
            return vt.type(self.a.default_float)
        return vt.type(self.a.default_int64)

    def run_host(self, values, runtime):
        x = self.x_of(values)
        return [_encode(self, x, self.keys, self.values, self.default, self.nan_matches)]


class LabelEncoder_4(LabelEncoder_2):
    nan_matches = True

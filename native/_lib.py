"""The loaded native library, and numpy <-> mlrt_tensor glue.

Everything that touches cffi objects lives here, so the rest of the pipeline deals
in numpy arrays, shapes and plain Python values.
"""

from __future__ import annotations

import functools
import os
import threading

import numpy as np

from .. import distribution
from .._errors import InvalidArgument, MlrtError, NotImplemented, ResourceExhausted, RuntimeLoadError
from .ops._base import contiguous_strides

# The largest tensor rank the C core and the OpenCL kernels take: MLRT_MAX_RANK of
# include/mlrt.h, checked against the loaded runtime in runtime(); the OpenCL programs
# get it as a build option and ops refuse larger ranks with it.
MAX_RANK = 8

_NP_TO_ONNX: dict | None = None  # numpy dtype -> ONNX element type (the C ABI uses the ONNX numbers)


def _np_to_onnx() -> dict:
    """The dtype table, made when first needed: onnx's dtype mapping imports ml_dtypes,
    which costs more than importing the rest of mlrt.lowlevel."""
    global _NP_TO_ONNX
    from onnx import TensorProto, helper
    _NP_TO_ONNX = {np.dtype(helper.tensor_dtype_to_np_dtype(t)): t for t in (
        TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.UINT16, TensorProto.INT16,
        TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL, TensorProto.FLOAT16, TensorProto.DOUBLE,
        TensorProto.UINT32, TensorProto.UINT64, TensorProto.BFLOAT16,
        # low-precision types (ml_dtypes, one byte per element)
        TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E5M2FNUZ,
        TensorProto.UINT4, TensorProto.INT4, TensorProto.FLOAT4E2M1, TensorProto.FLOAT8E8M0, TensorProto.UINT2,
        TensorProto.INT2)}
    return _NP_TO_ONNX


def onnx_type(dtype) -> int:
    """ONNX element type number of a numpy dtype (0 if the C core has no such type)."""
    return (_NP_TO_ONNX or _np_to_onnx()).get(np.dtype(dtype), 0)


def np_type(onnx_elem_type: int) -> np.dtype:
    from onnx import helper
    return np.dtype(helper.tensor_dtype_to_np_dtype(onnx_elem_type))


@functools.cache
def runtime():
    rt = distribution.current_runtime()
    rank = int(getattr(rt.lib, "MLRT_MAX_RANK", MAX_RANK))
    if rank != MAX_RANK:
        raise RuntimeLoadError(f"the runtime at {rt.path} takes tensors of rank <= {rank}, this mlrt is built for "
                               f"{MAX_RANK}: use a runtime of this mlrt version")
    return rt


def ffi():
    return runtime().ffi


def lib():
    return runtime().lib


@functools.cache
def enum_value(name: str) -> int:
    """The value of the C enum constant `name` (include/mlrt.h, kernels/*.h) in the
    loaded runtime.  The numbers live only in the headers: Python names the constant
    (an operator maps its ONNX attribute strings to constant names) and reads the
    number here, when a kernel is launched -- never at import, which comes before
    the runtime is loaded."""
    try:
        return int(getattr(lib(), name))
    except AttributeError:
        raise RuntimeLoadError(f"the runtime at {runtime().path} has no constant {name}: "
                               "use a runtime of this mlrt version") from None


def last_error() -> str:
    return ffi().string(lib().mlrt_last_error()).decode(errors="replace")


def raise_status(status: int, where: str = "") -> None:
    """Turn a non-zero C status (enum mlrt_status) into the matching MlrtError."""
    if status == 0:  # MLRT_OK
        return
    L = lib()
    if status == getattr(L, "MLRT_ERR_TERMINATED", -1):  # (an older runtime has no such code)
        from .terminate import MESSAGE
        raise MlrtError(MESSAGE)
    msg = last_error() or "unknown native error"
    if where:
        msg = f"{where}: {msg}"
    if status == L.MLRT_ERR_INVALID_ARGUMENT:
        raise InvalidArgument(msg)
    if status == L.MLRT_ERR_NOT_IMPLEMENTED:
        raise NotImplemented(msg)
    if status == L.MLRT_ERR_OUT_OF_MEMORY:
        raise ResourceExhausted(msg)
    raise MlrtError(msg)


def fill_tensor(desc, dtype, shape, strides=None, data=None) -> None:
    """Write dtype/shape/strides (elements) and data pointer into an mlrt_tensor."""
    if len(shape) > MAX_RANK:
        raise NotImplemented(f"tensor of rank {len(shape)}: the C core supports rank <= {MAX_RANK}")
    desc.dtype = onnx_type(dtype) if not isinstance(dtype, int) else dtype
    desc.rank = len(shape)
    if strides is None:
        strides = contiguous_strides(shape)
    for d, (n, s) in enumerate(zip(shape, strides)):
        desc.shape[d] = int(n)
        desc.strides[d] = int(s)
    desc.data = ffi().NULL if data is None else data


def array_pointer(a: np.ndarray):
    """The data pointer of `a` as cdata (keeps `a` alive while the cdata lives)."""
    if a.flags.c_contiguous:
        return ffi().from_buffer(a)  # the quick way (this runs for every tensor of every run)
    return ffi().cast("void *", a.ctypes.data)


STRING = 8  # MLRT_STRING (onnx TensorProto.STRING): a string tensor's dtype in C, given as an mlrt_strings


def is_string(dtype) -> bool:
    """Whether a numpy dtype holds strings (str objects, numpy's 'U' or 'S')."""
    return np.dtype(dtype).kind in "OUS"


def utf32(a: np.ndarray):
    """A string array as the C kernels read it (mlrt_strings in include/mlrt.h): (width,
    a buffer of width UTF-32 code points per element, zeros after each one's end, in
    the array's order), or None where that would not be exact -- elements that are not
    str (bytes: decoded on the host) or a str ending in U+0000 (no room for trailing
    zeros).  One str is encoded as it is; more go through numpy's 'U' layout."""
    kind = a.dtype.kind
    if kind == "O":
        if a.size == 1:  # (the common case of a row of features: quick)
            s = a.item()
            if type(s) is not str or s[-1:] == "\0":
                return None
            return len(s), s.encode("utf-32-le", "surrogatepass")
        try:
            joined = "".join(a.flat)  # (TypeError: an element that is not a str)
        except TypeError:
            return None
        u = np.ascontiguousarray(a.astype(np.str_))
        if "\0" in joined and int(np.strings.str_len(u).sum()) != len(joined):
            return None  # (a str lost its trailing U+0000)
        return u.dtype.itemsize // 4, u
    if kind == "U":  # (a 'U' array holds no trailing zeros to lose)
        return a.dtype.itemsize // 4, np.ascontiguousarray(a)
    return None


def strings_header(made):
    """An mlrt_strings over what utf32() made: (its pointer, what it keeps alive)."""
    f = ffi()
    width, buf = made
    chars = f.from_buffer("uint32_t[]", buf)
    return f.new("mlrt_strings *", {"width": width, "chars": chars}), (chars, buf)


def pack_params(struct_name: str | None, fields: dict | None):
    """A params block for the C struct `struct_name` from a dict of its fields.

    Returns (keepalive_cdata, pointer, size).  Lists fill fixed-size array fields."""
    if struct_name is None:
        return None, ffi().NULL, 0
    f = ffi()
    p = f.new(f"{struct_name} *")
    for key, value in (fields or {}).items():
        if isinstance(value, (list, tuple)):
            arr = getattr(p, key)
            if len(value) > len(arr):
                raise NotImplemented(f"{struct_name}.{key}: {len(value)} values, room for {len(arr)}")
            for i, v in enumerate(value):
                arr[i] = v
        else:
            setattr(p, key, value)
    return p, p, f.sizeof(struct_name)


# -- C structs seen by numpy: laid out by cffi, never declared a second time -------------------------
@functools.cache
def declarations(text: str):
    """A cffi FFI holding C declarations that are not the runtime's (the OpenCL programs'
    headers, native/opencl/*.h), parsed once per process."""
    import cffi

    f = cffi.FFI()
    f.cdef(text)
    return f


@functools.cache
def struct_dtype(struct_name: str, declared=None) -> np.dtype:
    """The numpy dtype of the C struct `struct_name` with cffi's layout (field names,
    offsets, size): from the runtime's headers, or from `declared` (an FFI made by
    declarations())."""
    f = declared or ffi()
    return _numpy_type(f, f.typeof(struct_name))


def _numpy_type(f, ctype) -> np.dtype:
    if ctype.kind == "struct":
        names, formats, offsets = zip(*((name, _numpy_type(f, field.type), field.offset)
                                        for name, field in ctype.fields))
        return np.dtype({"names": list(names), "formats": list(formats), "offsets": list(offsets),
                         "itemsize": f.sizeof(ctype)})
    if ctype.kind == "array":
        return np.dtype((_numpy_type(f, ctype.item), (ctype.length,)))
    if ctype.kind in ("primitive", "enum") and ctype.cname in ("float", "double"):
        return np.dtype(f"f{f.sizeof(ctype)}")
    if ctype.kind in ("primitive", "enum") and ctype.cname not in ("char", "wchar_t"):
        signed = int(f.cast(ctype, -1)) < 0
        return np.dtype(f"{'i' if signed else 'u'}{f.sizeof(ctype)}")
    raise NotImplemented(f"C type {ctype.cname} has no numpy counterpart here")


def struct_value(struct_name: str, fields: dict, declared=None) -> np.ndarray:
    """One C struct `struct_name` (see struct_dtype) as a 0-d numpy record, its fields set
    by name and the rest zero; a sequence fills the start of an array field."""
    value = np.zeros((), struct_dtype(struct_name, declared))
    for key, v in fields.items():
        if np.ndim(v):
            room = value[key]
            if len(v) > len(room):
                raise NotImplemented(f"{struct_name}.{key}: {len(v)} values, room for {len(room)}")
            room[:len(v)] = v
        else:
            value[key] = v
    return value


def kernel_table() -> list[dict]:
    """The C kernel table as dicts (op_type, domain, since, until, dtypes)."""
    f, L = ffi(), lib()
    rows = []
    for i in range(L.mlrt_kernel_count()):
        k = L.mlrt_kernel_get(i)
        rows.append({"index": i, "op_type": f.string(k.op_type).decode(), "domain": f.string(k.domain).decode(),
                     "since": k.since_version, "until": k.until_version,
                     "types": [t for t in range(64) if (k.type_mask >> t) & 1]})
    return rows


def find_kernel(domain: str, op_type: str, opset: int, dtype) -> int:
    t = -1 if dtype is None else STRING if is_string(dtype) else onnx_type(dtype)
    return lib().mlrt_kernel_find(domain.encode(), op_type.encode(), opset, t)


class ThreadPool:
    """A session's intra-op pool (a native object).  `pinned`: each worker kept to a
    processor of its own (mlrt_threadpool_create_pinned; where the runtime lacks it, an
    older ABI-2 library, the workers are free).  When its last reference goes, the
    native pool is kept idle for the next session asking for as many threads, pinned
    alike (up to _IDLE_KEPT pools; starting and joining the threads took a tenth of
    making a small session), else destroyed.  A forked child keeps none: the threads
    stay behind."""

    def __init__(self, n_threads: int, pinned: bool = False):
        key = (int(n_threads), bool(pinned) and hasattr(lib(), "mlrt_threadpool_create_pinned"))
        with _IDLE_LOCK:
            pool = _IDLE.pop(key, None)
        if pool is None:
            pool = (lib().mlrt_threadpool_create_pinned if key[1] else lib().mlrt_threadpool_create)(key[0])
            if pool == ffi().NULL:
                raise_status(lib().MLRT_ERR_OUT_OF_MEMORY, "thread pool")
        self.handle = ffi().gc(pool, functools.partial(_retire, key, os.getpid()))
        self.size = lib().mlrt_threadpool_size(pool)
        self.pinned = key[1]


def default_threads() -> int:
    """The intra-op threads of a session left at its default: one per processor this
    process may run on (as onnxruntime, which counts physical cores)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # (no sched_getaffinity on this platform)
        return os.cpu_count() or 1


_IDLE_KEPT = 4
_IDLE: dict = {}  # (n_threads asked for, pinned) -> an idle native pool
_IDLE_LOCK = threading.RLock()  # (a pool may be retired by the garbage collector inside the lock)


def _forget_idle() -> None:
    """In a forked child: the idle pools' threads did not come along."""
    global _IDLE_LOCK
    _IDLE_LOCK = threading.RLock()
    _IDLE.clear()


os.register_at_fork(after_in_child=_forget_idle)


def _retire(key: tuple, pid: int, pool, _getpid=os.getpid) -> None:
    if pid != _getpid():
        return  # a pool from before a fork: its threads and its memory are the parent's
    if _IDLE_LOCK is None:
        return  # the interpreter is exiting and has emptied this module (the process takes the pool)
    with _IDLE_LOCK:
        if key not in _IDLE and len(_IDLE) < _IDLE_KEPT:
            _IDLE[key] = pool
            return
    lib().mlrt_threadpool_destroy(pool)

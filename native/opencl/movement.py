"""Data movement on OpenCL (movement.cl): strided copies (Transpose, Expand, Slice,
DepthToSpace, SpaceToDepth), Concat, Split, Gather, Tile, Pad, and Cast between
float32, float16, int32, int64 and bool.

Elements move as bits, so every kernel but Cast is built per element *size* (uint8,
16, 32 or 64) and serves every element type.  Views come from the operators'
semantics (`op.launch(...).views`, Slice's starts and steps); here they are only
merged (dimensions walked contiguously become one) and checked against the buffer
they read, then copied by the cheapest kernel that fits: a plain copy, a batched 2-D
transpose (local-memory tiles on GPUs, 4 x 4 register blocks on CPU devices), or
row-wise strided reads.  Row kernels give each item one element on GPUs and a run of
CPU_CHUNK elements on CPU devices, where per-item index arithmetic dominates.
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from ..._errors import DeviceError, InvalidArgument
from ..ops._base import contiguous_strides
from ..ops.pad import MODES as PAD_MODES
from ._recorders import recorder, round_up

LOCAL = 256       # work-group size of the 1-D and row kernels (globals are rounded up to it)
CPU_CHUNK = 64    # elements of a row one item moves on a CPU device (1 on GPUs)
TILE, TILE_ROWS = 32, 8  # work-group of the GPU transpose: TILE x TILE_ROWS items move a TILE-square block
BLOCK_GROUP = (16, 4)    # work-group of the CPU transpose (4 x 4 elements per item)
# movement.cl's defines (see _programs.family_options): the transpose tile, and Pad's modes
BUILD_OPTIONS = {"MLRT_TILE": TILE, "MLRT_TILE_ROWS": TILE_ROWS}
C_CONSTANTS = tuple(PAD_MODES.values())
_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_CAST_TO = ("float32", "float16", "int32", "int64", "bool")
# element types moved as bits: every numeric type of 1, 2, 4 or 8 bytes (not strings, not sub-byte types)
ANY = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
       "float32", "float64", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu")


def bits_dtype(dtype) -> type:
    """The unsigned type of dtype's size: the program that moves its elements."""
    size = np.dtype(dtype).itemsize
    if size not in _BITS:
        raise DeviceError(f"OpenCL data movement has no kernel for {np.dtype(dtype).name} ({size}-byte elements)")
    return _BITS[size]



def enqueue_1d(k, kernel, n: int, *args) -> None:
    """kernel over n items (its last argument is n), in LOCAL-sized work-groups."""
    k.enqueue(kernel, (round_up(n, LOCAL),), (LOCAL,), *args, np.int64(n))


def enqueue_rows(k, kernel, rows: int, cols: int, *args) -> None:
    """kernel over `rows` rows of `cols` elements (its last arguments are cols, chunk, rows),
    one run of `chunk` elements per item, in LOCAL-sized work-groups."""
    chunk = 1 if k.device.is_gpu else max(1, min(int(cols), CPU_CHUNK))
    items = int(rows) * -(-int(cols) // chunk)
    k.enqueue(kernel, (round_up(items, LOCAL),), (LOCAL,), *args, np.int64(cols), np.int64(chunk), np.int64(rows))


def merge_view(shape, strides) -> tuple[list[int], list[int]]:
    """The same walk with size-1 dimensions dropped and dimensions that continue each
    other merged (rank 1 at least)."""
    sh, st = [], []
    for n, s in zip(shape, strides):
        n, s = int(n), int(s)
        if n == 1:
            continue
        if sh and st[-1] == s * n:
            sh[-1] *= n
            st[-1] = s
        else:
            sh.append(n)
            st.append(s)
    return (sh, st) if sh else ([1], [1])


def copy_view(k, src, dst, shape, strides, base: int, src_numel: int, dtype, where: str) -> None:
    """dst (contiguous, `shape`) = the view (shape, element strides, first element `base`) of src."""
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return
    sh, st = merge_view(shape, strides)
    lo = base + sum(min(0, (a - 1) * s) for a, s in zip(sh, st))
    hi = base + sum(max(0, (a - 1) * s) for a, s in zip(sh, st))
    if lo < 0 or hi >= src_numel:
        raise DeviceError(f"{where}: the input view reaches elements {lo}..{hi} of a {src_numel}-element buffer")
    bits = bits_dtype(dtype)
    if len(sh) == 1 and st[0] == 1:
        enqueue_1d(k, k.kernel("mlrt_copy", bits), n, src, dst, np.int64(base))
        return
    if len(sh) in (2, 3) and st[-2] == 1 and st[-1] not in (0, 1) and sh[-1] > 1:
        transpose(k, src, dst, base, sh, st, bits)
        return
    enqueue_rows(k, k.kernel("mlrt_copy_rows", bits), n // sh[-1], sh[-1], src, dst, k.view(sh[:-1], st[:-1]),
                 np.int64(base), np.int64(st[-1]))


def transpose(k, src, dst, base: int, sh, st, bits) -> None:
    """A batch of 2-D transposes: the merged view (batch?, rows, cols) reads rows contiguously."""
    rows, cols = sh[-2], sh[-1]
    batch, bstride = (sh[0], st[0]) if len(sh) == 3 else (1, 0)
    args = (src, dst, np.int64(base), np.int64(rows), np.int64(cols), np.int64(st[-1]), np.int64(bstride))
    if k.device.is_gpu:
        gsize = (round_up(cols, TILE), round_up(rows, TILE) // TILE * TILE_ROWS, batch)
        k.enqueue(k.kernel("mlrt_transpose_tiled", bits), gsize, (TILE, TILE_ROWS, 1), *args)
    else:
        l0, l1 = BLOCK_GROUP
        gsize = (round_up(-(-cols // 4), l0), round_up(-(-rows // 4), l1), batch)
        k.enqueue(k.kernel("mlrt_transpose_blocks", bits), gsize, (l0, l1, 1), *args)


# -- the strided copies -----------------------------------------------------------------------

@recorder("Transpose", "Expand", "DepthToSpace", "SpaceToDepth", family="movement", dtypes=ANY,
          program_dtype=bits_dtype)
def strided_copy(k, op, inputs, outputs):
    x, y = inputs[0], outputs[0]
    view = op.launch(inputs, outputs).views.get(0)
    shape, strides = (view.shape, view.strides) if view is not None else (y.shape, contiguous_strides(y.shape))
    copy_view(k, k.input(0), k.output(0), shape, strides, 0, x.size, x.dtype, op.where)


@recorder("Slice", family="movement", dtypes=ANY, program_dtype=bits_dtype)
def slice_(k, op, inputs, outputs):
    """Slice's first index and step per axis, as a view with (maybe negative) strides."""
    x, y = inputs[0], outputs[0]
    params = op.launch(inputs, outputs).params
    contiguous = contiguous_strides(x.shape)
    base = sum(int(f) * s for f, s in zip(params["starts"], contiguous))
    strides = [int(step) * s for step, s in zip(params["steps"], contiguous)]
    copy_view(k, k.input(0), k.output(0), y.shape, strides, base, x.size, x.dtype, op.where)


# -- Concat and Split ---------------------------------------------------------------------------

def _pieces(shape, axis: int, sizes):
    """(rows, wide row, [(start, piece row) per size]) of a wide tensor cut along axis."""
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    rows = int(np.prod(shape[:axis], dtype=np.int64))
    out, start = [], 0
    for s in sizes:
        out.append((start * inner, int(s) * inner))
        start += int(s)
    return rows, int(shape[axis]) * inner, out


@recorder("Concat", family="movement", dtypes=ANY, program_dtype=bits_dtype)
def concat(k, op, inputs, outputs):
    y = outputs[0]
    axis = op.launch(inputs, outputs).params["axis"]
    present = [(i, x) for i, x in enumerate(inputs) if x is not None]
    rows, wide, pieces = _pieces(y.shape, axis, [x.shape[axis] for _, x in present])
    kernel = k.kernel("mlrt_concat_piece", bits_dtype(y.dtype))
    for (i, x), (start, piece) in zip(present, pieces):
        if x.size:
            enqueue_rows(k, kernel, rows, piece, k.input(i), k.output(0), np.int64(wide), np.int64(start))


@recorder("Split", family="movement", dtypes=ANY, program_dtype=bits_dtype)
def split(k, op, inputs, outputs):
    x = inputs[0]
    axis = op.launch(inputs, outputs).params["axis"]
    rows, wide, pieces = _pieces(x.shape, axis, [o.shape[axis] for o in outputs])
    kernel = k.kernel("mlrt_split_piece", bits_dtype(x.dtype))
    for j, (o, (start, piece)) in enumerate(zip(outputs, pieces)):
        if op.node.output[j] and o.size:
            enqueue_rows(k, kernel, rows, piece, k.input(0), k.output(j), np.int64(wide), np.int64(start))


# -- Gather, Tile, Pad ----------------------------------------------------------------------------

@recorder("Gather", family="movement", dtypes=ANY, program_dtype=bits_dtype)
def gather(k, op, inputs, outputs):
    """Indices are read at run time; one outside [-dim, dim) fails the run with
    InvalidArgument, as on the CPU."""
    x, ind, y = inputs[0], inputs[1], outputs[0]
    axis = op.launch(inputs, outputs).params["axis"]
    if not 0 <= axis < len(x.shape):  # (a scalar X: the CPU's kernel refuses it the same way)
        raise InvalidArgument(f"{op.where}: axis {axis} is out of range for rank {len(x.shape)}")
    inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    if y.size == 0:
        return  # (no indices, or nothing per index)
    name = "mlrt_gather_i32" if np.dtype(ind.dtype) == np.int32 else "mlrt_gather_i64"
    enqueue_rows(k, k.kernel(name, bits_dtype(x.dtype)), y.size // inner, inner, k.input(0), k.input(1),
                 k.output(0), np.int64(ind.size), np.int64(x.shape[axis]),
                 *k.error_flag(f"{op.where}: an index is out of range for axis {axis} of size {x.shape[axis]}"))


@recorder("Tile", family="movement", dtypes=ANY, program_dtype=bits_dtype)
def tile(k, op, inputs, outputs):
    x, y = inputs[0], outputs[0]
    if y.size == 0:
        return
    if x.rank == 0:
        enqueue_1d(k, k.kernel("mlrt_copy", bits_dtype(x.dtype)), 1, k.input(0), k.output(0), np.int64(0))
        return
    strides = contiguous_strides(x.shape)
    cols = y.shape[-1]
    enqueue_rows(k, k.kernel("mlrt_tile", bits_dtype(x.dtype)), y.size // cols, cols, k.input(0), k.output(0),
                 k.view(y.shape[:-1], strides[:-1]), k.view(x.shape[:-1], strides[:-1]), np.int64(x.shape[-1]))


@recorder("Pad", family="movement", dtypes=ANY, program_dtype=bits_dtype)
def pad(k, op, inputs, outputs):
    x, y = inputs[0], outputs[0]
    p = op.launch(inputs, outputs).params
    bits = bits_dtype(x.dtype)
    if y.size == 0:
        return
    if x.rank == 0:
        enqueue_1d(k, k.kernel("mlrt_copy", bits), 1, k.input(0), k.output(0), np.int64(0))
        return
    if len(inputs) > 2 and inputs[2] is not None and inputs[2].size > 0:
        value = k.input(2)  # the constant, read at run time
    else:
        value = k.constant(np.array([p["value_bits"]], np.int64).view(np.uint8)[:np.dtype(bits).itemsize])
    for d, (s, n, b) in enumerate(zip(p["src_start"], p["src_len"], p["pad_begin"])):
        if not (s >= 0 and n >= 0 and b >= 0 and s + n <= x.shape[d] and b + n <= y.shape[d]):
            raise DeviceError(f"{op.where}: pads for axis {d} do not fit input {x.shape} and output {y.shape}")
    plan = np.array(list(p["src_start"]) + list(p["src_len"]) + list(p["pad_begin"]), np.int64)
    cols = y.shape[-1]
    enqueue_rows(k, k.kernel("mlrt_pad", bits), y.size // cols, cols, k.input(0), k.output(0), value,
                 k.view(y.shape, contiguous_strides(x.shape)), k.constant(plan), np.int32(p["mode"]))


# -- Cast ----------------------------------------------------------------------------------------------

def _cast_supported(op, inputs) -> bool:
    to = op.a.to
    if isinstance(to, str):
        return to.lower() in ("float", "float16", "int32", "int64", "bool")
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(int(to))).name in _CAST_TO
    except (KeyError, ValueError, TypeError):
        return False


def _cast_like_supported(op, inputs) -> bool:
    """CastLike converts to its second input's element type (its values are not read)."""
    target = inputs[1] if len(inputs) > 1 else None
    return target is not None and target.dtype is not None and np.dtype(target.dtype).name in _CAST_TO


_CAST_FROM = ("float32", "float16", "int32", "int64", "bool", "uint8", "int8")


@recorder("Cast", family="movement", dtypes=_CAST_FROM, supports=_cast_supported)
@recorder("CastLike", family="movement", dtypes=_CAST_FROM, supports=_cast_like_supported)
def cast(k, op, inputs, outputs):
    x, y = inputs[0], outputs[0]
    if np.dtype(x.dtype) == np.dtype(y.dtype):
        k.alias(0, 0)
        return
    enqueue_1d(k, k.kernel(f"mlrt_cast_{np.dtype(y.dtype).name}"), y.size, k.input(0), k.output(0))

"""Gemm and MatMul on OpenCL (gemm.cl).

Both become one strided product Y[b] = alpha * A[b] B[b] + beta * C: Gemm's transposes and
MatMul's views (1-D operands, broadcast batch dimensions) turn into element strides and a
table of per-batch offsets.  A MatMul whose B has no batch of its own and whose A rows are
evenly spaced is one tall product (the batch folded into the rows).  Few rows go to the gemv
kernels (a column or 16 columns per work-item, split along K when that leaves too few
work-groups), the rest to the tiled kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._drivers import cl
from ._recorders import recorder

# tile and work-group sizes; gemm.cl is built with them (BUILD_OPTIONS) and defines none
_VN, _TM, _TN, _RM = 16, 64, 64, 8  # columns per work-item (one float16), tile of Y, rows per work-item
_WX, _WY = _TN // _VN, _TM // _RM
_GV, _KR, _KCC = 64, 512, 32        # gemv work-group size, depth of the A chunk of rows4 and of cols1/8
BUILD_OPTIONS = {"VN": _VN, "TM": _TM, "TN": _TN, "RM": _RM, "GV": _GV, "KR": _KR, "KCC": _KCC}

_GEMV_MAX_ROWS = 16    # up to this many rows of Y[b] the gemv kernels beat the tiled one,
_ROWS4_MAX_ROWS = 8    # up to this many when they have to read B^T
_SPLIT_MIN_K = 1024    # a split-K part covers at least this much of K


@dataclass
class _Product:
    M: int
    N: int
    K: int
    batch: int
    sam: int
    sak: int
    sbk: int
    sbn: int
    offs: np.ndarray      # int64 (batch, 2): element offsets of A[b] and B[b]
    alpha: float = 1.0
    beta: float = 0.0
    c_strides: tuple | None = None  # C's (row, column) strides over Y's shape; None: no C


def _enqueue(k, p: _Product, a, b, c=None) -> None:
    """Record the product's kernels: `a`, `b`, `c` are the builder's buffers for A, B and C."""
    y = k.output(0)
    has_c = p.c_strides is not None
    scm, scn = p.c_strides if has_c else (0, 0)
    c = c if has_c else y  # never read without C
    offs = k.constant(np.ascontiguousarray(p.offs, np.int64).reshape(-1))
    epilogue = (np.float32(p.alpha), np.float32(p.beta), np.int64(scm), np.int64(scn), np.int32(has_c))
    M, N, K = p.M, p.N, p.K
    gemv = _gemv_kernel(p) if M <= _GEMV_MAX_ROWS else None
    if gemv is not None:
        name, rv, sb, width, chunk = gemv
        groups = -(-width // _GV) * -(-M // rv) * p.batch
        splits, kc = _split(k, groups, K, chunk)
        part = k.scratch(4 * splits * p.batch * M * N) if splits > 1 else y
        k.enqueue(k.kernel(name), (-(-width // _GV) * _GV, -(-M // rv), p.batch * splits), (_GV, 1, 1),
                  a, b, c, y, np.int64(M), np.int64(N), np.int64(K), np.int64(p.sam), np.int64(p.sak), np.int64(sb),
                  offs, *epilogue, part, np.int64(p.batch), np.int32(splits), np.int64(kc))
        if splits > 1:
            k.enqueue(k.kernel("mlrt_gemm_reduce"), (N, M, p.batch), None, part, c, y, np.int64(M), np.int64(N),
                      np.int64(p.batch), np.int32(splits), *epilogue)
        return
    k.enqueue(k.kernel("mlrt_gemm_tiled"), (-(-N // _TN) * _WX, -(-M // _TM) * _WY, p.batch), (_WX, _WY, 1),
              a, b, c, y, np.int64(M), np.int64(N), np.int64(K), np.int64(p.sam), np.int64(p.sak),
              np.int64(p.sbk), np.int64(p.sbn), offs, *epilogue)


def _gemv_kernel(p: _Product):
    """(kernel, rows per work-item, B's other stride, work-items across N, K chunk) or None."""
    rows_ok, cols_ok = p.sbk == 1, p.sbn == 1
    if rows_ok and p.M == 1:
        return "mlrt_gemv_rows1", 1, p.sbn, p.N, 2 * _VN
    if rows_ok and (not cols_ok or p.N < _VN):  # B^T: each row of B is read once per 4 rows of A
        return ("mlrt_gemv_rows4", 4, p.sbn, p.N, _KR) if p.M <= _ROWS4_MAX_ROWS else None
    if cols_ok:
        rv = 1 if p.M == 1 else 8
        return f"mlrt_gemv_cols{rv}", rv, p.sbk, -(-p.N // _VN), _KCC
    return None


def _split(k, groups: int, K: int, chunk: int) -> tuple[int, int]:
    """Split-K: (parts, depth of each) so that about 4 work-groups per compute unit run."""
    try:
        units = int(k.device.cl_device.max_compute_units)
    except cl.Error:  # a driver that does not answer
        units = 8
    want = 4 * units
    if groups >= want or K < 2 * _SPLIT_MIN_K:
        return 1, max(K, 1)
    splits = min(-(-want // groups), K // _SPLIT_MIN_K)
    kc = -(-K // splits)
    kc = -(-kc // chunk) * chunk  # whole staged chunks per part
    return -(-K // kc), kc


@recorder("Gemm", family="gemm")
def gemm(k, op, inputs, outputs):
    launch = op.launch(inputs, outputs)
    prm = launch.params
    a, b = inputs[0], inputs[1]
    ta, tb = bool(prm["trans_a"]), bool(prm["trans_b"])
    M, N = outputs[0].shape
    K = a.shape[0] if ta else a.shape[1]
    c_view = launch.views.get(2)
    p = _Product(M, N, K, 1, *((1, M) if ta else (K, 1)), *((1, K) if tb else (N, 1)), np.zeros((1, 2), np.int64),
                 prm["alpha"], prm["beta"], tuple(c_view.strides) if c_view is not None else None)
    bbuf = _packed_b(k, p, b.value, lambda v: v.T if tb else v)
    _enqueue(k, p, k.input(0), bbuf if bbuf is not None else k.input(1), k.input(2) if c_view is not None else None)


def _packed_b(k, p: _Product, value, as_kn):
    """Constant B (`as_kn(value)`: it as a K x N array) copied into the layout the gemv kernels
    stream best, adjusting p's strides; None to use B as it is."""
    if value is None or p.batch != 1 or p.M > _GEMV_MAX_ROWS or p.K < 2 * _VN:
        return None
    if p.M == 1 and p.sbk != 1:  # one row: B^T rows, each streamed by a work-item (mlrt_gemv_rows1)
        p.sbk, p.sbn = 1, p.K
        return k.shared_constant("b_nk", lambda: np.ascontiguousarray(as_kn(value).T))
    if p.M > 1 and p.sbk == 1 and p.sbn != 1 and p.N >= _VN:  # a few rows: 16 columns share each row of A
        p.sbk, p.sbn = p.N, 1
        return k.shared_constant("b_kn", lambda: np.ascontiguousarray(as_kn(value)))
    return None


@recorder("MatMul", family="gemm")
def matmul(k, op, inputs, outputs):
    launch = op.launch(inputs, outputs)
    va, vb = launch.views[0], launch.views[1]
    batch_shape = tuple(va.shape[:-2])
    M, K = va.shape[-2:]
    N = vb.shape[-1]
    sam, sak = va.strides[-2:]
    sbk, sbn = vb.strides[-2:]
    a_batch, b_batch = tuple(va.strides[:-2]), tuple(vb.strides[:-2])
    if all(s == 0 or n == 1 for n, s in zip(batch_shape, b_batch)):
        row = _even_stride(batch_shape + (M,), a_batch + (sam,))
        if row is not None:  # every row of every batch entry evenly spaced: one tall product
            M, sam = M * int(np.prod(batch_shape, dtype=np.int64)), row
            batch_shape, a_batch, b_batch = (), (), ()
    offs = np.stack([_offsets(batch_shape, a_batch), _offsets(batch_shape, b_batch)], axis=1)
    p = _Product(int(M), int(N), int(K), len(offs), int(sam), int(sak), int(sbk), int(sbn), offs)
    bbuf = _packed_b(k, p, inputs[1].value, lambda v: v.reshape(K, N))
    _enqueue(k, p, k.input(0), bbuf if bbuf is not None else k.input(1))


def _even_stride(shape, strides) -> int | None:
    """The one stride that walks all of `shape` in order (dims of size 1 aside), or None."""
    dims = [(int(n), int(s)) for n, s in zip(shape, strides) if n != 1]
    if not dims:
        return int(strides[-1])
    for (_, s0), (n1, s1) in zip(dims, dims[1:]):
        if s0 != s1 * n1:
            return None
    return dims[-1][1]


def _offsets(shape, strides) -> np.ndarray:
    """Element offset of each batch entry (row-major order over `shape`)."""
    off = np.zeros(1, np.int64)
    for n, s in zip(shape, strides):
        off = (off[:, None] + np.arange(n, dtype=np.int64) * int(s)).reshape(-1)
    return off

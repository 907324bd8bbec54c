"""Reductions on OpenCL (reduce.cl): ReduceSum, ReduceMean, ReduceMax, ReduceMin,
ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare.

The op's `launch()` resolves the axes (attribute or input, keepdims,
noop_with_empty_axes) into one view whose first `n_kept` dims are kept and whose
other dims are reduced; the kernels get it split into those two views.  When
neighbouring outputs are neighbours in x (x's innermost dim is kept), a work-item
computes VEC of them with vector loads; else a work-item reduces one output (a
contiguous line in vectors).  On GPUs, long reductions over fewer outputs
than fill the device take a work-group per output instead, split into chunks
(combined by a second kernel) when there are very few outputs.
"""

from __future__ import annotations

import numpy as np

from ._recorders import recorder
from .elementwise import VEC, check_rank, enqueue_1d, rows

GROUPS = None        # long reductions over few outputs take a work-group each: None = on GPUs only
                     # (on PoCL's CPU device one vectorised work-item per output is faster still)
GROUP = 64           # work-group size of the _group kernels (RWG in reduce.cl)
SERIAL_MAX = 256     # reductions this short run one work-item per output ...
MANY_OUTPUTS = 4096  # ... and so do reductions over this many outputs
TARGET_GROUPS = 64   # split long reductions into chunks until there are this many work-groups
CHUNK_MIN = GROUP * 64  # ... but no chunk shorter than this
BUILD_OPTIONS = {"RWG": GROUP, "VEC": VEC}  # reduce.cl's defines (see _programs.family_options)

_KERNELS = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min",
            "ReduceProd": "prod", "ReduceL1": "l1", "ReduceL2": "l2", "ReduceLogSum": "log_sum",
            "ReduceLogSumExp": "log_sum_exp", "ReduceSumSquare": "sum_square"}


def _prod(values) -> int:
    return int(np.prod(values, dtype=np.int64)) if len(values) else 1


@recorder(*_KERNELS, family="reduce")
def reduce(k, op, inputs, outputs):
    launch = op.launch(inputs, outputs)
    n_kept, view = launch.params["n_kept"], launch.views[0]
    kshape, kstrides = view.shape[:n_kept], view.strides[:n_kept]
    rshape, rstrides = view.shape[n_kept:], view.strides[n_kept:]
    n_out, count = outputs[0].size, _prod(rshape)
    if n_out == 0:
        return
    name = f"mlrt_reduce_{_KERNELS[op.op_type]}"
    check_rank(kshape, rshape)
    x, y = k.input(0), k.output(0)
    vk, vr = k.view(kshape, kstrides), k.view(rshape, rstrides)
    groups = k.device.is_gpu if GROUPS is None else GROUPS
    columns = kstrides[-1:] == (1,) and rstrides[-1] != 1  # neighbouring outputs are neighbours in x
    if count <= SERIAL_MAX or not groups or n_out >= (GROUP if columns else MANY_OUTPUTS):
        # serial: a work-item per output, or per VEC outputs along a contiguous last kept dim
        n_inner = kshape[-1] if columns else 1
        shape = (n_out // n_inner, n_inner)
        rows(k, k.kernel(name), shape, x, vk, vr, y, np.int64(shape[1]), np.int64(shape[0]), np.int64(count))
        return
    chunks = 1
    if n_out < TARGET_GROUPS:
        chunks = max(1, min(-(-TARGET_GROUPS // n_out), count // CHUNK_MIN))
    chunk_len = -(-count // chunks)
    chunks = -(-count // chunk_len)
    part = k.scratch(16 * n_out * chunks) if chunks > 1 else y  # (a, k) partials of double or float
    k.enqueue(k.kernel(name + "_group"), (n_out * chunks * GROUP,), (GROUP,), x, vk, vr, y, part,
              np.int64(count), np.int64(chunks), np.int64(chunk_len))
    if chunks > 1:
        enqueue_1d(k, k.kernel(name + "_finish"), n_out, part, y, np.int64(n_out), np.int64(count), np.int64(chunks))

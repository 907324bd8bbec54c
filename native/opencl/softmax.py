"""Softmax and LogSoftmax on OpenCL (softmax.cl).

The op's own pack() gives the [outer, n, inner] split (2-D coercion before opset 13,
one axis from 13); lines of at least GROUP_FROM elements get a work-group each,
shorter ones a work-item each."""

import numpy as np

from ._recorders import recorder, round_up

SM_WG = 128        # softmax.cl's work-group size
LINE_WG = 64       # work-group size of the one-work-item-per-line kernel
GROUP_FROM = 256   # lines at least this long are reduced by a work-group
BUILD_OPTIONS = {"SM_WG": SM_WG}  # softmax.cl's defines (see _programs.family_options)



@recorder("Softmax", "LogSoftmax", family="softmax")
def softmax(k, op, inputs, outputs):
    p = op.pack(inputs, outputs)
    outer, n, inner = p["outer"], p["n"], p["inner"]
    lines = outer * inner
    log_out = np.int32(op.op_type == "LogSoftmax")
    if lines == 0 or n == 0:
        return
    if n >= GROUP_FROM:
        k.enqueue(k.kernel("mlrt_softmax_group"), (lines * SM_WG,), (SM_WG,), k.input(0), k.output(0),
                  np.int64(n), np.int64(inner), log_out)
    else:
        k.enqueue(k.kernel("mlrt_softmax_lines"), (round_up(lines, LINE_WG),), (LINE_WG,), k.input(0), k.output(0),
                  np.int64(lines), np.int64(n), np.int64(inner), log_out)

"""Pooling on OpenCL (pool.cl): MaxPool and AveragePool over 1 to 3 spatial dims,
GlobalMaxPool, GlobalAveragePool, LRN.

Window geometry (output sizes, resolved pads) comes from the op's own pack(); MaxPool's
Indices output and windows of more than 3 spatial dims are left to the CPU."""

import numpy as np

from ..._errors import DeviceError
from ._recorders import local_2d, recorder, round_up

MAX_SPATIAL = 3    # pool.cl's window kernel
POOL_WG = 128      # pool.cl's work-group size for plane reductions
POOL_FIELDS = 7    # ints per dim of the window table: in, out, kernel, stride, dilation, pad begin, pad end
ITEM_WG = 64       # work-group size of the one-work-item-per-output kernels
GROUP_FROM = 1024  # planes at least this large are reduced by a work-group
POOL_MAX, POOL_AVERAGE = 0, 1  # mlrt_pool_window's kind
# pool.cl's defines (see _programs.family_options)
BUILD_OPTIONS = {"POOL_FIELDS": POOL_FIELDS, "POOL_WG": POOL_WG, "POOL_MAX": POOL_MAX, "POOL_AVERAGE": POOL_AVERAGE}




def _window_supported(op, inputs) -> bool:
    if op.op_type == "MaxPool" and len(op.node.output) > 1 and op.node.output[1]:
        return False  # Indices
    return len(op.a.kernel_shape) <= MAX_SPATIAL


@recorder("MaxPool", "AveragePool", family="pool", supports=_window_supported)
def window_pool(k, op, inputs, outputs):
    p = op.pack(inputs, outputs)
    nd = p["n_spatial"]
    x_shape, y_shape = inputs[0].shape, outputs[0].shape
    lead = MAX_SPATIAL - nd
    table = np.zeros((MAX_SPATIAL, POOL_FIELDS), np.int64)
    table[:lead] = [1, 1, 1, 1, 1, 0, 0]
    for d in range(nd):
        table[lead + d] = [x_shape[2 + d], y_shape[2 + d], p["kernel"][d], p["strides"][d], p["dilations"][d],
                           p["pads_begin"][d], p["pads_end"][d]]
    kind = POOL_MAX if op.op_type == "MaxPool" else POOL_AVERAGE
    include_pad = int(p.get("count_include_pad", 0))
    od, oh, ow = table[:, 1]
    planes = int(y_shape[0]) * int(y_shape[1])
    # the kernel works inside an image in int: positions, pads and window reach must fit
    reach = [(o - 1) * s + (kk - 1) * dl + 1 for _, o, kk, s, dl, _, _ in table]
    if max(int(np.prod(table[:, 0])), *reach, *(table[:, 0] + table[:, 5] + table[:, 6])) >= 2 ** 31:
        raise DeviceError(f"{op.where}: images of {x_shape[2:]} are too large for the OpenCL pooling kernel")
    # one work-item visits every tap of its window: a huge window would hold the device for hours
    if float(np.prod(table[:, 2].astype(np.float64))) > 2.0 ** 24:
        raise DeviceError(f"{op.where}: windows of {list(op.a.kernel_shape)} taps are too large for the OpenCL "
                          "pooling kernel")
    local = local_2d(ow, ITEM_WG)
    geometry = k.constant(table.reshape(-1).astype(np.int32))
    k.enqueue(k.kernel("mlrt_pool_window"), (round_up(ow, local[0]), round_up(oh, local[1]), planes * od), local,
              k.input(0), k.output(0), geometry, np.int32(kind), np.int32(include_pad))


@recorder("GlobalMaxPool", "GlobalAveragePool", family="pool")
def global_pool(k, op, inputs, outputs):
    shape = inputs[0].shape
    planes = int(shape[0]) * int(shape[1])
    size = int(np.prod(shape[2:], dtype=np.int64))
    is_max = np.int32(op.op_type == "GlobalMaxPool")
    if planes == 0 or size == 0:
        return  # (the semantics refuse an empty plane when there are planes)
    if size >= GROUP_FROM:
        k.enqueue(k.kernel("mlrt_global_pool_group"), (planes * POOL_WG,), (POOL_WG,), k.input(0), k.output(0),
                  np.int64(size), is_max)
    else:
        k.enqueue(k.kernel("mlrt_global_pool_planes"), (round_up(planes, ITEM_WG),), (ITEM_WG,), k.input(0),
                  k.output(0), np.int64(planes), np.int64(size), is_max)


@recorder("LRN", family="pool")
def lrn(k, op, inputs, outputs):
    p = op.pack(inputs, outputs)
    shape = inputs[0].shape
    positions = int(np.prod(shape[2:], dtype=np.int64))
    size = p["size"]
    local = local_2d(positions, ITEM_WG)
    k.enqueue(k.kernel("mlrt_lrn"), (round_up(positions, local[0]), round_up(shape[1], local[1]), shape[0]),
              local, k.input(0), k.output(0), np.int64(shape[1]), np.int64(positions), np.int64((size - 1) // 2),
              np.int64(size // 2), np.float32(p["alpha"] / size), np.float32(p["bias"]), np.float32(p["beta"]))

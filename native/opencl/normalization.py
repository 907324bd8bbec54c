"""Normalizations on OpenCL (normalization.cl): BatchNormalization in inference form,
InstanceNormalization, LayerNormalization (with its optional Mean / InvStdDev outputs),
float32 and float16 (computed in float)."""

import numpy as np

from ..._errors import DeviceError, MlrtError
from ._recorders import local_2d, recorder, round_up

NORM_WG = 128  # normalization.cl's work-group size
ITEM_WG = 64   # work-group size of the elementwise BatchNormalization kernel
BUILD_OPTIONS = {"NORM_WG": NORM_WG}  # normalization.cl's defines (see _programs.family_options)
_DTYPES = ("float32", "float16")




def _batchnorm_inference(op, inputs) -> bool:
    """Training-mode statistics (and the outputs after Y that come with them) stay on the CPU."""
    try:
        return not op.training()
    except MlrtError:  # outputs the mode does not have: the CPU provider reports it
        return False


@recorder("BatchNormalization", family="normalization", dtypes=_DTYPES, supports=_batchnorm_inference)
def batchnorm(k, op, inputs, outputs):
    x = inputs[0]
    p = op.pack(inputs, outputs)
    channels = int(x.shape[1])
    positions = int(np.prod(x.shape[2:], dtype=np.int64))
    per_element = bool(p["per_element"])
    n = channels * positions if per_element else channels
    params = inputs[1:5]
    if all(t.value is not None for t in params):  # constants: fold once, in double, on the host
        scale, bias, mean, var = (np.asarray(t.value, np.float64).reshape(-1) for t in params)
        a = scale / np.sqrt(var + p["epsilon"])
        b = bias - mean * a
        a_buf, b_buf = k.constant(a.astype(np.float32)), k.constant(b.astype(np.float32))
    elif all(np.dtype(t.dtype) == np.dtype(x.dtype) for t in params):
        a_buf, b_buf = k.scratch(4 * n), k.scratch(4 * n)
        k.enqueue(k.kernel("mlrt_batchnorm_fold"), (round_up(n, ITEM_WG),), (ITEM_WG,),
                  *(k.input(i) for i in range(1, 5)), a_buf, b_buf, np.int64(n), np.float32(p["epsilon"]))
    else:
        raise DeviceError(f"{op.where}: run-time scale/B/mean/var of another element type than X are not supported "
                          "on OpenCL")
    quads = (positions + 3) // 4  # (4 positions per work-item)
    local = local_2d(quads, ITEM_WG)
    k.enqueue(k.kernel("mlrt_batchnorm"), (round_up(quads, local[0]), round_up(channels, local[1]), x.shape[0]),
              local, k.input(0), k.output(0), a_buf, b_buf, np.int64(channels), np.int64(positions),
              np.int32(per_element))


def _wanted(op, j: int) -> bool:
    return len(op.node.output) > j and bool(op.node.output[j])


def _layernorm_supported(op, inputs) -> bool:
    """Mean / InvStdDev outputs are written as float32: stash_type 1 only when they are asked for."""
    return not (_wanted(op, 1) or _wanted(op, 2)) or op.a.stash_type == 1


@recorder("InstanceNormalization", family="normalization", dtypes=_DTYPES)
@recorder("LayerNormalization", family="normalization", dtypes=_DTYPES, supports=_layernorm_supported)
def normalize(k, op, inputs, outputs):
    launch = op.launch(inputs, outputs)
    n_kept = int(launch.params["n_kept"])
    vx = launch.views[0]
    groups = int(np.prod(vx.shape[:n_kept], dtype=np.int64))
    count = int(np.prod(vx.shape[n_kept:], dtype=np.int64))

    def split(i):
        v = launch.views.get(i)
        if v is None:
            return k.input(0), k.view((), ()), k.view((), ()), 0
        return (k.input(i), k.view(v.shape[:n_kept], v.strides[:n_kept]), k.view(v.shape[n_kept:], v.strides[n_kept:]),
                1)

    xk, xr = k.view(vx.shape[:n_kept], vx.strides[:n_kept]), k.view(vx.shape[n_kept:], vx.strides[n_kept:])
    s_buf, sk, sr, has_scale = split(1)
    b_buf, bk, br, has_bias = split(2)
    stats = 0
    mean_buf = inv_buf = k.output(0)  # (unused placeholders when the outputs are not asked for)
    if _wanted(op, 1):
        stats, mean_buf = stats | 1, k.output(1)
    if _wanted(op, 2):
        stats, inv_buf = stats | 2, k.output(2)
    k.enqueue(k.kernel("mlrt_normalize"), (groups * NORM_WG,), (NORM_WG,), k.input(0), k.output(0), s_buf, b_buf,
              xk, xr, sk, sr, bk, br, np.int64(count), np.float32(launch.params["epsilon"]), np.int32(has_scale),
              np.int32(has_bias), mean_buf, inv_buf, np.int32(stats))

"""Conv's filter-vector path (kernels/conv_fvec.c, AVX-512): where mlrt_conv_fvec_fits takes a
conv, its result against the float64 reference, against the path taken without it
(MLRT_CONV_FVEC=0 while the session plans: the results must differ, so the path ran),
and FusedConv's bias, Z and activations finished on it; the C entry points refuse bad
sizes."""

import numpy as np
import pytest

from oracle import run_mlrt
from test_conv import _const_w_model, _exact_conv, _options, _random_conv

rng = np.random.default_rng(7)

# (X shape, W shape, attributes): strides 1 to 3 (the tiles' column strides 1 and 2 are
# constants, others a variable), dilation, uneven pads, filters not a multiple of the 32
# of a block, channels not a multiple of a block's 16 (8, 10, 12, 40), rows split into
# tiles of unequal width, outputs 7 or fewer wide (two rows a tile; an odd number of
# rows leaves one), batch 2, a 7 x 7 and a 1 x 3 kernel
FVEC = [
    ((1, 16, 40, 40), (32, 16, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((2, 8, 33, 47), (40, 8, 3, 3), {"pads": [0, 1, 1, 0], "strides": [2, 2]}),
    ((1, 12, 31, 36), (48, 12, 3, 3), {"pads": [1, 1, 1, 1], "strides": [3, 3]}),
    ((1, 32, 24, 24), (64, 32, 3, 3), {"pads": [2, 2, 2, 2], "dilations": [2, 2]}),
    ((1, 64, 10, 10), (80, 64, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((1, 8, 20, 24), (17, 8, 7, 7), {"pads": [3, 3, 3, 3], "strides": [1, 2]}),
    ((1, 10, 12, 12), (100, 10, 1, 3), {"pads": [0, 1, 0, 1]}),
    ((1, 40, 7, 7), (64, 40, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((2, 20, 9, 10), (33, 20, 3, 3), {"pads": [1, 0, 1, 1], "strides": [2, 2]}),
    ((1, 48, 14, 14), (32, 48, 3, 3), {"pads": [1, 1, 1, 1]}),
    # planes large enough that their padded rows are cut across the threads, and that
    # outweigh the weights (the output rows cut in a part per thread, 47 rows: the last
    # part short): two images, two blocks of channels (the second of 4) and of filters
    # (the second of 8), uneven pads
    ((2, 20, 94, 90), (40, 20, 3, 3), {"pads": [1, 2, 0, 1], "strides": [2, 2]}),
    # one row of outputs, up to 256 wide (1-D convs and [N, C, 1, L]): the encoder of a
    # voice-activity model (3 and 2 outputs), strides over 4, a Conv-made STFT over one
    # channel (258 filters, 256 taps, stride 128), dilation, 256 outputs in 19 tiles
    ((1, 129, 3), (128, 129, 3), {"pads": [1, 1]}),
    ((1, 128, 3), (64, 128, 3), {"pads": [1, 1], "strides": [2]}),
    ((1, 64, 2), (128, 64, 3), {"pads": [1, 1]}),
    ((2, 1, 576), (258, 1, 256), {"strides": [128]}),
    ((1, 2, 1000), (40, 2, 64), {"strides": [16], "pads": [5, 0]}),
    ((1, 12, 100), (33, 12, 5), {"strides": [5], "dilations": [2], "pads": [3, 3]}),
    ((1, 24, 258), (48, 24, 3), {}),
    ((1, 16, 1, 50), (32, 16, 1, 4), {"pads": [0, 1, 0, 2], "strides": [1, 3]}),
]


def _params(xs, ws, attrs):
    from mlrt.native import _lib
    from mlrt.native.ops._conv import pad6
    n = len(xs) - 2
    pads = attrs.get("pads", [0] * 2 * n)
    params = dict(group=attrs.get("group", 1), n_spatial=n, kernel=pad6(ws[2:], 1),
                  strides=pad6(attrs.get("strides", [1] * n), 1), dilations=pad6(attrs.get("dilations", [1] * n), 1),
                  pads_begin=pad6(pads[:n]), pads_end=pad6(pads[n:]))
    return _lib.pack_params("mlrt_conv_params", params)[1]


def _fits(xs, ws, attrs) -> bool:
    """mlrt_conv_fvec_fits as the plan asks it: a 1-D conv as height 1, width its length."""
    from mlrt.native import _lib
    height, width = (xs[2], xs[3]) if len(xs) == 4 else (1, xs[2])
    return bool(_lib.lib().mlrt_conv_fvec_fits(_params(xs, ws, attrs), xs[1], ws[0], height, width))


def _avx512() -> bool:
    """Whether the strip kernels here are AVX-512's (the CPU has it and neither MLRT_ISA nor
    MLRT_SGEMM_KERNEL narrows the choice): then the path must take the convs of FVEC."""
    from mlrt.native import _lib
    lib = _lib.lib()
    return _lib.ffi().string(lib.mlrt_cpu_isa_name()).decode() == "avx512"


@pytest.mark.parametrize("xs,ws,attrs", FVEC)
@pytest.mark.parametrize("threads", [1, 2])
def test_conv_fvec(xs, ws, attrs, threads, monkeypatch):
    if not _avx512():
        pytest.skip("the filter-vector path needs AVX-512 (this CPU's strip kernels are narrower)")
    assert _fits(xs, ws, attrs)
    x, model, exact, got, scale = _random_conv(xs, ws, attrs, threads, rng)
    np.testing.assert_allclose(got, exact, rtol=1e-4, atol=2e-6 * scale, err_msg="Conv, filter vectors")
    monkeypatch.setenv("MLRT_CONV_FVEC", "0")  # read as the session plans
    other = run_mlrt(model, [x], sess_options=_options(threads))[0]
    # (without them a 3 x 3 conv of 16 x 16 outputs or fewer takes Winograd, whose transforms
    # round more: its tolerance, as test_conv_winograd's)
    np.testing.assert_allclose(other, exact, rtol=1e-4, atol=2e-5 * scale, err_msg="Conv, without filter vectors")
    if xs[1] > 1:  # (one channel: both paths add the taps in the same order; see test_conv_fvec_one_channel)
        assert not np.array_equal(got, other), "the filter-vector path did not run"


ACTS = [("Relu", None, lambda v: np.maximum(v, 0)),
        ("Clip", [0.0, 6.0], lambda v: np.clip(v, 0, 6)),
        ("Swish", None, lambda v: v / (1 + np.exp(-v))),
        ("HardSwish", None, lambda v: v * np.clip(v / 6 + 0.5, 0, 1))]


@pytest.mark.parametrize("name,params,fn", ACTS)
@pytest.mark.parametrize("xs,ws,attrs", [FVEC[1], FVEC[4]])
@pytest.mark.parametrize("with_z", [False, True])
def test_fusedconv_fvec(name, params, fn, xs, ws, attrs, with_z):
    """Bias, Z and the activation finished on the path's rows."""
    if not _avx512():
        pytest.skip("the filter-vector path needs AVX-512 (this CPU's strip kernels are narrower)")
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    conv_out = _exact_conv(x, w, b, attrs)
    z = rng.standard_normal(conv_out.shape).astype(np.float32) if with_z else None
    expected = fn(conv_out + (z if with_z else 0))
    fattrs = {**attrs, "activation": name, **({"activation_params": params} if params else {})}
    model = _const_w_model("FusedConv", x, w, b, z, fattrs, domain="com.microsoft")
    got = run_mlrt(model, [x] + ([z] if with_z else []))[0]
    scale = float(np.abs(conv_out + (z if with_z else 0)).max())
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=3e-6 * scale, err_msg=f"FusedConv {name}, filter vectors")


def test_conv_fvec_fits_where_it_pays():
    if not _avx512():
        pytest.skip("the filter-vector path needs AVX-512 (this CPU's strip kernels are narrower)")
    s2 = {"pads": [1, 1, 1, 1], "strides": [2, 2]}
    assert _fits((1, 32, 80, 80), (64, 32, 3, 3), s2)
    assert not _fits((1, 3, 224, 224), (32, 3, 3, 3), s2)         # 3 channels: a stem conv
    assert not _fits((1, 32, 80, 80), (8, 32, 3, 3), s2)          # 8 filters
    assert not _fits((1, 16, 64, 64), (16, 16, 3, 3), s2)         # 16 filters: half a block (the direct path)
    assert _fits((1, 16, 38, 16), (32, 16, 3, 3), {"pads": [1, 1, 1, 1]})  # small planes, few channels
    assert not _fits((1, 32, 80, 80), (64, 32, 1, 1), {})         # 1 x 1: the packed strips
    assert not _fits((1, 512, 7, 7), (2048, 512, 1, 1), {})       # (7 x 7 outputs included)
    assert _fits((1, 256, 28, 28), (256, 256, 3, 3), s2)          # 14 wide, 288 KB of weights a block
    assert _fits((1, 512, 7, 7), (512, 512, 3, 3), {"pads": [1, 1, 1, 1]})  # 7 wide: two rows a tile
    assert _fits((1, 64, 56, 56), (64, 64, 7, 7), {"pads": [3, 3, 3, 3]})
    assert not _fits((1, 32, 80, 80), (64, 16, 3, 3), {**s2, "group": 2})
    # one row of outputs: up to 256 wide (longer ones on the direct and packed paths), any
    # stride, one channel where its window is long
    assert _fits((1, 128, 256), (128, 128, 3), {"pads": [1, 1]})
    assert not _fits((1, 128, 257), (128, 128, 3), {"pads": [1, 1]})
    assert not _fits((1, 128, 1, 4096), (128, 128, 1, 3), {"pads": [0, 1, 0, 1]})
    assert _fits((1, 128, 1, 256), (128, 128, 1, 3), {"pads": [0, 1, 0, 1]})
    assert _fits((1, 16, 800), (32, 16, 8), {"strides": [8]})
    assert not _fits((1, 16, 8, 800), (32, 16, 1, 8), {"strides": [1, 8]})  # (rows: strides up to 4)
    assert _fits((1, 1, 576), (258, 1, 256), {"strides": [128]})
    assert not _fits((1, 1, 512), (16, 1, 16), {"strides": [8]})            # one channel, 16 taps
    assert not _fits((1, 1, 64, 64), (32, 1, 8, 8), {})                     # (rows: 8 channels or more)
    # outputs up to 16 x 16 leave Winograd to the filter vectors, a 28 x 28 keeps it
    from mlrt.native import _lib
    lib = _lib.lib()
    p1 = {"pads": [1, 1, 1, 1]}
    for hw, winograd in ((10, False), (14, False), (16, False), (17, True), (28, True), (40, True)):
        got = lib.mlrt_conv_winograd_fits(_params((1, 128, hw, hw), (128, 128, 3, 3), p1), 128, 128, hw, hw)
        assert bool(got) == winograd, hw


def test_conv_fvec_refuses_bad_sizes():
    """The C entry points answer nonsense with 0 or an error status, never a crash."""
    from mlrt.native import _lib
    lib, ffi = _lib.lib(), _lib.ffi()
    assert lib.mlrt_conv_fvec_fits(ffi.NULL, 64, 64, 56, 56) == 0
    assert lib.mlrt_conv_fvec_size(-1, 9) == 0
    assert lib.mlrt_conv_fvec_size(33, 9) == 64 * 9
    size = ffi.new("int64_t *")
    assert lib.mlrt_conv_fvec_pack(8, 4, 0, ffi.NULL, 0, size, ffi.NULL) != 0  # no taps
    assert lib.mlrt_conv_fvec_pack(8, -1, 9, ffi.NULL, 0, size, ffi.NULL) != 0
    assert lib.mlrt_conv_fvec_pack(8, 4, 9, ffi.NULL, 0, size, ffi.NULL) == 0 and size[0] == 32 * 36


def _run_kernel(x, w, packed, kind, strides=(1, 1), y=None):
    """FusedConv's C kernel called directly with `packed` as its packed weights of `kind`
    (2-D, no pads; 1-D where x has rank 3), its result in y: (status, last error)."""
    from mlrt.native import _lib
    from mlrt.native.ops._conv import pad6
    ffi, lib = _lib.ffi(), _lib.lib()
    n = x.ndim - 2
    if y is None:
        y = np.zeros((1, w.shape[0], x.shape[2] - 2, x.shape[3] - 2), np.float32)
    arrays = [x, w, None, None, packed]
    ins = ffi.new("mlrt_tensor[5]")
    for i, a in enumerate(arrays):
        if a is not None:
            _lib.fill_tensor(ins[i], a.dtype, a.shape, data=_lib.array_pointer(a))
    out = ffi.new("mlrt_tensor[1]")
    _lib.fill_tensor(out[0], y.dtype, y.shape, data=_lib.array_pointer(y))
    keep, params, size = _lib.pack_params("mlrt_conv_params", dict(
        group=1, n_spatial=n, kernel=pad6(list(w.shape[2:]), 1), strides=pad6(list(strides[:n]), 1),
        dilations=pad6([1] * n, 1), packed_weights=4, winograd=kind))
    kernel = lib.mlrt_kernel_find(b"com.microsoft", b"FusedConv", 1, 1)
    status = lib.mlrt_kernel_run(kernel, ffi.NULL, ins, 5, out, 1, params, size)
    return status, ffi.string(lib.mlrt_last_error()).decode() if status else ""


def test_conv_fvec_kernel_refuses_mismatched_weights():
    """Packed weights of the wrong size, or of an unknown kind: an error naming them, no crash."""
    if not _avx512():
        pytest.skip("the filter-vector path needs AVX-512 (this CPU's strip kernels are narrower)")
    x = rng.standard_normal((1, 16, 12, 12)).astype(np.float32)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    status, error = _run_kernel(x, w, np.zeros(100, np.float32), 2)
    assert status != 0 and "filter vectors of 100 floats" in error
    status, error = _run_kernel(x, w, np.zeros(100, np.float32), 3)
    assert status != 0 and "unknown packed weights kind 3" in error
    from mlrt.native import _lib
    ffi, lib = _lib.ffi(), _lib.lib()
    size = ffi.new("int64_t *")
    lib.mlrt_conv_fvec_pack(32, 16, 9, ffi.NULL, 0, size, ffi.NULL)
    packed = np.empty(size[0], np.float32)
    assert lib.mlrt_conv_fvec_pack(32, 16, 9, ffi.cast("float *", w.ctypes.data), packed.size, size,
                                   ffi.cast("float *", packed.ctypes.data)) == 0
    status, error = _run_kernel(x, w, packed, 2)
    assert status == 0, error


def test_conv_fvec_one_channel():
    """A Conv-made STFT (one channel, 256 taps, stride 128) on its filter vectors, the kernel
    called directly: within float32 rounding of the exact result (in a model the plan
    takes this path, test_conv_fvec; its sums there equal the other paths')."""
    if not _avx512():
        pytest.skip("the filter-vector path needs AVX-512 (this CPU's strip kernels are narrower)")
    from mlrt.native import _lib
    ffi, lib = _lib.ffi(), _lib.lib()
    x = rng.standard_normal((1, 1, 576)).astype(np.float32)
    w = rng.standard_normal((258, 1, 256)).astype(np.float32)
    size = ffi.new("int64_t *")
    lib.mlrt_conv_fvec_pack(258, 1, 256, ffi.NULL, 0, size, ffi.NULL)
    packed = np.empty(size[0], np.float32)
    assert lib.mlrt_conv_fvec_pack(258, 1, 256, ffi.cast("float *", w.ctypes.data), packed.size, size,
                                   ffi.cast("float *", packed.ctypes.data)) == 0
    y = np.full((1, 258, 3), np.nan, np.float32)
    status, error = _run_kernel(x, w, packed, 2, strides=(128,), y=y)
    assert status == 0, error
    exact = _exact_conv(x, w, None, {"strides": [128]})
    np.testing.assert_allclose(y, exact, rtol=1e-4, atol=2e-6 * float(np.abs(exact).max()))


def test_conv_1d_length_changes():
    """One session, a 1-D conv over inputs of changing length (a symbolic dimension): rows of
    256 outputs or fewer on the filter vectors, longer ones on the packed strips, the
    constant W packed again for each (the plan keeps one packing per kind), every result
    within float32 rounding of the exact one."""
    from onnx import TensorProto, helper, numpy_helper

    import mlrt.lowlevel as ml
    w = rng.standard_normal((32, 16, 3)).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1])
    graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16, "L"])],
                              [helper.make_empty_tensor_value_info("y")], [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    sess = ml.InferenceSession(model.SerializeToString())
    for length in (50, 1000, 50, 257, 256, 7, 1):
        x = rng.standard_normal((2, 16, length)).astype(np.float32)
        exact = _exact_conv(x, w, None, {"pads": [1, 1]})
        got = sess.run(None, {"x": x})[0]
        np.testing.assert_allclose(got, exact, rtol=1e-4, atol=2e-6 * float(np.abs(exact).max()), err_msg=str(length))

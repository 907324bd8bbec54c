"""DFT, STFT, the window generators and MelWeightMatrix against onnx.reference."""

import numpy as np
import pytest
from onnx import TensorProto

import mlrt
from oracle import check_node, make_model, run_mlrt

rng = np.random.default_rng(0)


def signal(shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def dft20(x, length=None, axis=None, rtol=1e-5, atol=None, **attrs):
    n = x.shape[axis if axis is not None else -2]
    atol = atol if atol is not None else (2e-6 if x.dtype == np.float64 else 2e-5) * np.sqrt(max(n, length or 1))
    inputs = [x, None if length is None else np.array(length, np.int64), None if axis is None else np.array(axis, np.int64)]
    while inputs[-1] is None:
        inputs.pop()
    return check_node("DFT", inputs, attrs, opset=20, rtol=rtol, atol=atol)[0]


# -- DFT ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 4, 8, 9, 13, 64, 100, 127, 128, 1000])
def test_dft_lengths_real_and_complex(n):
    dft20(signal((2, n, 1), np.float64))
    dft20(signal((2, n, 2), np.float64), inverse=1)
    dft20(signal((1, n, 3, 2)), axis=1)


@pytest.mark.parametrize("onesided,inverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("axis", [0, 1, -2, -3])
def test_dft_flags_and_axes(onesided, inverse, axis):
    x = signal((4, 6, 5, 1 if (onesided and not inverse) else 2), np.float64)
    dft20(x, axis=axis, onesided=onesided, inverse=inverse)


@pytest.mark.parametrize("length", [1, 5, 8, 11, 17, 70])
def test_dft_length_pads_and_cuts(length):
    x = signal((3, 9, 2), np.float64)
    dft20(x, length=length)
    dft20(x, length=length, inverse=1)
    dft20(signal((3, 9, 1), np.float64), length=length, onesided=1)
    dft20(x, length=length, inverse=1, onesided=1)  # IRFFT: only the first length // 2 + 1 bins count


def test_dft_opset17_axis_attribute_and_defaults():
    x = signal((2, 10, 6, 1))
    check_node("DFT", [x], {"axis": 2}, opset=17, atol=1e-4)
    check_node("DFT", [x], {}, opset=17, atol=1e-4)  # default axis 1
    check_node("DFT", [x, np.array(16, np.int64)], {"axis": 1, "onesided": 1}, opset=17, atol=1e-4)
    y = check_node("DFT", [signal((2, 6, 4, 2))], {"axis": 1, "inverse": 1, "onesided": 1}, opset=19, atol=1e-4)[0]
    assert y.shape == (2, 10, 4, 1)


def test_dft_roundtrip_and_known_values():
    x = signal((5, 1000, 2), np.float64)
    m = make_model("DFT", [x], {}, opset=20)
    spec = run_mlrt(m, [x])[0]
    back = run_mlrt(make_model("DFT", [spec], {"inverse": 1}, opset=20), [spec])[0]
    np.testing.assert_allclose(back, x, atol=1e-12)
    ref = np.fft.fft(x[..., 0] + 1j * x[..., 1], axis=1)
    np.testing.assert_allclose(spec[..., 0] + 1j * spec[..., 1], ref, atol=1e-9)
    impulse = np.zeros((1, 7, 1), np.float32)
    impulse[0, 0, 0] = 1
    out = run_mlrt(make_model("DFT", [impulse], {}, opset=20), [impulse])[0]
    np.testing.assert_array_equal(out[..., 0], np.ones((1, 7), np.float32))


def test_dft_types_and_edges():
    dft20(signal((2, 16, 1)).astype(np.float16), rtol=2e-2, atol=5e-2)
    dft20(signal((0, 16, 1)))                    # no lines
    dft20(signal((3, 13, 2)), length=None)
    x = np.array([[[np.inf], [0.0], [1.0]]], np.float64)
    out = run_mlrt(make_model("DFT", [x], {}, opset=20), [x])[0]
    assert not np.isfinite(out[0, :, 0]).any()  # inf spreads like in any FFT
    nan = np.full((1, 4, 1), np.nan, np.float32)
    assert np.isnan(run_mlrt(make_model("DFT", [nan], {}, opset=20), [nan])[0][..., 0]).all()


def test_dft_bad_inputs():
    with pytest.raises(mlrt.MlrtError):     # the complex dim is not an axis
        dft20(signal((2, 8, 1)), axis=-1)
    with pytest.raises(mlrt.MlrtError):
        dft20(signal((2, 8, 3)))             # last dim must be 1 or 2
    with pytest.raises(mlrt.MlrtError):
        dft20(signal((2, 8, 1)), length=0)
    with pytest.raises(mlrt.MlrtError):
        check_node("DFT", [signal((2, 8, 1))], {"axis": 2}, opset=17)


# -- STFT --------------------------------------------------------------------------------------

def stft(x, step, window=None, length=None, rtol=1e-5, atol=1e-4, **attrs):
    inputs = [x, np.array(step, np.int64), window, None if length is None else np.array(length, np.int64)]
    while inputs[-1] is None:
        inputs.pop()
    return check_node("STFT", inputs, attrs, opset=17, rtol=rtol, atol=atol)[0]


@pytest.mark.parametrize("frame,step", [(16, 8), (13, 5), (1, 1), (64, 64), (100, 7)])
def test_stft_frames(frame, step):
    x = signal((2, 300, 1))
    stft(x, step, length=frame)
    stft(x, step, window=np.hanning(frame).astype(np.float32))
    stft(x, step, window=np.hanning(frame).astype(np.float32), length=frame, onesided=0)


def test_stft_complex_double_and_default_length():
    stft(signal((1, 50, 2), np.float64), 4, length=10, onesided=0, atol=1e-9)
    y = stft(signal((3, 40, 1), np.float64), 3, atol=1e-9)   # one frame of the whole signal
    assert y.shape == (3, 1, 21, 2)


def test_stft_bad_inputs():
    with pytest.raises(mlrt.MlrtError):
        stft(signal((1, 10, 1)), 2, length=11)                       # longer than the signal
    with pytest.raises(mlrt.MlrtError):
        stft(signal((1, 20, 1)), 2, window=np.ones(8, np.float32), length=6)
    with pytest.raises(mlrt.MlrtError):
        stft(signal((1, 20, 1)), 0, length=4)
    with pytest.raises(mlrt.MlrtError):
        stft(signal((20, 1)), 2, length=4)


# -- windows and MelWeightMatrix ------------------------------------------------------------------

@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("size", [2, 3, 10, 13, 127, 1000])
@pytest.mark.parametrize("periodic", [0, 1])
def test_windows(op, size, periodic):
    check_node(op, [np.array(size, np.int32)], {"periodic": periodic}, opset=17, atol=1e-6)
    check_node(op, [np.array(size, np.int64)], {"periodic": periodic, "output_datatype": TensorProto.DOUBLE},
               opset=17, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
def test_window_types_and_edges(op):
    check_node(op, [np.array(0, np.int64)], {}, opset=17)
    y = run_mlrt(make_model(op, [np.array(1, np.int64)], {"periodic": 0}, opset=17), [np.array(1, np.int64)])[0]
    np.testing.assert_array_equal(y, [1.0])        # one symmetric sample: no period, the peak
    check_node(op, [np.array(1, np.int64)], {"periodic": 1}, opset=17, atol=1e-7)
    for t in (TensorProto.INT32, TensorProto.UINT8, TensorProto.INT64):
        check_node(op, [np.array(9, np.int64)], {"output_datatype": t}, opset=17)
    check_node(op, [np.array(9, np.int64)], {"output_datatype": TensorProto.FLOAT16}, opset=17, rtol=1e-2, atol=2e-3)
    with pytest.raises(mlrt.MlrtError):
        check_node(op, [np.array(-1, np.int64)], {}, opset=17)
    with pytest.raises(mlrt.MlrtError):
        check_node(op, [np.array(4, np.int64)], {"output_datatype": TensorProto.STRING}, opset=17)


@pytest.mark.parametrize("bins,length,rate,low,high", [
    (8, 16, 8192, 0.0, 4096.0), (20, 512, 16000, 20.0, 8000.0), (1, 2, 100, 0.0, 50.0), (40, 1024, 44100, 0.0, 22050.0),
    (5, 63, 1000, 100.0, 400.0)])
def test_mel_weight_matrix(bins, length, rate, low, high):
    ins = [np.array(bins, np.int32), np.array(length, np.int32), np.array(rate, np.int32), np.array(low, np.float32),
           np.array(high, np.float32)]
    check_node("MelWeightMatrix", ins, {}, opset=17, atol=1e-6)
    check_node("MelWeightMatrix", ins, {"output_datatype": TensorProto.DOUBLE}, opset=17, rtol=1e-12, atol=1e-12)


def test_mel_weight_matrix_bad():
    ins = [np.array(4, np.int64), np.array(0, np.int64), np.array(100, np.int64), np.array(0.0, np.float32),
           np.array(50.0, np.float32)]
    with pytest.raises(mlrt.MlrtError):
        check_node("MelWeightMatrix", ins, {}, opset=17)

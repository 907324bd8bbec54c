"""The nine "light" real-model graphs inside the onnx package run through
mlrt.lowlevel.InferenceSession on an all-ones input and match the expected output
stored beside each model (rtol 1e-3, atol 1e-4)."""

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import mlrt.lowlevel as ml

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = sorted(p.stem[6:] for p in LIGHT.glob("light_*.onnx"))


def test_all_nine_present():
    assert len(MODELS) == 9, MODELS


@pytest.mark.parametrize("name", MODELS)
def test_light_model_matches_expected(name):
    sess = ml.InferenceSession(str(LIGHT / f"light_{name}.onnx"))
    (inp,) = sess.get_inputs()
    x = np.ones(inp.shape, np.float32)
    (got,) = sess.run(None, {inp.name: x})
    expected = numpy_helper.to_array(onnx.load_tensor(str(LIGHT / f"light_{name}_output_0.pb")))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)
    # a second run reuses the cached plan and must give the same answer
    (again,) = sess.run(None, {inp.name: x})
    np.testing.assert_array_equal(again, got)


def test_concurrent_runs_on_a_real_model_are_bitwise_equal():
    """run() from several threads at once: per-run arenas, per-thread kernel scratch."""
    import concurrent.futures

    sess = ml.InferenceSession(str(LIGHT / "light_squeezenet.onnx"))
    (inp,) = sess.get_inputs()
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(inp.shape).astype(np.float32) for _ in range(4)]
    reference = [sess.run(None, {inp.name: x})[0] for x in xs]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda k: sess.run(None, {inp.name: xs[k % 4]})[0], range(16)))
    for k, out in enumerate(outs):
        np.testing.assert_array_equal(out, reference[k % 4])

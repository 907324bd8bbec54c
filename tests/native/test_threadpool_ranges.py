"""The intra-op pool cuts each loop into one range per thread, each handed out in chunks
from a counter of its own, a thread taking what is left of the others' ranges once its
own is done (src/threadpool.c).  Every item must run, whatever the thread count, the
loop's size (ranges of unequal length, ranges shorter than a chunk) and whether a worker
joins at all: a session run on feeds B after feeds A would otherwise keep A's values
where an item was skipped."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import mlrt.lowlevel as ml


def _model(channels: int, filters: int, height: int, width: int) -> onnx.ModelProto:
    rng = np.random.default_rng(channels * 1000 + height)
    w = numpy_helper.from_array(rng.standard_normal((filters, channels, 3, 3)).astype(np.float32) * 0.2, "w")
    w1 = numpy_helper.from_array(rng.standard_normal((filters, filters, 1, 1)).astype(np.float32) * 0.2, "w1")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Conv", ["r", "w1"], ["p"], kernel_shape=[1, 1]),
        helper.make_node("MaxPool", ["p"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Sigmoid", ["x"], ["s"]),
    ]
    graph = helper.make_graph(
        nodes, "ranges", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, height, width])],
        [helper.make_tensor_value_info("m", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, None)], [w, w1])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("threads", [2, 3, 4, 7])
@pytest.mark.parametrize("shape", [(8, 64, 57, 61), (3, 48, 13, 17), (16, 16, 5, 3)])
def test_every_item_runs_on_any_thread_count(threads, shape):
    model = _model(*shape)
    so = ml.SessionOptions()
    so.intra_op_num_threads = threads
    session = ml.InferenceSession(model.SerializeToString(), so)
    reference = ReferenceEvaluator(model)
    rng = np.random.default_rng(threads)
    channels, _, height, width = shape
    first = rng.standard_normal((1, channels, height, width)).astype(np.float32)
    session.run(None, {"x": first})
    for _ in range(3):  # each run's feeds differ from the last: a skipped item keeps stale values
        x = rng.standard_normal((1, channels, height, width)).astype(np.float32)
        got = session.run(None, {"x": x})
        want = reference.run(None, {"x": x})
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)

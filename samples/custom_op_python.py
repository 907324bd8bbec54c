"""A custom operator written in Python, in a model that is otherwise native.

    python samples/custom_op_python.py

The model computes y = SoftClip(relu(x) - 1) * 2, where com.example::SoftClip (tanh
scaled by an attribute) is not an ONNX operator: SessionOptions.register_custom_op
gives mlrt a numpy function for it and a function telling each output's dtype and
shape.  Relu, Sub and Mul run on mlrt's C kernels, SoftClip in Python
(docs/custom_ops.md).
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

import mlrt.lowlevel as ml


def soft_clip(x: np.ndarray, limit: float = 1.0) -> np.ndarray:
    """The operator: numpy arrays in (one per node input), arrays out; attributes as keywords."""
    return (np.tanh(x / limit) * limit).astype(x.dtype)


def soft_clip_type(x_type, limit: float = 1.0):
    """Each output's (dtype, shape) from the inputs' (dtype, shape): here, as the input."""
    dtype, shape = x_type
    return dtype, shape


def make_model() -> bytes:
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Sub", ["r", "one"], ["d"], name="sub"),
             helper.make_node("SoftClip", ["d"], ["c"], domain="com.example", name="soft_clip", limit=0.5),
             helper.make_node("Mul", ["c", "two"], ["y"], name="mul")]
    graph = helper.make_graph(
        nodes, "soft_clip_demo", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
         helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.example", 1)])
    return model.SerializeToString()


def main() -> None:
    options = ml.SessionOptions()
    options.register_custom_op("com.example", "SoftClip", soft_clip, soft_clip_type)
    session = ml.InferenceSession(make_model(), options)
    for name, op_type, provider in session.get_node_assignment():
        print(f"{name:10s} {op_type:9s} {provider}")
    x = np.linspace(-2, 3, 12, dtype=np.float32).reshape(3, 4)
    (y,) = session.run(None, {"x": x})
    expected = soft_clip(np.maximum(x, 0) - 1, 0.5) * 2
    np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)
    print(y)
    print("the result matches numpy")


if __name__ == "__main__":
    main()

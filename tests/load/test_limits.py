"""Limits checked before anything is allocated (docs/reliability.md): the per-session
memory limit (`session.memory_limit_bytes`), the node-count limit
(`session.max_node_count`) and protobuf's nesting limit on subgraphs."""

import sys
import threading
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt
import mlrt.lowlevel as ml
from mlrt.native import load as loading
from mlrt.native.plan import memory

MB = 1 << 20
_OPSET = [helper.make_opsetid("", 17)]
F = np.float32
I64 = np.int64


def _model(node, inputs, out_type=T.FLOAT, initializers=()):
    g = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", out_type, None)],
                          list(initializers))
    return helper.make_model(g, opset_imports=_OPSET).SerializeToString()


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


# op -> (model bytes, small feeds, feeds whose output is 4 MB or more)
CASES = {
    "ConstantOfShape": (
        _model(helper.make_node("ConstantOfShape", ["s"], ["y"], value=helper.make_tensor("v", T.FLOAT, [1], [1.0])),
               [_vi("s", T.INT64, [2])]),
        {"s": np.array([2, 3], I64)}, {"s": np.array([1024, 1024], I64)}),
    "Expand": (
        _model(helper.make_node("Expand", ["x", "s"], ["y"]), [_vi("x", T.FLOAT, [1]), _vi("s", T.INT64, [2])]),
        {"x": np.ones(1, F), "s": np.array([2, 3], I64)}, {"x": np.ones(1, F), "s": np.array([1024, 1024], I64)}),
    "Tile": (
        _model(helper.make_node("Tile", ["x", "r"], ["y"]), [_vi("x", T.FLOAT, [4]), _vi("r", T.INT64, [1])]),
        {"x": np.arange(4, dtype=F), "r": np.array([3], I64)}, {"x": np.arange(4, dtype=F), "r": np.array([1 << 18], I64)}),
    "Range": (
        _model(helper.make_node("Range", ["a", "b", "d"], ["y"]),
               [_vi("a", T.FLOAT, []), _vi("b", T.FLOAT, []), _vi("d", T.FLOAT, [])]),
        {"a": np.array(0, F), "b": np.array(5, F), "d": np.array(1, F)},
        {"a": np.array(0, F), "b": np.array(1 << 21, F), "d": np.array(1, F)}),
    "Pad": (
        _model(helper.make_node("Pad", ["x", "p"], ["y"]), [_vi("x", T.FLOAT, [2, 2]), _vi("p", T.INT64, [4])]),
        {"x": np.ones((2, 2), F), "p": np.array([1, 1, 1, 1], I64)},
        {"x": np.ones((2, 2), F), "p": np.array([0, 0, 1023, 1023], I64)}),
    "Resize": (
        _model(helper.make_node("Resize", ["x", "", "", "s"], ["y"], mode="nearest"),
               [_vi("x", T.FLOAT, [1, 1, 2, 2]), _vi("s", T.INT64, [4])]),
        {"x": np.ones((1, 1, 2, 2), F), "s": np.array([1, 1, 4, 4], I64)},
        {"x": np.ones((1, 1, 2, 2), F), "s": np.array([1, 1, 1024, 1024], I64)}),
}


def _session(model, **config):
    so = ml.SessionOptions()
    for k, v in config.items():
        so.add_session_config_entry(k, str(v))
    return ml.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def _limited(model, nbytes=MB):
    return _session(model, **{"session.memory_limit_bytes": nbytes})


@pytest.mark.parametrize("op", sorted(CASES))
def test_an_output_over_the_session_limit_is_refused(op):
    model, small, big = CASES[op]
    sess = _limited(model)
    with pytest.raises(mlrt.ResourceExhausted, match=r"over the limit of 1,048,576 bytes \(the session's memory limit") as info:
        sess.run(None, big)
    assert "session.memory_limit_bytes" in str(info.value)
    (y,) = sess.run(None, small)  # the session stays usable
    (expected,) = _session(model).run(None, small)
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("op", ["ConstantOfShape", "Tile", "Resize"])
def test_a_default_limit_session_is_unaffected(op):
    model, _, big = CASES[op]
    (y,) = _session(model).run(None, big)
    assert y.nbytes >= 4 * MB


def test_a_native_plan_output_and_arena_over_the_limit():
    # a fixed-shape chain: one native plan, its output (2 MB) checked when it is planned
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Neg", ["h"], ["y"])], "g",
                          [_vi("x", T.FLOAT, [512, 1024])], [_vi("y", T.FLOAT, [512, 1024])])
    model = helper.make_model(g, opset_imports=_OPSET).SerializeToString()
    x = np.ones((512, 1024), F)
    with pytest.raises(mlrt.ResourceExhausted, match="bytes, over the limit of 1,048,576 bytes"):
        _limited(model).run(None, {"x": x})
    (y,) = _limited(model, 8 * MB).run(None, {"x": x})
    np.testing.assert_array_equal(y, -x)


def test_an_opencl_buffer_over_the_session_limit_is_refused():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from opencl_check import opencl_device
    opencl_device()
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Neg", ["h"], ["y"])], "g",
                          [_vi("x", T.FLOAT, [512, 1024])], [_vi("y", T.FLOAT, [512, 1024])])
    model = helper.make_model(g, opset_imports=_OPSET).SerializeToString()
    so = ml.SessionOptions()
    so.add_session_config_entry("session.memory_limit_bytes", "1MiB")
    providers = ["OpenCLExecutionProvider", "CPUExecutionProvider"]
    x = np.ones((512, 1024), F)
    with pytest.raises(mlrt.ResourceExhausted, match="OpenCL device .*over the limit of 1,048,576 bytes"):
        ml.InferenceSession(model, so, providers=providers).run(None, {"x": x})
    np.testing.assert_array_equal(ml.InferenceSession(model, providers=providers).run(None, {"x": x})[0], -x)


def test_limits_follow_each_session_into_its_own_threads():
    """A 1 MB-limit session and a default one of the same model, run at once from 8
    threads: each run meets its own session's limit."""
    model, _, big = CASES["Expand"]
    tight, loose = _limited(model), _session(model)
    results = {"tight": [], "loose": []}
    start = threading.Barrier(8)

    def worker(t):
        start.wait()
        for _ in range(15):
            if t % 2:
                try:
                    tight.run(None, big)
                    results["tight"].append("ran")
                except mlrt.ResourceExhausted:
                    results["tight"].append("refused")
            else:
                results["loose"].append(loose.run(None, big)[0].shape)

    workers = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert results["tight"] == ["refused"] * 60
    assert results["loose"] == [(1024, 1024)] * 60
    assert memory.limit() == memory.MEMORY_LIMIT  # nothing left set in this thread


def test_memory_limit_entry_is_read_and_checked():
    assert memory.parse_limit({}) is None
    assert memory.parse_limit({"session.memory_limit_bytes": "0"}) is None
    assert memory.parse_limit({"session.memory_limit_bytes": "1048576"}) == MB
    assert memory.parse_limit({"session.memory_limit_bytes": "2MiB"}) == 2 * MB
    assert memory.parse_limit({"session.memory_limit_bytes": "1e9"}) == 10**9
    assert memory.MEMORY_LIMIT == int(memory.PHYSICAL_MEMORY * 0.8)
    for bad in ("-1", "lots", "nan", "inf"):
        with pytest.raises(mlrt.InvalidArgument, match="session.memory_limit_bytes"):
            _session(CASES["Tile"][0], **{"session.memory_limit_bytes": bad})


# -- node count ----------------------------------------------------------------------------

def _chain(n, body_nodes=0):
    """n Neg nodes; with body_nodes, the last is an If whose two branches hold that many each."""
    nodes = [helper.make_node("Neg", ["x" if k == 0 else f"h{k}"], [f"h{k + 1}"]) for k in range(n)]
    inputs = [_vi("x", T.FLOAT, [2])]
    last = f"h{n}"
    if body_nodes:
        def branch(tag):
            ns = [helper.make_node("Neg", [last if k == 0 else f"{tag}{k}"], [f"{tag}{k + 1}"])
                  for k in range(body_nodes)]
            return helper.make_graph(ns, tag, [], [_vi(f"{tag}{body_nodes}", T.FLOAT, [2])])
        nodes.append(helper.make_node("If", ["c"], ["y"], then_branch=branch("t"), else_branch=branch("e")))
        inputs.append(_vi("c", T.BOOL, []))
    else:
        nodes.append(helper.make_node("Identity", [last], ["y"]))
    g = helper.make_graph(nodes, "g", inputs, [_vi("y", T.FLOAT, [2])])
    return helper.make_model(g, opset_imports=_OPSET)


def test_node_count_limit_refuses_a_larger_model():
    model = _chain(20, body_nodes=10)  # 20 + If + 2 x 10 = 41 nodes
    assert loading.count_nodes(model.graph) == 41
    with pytest.raises(mlrt.InvalidModel, match=r"41 nodes \(subgraphs included\), over the limit of 40 "
                                                r"\(session config entry 'session.max_node_count'\)"):
        _session(model.SerializeToString(), **{"session.max_node_count": 40})
    sess = _session(model.SerializeToString(), **{"session.max_node_count": 41})
    (y,) = sess.run(None, {"x": np.ones(2, F), "c": np.array(True)})
    np.testing.assert_array_equal(y, np.ones(2, F))  # 30 negations
    assert loading.MAX_NODES == 10_000_000
    with pytest.raises(mlrt.InvalidArgument, match="session.max_node_count"):
        _session(model.SerializeToString(), **{"session.max_node_count": "-3"})


# -- nesting depth -------------------------------------------------------------------------

def _nested_ifs(depth):
    """`depth` If nodes, each in the then-branch of the one above; y = x at the bottom."""
    inner = helper.make_graph([helper.make_node("Identity", ["x"], ["y0"])], "b0", [], [_vi("y0", T.FLOAT, [2])])
    for k in range(1, depth + 1):
        other = helper.make_graph([helper.make_node("Neg", ["x"], [f"z{k}"])], f"e{k}", [], [_vi(f"z{k}", T.FLOAT, [2])])
        node = helper.make_node("If", ["c"], [f"y{k}"], then_branch=inner, else_branch=other)
        inner = helper.make_graph([node], f"b{k}", [], [_vi(f"y{k}", T.FLOAT, [2])])
    g = helper.make_graph(list(inner.node), "g", [_vi("x", T.FLOAT, [2]), _vi("c", T.BOOL, [])],
                          [_vi(f"y{depth}", T.FLOAT, [2])])
    return helper.make_model(g, opset_imports=_OPSET)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _wrap(message_bytes: bytes, field: int) -> bytes:
    """Protobuf: `message_bytes` as length-delimited field `field` of an outer message."""
    return _varint(field << 3 | 2) + _varint(len(message_bytes)) + message_bytes


def test_subgraphs_nested_up_to_protobufs_limit_run():
    # 31 nested Ifs (~95 message levels) is the deepest protobuf reads: it loads, is
    # optimized and runs without meeting Python's recursion limit
    sess = _session(_nested_ifs(31).SerializeToString())
    x = np.array([1, 2], F)
    np.testing.assert_array_equal(sess.run(None, {"x": x, "c": np.array(True)})[0], x)
    np.testing.assert_array_equal(sess.run(None, {"x": x, "c": np.array(False)})[0], -x)


def _hand_nested(depth: int) -> bytes:
    """Model > Graph > Node > Attribute > Graph > ...: `depth` nested If nodes (then
    branches only), encoded by hand, since onnx.helper cannot build a message deeper
    than protobuf reads."""
    graph = _wrap(helper.make_node("Identity", ["x"], ["y"]).SerializeToString(), 1)  # GraphProto.node = 1
    for _ in range(depth):
        attr = _wrap(b"then_branch", 1) + _varint(20 << 3) + _varint(onnx.AttributeProto.GRAPH) + _wrap(graph, 6)  # name, type, g
        node = b"".join([_wrap(b"c", 1), _wrap(b"y", 2), _wrap(b"If", 4), _wrap(attr, 5)])  # input, output, op_type
        graph = _wrap(node, 1)
    opset = _wrap(b"", 1) + bytes([2 << 3, 17])  # OperatorSetIdProto: domain "", version 17
    return bytes([1 << 3, 8]) + _wrap(graph, 7) + _wrap(opset, 8)  # ir_version 8, graph = 7, opset_import = 8


def test_subgraphs_nested_past_protobufs_limit_are_refused():
    # the encoding is right: at depth 31 protobuf reads it back, 31 Ifs deep
    g, depth = onnx.ModelProto.FromString(_hand_nested(31)).graph, 0
    while g.node and g.node[0].op_type == "If":
        g, depth = g.node[0].attribute[0].g, depth + 1
    assert depth == 31
    # 40 Ifs is ~120 levels, past protobuf's limit of 100: InvalidModel, nothing recursed into
    with pytest.raises(mlrt.InvalidModel, match="not an ONNX model"):
        ml.InferenceSession(_hand_nested(40), providers=["CPUExecutionProvider"])


def test_constant_folding_at_creation_keeps_to_the_limit():
    """A ConstantOfShape of a constant shape is folded when the session is made; one
    over the limit is not (creation takes nothing), and its run is refused."""
    shape = helper.make_tensor("s", T.INT64, [2], [1 << 15, 1 << 15])  # a 4 GB float32 tensor
    g = helper.make_graph([helper.make_node("ConstantOfShape", ["s"], ["c"]),
                           helper.make_node("ReduceSum", ["c"], ["y"], keepdims=0)], "g", [],
                          [_vi("y", T.FLOAT, None)], [shape])
    model = helper.make_model(g, opset_imports=_OPSET).SerializeToString()
    sess = _limited(model, 64 * MB)
    assert any(n.op_type == "ConstantOfShape" for n in sess._graph.nodes)  # left for run time
    with pytest.raises(mlrt.ResourceExhausted, match="ConstantOfShape"):
        sess.run(None, {})
    small = helper.make_tensor("s", T.INT64, [2], [4, 8])
    g.initializer[0].CopyFrom(small)
    folded = _limited(helper.make_model(g, opset_imports=_OPSET).SerializeToString(), 64 * MB)
    assert not folded._graph.nodes and folded.run(None, {})[0] == 0

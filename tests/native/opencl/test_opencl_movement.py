"""Data movement on OpenCL against the C kernels: Transpose, Concat, Split, Slice, Gather,
Expand, Tile, Pad, DepthToSpace, SpaceToDepth, Cast, CastLike, and the alias ops (Reshape,
Flatten, Squeeze, Unsqueeze, Identity, Dropout) -- over element types of every size,
odd and empty shapes, negative axes and every attribute path."""

import numpy as np
import pytest

import mlrt

from opencl_check import check_opencl, run_opencl
from oracle import make_model

rng = np.random.default_rng(7)
I64 = np.int64
DTYPES = [np.float32, np.float16, np.int64, np.bool_, np.uint8]


def data(shape, dtype=np.float32):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -1000, 250, shape).astype(dtype)
    return (rng.standard_normal(shape) * 10).astype(dtype)


def ints(*v):
    return np.array(v, I64)


# -- Transpose (and the views that share its kernels) ----------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,perm", [((13,), [0]), ((1, 13), [1, 0]), ((127, 129), [1, 0]),
                                        ((2, 3, 4), [0, 2, 1]), ((2, 3, 4), [2, 0, 1]), ((3, 37, 41), [0, 2, 1]),
                                        ((2, 3, 5, 7), [0, 2, 3, 1]), ((2, 9, 4, 5), [0, 3, 1, 2]),
                                        ((2, 3, 5, 7), [3, 1, 2, 0]), ((2, 1, 3, 1, 4), [4, 3, 2, 1, 0])])
def test_transpose(shape, perm, dtype):
    check_opencl("Transpose", [data(shape, dtype)], {"perm": perm})


def test_transpose_default_perm_and_empty():
    check_opencl("Transpose", [data((2, 3, 5))])
    check_opencl("Transpose", [np.array(3.5, np.float32)])
    check_opencl("Transpose", [data((0, 3), np.float16)], {"perm": [1, 0]})
    check_opencl("Transpose", [data((4, 0, 3), np.int64)], {"perm": [2, 0, 1]})


def test_transpose_bits_unchanged():
    """NaN payloads and -0.0 come through untouched (elements move as bits)."""
    bits = np.array([0x7FC00001, 0xFFC12345, 0x80000000, 0x7F800000, 1, 0x3F800000] * 10, np.uint32)
    x = bits.view(np.float32).reshape(6, 10)
    got = run_opencl(make_model("Transpose", [x], {"perm": [1, 0]}), [x])[0]
    np.testing.assert_array_equal(got.view(np.uint32), x.T.view(np.uint32))
    h = np.array([0x7E01, 0xFC03, 0x8000, 0x0001] * 6, np.uint16).view(np.float16).reshape(4, 6)
    got = run_opencl(make_model("Transpose", [h], {"perm": [1, 0]}), [h])[0]
    np.testing.assert_array_equal(got.view(np.uint16), h.T.view(np.uint16))


@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
def test_depth_space(dtype):
    x = data((2, 8, 3, 5), dtype)
    check_opencl("DepthToSpace", [x], {"blocksize": 2, "mode": "DCR"})
    check_opencl("DepthToSpace", [x], {"blocksize": 2, "mode": "CRD"})
    check_opencl("DepthToSpace", [x], {"blocksize": 2}, opset=1)
    check_opencl("SpaceToDepth", [data((2, 3, 6, 9), dtype)], {"blocksize": 3})


# -- Concat and Split ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_concat(axis, dtype):
    shapes = [[2, 3, 5] for _ in range(5)]
    for i, n in enumerate([1, 4, 0, 13, 2]):
        shapes[i][axis] = n
    check_opencl("Concat", [data(s, dtype) for s in shapes], {"axis": axis})


def test_concat_single_and_empty():
    check_opencl("Concat", [data((13,))], {"axis": 0})
    check_opencl("Concat", [data((0, 3)), data((0, 2))], {"axis": 1})
    check_opencl("Concat", [data((2, 3), np.int64), data((2, 3), np.int64)], {"axis": 1}, opset=1)  # default axis


@pytest.mark.parametrize("dtype", DTYPES)
def test_split_sizes(dtype):
    x = data((3, 11, 4), dtype)
    check_opencl("Split", [x, ints(2, 0, 9)], {"axis": 1}, n_outputs=3)          # opset 13+: input
    check_opencl("Split", [x], {"axis": -2, "split": [5, 6]}, n_outputs=2, opset=11)  # attribute
    check_opencl("Split", [x], {"axis": 2}, n_outputs=2, opset=11)                # equal parts
    check_opencl("Split", [x], {"axis": 0}, n_outputs=3)


def test_split_num_outputs():
    x = data((2, 13, 3))
    check_opencl("Split", [x], {"axis": 1, "num_outputs": 4}, n_outputs=4, opset=18)
    check_opencl("Split", [x], {"axis": -1, "num_outputs": 3}, n_outputs=3, opset=18)
    check_opencl("Split", [data((0, 4))], {"axis": 1, "num_outputs": 2}, n_outputs=2, opset=18)


# -- Slice -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([1], [-1], [0], [1]),
    ([0, 2], [100, -2], [1, 2], [2, 3]),          # clamped end, steps > 1
    ([-1], [-100], [-1], [-1]),                   # reverse the last axis, clamped
    ([10, -2], [-100, 0], [1, 0], [-2, -1]),      # negative steps on two axes
    ([2], [2], [1], [1]),                         # empty
    ([-3, 1, 0], [9223372036854775807, 5, -1], [-3, -2, -1], [1, 2, 1]),
])
def test_slice(starts, ends, axes, steps, dtype):
    x = data((4, 13, 9), dtype)
    check_opencl("Slice", [x, ints(*starts), ints(*ends), ints(*axes), ints(*steps)])


def test_slice_optional_inputs_and_attributes():
    x = data((5, 7))
    check_opencl("Slice", [x, ints(1, 2), ints(4, -1)])                       # no axes, no steps
    check_opencl("Slice", [x, ints(-1), ints(-9), None, ints(-1)])             # steps without axes
    check_opencl("Slice", [x], {"starts": [1, -3], "ends": [100, -1], "axes": [0, 1]}, opset=9)
    check_opencl("Slice", [x.astype(np.float16)], {"starts": [2], "ends": [3]}, opset=1)
    check_opencl("Slice", [data((0, 7)), ints(1), ints(5), ints(1)])


# -- Gather --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather(axis, idx_dtype, dtype):
    x = data((5, 7, 3), dtype)
    n = x.shape[axis]
    idx = np.array([[0, n - 1, -1], [-n, 2, 1]], idx_dtype)
    check_opencl("Gather", [x, idx], {"axis": axis})
    check_opencl("Gather", [x, np.array(-2, idx_dtype)], {"axis": axis})     # scalar index
    check_opencl("Gather", [x, np.zeros((0,), idx_dtype)], {"axis": axis})  # no index


def test_gather_embedding_rows():
    table = data((1000, 64))
    check_opencl("Gather", [table, rng.integers(-1000, 1000, (3, 17)).astype(I64)])


@pytest.mark.parametrize("bad", [4, -5, 1 << 40])
def test_gather_out_of_range_fails_the_run(bad):
    """An index outside [-dim, dim) is an InvalidArgument naming the node, as on the CPU
    -- never a made-up value -- and the partition runs again on good indices."""
    import mlrt.lowlevel as ml
    x = data((4, 3)) + 100
    model = make_model("Gather", [x, np.array([0, 0, 0], I64)], {"axis": 0})
    sess = ml.InferenceSession(model.SerializeToString(), providers=["OpenCLExecutionProvider", "CPUExecutionProvider"])
    assert {p for _, op, p in sess.get_node_assignment() if op == "Gather"} == {"OpenCLExecutionProvider"}
    with pytest.raises(mlrt.InvalidArgument, match="out of range for axis 0 of size 4"):
        sess.run(None, {"x0": x, "x1": np.array([1, bad, -4], I64)})
    (got,) = sess.run(None, {"x0": x, "x1": np.array([1, 3, -4], I64)})
    np.testing.assert_array_equal(got, x[[1, 3, 0]])
    assert {p for _, op, p in sess.get_node_assignment() if op == "Gather"} == {"OpenCLExecutionProvider"}


# -- Expand, Tile, Pad ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,to", [((3, 1), (3, 4)), ((1,), (2, 3, 5)), ((2, 1, 5), (4, 1, 1, 1)),
                                      ((13,), (1, 13)), ((1, 1), (0, 1)), ((), (3, 2))])
def test_expand(shape, to, dtype):
    check_opencl("Expand", [data(shape, dtype), ints(*to)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,reps", [((3,), (4,)), ((2, 3), (2, 1)), ((2, 1, 5), (1, 3, 2)),
                                        ((13, 2), (0, 2)), ((0, 2), (3, 3))])
def test_tile(shape, reps, dtype):
    check_opencl("Tile", [data(shape, dtype), ints(*reps)])


def test_tile_opset1():
    check_opencl("Tile", [data((2, 3)), np.array(3, I64), np.array(-1, I64)], opset=1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_modes(mode, dtype):
    x = data((3, 5, 4), dtype)
    check_opencl("Pad", [x, ints(1, 0, 2, 2, 1, 3)], {"mode": mode})
    check_opencl("Pad", [x, ints(0, -1, 3, 1, -2, -1)], {"mode": mode})   # crop some axes, pad others


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad_constant_value(dtype):
    x = data((2, 3), dtype)
    value = np.array(True if dtype is np.bool_ else 7, dtype)
    check_opencl("Pad", [x, ints(1, 2, 0, 1), value])
    check_opencl("Pad", [x, ints(2, 0), value, ints(-1)])                   # opset 18 axes
    check_opencl("Pad", [x, ints(1, 1), None, ints(0)])


def test_pad_attribute_versions_and_empty():
    x = data((2, 3, 4))
    check_opencl("Pad", [x], {"pads": [0, 1, 2, 1, 0, 1], "value": -2.5}, opset=2)
    check_opencl("Pad", [x], {"pads": [0, 1, 2, 1, 0, 1], "mode": "reflect"}, opset=2)
    check_opencl("Pad", [x], {"paddings": [1, 0, 0, 0, 1, 1], "value": 3.0}, opset=1)
    check_opencl("Pad", [data((0, 3)), ints(1, 1, 1, 1), np.array(5, np.float32)])
    check_opencl("Pad", [data((2, 3)), ints(0, -2, 0, -1)])
    check_opencl("Pad", [np.array(4.0, np.float32), np.zeros(0, I64)])


# -- Cast ------------------------------------------------------------------------------------------------------

CASTS = [np.float32, np.float16, np.int32, np.int64, np.bool_]


@pytest.mark.parametrize("src", CASTS + [np.uint8, np.int8])
@pytest.mark.parametrize("dst", CASTS)
def test_cast(src, dst):
    from onnx import helper
    if np.dtype(src).kind == "f":
        x = np.concatenate([data(127, np.float32), [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 70000.0, 65519.0, 1e-8]])
        if np.dtype(dst) == np.bool_:
            x = np.concatenate([x, [np.nan, np.inf, -np.inf]])
        with np.errstate(over="ignore"):
            x = x.astype(src)  # 70000 is inf in float16
    elif np.dtype(src) == np.int64:
        x = np.concatenate([data(127, src), np.array([2**40 + 1, -2**40 - 3, 2**31, 16777217, -2**63, 2**63 - 1], src)])
    else:
        x = data(127, src)
    check_opencl("Cast", [x], {"to": helper.np_dtype_to_tensor_dtype(np.dtype(dst))})


def test_cast_empty_and_old_opset():
    check_opencl("Cast", [data((0, 3))], {"to": 10})
    check_opencl("Cast", [data((3, 4))], {"to": "FLOAT16"}, opset=5)


@pytest.mark.parametrize("src, dst", [(np.float32, np.float16), (np.float16, np.float32), (np.int64, np.float32),
                                      (np.float32, np.int32), (np.float32, np.float32), (np.uint8, np.bool_)])
def test_cast_like(src, dst):
    check_opencl("CastLike", [data((5, 13), src), data((2,), dst)], opset=21)


def test_an_alias_of_a_constant_keeps_the_constant():
    """CastLike to its own type shares its input's buffer; when that input is a
    constant, the plan must not give the buffer back after the alias's last reader:
    a later node reading the constant would see whatever was allocated there."""
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper

    import mlrt.lowlevel as ml
    c = np.arange(12, dtype=np.float32)
    nodes = [h.make_node("CastLike", ["c", "x"], ["cc"]), h.make_node("Add", ["x", "cc"], ["a"]),
             h.make_node("Mul", ["a", "a"], ["b"]), h.make_node("Add", ["b", "c"], ["y"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [12])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [12])], [numpy_helper.from_array(c, "c")])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 21)]).SerializeToString()
    sess = ml.InferenceSession(model, providers=["OpenCLExecutionProvider", "CPUExecutionProvider"])
    assert {p for _, op, p in sess.get_node_assignment()} == {"OpenCLExecutionProvider"}
    x = np.ones(12, np.float32)
    for _ in range(2):
        np.testing.assert_array_equal(sess.run(None, {"x": x})[0], (x + c) ** 2 + c)


# -- the alias ops (reshape.py) ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_alias_ops(dtype):
    x = data((2, 1, 3, 4), dtype)
    check_opencl("Reshape", [x, ints(0, -1, 4)])
    check_opencl("Reshape", [x, ints(3, 0, 8)], {"allowzero": 0})
    check_opencl("Reshape", [data((0, 3), dtype), ints(3, 0)], {"allowzero": 1})
    check_opencl("Flatten", [x], {"axis": -2})
    check_opencl("Flatten", [x], {"axis": 0})
    check_opencl("Squeeze", [x, ints(-3)])
    check_opencl("Squeeze", [x])
    check_opencl("Unsqueeze", [x, ints(0, -1)])
    check_opencl("Squeeze", [x], {"axes": [1]}, opset=11)
    check_opencl("Unsqueeze", [x], {"axes": [4]}, opset=11)
    check_opencl("Identity", [x])


def test_alias_chain_then_copy():
    """An alias feeding a kernel, and an alias of an alias, in one partition."""
    from onnx import helper
    x = data((2, 3, 4))
    nodes = [helper.make_node("Reshape", ["x", "s"], ["r"]), helper.make_node("Identity", ["r"], ["i"]),
             helper.make_node("Transpose", ["i"], ["y"], perm=[1, 0])]
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", 1, x.shape)],
                          [helper.make_empty_tensor_value_info("y")],
                          initializer=[helper.make_tensor("s", 7, [2], [6, 4])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    np.testing.assert_array_equal(run_opencl(model, [x])[0], x.reshape(6, 4).T)


@pytest.mark.parametrize("opset", [7, 10, 13])
def test_dropout_inference(opset):
    x = data((3, 5))
    check_opencl("Dropout", [x], opset=opset)
    check_opencl("Dropout", [x.astype(np.float16)], opset=opset)


def test_the_alias_recorder_runs_what_the_operators_declare(monkeypatch):
    """reshape.py's recorder serves exactly the operators declaring a WHOLE alias
    (Op.aliases, native/ops), and a node only where every output it has is one."""
    from onnx import helper

    from mlrt.native.opencl import reshape
    from mlrt.native.opencl._recorders import find_recorder
    from mlrt.native.ops import AliasKind, lookup, registry

    for (domain, op_type), versions in registry().items():
        declared = any(a.kind is AliasKind.WHOLE for _, cls in versions for a in cls.aliases)
        found = find_recorder(domain, op_type)
        assert (found is not None and found.fn is reshape.same_bytes) == declared, op_type

    def op(op_type, inputs, outputs):
        return lookup("", op_type, 13)(helper.make_node(op_type, inputs, outputs), 13)

    supports = find_recorder("", "Dropout").supports
    assert supports(op("Dropout", ["x"], ["y"]), [None])
    assert not supports(op("Dropout", ["x"], ["y", "mask"]), [None])  # (the mask is computed: on the CPU)
    assert not supports(op("Dropout", ["x", "ratio", "training"], ["y"]), [None])
    identity = op("Identity", ["x"], ["y"])
    assert find_recorder("", "Identity").supports(identity, [None])
    monkeypatch.setattr(type(identity), "aliases", ())
    assert not find_recorder("", "Identity").supports(identity, [None])


# -- the GPU dispatch shapes (local-memory transpose, one element per item), run here on the CPU device ----

def test_gpu_dispatch_shapes(monkeypatch):
    from opencl_check import opencl_device
    monkeypatch.setattr(opencl_device(), "is_gpu", True)
    for dtype in (np.float32, np.float16, np.int64, np.uint8):
        check_opencl("Transpose", [data((3, 37, 41), dtype)], {"perm": [0, 2, 1]})
        check_opencl("Transpose", [data((2, 9, 4, 5), dtype)], {"perm": [0, 2, 3, 1]})
        check_opencl("Transpose", [data((2, 3, 5, 7), dtype)], {"perm": [3, 1, 2, 0]})
        check_opencl("Concat", [data((2, 3, 5), dtype), data((2, 4, 5), dtype)], {"axis": 1})
        check_opencl("Split", [data((3, 11, 4), dtype), ints(2, 0, 9)], {"axis": 1}, n_outputs=3)
        check_opencl("Gather", [data((5, 7, 3), dtype), np.array([[0, -1], [3, 2]], I64)], {"axis": 1})
        check_opencl("Tile", [data((2, 1, 5), dtype), ints(1, 3, 2)])
        check_opencl("Pad", [data((3, 5, 4), dtype), ints(1, 0, 2, 2, 1, 3)], {"mode": "reflect"})
        check_opencl("Slice", [data((4, 13, 9), dtype), ints(10, -2), ints(-100, 0), ints(1, 0), ints(-2, -1)])


def test_session_places_movement_on_opencl():
    """Through InferenceSession: every node of a movement chain runs on OpenCL (strings would not be claimed)."""
    import mlrt.lowlevel as ml
    from onnx import helper, TensorProto
    from opencl_check import opencl_device
    opencl_device()
    x = data((2, 6, 5, 4))
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
             helper.make_node("Split", ["t"], ["a", "b"], axis=-1, num_outputs=2),
             helper.make_node("Concat", ["b", "a"], ["c"], axis=1),
             helper.make_node("Slice", ["c", "s0", "s1", "s2", "s3"], ["d"]),
             helper.make_node("Pad", ["d", "pads"], ["e"], mode="edge"),
             helper.make_node("Gather", ["e", "ind"], ["f"], axis=2),
             helper.make_node("Resize", ["f", "", "scales"], ["g"], mode="linear"),
             helper.make_node("Cast", ["g"], ["y"], to=TensorProto.FLOAT16)]
    inits = [helper.make_tensor(n, TensorProto.INT64, [len(v)], v) for n, v in
             [("s0", [-1]), ("s1", [-100]), ("s2", [1]), ("s3", [-2]), ("pads", [0, 1, 0, 0, 0, 2, 1, 0]),
              ("ind", [3, -1, 0])]] + [helper.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1.5, 2, 1])]
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)], initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)]).SerializeToString()
    sess = ml.InferenceSession(model, providers=["OpenCLExecutionProvider", "CPUExecutionProvider"])
    assert {p for _, _, p in sess.get_node_assignment()} == {"OpenCLExecutionProvider"}
    got = sess.run(None, {"x": x})[0]
    want = ml.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=1e-3)

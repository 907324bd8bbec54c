"""If, Loop, Scan and SequenceMap: bodies built with helper.make_graph, run on the C
kernels through the executor's subgraph hook, checked against onnx.reference (or, where
onnx.reference does not implement an attribute — Scan axes and directions, Scan-8
batches — against the spec's pseudo-code written out with numpy)."""

import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import mlrt
import mlrt.lowlevel as ml
from oracle import assert_same

F, I64, B, STR = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL, TensorProto.STRING
rng = np.random.default_rng(0)


def vi(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def seq_vi(name, elem=F):
    return helper.make_tensor_sequence_value_info(name, elem, None)


def body(nodes, inputs, outputs, inits=()):
    return helper.make_graph(nodes, "body", inputs, outputs,
                             initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits])


def model(nodes, feeds: dict, outputs, opset=17, inits=()):
    ins = []
    for name, v in feeds.items():
        if isinstance(v, list):
            ins.append(seq_vi(name, helper.np_dtype_to_tensor_dtype(v[0].dtype) if v else F))
        else:
            ins.append(vi(name, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape))
    g = helper.make_graph(nodes, "cf_test", ins, [helper.make_empty_tensor_value_info(n) for n in outputs],
                          initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def same(got, expected, where="output"):
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), f"{where}: {got!r} vs {expected!r}"
        for k, (g, e) in enumerate(zip(got, expected)):
            same(g, e, f"{where}[{k}]")
    else:
        assert_same(got, expected, 1e-6, 1e-6, where)


def run_mlrt(m, feeds):
    return ml.InferenceSession(m.SerializeToString()).run(None, feeds)


def run_both(m, feeds):
    got = run_mlrt(m, feeds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ReferenceEvaluator(m).run(None, feeds)
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        same(g, e, f"output {k}")
    return got


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# -- If ----------------------------------------------------------------------------------
def _if_model(opset=17):
    then = body([helper.make_node("Add", ["x", "y"], ["t"]), helper.make_node("Mul", ["x", "x"], ["t2"])],
                [], [vi("t"), vi("t2")])
    other = body([helper.make_node("Sub", ["x", "y"], ["e"]), helper.make_node("Relu", ["y"], ["e2"])],
                 [], [vi("e"), vi("e2")])
    return [helper.make_node("If", ["c"], ["r", "r2"], then_branch=then, else_branch=other)]


@pytest.mark.parametrize("cond", [np.array(True), np.array(False), np.array([True]), np.array([[False]])])
@pytest.mark.parametrize("shape", [(1,), (13,), (2, 127), ()])
def test_if(cond, shape):
    feeds = {"c": cond, "x": f32(*shape), "y": f32(*shape)}
    run_both(model(_if_model(), feeds, ["r", "r2"]), feeds)


def test_if_branches_of_different_shapes():
    then = body([helper.make_node("Add", ["x", "x"], ["t"])], [], [vi("t")])
    other = body([helper.make_node("Gemm", ["m", "m"], ["e"])], [], [vi("e")])
    for c in (True, False):
        feeds = {"c": np.array(c), "x": f32(5), "m": f32(3, 3)}
        run_both(model([helper.make_node("If", ["c"], ["r"], then_branch=then, else_branch=other)], feeds, ["r"]),
                 feeds)


def test_if_sequence_output():
    then = body([helper.make_node("SequenceConstruct", ["x", "x"], ["s"])], [], [seq_vi("s")])
    other = body([helper.make_node("SequenceEmpty", [], ["s2"])], [], [seq_vi("s2")])
    for c in (True, False):
        feeds = {"c": np.array(c), "x": f32(2, 3)}
        run_both(model([helper.make_node("If", ["c"], ["r"], then_branch=then, else_branch=other)], feeds, ["r"]),
                 feeds)


def test_if_nested_reads_every_scope():
    inner_then = body([helper.make_node("Add", ["x", "t1"], ["it"])], [], [vi("it")])
    inner_else = body([helper.make_node("Sub", ["x", "t1"], ["ie"])], [], [vi("ie")])
    then = body([helper.make_node("Mul", ["x", "x"], ["t1"]),
                 helper.make_node("If", ["c2"], ["t"], then_branch=inner_then, else_branch=inner_else)],
                [], [vi("t")])
    other = body([helper.make_node("Relu", ["x"], ["e"])], [], [vi("e")])
    for c, c2 in ((True, True), (True, False), (False, True)):
        feeds = {"c": np.array(c), "c2": np.array(c2), "x": f32(4)}
        run_both(model([helper.make_node("If", ["c"], ["r"], then_branch=then, else_branch=other)], feeds, ["r"]),
                 feeds)


@pytest.mark.parametrize("cond", [np.array([True, False]), np.zeros((0,), np.bool_)])
def test_if_condition_must_be_one_element(cond):
    feeds = {"c": cond, "x": f32(3), "y": f32(3)}
    with pytest.raises(mlrt.MlrtError, match="condition"):
        run_mlrt(model(_if_model(), feeds, ["r", "r2"]), feeds)


def test_if_session_stays_usable_after_error():
    feeds = {"c": np.array([True, True]), "x": f32(3), "y": f32(3)}
    m = model(_if_model(), feeds, ["r", "r2"])
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "n"
    sess = ml.InferenceSession(m.SerializeToString())
    with pytest.raises(mlrt.MlrtError):
        sess.run(None, feeds)
    feeds["c"] = np.array([True])
    np.testing.assert_allclose(sess.run(None, feeds)[0], feeds["x"] + feeds["y"])


# -- Loop --------------------------------------------------------------------------------
def _for_body():
    """y_out = y_in + x (outer); scan: y_out * 2 (body initializer) and i + i (int64 scalar)."""
    return body([helper.make_node("Add", ["y_in", "x"], ["y_out"]), helper.make_node("Mul", ["y_out", "two"], ["s"]),
                 helper.make_node("Add", ["i", "i"], ["ii"])],
                [vi("i", I64, []), vi("c_in", B, []), vi("y_in", F, [3])],
                [vi("c_in", B, []), vi("y_out", F, [3]), vi("s", F, [3]), vi("ii", I64, [])],
                inits=[("two", np.float32(2))])


@pytest.mark.parametrize("trips", [1, 2, 13])
def test_loop_for(trips):
    feeds = {"M": np.array(trips, np.int64), "c": np.array(True), "y": f32(3), "x": f32(3)}
    node = helper.make_node("Loop", ["M", "c", "y"], ["y_final", "scan", "iters"], body=_for_body())
    got = run_mlrt(model([node], feeds, ["y_final", "scan", "iters"]), feeds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ReferenceEvaluator(model([node], feeds, ["y_final", "scan", "iters"])).run(None, feeds)
    same(got[0], expected[0])
    same(got[1], expected[1])
    assert got[1].shape == (trips, 3)
    # scalar scan elements stack to [trips] (the spec; onnx.reference's vstack gives [trips, 1])
    same(got[2], 2 * np.arange(trips, dtype=np.int64))


@pytest.mark.parametrize("inputs", [("M0", "c"), ("M", "no")])
def test_loop_zero_trips(inputs):
    feeds = {"M0": np.array(0, np.int64), "M": np.array(3, np.int64), "c": np.array(True), "no": np.array(False),
             "y": f32(3), "x": f32(3)}
    node = helper.make_node("Loop", [*inputs, "y"], ["y_final", "scan", "iters"], body=_for_body())
    y_final, scan, iters = run_mlrt(model([node], feeds, ["y_final", "scan", "iters"]), feeds)
    same(y_final, feeds["y"])
    assert scan.shape == (0, 3) and scan.dtype == np.float32  # from the body's declared output
    assert iters.shape == (0,) and iters.dtype == np.int64


def test_loop_trip_count_only():
    feeds = {"M": np.array(4, np.int64), "y": f32(3), "x": f32(3)}
    node = helper.make_node("Loop", ["M", "", "y"], ["y_final", "scan", "iters"], body=_for_body())
    got = run_mlrt(model([node], feeds, ["y_final", "scan", "iters"]), feeds)
    same(got[0], feeds["y"] + 4 * feeds["x"])


def _while_body():
    """s_out = s_in + "a"; keep going while s_out matches a{0,4}; v_out = v_in + v_in."""
    return body([helper.make_node("StringConcat", ["s_in", "a"], ["s_out"]),
                 helper.make_node("RegexFullMatch", ["s_out"], ["go"], pattern="a{0,4}"),
                 helper.make_node("Add", ["v_in", "v_in"], ["v_out"])],
                [vi("i", I64, []), vi("c_in", B, []), vi("s_in", STR, []), vi("v_in", F, [2])],
                [vi("go", B, []), vi("s_out", STR, []), vi("v_out", F, [2]), vi("s_out", STR, [])],
                inits=[("a", np.array("a", dtype=object))])


@pytest.mark.parametrize("cond_name,max_trips,expected_trips", [("c", None, 5), ("", None, 5), ("c", "M", 3)])
def test_loop_while(cond_name, max_trips, expected_trips):
    feeds = {"c": np.array(True), "s": np.array("", dtype=object), "v": np.ones(2, np.float32),
             "M": np.array(3, np.int64)}
    node = helper.make_node("Loop", [max_trips or "", cond_name, "s", "v"], ["s_final", "v_final", "trail"],
                            body=_while_body())
    s_final, v_final, trail = run_mlrt(model([node], feeds, ["s_final", "v_final", "trail"], opset=20), feeds)
    assert s_final.item() == "a" * expected_trips
    same(v_final, np.full(2, 2.0 ** expected_trips, np.float32))
    assert trail.dtype == object and list(trail) == ["a" * k for k in range(1, expected_trips + 1)]


def test_loop_carries_a_sequence():
    b = body([helper.make_node("SequenceInsert", ["s_in", "x"], ["s_out"]),
              helper.make_node("Add", ["x", "x"], ["x2"])],
             [vi("i", I64, []), vi("c_in", B, []), seq_vi("s_in")], [vi("c_in", B, []), seq_vi("s_out"), vi("x2")])
    nodes = [helper.make_node("SequenceEmpty", [], ["empty"]),
             helper.make_node("Loop", ["M", "c", "empty"], ["s", "xs"], body=b),
             helper.make_node("SequenceLength", ["s"], ["n"])]
    feeds = {"M": np.array(3, np.int64), "c": np.array(True), "x": f32(2, 2)}
    got = run_both(model(nodes, feeds, ["s", "n"]), feeds)
    assert len(got[0]) == 3
    # scan outputs stack on a new axis 0 (the spec, onnxruntime); onnx.reference's vstack
    # concatenates rank>=2 elements on their axis 0 instead
    xs = run_mlrt(model(nodes, feeds, ["xs"]), feeds)[0]
    same(xs, np.stack([2 * feeds["x"]] * 3))


def test_loop_nested_reads_outer_scopes():
    inner = body([helper.make_node("Add", ["acc_in", "y_in"], ["acc_out"]),
                  helper.make_node("Mul", ["acc_out", "x"], ["sc"])],
                 [vi("j", I64, []), vi("ci", B, []), vi("acc_in", F, [2])],
                 [vi("ci", B, []), vi("acc_out", F, [2]), vi("sc", F, [2])])
    outer = body([helper.make_node("Loop", ["N", "c", "y_in"], ["y_out", "inner_scan"], body=inner)],
                 [vi("i", I64, []), vi("c_in", B, []), vi("y_in", F, [2])],
                 [vi("c_in", B, []), vi("y_out", F, [2]), vi("inner_scan", F, [2, 2])])
    feeds = {"M": np.array(3, np.int64), "N": np.array(2, np.int64), "c": np.array(True), "y": f32(2), "x": f32(2)}
    node = helper.make_node("Loop", ["M", "c", "y"], ["y_final", "scans"], body=outer)
    y_final, = run_both(model([node], feeds, ["y_final"]), feeds)
    scans = run_mlrt(model([node], feeds, ["scans"]), feeds)[0]  # [outer steps, inner steps, 2]
    y, expected = feeds["y"], []
    for _ in range(3):
        acc, inner_steps = y, []
        for _ in range(2):
            acc = acc + y
            inner_steps.append(acc * feeds["x"])
        y = acc
        expected.append(np.stack(inner_steps))
    np.testing.assert_allclose(scans, np.stack(expected), rtol=1e-5)
    np.testing.assert_allclose(y_final, y, rtol=1e-5)


def test_loop_scan_output_must_keep_its_shape():
    b = body([helper.make_node("SequenceInsert", ["s_in", "x"], ["s_out"]),
              helper.make_node("ConcatFromSequence", ["s_out"], ["cat"], axis=0)],
             [vi("i", I64, []), vi("c_in", B, []), seq_vi("s_in")], [vi("c_in", B, []), seq_vi("s_out"), vi("cat")])
    nodes = [helper.make_node("SequenceEmpty", [], ["empty"]), helper.make_node("Loop", ["M", "c", "empty"],
                                                                                ["s", "cats"], body=b)]
    feeds = {"M": np.array(3, np.int64), "c": np.array(True), "x": f32(2)}
    with pytest.raises(mlrt.MlrtError, match="scan output 0"):
        run_mlrt(model(nodes, feeds, ["s", "cats"]), feeds)


def test_loop_trip_count_must_be_an_integer_scalar():
    feeds = {"M": np.array([2, 3], np.int64), "c": np.array(True), "y": f32(3), "x": f32(3)}
    node = helper.make_node("Loop", ["M", "c", "y"], ["y_final", "scan", "iters"], body=_for_body())
    with pytest.raises(mlrt.MlrtError, match="trip count"):
        run_mlrt(model([node], feeds, ["y_final", "scan", "iters"]), feeds)


def test_loop_body_signature_must_match():
    feeds = {"M": np.array(2, np.int64), "c": np.array(True), "y": f32(3), "z": f32(3), "x": f32(3)}
    node = helper.make_node("Loop", ["M", "c", "y", "z"], ["y_final", "z_final"], body=_for_body())
    with pytest.raises(mlrt.MlrtError, match="body"):
        run_mlrt(model([node], feeds, ["y_final", "z_final"]), feeds)


# -- Scan --------------------------------------------------------------------------------
def _sum_body(width=2):
    return body([helper.make_node("Add", ["sum_in", "next"], ["sum_out"]),
                 helper.make_node("Mul", ["sum_out", "next"], ["prod"])],
                [vi("sum_in", F, [width]), vi("next", F, [width])],
                [vi("sum_out", F, [width]), vi("sum_out", F, [width]), vi("prod", F, [width])])


@pytest.mark.parametrize("steps", [1, 2, 13, 127])
def test_scan9_sum(steps):
    feeds = {"init": f32(2), "x": f32(steps, 2)}
    node = helper.make_node("Scan", ["init", "x"], ["y", "z", "p"], num_scan_inputs=1, body=_sum_body())
    got = run_both(model([node], feeds, ["y", "z", "p"], opset=11), feeds)
    np.testing.assert_allclose(got[1], feeds["init"] + np.cumsum(feeds["x"], axis=0), rtol=1e-5, atol=1e-5)


def test_scan9_zero_steps():
    feeds = {"init": f32(2), "x": np.zeros((0, 2), np.float32)}
    node = helper.make_node("Scan", ["init", "x"], ["y", "z", "p"], num_scan_inputs=1, body=_sum_body(),
                            scan_output_axes=[1, -1])
    y, z, p = run_mlrt(model([node], feeds, ["y", "z", "p"], opset=11), feeds)
    same(y, feeds["init"])
    assert z.shape == (2, 0) and p.shape == (2, 0)


def _scan9_expected(init, x, in_axis, in_dir, out_axes, out_dirs):
    """The spec's pseudo-code for _sum_body."""
    xs = np.moveaxis(x, in_axis, 0)
    if in_dir:
        xs = xs[::-1]
    st, sums, prods = init, [], []
    for t in range(xs.shape[0]):
        st = st + xs[t]
        sums.append(st)
        prods.append(st * xs[t])
    outs = []
    for items, ax, d in zip((sums, prods), out_axes, out_dirs):
        outs.append(np.stack(items[::-1] if d else items, axis=ax))
    return [st] + outs


@pytest.mark.parametrize("in_axis,in_dir,out_axes,out_dirs", [(1, 0, (0, 0), (0, 0)), (0, 1, (0, 0), (0, 0)),
                                                              (1, 1, (1, -1), (0, 1)), (-1, 0, (-2, 1), (1, 1))])
def test_scan9_axes_and_directions(in_axis, in_dir, out_axes, out_dirs):
    x = f32(2, 5) if in_axis in (1, -1) else f32(5, 2)
    feeds = {"init": f32(2), "x": x}
    node = helper.make_node("Scan", ["init", "x"], ["y", "z", "p"], num_scan_inputs=1, body=_sum_body(),
                            scan_input_axes=[in_axis], scan_input_directions=[in_dir],
                            scan_output_axes=list(out_axes), scan_output_directions=list(out_dirs))
    got = run_mlrt(model([node], feeds, ["y", "z", "p"], opset=16), feeds)
    expected = _scan9_expected(feeds["init"], x, in_axis, in_dir, out_axes, out_dirs)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_scan9_bidirectional_and_outer_value():
    b = body([helper.make_node("Add", ["fwd", "bwd"], ["both"]), helper.make_node("Add", ["both", "bias"], ["out"])],
             [vi("fwd", F, [3]), vi("bwd", F, [3])], [vi("out", F, [3])])
    feeds = {"x": f32(4, 3), "bias": f32(3)}
    node = helper.make_node("Scan", ["x", "x"], ["y"], num_scan_inputs=2, body=b, scan_input_directions=[0, 1])
    got = run_mlrt(model([node], feeds, ["y"], opset=11), feeds)[0]
    np.testing.assert_allclose(got, feeds["x"] + feeds["x"][::-1] + feeds["bias"], rtol=1e-6)


def test_scan9_lengths_must_agree():
    b = body([helper.make_node("Add", ["a", "b"], ["o"])], [vi("a", F, [2]), vi("b", F, [2])], [vi("o", F, [2])])
    feeds = {"x": f32(4, 2), "w": f32(3, 2)}
    node = helper.make_node("Scan", ["x", "w"], ["y"], num_scan_inputs=2, body=b)
    with pytest.raises(mlrt.MlrtError, match="steps"):
        run_mlrt(model([node], feeds, ["y"], opset=11), feeds)


def _scan8_expected(init, x, lens, dirs):
    batch, max_len = x.shape[:2]
    finals, sums = [], np.zeros(x.shape, np.float32)
    prods = np.zeros(x.shape, np.float32)
    for b in range(batch):
        st = init[b]
        for t in range(lens[b]):
            xt = x[b, t if dirs[0] == 0 else lens[b] - 1 - t]
            st = st + xt
            sums[b, t], prods[b, t] = st, st * xt
        finals.append(st)
    return [np.stack(finals), sums, prods]


@pytest.mark.parametrize("lens,dirs", [(None, [0]), ([3, 1], [0]), ([2, 0], [1]), (None, [1])])
def test_scan8_batches(lens, dirs):
    feeds = {"init": f32(2, 2), "x": f32(2, 3, 2)}
    inputs = ["", "init", "x"]
    if lens is not None:
        feeds["lens"] = np.array(lens, np.int32)
        inputs[0] = "lens"
    node = helper.make_node("Scan", inputs, ["y", "z", "p"], num_scan_inputs=1, body=_sum_body(), directions=dirs)
    got = run_mlrt(model([node], feeds, ["y", "z", "p"], opset=8), feeds)
    expected = _scan8_expected(feeds["init"], feeds["x"], lens or [3, 3], dirs)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_scan8_bad_sequence_lens():
    feeds = {"init": f32(2, 2), "x": f32(2, 3, 2), "lens": np.array([4, 1], np.int32)}
    node = helper.make_node("Scan", ["lens", "init", "x"], ["y", "z", "p"], num_scan_inputs=1, body=_sum_body())
    with pytest.raises(mlrt.MlrtError, match="sequence_lens"):
        run_mlrt(model([node], feeds, ["y", "z", "p"], opset=8), feeds)


# -- SequenceMap -------------------------------------------------------------------------
def _map_body():
    return body([helper.make_node("Add", ["a", "b"], ["a_plus_b"]), helper.make_node("Mul", ["a", "b"], ["a_times_b"])],
                [vi("a"), vi("b")], [vi("a_plus_b"), vi("a_times_b")])


@pytest.mark.parametrize("second_is_seq", [False, True])
@pytest.mark.parametrize("n", [0, 1, 4])
def test_sequence_map(n, second_is_seq):
    declared = {"s": [f32(3)], "t": [f32(3)] if second_is_seq else f32(3)}
    feeds = {"s": [f32(3) for _ in range(n)], "t": [f32(3) for _ in range(n)] if second_is_seq else f32(3)}
    m = model([helper.make_node("SequenceMap", ["s", "t"], ["sums", "prods"], body=_map_body())], declared,
              ["sums", "prods"])
    if n == 0:
        assert run_mlrt(m, feeds) == [[], []]
    else:
        run_both(m, feeds)


def test_sequence_map_shapes_vary():
    b = body([helper.make_node("Relu", ["a"], ["r"])], [vi("a")], [vi("r")])
    feeds = {"s": [f32(1), f32(2, 3), f32(13, 1, 2)]}
    run_both(model([helper.make_node("SequenceMap", ["s"], ["out"], body=b)], feeds, ["out"]), feeds)


def test_sequence_map_length_mismatch():
    feeds = {"s": [f32(3), f32(3)], "t": [f32(3)]}
    node = helper.make_node("SequenceMap", ["s", "t"], ["sums", "prods"], body=_map_body())
    with pytest.raises(mlrt.MlrtError, match="tensors"):
        run_mlrt(model([node], feeds, ["sums", "prods"]), feeds)


def test_loop_eager_body_on_scalars():
    """A body with host ops runs node by node; its rank-0 values reach C kernels as rank 0."""
    b = body([helper.make_node("Not", ["c_in"], ["stop"]), helper.make_node("Not", ["stop"], ["c_out"]),
              helper.make_node("SequenceInsert", ["s_in", "i"], ["s_out"])],
             [vi("i", I64, []), vi("c_in", B, []), seq_vi("s_in", I64)], [vi("c_out", B, []), seq_vi("s_out", I64)])
    nodes = [helper.make_node("SequenceEmpty", [], ["e"], dtype=I64), helper.make_node("Loop", ["M", "c", "e"], ["s"],
                                                                                     body=b)]
    feeds = {"M": np.array(3, np.int64), "c": np.array(True)}
    run_both(model(nodes, feeds, ["s"]), feeds)


# -- a body reading a value that a later node in file order produces ------------------------
def test_if_branch_reads_a_value_produced_later_in_node_order():
    then = body([helper.make_node("Add", ["b", "b"], ["t"])], [], [vi("t")])
    other = body([helper.make_node("Sub", ["b", "b"], ["e"])], [], [vi("e")])
    nodes = [helper.make_node("Add", ["x", "x"], ["a"]), helper.make_node("Add", ["a", "a"], ["b"]),
             helper.make_node("If", ["c"], ["r"], then_branch=then, else_branch=other)]
    feeds = {"x": f32(2), "c": np.array(True)}
    run_both(model(nodes, feeds, ["r"]), feeds)

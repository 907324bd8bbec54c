"""The ONNX checker is advice (docs/reliability.md, "The checker is advice").

A catalogue of models onnx's checker refuses, each made the way an exporter or a hand
edit makes them.  Where onnxruntime loads and runs one, mlrt does too, with the same
outputs (and a warning); where onnxruntime refuses one, so does mlrt, with an MlrtError
that says what is wrong and where -- never a crash, a hang or an internal error.
`ORT_RUNS` holds what onnxruntime does with each (checked against it where it is
installed), so the refusals are checked without it too.
"""

import logging
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import mlrt
import mlrt.lowlevel as ml

X = np.array([[-1.5, 0.0, 2.0], [3.0, -4.0, 0.5]], np.float32)
FEEDS = {"x": X}


def vi(name, elem=T.FLOAT, shape=(2, 3)):
    return h.make_tensor_value_info(name, elem, None if shape is None else list(shape))


def make(nodes, inputs=None, outputs=None, inits=(), opset=17, ir=8, name="g", imports=(), **kw):
    g = h.make_graph(nodes, name, [vi("x")] if inputs is None else inputs, [vi("y")] if outputs is None else outputs,
                     list(inits), **kw)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in imports])
    model.ir_version = ir
    return model


def relu_neg():
    return [h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Neg", ["r"], ["y"], name="neg")]


def ones(name="w", dims=(2, 3), value=1.0):
    return h.make_tensor(name, T.FLOAT, list(dims), np.full(int(np.prod(dims)), value, np.float32))


def raw_short(name="w"):
    t = h.make_tensor(name, T.FLOAT, [2, 3], np.ones(6, np.float32).tobytes(), raw=True)
    t.raw_data = t.raw_data[:20]
    return t


def add_w(inits, **kw):
    return make([h.make_node("Add", ["x", "w"], ["y"], name="add")], inits=inits, **kw)


def if_node(then_nodes, then_out="t", then_name="then", else_name="else", output="y"):
    then = h.make_graph(then_nodes, then_name, [], [vi(then_out)])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], else_name, [], [vi("e")])
    return h.make_node("If", ["c"], [output], name="if", then_branch=then, else_branch=other)


TRUE = h.make_tensor("c", T.BOOL, [], [True])


def twice(domain="local"):
    return h.make_function(domain, "Twice", ["a"], ["b"], [h.make_node("Add", ["a", "a"], ["b"])],
                           [h.make_opsetid("", 17)])


# -- the catalogue: each builds (model, feeds) ---------------------------------------------------

def out_of_order():  # nodes listed backwards (hand-merged graphs, some converters)
    return make(relu_neg()[::-1]), FEEDS


def out_of_order_with_subgraph():  # the If, whose branch reads 'r', listed before the node making 'r'
    nodes = [if_node([h.make_node("Neg", ["r"], ["t"])]), h.make_node("Relu", ["x"], ["r"], name="relu")]
    return make(nodes, inits=[TRUE]), FEEDS


def out_of_order_large_weights():  # the same, with weights the checker is sent without (checker_shell)
    w = h.make_tensor("w", T.FLOAT, [3, 8192], np.linspace(-1, 1, 3 * 8192, dtype=np.float32))
    nodes = [h.make_node("Relu", ["m"], ["y"], name="relu"), h.make_node("MatMul", ["x", "w"], ["m"], name="mm")]
    return make(nodes, inits=[w], outputs=[vi("y", shape=(2, 8192))]), FEEDS


def ir3_initializers_undeclared_out_of_order():
    nodes = [h.make_node("Relu", ["s"], ["y"], name="relu"), h.make_node("Add", ["x", "w"], ["s"], name="add")]
    return make(nodes, inits=[ones(value=-0.5)], ir=3, opset=8), FEEDS


def ir_version_missing():  # ir_version never set (0)
    return make(relu_neg(), ir=0), FEEDS


def ir_version_missing_initializer_as_input():  # ... with an initializer also declared an input (IR < 4 style)
    return add_w([ones()], inputs=[vi("x"), vi("w")], ir=0, opset=8), FEEDS


def empty_graph_name():
    return make(relu_neg(), name=""), FEEDS


def metadata_duplicate_keys():
    model = make(relu_neg())
    model.metadata_props.extend([onnx.StringStringEntryProto(key="k", value="1"),
                                 onnx.StringStringEntryProto(key="k", value="2")])
    return model, FEEDS


def initializer_twice_same_type():  # the last one holds
    return add_w([ones(value=1.0), ones(value=2.0)]), FEEDS


def initializer_without_name():
    return make(relu_neg(), inits=[ones("")]), FEEDS


def unused_initializer_malformed():  # onnxruntime drops unused initializers unread
    return make(relu_neg(), inits=[raw_short()]), FEEDS


def unused_function_malformed():
    f = h.make_function("local", "Bad", ["a"], ["b"], [h.make_node("Frobnicate", ["a"], ["b"])],
                        [h.make_opsetid("", 17)])
    model = make(relu_neg(), imports=[("local", 1)])
    model.functions.append(f)
    return model, FEEDS


def unused_import_version_out_of_range():
    model = make(relu_neg())
    model.opset_import.append(h.make_opsetid("com.microsoft", 1 << 40))
    return model, FEEDS


def microsoft_fusedmatmul_not_imported():  # a fusion pasted in by hand, the opset import forgotten
    w = h.make_tensor("w", T.FLOAT, [3, 2], np.arange(6, dtype=np.float32))
    node = h.make_node("FusedMatMul", ["x", "w"], ["y"], domain="com.microsoft", alpha=2.0, name="fmm")
    return make([node], outputs=[vi("y", shape=(2, 2))], inits=[w]), FEEDS


def microsoft_gelu_not_imported():
    return make([h.make_node("Gelu", ["x"], ["y"], domain="com.microsoft", name="gelu")]), FEEDS


def ml_normalizer_not_imported():
    return make([h.make_node("Normalizer", ["x"], ["y"], domain="ai.onnx.ml", norm="L1", name="norm")]), FEEDS


# refused by onnxruntime (and mlrt)

def value_made_twice():  # SSA violation
    return make([h.make_node("Relu", ["x"], ["y"], name="relu"), h.make_node("Neg", ["x"], ["y"], name="neg")]), FEEDS


def graph_input_made_by_node():
    return make([h.make_node("Relu", ["x"], ["x"], name="relu"), h.make_node("Neg", ["x"], ["y"], name="neg")]), FEEDS


def initializer_made_by_node():
    return make(relu_neg(), inits=[ones("r")]), FEEDS


def input_never_made():
    return make([h.make_node("Add", ["x", "z"], ["y"], name="add")]), FEEDS


def cycle():
    nodes = [h.make_node("Add", ["x", "b"], ["a"], name="add"), h.make_node("Relu", ["a"], ["b"], name="relu"),
             h.make_node("Neg", ["a"], ["y"], name="neg")]
    return make(nodes), FEEDS


def output_never_made():
    return make(relu_neg(), outputs=[vi("y"), vi("z")]), FEEDS


def output_without_name():
    return make(relu_neg(), outputs=[vi("y"), vi("")]), FEEDS


def input_declared_twice():
    return make(relu_neg(), inputs=[vi("x"), vi("x")]), FEEDS


def input_without_name():  # onnxruntime loads it, then asks for a feed named "" (ONNX's "no input here")
    return make(relu_neg(), inputs=[vi("x"), vi("")]), FEEDS


def input_without_type():
    return make(relu_neg(), inputs=[onnx.ValueInfoProto(name="x")]), FEEDS


def initializer_twice_other_dims():
    return add_w([ones(dims=(1,)), ones()]), FEEDS


def initializer_raw_data_short():
    return add_w([raw_short()]), FEEDS


def initializer_values_in_wrong_field():
    w = h.make_tensor("w", T.INT64, [2, 3], np.ones(6, np.int64))
    w.ClearField("int64_data")
    w.float_data.extend([1.0] * 6)
    nodes = [h.make_node("Cast", ["w"], ["wf"], to=T.FLOAT, name="cast"), h.make_node("Add", ["x", "wf"], ["y"], name="add")]
    return make(nodes, inits=[w]), FEEDS


def initializer_type_undefined():
    w = ones()
    w.data_type = T.UNDEFINED
    return add_w([w]), FEEDS


def initializer_external_without_file():
    w = ones()
    w.ClearField("float_data")
    w.data_location = T.EXTERNAL
    w.external_data.add(key="location", value="w.bin")
    return add_w([w]), FEEDS


def ir_version_too_new():
    return make(relu_neg(), ir=onnx.IR_VERSION + 1), FEEDS


def ir2_with_opset_import():
    return make([h.make_node("Relu", ["x"], ["y"], name="relu")], opset=1, ir=2), FEEDS


def no_opset_import():
    model = make(relu_neg())
    del model.opset_import[:]
    return model, FEEDS


def opset_zero():
    return make(relu_neg(), opset=0), FEEDS


def no_graph():
    model = make(relu_neg())
    model.ClearField("graph")
    return model, {}


def attribute_unknown():
    return make([h.make_node("Relu", ["x"], ["y"], name="relu", bogus=3)]), FEEDS


def attribute_wrong_type():
    return make([h.make_node("Softmax", ["x"], ["y"], name="softmax", axis=1.0)]), FEEDS


def attribute_without_type():  # an old exporter's
    node = h.make_node("Softmax", ["x"], ["y"], name="softmax")
    node.attribute.add(name="axis", i=0)
    return make([node]), FEEDS


def attribute_twice():
    node = h.make_node("Softmax", ["x"], ["y"], name="softmax", axis=1)
    node.attribute.append(h.make_attribute("axis", 0))
    return make([node]), FEEDS


def attribute_required_missing():
    return make([h.make_node("Cast", ["x"], ["y"], name="cast")]), FEEDS


def too_many_inputs():
    return make([h.make_node("Relu", ["x", "x"], ["y"], name="relu")]), FEEDS


def op_type_empty():
    return make([h.make_node("", ["x"], ["y"], name="nameless")]), FEEDS


def op_unknown_in_default_domain():
    return make([h.make_node("Frobnicate", ["x"], ["y"], name="frob")]), FEEDS


def op_deprecated():
    s = h.make_tensor("s", T.FLOAT, [2], [1.0, 2.0])
    node = h.make_node("Upsample", ["x", "s"], ["y"], mode="nearest", name="up")
    return make([node], inits=[s], outputs=[vi("y", shape=(2, 6))], opset=10), FEEDS


def subgraph_out_of_order():  # onnxruntime sorts the main graph only
    nodes = [h.make_node("Neg", ["t0"], ["t"]), h.make_node("Relu", ["x"], ["t0"])]
    return make([if_node(nodes)], inits=[TRUE]), FEEDS


def subgraph_shadows_outer_value():
    then = [h.make_node("Relu", ["x"], ["r"]), h.make_node("Neg", ["r"], ["t"])]
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"), if_node(then, output="y0"),
             h.make_node("Add", ["y0", "r"], ["y"], name="add")]
    return make(nodes, inits=[TRUE]), FEEDS


def subgraph_without_name():
    return make([if_node([h.make_node("Neg", ["x"], ["t"])], then_name="", else_name="")], inits=[TRUE]), FEEDS


def function_domain_not_imported():
    model = make([h.make_node("Twice", ["x"], ["y"], domain="local", name="twice")])
    model.functions.append(twice())
    return model, FEEDS


def function_given_twice():
    model = make(relu_neg(), imports=[("local", 1)])
    model.functions.extend([twice(), twice()])
    return model, FEEDS


# case -> what onnxruntime does: True (loads and runs) or False (refuses)
ORT_RUNS = {
    out_of_order: True, out_of_order_with_subgraph: True, out_of_order_large_weights: True,
    ir3_initializers_undeclared_out_of_order: True, ir_version_missing: True,
    ir_version_missing_initializer_as_input: True, empty_graph_name: True, metadata_duplicate_keys: True,
    initializer_twice_same_type: True, initializer_without_name: True, unused_initializer_malformed: True,
    unused_function_malformed: True, unused_import_version_out_of_range: True,
    microsoft_fusedmatmul_not_imported: True, microsoft_gelu_not_imported: True, ml_normalizer_not_imported: True,
    value_made_twice: False, graph_input_made_by_node: False, initializer_made_by_node: False, input_never_made: False,
    cycle: False, output_never_made: False, output_without_name: False, input_declared_twice: False,
    input_without_name: False, input_without_type: False, initializer_twice_other_dims: False,
    initializer_raw_data_short: False, initializer_values_in_wrong_field: False, initializer_type_undefined: False,
    initializer_external_without_file: False, ir_version_too_new: False, ir2_with_opset_import: False,
    no_opset_import: False, opset_zero: False, no_graph: False, attribute_unknown: False,
    attribute_wrong_type: False, attribute_without_type: False, attribute_twice: False,
    attribute_required_missing: False, too_many_inputs: False, op_type_empty: False,
    op_unknown_in_default_domain: False, op_deprecated: False, subgraph_out_of_order: False,
    subgraph_shadows_outer_value: False, subgraph_without_name: False, function_domain_not_imported: False,
    function_given_twice: False,
}

# what mlrt says of those it runs (a warning) and of those it refuses (InvalidModel): what and where
SAYS = {
    out_of_order: "topologically sorted.*name: neg",
    out_of_order_with_subgraph: "topologically sorted.*OpType: If",
    out_of_order_large_weights: "topologically sorted.*name: relu",
    ir3_initializers_undeclared_out_of_order: "topologically sorted",
    ir_version_missing: "ir_version", ir_version_missing_initializer_as_input: "ir_version",
    empty_graph_name: "'name' of 'graph'", metadata_duplicate_keys: "duplicate keys in metadata_props",
    initializer_twice_same_type: "w initializer name is not unique",
    initializer_without_name: "initializers must have a non-empty name",
    unused_initializer_malformed: "tensor name: w.*raw_data size",
    unused_function_malformed: "Frobnicate", unused_import_version_out_of_range: None,
    microsoft_fusedmatmul_not_imported: "'com.microsoft' run at its opset 1",
    microsoft_gelu_not_imported: "'com.microsoft' run at its opset 1",
    ml_normalizer_not_imported: "'ai.onnx.ml' run at its opset 5",
    value_made_twice: "value 'y' is produced twice \\(node 'neg'\\)",
    graph_input_made_by_node: "value 'x' is produced twice \\(node 'relu'\\)",
    initializer_made_by_node: "value 'r' is produced twice \\(node 'relu'\\)",
    input_never_made: "node 'add' reads 'z', which no node, input or initializer provides",
    cycle: "cycle through node 'add'",
    output_never_made: "graph output 'z' is not produced", output_without_name: "graph output '' is not produced",
    input_declared_twice: "graph input 'x' is declared twice",
    input_without_name: "'name' of 'value_info' is required to be non-empty",
    input_without_type: "graph input 'x' has no type",
    initializer_twice_other_dims: "initializer 'w' is given twice.*float \\[1\\] and float \\[2, 3\\]",
    initializer_raw_data_short: "initializer 'w' cannot be read: its raw data has 20 bytes.*needs 24",
    initializer_values_in_wrong_field: "initializer 'w' cannot be read: its values are in float_data.*int64_data",
    initializer_type_undefined: "initializer 'w' cannot be read.*UNDEFINED",
    initializer_external_without_file: "initializer 'w'.*w.bin",
    ir_version_too_new: f"ir_version {onnx.IR_VERSION + 1} is higher",
    ir2_with_opset_import: "IR version < 3 cannot have opset_import",
    no_opset_import: "must specify opset_import", opset_zero: "Relu with domain_version of 0.*Name: relu",
    no_graph: "no graph",
    attribute_unknown: "Unrecognized attribute: bogus for operator Relu.*Name: relu",
    attribute_wrong_type: "Mismatched attribute type.*axis.*Name: softmax",
    attribute_without_type: "'type' of 'attr'.*Name: softmax",
    attribute_twice: "Attribute 'axis' appeared multiple times.*Name: softmax",
    attribute_required_missing: "Required attribute 'to' is missing.*Name: cast",
    too_many_inputs: "input size 2 not in range.*Name: relu",
    op_type_empty: "'op_type' of 'node'.*Name: nameless",
    op_unknown_in_default_domain: "No Op registered for Frobnicate.*Name: frob",
    op_deprecated: "Upsample is deprecated.*Name: up",
    subgraph_out_of_order: "topologically sorted.*input 't0'.*Name: if",
    subgraph_shadows_outer_value: "'r' has been used as output names multiple times.*Name: if",
    subgraph_without_name: "'name' of 'graph'.*Name: if",
    function_domain_not_imported: "No opset import for domain 'local'.*Name: twice",
    function_given_twice: "multiple local functions with the same implementation id 'local::Twice'",
}
CASES = list(ORT_RUNS)
REFUSED = [c for c in CASES if not ORT_RUNS[c]]


def checker_refuses(model) -> None:
    with pytest.raises(Exception):  # (ValidationError, or protobuf's own complaint)
        onnx.checker.check_model(model)


def mlrt_outcome(data, feeds):
    """(session, outputs, None) or (None, None, the MlrtError): anything else fails the test."""
    try:
        s = ml.InferenceSession(data)
        return s, s.run(None, feeds), None
    except mlrt.MlrtError as exc:
        return None, None, exc


@pytest.mark.parametrize("case", REFUSED, ids=lambda c: c.__name__)
def test_refused_saying_what_and_where(case):
    model, feeds = case()
    checker_refuses(model)
    with pytest.raises(mlrt.InvalidModel, match=SAYS[case]):
        ml.InferenceSession(model.SerializeToString()).run(None, feeds)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_as_onnxruntime_does(case, caplog):
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the oracle of this catalogue")
    model, feeds = case()
    checker_refuses(model)
    data = model.SerializeToString()
    try:
        theirs = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        expected = theirs.run(None, feeds)
    except Exception:
        theirs = expected = None
    assert (expected is not None) == ORT_RUNS[case], "onnxruntime does otherwise than ORT_RUNS says"
    with caplog.at_level(logging.WARNING, logger="mlrt"):
        mine, got, error = mlrt_outcome(data, feeds)
    if expected is None:
        assert isinstance(error, mlrt.InvalidModel), "onnxruntime refuses this model; mlrt ran it"
        return
    assert error is None, f"onnxruntime runs this model; mlrt says: {error}"
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert [i.name for i in mine.get_inputs()] == [i.name for i in theirs.get_inputs()]
    assert [o.name for o in mine.get_outputs()] == [o.name for o in theirs.get_outputs()]
    assert mine.get_modelmeta().custom_metadata_map == theirs.get_modelmeta().custom_metadata_map
    warned = " ".join(r.getMessage() for r in caplog.records if r.name == "mlrt")
    if SAYS[case] is not None:
        assert re.search(SAYS[case], warned), warned

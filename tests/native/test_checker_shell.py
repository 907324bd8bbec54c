"""The checker is sent the model without the bytes of its large weights
(native/checker_shell.py): every model, well-formed or not, must load exactly as it
does when the checker gets the whole model -- the same error, or the same graph and
the same inferred types."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import mlrt
from mlrt.native import checker_shell, load as loading

W = np.arange(16 * 32, dtype=np.float32).reshape(16, 32) / 100  # 2 KB: a weight left out
IR = 8


@pytest.fixture(autouse=True)
def small_shells(monkeypatch):
    """Shells for these small models too (SHELL_MIN would send them whole)."""
    monkeypatch.setattr(checker_shell, "SHELL_MIN", 0)


def weight(name="w", value=W):
    return numpy_helper.from_array(value, name)


def matmul_model(inits=None, nodes=None, inputs=None, outputs=None, value_info=(), ir=IR, opset=17):
    nodes = nodes if nodes is not None else [helper.make_node("MatMul", ["x", "w"], ["y"]),
                                             helper.make_node("Relu", ["y"], ["z"])]
    inputs = inputs if inputs is not None else [helper.make_tensor_value_info("x", T.FLOAT, [2, 16])]
    outputs = outputs if outputs is not None else [helper.make_tensor_value_info("z", T.FLOAT, [2, 32])]
    g = helper.make_graph(nodes, "g", inputs, outputs, inits if inits is not None else [weight()],
                          value_info=list(value_info))
    return helper.make_model(g, ir_version=ir, opset_imports=[helper.make_opsetid("", opset)])


def constant_model(value=None, ir=IR, opset=17, extra_nodes=(), **attrs):
    t = weight("c", W) if value is None else value
    nodes = [helper.make_node("Constant", [], ["w"], value=t, **attrs), *extra_nodes,
             helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])]
    return matmul_model(inits=[], nodes=nodes, ir=ir, opset=opset)


def outcome(data):
    try:
        g = loading.load(data)
    except mlrt.InvalidModel as exc:
        return ("InvalidModel", str(exc))
    return ([(n.op_type, list(n.input), list(n.output)) for n in g.nodes], sorted(g.initializers),
            sorted(g.value_types.items()))


def loads_as_whole(model, monkeypatch, left_out=True):
    """The model loads as it does when the checker gets all of it; `left_out`: and the
    shell does leave something out of it."""
    data = model.SerializeToString()
    assert (checker_shell.shell(loading.read_model(data)[0]) is not None) == left_out
    with_shell = outcome(data)
    monkeypatch.setattr(loading, "shell", lambda model, size=None: None)
    whole = outcome(data)
    assert with_shell == whole
    return with_shell


def raw(t, nbytes):
    t.raw_data = t.raw_data[:nbytes] if nbytes <= len(t.raw_data) else t.raw_data + b"\0" * (nbytes - len(t.raw_data))
    return t


def test_weights_do_not_reach_the_checker():
    shell = checker_shell.shell(constant_model(extra_nodes=[]))
    assert shell is not None and len(shell.model.SerializeToString()) < W.nbytes
    assert [n.op_type for n in shell.model.graph.node] == ["RandomNormal", "MatMul", "Relu"]
    shell = checker_shell.shell(matmul_model())
    assert [i.name for i in shell.model.graph.input] == ["x", "w"] and not shell.model.graph.initializer
    small = matmul_model(inits=[weight("w", np.ones((16, 4), np.float32))],
                         outputs=[helper.make_tensor_value_info("z", T.FLOAT, [2, 4])])
    assert checker_shell.shell(small) is None  # 256 bytes: sent as it is


def test_small_models_are_sent_whole(monkeypatch):
    monkeypatch.setattr(checker_shell, "SHELL_MIN", 64 << 10)
    assert checker_shell.shell(matmul_model()) is None  # 2 KB of weights
    big = np.ones((128, 256), np.float32)  # 128 KB
    model = matmul_model(inits=[weight("w", big)], inputs=[helper.make_tensor_value_info("x", T.FLOAT, [2, 128])],
                         outputs=[helper.make_tensor_value_info("z", T.FLOAT, [2, 256])])
    assert checker_shell.shell(model) is not None


@pytest.mark.parametrize("make", [matmul_model, constant_model], ids=["initializer", "constant"])
def test_well_formed_models_load_the_same(make, monkeypatch):
    nodes, _, types = loads_as_whole(make(), monkeypatch)
    assert dict(types)["z"].shape == (2, 32)


@pytest.mark.parametrize("nbytes", [W.nbytes - 4, W.nbytes + 4, 0])
def test_raw_data_of_the_wrong_length(nbytes, monkeypatch):
    got = loads_as_whole(matmul_model(inits=[raw(weight(), nbytes)]), monkeypatch)
    assert got[0] == "InvalidModel"
    got = loads_as_whole(constant_model(raw(weight("c"), nbytes)), monkeypatch)
    if nbytes < W.nbytes:
        assert got[0] == "InvalidModel" and "ONNX checker" in got[1]


def test_initializers_the_checker_refuses(monkeypatch):
    both = weight()
    both.float_data.extend([1.0])  # two value fields
    assert loads_as_whole(matmul_model(inits=[both]), monkeypatch, left_out=False)[0] == "InvalidModel"
    # an initializer given twice: onnxruntime takes the last one, where both have one type and dims
    # (so does mlrt: the checker is advice), and refuses them where they differ
    twice = loads_as_whole(matmul_model(inits=[weight(), weight()]), monkeypatch, left_out=False)
    assert twice[0] != "InvalidModel" and twice[1] == ["w"], twice
    other = loads_as_whole(matmul_model(inits=[weight("w", W[:1]), weight()]), monkeypatch, left_out=False)
    assert other[0] == "InvalidModel" and "given twice" in other[1]
    # IR 3 asks every initializer to be a graph input too; onnxruntime runs a model whose are not, and so
    # does mlrt (the checker is given them declared): the same with the shell as without
    ir3 = loads_as_whole(matmul_model(ir=3, opset=8), monkeypatch, left_out=False)
    assert ir3[0] != "InvalidModel" and ir3[1] == ["w"], ir3
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["w"]),
             helper.make_node("Relu", ["y"], ["z"])]  # a node writes the initializer's name
    assert "value 'w' is produced twice" in loads_as_whole(matmul_model(nodes=nodes), monkeypatch)[1]


@pytest.mark.parametrize("declared", [[16, 32], [16, 33], ["n", 32], [16]])
def test_initializers_that_are_inputs(declared, monkeypatch):
    inputs = [helper.make_tensor_value_info("x", T.FLOAT, [2, 16]),
              helper.make_tensor_value_info("w", T.FLOAT, declared)]
    for ir, opset in ((3, 8), (IR, 17)):
        loads_as_whole(matmul_model(inputs=inputs, ir=ir, opset=opset), monkeypatch, left_out=declared == [16, 32])


def test_initializers_declared_elsewhere(monkeypatch):
    as_output = [helper.make_tensor_value_info("z", T.FLOAT, [2, 32]), helper.make_tensor_value_info("w", T.FLOAT, [3])]
    loads_as_whole(matmul_model(outputs=as_output), monkeypatch, left_out=False)
    info = [helper.make_tensor_value_info("w", T.FLOAT, [4, 4])]
    loads_as_whole(matmul_model(value_info=info), monkeypatch, left_out=False)


def test_constants_the_checker_refuses(monkeypatch):
    loads_as_whole(constant_model(value_float=1.0), monkeypatch, left_out=False)  # two values
    loads_as_whole(constant_model(sparse_value=helper.make_sparse_tensor(weight("v", np.ones(2, np.float32)),
                                                                         weight("i", np.arange(2)), [4])),
                   monkeypatch, left_out=False)
    unsorted = constant_model()
    unsorted.graph.node.insert(0, unsorted.graph.node.pop(1))  # MatMul before the Constant it reads
    got = loads_as_whole(unsorted, monkeypatch)  # sorted, as onnxruntime sorts it (the checker is advice)
    assert [n[0] for n in got[0]] == ["Constant", "MatMul", "Relu"] and dict(got[2])["z"].shape == (2, 32)
    clash = constant_model()
    clash.graph.node[0].output[0] = "x"  # the graph input's name
    clash.graph.node[1].input[1] = "x"
    assert "value 'x' is produced twice" in loads_as_whole(clash, monkeypatch)[1]  # (mlrt's words for the checker's)
    old = loads_as_whole(constant_model(opset=8, ir=3), monkeypatch)
    assert old[0] != "InvalidModel"
    loads_as_whole(constant_model(opset=99), monkeypatch, left_out=False)


def test_constants_in_subgraphs_and_of_other_types_are_sent(monkeypatch):
    """Only main-graph Constants of float types are left out (RandomNormal makes those)."""
    loads_as_whole(constant_model(numpy_helper.from_array(np.ones((16, 32), np.int8))), monkeypatch, left_out=False)
    halves = constant_model(numpy_helper.from_array(np.tile(W, 2).astype(np.float16)))  # 2 KB
    halves.graph.input[0].type.tensor_type.elem_type = T.FLOAT16
    halves.graph.output[0].CopyFrom(helper.make_tensor_value_info("z", T.FLOAT16, [2, 64]))
    loads_as_whole(halves, monkeypatch)
    body = helper.make_graph([helper.make_node("Constant", [], ["c"], value=weight("c")),
                              helper.make_node("MatMul", ["x", "c"], ["out"])],
                             "body", [], [helper.make_tensor_value_info("out", T.FLOAT, [2, 32])])
    cond = helper.make_node("Constant", [], ["cond"], value=numpy_helper.from_array(np.array(True)))
    if_node = helper.make_node("If", ["cond"], ["z"], then_branch=body, else_branch=body)
    got = loads_as_whole(matmul_model(inits=[], nodes=[cond, if_node]), monkeypatch, left_out=False)
    assert dict(got[2])["z"].shape == (2, 32)

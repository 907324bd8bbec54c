"""The partitioner: providers in the user's order, CPU last, memcpy at boundaries,
shape computations on the CPU, the fallback switch and summary, and a provider
defined outside the package, in this file alone (a toy with its own device memory
that runs only Relu), registering and being used: by sessions, and by OrtValue and
IOBinding through its memory methods."""

import logging

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import mlrt
import mlrt.lowlevel as ml
from mlrt.native import partitioner
from mlrt.native.providers import _base as providers_base


class ToyTensor:
    """The toy provider's 'device memory': a wrapped array."""

    def __init__(self, a):
        self.a = np.asarray(a)
        self.dtype, self.shape = self.a.dtype, self.a.shape

    def numpy(self):
        return self.a


class ToyReluProvider(providers_base.ExecutionProvider):
    name = "ToyReluExecutionProvider"
    device = "toy"
    runs = 0

    def supports(self, node, graph):
        return node.op_type == "Relu"

    def compile(self, graph):
        outer = self

        class Runnable:
            def run(self, feeds):
                type(outer).runs += 1
                values = dict(feeds)
                for n in graph.nodes:
                    x = values[n.input[0]]
                    assert isinstance(x, ToyTensor), "the partitioner must copy inputs to the toy device"
                    values[n.output[0]] = ToyTensor(np.maximum(x.a, 0))
                return {v.name: values[v.name] for v in graph.outputs}

        return Runnable()

    def allocate(self, shape, dtype):
        return ToyTensor(np.empty(shape, dtype))

    def to_device(self, array):
        return ToyTensor(array)

    def to_host(self, value):
        return value.a

    def owns(self, value):
        return isinstance(value, ToyTensor)


@pytest.fixture
def toy():
    providers_base.register(ToyReluProvider)
    ToyReluProvider.runs = 0
    yield ToyReluProvider
    providers_base.unregister(ToyReluProvider.name)


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)]).SerializeToString()


def _relu_sandwich():
    return model([h.make_node("Neg", ["x"], ["a"], name="neg"), h.make_node("Relu", ["a"], ["b"], name="relu"),
                  h.make_node("Exp", ["b"], ["y"], name="exp")],
                 [h.make_tensor_value_info("x", TP.FLOAT, [2, 3])], [h.make_tensor_value_info("y", TP.FLOAT, [2, 3])])


def test_outside_provider_registers_and_runs_its_nodes(toy):
    assert toy.name in ml.get_available_providers()
    sess = ml.InferenceSession(_relu_sandwich(), providers=[toy.name, "CPUExecutionProvider"])
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    (y,) = sess.run(None, {"x": x})
    np.testing.assert_allclose(y, np.exp(np.maximum(-x, 0)), rtol=1e-6)
    assert toy.runs == 1
    rows = sess.get_node_assignment()
    assert ("relu", "Relu", toy.name) in rows
    assert ("neg", "Neg", "CPUExecutionProvider") in rows and ("exp", "Exp", "CPUExecutionProvider") in rows
    # one copy to the toy device before Relu, one back after it
    assert sorted(op for _, op, _ in rows if op.startswith("Memcpy")) == ["MemcpyFromHost", "MemcpyToHost"]
    assert sess.get_providers() == [toy.name, "CPUExecutionProvider"]


def test_outside_provider_memory_serves_ortvalue_and_iobinding(toy):
    """OrtValues live on the toy device, a session split across it and the CPU takes
    them as inputs and leaves its output there, all through the provider's memory
    methods: nothing outside this file knows the toy."""
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    v = ml.OrtValue.ortvalue_from_numpy(x, "toy", 0)
    assert v.device_name() == "toy" and isinstance(v._value, ToyTensor)
    np.testing.assert_array_equal(v.numpy(), x)
    v.update_inplace(-x)
    np.testing.assert_array_equal(v.numpy(), -x)
    empty = ml.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32, "toy")
    assert empty.device_name() == "toy" and empty.shape() == [2, 3]

    relu_first = model([h.make_node("Relu", ["x"], ["a"], name="relu"), h.make_node("Neg", ["a"], ["b"], name="neg"),
                        h.make_node("Relu", ["b"], ["y"], name="relu2")],
                       [h.make_tensor_value_info("x", TP.FLOAT, [2, 3])], [h.make_tensor_value_info("y", TP.FLOAT, [2, 3])])
    sess = ml.InferenceSession(relu_first, providers=[toy.name, "CPUExecutionProvider"])
    assert [p for _, op, p in sess.get_node_assignment() if not op.startswith("Memcpy")] == \
        [toy.name, "CPUExecutionProvider", toy.name]
    binding = sess.io_binding()
    binding.bind_ortvalue_input("x", ml.OrtValue.ortvalue_from_numpy(x, "toy"))
    binding.bind_output("y", "toy")
    sess.run_with_iobinding(binding)
    (out,) = binding.get_outputs()
    assert out.device_name() == "toy" and isinstance(out._value, ToyTensor)  # left on the device
    np.testing.assert_array_equal(out.numpy(), np.maximum(-np.maximum(x, 0), 0))
    (y,) = sess.run(None, {"x": ml.OrtValue.ortvalue_from_numpy(x, "toy")})  # plain run: a host result
    assert isinstance(y, np.ndarray) and toy.runs == 4
    with pytest.raises(mlrt.InvalidArgument, match="unknown device_type 'tpu'.*toy"):
        ml.OrtValue.ortvalue_from_numpy(x, "tpu")


def test_provider_order_decides(toy):
    sess = ml.InferenceSession(_relu_sandwich(), providers=["CPUExecutionProvider", toy.name])
    assert all(p == "CPUExecutionProvider" for _, _, p in sess.get_node_assignment())
    sess.run(None, {"x": np.ones((2, 3), np.float32)})
    assert toy.runs == 0


def test_shape_computation_stays_on_cpu(toy):
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape: a provider claiming every node
    still leaves the shape arithmetic on the CPU and gets only the Reshape."""

    class Greedy(ToyReluProvider):
        name = "GreedyExecutionProvider"
        device = "greedy"

        def supports(self, node, graph):
            return True

        def compile(self, graph):
            assert [n.op_type for n in graph.nodes] == ["Reshape"], [n.op_type for n in graph.nodes]

            class Runnable:
                def run(self, feeds):
                    x, shape = feeds["x"], feeds["shape"]
                    assert isinstance(x, ToyTensor) and isinstance(shape, np.ndarray)
                    return {"y": ToyTensor(x.a.reshape(shape))}
            return Runnable()

    providers_base.register(Greedy)
    try:
        m = model([h.make_node("Shape", ["x"], ["s"], name="shape"),
                   h.make_node("Gather", ["s", "zero"], ["d0"], name="gather", axis=0),
                   h.make_node("Unsqueeze", ["d0", "axes"], ["d0u"], name="unsq"),
                   h.make_node("Concat", ["d0u", "minus1"], ["shape"], name="concat", axis=0),
                   h.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
                  [h.make_tensor_value_info("x", TP.FLOAT, [2, 3, 4])], [h.make_tensor_value_info("y", TP.FLOAT, None)],
                  [h.make_tensor("zero", TP.INT64, [], [0]), h.make_tensor("axes", TP.INT64, [1], [0]),
                   h.make_tensor("minus1", TP.INT64, [1], [-1])])
        opts = ml.SessionOptions()
        opts.graph_optimization_level = ml.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ml.InferenceSession(m, opts, providers=[Greedy.name, "CPUExecutionProvider"])
        where = {n: p for n, _, p in sess.get_node_assignment()}
        assert where["reshape"] == Greedy.name
        assert {where[n] for n in ("shape", "gather", "unsq", "concat")} == {"CPUExecutionProvider"}
        # the shape travels as a host value and Shape reads only x's shape: no memcpy but x's upload
        assert [r[1] for r in sess.get_node_assignment() if r[1].startswith("Memcpy")] == ["MemcpyFromHost"]
        x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        (y,) = sess.run(None, {"x": x})
        np.testing.assert_array_equal(y, x.reshape(2, -1))
    finally:
        providers_base._registered.pop(Greedy.name, None)


def test_disable_cpu_fallback_is_an_error(toy):
    opts = ml.SessionOptions()
    opts.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    with pytest.raises(mlrt.NotImplemented, match=r"Exp x1.*Neg x1.*disable_cpu_ep_fallback"):
        ml.InferenceSession(_relu_sandwich(), opts, providers=[toy.name, "CPUExecutionProvider"])
    only_relu = model([h.make_node("Relu", ["x"], ["y"])], [h.make_tensor_value_info("x", TP.FLOAT, [3])],
                      [h.make_tensor_value_info("y", TP.FLOAT, [3])])
    sess = ml.InferenceSession(only_relu, opts, providers=[toy.name, "CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"x": np.array([-1, 0, 2], np.float32)})[0], [0, 0, 2])


def test_summary_line(toy, caplog):
    with caplog.at_level(logging.INFO, logger="mlrt"):
        ml.InferenceSession(_relu_sandwich(), providers=[toy.name, "CPUExecutionProvider"])
    (line,) = [r for r in caplog.records if "nodes on" in r.getMessage()]
    assert line.getMessage().startswith("1 of 3 nodes on ToyReluExecutionProvider; 2 on CPUExecutionProvider "
                                        "(Exp x1, Neg x1); 2 memcpy node(s)")
    assert line.levelno == logging.INFO  # the toy did not ask for a GPU
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mlrt"):
        ml.InferenceSession(_relu_sandwich())
    assert not [r for r in caplog.records if "nodes on" in r.getMessage()]


def test_clustered_order_keeps_a_provider_together(toy):
    """Two independent Relu branches around CPU nodes: the order groups both Relus in
    one piece instead of alternating."""
    m = model([h.make_node("Neg", ["x"], ["a"]), h.make_node("Relu", ["x"], ["r1"]), h.make_node("Neg", ["a"], ["b"]),
               h.make_node("Relu", ["x"], ["r2"]), h.make_node("Sum", ["b", "r1", "r2"], ["y"])],
              [h.make_tensor_value_info("x", TP.FLOAT, [4])], [h.make_tensor_value_info("y", TP.FLOAT, [4])])
    opts = ml.SessionOptions()
    opts.graph_optimization_level = ml.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ml.InferenceSession(m, opts, providers=[toy.name, "CPUExecutionProvider"])
    x = np.array([-1, 2, -3, 4], np.float32)
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], x + 2 * np.maximum(x, 0))
    assert toy.runs == 1
    assert isinstance(sess._runnable, partitioner.Placement)
    assert [p.provider.name for p in sess._runnable.pieces].count(toy.name) == 1


def test_values_read_as_shapes_are_computed_on_the_host(toy):
    """A shape computed from a data input (Add -> Reshape's shape) stays on the CPU even
    when a provider claims the Add: only the Reshape goes to the device."""

    class Greedy(ToyReluProvider):
        name = "Greedy2ExecutionProvider"

        def get_capability(self, graph):
            return [list(range(len(graph.nodes)))]

        def compile(self, graph):
            assert [n.op_type for n in graph.nodes] == ["Reshape"]

            class Runnable:
                def run(self, feeds):
                    return {"y": ToyTensor(feeds["x"].a.reshape(feeds["shape"]))}
            return Runnable()

    providers_base.register(Greedy)
    try:
        m = model([h.make_node("Add", ["n", "one"], ["shape"], name="add"),
                   h.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
                  [h.make_tensor_value_info("x", TP.FLOAT, [2, 6]), h.make_tensor_value_info("n", TP.INT64, [2])],
                  [h.make_tensor_value_info("y", TP.FLOAT, None)], [h.make_tensor("one", TP.INT64, [], [1])])
        sess = ml.InferenceSession(m, providers=[Greedy.name, "CPUExecutionProvider"])
        where = {n: p for n, _, p in sess.get_node_assignment()}
        assert where == {"add": "CPUExecutionProvider", "reshape": Greedy.name, "MemcpyFromHost_x": Greedy.name}
        x = np.arange(12, dtype=np.float32).reshape(2, 6)
        np.testing.assert_array_equal(sess.run(None, {"x": x, "n": np.array([2, 3])})[0], x.reshape(3, 4))
    finally:
        providers_base._registered.pop(Greedy.name, None)


def test_every_provider_allocates_in_its_memory():
    from mlrt.native.providers.cpu import CPUExecutionProvider
    a = CPUExecutionProvider().allocate((2, 3), np.float32)
    assert isinstance(a, np.ndarray) and a.shape == (2, 3) and a.dtype == np.float32
    with pytest.raises(mlrt.ResourceExhausted):
        CPUExecutionProvider().allocate((1 << 40, 1 << 20), np.float32)


@pytest.mark.parametrize("providers", [None, ["OpenCLExecutionProvider", "CPUExecutionProvider"]])
def test_graph_without_nodes_returns_a_copy(providers):
    m = model([], [h.make_tensor_value_info("x", TP.FLOAT, [2])], [h.make_tensor_value_info("x", TP.FLOAT, [2])])
    sess = ml.InferenceSession(m, providers=providers)
    x = np.ones(2, np.float32)
    (y,) = sess.run(None, {"x": x})
    assert y is not x and np.array_equal(y, x) and sess.get_node_assignment() == []


def test_cpu_session_does_not_load_opencl():
    """Listing the providers and running on the CPU never imports pyopencl (about 40 ms
    of a fresh process): the OpenCL side loads when its provider is first used."""
    import subprocess
    import sys
    code = ("import sys, numpy as np, mlrt.lowlevel as ml\n"
            "from onnx import helper, TensorProto as T\n"
            "g = helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'g',\n"
            "    [helper.make_tensor_value_info('x', T.FLOAT, [2])], [helper.make_tensor_value_info('y', T.FLOAT, [2])])\n"
            "s = ml.InferenceSession(helper.make_model(g).SerializeToString())\n"
            "s.run(None, {'x': np.ones(2, np.float32)}); ml.get_available_providers()\n"
            "print('pyopencl' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"

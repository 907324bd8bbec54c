"""mlrt.backend: the onnx.backend.base.Backend protocol, so onnx's own backend
test runner (and anything else written to that protocol) drives mlrt."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType

from .lowlevel import InferenceSession, SessionOptions


class MlrtBackendRep(BackendRep):
    def __init__(self, session: InferenceSession):
        self.session = session

    def run(self, inputs, **kwargs):
        names = [a.name for a in self.session.get_inputs()]
        if isinstance(inputs, dict):
            feeds = dict(inputs)
        else:
            if isinstance(inputs, np.ndarray):
                inputs = [inputs]
            feeds = dict(zip(names, inputs))
        return tuple(self.session.run(None, feeds))


class MlrtBackend(Backend):
    @classmethod
    def is_compatible(cls, model, device: str = "CPU", **kwargs) -> bool:
        return cls.supports_device(device)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU

    @classmethod
    def is_opset_supported(cls, model) -> tuple[bool, str]:
        """(True, "") when the runtime in use has every opset the model imports (of the
        domains it lists), else (False, what is missing), as onnxruntime's backend answers."""
        from . import distribution
        if not isinstance(model, onnx.ModelProto):
            model = onnx.load_model_from_string(model) if isinstance(model, bytes) else onnx.load(model)
        spans = distribution.current_runtime().opsets or {}
        for opset in model.opset_import:
            domain = opset.domain or "ai.onnx"
            span = spans.get(domain)
            if span is not None and not span.get("min", 1) <= opset.version <= span["max"]:
                return False, (f"the model imports {domain} opset {opset.version}; this runtime has "
                               f"{span.get('min', 1)}-{span['max']}")
        return True, ""

    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs) -> MlrtBackendRep:
        if not cls.supports_device(device):
            raise ValueError(f"mlrt backend: device {device} is not supported")
        providers = kwargs.pop("providers", None)  # e.g. ["OpenCLExecutionProvider", "CPUExecutionProvider"]
        options = SessionOptions()
        for key, value in kwargs.items():
            if hasattr(options, key):
                setattr(options, key, value)
        source = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
        return MlrtBackendRep(InferenceSession(source, options, providers=providers))

    @classmethod
    def run_model(cls, model, inputs, device: str = "CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device: str = "CPU", outputs_info=None, **kwargs):
        arrays = [np.asarray(x) for x in inputs]
        graph_inputs = [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                        for name, a in zip(node.input, arrays) if name]
        graph_outputs = [helper.make_empty_tensor_value_info(name) for name in node.output if name]
        g = helper.make_graph([node], "run_node", graph_inputs, graph_outputs)
        opset = kwargs.pop("opset_version", onnx.defs.onnx_opset_version())
        model = helper.make_model(g, opset_imports=[helper.make_opsetid(node.domain or "", opset)])
        feeds = {name: a for name, a in zip(node.input, arrays) if name}
        return tuple(cls.prepare(model, device, **kwargs).session.run(None, feeds))


prepare = MlrtBackend.prepare
run_model = MlrtBackend.run_model
run_node = MlrtBackend.run_node
supports_device = MlrtBackend.supports_device
is_compatible = MlrtBackend.is_compatible
is_opset_supported = MlrtBackend.is_opset_supported
run = run_model  # (onnxruntime.backend's name for it)

__all__ = ["MlrtBackend", "MlrtBackendRep", "prepare", "run_model", "run", "run_node", "supports_device",
           "is_compatible", "is_opset_supported"]

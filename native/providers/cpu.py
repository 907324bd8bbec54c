"""CPUExecutionProvider: the C kernels of libmlrt_core, one native plan per partition."""

from __future__ import annotations

from .. import _lib
from .._lib import ThreadPool, default_threads
from ..ops import lookup
from ..plan.cpu import CPUPartition
from ._base import ExecutionProvider


class CPUExecutionProvider(ExecutionProvider):
    name = "CPUExecutionProvider"

    def __init__(self, options=None, *, intra_op_num_threads: int = 0):
        super().__init__(options, intra_op_num_threads=intra_op_num_threads)
        # at the default thread count the workers are pinned, as onnxruntime's: see
        # native/src/threadpool.c for why a free worker slows runs after an idle pause
        self.pool = ThreadPool(intra_op_num_threads or default_threads(), pinned=not intra_op_num_threads)

    def supports(self, node, graph) -> bool:
        opset = graph.opset(node.domain)
        cls = lookup(node.domain, node.op_type, opset)
        if cls is None:
            return False
        if cls.kernel is None:
            return True
        kernel = cls.kernel or node.op_type
        return _lib.find_kernel(cls.domain, kernel, opset, None) >= 0

    def compile(self, graph):
        return CPUPartition(graph, self.pool)

    def quick_run(self, runnable, feeds: dict, output_names):
        return runnable.quick_run(feeds, output_names)

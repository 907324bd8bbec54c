"""mlrt.native: the runtime core.

    graph.py        the graph IR (Graph, ValueType), topological order
    load/           read a model (onnx), external data, node limit, rewrites, check -> Graph
    optimizer/      named rewrites by level              (one pass per file)
    partitioner.py  nodes to providers                   -> partitions
    providers/      execution providers                  (_base.py is the interface)
    ops/            operator semantics                   (one operator per file)
    plan/           planning for every provider (signature cache, the walk, memory),
                    the CPU's native plans and its partitions
    opencl/         the OpenCL provider's programs, recorders and plans
    _lib.py         the loaded libmlrt_core (cffi ABI mode) and numpy glue
    include/mlrt.h  the C ABI;  src/ the core;  kernels/ the C kernels (one family per file)

The layers above use the subpackages and modules without a leading "_" (graph, load,
ops, optimizer, partitioner, plan, providers, save, ...) and the names in __all__ here:
the loaded library and its numpy glue (_lib.py), imported when first asked for.
"""

from .._lazy import lazy as _lazy

__all__ = ["MAX_RANK", "ThreadPool", "enum_value", "ffi", "fill_tensor", "find_kernel", "kernel_table", "lib",
           "np_type", "onnx_type", "pack_params", "raise_status", "runtime"]

# (the library is found and loaded by the first session, not by importing this package)
__getattr__, __dir__ = _lazy(__name__, globals(), dict.fromkeys(__all__, "._lib"))

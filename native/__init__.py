"""mlrt.native: the runtime core.

    graph.py        load (onnx), validate, order       -> Graph
    optimizer/      named rewrites by level              (one pass per file)
    partitioner.py  nodes to providers                   -> partitions
    providers/      execution providers                  (_base.py is the interface)
    ops/            operator semantics                   (one operator per file)
    plan/           planning for every provider (signature cache, the walk, memory),
                    the CPU's native plans and its partitions
    opencl/         the OpenCL provider's programs, recorders and plans
    _lib.py         the loaded libmlrt_core (cffi ABI mode) and numpy glue
    include/mlrt.h  the C ABI;  src/ the core;  kernels/ the C kernels (one family per file)
"""

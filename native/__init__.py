"""mlrt.native: the runtime core.

    graph.py        load (onnx), validate, order       -> Graph
    optimizer/      named rewrites by level              (one pass per file)
    providers/      execution providers                  (_base.py is the interface; cpu.py)
    ops/            operator semantics                   (one operator per file)
    executor.py     per-signature planning, eager fallback, host operators and subgraphs
    plan.py         a native plan for one input signature
    launch.py       one kernel call; output allocation under the memory limit
    planner.py      arena layout by value lifetime
    _lib.py         the loaded libmlrt_core (cffi ABI mode) and numpy glue
    include/mlrt.h  the C ABI;  src/ the core;  kernels/ the C kernels (one family per file)
"""

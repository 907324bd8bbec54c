"""Planning: one skeleton for every provider.

A partition is planned once per input signature and the plan is run many times.
Every provider plans the same way; it supplies only how a step is recorded and run:

    cache.py    the signature a plan is kept under, and the per-partition PlanCache
    walk.py     known_infos -> walk: infer each node's outputs, fold constants, and
                hand every other node to the provider's record(op, inputs, outputs)
    memory.py   the memory limit, allocation, value lifetimes -> an arena layout
                (CPU) or buffer releases after the last reader (OpenCL)
    eager.py    one node run now on concrete arrays (folding, dynamic shapes)

The CPU provider's side:

    native.py   NativeStep and NativePlan: the steps as one C plan (mlrt_plan_run)
    cpu.py      CPUPartition: plans from the cache (an If decided at planning time
                planned as its branch), node-by-node runs where shapes depend on
                data, host operators and the bodies of If/Loop/Scan

The OpenCL provider's side is native/opencl/_plan.py (StepBuilder, OpenCLPlan, OpenCLPartition).
"""

"""A broken OpenCL driver, for tests: run as the build child instead of
native/opencl/_compiler.py (its path is the first argument), it runs the real child
but, for a program whose source contains $MLRT_TEST_FAULT_MARK, writes compiler-like
last words to stderr and then aborts the process ($MLRT_TEST_FAULT=abort, as PoCL's
LLVM does) or never returns (=hang)."""

import importlib.util
import os
import sys
import time

import pyopencl as cl

MARK = os.environ["MLRT_TEST_FAULT_MARK"]
FAULT = os.environ.get("MLRT_TEST_FAULT", "abort")
real_build = cl.Program.build


def build(self, *args, **kwargs):
    source = self._source if isinstance(self._source, str) else ""
    if MARK in source:
        sys.stderr.write("LLVM ERROR: Cannot select: 0x5f2e i64 = fadd (injected by faulty_compiler.py)\n")
        sys.stderr.flush()
        if FAULT == "hang":
            while True:
                time.sleep(60)
        os.abort()
    return real_build(self, *args, **kwargs)


cl.Program.build = build
spec = importlib.util.spec_from_file_location("mlrt_build_child", sys.argv[1])
child = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(child)
sys.exit(child.child_main())

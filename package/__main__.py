"""`python -m mlrt` (also the `mlrt` command): what this installation has.

Prints the SDK version, the native runtime in use (kind, version, ABI, path), the
execution providers, the OpenCL devices visible through pyopencl, and operator
coverage (C kernels, operator semantics files).
"""

from __future__ import annotations

import argparse
import sys


def opencl_devices() -> list[str]:
    try:
        import pyopencl as cl
    except Exception as exc:  # pyopencl missing or its ICD loader broken
        return [f"(pyopencl unavailable: {exc})"]
    try:
        return [f"{d.name.strip()} [{cl.device_type.to_string(d.type)}] on {p.name.strip()}, "
                f"{d.global_mem_size // 2**20} MiB, OpenCL {d.version.strip()}"
                for p in cl.get_platforms() for d in p.get_devices()]
    except Exception as exc:
        return [f"(no OpenCL platform: {exc})"]


def info() -> str:
    from . import __version__
    from .lowlevel import get_available_providers
    from .native import _lib
    from .native.ops import all_ops

    rt = _lib.runtime()
    table = _lib.kernel_table()
    lines = [
        f"mlrt {__version__}",
        f"runtime: {rt.kind} {rt.version} (ABI {rt.abi}) at {rt.path}",
        f"build: {rt.ffi.string(rt.lib.mlrt_build_info()).decode()}",
        f"providers: {', '.join(get_available_providers())}",
        "OpenCL devices:",
        *(f"  {d}" for d in opencl_devices() or ["(none)"]),
        f"C kernels: {len(table)} covering {len({(k['domain'], k['op_type']) for k in table})} operators",
        f"operator semantics files: {len(all_ops())}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mlrt", description="mlrt: what this installation has")
    parser.add_argument("--ops", action="store_true", help="also list every operator with a C kernel")
    args = parser.parse_args(argv)
    from ._errors import MlrtError
    try:
        print(info())
        if args.ops:
            from .native import _lib
            for k in _lib.kernel_table():
                until = "" if k["until"] >= 2**31 - 1 else str(k["until"])
                print(f"  {k['domain'] or 'ai.onnx'}::{k['op_type']} opset {k['since']}-{until}")
    except MlrtError as exc:
        print(f"mlrt: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

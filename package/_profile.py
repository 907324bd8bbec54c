"""`mlrt profile MODEL`: a model run on generated inputs with profiling on, its trace
written and summarised (time per op type, the slowest nodes)."""

from __future__ import annotations

import json
import statistics

import numpy as np

from . import lowlevel
from ._errors import InvalidArgument
from .native import profile

_TYPES = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
          "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int8)": np.int8, "tensor(uint8)": np.uint8,
          "tensor(int16)": np.int16, "tensor(uint16)": np.uint16, "tensor(bool)": np.bool_}


def generated_inputs(session, dims: dict[str, int]) -> dict:
    """One input per model input: free dimensions from `dims` (else 1), floats drawn from
    a normal distribution, integers and bools zero (safe as indices)."""
    rng = np.random.default_rng(0)
    feeds = {}
    for arg in session.get_inputs():
        dtype = _TYPES.get(arg.type)
        if dtype is None:
            raise InvalidArgument(f"input '{arg.name}' is {arg.type}: profile generates tensor inputs of numeric "
                                  f"types only")
        shape = [d if isinstance(d, int) and d > 0 else dims.get(d, 1) if isinstance(d, str) else 1
                 for d in (arg.shape or [])]
        if np.dtype(dtype).kind == "f":
            feeds[arg.name] = rng.standard_normal(shape).astype(dtype)
        else:
            feeds[arg.name] = np.zeros(shape, dtype)
    return feeds


def profile_command(args) -> int:
    from ._cli import _dims, _session, check_dims, first_run
    if args.runs < 1 or args.top < 0:
        raise InvalidArgument("--runs must be >= 1 and --top >= 0")
    dims = _dims(args.dim)
    so = lowlevel.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = args.prefix
    session = _session(args, so)
    check_dims(session, dims)
    feeds = generated_inputs(session, dims)
    first_run(session, feeds, dims)
    for _ in range(args.runs):
        session.run(None, feeds)
    path = session.end_profiling()
    with open(path) as f:
        s = profile.summarize(json.load(f))
    runs = s["runs"]
    node_total = sum(v["us"] for v in s["by_op"].values()) or 1.0
    print(f"{args.model}: {runs} runs after the first on {', '.join(session.get_providers())}; "
          f"median run {statistics.median(s['run_us']) / 1000:.3f} ms")
    print(f"trace: {path}")
    print(f"\n{'op type':<28}{'nodes':>6}{'ms per run':>12}{'share':>8}")
    for op, v in sorted(s["by_op"].items(), key=lambda kv: -kv[1]["us"]):
        print(f"{op:<28}{v['nodes']:>6}{v['us'] / runs / 1000:>12.3f}{100 * v['us'] / node_total:>7.1f}%")
    print(f"\n{'node':<40}{'op type':<20}{'provider':<26}{'ms per run':>11}")
    for name, v in sorted(s["by_node"].items(), key=lambda kv: -kv[1]["us"])[:args.top]:
        print(f"{name[:39]:<40}{v['op'][:19]:<20}{v['provider'][:25]:<26}{v['us'] / runs / 1000:>11.3f}")
    return 0

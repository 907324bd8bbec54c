"""Run ONNX's node conformance cases through mlrt.backend and tally the results.

    python tests/conformance/node_cases.py [-k SUBSTRING] [-v] [--providers A,B]

A case passes only if every data set's every output matches the expected value
within the case's own rtol/atol (and has the expected dtype and shape)."""

from __future__ import annotations

import argparse
import collections
import sys
import warnings

import numpy as np


def collect():
    from onnx.backend.test.case.node import collect_testcases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [c for c in collect_testcases() if c.model is not None]


def _plain(value):
    """Test data stored as TensorProto (Cast cases and others) as numpy arrays."""
    from onnx import TensorProto, numpy_helper
    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _compare(expected, got, rtol, atol):
    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            raise AssertionError("sequence output mismatch")
        for e, g in zip(expected, got):
            _compare(e, g, rtol, atol)
        return
    expected = np.asarray(expected)
    got = np.asarray(got)
    if expected.dtype != got.dtype:
        raise AssertionError(f"dtype {got.dtype}, expected {expected.dtype}")
    if expected.shape != got.shape:
        raise AssertionError(f"shape {got.shape}, expected {expected.shape}")
    if expected.dtype.kind in "OUS":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


def run_case(case, providers=None, placed=None) -> str | None:
    """None if the case passes, else a one-line reason.  `placed` (a Counter) tallies
    which provider ran each node."""
    from mlrt.backend import prepare
    try:
        rep = prepare(case.model, providers=providers)
        if placed is not None:
            placed.update(p for _, op, p in rep.session.get_node_assignment() if not op.startswith("Memcpy"))
        for inputs, outputs in case.data_sets:
            inputs = [_plain(x) for x in inputs]
            outputs = [_plain(x) for x in outputs]
            got = rep.run(inputs)
            if len(got) != len(outputs):
                return f"{len(got)} outputs, expected {len(outputs)}"
            for e, g in zip(outputs, got):
                _compare(e, g, case.rtol, case.atol)
    except AssertionError as exc:
        return "mismatch: " + str(exc).strip().splitlines()[0][:200]
    except Exception as exc:  # every failure is counted, none stops the tally
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ''}"
    return None


def run_all(select: str = "", providers=None, placed=None) -> tuple[int, int, dict[str, str]]:
    cases = [c for c in collect() if select in c.name]
    failures = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            reason = run_case(case, providers, placed)
            if reason is not None:
                failures[case.name] = reason
    return len(cases) - len(failures), len(cases), failures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("-v", action="store_true", help="list every failure")
    ap.add_argument("--providers", default="", help="comma-separated providers, e.g. OpenCLExecutionProvider")
    args = ap.parse_args(argv)
    providers = [p for p in args.providers.split(",") if p] or None
    placed = collections.Counter()
    passed, total, failures = run_all(args.k, providers, placed)
    if args.v:
        for name, reason in sorted(failures.items()):
            print(f"FAIL {name}: {reason}")
    kinds = collections.Counter(r.split(":")[0] for r in failures.values())
    print("failure kinds:", dict(kinds.most_common(8)))
    print(f"node conformance: {passed}/{total} passed; nodes placed: {dict(placed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run ONNX's node conformance cases through mlrt.backend and tally the results.

    python tests/conformance/node_cases.py [-k SUBSTRING] [-v] [--provider cpu|opencl] [--write-skip]

A case passes only if every data set's every output matches the expected value
within the case's own rtol/atol (and has the expected dtype and shape).  With the
OpenCL provider, CPU fallback is switched off (session.disable_cpu_ep_fallback): a
case passes there only if its nodes ran on OpenCL (shape computations aside).

Each provider has a skip file beside this one (`cpu.skip`, `opencl.skip`): one case
per line, then `#` and why it fails.  The tests require the failures to be exactly
the skip file's cases; `--write-skip` rewrites the file from a run, each case with
the reason it failed for (and keeps the lines below).

A line whose reason starts with "undefined by the spec" marks a case whose expected
values include results ONNX leaves undefined (a float cast to an integer out of its
range), which the generator computed with whatever ml_dtypes was installed.  Such a
case is not skipped: its expected values are replaced there by mlrt's own rule
(tests/undefined.py, docs/undefined.md) and it must pass.

A line whose reason starts with "random by the spec" marks a case whose outputs are
drawn at random (Bernoulli): the generator's own draws cannot be matched, and a run
may match them by chance.  Such a case is run and must pass a check of what the spec
does define: the expected dtype and shape, and values that are 0 or 1."""

from __future__ import annotations

import argparse
import collections
import re
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/undefined.py, when run as a script
PROVIDERS = {"cpu": ["CPUExecutionProvider"], "opencl": ["OpenCLExecutionProvider", "CPUExecutionProvider"]}


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


def prepare(model, providers):
    """The case's model as a backend rep; a device provider first means no CPU fallback."""
    from mlrt.backend import MlrtBackendRep
    from mlrt.lowlevel import InferenceSession, SessionOptions
    options = SessionOptions()
    if providers and providers[0] != "CPUExecutionProvider":
        options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    return MlrtBackendRep(InferenceSession(model.SerializeToString(), options, providers=providers))


UNDEFINED = "undefined by the spec"
RANDOM = "random by the spec"


def _mlrt_defined(case, inputs, outputs):
    """The case's expected outputs with undefined elements as mlrt defines them (Cast
    and CastLike: the one output follows from the first input)."""
    from undefined import expected_cast
    ops = {n.op_type for n in case.model.graph.node}
    if ops & {"Cast", "CastLike"} and len(outputs) == 1:
        return [expected_cast(inputs[0], np.asarray(outputs[0]))]
    return outputs


def _check_draws(expected, got):
    """A random case's output: the expected dtype and shape, every value 0 or 1."""
    expected, got = np.asarray(expected), np.asarray(got)
    if (got.dtype, got.shape) != (expected.dtype, expected.shape):
        raise AssertionError(f"{got.dtype}{list(got.shape)}, expected {expected.dtype}{list(expected.shape)}")
    if not np.isin(got, (0, 1)).all():
        raise AssertionError(f"values other than 0 and 1: {np.unique(got)[:8]}")


def run_case(case, providers=None, placed=None, undefined=False, random=False) -> str | None:
    """None if the case passes, else a one-line reason.  `placed` (a Counter) tallies
    which provider ran each node; `undefined`: the expected values' undefined
    elements are replaced by mlrt's rule first; `random`: the outputs are draws,
    checked by _check_draws instead of compared."""
    try:
        rep = prepare(case.model, providers)
        if placed is not None:
            placed.update(p for _, op, p in rep.session.get_node_assignment() if not op.startswith("Memcpy"))
        for inputs, outputs in case.data_sets:
            inputs = [_plain(x) for x in inputs]
            outputs = [_plain(x) for x in outputs]
            if undefined:
                outputs = _mlrt_defined(case, inputs, outputs)
            got = rep.run(inputs)
            if len(got) != len(outputs):
                return f"{len(got)} outputs, expected {len(outputs)}"
            for e, g in zip(outputs, got):
                if random:
                    _check_draws(e, g)
                else:
                    _compare(e, g, case.rtol, case.atol)
    except AssertionError as exc:
        return "mismatch: " + str(exc).strip().splitlines()[0][:200]
    except Exception as exc:  # every failure is counted, none stops the tally
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ''}"
    return None


def run_all(select: str = "", providers=None, placed=None, undefined=(), random=()) -> tuple[int, int, dict[str, str]]:
    """Run the cases whose name contains `select`; those named in `undefined` are
    compared with mlrt's rule where the spec leaves their values undefined, those
    named in `random` checked as draws."""
    cases = [c for c in collect() if select in c.name]
    failures = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            reason = run_case(case, providers, placed, undefined=case.name in undefined, random=case.name in random)
            if reason is not None:
                failures[case.name] = reason
    return len(cases) - len(failures), len(cases), failures


def skip_file(provider: str) -> Path:
    return HERE / f"{provider}.skip"


def _skip_lines(provider: str) -> dict[str, str]:
    lines = {}
    for line in skip_file(provider).read_text().splitlines():
        name, _, reason = line.partition("#")
        if name.strip():
            lines[name.strip()] = reason.strip()
    return lines


def read_skips(provider: str) -> dict[str, str]:
    """The provider's skip file: case name -> reason, for the cases expected to fail."""
    return {n: r for n, r in _skip_lines(provider).items() if not r.startswith((UNDEFINED, RANDOM))}


def read_undefined(provider: str) -> dict[str, str]:
    """The cases the skip file marks "undefined by the spec": run, and compared with
    mlrt's rule where the spec leaves their values undefined."""
    return {n: r for n, r in _skip_lines(provider).items() if r.startswith(UNDEFINED)}


def read_random(provider: str) -> dict[str, str]:
    """The cases the skip file marks "random by the spec": run, their draws checked."""
    return {n: r for n, r in _skip_lines(provider).items() if r.startswith(RANDOM)}


def _short(reason: str) -> str:
    """A skip-file reason: the node kinds a provider did not take, rather than the
    whole fallback message."""
    m = re.search(r"would fall back to \S+ \(([^;]+);", reason)
    return f"not taken by this provider: {m.group(1)}" if m else reason


def write_skips(provider: str, failures: dict[str, str]) -> None:
    undefined, random = read_undefined(provider), read_random(provider)
    width = max((len(n) for n in [*failures, *undefined, *random]), default=0)
    lines = [f"# Node conformance cases that fail with providers {PROVIDERS[provider]}, one per line with why.",
             "# tests/conformance/test_node_conformance*.py fail when this list and a run disagree;",
             f"# rewrite with: python tests/conformance/node_cases.py --provider {provider} --write-skip"]
    lines += [f"{name:<{width}}  # {_short(failures[name])}" for name in sorted(failures)]
    lines += ["# Run, with mlrt's rule where the spec leaves the expected values undefined:"]
    lines += [f"{name:<{width}}  # {undefined[name]}" for name in sorted(undefined)]
    lines += ["# Run, their outputs checked as random draws (dtype, shape, values 0 or 1):"]
    lines += [f"{name:<{width}}  # {random[name]}" for name in sorted(random)]
    skip_file(provider).write_text("\n".join(lines) + "\n")


def disagreements(provider: str, failures: dict[str, str]) -> list[str]:
    """What a run and the provider's skip file disagree on, one line each (empty: agree)."""
    skips = read_skips(provider)
    out = [f"newly failing (fix it, or add it to {provider}.skip with a reason): {n}: {failures[n]}"
           for n in sorted(set(failures) - set(skips))]
    out += [f"now passing (remove it from {provider}.skip): {n}" for n in sorted(set(skips) - set(failures))]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("-v", action="store_true", help="list every failure")
    ap.add_argument("--provider", default="cpu", choices=sorted(PROVIDERS), help="which providers run the cases")
    ap.add_argument("--write-skip", action="store_true", help="rewrite the provider's skip file from this run")
    args = ap.parse_args(argv)
    providers = PROVIDERS[args.provider]
    placed = collections.Counter()
    passed, total, failures = run_all(args.k, providers, placed, undefined=read_undefined(args.provider),
                                      random=read_random(args.provider))
    if args.write_skip:
        if args.k:
            ap.error("--write-skip needs the whole suite (no -k)")
        write_skips(args.provider, failures)
        print(f"wrote {skip_file(args.provider)} ({len(failures)} cases)")
    if args.v:
        for name, reason in sorted(failures.items()):
            print(f"FAIL {name}: {reason}")
    kinds = collections.Counter(r.split(":")[0] for r in failures.values())
    print("failure kinds:", dict(kinds.most_common(8)))
    print(f"node conformance: {passed}/{total} passed; nodes placed: {dict(placed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

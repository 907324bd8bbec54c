"""Structured fuzzing of the runtime with mutated ONNX conformance cases.

    python tests/fuzz/mutate_cases.py [--cases N] [--seed S] [--providers A,B]

Each case takes a node conformance model and its inputs and mutates them: input
shapes (including empty and rank changes), integer inputs (huge, negative,
out-of-range indices), integer and float attributes.  Every run must end in
outputs or a Python exception; the process must never die.  Prints a tally of
outcomes, and the exception types that are not MlrtError subclasses (bad input
that reached a generic error instead of a named one).
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import warnings

import numpy as np
from onnx import AttributeProto


def mutate_array(rng: random.Random, a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind not in "biuf" or a.dtype.itemsize > 8:
        return a
    choice = rng.randrange(5)
    if choice == 0:  # new shape
        shape = tuple(rng.choice([0, 1, 2, 3, 7]) for _ in range(rng.randrange(0, 5)))
        return np.zeros(shape, a.dtype) + (np.ones(shape, a.dtype) if a.dtype.kind != "b" else False)
    if choice == 1 and a.dtype.kind in "iu" and a.size:  # wild integer values
        b = a.copy().reshape(-1)
        info = np.iinfo(a.dtype)
        b[rng.randrange(b.size)] = rng.choice([info.max, info.min, max(-1, int(info.min)), 10**6 % (int(info.max) + 1)])
        return b.reshape(a.shape)
    if choice == 2 and a.ndim:  # drop or add a dimension
        return a.reshape(a.shape + (1,)) if rng.random() < 0.5 else a.reshape(-1)
    if choice == 3 and a.dtype.kind == "f" and a.size:
        b = a.copy().reshape(-1)
        b[rng.randrange(b.size)] = rng.choice([np.nan, np.inf, -np.inf, 1e38])
        return b.reshape(a.shape)
    return a


def mutate_attributes(rng: random.Random, model) -> None:
    for node in model.graph.node:
        for attr in node.attribute:
            if rng.random() > 0.3:
                continue
            if attr.type == AttributeProto.INT:
                attr.i = rng.choice([0, -1, 1, 2, 7, -100, 2**40])
            elif attr.type == AttributeProto.INTS and len(attr.ints):
                attr.ints[rng.randrange(len(attr.ints))] = rng.choice([0, -1, 3, 10**6, -(2**40)])
            elif attr.type == AttributeProto.FLOAT:
                attr.f = rng.choice([0.0, -1.0, 1e30, float("nan")])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--providers", default="", help="e.g. OpenCLExecutionProvider (the CPU is added last)")
    args = ap.parse_args(argv)
    providers = [p for p in args.providers.split(",") if p] or None
    warnings.simplefilter("ignore")
    from onnx.backend.test.case.node import collect_testcases

    import mlrt
    from mlrt.backend import prepare

    rng = random.Random(args.seed)
    cases = [c for c in collect_testcases() if c.model is not None and c.data_sets]
    outcomes: collections.Counter = collections.Counter()
    generic: collections.Counter = collections.Counter()
    for n in range(args.cases):
        case = rng.choice(cases)
        model = type(case.model)()
        model.CopyFrom(case.model)
        mutate_attributes(rng, model)
        from onnx import numpy_helper, TensorProto
        inputs = [numpy_helper.to_array(x) if isinstance(x, TensorProto) else x for x in case.data_sets[0][0]]
        inputs = [mutate_array(rng, x) if isinstance(x, np.ndarray) and rng.random() < 0.5 else x for x in inputs]
        print(f"{n} {case.name}", file=sys.stderr, flush=True)  # the last line names a crash
        try:
            prepare(model, providers=providers).run(inputs)
            outcomes["ran"] += 1
        except mlrt.MlrtError:
            outcomes["MlrtError"] += 1
        except Exception as exc:  # noqa: BLE001 - tallied, not hidden
            outcomes["other exception"] += 1
            generic[f"{type(exc).__name__} ({case.name.split('_')[1]})"] += 1
    print(f"fuzz: {args.cases} mutated cases, seed {args.seed}, providers {providers or 'CPU'}: {dict(outcomes)}")
    if generic:
        print("non-MlrtError exceptions:", dict(generic.most_common(15)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

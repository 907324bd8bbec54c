"""Arena layout: values alive at the same time never overlap, dead ones are reused."""

import random
from types import SimpleNamespace

from mlrt.native.planner import ALIGN, plan_memory


def chain_steps(specs):
    """specs: list of (inputs, outputs) name lists -> objects shaped like executor steps."""
    return [SimpleNamespace(op=SimpleNamespace(node=SimpleNamespace(input=i, output=o))) for i, o in specs]


def lifetimes(specs, sizes):
    first, last = {}, {}
    for k, (ins, outs) in enumerate(specs):
        for o in outs:
            if o in sizes:
                first.setdefault(o, k)
                last.setdefault(o, k)
        for i in ins:
            if i in sizes:
                last[i] = k
    return first, last


def assert_no_overlap(specs, sizes, offsets):
    first, last = lifetimes(specs, sizes)
    names = list(sizes)
    for a in names:
        assert offsets[a] % ALIGN == 0
        for b in names:
            if a >= b:
                continue
            if first[a] <= last[b] and first[b] <= last[a]:  # alive together
                a0, a1 = offsets[a], offsets[a] + sizes[a]
                b0, b1 = offsets[b], offsets[b] + sizes[b]
                assert a1 <= b0 or b1 <= a0, f"{a} and {b} overlap"


def test_chain_reuses_two_buffers():
    specs = [(["x"], ["t0"])] + [([f"t{i}"], [f"t{i + 1}"]) for i in range(9)] + [(["t9"], ["y"])]
    sizes = {f"t{i}": 1000 for i in range(10)}
    offsets, arena = plan_memory(chain_steps(specs), sizes)
    assert_no_overlap(specs, sizes, offsets)
    assert arena == 2 * 1024  # ping-pong between two aligned blocks


def test_random_graphs_never_overlap():
    rng = random.Random(0)
    for trial in range(200):
        n = rng.randint(1, 30)
        specs, names = [], ["x"]
        for k in range(n):
            ins = rng.sample(names, k=min(len(names), rng.randint(1, 3)))
            outs = [f"v{k}_{j}" for j in range(rng.randint(1, 2))]
            specs.append((ins, outs))
            names += outs
        sizes = {v: rng.choice([0, 1, 64, 100, 4096]) for _, outs in specs for v in outs}
        offsets, arena = plan_memory(chain_steps(specs), sizes)
        assert set(offsets) == set(sizes)
        assert all(offsets[v] + sizes[v] <= arena for v in sizes)
        assert_no_overlap(specs, sizes, offsets)

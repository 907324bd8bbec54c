"""Value lifetimes, the arena layout and buffer releases (native/plan/memory.py):
values alive at the same time never overlap, dead ones are reused."""

import random

import pytest

from mlrt import ResourceExhausted
from mlrt.native.plan.memory import ALIGN, MEMORY_LIMIT, allocate, arena_layout, lifetimes, releases


def plan_memory(specs, sizes):
    """specs: list of (inputs, outputs) name lists, one per step."""
    return arena_layout(lifetimes([i for i, _ in specs], [o for _, o in specs]), sizes)


def alive(specs, sizes):
    """First and last step of each value, worked out here independently of memory.py."""
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
    first, last = alive(specs, sizes)
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
    offsets, arena = plan_memory(specs, sizes)
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
        offsets, arena = plan_memory(specs, sizes)
        assert set(offsets) == set(sizes)
        assert all(offsets[v] + sizes[v] <= arena for v in sizes)
        assert_no_overlap(specs, sizes, offsets)


def test_lifetimes_span_writer_to_last_reader():
    specs = [(["x"], ["a"]), (["a"], ["b", "unused"]), (["a", "b"], ["y"]), (["x"], ["z"])]
    spans = lifetimes([i for i, _ in specs], [o for _, o in specs])
    assert spans == {"a": (0, 2), "b": (1, 2), "unused": (1, 1), "y": (2, 2), "z": (3, 3)}
    assert "x" not in spans  # inputs are not the plan's to free
    assert releases(spans, 4, keep={"y", "z"}) == [[], ["unused"], ["a", "b"], []]


def test_allocation_over_the_limit_is_refused_before_it_happens():
    with pytest.raises(ResourceExhausted, match="over the limit"):
        allocate((MEMORY_LIMIT // 4 + 1, 8), "float32", "test")

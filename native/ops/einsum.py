"""Einsum: sums of products of the inputs' elements named by an Einstein equation.

The equation is resolved here into labels (numpy's rules): letters, and "..." for
the broadcast dims every ellipsis stands for (right-aligned, size 1 broadcasting,
as for letters).  The output is the right-hand side, or without "->" the
ellipsis dims then the letters used once, sorted (upper case first).  A letter
repeated in one input takes a diagonal.  The kernel gets Y's labels first, then
the summed ones, with every input's element stride along each label."""

from __future__ import annotations

import numpy as np

from ... import _errors
from .._lib import onnx_type
from ._base import REQUIRED, Info, Op, contiguous_strides

MAX_INPUTS, MAX_LABELS, MAX_OUT = 8, 24, 8


def _tokens(term: str, fail) -> list[str]:
    out, i = [], 0
    while i < len(term):
        if term.startswith("...", i):
            out.append("...")
            i += 3
        elif term[i].isascii() and term[i].isalpha():
            out.append(term[i])
            i += 1
        else:
            raise fail(f"unexpected {term[i]!r} in equation term {term!r}")
    if out.count("...") > 1:
        raise fail(f"term {term!r} has more than one ellipsis")
    return out


class Einsum(Op):
    attributes = {"equation": REQUIRED}
    params = "mlrt_einsum_params"
    tolerance = (1e-4, 1e-5)

    def _plan(self, inputs):
        """(Y's labels in order, the summed labels, {label: size}, per input (its dims' labels,
        {label: element stride})); "..." dims are labels ".0", ".1", ... (right-aligned)."""
        if not inputs or any(i is None for i in inputs):
            raise self.fail("needs at least one input, none absent")
        dtype = np.dtype(inputs[0].dtype)
        if any(np.dtype(i.dtype) != dtype for i in inputs):
            raise self.fail("inputs must share one element type")
        if onnx_type(dtype) in (0, 8, 9):
            raise self.fail(f"element type {dtype.name} is not supported")
        eq = str(self.a.equation).replace(" ", "")
        if not eq:
            raise self.fail("the equation is empty")
        if eq.count("->") > 1:
            raise self.fail(f"equation {eq!r} has more than one '->'")
        lhs, rhs = eq.split("->") if "->" in eq else (eq, None)
        terms = lhs.split(",")
        if len(terms) != len(inputs):
            raise self.fail(f"equation {eq!r} names {len(terms)} inputs, the node has {len(inputs)}")
        toks = [_tokens(t, self.fail) for t in terms]
        ell = 0
        for t, x in zip(toks, inputs):
            letters = len(t) - t.count("...")
            if ("..." in t and letters > x.rank) or ("..." not in t and letters != x.rank):
                raise self.fail(f"term {''.join(t)!r} does not fit an input of rank {x.rank}")
            if "..." in t:
                ell = max(ell, x.rank - letters)
        ell_labels = [f".{e}" for e in range(ell)]
        sizes: dict[str, int] = {}
        per_input = []
        for t, x in zip(toks, inputs):
            dims = []
            for tok in t:
                if tok == "...":
                    n = x.rank - (len(t) - 1)
                    dims += ell_labels[ell - n:]
                else:
                    dims.append(tok)
            strides, own = {}, {}
            for label, n, s in zip(dims, x.shape, contiguous_strides(x.shape)):
                if own.setdefault(label, n) != n:
                    raise self.fail(f"label {label!r} repeats in one input with sizes {own[label]} and {n}")
                old = sizes.get(label)
                if old is None or old == 1:
                    sizes[label] = int(n)
                elif n != 1 and n != old:
                    raise self.fail(f"label {label!r} has sizes {old} and {n}")
                # a size-1 dim broadcast against a larger one reads stride 0
                strides[label] = strides.get(label, 0) + (s if n != 1 else 0)
            per_input.append((dims, strides))
        if rhs is None:
            once = sorted(c for c in set(sizes) if not c.startswith(".")
                          and sum(d.count(c) for d, _ in per_input) == 1)
            out = ell_labels + once
        else:
            out = []
            for tok in _tokens(rhs, self.fail):
                if tok == "...":
                    out += ell_labels
                elif tok not in sizes:
                    raise self.fail(f"output label {tok!r} is not in any input")
                elif tok in out:
                    raise self.fail(f"output label {tok!r} repeats")
                else:
                    out.append(tok)
            if ell and "..." not in rhs and any(sizes[e] != 0 for e in ell_labels):
                raise self.fail("the inputs have '...' dims but the output names no '...'")
        summed = [label for label in sizes if label not in out]
        return out, summed, sizes, per_input

    def infer(self, inputs):
        out, _, sizes, _ = self._plan(inputs)
        if len(out) > MAX_OUT:
            raise self.fail(f"output of rank {len(out)} is over the supported {MAX_OUT}")
        return [Info(inputs[0].dtype, tuple(sizes[label] for label in out))]

    def pack(self, inputs, outputs):
        out, summed, sizes, per_input = self._plan(inputs)
        labels = out + summed
        if len(inputs) > MAX_INPUTS or len(labels) > MAX_LABELS:
            raise _errors.NotImplemented(f"{self.where}: einsum over {len(inputs)} inputs and {len(labels)} labels "
                                         f"is over the supported {MAX_INPUTS} inputs and {MAX_LABELS} labels")
        strides = [0] * (MAX_INPUTS * MAX_LABELS)
        for k, (dims, st) in enumerate(per_input):
            for l, label in enumerate(labels):
                strides[k * MAX_LABELS + l] = st.get(label, 0) if sizes[label] != 1 else 0
        return {"n_inputs": len(inputs), "n_labels": len(labels), "n_out": len(out),
                "sizes": [sizes[label] for label in labels], "strides": strides}

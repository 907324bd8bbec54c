"""TfIdfVectorizer: n-gram counts of each row of X ([C] or [N, C], int32 / int64 or
strings) against a pool of n-grams (pool_int64s or pool_strings, grouped by length
through ngram_counts), written at ngram_indexes of a float32 [out] / [N, out] result
(out = max(ngram_indexes) + 1).  n-grams have min_gram_length..max_gram_length items
taken every d-th token for d = 1..max_skip_count + 1 (unigrams are counted once).
mode "TF" gives counts, "IDF" weights[i] (or 1) where the count is > 0, "TFIDF"
counts times weights[i].

A host op: the pool is a dict of n-gram tuples and rows are scanned in Python (the
op serves text pipelines, where rows are short); the C kernel for integer tokens
comes later.
"""

import numpy as np

from ._base import REQUIRED
from ._host import _HostTensorOp


class TfIdfVectorizer(_HostTensorOp):
    attributes = {"max_gram_length": REQUIRED, "max_skip_count": REQUIRED, "min_gram_length": REQUIRED,
                  "mode": REQUIRED, "ngram_counts": REQUIRED, "ngram_indexes": REQUIRED, "pool_int64s": None,
                  "pool_strings": None, "weights": None}

    def __init__(self, node, opset):
        super().__init__(node, opset)
        a = self.a
        if a.mode not in ("TF", "IDF", "TFIDF"):
            raise self.fail(f"mode must be TF, IDF or TFIDF, got {a.mode!r}")
        if (a.pool_int64s is None) == (a.pool_strings is None):
            raise self.fail("exactly one of pool_int64s and pool_strings must be given")
        self.strings = a.pool_strings is not None
        pool = list(a.pool_strings if self.strings else a.pool_int64s)
        indexes = [int(i) for i in a.ngram_indexes]
        if not indexes or min(indexes) < 0:
            raise self.fail("ngram_indexes must be a non-empty list of non-negative ints")
        self.out_size = max(indexes) + 1
        self.weights = None if not a.weights else np.asarray(a.weights, np.float32)
        if self.weights is not None and len(self.weights) < self.out_size:
            raise self.fail(f"weights has {len(self.weights)} values, the output has {self.out_size} columns")
        lo, hi = int(a.min_gram_length), int(a.max_gram_length)
        if not 1 <= lo <= hi or int(a.max_skip_count) < 0:
            raise self.fail(f"need 1 <= min_gram_length ({lo}) <= max_gram_length ({hi}) and max_skip_count >= 0")
        self.grams: dict[tuple, int] = {}  # n-gram -> output column, for lengths lo..hi
        counts = [int(c) for c in a.ngram_counts]
        slot = 0
        for size, start in enumerate(counts, start=1):
            end = counts[size] if size < len(counts) else len(pool)
            if not 0 <= start <= end <= len(pool) or (end - start) % size:
                raise self.fail(f"ngram_counts {counts} does not split a pool of {len(pool)} items into n-grams")
            for k in range(start, end, size):
                if slot >= len(indexes):
                    raise self.fail(f"the pool holds more n-grams than ngram_indexes ({len(indexes)}) maps")
                if lo <= size <= hi:
                    self.grams[tuple(pool[k:k + size])] = indexes[slot]
                slot += 1
        self.lengths = sorted({len(g) for g in self.grams})

    def run_host(self, values, runtime):
        x = self.tensor(values, 0, "X")
        if self.strings != (x.dtype.kind in "OUS") or (not self.strings and x.dtype not in (np.int32, np.int64)):
            want = "strings" if self.strings else "int32 or int64"
            raise self.bad(f"X must hold {want} for this pool, got {x.dtype}")
        if x.ndim > 2 or (x.ndim == 2 and x.shape[0] < 1):
            raise self.bad(f"X must be [C] or [N, C] with N >= 1, got shape {list(x.shape)}")
        rows = x.reshape(1, -1) if x.ndim < 2 else x
        counts = np.zeros((rows.shape[0], self.out_size), np.int64)
        a = self.a
        for r, row in enumerate(rows):
            tokens = [str(t) if self.strings else int(t) for t in row]
            n = len(tokens)
            smallest = int(a.min_gram_length)
            # skips past n - 1 reach no second token: they count nothing the ones below do not
            for d in range(1, min(int(a.max_skip_count) + 1, max(n - 1, 1)) + 1):
                for start in range(n):
                    for size in self.lengths:
                        if size < smallest or start + d * (size - 1) >= n:
                            continue
                        col = self.grams.get(tuple(tokens[start:start + d * (size - 1) + 1:d]))
                        if col is not None:
                            counts[r, col] += 1
                if smallest == 1:  # unigrams do not depend on the skip: count them once
                    smallest = 2
        y = counts.astype(np.float32)
        if a.mode == "IDF":
            y = np.where(counts > 0, self.weights[:self.out_size] if self.weights is not None else 1, 0)
        elif a.mode == "TFIDF" and self.weights is not None:
            y = counts * self.weights[:self.out_size]
        y = y.astype(np.float32)
        return [y if x.ndim == 2 else y.reshape(self.out_size)]

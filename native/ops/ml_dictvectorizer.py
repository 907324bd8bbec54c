"""DictVectorizer (ai.onnx.ml): a map (Python dict) -> a 1-D tensor of the vocabulary's
length (string_vocabulary or int64_vocabulary), each value at its key's position,
zeros (empty strings) elsewhere.  A sequence of maps gives one row per map.  Keys
must be in the vocabulary.  The element type follows the values: numpy scalars keep
their type, Python floats give float32 (map(*, float)), ints int64, str strings."""

import numpy as np

from ._ml import _MlHostOp


def _dtype(values) -> np.dtype:
    for v in values:
        if isinstance(v, np.generic):
            return np.dtype(object) if isinstance(v, np.str_) else v.dtype
        if isinstance(v, str):
            return np.dtype(object)
        if isinstance(v, (bool, int)) and not isinstance(v, float):
            continue
        return np.dtype(np.float32)
    return np.dtype(np.int64) if values else np.dtype(np.float32)


class DictVectorizer(_MlHostOp):
    attributes = {"int64_vocabulary": None, "string_vocabulary": None}

    def run_host(self, values, runtime):
        x = self.arg(values, 0)
        maps = x if isinstance(x, list) else [x]
        if not all(isinstance(m, dict) for m in maps):
            raise self.bad(f"X must be a map (dict) or a sequence of maps, got {type(x).__name__}")
        ints, strs = self.a.int64_vocabulary, self.a.string_vocabulary
        if bool(ints) == bool(strs):
            raise self.fail("exactly one of int64_vocabulary and string_vocabulary must be set")
        vocab = {(k if strs else int(k)): i for i, k in enumerate(strs or ints)}
        dtype = _dtype([v for m in maps for v in m.values()])
        out = np.zeros((len(maps), len(vocab)), dtype=dtype)
        if dtype == object:
            out[...] = ""
        for r, m in enumerate(maps):
            for k, v in m.items():
                key = k.decode() if isinstance(k, bytes) else (int(k) if not strs else k)
                if key not in vocab:
                    raise self.bad(f"key {k!r} is not in the vocabulary")
                out[r, vocab[key]] = v
        return [out if isinstance(x, list) else out.reshape(-1)]

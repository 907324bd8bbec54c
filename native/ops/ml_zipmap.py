"""ZipMap (ai.onnx.ml): a float32 [N, C] tensor -> a sequence of N maps {label: score},
keys from classlabels_strings or classlabels_int64s (one per column).  A 1-D input
is one row.  The result is a Python list of dicts of Python floats, as onnxruntime
returns it."""

from ._ml import _MlHostOp, class_labels


class ZipMap(_MlHostOp):
    attributes = {"classlabels_int64s": None, "classlabels_strings": None}

    def run_host(self, values, runtime):
        x = self.tensor(values, 0, "X")
        ints, strs = class_labels(self, "classlabels_int64s", "classlabels_strings")
        keys = strs if strs is not None else [int(v) for v in ints]
        if x.ndim == 1:
            x = x.reshape(1, -1)
        if x.ndim != 2 or x.shape[1] != len(keys):
            raise self.bad(f"X must be [N, {len(keys)}] (one column per class label), got {list(x.shape)}")
        return [[dict(zip(keys, row)) for row in x.astype(float).tolist()]]

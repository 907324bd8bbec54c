"""LinearClassifier (ai.onnx.ml): scores = X . coefficients^T + intercepts, one column
per class (K = number of intercepts); the label is the class of the largest raw
score, then the post transform turns the scores into Z (float32).

With a single score column (K = 1) the label is the second class label when the
score s is > 0, the first otherwise (1 / 0 without two labels); Z is [1 - t, t] with
t = s after LOGISTIC or PROBIT (the SOFTMAX kinds leave a lone score as it is) --
onnxruntime's layout; onnx.reference writes [-s, s] and then transforms both."""

import numpy as np

from ._base import REQUIRED, Info
from ._ml import _MlTableOp, class_labels, label_table, rows, string_labels


class LinearClassifier(_MlTableOp):
    attributes = {"coefficients": REQUIRED, "intercepts": None, "classlabels_ints": None,
                  "classlabels_strings": None, "multi_class": 0, "post_transform": "NONE"}
    params = "mlrt_ml_linear_classifier_params"
    array_attributes = frozenset({"coefficients"})  # large FLOATS: read at once as arrays
    tolerance = (1e-5, 1e-6)

    def make_tables(self):
        ints, strs = class_labels(self, "classlabels_ints", "classlabels_strings")
        self._strings = strs
        self.host = strs is not None  # the kernel writes class indexes; run_host names them
        n_labels = len(strs) if strs is not None else len(ints)
        coef = np.asarray(self.a.coefficients, dtype=np.float64)
        b = np.asarray(self.a.intercepts or [], dtype=np.float64)
        k = b.size if b.size else n_labels
        if k < 1 or coef.size % k:
            raise self.fail(f"{coef.size} coefficients do not split into {k} classes")
        if k > 1 and n_labels < k:
            raise self.fail(f"{n_labels} class labels for {k} classes")
        if not b.size:
            b = np.zeros(k)
        self._k, self._labels = k, n_labels
        return [coef.reshape(k, -1), b, label_table(ints, strs)]

    def outputs_for(self, x):
        second = self._k == 1 and self._labels == 2
        return [Info(np.dtype(np.int64), (rows(x),)), Info(np.dtype(np.float32), (rows(x), 2 if second else self._k))]

    def kernel_params(self, x):
        return {"post_transform": self.transform(), "add_second_class": int(self._k == 1 and self._labels == 2)}

    def label_strings(self):
        if self._strings is not None and self._k == 1 and self._labels != 2:
            return None  # ("1" / "0" by the score's sign: named in finish)
        return self._strings

    def finish(self, outputs):
        y, z = outputs
        if self._strings is not None:
            if self._k == 1 and self._labels != 2:
                y = np.array(["1" if v else "0" for v in y], dtype=object)
            else:
                y = string_labels(y, self._strings, self)
        return [y, z]

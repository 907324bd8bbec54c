"""SVMClassifier (ai.onnx.ml), as onnxruntime reads the spec.

Linear mode (no vectors_per_class): one score per class, x . coefficients[c] + rho[0];
the label is the best-scoring class (with two classes and no negative coefficient:
the second whenever the best score reaches 0.5), Z the transformed scores.  (For
this mode onnx.reference labels more than two classes 1 / 0 and onnxruntime picks
the second of two classes whenever the best score is > 0; mlrt takes the best class
in both cases.)
SVC mode: kernel values against the support vectors, one-vs-one scores for each
class pair (i < j), votes (score > 0 for i) pick the label; with prob_a / prob_b the
pairwise scores become sigmoid probabilities coupled into class probabilities (Z has
one column per class), otherwise Z holds the pair scores (two classes: [-s, s] for
post_transform NONE, [logistic(-s), logistic(s)] for LOGISTIC, [1 - s, s] for the
SOFTMAX kinds, [probit(s), 0] for PROBIT -- onnxruntime's layouts).  Kernels as in SVMRegressor."""

import numpy as np

from ._base import Info
from ._ml import _MlTableOp, class_labels, label_table, rows, string_labels, svm_kernel_fields


class SVMClassifier(_MlTableOp):
    attributes = {"classlabels_ints": None, "classlabels_strings": None, "coefficients": None,
                  "kernel_params": None, "kernel_type": "LINEAR", "post_transform": "NONE", "prob_a": None,
                  "prob_b": None, "rho": None, "support_vectors": None, "vectors_per_class": None}
    params = "mlrt_ml_svm_classifier_params"
    array_attributes = frozenset({"support_vectors", "coefficients"})  # large FLOATS: read at once as arrays
    tolerance = (1e-4, 1e-5)

    def make_tables(self):
        ints, strs = class_labels(self, "classlabels_ints", "classlabels_strings")
        self._strings = strs
        self.host = strs is not None  # the kernel writes class indexes; run_host names them
        c = len(strs) if strs is not None else len(ints)
        per_class = np.asarray(self.a.vectors_per_class or [], dtype=np.int64)
        v = int(per_class.sum()) if per_class.size else 0
        sv = np.asarray(self.a.support_vectors if self.a.support_vectors is not None else [], dtype=np.float64)
        coef = np.asarray(self.a.coefficients if self.a.coefficients is not None else [], dtype=np.float64)
        pa = np.asarray(self.a.prob_a or [], dtype=np.float64)
        pb = np.asarray(self.a.prob_b or [], dtype=np.float64)
        rho = np.asarray(self.a.rho or [], dtype=np.float64)
        if coef.size == 0:
            raise self.fail("'coefficients' must not be empty")
        if pa.size != pb.size:
            raise self.fail(f"prob_a has {pa.size} values, prob_b {pb.size}")
        if (per_class < 0).any() or (v > 0 and sv.size % v):
            raise self.fail(f"{sv.size} support vector values do not split into {v} vectors")
        pairs = c * (c - 1) // 2
        self._svc, self._proba = v > 0, v > 0 and pa.size > 0
        self._zc = c if not self._svc or self._proba else (pairs if c > 2 else 2)
        self._all_positive = bool((coef >= 0).all())
        return [sv.reshape(v, -1) if v else np.zeros((0, 0)), coef, rho, pa, pb,
                per_class if v else np.zeros(0, np.int64), label_table(ints, strs)]

    def outputs_for(self, x):
        return [Info(np.dtype(np.int64), (rows(x),)), Info(np.dtype(np.float32), (rows(x), self._zc))]

    def kernel_params(self, x):
        return {**svm_kernel_fields(self), "post_transform": self.transform(),
                "weights_are_all_positive": int(self._all_positive)}

    def finish(self, outputs):
        y, z = outputs
        if self._strings is not None:
            y = string_labels(y, self._strings, self)
        return [y, z]

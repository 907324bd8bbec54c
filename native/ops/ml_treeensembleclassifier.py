"""TreeEnsembleClassifier (ai.onnx.ml opsets 1 and 3): labels Y [N] (int64 or string) and
class scores Z [N, C] (float32) from decision trees given node by node (nodes_*) with
per-class leaf weights (class_*; *_as_tensor forms accepted).  Trees are walked as in
TreeEnsembleRegressor; class scores are the sums of the weights reached plus
base_values.

The label is the best-scoring class (the first of equals; classes no leaf reached
do not compete) and Z the post-transformed scores.  Two classes whose weights all
name one class (the "binary case", how scikit-learn, XGBoost and LightGBM models
are converted) follow onnxruntime: that score s decides the label (s > 0.5 if no
weight is negative, else s > 0) and Z is [1 - s, s] (no negative weight; s =
logistic(s) first under LOGISTIC) or [-s, s] (logistic of both under LOGISTIC).
(onnx.reference writes [-s, s] and [1 - s, s] the other way round for mixed-sign
weights under NONE; onnxruntime labels other two-class models 1 / 0 whatever the
class labels are, which mlrt does not copy.)  The walk runs in C
(native/kernels/ml_tree.c)."""

import numpy as np

from .._lib import enum_value
from ._base import Info
from ._ml import _MlTableOp, class_labels, label_table, legacy_trees, rows, string_labels
from .ml_treeensembleregressor import _NODE_ARRAYS, _NODES


class TreeEnsembleClassifier(_MlTableOp):
    attributes = {**_NODES, "classlabels_int64s": None, "classlabels_strings": None, "class_ids": None,
                  "class_nodeids": None, "class_treeids": None, "class_weights": None,
                  "class_weights_as_tensor": None}
    array_attributes = _NODE_ARRAYS | {"class_ids", "class_nodeids", "class_treeids", "class_weights",
                                       "classlabels_int64s"}
    params = "mlrt_ml_tree_params"
    tolerance = (1e-5, 1e-5)

    def make_tables(self):
        ints, strs = class_labels(self, "classlabels_int64s", "classlabels_strings")
        self._strings = strs
        self.host = strs is not None  # the kernel writes class indexes; run_host names them
        self._n = len(strs) if strs is not None else len(ints)
        if self._n < 2:
            raise self.fail(f"{self._n} class label(s): a classifier needs at least two")
        trees = legacy_trees(self, "class")
        if trees.targets.size and trees.targets.max() >= self._n:
            raise self.fail(f"class_ids name class {trees.targets.max()} of {self._n}")
        base = self.numbers("base_values")
        base = np.zeros(0) if base is None else base
        if base.size not in (0, self._n) and not (self._n == 2 and base.size == 1):
            raise self.fail(f"{base.size} base_values for {self._n} classes")
        self._binary = self._n == 2 and np.unique(_class_ids(self)).size == 1
        self._positive = bool((trees.weights >= 0).all())
        self._same_mode = trees.same_mode
        self._features_read = trees.features_read
        return trees.arrays(base, label_table(ints, strs))

    def outputs_for(self, x):
        return [Info(np.dtype(np.int64), (rows(x),)), Info(np.dtype(np.float32), (rows(x), self._n))]

    def kernel_params(self, x):
        return {"n_targets": self._n, "aggregate": enum_value("MLRT_ML_AGGREGATE_SUM"),
                "post_transform": self.transform(), "classifier": 1,
                "binary_case": int(self._binary), "weights_are_all_positive": int(self._positive),
                "same_mode": self._same_mode, "features_read": self._features_read}

    def finish(self, outputs):
        y, z = outputs
        if self._strings is not None:
            y = string_labels(y, self._strings, self)
        return [y, z]


def _class_ids(op) -> np.ndarray:
    return np.asarray(op.a.class_ids if op.a.class_ids is not None else [], dtype=np.int64)

"""TreeEnsemble (ai.onnx.ml opset 5): Y[N, n_targets] in X's type (float, double, float16)
from trees whose branch nodes are listed once (nodes_*: feature, split, mode 0 LEQ,
1 LT, 2 GTE, 3 GT, 4 EQ, 5 NEQ, 6 set MEMBER) and whose children are either nodes or
leaves (nodes_trueleafs / nodes_falseleafs); leaf l adds leaf_weights[l] to target
leaf_targetids[l].  aggregate_function 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX; post_transform
0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT, numbered as the spec says
(onnx.reference ignores post_transform; onnxruntime 1.31 swaps 1 and 2).  The sets of
membership_values are read in node order, each ended by a NaN.  A target no leaf
reaches counts 0 under MIN / MAX too (onnx.reference starts those from -+max float).
The walk runs in C (native/kernels/ml_tree.c)."""

import numpy as np

from .._lib import enum_value
from ._base import REQUIRED, Info
from ._ml import _MlTableOp, rows, v5_trees

# opset-5 numbering -> the constants of kernels/ml_tree.h and ml_misc.h
_AGGREGATE = {0: "MLRT_ML_AGGREGATE_AVERAGE", 1: "MLRT_ML_AGGREGATE_SUM", 2: "MLRT_ML_AGGREGATE_MIN",
              3: "MLRT_ML_AGGREGATE_MAX"}
_TRANSFORM = {0: "MLRT_ML_TRANSFORM_NONE", 1: "MLRT_ML_TRANSFORM_SOFTMAX", 2: "MLRT_ML_TRANSFORM_LOGISTIC",
              3: "MLRT_ML_TRANSFORM_SOFTMAX_ZERO", 4: "MLRT_ML_TRANSFORM_PROBIT"}
_TYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16))


class TreeEnsemble(_MlTableOp):
    attributes = {"aggregate_function": 1, "post_transform": 0, "n_targets": REQUIRED, "tree_roots": REQUIRED,
                  "nodes_featureids": None, "nodes_splits": None, "nodes_modes": None, "nodes_truenodeids": None,
                  "nodes_falsenodeids": None, "nodes_trueleafs": None, "nodes_falseleafs": None,
                  "nodes_missing_value_tracks_true": None, "nodes_hitrates": None, "leaf_targetids": None,
                  "leaf_weights": None, "membership_values": None}
    params = "mlrt_ml_tree_params"
    tolerance = (1e-5, 1e-5)
    extra_types = (np.dtype(np.float16),)

    def make_tables(self):
        if self.a.aggregate_function not in _AGGREGATE:
            raise self.fail(f"aggregate_function must be 0..3, got {self.a.aggregate_function}")
        if self.a.post_transform not in _TRANSFORM:
            raise self.fail(f"post_transform must be 0..4, got {self.a.post_transform}")
        if int(self.a.n_targets) < 1:
            raise self.fail(f"n_targets must be >= 1, got {self.a.n_targets}")
        trees = v5_trees(self)
        if trees.targets.size and (trees.targets.min() < 0 or trees.targets.max() >= int(self.a.n_targets)):
            raise self.fail(f"leaf_targetids must lie in [0, {self.a.n_targets})")
        self._same_mode = trees.same_mode
        self._features_read = trees.features_read
        return trees.arrays(np.zeros(0), np.zeros(0, np.int64))

    def infer(self, inputs):
        x = self.features(inputs, types=_TYPES, ranks=(1, 2))
        splits = self.a.nodes_splits
        if splits is not None and np.asarray(splits).dtype != np.dtype(x.dtype):
            raise self.fail(f"X is {np.dtype(x.dtype).name} but nodes_splits are {np.asarray(splits).dtype.name}")
        return [Info(x.dtype, (rows(x), int(self.a.n_targets)))]

    def kernel_params(self, x):
        return {"n_targets": int(self.a.n_targets), "aggregate": enum_value(_AGGREGATE[self.a.aggregate_function]),
                "post_transform": enum_value(_TRANSFORM[self.a.post_transform]), "classifier": 0,
                "same_mode": self._same_mode, "features_read": self._features_read}

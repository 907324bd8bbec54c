"""TreeEnsembleRegressor (ai.onnx.ml opsets 1 and 3): Y[N, n_targets] (float32) from an
ensemble of decision trees given node by node in the nodes_* attributes, leaf weights
in target_* (or their *_as_tensor forms).

A node sends a row to its true child when x[feature] <mode> value holds (BRANCH_LEQ,
LT, GTE, GT, EQ, NEQ), or when x is NaN and nodes_missing_value_tracks_true is set.
Per target, aggregate_function SUM / AVERAGE / MIN / MAX combines the weights of the
leaves reached (a target no leaf reached counts 0, as in onnxruntime), base_values
are added, then post_transform (over the row; with one target only PROBIT applies,
as in onnxruntime).  The walk runs in C (native/kernels/ml_tree.c)."""

import numpy as np

from ._base import Info
from .._lib import enum_value
from ._ml import AGGREGATES, _MlTableOp, legacy_trees, rows

_NODES = {"nodes_treeids": None, "nodes_nodeids": None, "nodes_featureids": None, "nodes_modes": None,
          "nodes_values": None, "nodes_values_as_tensor": None, "nodes_truenodeids": None, "nodes_falsenodeids": None,
          "nodes_missing_value_tracks_true": None, "nodes_hitrates": None, "nodes_hitrates_as_tensor": None,
          "base_values": None, "base_values_as_tensor": None, "post_transform": "NONE"}
_NODE_ARRAYS = frozenset({"nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_values", "nodes_truenodeids",
                          "nodes_falsenodeids", "nodes_missing_value_tracks_true", "nodes_hitrates", "base_values"})


class TreeEnsembleRegressor(_MlTableOp):
    attributes = {**_NODES, "aggregate_function": "SUM", "n_targets": None, "target_ids": None,
                  "target_nodeids": None, "target_treeids": None, "target_weights": None,
                  "target_weights_as_tensor": None}
    array_attributes = _NODE_ARRAYS | {"target_ids", "target_nodeids", "target_treeids", "target_weights"}
    params = "mlrt_ml_tree_params"
    tolerance = (1e-5, 1e-5)

    def make_tables(self):
        trees = legacy_trees(self, "target")
        n = self.a.n_targets
        self._n = int(n) if n is not None else int(trees.targets.max() + 1 if trees.targets.size else 1)
        if self._n < 1:
            raise self.fail(f"n_targets must be >= 1, got {self._n}")
        if trees.targets.size and (trees.targets.min() < 0 or trees.targets.max() >= self._n):
            raise self.fail(f"target_ids must lie in [0, {self._n})")
        if self.a.aggregate_function not in AGGREGATES:
            raise self.fail(f"aggregate_function must be one of {', '.join(AGGREGATES)}, "
                            f"got {self.a.aggregate_function!r}")
        base = self.numbers("base_values")
        base = np.zeros(0) if base is None else base
        if base.size not in (0, 1, self._n):
            raise self.fail(f"{base.size} base_values for {self._n} targets")
        self._same_mode = trees.same_mode
        self._features_read = trees.features_read
        return trees.arrays(base, np.zeros(0, np.int64))

    def outputs_for(self, x):
        return [Info(np.dtype(np.float32), (rows(x), self._n))]

    def kernel_params(self, x):
        return {"n_targets": self._n, "aggregate": enum_value(AGGREGATES[self.a.aggregate_function]),
                "post_transform": self.transform(), "classifier": 0, "same_mode": self._same_mode,
                "features_read": self._features_read}

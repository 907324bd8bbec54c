/* ml_tree.h -- parameters of the ai.onnx.ml tree ensemble kernels (parsed by cffi):
 * TreeEnsembleRegressor, TreeEnsembleClassifier (opsets 1, 3) and TreeEnsemble (5).
 *
 * The kernel reads X ([N, F] or [F]) and eight tables the Python side flattens the
 * attributes into, whatever the operator's version:
 *   1 nodes       int32 [M, 4]: kind, feature, true child, false child (row indexes)
 *                 kind = mode | 16 if a missing (NaN) feature goes to the true child;
 *                 mode 0 x <= t, 1 x < t, 2 x >= t, 3 x > t, 4 x == t, 5 x != t,
 *                 6 x in a set, 7 leaf: its weights are [true, true + false)
 *   2 thresholds  float64 [M]  t; for mode 6 the index in members of the set's size
 *   3 roots       int64 [T], one node per tree
 *   4 targets     int64 [W]   target (or class) of each leaf weight
 *   5 weights     float64 [W]
 *   6 members     float64 [S] the sets of the mode-6 nodes: size n, then n sorted members
 *   7 base values float64 [0, 1 or n_targets]
 *   8 labels      int64 [C] (classifier; class indexes for string labels)
 * aggregate: 0 SUM, 1 AVERAGE, 2 MIN, 3 MAX.  post_transform: 0 NONE, 1 LOGISTIC,
 * 2 SOFTMAX, 3 SOFTMAX_ZERO, 4 PROBIT.  same_mode: the mode (0..5) every branch node
 * has when none tracks missing values (a faster walk), else -1. */
#ifndef MLRT_ML_TREE_H
#define MLRT_ML_TREE_H
#include <stdint.h>

typedef struct mlrt_ml_tree_params {
    int64_t n_targets;
    int64_t aggregate;
    int64_t post_transform;
    int64_t classifier;
    int64_t binary_case;
    int64_t weights_are_all_positive;
    int64_t same_mode;
} mlrt_ml_tree_params;

#endif

/* ml_tree.h -- parameters of the ai.onnx.ml tree ensemble kernels (parsed by cffi):
 * TreeEnsembleRegressor, TreeEnsembleClassifier (opsets 1, 3) and TreeEnsemble (5).
 *
 * The kernel reads X ([N, F] or [F]) and eight tables the Python side flattens the
 * attributes into, whatever the operator's version:
 *   1 nodes       int64 [M, 6]: kind, feature, true child, false child, a, b
 *                 kind = mode | 16 if a missing (NaN) feature goes to the true child;
 *                 mode 0 x <= t, 1 x < t, 2 x >= t, 3 x > t, 4 x == t, 5 x != t,
 *                 6 x in members[a, a + b), 7 leaf (weights [a, a + b));
 *                 children are row indexes into nodes
 *   2 thresholds  float64 [M]
 *   3 roots       int64 [T], one node per tree
 *   4 targets     int64 [W]   target (or class) of each leaf weight
 *   5 weights     float64 [W]
 *   6 members     float64 [S] sorted set members of the mode-6 nodes
 *   7 base values float64 [0, 1 or n_targets]
 *   8 labels      int64 [C] (classifier; class indexes for string labels)
 * aggregate: 0 SUM, 1 AVERAGE, 2 MIN, 3 MAX.  post_transform: 0 NONE, 1 LOGISTIC,
 * 2 SOFTMAX, 3 SOFTMAX_ZERO, 4 PROBIT. */
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
} mlrt_ml_tree_params;

#endif

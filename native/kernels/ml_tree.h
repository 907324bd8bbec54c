/* ml_tree.h -- parameters of the ai.onnx.ml tree ensemble kernels (parsed by cffi):
 * TreeEnsembleRegressor, TreeEnsembleClassifier (opsets 1, 3) and TreeEnsemble (5).
 *
 * The kernel reads X ([N, F] or [F]) and eight tables the Python side flattens the
 * attributes into, whatever the operator's version:
 *   1 nodes       int32 [M, 4]: kind, feature, true child, false child (row indexes)
 *                 kind = mode (enum mlrt_ml_node), | MLRT_ML_NODE_MISSING_TRUE if a
 *                 missing (NaN) feature goes to the true child; a leaf's weights are
 *                 [true, true + false)
 *   2 thresholds  float64 [M]  t; for MEMBER the index in members of the set's size
 *   3 roots       int64 [T], one node per tree
 *   4 targets     int64 [W]   target (or class) of each leaf weight
 *   5 weights     float64 [W]
 *   6 members     float64 [S] the sets of the MEMBER nodes: size n, then n sorted members
 *   7 base values float64 [0, 1 or n_targets]
 *   8 labels      int64 [C] (classifier; class indexes for string labels)
 * aggregate: enum mlrt_ml_aggregate.  post_transform: enum mlrt_ml_transform
 * (ml_misc.h).  same_mode: the mode (LEQ..NEQ) every branch node has when none
 * tracks missing values (a faster walk), else -1.  features_read: 1 + the largest
 * feature a branch node reads, so that a too narrow X fails whatever rows it holds
 * (the walk checks each node's feature anyway). */
#ifndef MLRT_ML_TREE_H
#define MLRT_ML_TREE_H
#include <stdint.h>

/* A node's mode (the numbers of TreeEnsemble's nodes_modes, plus LEAF); the flag
 * MISSING_TRUE is or-ed into a node's kind. */
enum mlrt_ml_node {
    MLRT_ML_NODE_LEQ = 0,
    MLRT_ML_NODE_LT = 1,
    MLRT_ML_NODE_GTE = 2,
    MLRT_ML_NODE_GT = 3,
    MLRT_ML_NODE_EQ = 4,
    MLRT_ML_NODE_NEQ = 5,
    MLRT_ML_NODE_MEMBER = 6,
    MLRT_ML_NODE_LEAF = 7,
    MLRT_ML_NODE_MISSING_TRUE = 16
};

/* aggregate */
enum mlrt_ml_aggregate {
    MLRT_ML_AGGREGATE_SUM = 0,
    MLRT_ML_AGGREGATE_AVERAGE = 1,
    MLRT_ML_AGGREGATE_MIN = 2,
    MLRT_ML_AGGREGATE_MAX = 3
};

typedef struct mlrt_ml_tree_params {
    int64_t n_targets;
    int64_t aggregate;
    int64_t post_transform;
    int64_t classifier;
    int64_t binary_case;
    int64_t weights_are_all_positive;
    int64_t same_mode;
    int64_t features_read;
} mlrt_ml_tree_params;

#endif

/* ml_tree.c -- ai.onnx.ml TreeEnsembleRegressor, TreeEnsembleClassifier, TreeEnsemble.
 *
 * One walk serves the three operators: the Python side flattens each version's
 * attributes into the tables described in ml_tree.h.  A table index is checked where
 * the walk uses it (a node's feature and children as the node is visited, a leaf's
 * weights and their targets when the leaf is reached, a root, a set), so a run costs
 * what it walks, not the size of the forest; a bad index stops the run with an error
 * naming the node, and a walk longer than the node count means a cycle and fails.
 * Rows run in parallel (a single row inline); scores add up in double.
 *
 * Regressors: per target, SUM / AVERAGE (sum over the number of trees) / MIN / MAX of
 * the leaf weights reached (a target no leaf reached counts 0), plus the base value;
 * the post transform runs over the row (one target: PROBIT only).
 * Classifier: class scores are sums plus base values and the label is the best-scoring
 * class -- except when there are two classes and every leaf weight names one of them
 * (the "binary case", onnxruntime's reading): then that score s decides (> 0.5 when
 * every weight is >= 0, else > 0) and the score columns become [1 - s, s] (weights
 * all >= 0; s = logistic(s) first under LOGISTIC) or [-s, s] (logistic of both under
 * LOGISTIC). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"
#include "ml_misc.h"
#include "ml_tree.h"

/* from ml_misc.c */
void mlrt_ml_transform(double *v, int64_t n, int32_t kind);
double mlrt_ml_probit(double v);
double mlrt_ml_logistic(double v);
double mlrt_ml_get(const void *p, int32_t dtype, int64_t i);


/* What went wrong in a walk, found where the walk relies on it (see tree_run). */
enum tree_fault_kind {
    FAULT_NONE = 0,
    FAULT_CYCLE,    /* where: a node on the cycle */
    FAULT_KIND,     /* where: the node, value: its kind */
    FAULT_MODE,     /* where: the node, value: its kind (not same_mode) */
    FAULT_FEATURE,  /* where: the node, value: the feature */
    FAULT_CHILD,    /* where: the node */
    FAULT_ROOT,     /* where: the tree, value: the root */
    FAULT_SET,      /* where: the node */
    FAULT_WEIGHTS,  /* where: the leaf */
    FAULT_TARGET,   /* where: the weight, value: the target */
    FAULT_MEMORY
};

/* The first fault of a run: rows run in parallel, the first thread to find one records it. */
typedef struct tree_fault {
    atomic_int kind;
    int64_t where, value;
} tree_fault;

typedef struct tree_job {
    const mlrt_ml_tree_params *p;
    const mlrt_tensor *x;
    int64_t n_features, n_nodes, n_trees, n_weights, n_members, n_base, n_classes;
    const int32_t *nodes;
    const int64_t *roots, *targets, *labels;
    const double *thresholds, *weights, *members, *base;
    void *y;          /* regressor: [N, n_targets]; classifier: Z [N, C] */
    int32_t y_dtype;
    int64_t *label;   /* classifier: [N] */
    tree_fault fault;
} tree_job;

/* Records a fault (the first one wins) and returns -1, what a walk returns when it stops. */
static int64_t fault(tree_job *j, int kind, int64_t where, int64_t value) {
    int none = FAULT_NONE;
    if (atomic_compare_exchange_strong(&j->fault.kind, &none, kind)) {
        j->fault.where = where;
        j->fault.value = value;
    }
    return -1;
}

/* i is not an index into [0, n): one unsigned comparison covers i < 0 too (n >= 0). */
static inline int outside(int64_t i, int64_t n) { return (uint64_t)i >= (uint64_t)n; }

static inline void put(void *out, int32_t dtype, int64_t i, double v) {
    switch (dtype) {
    case MLRT_FLOAT: ((float *)out)[i] = (float)v; break;
    case MLRT_DOUBLE: ((double *)out)[i] = v; break;
    case MLRT_FLOAT16: ((uint16_t *)out)[i] = mlrt_f64_to_f16(v); break;
    default: break;
    }
}

static int member_of(const double *m, int64_t n, double v) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (m[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && m[lo] == v;
}

/* A branch node's step reads one feature and goes to one of two children: both must
 * exist.  Checked as each node is visited, so a run costs what it walks; nonzero after
 * recording the fault. */
static inline int branch_bad(tree_job *j, int64_t node, const int32_t *rec) {
    if (outside(rec[1], j->n_features)) return fault(j, FAULT_FEATURE, node, rec[1]);
    if (outside(rec[2], j->n_nodes) || outside(rec[3], j->n_nodes)) return fault(j, FAULT_CHILD, node, 0);
    return 0;
}

/* Whether v is in the set of MEMBER node `node` (its threshold says where the set
 * starts in members: size n, then n sorted values); -1 if the set is not inside members. */
static int in_set(tree_job *j, int64_t node, double v) {
    double at = j->thresholds[node], ns = (double)j->n_members;
    if (!(at >= 0 && at < ns && at == floor(at))) return (int)fault(j, FAULT_SET, node, 0);
    const double *set = j->members + (int64_t)at;
    double size = set[0];
    if (!(size >= 0 && size == floor(size) && size <= ns - 1 - at)) return (int)fault(j, FAULT_SET, node, 0);
    return member_of(set + 1, (int64_t)size, v);
}

/* The leaf reached from `node` for the row of features xr, or -1 after a fault (a walk
 * longer than the node count means a cycle). */
static int64_t walk_any(tree_job *j, const double *xr, int64_t node) {
    for (int64_t steps = 0; steps <= j->n_nodes; ++steps) {
        const int32_t *rec = j->nodes + node * 4;
        int32_t mode = rec[0] & ~MLRT_ML_NODE_MISSING_TRUE;  /* stray bits fall to default */
        if (mode == MLRT_ML_NODE_LEAF) return node;
        if (branch_bad(j, node, rec)) return -1;
        double v = xr[rec[1]], t = j->thresholds[node];
        int go;
        switch (mode) {
        case MLRT_ML_NODE_LEQ: go = v <= t; break;
        case MLRT_ML_NODE_LT: go = v < t; break;
        case MLRT_ML_NODE_GTE: go = v >= t; break;
        case MLRT_ML_NODE_GT: go = v > t; break;
        case MLRT_ML_NODE_EQ: go = v == t; break;
        case MLRT_ML_NODE_NEQ: go = v != t; break;
        case MLRT_ML_NODE_MEMBER: go = in_set(j, node, v); break;
        default: return fault(j, FAULT_KIND, node, rec[0]);
        }
        if (go < 0) return -1;
        if (!go && (rec[0] & MLRT_ML_NODE_MISSING_TRUE) && isnan(v)) go = 1;
        node = go ? rec[2] : rec[3];
    }
    return fault(j, FAULT_CYCLE, node, 0);
}

/* The same walk when every branch node compares with one operator and none tracks
 * missing values (scikit-learn's forests: all x <= t); any other kind than that mode
 * or a leaf is a fault. */
#define SAME_MODE_WALK(name, MODE, CMP)                                                 \
    static int64_t name(tree_job *j, const double *xr, int64_t node) {                  \
        for (int64_t steps = 0; steps <= j->n_nodes; ++steps) {                         \
            const int32_t *rec = j->nodes + node * 4;                                   \
            if (rec[0] != MODE)                                                         \
                return rec[0] == MLRT_ML_NODE_LEAF ? node : fault(j, FAULT_MODE, node, rec[0]); \
            if (branch_bad(j, node, rec)) return -1;                                    \
            node = (xr[rec[1]] CMP j->thresholds[node]) ? rec[2] : rec[3];              \
        }                                                                               \
        return fault(j, FAULT_CYCLE, node, 0);                                          \
    }
SAME_MODE_WALK(walk_leq, MLRT_ML_NODE_LEQ, <=)
SAME_MODE_WALK(walk_lt, MLRT_ML_NODE_LT, <)
SAME_MODE_WALK(walk_gte, MLRT_ML_NODE_GTE, >=)
SAME_MODE_WALK(walk_gt, MLRT_ML_NODE_GT, >)
SAME_MODE_WALK(walk_eq, MLRT_ML_NODE_EQ, ==)
SAME_MODE_WALK(walk_neq, MLRT_ML_NODE_NEQ, !=)

typedef int64_t (*walk_fn)(tree_job *j, const double *xr, int64_t node);

static walk_fn pick_walk(int64_t same_mode) {
    switch (same_mode) {
    case MLRT_ML_NODE_LEQ: return walk_leq;
    case MLRT_ML_NODE_LT: return walk_lt;
    case MLRT_ML_NODE_GTE: return walk_gte;
    case MLRT_ML_NODE_GT: return walk_gt;
    case MLRT_ML_NODE_EQ: return walk_eq;
    case MLRT_ML_NODE_NEQ: return walk_neq;
    default: return walk_any;
    }
}

static void classify(const tree_job *j, int64_t row, double *s, unsigned char *has) {
    const mlrt_ml_tree_params *p = j->p;
    int64_t c = j->n_classes, nb = j->n_base;
    float *z = (float *)j->y + row * c;
    if (c > 2 || !p->binary_case) {
        for (int64_t k = 0; nb && k < c; ++k) s[k] += j->base[nb == 1 ? 0 : k], has[k] = 1;
        int64_t best = -1;
        for (int64_t k = 0; k < c; ++k)
            if (has[k] && (best < 0 || s[k] > s[best])) best = k;
        j->label[row] = j->labels[best < 0 ? 0 : best];
        for (int64_t k = 0; k < c; ++k) s[k] = has[k] ? s[k] : 0.0;
        mlrt_ml_transform(s, c, (int32_t)p->post_transform);
        for (int64_t k = 0; k < c; ++k) z[k] = (float)s[k];
        return;
    }
    /* two classes, every weight on one class: that score decides */
    int n = 2, extra = -1;
    if (nb == 2) {
        if (has[1]) {  /* the score of class 0 carries the decision, base_values[1] added */
            s[1] = j->base[1] + s[0];
            s[0] = -s[1];
        } else {
            s[1] += j->base[1];
            s[0] += j->base[0];
        }
    } else if (nb == 1) {
        s[0] += j->base[0];
        if (!has[1]) n = 1;
    } else {
        extra = 3;
        if (!has[1]) n = 1;
    }
    double pos = (n == 2 && has[1]) ? s[1] : (has[0] ? s[0] : 0.0);
    if (p->weights_are_all_positive) {
        extra = pos > 0.5 ? 0 : 1;
        j->label[row] = j->labels[pos > 0.5 ? 1 : 0];
    } else {
        extra = pos > 0 ? 2 : 3;
        j->label[row] = j->labels[pos > 0 ? 1 : 0];
    }
    if (n == 2) {
        double v[2] = {has[0] ? s[0] : 0.0, has[1] ? s[1] : 0.0};
        mlrt_ml_transform(v, 2, (int32_t)p->post_transform);
        z[0] = (float)v[0];
        z[1] = (float)v[1];
        return;
    }
    double v = has[0] ? s[0] : 0.0;
    if (p->post_transform == MLRT_ML_TRANSFORM_PROBIT) {
        z[0] = (float)mlrt_ml_probit(v);
        z[1] = 0.0f;
    } else if (extra == 0 || extra == 1) {
        if (p->post_transform == MLRT_ML_TRANSFORM_LOGISTIC) v = mlrt_ml_logistic(v);
        z[0] = (float)(1.0 - v);
        z[1] = (float)v;
    } else if (extra == 2 || extra == 3) {
        if (p->post_transform == MLRT_ML_TRANSFORM_LOGISTIC) {
            z[0] = (float)mlrt_ml_logistic(-v);
            z[1] = (float)mlrt_ml_logistic(v);
        } else {
            z[0] = (float)-v;
            z[1] = (float)v;
        }
    } else {
        z[0] = (float)v;
        z[1] = 0.0f;
    }
}

static void regress(const tree_job *j, int64_t row, double *s, unsigned char *has) {
    const mlrt_ml_tree_params *p = j->p;
    int64_t t = p->n_targets;
    for (int64_t k = 0; k < t; ++k) {
        double v = has[k] ? s[k] : 0.0;
        if (p->aggregate == MLRT_ML_AGGREGATE_AVERAGE && j->n_trees > 0) v /= (double)j->n_trees;
        if (j->n_base) v += j->base[j->n_base == 1 ? 0 : k];
        s[k] = v;
    }
    if (t > 1)
        mlrt_ml_transform(s, t, (int32_t)p->post_transform);
    else if (p->post_transform == MLRT_ML_TRANSFORM_PROBIT)
        s[0] = mlrt_ml_probit(s[0]);
    for (int64_t k = 0; k < t; ++k) put(j->y, j->y_dtype, row * t + k, s[k]);
}

/* Adds the weights of leaf `leaf` to the scores s (has[k]: a weight reached target k
 * already); -1 after a fault. */
static int64_t add_leaf(tree_job *j, int64_t leaf, double *s, unsigned char *has) {
    const int32_t *rec = j->nodes + leaf * 4;
    int64_t first = rec[2], n = rec[3], agg = j->p->aggregate;
    if (first < 0 || n < 0 || first > j->n_weights || n > j->n_weights - first)
        return fault(j, FAULT_WEIGHTS, leaf, 0);
    for (int64_t w = first; w < first + n; ++w) {
        int64_t k = j->targets[w];
        double v = j->weights[w];
        if (outside(k, j->n_classes)) return fault(j, FAULT_TARGET, w, k);
        if (agg == MLRT_ML_AGGREGATE_MIN) s[k] = (!has[k] || v < s[k]) ? v : s[k];
        else if (agg == MLRT_ML_AGGREGATE_MAX) s[k] = (!has[k] || v > s[k]) ? v : s[k];
        else s[k] += v;
        has[k] = 1;
    }
    return 0;
}

/* Row r of X as double, the type switch once per row rather than per feature. */
static void load_row(const mlrt_tensor *x, int64_t r, int64_t f, double *xr) {
    switch (x->dtype) {
    case MLRT_FLOAT: {
        const float *row = (const float *)x->data + r * f;
        for (int64_t q = 0; q < f; ++q) xr[q] = row[q];
        break;
    }
    case MLRT_DOUBLE: {
        const double *row = (const double *)x->data + r * f;
        for (int64_t q = 0; q < f; ++q) xr[q] = row[q];
        break;
    }
    default:
        for (int64_t q = 0; q < f; ++q) xr[q] = mlrt_ml_get(x->data, x->dtype, r * f + q);
    }
}

/* Rows [r, r + n) through every tree, then their outputs; -1 after a fault.  Per row i:
 * s + i * t its scores, xr + i * f its features (read once), has + i * t which scores a
 * leaf reached.  Trees go outside, rows inside: a block of rows walks one tree while it
 * is in cache, which matters once the forest outgrows the cache. */
static int64_t tree_block(tree_job *j, walk_fn walk, int64_t r, int64_t n, double *s, double *xr,
                          unsigned char *has) {
    int64_t t = j->p->n_targets, f = j->n_features;
    for (int64_t i = 0; i < n; ++i) load_row(j->x, r + i, f, xr + i * f);
    for (int64_t k = 0; k < n * t; ++k) s[k] = 0.0, has[k] = 0;
    for (int64_t tr = 0; tr < j->n_trees; ++tr) {
        int64_t root = j->roots[tr];
        if (outside(root, j->n_nodes)) return fault(j, FAULT_ROOT, tr, root);
        for (int64_t i = 0; i < n; ++i) {
            int64_t leaf = walk(j, xr + i * f, root);
            if (leaf < 0 || add_leaf(j, leaf, s + i * t, has + i * t) < 0) return -1;
        }
    }
    for (int64_t i = 0; i < n; ++i) {
        if (j->p->classifier) classify(j, r + i, s + i * t, has + i * t);
        else regress(j, r + i, s + i * t, has + i * t);
    }
    return 0;
}

/* Scratch of up to this many doubles lives on the stack: a block of rows of most models
 * fits, and a malloc per run would cost about as much as walking a small forest. */
#define TREE_STACK_DOUBLES 2048
#define TREE_BLOCK_ROWS 64

static void tree_rows(void *arg, int64_t begin, int64_t end) {
    tree_job *j = arg;
    int64_t t = j->p->n_targets, f = j->n_features;
    int64_t per_row = t + f + (t + 7) / 8;  /* doubles: s, xr, has (t bytes) */
    int64_t block = TREE_STACK_DOUBLES / per_row;
    if (block > TREE_BLOCK_ROWS) block = TREE_BLOCK_ROWS;
    if (block > end - begin) block = end - begin;
    if (block < 1) block = 1;
    double stack[TREE_STACK_DOUBLES];
    size_t need = (size_t)(block * per_row);
    double *s = need <= TREE_STACK_DOUBLES ? stack : malloc(need * sizeof(double));
    if (!s) {
        fault(j, FAULT_MEMORY, 0, 0);
        return;
    }
    walk_fn walk = pick_walk(j->p->same_mode);
    double *xr = s + block * t;
    unsigned char *has = (unsigned char *)(xr + block * f);
    /* after a fault anywhere the run's result is an error: stop early */
    for (int64_t r = begin; r < end && !atomic_load_explicit(&j->fault.kind, memory_order_relaxed); r += block) {
        int64_t n = end - r < block ? end - r : block;
        if (tree_block(j, walk, r, n, s, xr, has) < 0) break;
    }
    if (s != stack) free(s);
}

/* The run's status: the fault the walk recorded, as a message naming where it is. */
static int fault_status(tree_job *j) {
    long long at = j->fault.where, v = j->fault.value;
    switch (atomic_load(&j->fault.kind)) {
    case FAULT_NONE:
        return MLRT_OK;
    case FAULT_MEMORY:
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate the per-row scores");
    case FAULT_CYCLE:
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "a tree has a cycle through node %lld (a walk visited more "
                         "nodes than exist)", at);
    case FAULT_KIND:
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "node %lld: bad kind %lld", at, v);
    case FAULT_MODE:
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "node %lld: kind %lld, but same_mode is %lld", at, v,
                         (long long)j->p->same_mode);
    case FAULT_FEATURE:
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "node %lld reads feature %lld; X has %lld features", at, v,
                         (long long)j->n_features);
    case FAULT_CHILD:
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "node %lld: a child is outside the tree", at);
    case FAULT_ROOT:
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "tree %lld: root %lld outside the nodes", at, v);
    case FAULT_SET:
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "node %lld: its set is not inside the %lld members", at,
                         (long long)j->n_members);
    case FAULT_WEIGHTS:
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "leaf %lld: weights [%d, +%d) outside the %lld weights", at,
                         j->nodes[at * 4 + 2], j->nodes[at * 4 + 3], (long long)j->n_weights);
    default:  /* FAULT_TARGET */
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "weight %lld names target %lld of %lld", at, v,
                         (long long)j->n_classes);
    }
}

static int table(const mlrt_tensor *t, int32_t dtype, int32_t rank, const char *what) {
    MLRT_CHECK(t->dtype == dtype && t->rank == rank && mlrt_is_contiguous(t), "%s table: expected a contiguous rank-%d %s",
               what, rank, dtype == MLRT_DOUBLE ? "float64" : dtype == MLRT_INT32 ? "int32" : "int64");
    return MLRT_OK;
}

#define TRY(expr) do { int rc_ = (expr); if (rc_) return rc_; } while (0)

/* Only what costs O(1) is checked here (table shapes, parameters, outputs); each node,
 * root, leaf and set is checked by the walk that reaches it, so one row through a big
 * forest does not pay for looking at every node. */
static int tree_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ml_tree_params, p, params, params_size);
    MLRT_CHECK(n_in == 9, "tree ensembles take X and 8 tables, got %d inputs", n_in);
    MLRT_CHECK(n_out == (p->classifier ? 2 : 1), "a tree %s has %d output(s)", p->classifier ? "classifier" : "regressor",
               p->classifier ? 2 : 1);
    TRY(table(&in[1], MLRT_INT32, 2, "nodes"));
    TRY(table(&in[2], MLRT_DOUBLE, 1, "thresholds"));
    TRY(table(&in[3], MLRT_INT64, 1, "roots"));
    TRY(table(&in[4], MLRT_INT64, 1, "targets"));
    TRY(table(&in[5], MLRT_DOUBLE, 1, "weights"));
    TRY(table(&in[6], MLRT_DOUBLE, 1, "members"));
    TRY(table(&in[7], MLRT_DOUBLE, 1, "base values"));
    TRY(table(&in[8], MLRT_INT64, 1, "labels"));
    const mlrt_tensor *x = &in[0];
    MLRT_CHECK((x->rank == 1 || x->rank == 2) && mlrt_is_contiguous(x), "X must be a contiguous [N, F] or [F]");
    int64_t rows = x->rank == 1 ? 1 : x->shape[0], f = x->shape[x->rank - 1];
    int64_t m = in[1].shape[0], nw = in[4].shape[0], nt = p->n_targets;
    MLRT_CHECK(in[1].shape[1] == 4 && in[2].shape[0] == m, "nodes must be [M, 4] with M thresholds");
    MLRT_CHECK(p->same_mode >= -1 && p->same_mode <= MLRT_ML_NODE_NEQ, "bad same_mode %lld", (long long)p->same_mode);
    MLRT_CHECK(in[5].shape[0] == nw, "%lld weights for %lld targets", (long long)in[5].shape[0], (long long)nw);
    MLRT_CHECK(nt >= 1, "n_targets must be >= 1, got %lld", (long long)nt);
    MLRT_CHECK(p->aggregate >= MLRT_ML_AGGREGATE_SUM && p->aggregate <= MLRT_ML_AGGREGATE_MAX &&
                   p->post_transform >= MLRT_ML_TRANSFORM_NONE && p->post_transform <= MLRT_ML_TRANSFORM_PROBIT,
               "bad aggregate function or post transform");
    /* the walk would find it too, but only on a row that reaches such a node */
    MLRT_CHECK(f >= p->features_read, "a node reads feature %lld; X has %lld features",
               (long long)p->features_read - 1, (long long)f);
    int64_t nb = in[7].shape[0];
    MLRT_CHECK(nb == 0 || nb == 1 || nb == nt, "%lld base values for %lld targets", (long long)nb, (long long)nt);
    tree_job j = {.p = p, .x = x, .n_features = f, .n_nodes = m, .n_trees = in[3].shape[0], .n_weights = nw,
                  .n_members = in[6].shape[0], .n_base = nb, .n_classes = nt, .nodes = in[1].data,
                  .roots = in[3].data, .targets = in[4].data, .labels = in[8].data, .thresholds = in[2].data,
                  .weights = in[5].data, .members = in[6].data, .base = in[7].data};
    atomic_init(&j.fault.kind, FAULT_NONE);
    if (p->classifier) {
        MLRT_CHECK(nt >= 2 && in[8].shape[0] == nt, "a classifier needs >= 2 classes and one label each");
        MLRT_CHECK(out[0].dtype == MLRT_INT64 && mlrt_numel(&out[0]) == rows && out[1].dtype == MLRT_FLOAT &&
                       mlrt_numel(&out[1]) == rows * nt,
                   "outputs must be int64 [%lld] and float32 [%lld, %lld]", (long long)rows, (long long)rows, (long long)nt);
        j.label = out[0].data;
        j.y = out[1].data;
        j.y_dtype = MLRT_FLOAT;
    } else {
        int32_t yt = out[0].dtype;
        MLRT_CHECK((yt == MLRT_FLOAT || yt == MLRT_DOUBLE || yt == MLRT_FLOAT16) && mlrt_numel(&out[0]) == rows * nt,
                   "Y must be a float [%lld, %lld]", (long long)rows, (long long)nt);
        j.y = out[0].data;
        j.y_dtype = yt;
    }
    /* about 4096 node visits per chunk: a single row (or a few) runs inline, no pool */
    int64_t work = 1 + (j.n_trees + 1) * 8;
    mlrt_parallel_for(ctx, rows, 1 + 4096 / work, tree_rows, &j);
    return fault_status(&j);
}

#define TREE_TYPES (MLRT_BIT(MLRT_FLOAT) | MLRT_BIT(MLRT_DOUBLE) | MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64))

MLRT_KERNEL(ml_tree_regressor, "TreeEnsembleRegressor", "ai.onnx.ml", 1, MLRT_OPSET_MAX, TREE_TYPES, tree_run);
MLRT_KERNEL(ml_tree_classifier, "TreeEnsembleClassifier", "ai.onnx.ml", 1, MLRT_OPSET_MAX, TREE_TYPES, tree_run);
MLRT_KERNEL(ml_tree_ensemble, "TreeEnsemble", "ai.onnx.ml", 5, MLRT_OPSET_MAX,
            MLRT_BIT(MLRT_FLOAT) | MLRT_BIT(MLRT_DOUBLE) | MLRT_BIT(MLRT_FLOAT16), tree_run);

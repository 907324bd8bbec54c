/* ml_tree.c -- ai.onnx.ml TreeEnsembleRegressor, TreeEnsembleClassifier, TreeEnsemble.
 *
 * One walk serves the three operators: the Python side flattens each version's
 * attributes into the tables described in ml_tree.h.  Every table index is checked
 * once before the walk; a walk longer than the node count means a cycle and fails.
 * Rows run in parallel; scores add up in double.
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


typedef struct tree_job {
    const mlrt_ml_tree_params *p;
    const mlrt_tensor *x;
    int64_t n_features, n_nodes, n_trees, n_base, n_classes;
    const int32_t *nodes;
    const int64_t *roots, *targets, *labels;
    const double *thresholds, *weights, *members, *base;
    void *y;          /* regressor: [N, n_targets]; classifier: Z [N, C] */
    int32_t y_dtype;
    int64_t *label;   /* classifier: [N] */
    atomic_int failed; /* 1: a cycle, 2: out of memory */
} tree_job;

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

/* The leaf reached from `node` for the row of features xr, or -1 after too many steps (a cycle). */
static int64_t tree_leaf(const tree_job *j, const double *xr, int64_t node) {
    for (int64_t steps = 0; steps <= j->n_nodes; ++steps) {
        const int32_t *rec = j->nodes + node * 4;
        int32_t mode = rec[0] & 15;
        if (mode == MLRT_ML_NODE_LEAF) return node;
        double v = xr[rec[1]], t = j->thresholds[node];
        int go;
        switch (mode) {
        case MLRT_ML_NODE_LEQ: go = v <= t; break;
        case MLRT_ML_NODE_LT: go = v < t; break;
        case MLRT_ML_NODE_GTE: go = v >= t; break;
        case MLRT_ML_NODE_GT: go = v > t; break;
        case MLRT_ML_NODE_EQ: go = v == t; break;
        case MLRT_ML_NODE_NEQ: go = v != t; break;
        default: {
            const double *set = j->members + (int64_t)t;
            go = member_of(set + 1, (int64_t)set[0], v);
            break;
        }
        }
        if (!go && (rec[0] & MLRT_ML_NODE_MISSING_TRUE) && isnan(v)) go = 1;
        node = go ? rec[2] : rec[3];
    }
    return -1;
}

/* The same walk when every branch node compares with one operator and none tracks
 * missing values (scikit-learn's forests: all x <= t). */
#define SAME_MODE_WALK(name, CMP)                                                       \
    static int64_t name(const tree_job *j, const double *xr, int64_t node) {            \
        for (int64_t steps = 0; steps <= j->n_nodes; ++steps) {                         \
            const int32_t *rec = j->nodes + node * 4;                                   \
            if (rec[0] == MLRT_ML_NODE_LEAF) return node;                               \
            node = (xr[rec[1]] CMP j->thresholds[node]) ? rec[2] : rec[3];              \
        }                                                                               \
        return -1;                                                                      \
    }
SAME_MODE_WALK(walk_leq, <=)
SAME_MODE_WALK(walk_lt, <)
SAME_MODE_WALK(walk_gte, >=)
SAME_MODE_WALK(walk_gt, >)
SAME_MODE_WALK(walk_eq, ==)
SAME_MODE_WALK(walk_neq, !=)

typedef int64_t (*walk_fn)(const tree_job *j, const double *xr, int64_t node);

static walk_fn pick_walk(int64_t same_mode) {
    switch (same_mode) {
    case MLRT_ML_NODE_LEQ: return walk_leq;
    case MLRT_ML_NODE_LT: return walk_lt;
    case MLRT_ML_NODE_GTE: return walk_gte;
    case MLRT_ML_NODE_GT: return walk_gt;
    case MLRT_ML_NODE_EQ: return walk_eq;
    case MLRT_ML_NODE_NEQ: return walk_neq;
    default: return tree_leaf;
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

static void tree_rows(void *arg, int64_t begin, int64_t end) {
    tree_job *j = arg;
    int64_t t = j->p->n_targets, f = j->n_features;
    double *s = malloc((size_t)(t + f + 1) * sizeof(double) + (size_t)t);
    if (!s) {
        atomic_store(&j->failed, 2);
        return;
    }
    double *xr = s + t;  /* the row's features, read once */
    unsigned char *has = (unsigned char *)(xr + f + 1);
    int64_t agg = j->p->aggregate;
    walk_fn walk = pick_walk(j->p->same_mode);
    for (int64_t r = begin; r < end; ++r) {
        for (int64_t k = 0; k < t; ++k) s[k] = 0.0, has[k] = 0;
        for (int64_t q = 0; q < f; ++q) xr[q] = mlrt_ml_get(j->x->data, j->x->dtype, r * f + q);
        for (int64_t tr = 0; tr < j->n_trees; ++tr) {
            int64_t leaf = walk(j, xr, j->roots[tr]);
            if (leaf < 0) {
                atomic_store(&j->failed, 1);
                free(s);
                return;
            }
            const int32_t *rec = j->nodes + leaf * 4;
            for (int64_t w = rec[2]; w < (int64_t)rec[2] + rec[3]; ++w) {
                int64_t k = j->targets[w];
                double v = j->weights[w];
                if (agg == MLRT_ML_AGGREGATE_MIN) s[k] = (!has[k] || v < s[k]) ? v : s[k];
                else if (agg == MLRT_ML_AGGREGATE_MAX) s[k] = (!has[k] || v > s[k]) ? v : s[k];
                else s[k] += v;
                has[k] = 1;
            }
        }
        if (j->p->classifier) classify(j, r, s, has);
        else regress(j, r, s, has);
    }
    free(s);
}

static int table(const mlrt_tensor *t, int32_t dtype, int32_t rank, const char *what) {
    MLRT_CHECK(t->dtype == dtype && t->rank == rank && mlrt_is_contiguous(t), "%s table: expected a contiguous rank-%d %s",
               what, rank, dtype == MLRT_DOUBLE ? "float64" : dtype == MLRT_INT32 ? "int32" : "int64");
    return MLRT_OK;
}

#define TRY(expr) do { int rc_ = (expr); if (rc_) return rc_; } while (0)

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
    int64_t m = in[1].shape[0], nw = in[4].shape[0], ns = in[6].shape[0], nt = p->n_targets;
    MLRT_CHECK(in[1].shape[1] == 4 && in[2].shape[0] == m, "nodes must be [M, 4] with M thresholds");
    MLRT_CHECK(p->same_mode >= -1 && p->same_mode <= MLRT_ML_NODE_NEQ, "bad same_mode %lld", (long long)p->same_mode);
    MLRT_CHECK(in[5].shape[0] == nw, "%lld weights for %lld targets", (long long)in[5].shape[0], (long long)nw);
    MLRT_CHECK(nt >= 1, "n_targets must be >= 1, got %lld", (long long)nt);
    MLRT_CHECK(p->aggregate >= MLRT_ML_AGGREGATE_SUM && p->aggregate <= MLRT_ML_AGGREGATE_MAX &&
                   p->post_transform >= MLRT_ML_TRANSFORM_NONE && p->post_transform <= MLRT_ML_TRANSFORM_PROBIT,
               "bad aggregate function or post transform");
    int64_t nb = in[7].shape[0];
    MLRT_CHECK(nb == 0 || nb == 1 || nb == nt, "%lld base values for %lld targets", (long long)nb, (long long)nt);
    const int32_t *nodes = in[1].data;
    const int64_t *roots = in[3].data, *targets = in[4].data;
    const double *thresholds = in[2].data, *members = in[6].data;
    for (int64_t i = 0; i < m; ++i) {
        const int32_t *rec = nodes + i * 4;
        int32_t mode = rec[0] & 15;
        MLRT_CHECK(rec[0] >= 0 && rec[0] < 32 && mode <= MLRT_ML_NODE_LEAF, "node %lld: bad kind %d", (long long)i,
                   rec[0]);
        MLRT_CHECK(p->same_mode < 0 || rec[0] == p->same_mode || rec[0] == MLRT_ML_NODE_LEAF,
                   "node %lld: kind %d, but same_mode is %lld", (long long)i, rec[0], (long long)p->same_mode);
        if (mode == MLRT_ML_NODE_LEAF) {
            MLRT_CHECK(rec[2] >= 0 && rec[3] >= 0 && rec[2] <= nw && rec[3] <= nw - rec[2],
                       "leaf %lld: weights [%d, +%d) outside the %lld weights", (long long)i, rec[2], rec[3],
                       (long long)nw);
            continue;
        }
        MLRT_CHECK(rec[1] >= 0 && rec[1] < f, "node %lld reads feature %d; X has %lld features", (long long)i, rec[1],
                   (long long)f);
        MLRT_CHECK(rec[2] >= 0 && rec[2] < m && rec[3] >= 0 && rec[3] < m, "node %lld: a child is outside the tree",
                   (long long)i);
        if (mode == MLRT_ML_NODE_MEMBER) {
            double at = thresholds[i];
            MLRT_CHECK(at >= 0 && at < (double)ns && at == floor(at), "node %lld: no set at %g of %lld members",
                       (long long)i, at, (long long)ns);
            double size = members[(int64_t)at];
            MLRT_CHECK(size >= 0 && size == floor(size) && size <= (double)(ns - 1 - (int64_t)at),
                       "node %lld: its set runs past the %lld members", (long long)i, (long long)ns);
        }
    }
    for (int64_t i = 0; i < in[3].shape[0]; ++i)
        MLRT_CHECK(roots[i] >= 0 && roots[i] < m, "tree %lld: root %lld outside the nodes", (long long)i, (long long)roots[i]);
    for (int64_t i = 0; i < nw; ++i)
        MLRT_CHECK(targets[i] >= 0 && targets[i] < nt, "weight %lld names target %lld of %lld", (long long)i,
                   (long long)targets[i], (long long)nt);
    tree_job j = {.p = p, .x = x, .n_features = f, .n_nodes = m, .n_trees = in[3].shape[0], .n_base = nb,
                  .n_classes = nt, .nodes = nodes, .roots = roots, .targets = targets, .labels = in[8].data,
                  .thresholds = in[2].data, .weights = in[5].data, .members = in[6].data, .base = in[7].data};
    atomic_init(&j.failed, 0);
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
    int64_t work = 1 + (j.n_trees + 1) * 8;
    mlrt_parallel_for(ctx, rows, 1 + 4096 / work, tree_rows, &j);
    int failed = atomic_load(&j.failed);
    if (failed == 1) return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "a tree has a cycle (a walk visited more nodes than exist)");
    if (failed == 2) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate the per-row scores");
    return MLRT_OK;
}

#define TREE_TYPES (MLRT_BIT(MLRT_FLOAT) | MLRT_BIT(MLRT_DOUBLE) | MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64))

MLRT_KERNEL(ml_tree_regressor, "TreeEnsembleRegressor", "ai.onnx.ml", 1, MLRT_OPSET_MAX, TREE_TYPES, tree_run);
MLRT_KERNEL(ml_tree_classifier, "TreeEnsembleClassifier", "ai.onnx.ml", 1, MLRT_OPSET_MAX, TREE_TYPES, tree_run);
MLRT_KERNEL(ml_tree_ensemble, "TreeEnsemble", "ai.onnx.ml", 5, MLRT_OPSET_MAX,
            MLRT_BIT(MLRT_FLOAT) | MLRT_BIT(MLRT_DOUBLE) | MLRT_BIT(MLRT_FLOAT16), tree_run);

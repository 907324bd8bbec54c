/* ml_linear.c -- ai.onnx.ml LinearRegressor, LinearClassifier, SVMRegressor, SVMClassifier.
 *
 * X ([N, F], or [F] for one row) is read as double; the weights arrive as float64
 * tables after X (see ml_linear.h).  Dot products go through mlrt_dgemm; scores are
 * written as float32.  Labels, binary-class score layouts and the probability
 * coupling of SVMClassifier follow onnxruntime's reading of the spec (the runtime
 * converted scikit-learn models are checked against):
 *   LinearClassifier  label = argmax of the raw scores (K == 1: score > 0), then the
 *                     post transform; K == 1 with two labels writes [1 - t, t] where t is
 *                     the score after LOGISTIC or PROBIT (SOFTMAX leaves one score alone).
 *   SVMClassifier     linear mode (no support vectors): one score per class;
 *                     SVC mode: one-vs-one scores, votes pick the label, and with
 *                     prob_a/prob_b the pairwise sigmoid probabilities are coupled
 *                     into class probabilities (Wu, Lin and Weng's method). */
#include <math.h>
#include <stdlib.h>

#include "gemm.h"
#include "internal.h"
#include "ml_linear.h"
#include "ml_misc.h"

/* from ml_misc.c */
void mlrt_ml_transform(double *v, int64_t n, int32_t kind);
double mlrt_ml_probit(double v);
double mlrt_ml_get(const void *p, int32_t dtype, int64_t i);

#define ML_FEATURE_TYPES (MLRT_BIT(MLRT_FLOAT) | MLRT_BIT(MLRT_DOUBLE) | MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64))

/* X as a freshly allocated double [rows, cols] matrix (NULL: out of memory, error set). */
static double *ml_load_x(const mlrt_tensor *x, int64_t *rows, int64_t *cols, int *rc) {
    *rc = MLRT_OK;
    if (x->rank != 1 && x->rank != 2) {
        *rc = mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "X must be [N, F] or [F], got rank %d", x->rank);
        return NULL;
    }
    if (!mlrt_is_contiguous(x)) {
        *rc = mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "X must be contiguous");
        return NULL;
    }
    *rows = x->rank == 1 ? 1 : x->shape[0];
    *cols = x->shape[x->rank - 1];
    int64_t n = *rows * *cols;
    double *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!buf) {
        *rc = mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate %lld doubles for X", (long long)n);
        return NULL;
    }
    for (int64_t i = 0; i < n; ++i) buf[i] = mlrt_ml_get(x->data, x->dtype, i);
    return buf;
}

static int ml_table(const mlrt_tensor *t, int32_t dtype, int32_t rank, const char *what) {
    MLRT_CHECK(t->dtype == dtype && t->rank == rank && mlrt_is_contiguous(t), "%s table: expected a contiguous rank-%d %s",
               what, rank, dtype == MLRT_DOUBLE ? "float64" : "int64");
    return MLRT_OK;
}

#define TRY(expr) do { int rc_ = (expr); if (rc_) return rc_; } while (0)

/* scores[N, K] = X[N, F] * W[K, F]^T + b[K] in double (b may be NULL) */
static int ml_affine(const mlrt_context *ctx, const double *x, int64_t n, int64_t f, const double *w, int64_t k,
                     const double *b, double *scores) {
    if (n == 0 || k == 0) return MLRT_OK;
    if (f == 0) {
        for (int64_t i = 0; i < n * k; ++i) scores[i] = 0.0;
    } else {
        int rc = mlrt_dgemm(ctx, false, true, n, k, f, 1.0, x, f, w, f, 0.0, scores, k);
        if (rc) return rc;
    }
    if (b)
        for (int64_t r = 0; r < n; ++r)
            for (int64_t j = 0; j < k; ++j) scores[r * k + j] += b[j];
    return MLRT_OK;
}

/* ---- LinearRegressor ------------------------------------------------------------------- */

static int linear_regressor_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                                int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ml_linear_regressor_params, p, params, params_size);
    MLRT_CHECK(n_in == 3 && n_out == 1, "LinearRegressor takes X, coefficients, intercepts");
    TRY(ml_table(&in[1], MLRT_DOUBLE, 2, "coefficients"));
    TRY(ml_table(&in[2], MLRT_DOUBLE, 1, "intercepts"));
    int64_t t = in[1].shape[0], f = in[1].shape[1], n = 0, fx = 0;
    MLRT_CHECK(in[2].shape[0] == t || in[2].shape[0] == 0, "%lld intercepts for %lld targets",
               (long long)in[2].shape[0], (long long)t);
    MLRT_CHECK(p->post_transform >= MLRT_ML_TRANSFORM_NONE && p->post_transform <= MLRT_ML_TRANSFORM_PROBIT,
               "bad post_transform %lld", (long long)p->post_transform);
    int rc;
    double *x = ml_load_x(&in[0], &n, &fx, &rc);
    if (!x) return rc;
    if (fx != f) {
        free(x);
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "X has %lld features, the coefficients %lld", (long long)fx,
                         (long long)f);
    }
    if (out[0].dtype != MLRT_FLOAT || mlrt_numel(&out[0]) != n * t) {
        free(x);
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "Y must be float32 [%lld, %lld]", (long long)n, (long long)t);
    }
    double *s = malloc((size_t)(n * t > 0 ? n * t : 1) * sizeof(double));
    if (!s) {
        free(x);
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate the scores");
    }
    rc = ml_affine(ctx, x, n, f, in[1].data, t, in[2].shape[0] ? in[2].data : NULL, s);
    if (!rc) {
        float *y = out[0].data;
        for (int64_t r = 0; r < n; ++r) {
            mlrt_ml_transform(s + r * t, t, (int32_t)p->post_transform);
            for (int64_t j = 0; j < t; ++j) y[r * t + j] = (float)s[r * t + j];
        }
    }
    free(s);
    free(x);
    return rc;
}

MLRT_KERNEL(ml_linear_regressor, "LinearRegressor", "ai.onnx.ml", 1, MLRT_OPSET_MAX, ML_FEATURE_TYPES,
            linear_regressor_run);

/* ---- LinearClassifier ---------------------------------------------------------------------- */

static int linear_classifier_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                                 int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ml_linear_classifier_params, p, params, params_size);
    MLRT_CHECK(n_in == 4 && n_out == 2, "LinearClassifier takes X, coefficients, intercepts, labels");
    TRY(ml_table(&in[1], MLRT_DOUBLE, 2, "coefficients"));
    TRY(ml_table(&in[2], MLRT_DOUBLE, 1, "intercepts"));
    TRY(ml_table(&in[3], MLRT_INT64, 1, "labels"));
    int64_t k = in[1].shape[0], f = in[1].shape[1], c = in[3].shape[0], n = 0, fx = 0;
    MLRT_CHECK(k >= 1 && in[2].shape[0] == k, "%lld intercepts for %lld coefficient rows", (long long)in[2].shape[0],
               (long long)k);
    MLRT_CHECK(k == 1 || c >= k, "%lld class labels for %lld classes", (long long)c, (long long)k);
    int second = p->add_second_class != 0;
    MLRT_CHECK(!second || (k == 1 && c == 2), "add_second_class needs one score and two labels");
    int64_t zc = second ? 2 : k;
    int rc;
    double *x = ml_load_x(&in[0], &n, &fx, &rc);
    if (!x) return rc;
    if (fx != f || out[0].dtype != MLRT_INT64 || mlrt_numel(&out[0]) != n || out[1].dtype != MLRT_FLOAT ||
        mlrt_numel(&out[1]) != n * zc) {
        free(x);
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "X has %lld features for %lld coefficients per class, or the "
                         "outputs are not int64 [%lld] and float32 [%lld, %lld]", (long long)fx, (long long)f,
                         (long long)n, (long long)n, (long long)zc);
    }
    double *s = malloc((size_t)(n * k > 0 ? n * k : 1) * sizeof(double));
    if (!s) {
        free(x);
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate the scores");
    }
    rc = ml_affine(ctx, x, n, f, in[1].data, k, in[2].data, s);
    const int64_t *labels = in[3].data;
    int64_t *y = out[0].data;
    float *z = out[1].data;
    for (int64_t r = 0; rc == MLRT_OK && r < n; ++r) {
        double *row = s + r * k;
        if (k == 1) {
            int pos = row[0] > 0;
            y[r] = c == 2 ? labels[pos] : pos;
            double v = row[0];  /* one score: only the elementwise transforms apply */
            if (p->post_transform == MLRT_ML_TRANSFORM_PROBIT || p->post_transform == MLRT_ML_TRANSFORM_LOGISTIC)
                mlrt_ml_transform(&v, 1, (int32_t)p->post_transform);
            if (second) {
                z[r * 2] = (float)(1.0 - v);
                z[r * 2 + 1] = (float)v;
            } else {
                z[r] = (float)v;
            }
            continue;
        }
        int64_t best = 0;
        for (int64_t j = 1; j < k; ++j)
            if (row[j] > row[best]) best = j;
        y[r] = labels[best];
        mlrt_ml_transform(row, k, (int32_t)p->post_transform);
        for (int64_t j = 0; j < k; ++j) z[r * k + j] = (float)row[j];
    }
    free(s);
    free(x);
    return rc;
}

MLRT_KERNEL(ml_linear_classifier, "LinearClassifier", "ai.onnx.ml", 1, MLRT_OPSET_MAX, ML_FEATURE_TYPES,
            linear_classifier_run);

/* ---- SVM kernels ------------------------------------------------------------------------------ */

typedef struct svm_kernel {
    int64_t type;
    double gamma, coef0, degree;
} svm_kernel;

/* k[N, V] = kernel(x_r, sv_v) */
static int svm_kernels(const mlrt_context *ctx, const svm_kernel *kp, const double *x, int64_t n, int64_t f,
                       const double *sv, int64_t v, double *k) {
    if (n == 0 || v == 0) return MLRT_OK;
    if (kp->type == MLRT_ML_SVM_RBF) {
        for (int64_t r = 0; r < n; ++r)
            for (int64_t j = 0; j < v; ++j) {
                double d2 = 0.0;
                for (int64_t q = 0; q < f; ++q) {
                    double d = x[r * f + q] - sv[j * f + q];
                    d2 += d * d;
                }
                k[r * v + j] = exp(-kp->gamma * d2);
            }
        return MLRT_OK;
    }
    int rc = ml_affine(ctx, x, n, f, sv, v, NULL, k);
    if (rc) return rc;
    if (kp->type == MLRT_ML_SVM_POLY)
        for (int64_t i = 0; i < n * v; ++i) k[i] = pow(kp->gamma * k[i] + kp->coef0, kp->degree);
    else if (kp->type == MLRT_ML_SVM_SIGMOID)
        for (int64_t i = 0; i < n * v; ++i) k[i] = tanh(kp->gamma * k[i] + kp->coef0);
    return MLRT_OK;
}

/* ---- SVMRegressor ---------------------------------------------------------------------------------- */

static int svm_regressor_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                             int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ml_svm_regressor_params, p, params, params_size);
    MLRT_CHECK(n_in == 4 && n_out == 1, "SVMRegressor takes X, support vectors, coefficients, rho");
    TRY(ml_table(&in[1], MLRT_DOUBLE, 2, "support vectors"));
    TRY(ml_table(&in[2], MLRT_DOUBLE, 1, "coefficients"));
    TRY(ml_table(&in[3], MLRT_DOUBLE, 1, "rho"));
    MLRT_CHECK(p->kernel_type >= MLRT_ML_SVM_LINEAR && p->kernel_type <= MLRT_ML_SVM_SIGMOID, "bad kernel type %lld",
               (long long)p->kernel_type);
    MLRT_CHECK(in[3].shape[0] >= 1, "rho needs one value");
    int64_t v = in[1].shape[0], f = in[1].shape[1], nc = in[2].shape[0], n = 0, fx = 0;
    int linear = v == 0;
    MLRT_CHECK(linear ? nc >= 1 : nc >= v, "%lld coefficients for %lld support vectors", (long long)nc, (long long)v);
    int rc;
    double *x = ml_load_x(&in[0], &n, &fx, &rc);
    if (!x) return rc;
    if ((linear ? fx != nc : fx != f) || out[0].dtype != MLRT_FLOAT || mlrt_numel(&out[0]) != n) {
        free(x);
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "X has %lld features, the model %lld; Y must be float32 [%lld, 1]",
                         (long long)fx, (long long)(linear ? nc : f), (long long)n);
    }
    int64_t width = linear ? 1 : v;
    double *k = malloc((size_t)(n * width > 0 ? n * width : 1) * sizeof(double));
    if (!k) {
        free(x);
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate the kernel values");
    }
    const double *coef = in[2].data, rho = ((const double *)in[3].data)[0];
    if (linear) {
        rc = ml_affine(ctx, x, n, fx, coef, 1, NULL, k);
    } else {
        svm_kernel kp = {p->kernel_type, p->gamma, p->coef0, p->degree};
        rc = svm_kernels(ctx, &kp, x, n, f, in[1].data, v, k);
    }
    float *y = out[0].data;
    for (int64_t r = 0; rc == MLRT_OK && r < n; ++r) {
        double s = 0.0;
        if (linear) {
            s = k[r];
        } else {
            for (int64_t j = 0; j < v; ++j) s += coef[j] * k[r * v + j];
        }
        s += rho;
        if (p->one_class) s = s > 0 ? 1.0 : -1.0;
        if (p->post_transform == MLRT_ML_TRANSFORM_PROBIT) s = mlrt_ml_probit(s);
        y[r] = (float)s;
    }
    free(k);
    free(x);
    return rc;
}

MLRT_KERNEL(ml_svm_regressor, "SVMRegressor", "ai.onnx.ml", 1, MLRT_OPSET_MAX, ML_FEATURE_TYPES, svm_regressor_run);

/* ---- SVMClassifier ------------------------------------------------------------------------------------ */

/* Pairwise probabilities r[C, C] -> class probabilities p[C] (Wu, Lin and Weng 2004,
 * method 2, as libsvm solves it: at most 100 sweeps, stop below 0.005 / C). */
static void svm_couple(int64_t c, const double *r, double *q, double *qp, double *p) {
    for (int64_t t = 0; t < c; ++t) {
        p[t] = 1.0 / (double)c;
        q[t * c + t] = 0.0;
        for (int64_t j = 0; j < t; ++j) {
            q[t * c + t] += r[j * c + t] * r[j * c + t];
            q[t * c + j] = q[j * c + t];
        }
        for (int64_t j = t + 1; j < c; ++j) {
            q[t * c + t] += r[j * c + t] * r[j * c + t];
            q[t * c + j] = -r[j * c + t] * r[t * c + j];
        }
    }
    double eps = 0.005 / (double)c;
    for (int iter = 0; iter < 100; ++iter) {
        double pqp = 0.0, max_err = 0.0;
        for (int64_t t = 0; t < c; ++t) {
            qp[t] = 0.0;
            for (int64_t j = 0; j < c; ++j) qp[t] += q[t * c + j] * p[j];
            pqp += p[t] * qp[t];
        }
        for (int64_t t = 0; t < c; ++t) {
            double e = fabs(qp[t] - pqp);
            if (e > max_err) max_err = e;
        }
        if (max_err < eps) break;
        for (int64_t t = 0; t < c; ++t) {
            double diff = (-qp[t] + pqp) / q[t * c + t];
            p[t] += diff;
            pqp = (pqp + diff * (diff * q[t * c + t] + 2.0 * qp[t])) / (1.0 + diff) / (1.0 + diff);
            for (int64_t j = 0; j < c; ++j) {
                qp[j] = (qp[j] + diff * q[t * c + j]) / (1.0 + diff);
                p[j] /= 1.0 + diff;
            }
        }
    }
}

static double svm_logistic(double v) {
    double e = 1.0 / (1.0 + exp(-fabs(v)));
    return v < 0 ? 1.0 - e : e;
}

static int svm_classifier_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                              int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ml_svm_classifier_params, p, params, params_size);
    MLRT_CHECK(n_in == 8 && n_out == 2, "SVMClassifier takes X and 7 tables");
    TRY(ml_table(&in[1], MLRT_DOUBLE, 2, "support vectors"));
    TRY(ml_table(&in[2], MLRT_DOUBLE, 1, "coefficients"));
    TRY(ml_table(&in[3], MLRT_DOUBLE, 1, "rho"));
    TRY(ml_table(&in[4], MLRT_DOUBLE, 1, "prob_a"));
    TRY(ml_table(&in[5], MLRT_DOUBLE, 1, "prob_b"));
    TRY(ml_table(&in[6], MLRT_INT64, 1, "vectors_per_class"));
    TRY(ml_table(&in[7], MLRT_INT64, 1, "labels"));
    MLRT_CHECK(p->kernel_type >= MLRT_ML_SVM_LINEAR && p->kernel_type <= MLRT_ML_SVM_SIGMOID, "bad kernel type %lld",
               (long long)p->kernel_type);
    int64_t v = in[1].shape[0], f = in[1].shape[1], ncoef = in[2].shape[0], nrho = in[3].shape[0];
    int64_t nprob = in[4].shape[0], c = in[7].shape[0], n = 0, fx = 0;
    const int64_t *per_class = in[6].data, *labels = in[7].data;
    const double *coef = in[2].data, *rho = in[3].data, *pa = in[4].data, *pb = in[5].data;
    MLRT_CHECK(c >= 1 && c < 65536, "%lld classes (1 to 65535 supported)", (long long)c);
    MLRT_CHECK(in[5].shape[0] == nprob, "prob_a and prob_b differ in length");
    int svc = v > 0;
    int64_t pairs = c * (c - 1) / 2;
    if (svc) {
        MLRT_CHECK(in[6].shape[0] == c, "%lld vectors_per_class for %lld classes", (long long)in[6].shape[0],
                   (long long)c);
        int64_t total = 0;
        for (int64_t i = 0; i < c; ++i) {
            MLRT_CHECK(per_class[i] >= 0, "vectors_per_class must not be negative");
            total += per_class[i];
        }
        MLRT_CHECK(total == v, "vectors_per_class adds up to %lld, there are %lld support vectors", (long long)total,
                   (long long)v);
        MLRT_CHECK(ncoef >= (c - 1) * v, "%lld coefficients, expected (classes - 1) x vectors = %lld", (long long)ncoef,
                   (long long)((c - 1) * v));
        MLRT_CHECK(nrho >= pairs, "%lld rho values for %lld class pairs", (long long)nrho, (long long)pairs);
        MLRT_CHECK(nprob == 0 || nprob >= pairs, "%lld prob_a values for %lld class pairs", (long long)nprob,
                   (long long)pairs);
    } else {
        MLRT_CHECK(nrho >= 1, "rho needs a value");
        MLRT_CHECK(ncoef % c == 0, "%lld coefficients do not split into %lld classes", (long long)ncoef, (long long)c);
        f = ncoef / c;
    }
    int proba = svc && nprob > 0;
    int64_t zc = !svc || proba ? c : (c > 2 ? pairs : 2);
    int rc;
    double *x = ml_load_x(&in[0], &n, &fx, &rc);
    if (!x) return rc;
    if (fx != f || out[0].dtype != MLRT_INT64 || mlrt_numel(&out[0]) != n || out[1].dtype != MLRT_FLOAT ||
        mlrt_numel(&out[1]) != n * zc) {
        free(x);
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "X has %lld features, the model %lld; outputs must be int64 [%lld] "
                         "and float32 [%lld, %lld]", (long long)fx, (long long)f, (long long)n, (long long)n,
                         (long long)zc);
    }
    int64_t width = svc ? v : c, scratch = pairs + 3 * c * c + 3 * c + 2;
    double *k = malloc((size_t)(n * width + scratch) * sizeof(double));
    if (!k) {
        free(x);
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate the kernel values");
    }
    double *sc = k + n * width, *r2 = sc + pairs + 2, *q = r2 + c * c, *qp = q + c * c, *pr = qp + c;
    double *votes = pr + c;
    if (svc) {
        svm_kernel kp = {p->kernel_type, p->gamma, p->coef0, p->degree};
        rc = svm_kernels(ctx, &kp, x, n, f, in[1].data, v, k);
    } else {  /* linear mode: one score per class, kernel LINEAR whatever kernel_type says */
        rc = ml_affine(ctx, x, n, f, coef, c, NULL, k);
        for (int64_t i = 0; i < n * c; ++i) k[i] += rho[0];
    }
    int64_t *y = out[0].data;
    float *z = out[1].data;
    for (int64_t r = 0; rc == MLRT_OK && r < n; ++r) {
        float *zr = z + r * zc;
        int64_t best = 0;
        double best_w = 0.0;
        if (!svc) {
            double *row = k + r * c;
            for (int64_t j = 1; j < c; ++j)
                if (row[j] > row[best]) best = j;
            best_w = row[best];
            if (c == 2 && p->weights_are_all_positive && best_w >= 0.5) best = 1;
            y[r] = labels[best];
            if (c > 1) {
                mlrt_ml_transform(row, c, (int32_t)p->post_transform);
            } else if (p->post_transform == MLRT_ML_TRANSFORM_PROBIT) {
                row[0] = mlrt_ml_probit(row[0]);
            }
            for (int64_t j = 0; j < c; ++j) zr[j] = (float)row[j];
            continue;
        }
        const double *kr = k + r * v;
        for (int64_t i = 0; i < c; ++i) votes[i] = 0.0;
        int64_t idx = 0, start_i = 0;
        for (int64_t i = 0; i < c; ++i) {
            int64_t start_j = start_i + per_class[i];
            for (int64_t j = i + 1; j < c; ++j) {
                double s = 0.0;
                for (int64_t m = 0; m < per_class[i]; ++m) s += coef[(j - 1) * v + start_i + m] * kr[start_i + m];
                for (int64_t m = 0; m < per_class[j]; ++m) s += coef[i * v + start_j + m] * kr[start_j + m];
                s += rho[idx];
                sc[idx++] = s;
                votes[s > 0 ? i : j] += 1.0;
                start_j += per_class[j];
            }
            start_i += per_class[i];
        }
        for (int64_t i = 1; i < c; ++i)
            if (votes[i] > votes[best]) best = i;
        y[r] = labels[best];
        if (proba) {
            idx = 0;
            for (int64_t i = 0; i < c; ++i)
                for (int64_t j = i + 1; j < c; ++j, ++idx) {
                    double pv = 1.0 - svm_logistic(sc[idx] * pa[idx] + pb[idx]);
                    pv = pv < 1e-7 ? 1e-7 : (pv > 1.0 - 1e-7 ? 1.0 - 1e-7 : pv);
                    r2[i * c + j] = pv;
                    r2[j * c + i] = 1.0 - pv;
                }
            svm_couple(c, r2, q, qp, pr);
            if (c > 1) {
                mlrt_ml_transform(pr, c, (int32_t)p->post_transform);
            } else if (p->post_transform == MLRT_ML_TRANSFORM_PROBIT) {
                pr[0] = mlrt_ml_probit(pr[0]);
            }
            for (int64_t j = 0; j < c; ++j) zr[j] = (float)pr[j];
        } else if (c > 2) {
            mlrt_ml_transform(sc, pairs, (int32_t)p->post_transform);
            for (int64_t j = 0; j < pairs; ++j) zr[j] = (float)sc[j];
        } else if (pairs == 1) {  /* two classes, one score s: [-s, s] (NONE), [logistic(-s), logistic(s)]
                                    * (LOGISTIC), [1 - s, s] (SOFTMAX kinds), [probit(s), 0] */
            double s = sc[0];
            if (p->post_transform == MLRT_ML_TRANSFORM_PROBIT) {
                zr[0] = (float)mlrt_ml_probit(s);
                zr[1] = 0.0f;
            } else if (p->post_transform == MLRT_ML_TRANSFORM_NONE) {
                zr[0] = (float)-s;
                zr[1] = (float)s;
            } else if (p->post_transform == MLRT_ML_TRANSFORM_LOGISTIC) {
                zr[0] = (float)svm_logistic(-s);
                zr[1] = (float)svm_logistic(s);
            } else {
                zr[0] = (float)(1.0 - s);
                zr[1] = (float)s;
            }
        } else {  /* one class: no pair */
            zr[0] = zr[1] = 0.0f;
        }
    }
    free(k);
    free(x);
    return rc;
}

MLRT_KERNEL(ml_svm_classifier, "SVMClassifier", "ai.onnx.ml", 1, MLRT_OPSET_MAX, ML_FEATURE_TYPES, svm_classifier_run);

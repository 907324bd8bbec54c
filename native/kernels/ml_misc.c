/* ml_misc.c -- small ai.onnx.ml kernels: Normalizer, Binarizer, Scaler, Imputer,
 * ArrayFeatureExtractor, FeatureVectorizer; and the score post-transforms the
 * classifiers share (mlrt_ml_transform, declared where used).
 *
 * Feature matrices are [N, C] rows of C features.  Scores are float32 (the ONNX-ML
 * spec's output type) computed in double.  Tables (offsets, scales, imputed values)
 * are extra inputs after X, made by the Python side from the attributes. */
#include <math.h>

#include "internal.h"
#include "ml_misc.h"

/* ---- shared: post transforms ----------------------------------------------------- */

static double ml_logistic(double v) {
    double e = 1.0 / (1.0 + exp(-fabs(v)));
    return v < 0 ? 1.0 - e : e;
}

/* The approximate inverse error function (Winitzki, a = 0.147) that ONNX-ML
 * runtimes use for PROBIT, so results agree with theirs. */
static double ml_erfinv(double x) {
    double sgn = x < 0 ? -1.0 : 1.0;
    double t = (1.0 - x) * (1.0 + x);
    if (t == 0.0) return sgn * INFINITY;
    double lg = log(t);
    double v = 2.0 / (M_PI * 0.147) + 0.5 * lg;
    double v2 = lg / 0.147;
    return sgn * sqrt(-v + sqrt(v * v - v2));
}

double mlrt_ml_probit(double v) { return M_SQRT2 * ml_erfinv(2.0 * v - 1.0); }
double mlrt_ml_logistic(double v) { return ml_logistic(v); }

/* Apply a post transform to n scores in place: LOGISTIC and PROBIT elementwise,
 * SOFTMAX and SOFTMAX_ZERO over the n values. */
void mlrt_ml_transform(double *v, int64_t n, int32_t kind) {
    if (n <= 0) return;
    switch (kind) {
    case MLRT_ML_TRANSFORM_LOGISTIC:
        for (int64_t i = 0; i < n; ++i) v[i] = ml_logistic(v[i]);
        break;
    case MLRT_ML_TRANSFORM_PROBIT:
        for (int64_t i = 0; i < n; ++i) v[i] = mlrt_ml_probit(v[i]);
        break;
    case MLRT_ML_TRANSFORM_SOFTMAX: {
        double m = v[0], s = 0.0;
        for (int64_t i = 1; i < n; ++i) m = v[i] > m ? v[i] : m;
        for (int64_t i = 0; i < n; ++i) s += (v[i] = exp(v[i] - m));
        for (int64_t i = 0; i < n; ++i) v[i] /= s;
        break;
    }
    case MLRT_ML_TRANSFORM_SOFTMAX_ZERO: {  /* exact zeros (|v| <= 1e-7) stay (nearly) zero */
        double m = v[0], s = 0.0;
        for (int64_t i = 1; i < n; ++i) m = v[i] > m ? v[i] : m;
        double em = exp(-m);
        for (int64_t i = 0; i < n; ++i) {
            v[i] = (v[i] > 1e-7 || v[i] < -1e-7) ? exp(v[i] - m) : v[i] * em;
            s += v[i];
        }
        if (s == 0.0)
            for (int64_t i = 0; i < n; ++i) v[i] = 0.5;
        else
            for (int64_t i = 0; i < n; ++i) v[i] /= s;
        break;
    }
    default:
        break;
    }
}

/* ---- shared: reading features ------------------------------------------------------ */

static inline double ml_get(const void *p, int32_t dtype, int64_t i) {
    switch (dtype) {
    case MLRT_FLOAT: return ((const float *)p)[i];
    case MLRT_DOUBLE: return ((const double *)p)[i];
    case MLRT_INT32: return ((const int32_t *)p)[i];
    case MLRT_INT64: return (double)((const int64_t *)p)[i];
    case MLRT_FLOAT16: return mlrt_f16_to_f32(((const uint16_t *)p)[i]);
    default: return NAN;
    }
}

/* Read element i of a feature tensor as double (float, double, int32, int64, float16). */
double mlrt_ml_get(const void *p, int32_t dtype, int64_t i) { return ml_get(p, dtype, i); }

#define ML_FEATURE_TYPES (MLRT_BIT(MLRT_FLOAT) | MLRT_BIT(MLRT_DOUBLE) | MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64))

/* rows and columns of a contiguous [N, C] or [C] input */
static int ml_matrix(const mlrt_tensor *x, const char *what, int64_t *rows, int64_t *cols) {
    MLRT_CHECK(x->rank == 1 || x->rank == 2, "%s must be [N, C] or [C], got rank %d", what, x->rank);
    MLRT_CHECK(mlrt_is_contiguous(x), "%s must be contiguous", what);
    *rows = x->rank == 1 ? 1 : x->shape[0];
    *cols = x->shape[x->rank - 1];
    return MLRT_OK;
}

/* ---- Normalizer ----------------------------------------------------------------------- */

typedef struct { const mlrt_tensor *x; float *y; int64_t c; int64_t norm; } norm_job;

static void normalizer_rows(void *arg, int64_t begin, int64_t end) {
    const norm_job *j = arg;
    for (int64_t r = begin; r < end; ++r) {
        int64_t base = r * j->c;
        double d = 0.0;
        if (j->norm == MLRT_ML_NORM_MAX) {  /* the largest value (NaN skipped), not the largest magnitude */
            d = -INFINITY;
            int any = 0;
            for (int64_t k = 0; k < j->c; ++k) {
                double v = ml_get(j->x->data, j->x->dtype, base + k);
                if (v > d) d = v, any = 1;
            }
            if (!any) d = 0.0;
        } else if (j->norm == MLRT_ML_NORM_L1) {
            for (int64_t k = 0; k < j->c; ++k) d += fabs(ml_get(j->x->data, j->x->dtype, base + k));
        } else {
            for (int64_t k = 0; k < j->c; ++k) {
                double v = ml_get(j->x->data, j->x->dtype, base + k);
                d += v * v;
            }
            d = sqrt(d);
        }
        for (int64_t k = 0; k < j->c; ++k) {
            double v = ml_get(j->x->data, j->x->dtype, base + k);
            j->y[base + k] = (float)(d != 0.0 ? v / d : v);
        }
    }
}

static int normalizer_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                          const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ml_normalizer_params, p, params, params_size);
    MLRT_CHECK(n_in == 1 && n_out == 1, "Normalizer takes 1 input and 1 output");
    int64_t n = 0, c = 0;
    int rc = ml_matrix(&in[0], "X", &n, &c);
    if (rc) return rc;
    MLRT_CHECK(out[0].dtype == MLRT_FLOAT && mlrt_numel(&out[0]) == n * c, "Y must be float32 with X's size");
    MLRT_CHECK(p->norm >= MLRT_ML_NORM_MAX && p->norm <= MLRT_ML_NORM_L2, "norm %lld is not MAX, L1 or L2",
               (long long)p->norm);
    norm_job j = {&in[0], out[0].data, c, p->norm};
    mlrt_parallel_for(ctx, n, 1 + 4096 / (c + 1), normalizer_rows, &j);
    return MLRT_OK;
}

MLRT_KERNEL(ml_normalizer, "Normalizer", "ai.onnx.ml", 1, MLRT_OPSET_MAX, ML_FEATURE_TYPES, normalizer_run);

/* ---- Binarizer -------------------------------------------------------------------------- */

static int binarizer_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                         const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ml_binarizer_params, p, params, params_size);
    MLRT_CHECK(n_in == 1 && n_out == 1, "Binarizer takes 1 input and 1 output");
    MLRT_CHECK(mlrt_is_contiguous(&in[0]), "X must be contiguous");
    int64_t n = mlrt_numel(&in[0]);
    MLRT_CHECK(out[0].dtype == in[0].dtype && mlrt_numel(&out[0]) == n, "Y must have X's type and size");
    double t = p->threshold;
    const void *x = in[0].data;
    void *y = out[0].data;
    switch (in[0].dtype) {  /* NaN > t is false: NaN becomes 0 */
    case MLRT_FLOAT:
        for (int64_t i = 0; i < n; ++i) ((float *)y)[i] = ((const float *)x)[i] > t ? 1.0f : 0.0f;
        break;
    case MLRT_DOUBLE:
        for (int64_t i = 0; i < n; ++i) ((double *)y)[i] = ((const double *)x)[i] > t ? 1.0 : 0.0;
        break;
    case MLRT_INT32:
        for (int64_t i = 0; i < n; ++i) ((int32_t *)y)[i] = ((const int32_t *)x)[i] > t;
        break;
    case MLRT_INT64:
        for (int64_t i = 0; i < n; ++i) ((int64_t *)y)[i] = (double)((const int64_t *)x)[i] > t;
        break;
    default:
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "Binarizer: element type %d", in[0].dtype);
    }
    return MLRT_OK;
}

MLRT_KERNEL(ml_binarizer, "Binarizer", "ai.onnx.ml", 1, MLRT_OPSET_MAX, ML_FEATURE_TYPES, binarizer_run);

/* ---- Scaler: y = (x - offset[c]) * scale[c] over the last axis, as float32 ----------------- */

static int scaler_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                      const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 3 && n_out == 1, "Scaler takes X, offsets and scales");
    const mlrt_tensor *x = &in[0], *off = &in[1], *sc = &in[2];
    MLRT_CHECK(mlrt_is_contiguous(x), "X must be contiguous");
    MLRT_CHECK(off->dtype == MLRT_DOUBLE && sc->dtype == MLRT_DOUBLE && off->rank == 1 && sc->rank == 1,
               "offset and scale tables must be 1-D float64");
    int64_t n = mlrt_numel(x), c = x->rank ? x->shape[x->rank - 1] : 1;
    int64_t no = off->shape[0], ns = sc->shape[0];
    MLRT_CHECK((no == 1 || no == c) && (ns == 1 || ns == c),
               "offset (%lld values) and scale (%lld values) must have 1 value or one per feature (%lld)",
               (long long)no, (long long)ns, (long long)c);
    MLRT_CHECK(out[0].dtype == MLRT_FLOAT && mlrt_numel(&out[0]) == n, "Y must be float32 with X's size");
    const double *o = off->data, *s = sc->data;
    float *y = out[0].data;
    for (int64_t i = 0; i < n; ++i) {
        int64_t k = c ? i % c : 0;
        y[i] = (float)((ml_get(x->data, x->dtype, i) - o[no == 1 ? 0 : k]) * s[ns == 1 ? 0 : k]);
    }
    return MLRT_OK;
}

MLRT_KERNEL(ml_scaler, "Scaler", "ai.onnx.ml", 1, MLRT_OPSET_MAX, ML_FEATURE_TYPES, scaler_run);

/* ---- Imputer ---------------------------------------------------------------------------------- */

static int imputer_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                       const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ml_imputer_params, p, params, params_size);
    MLRT_CHECK(n_in == 2 && n_out == 1, "Imputer takes X and the imputed values");
    const mlrt_tensor *x = &in[0], *v = &in[1];
    MLRT_CHECK(mlrt_is_contiguous(x), "X must be contiguous");
    int64_t n = mlrt_numel(x), c = x->rank ? x->shape[x->rank - 1] : 1;
    MLRT_CHECK(v->rank == 1 && (v->shape[0] == 1 || v->shape[0] == c),
               "the imputed values must be 1 value or one per feature (%lld)", (long long)c);
    MLRT_CHECK(out[0].dtype == x->dtype && mlrt_numel(&out[0]) == n, "Y must have X's type and size");
    int64_t nv = v->shape[0];
    if (x->dtype == MLRT_FLOAT || x->dtype == MLRT_DOUBLE) {
        MLRT_CHECK(v->dtype == MLRT_DOUBLE, "imputed values for a float input must be float64");
        const double *iv = v->data;
        double r = p->replaced_value;
        for (int64_t i = 0; i < n; ++i) {
            double e = ml_get(x->data, x->dtype, i);
            int hit = p->replace_nan ? isnan(e) : e == r;
            double w = hit ? iv[nv == 1 ? 0 : i % c] : e;
            if (x->dtype == MLRT_FLOAT)
                ((float *)out[0].data)[i] = hit ? (float)w : ((const float *)x->data)[i];
            else
                ((double *)out[0].data)[i] = w;
        }
    } else if (x->dtype == MLRT_INT64 || x->dtype == MLRT_INT32) {
        MLRT_CHECK(v->dtype == MLRT_INT64, "imputed values for an integer input must be int64");
        const int64_t *iv = v->data;
        for (int64_t i = 0; i < n; ++i) {
            int64_t e = x->dtype == MLRT_INT64 ? ((const int64_t *)x->data)[i] : ((const int32_t *)x->data)[i];
            int64_t w = e == p->replaced_int ? iv[nv == 1 ? 0 : i % c] : e;
            if (x->dtype == MLRT_INT64)
                ((int64_t *)out[0].data)[i] = w;
            else
                ((int32_t *)out[0].data)[i] = (int32_t)w;
        }
    } else {
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "Imputer: element type %d", x->dtype);
    }
    return MLRT_OK;
}

MLRT_KERNEL(ml_imputer, "Imputer", "ai.onnx.ml", 1, MLRT_OPSET_MAX, ML_FEATURE_TYPES, imputer_run);

/* ---- ArrayFeatureExtractor: y[..., k] = x[..., index[k]] ------------------------------------------ */

static int array_feature_extractor_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                                       int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 2 && n_out == 1, "ArrayFeatureExtractor takes X and indices");
    const mlrt_tensor *x = &in[0], *ix = &in[1];
    MLRT_CHECK(x->rank >= 1 && mlrt_is_contiguous(x) && mlrt_is_contiguous(ix), "X (rank >= 1) and Y must be contiguous");
    MLRT_CHECK(ix->dtype == MLRT_INT64, "indices must be int64");
    MLRT_CHECK(out[0].dtype == x->dtype, "Z must have X's type");
    int64_t c = x->shape[x->rank - 1], k = mlrt_numel(ix);
    int64_t rows = 1;
    for (int32_t d = 0; d < x->rank - 1; ++d) rows *= x->shape[d];
    MLRT_CHECK(mlrt_numel(&out[0]) == rows * k, "Z must hold %lld x %lld values", (long long)rows, (long long)k);
    const int64_t *idx = ix->data;
    for (int64_t j = 0; j < k; ++j)
        MLRT_CHECK(idx[j] >= 0 && idx[j] < c, "index %lld is out of range for %lld features", (long long)idx[j],
                   (long long)c);
    size_t es = mlrt_dtype_size(x->dtype);
    MLRT_CHECK(es > 0, "ArrayFeatureExtractor: element type %d", x->dtype);
    const char *src = x->data;
    char *dst = out[0].data;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < k; ++j)
            memcpy(dst + (size_t)(r * k + j) * es, src + (size_t)(r * c + idx[j]) * es, es);
    return MLRT_OK;
}

MLRT_KERNEL(ml_array_feature_extractor, "ArrayFeatureExtractor", "ai.onnx.ml", 1, MLRT_OPSET_MAX,
            ML_FEATURE_TYPES | MLRT_BIT(MLRT_BOOL) | MLRT_MASK_INTS, array_feature_extractor_run);

/* ---- FeatureVectorizer ------------------------------------------------------------------------------ */

static int feature_vectorizer_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                                  int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ml_feature_vectorizer_params, p, params, params_size);
    MLRT_CHECK(n_out == 1 && n_in >= 1 && p->n_inputs == n_in && n_in <= 256,
               "FeatureVectorizer: %d inputs for %lld input dimensions", n_in, (long long)p->n_inputs);
    MLRT_CHECK(out[0].dtype == MLRT_FLOAT && out[0].rank == 2, "Y must be a float32 matrix");
    int64_t rows = out[0].shape[0], width = 0;
    for (int32_t i = 0; i < n_in; ++i) {
        MLRT_CHECK(p->dims[i] >= 0, "input dimension %lld is negative", (long long)p->dims[i]);
        width += p->dims[i];
        const mlrt_tensor *x = &in[i];
        MLRT_CHECK(x->rank >= 1 && mlrt_is_contiguous(x), "input %d must be contiguous, rank >= 1", i);
        int64_t xr = x->rank == 1 ? 1 : x->shape[0];
        MLRT_CHECK(xr == rows, "input %d has %lld rows, expected %lld", i, (long long)xr, (long long)rows);
    }
    MLRT_CHECK(out[0].shape[1] == width, "Y must have %lld columns", (long long)width);
    float *y = out[0].data;
    int64_t col = 0;
    for (int32_t i = 0; i < n_in; ++i) {
        const mlrt_tensor *x = &in[i];
        int64_t c = rows ? mlrt_numel(x) / rows : 0, d = p->dims[i], take = c < d ? c : d;
        for (int64_t r = 0; r < rows; ++r) {
            float *row = y + r * width + col;
            for (int64_t k = 0; k < take; ++k) row[k] = (float)ml_get(x->data, x->dtype, r * c + k);
            for (int64_t k = take; k < d; ++k) row[k] = 0.0f;
        }
        col += d;
    }
    return MLRT_OK;
}

MLRT_KERNEL(ml_feature_vectorizer, "FeatureVectorizer", "ai.onnx.ml", 1, MLRT_OPSET_MAX, ML_FEATURE_TYPES,
            feature_vectorizer_run);

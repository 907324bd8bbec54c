/* normalize.c -- LayerNormalization, InstanceNormalization, GroupNormalization,
 * MeanVarianceNormalization, LpNormalization, and com.microsoft's SkipLayerNormalization
 * and SkipSimplifiedLayerNormalization (as onnxruntime's: the layer / RMS norm of
 * input + skip + bias over the last dim, that sum optionally an output too).
 *
 * One walk serves them all.  The Python semantics hand X over as a view whose
 * first n_kept dims pick a group and whose remaining dims are the group's
 * elements; scale and bias, when present, are views of the same shape (stride 0
 * where they broadcast), and Y is written at X's element offsets.  Per group:
 *   standard (Layer/Instance/Group)  y = (x - mean) / sqrt(var + eps) * scale + bias
 *   MVN                              y = (x - mean) / (sqrt(var) + eps)
 *   L1 / L2                          y = x / norm, 0 where the norm is 0
 *   RMS (SkipSimplified)             y = x / sqrt(mean(x^2) + eps) * scale
 * Statistics are taken in double, in two passes (mean, then squared deviations).
 * LayerNormalization may also emit each group's mean and 1/sqrt(var + eps).
 *
 * Float32 groups whose elements lie in one contiguous line of X, with scale and bias each
 * along that line or constant on it (LayerNormalization over the last dims, Instance- and
 * GroupNormalization of contiguous planes, the Skip norms) take the line path instead:
 * vector loops cloned per ISA, the sums in float vectors over blocks of NORM_BLOCK
 * elements and the blocks' sums added in double, the same two passes (empty groups, whose
 * statistics are NaN, stay on the walk, and a group whose float sums overflow, or that
 * holds inf or NaN, is done again by the walk in double). */
#include <math.h>

#include "internal.h"
#include "fastmath.h"
#include "normalize.h"

#define NORM_BLOCK 1024

typedef enum { N_STANDARD, N_MVN, N_L1, N_L2, N_RMS } nmode;

typedef struct norm_job {
    const void *x, *scale, *bias;
    void *y, *mean, *inv_std;
    int32_t mean_dtype, inv_dtype;
    nmode mode;
    double eps;
    int32_t n_kept, n_red;
    int64_t kshape[MLRT_MAX_RANK], rshape[MLRT_MAX_RANK];
    int64_t kx[MLRT_MAX_RANK], ks[MLRT_MAX_RANK], kb[MLRT_MAX_RANK];  /* kept strides of x, scale, bias */
    int64_t rx[MLRT_MAX_RANK], rs[MLRT_MAX_RANK], rb[MLRT_MAX_RANK];  /* reduced strides */
    int64_t count, rows;  /* elements per group; lines per group (the last reduced dim is the line) */
    int64_t line_s, line_b; /* the line path's scale and bias strides along the line (0 or 1) */
} norm_job;

/* element offsets (x, scale, bias) of line r of a group */
static inline void line_offsets(const norm_job *j, int64_t r, int64_t *ox, int64_t *os, int64_t *ob) {
    *ox = *os = *ob = 0;
    for (int32_t d = j->n_red - 2; d >= 0; --d) {
        int64_t i = r % j->rshape[d];
        r /= j->rshape[d];
        *ox += i * j->rx[d];
        *os += i * j->rs[d];
        *ob += i * j->rb[d];
    }
}

static inline void store(void *base, int32_t dtype, int64_t i, double v) {
    if (!base) return;
    if (dtype == MLRT_FLOAT) ((float *)base)[i] = (float)v;
    else ((double *)base)[i] = v;
}

#define DEFINE_NORM(T, SUF)                                                                            \
    static void norm_##SUF(void *arg, int64_t begin, int64_t end) {                                    \
        const norm_job *j = arg;                                                                       \
        const T *scale = j->scale, *bias = j->bias;                                                    \
        int32_t last = j->n_red - 1;                                                                   \
        int64_t len = j->rshape[last], sx = j->rx[last], ss = j->rs[last], sb = j->rb[last];            \
        for (int64_t g = begin; g < end; ++g) {                                                        \
            int64_t gx = 0, gs = 0, gb = 0;                                                            \
            for (int64_t d = j->n_kept - 1, e = g; d >= 0; --d) {                                      \
                int64_t i = e % j->kshape[d];                                                          \
                e /= j->kshape[d];                                                                     \
                gx += i * j->kx[d];                                                                    \
                gs += i * j->ks[d];                                                                    \
                gb += i * j->kb[d];                                                                    \
            }                                                                                          \
            const T *x = (const T *)j->x + gx;                                                         \
            T *y = (T *)j->y + gx;                                                                     \
            /* pass 1: sum, |x| or x^2 */                                                              \
            double acc = 0.0;                                                                          \
            for (int64_t r = 0; r < j->rows; ++r) {                                                    \
                int64_t ox, os, ob;                                                                    \
                line_offsets(j, r, &ox, &os, &ob);                                                     \
                const T *p = x + ox;                                                                   \
                double part[8] = {0};                                                                  \
                int64_t i = 0;                                                                         \
                if (sx == 1 && j->mode != N_L1) {                                                      \
                    if (j->mode == N_L2 || j->mode == N_RMS)                                           \
                        for (; i + 8 <= len; i += 8)                                                   \
                            for (int k = 0; k < 8; ++k) part[k] += (double)p[i + k] * (double)p[i + k]; \
                    else                                                                               \
                        for (; i + 8 <= len; i += 8)                                                   \
                            for (int k = 0; k < 8; ++k) part[k] += (double)p[i + k];                   \
                }                                                                                      \
                for (; i < len; ++i) {                                                                 \
                    double v = (double)p[i * sx];                                                      \
                    part[0] += j->mode == N_L1 ? fabs(v) : j->mode == N_L2 || j->mode == N_RMS ? v * v : v; \
                }                                                                                      \
                for (int k = 0; k < 8; ++k) acc += part[k];                                            \
            }                                                                                          \
            double mean = 0.0, mul = 1.0;                                                              \
            if (j->mode == N_L1 || j->mode == N_L2) {                                                  \
                double norm = j->mode == N_L2 ? sqrt(acc) : acc;                                       \
                mul = norm == 0.0 ? 0.0 : 1.0 / norm;                                                  \
            } else if (j->mode == N_RMS) {                                                             \
                mul = 1.0 / sqrt(acc / (double)j->count + j->eps);                                     \
                store(j->mean, j->mean_dtype, g, 0.0);                                                 \
                store(j->inv_std, j->inv_dtype, g, mul);                                               \
            } else {                                                                                   \
                mean = acc / (double)j->count;                                                         \
                double var = 0.0;                                                                      \
                for (int64_t r = 0; r < j->rows; ++r) {                                                \
                    int64_t ox, os, ob;                                                                \
                    line_offsets(j, r, &ox, &os, &ob);                                                 \
                    const T *p = x + ox;                                                               \
                    double part[8] = {0};                                                              \
                    int64_t i = 0;                                                                     \
                    if (sx == 1)                                                                       \
                        for (; i + 8 <= len; i += 8)                                                   \
                            for (int k = 0; k < 8; ++k) {                                              \
                                double d = (double)p[i + k] - mean;                                    \
                                part[k] += d * d;                                                      \
                            }                                                                          \
                    for (; i < len; ++i) {                                                             \
                        double d = (double)p[i * sx] - mean;                                           \
                        part[0] += d * d;                                                              \
                    }                                                                                  \
                    for (int k = 0; k < 8; ++k) var += part[k];                                        \
                }                                                                                      \
                var /= (double)j->count;                                                               \
                mul = j->mode == N_MVN ? 1.0 / (sqrt(var) + j->eps) : 1.0 / sqrt(var + j->eps);         \
                store(j->mean, j->mean_dtype, g, mean);                                                \
                store(j->inv_std, j->inv_dtype, g, mul);                                               \
            }                                                                                          \
            /* pass 3: y */                                                                            \
            for (int64_t r = 0; r < j->rows; ++r) {                                                    \
                int64_t ox, os, ob;                                                                    \
                line_offsets(j, r, &ox, &os, &ob);                                                     \
                const T *p = x + ox;                                                                   \
                T *q = y + ox;                                                                         \
                if (!scale) {                                                                          \
                    if (sx == 1)                                                                       \
                        for (int64_t i = 0; i < len; ++i) q[i] = (T)(((double)p[i] - mean) * mul);     \
                    else                                                                               \
                        for (int64_t i = 0; i < len; ++i) q[i * sx] = (T)(((double)p[i * sx] - mean) * mul); \
                    continue;                                                                          \
                }                                                                                      \
                const T *sp = scale + gs + os;                                                         \
                if (!bias) {                                                                           \
                    for (int64_t i = 0; i < len; ++i)                                                  \
                        q[i * sx] = (T)(((double)p[i * sx] - mean) * mul * (double)sp[i * ss]);        \
                    continue;                                                                          \
                }                                                                                      \
                const T *bp = bias + gb + ob;                                                          \
                if (sx == 1 && ss == 1 && sb == 1)                                                     \
                    for (int64_t i = 0; i < len; ++i)                                                  \
                        q[i] = (T)(((double)p[i] - mean) * mul * (double)sp[i] + (double)bp[i]);      \
                else                                                                                   \
                    for (int64_t i = 0; i < len; ++i)                                                  \
                        q[i * sx] = (T)(((double)p[i * sx] - mean) * mul * (double)sp[i * ss] + (double)bp[i * sb]); \
            }                                                                                          \
        }                                                                                              \
    }
DEFINE_NORM(float, f32)
DEFINE_NORM(double, f64)

/* -- the float32 line path --------------------------------------------------------------------- */

/* The deviations are taken as (x - c) - dm, c the line's first element and dm the mean's
 * distance from it: x - c is exact where x and c are within a factor of 2 of each other,
 * and dm small, so a large common offset costs the float sums and the deviations none of
 * their precision (x - mean rounds the mean to a float first: 1.6e-4 off in the output
 * at an offset of 1000 and a spread of 0.5).  RMS has c = dm = 0. */

/* sum of x - c */
MLRT_HOT_FN(SUM_LOOP, float, line_sum, (const float *x, int64_t n, float c), (x, n, c)) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) s += x[i] - c;
    return s;
}

/* sum of ((x - c) - dm)^2 */
MLRT_HOT_FN(SUM_LOOP, float, line_dev2, (const float *x, int64_t n, float c, float dm), (x, n, c, dm)) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        float d = (x[i] - c) - dm;
        s += d * d;
    }
    return s;
}

/* y = ((x - c) - dm) * mul * scale + bias, scale and bias per element */
MLRT_HOT_FN(, void, line_affine, (const float *x, float *y, int64_t n, float c, float dm, float mul, const float *sc,
                                  const float *b),
            (x, y, n, c, dm, mul, sc, b)) {
    for (int64_t i = 0; i < n; ++i) y[i] = ((x[i] - c) - dm) * (mul * sc[i]) + b[i];
}

/* y = ((x - c) - dm) * mul * scale, scale per element */
MLRT_HOT_FN(, void, line_scaled, (const float *x, float *y, int64_t n, float c, float dm, float mul, const float *sc),
            (x, y, n, c, dm, mul, sc)) {
    for (int64_t i = 0; i < n; ++i) y[i] = ((x[i] - c) - dm) * (mul * sc[i]);
}

/* y = ((x - c) - dm) * a + b */
MLRT_HOT_FN(, void, line_uniform, (const float *x, float *y, int64_t n, float c, float dm, float a, float b),
            (x, y, n, c, dm, a, b)) {
    for (int64_t i = 0; i < n; ++i) y[i] = ((x[i] - c) - dm) * a + b;
}

static void norm_lines_f32(void *arg, int64_t begin, int64_t end) {
    const norm_job *j = arg;
    const float *scale = j->scale, *bias = j->bias;
    int64_t n = j->count;
    for (int64_t g = begin; g < end; ++g) {
        int64_t gx = 0, gs = 0, gb = 0;
        for (int64_t d = j->n_kept - 1, e = g; d >= 0; --d) {
            int64_t i = e % j->kshape[d];
            e /= j->kshape[d];
            gx += i * j->kx[d], gs += i * j->ks[d], gb += i * j->kb[d];
        }
        const float *x = (const float *)j->x + gx;
        float *y = (float *)j->y + gx;
        float c = j->mode == N_RMS ? 0.0f : x[0], dm = 0.0f;
        double acc = 0.0;
        if (j->mode != N_RMS) {
            for (int64_t i = 0; i < n; i += NORM_BLOCK)
                acc += line_sum(x + i, n - i < NORM_BLOCK ? n - i : NORM_BLOCK, c);
            dm = (float)(acc / (double)n), acc = 0.0;
        }
        for (int64_t i = 0; i < n; i += NORM_BLOCK)
            acc += line_dev2(x + i, n - i < NORM_BLOCK ? n - i : NORM_BLOCK, c, dm);
        double var = acc / (double)n, mean = (double)c + (double)dm;
        if (!isfinite(var) || !isfinite(dm)) { /* a sum or a square past float's range, or inf / NaN in x */
            norm_f32(arg, g, g + 1);
            continue;
        }
        double mul = j->mode == N_MVN ? 1.0 / (sqrt(var) + j->eps) : 1.0 / sqrt(var + j->eps);
        store(j->mean, j->mean_dtype, g, mean);
        store(j->inv_std, j->inv_dtype, g, mul);
        const float *sp = scale ? scale + gs : NULL, *bp = bias ? bias + gb : NULL;
        float f = (float)mul;
        if (sp && j->line_s && bp && j->line_b) line_affine(x, y, n, c, dm, f, sp, bp);
        else if (sp && j->line_s && !bp) line_scaled(x, y, n, c, dm, f, sp);
        else if (!(sp && j->line_s) && !(bp && j->line_b))
            line_uniform(x, y, n, c, dm, sp ? f * *sp : f, bp ? *bp : 0.0f);
        else /* one of scale and bias along the line, the other constant */
            for (int64_t i = 0, ls = j->line_s, lb = j->line_b; i < n; ++i)
                y[i] = ((x[i] - c) - dm) * (sp ? f * sp[i * ls] : f) + (bp ? bp[i * lb] : 0.0f);
    }
}

/* Whether the reduced dims of a view (strides st, shape j->rshape) lie as one contiguous
 * line (1), are constant (0, all strides 0), or neither (-1). */
static int line_stride(const norm_job *j, const int64_t *st) {
    bool zero = true, line = true;
    int64_t step = 1;
    for (int32_t d = j->n_red - 1; d >= 0; --d) {
        if (j->rshape[d] == 1) continue;
        zero = zero && st[d] == 0;
        line = line && st[d] == step;
        step *= j->rshape[d];
    }
    return line ? 1 : zero ? 0 : -1;
}

/* inputs: X, then (standard mode) scale and an optional bias;
 * outputs: Y, then optionally the mean and 1/stddev of each group */
static int run_norm(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size, nmode mode, bool affine) {
    MLRT_CHECK(n_in >= 1 && n_in <= 3 && n_out >= 1 && n_out <= 3, "expects 1 to 3 inputs and 1 to 3 outputs");
    MLRT_CHECK(affine || n_in == 1, "takes 1 input");
    MLRT_CHECK(!affine || n_in >= 2, "needs a scale input");
    MLRT_PARAMS(mlrt_normalize_params, p, params, params_size);
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(x->dtype == MLRT_FLOAT || x->dtype == MLRT_DOUBLE, "element type %d not supported", x->dtype);
    MLRT_CHECK(y->dtype == x->dtype && mlrt_numel(y) == mlrt_numel(x) && mlrt_is_contiguous(y),
               "Y must be a contiguous tensor of X's type and size");
    MLRT_CHECK(p->n_kept >= 0 && p->n_kept < x->rank, "n_kept %lld leaves no normalised dim of the rank-%d view",
               (long long)p->n_kept, x->rank);
    norm_job job = {.x = x->data, .y = y->data, .mode = mode, .eps = p->epsilon,
                    .n_kept = (int32_t)p->n_kept, .n_red = x->rank - (int32_t)p->n_kept, .count = 1, .rows = 1};
    for (int32_t k = 1; k < n_in; ++k) {
        if (!mlrt_present(&in[k])) continue;
        MLRT_CHECK(in[k].dtype == x->dtype && mlrt_same_shape(&in[k], x),
                   "input %d must be a view of X's shape and type", k);
    }
    const mlrt_tensor *scale = n_in > 1 && mlrt_present(&in[1]) ? &in[1] : NULL;
    const mlrt_tensor *bias = n_in > 2 && mlrt_present(&in[2]) ? &in[2] : NULL;
    MLRT_CHECK(!affine || scale, "needs a scale input");
    job.scale = scale ? scale->data : NULL;
    job.bias = bias ? bias->data : NULL;
    int64_t groups = 1;
    for (int32_t d = 0; d < x->rank; ++d) {
        MLRT_CHECK(x->shape[d] >= 0, "negative extent");
        bool kept = d < job.n_kept;
        int32_t i = kept ? d : d - job.n_kept;
        (kept ? job.kshape : job.rshape)[i] = x->shape[d];
        (kept ? job.kx : job.rx)[i] = x->strides[d];
        (kept ? job.ks : job.rs)[i] = scale ? scale->strides[d] : 0;
        (kept ? job.kb : job.rb)[i] = bias ? bias->strides[d] : 0;
        if (kept) groups *= x->shape[d];
        else job.count *= x->shape[d];
    }
    for (int32_t d = 0; d < job.n_red - 1; ++d) job.rows *= job.rshape[d];
    for (int32_t k = 1; k < n_out && k < 3; ++k) {
        if (!mlrt_present(&out[k])) continue;
        MLRT_CHECK(out[k].dtype == MLRT_FLOAT || out[k].dtype == MLRT_DOUBLE, "output %d must be float or double", k);
        MLRT_CHECK(mlrt_numel(&out[k]) == groups && mlrt_is_contiguous(&out[k]),
                   "output %d must hold one value per group", k);
        if (k == 1) { job.mean = out[k].data; job.mean_dtype = out[k].dtype; }
        else { job.inv_std = out[k].data; job.inv_dtype = out[k].dtype; }
    }
    if (groups == 0) return MLRT_OK;
    mlrt_range_fn fn = x->dtype == MLRT_FLOAT ? norm_f32 : norm_f64;
    if (x->dtype == MLRT_FLOAT && (mode == N_STANDARD || mode == N_MVN || mode == N_RMS) &&
        job.count > 0 && job.count <= INT32_MAX && line_stride(&job, job.rx) == 1) {
        job.line_s = scale ? line_stride(&job, job.rs) : 0;
        job.line_b = bias ? line_stride(&job, job.rb) : 0;
        if (job.line_s >= 0 && job.line_b >= 0) fn = norm_lines_f32;
    }
    mlrt_note_path(fn == norm_lines_f32 ? MLRT_LOOP_PATH("normalize/lines") : "normalize/walk");
    mlrt_parallel_for(ctx, groups, 32768 / (job.count + 1) + 1, fn, &job);
    return MLRT_OK;
}

#define NORM_KERNEL(NAME, MODE, AFFINE)                                                               \
    static int k_##NAME(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, \
                        int32_t n_out, const void *params, size_t params_size) {                      \
        return run_norm(ctx, in, n_in, out, n_out, params, params_size, MODE, AFFINE);                \
    }
NORM_KERNEL(layer_norm, N_STANDARD, true)
NORM_KERNEL(mvn, N_MVN, false)

static int k_lp_norm(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                     const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_normalize_params, p, params, params_size);
    MLRT_CHECK(p->p == 1 || p->p == 2, "p must be 1 or 2, not %lld", (long long)p->p);
    return run_norm(ctx, in, n_in, out, n_out, params, params_size, p->p == 1 ? N_L1 : N_L2, false);
}

/* -- com.microsoft SkipLayerNormalization / SkipSimplifiedLayerNormalization ------------------- */

/* s = x + k (+ b) */
MLRT_HOT_FN(, void, skip_row_f32, (const float *x, const float *k, const float *b, float *s, int64_t n),
            (x, k, b, s, n)) {
    if (b)
        for (int64_t i = 0; i < n; ++i) s[i] = x[i] + k[i] + b[i];
    else
        for (int64_t i = 0; i < n; ++i) s[i] = x[i] + k[i];
}

/* inputs: input, skip (input's shape, or its last dims repeated over the leading ones), gamma,
 * beta (Skip only), bias (gamma, beta and bias of input's last dim; beta_at / bias_at say where);
 * outputs: output, mean, inv_std_var, input_skip_bias_sum.  The sum is written into the fourth
 * output when it is wanted, else into the output, and normalised there in place. */
static int run_skip_norm(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                         int32_t n_out, const void *params, size_t params_size, nmode mode, int32_t beta_at,
                         int32_t bias_at) {
    MLRT_PARAMS(mlrt_normalize_params, p, params, params_size);
    MLRT_CHECK(n_in >= 3 && n_in <= 5 && n_out >= 1 && n_out <= 4, "expects 3 to 5 inputs and 1 to 4 outputs");
    const mlrt_tensor *x = &in[0], *skip = &in[1], *gamma = &in[2];
    const mlrt_tensor *beta = beta_at >= 0 && beta_at < n_in && mlrt_present(&in[beta_at]) ? &in[beta_at] : NULL;
    const mlrt_tensor *bias = bias_at < n_in && mlrt_present(&in[bias_at]) ? &in[bias_at] : NULL;
    MLRT_CHECK(x->dtype == MLRT_FLOAT || x->dtype == MLRT_DOUBLE, "element type %d not supported", x->dtype);
    MLRT_CHECK(x->rank >= 1 && x->rank <= MLRT_MAX_RANK, "input must have at least one dim");
    int64_t len = x->shape[x->rank - 1], n = mlrt_numel(x);
    const mlrt_tensor *vecs[3] = {gamma, beta, bias};
    for (int k = 0; k < 3; ++k)
        if (vecs[k])
            MLRT_CHECK(vecs[k]->dtype == x->dtype && mlrt_is_contiguous(vecs[k]) && mlrt_numel(vecs[k]) == len,
                       "gamma, beta and bias must be %lld contiguous values of input's type", (long long)len);
    int64_t skip_n = mlrt_numel(skip);
    MLRT_CHECK(skip->dtype == x->dtype && mlrt_is_contiguous(skip) && mlrt_is_contiguous(x),
               "input and skip must be contiguous, of one type");
    MLRT_CHECK(skip_n == n || (skip_n > 0 && len > 0 && skip_n % len == 0 && n % skip_n == 0),
               "skip of %lld values does not repeat over input's %lld", (long long)skip_n, (long long)n);
    mlrt_tensor *sum = &out[0];
    if (n_out > 3 && mlrt_present(&out[3])) sum = &out[3];
    for (int k = 0; k < n_out; k += 3)
        if (mlrt_present(&out[k]))
            MLRT_CHECK(out[k].dtype == x->dtype && mlrt_same_shape(&out[k], x) && mlrt_is_contiguous(&out[k]),
                       "output %d must be a contiguous tensor of input's shape and type", k);
    if (n == 0) return MLRT_OK;
    if (x->dtype == MLRT_FLOAT) {
        const float *xs = x->data, *ks = skip->data, *bs = bias ? bias->data : NULL;
        float *s = sum->data;
        for (int64_t r = 0; r < n; r += len) /* (skip repeats whole rows) */
            skip_row_f32(xs + r, ks + r % skip_n, bs, s + r, len);
    } else {
        const double *xs = x->data, *ks = skip->data, *bs = bias ? bias->data : NULL;
        double *s = sum->data;
        for (int64_t i = 0; i < n; ++i) s[i] = xs[i] + ks[i % skip_n] + (bs ? bs[i % len] : 0.0);
    }
    /* the norm over the last dim of the sum; gamma and beta as views of its shape */
    mlrt_tensor views[3] = {*sum, *sum, *sum};
    views[1].data = gamma->data;
    views[2].data = beta ? beta->data : NULL;
    for (int32_t d = 0; d < x->rank - 1; ++d) views[1].strides[d] = views[2].strides[d] = 0;
    views[1].strides[x->rank - 1] = views[2].strides[x->rank - 1] = 1;
    mlrt_tensor outs[3] = {out[0], n_out > 1 ? out[1] : out[0], n_out > 2 ? out[2] : out[0]};
    mlrt_normalize_params q = {.n_kept = x->rank - 1, .epsilon = p->epsilon};
    return run_norm(ctx, views, beta ? 3 : 2, outs, n_out < 3 ? n_out : 3, &q, sizeof q, mode, true);
}

static int k_skip_layer_norm(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                             int32_t n_out, const void *params, size_t params_size) {
    return run_skip_norm(ctx, in, n_in, out, n_out, params, params_size, N_STANDARD, 3, 4);
}

static int k_skip_rms_norm(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                           int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in <= 4, "expects 3 or 4 inputs");
    return run_skip_norm(ctx, in, n_in, out, n_out, params, params_size, N_RMS, -1, 3);
}

MLRT_KERNEL(layer_norm, "LayerNormalization", "", 17, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_layer_norm);
MLRT_KERNEL(instance_norm, "InstanceNormalization", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_layer_norm);
MLRT_KERNEL(group_norm, "GroupNormalization", "", 18, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_layer_norm);
MLRT_KERNEL(mvn, "MeanVarianceNormalization", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_mvn);
MLRT_KERNEL(lp_norm, "LpNormalization", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_lp_norm);
MLRT_KERNEL(skip_layer_norm, "SkipLayerNormalization", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS,
            k_skip_layer_norm);
MLRT_KERNEL(skip_rms_norm, "SkipSimplifiedLayerNormalization", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS,
            k_skip_rms_norm);

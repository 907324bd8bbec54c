/* attention.c -- Attention (opsets 23-25): scaled dot-product attention with
 * grouped heads, masks, causal / sliding-window frontiers, a key/value cache and
 * soft capping.
 *
 * The Python semantics hand over Q [B, Hq, Sq, D], K [B, Hkv, S, D],
 * V [B, Hkv, S, Dv] as strided views (3-D inputs re-viewed per head), the mask as
 * a [B, Hq, Sq, Lm] view, and resolved sizes and attributes.  With L = P + S keys
 * (P cached in past_key / past_value), for every batch b, query head h (reading
 * key head h / (Hq / Hkv)) and query row i:
 *   s_ij  = (q_i * sqrt(scale)) . (k_j * sqrt(scale))
 *   s_ij  = softcap * tanh(s_ij / softcap)                     (softcap > 0)
 *   bias  = mask (bool: 0 / -inf; -inf past Lm)  -inf off the causal frontier
 *           (j > i + offset), outside the window, or past nonpad_kv_seqlen[b]
 *   p_i   = softmax(s_i + bias_i) in the softmax type; 0 where bias_i is all -inf
 *   y_i   = p_i . V
 * offset is P with a cache, nonpad_kv_seqlen[b] - Sq with an external one, else 0.
 * present_key / present_value (past followed by the new rows) are written first
 * and then read as the keys and values.
 *
 * float32 and float64 run their two products through mlrt_sgemm / mlrt_dgemm
 * (scale * Q K^T with the scale in alpha), reading Q, K and V in place where their
 * rows are unit-stride and come from one tensor.  float16 and bfloat16 compute in
 * float, rounding every intermediate to the inputs' type as numpy does (products
 * accumulate in float; a bfloat16 softmax sum rounds at every step).  Work is
 * split over (batch, head, block of 64 query rows); keys and values that must be
 * copied are loaded once per key head and reused by the query heads sharing it. */
#include <math.h>
#include <stdlib.h>

#include "attention.h"
#include "gemm.h"
#include "fastmath.h"

#define QBLOCK 64

enum { R_NONE, R_F16, R_BF16 };  /* rounding to a narrower type, in float */

static inline float rnd(float x, int kind) {
    if (kind == R_F16) return mlrt_f16_to_f32(mlrt_f32_to_f16(x));
    if (kind == R_BF16) return mlrt_bf16_to_f32(mlrt_f32_to_bf16(x));
    return x;
}

static int round_kind(int32_t dtype) {
    return dtype == MLRT_FLOAT16 ? R_F16 : dtype == MLRT_BFLOAT16 ? R_BF16 : R_NONE;
}

static inline double load(const void *base, int64_t i, int32_t dtype) {
    switch (dtype) {
    case MLRT_FLOAT: return ((const float *)base)[i];
    case MLRT_DOUBLE: return ((const double *)base)[i];
    case MLRT_FLOAT16: return mlrt_f16_to_f32(((const uint16_t *)base)[i]);
    case MLRT_BFLOAT16: return mlrt_bf16_to_f32(((const uint16_t *)base)[i]);
    case MLRT_BOOL: return ((const uint8_t *)base)[i] ? 0.0 : -INFINITY;  /* a mask: attend or not */
    default: return NAN;
    }
}

static inline void store(void *base, int64_t i, int32_t dtype, double v) {
    switch (dtype) {
    case MLRT_FLOAT: ((float *)base)[i] = (float)v; break;
    case MLRT_DOUBLE: ((double *)base)[i] = v; break;
    case MLRT_FLOAT16: ((uint16_t *)base)[i] = mlrt_f32_to_f16((float)v); break;
    case MLRT_BFLOAT16: ((uint16_t *)base)[i] = mlrt_f32_to_bf16((float)v); break;
    }
}

/* the row's max (-inf for an empty row); *nan set if any element is NaN */
MLRT_HOT_FN(, float, row_max, (const float *x, int64_t n, bool *nan), (x, n, nan)) {
    float m = -INFINITY;
    int any = 0;
    for (int64_t i = 0; i < n; ++i) {
        any |= x[i] != x[i];
        m = x[i] > m ? x[i] : m;
    }
    *nan = any;
    return m;
}

MLRT_HOT_FN(, void, row_exp, (float *x, int64_t n, float m), (x, n, m)) {
    for (int64_t i = 0; i < n; ++i) x[i] = mlrt_exp_f32(x[i] - m);
}

MLRT_HOT_FN(SUM_LOOP, float, row_sum, (const float *x, int64_t n), (x, n)) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) s += x[i];
    return s;
}

MLRT_HOT_FN(, void, row_scale, (float *x, int64_t n, float f), (x, n, f)) {
    for (int64_t i = 0; i < n; ++i) x[i] *= f;
}

/* float32 softmax with no rounding to a narrower type */
static void softmax_f32(float *x, int64_t n) {
    bool nan;
    float m = row_max(x, n, &nan);
    if (nan || m == INFINITY) {  /* (inf - inf is NaN, and the sum with it) */
        for (int64_t j = 0; j < n; ++j) x[j] = NAN;
        return;
    }
    if (m == -INFINITY) m = 0.0f;
    row_exp(x, n, m);
    float s = row_sum(x, n);
    row_scale(x, n, 1.0f / (s == 0.0f ? 1.0f : s));
}

/* Softmax of a row in float, rounding each step to `kind`; a row of -inf (max -inf)
 * comes out 0, a NaN anywhere makes the row NaN. */
static void softmax_f(float *x, int64_t n, int kind) {
    float m = -INFINITY;
    bool nan = false;
    for (int64_t j = 0; j < n; ++j) {
        x[j] = rnd(x[j], kind);
        if (x[j] != x[j]) nan = true;
        else if (x[j] > m) m = x[j];
    }
    if (nan) m = NAN;
    else if (m == -INFINITY) m = 0.0f;
    float s = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
        x[j] = rnd(expf(rnd(x[j] - m, kind)), kind);
        s = kind == R_BF16 ? rnd(s + x[j], kind) : s + x[j];
    }
    s = rnd(s, kind);
    if (s == 0.0f) s = 1.0f;
    for (int64_t j = 0; j < n; ++j) x[j] = rnd(x[j] / s, kind);
}

static void softmax_d(double *x, int64_t n) {
    double m = -INFINITY, s = 0.0;
    bool nan = false;
    for (int64_t j = 0; j < n; ++j) {
        if (x[j] != x[j]) nan = true;
        else if (x[j] > m) m = x[j];
    }
    if (nan) m = NAN;
    else if (m == -INFINITY) m = 0.0;
    for (int64_t j = 0; j < n; ++j) s += x[j] = exp(x[j] - m);
    if (s == 0.0) s = 1.0;
    for (int64_t j = 0; j < n; ++j) x[j] /= s;
}

typedef struct attn_job {
    const mlrt_attention_params *p;
    const mlrt_tensor *q, *k, *v, *mask, *past_k, *past_v, *nonpad;  /* absent optionals: NULL */
    const mlrt_tensor *y, *pres_k, *pres_v, *qk;
    int64_t L, group, qblocks, ys[4];  /* ys: Y's strides as [b, h, i, d] */
    int32_t dtype, kind;               /* element type; its rounding in float */
    int failed;
} attn_job;

/* element offset of [b, h, s, 0] in a 4-D tensor */
static inline int64_t off4(const mlrt_tensor *t, int64_t b, int64_t h, int64_t s) {
    return b * t->strides[0] + h * t->strides[1] + s * t->strides[2];
}

/* key / value row r of (b, kh) as given: past rows first, then the new ones */
static inline const mlrt_tensor *kv_source(const attn_job *j, bool value, int64_t b, int64_t kh, int64_t r,
                                           int64_t *off) {
    const mlrt_tensor *past = value ? j->past_v : j->past_k, *cur = value ? j->v : j->k;
    if (past && r < j->p->past_len) { *off = off4(past, b, kh, r); return past; }
    *off = off4(cur, b, kh, r - j->p->past_len);
    return cur;
}

/* ... and where the products read it: present, once written, else the source */
static inline const mlrt_tensor *kv_row(const attn_job *j, bool value, int64_t b, int64_t kh, int64_t r,
                                        int64_t *off) {
    const mlrt_tensor *pres = value ? j->pres_v : j->pres_k;
    if (pres) { *off = off4(pres, b, kh, r); return pres; }
    return kv_source(j, value, b, kh, r, off);
}

/* nonpad_kv_seqlen[b], kept within +-2^62 so offsets computed from it cannot overflow */
static inline int64_t nonpad_len(const attn_job *j, int64_t b) {
    const int64_t lim = INT64_C(1) << 62;
    int64_t v = ((const int64_t *)j->nonpad->data)[b * j->nonpad->strides[0]];
    return v < -lim ? -lim : v > lim ? lim : v;
}

/* The causal / window offset of batch b. */
static inline int64_t frontier(const attn_job *j, int64_t b) {
    if (j->past_k) return j->p->past_len;
    if (j->nonpad) return nonpad_len(j, b) - j->p->q_len;
    return 0;
}

enum { BIAS_NONE, BIAS_SOME, BIAS_ALL_MASKED };

/* Additive bias of row i of (b, h) into bias[0..L): BIAS_NONE when nothing masks
 * (bias untouched), BIAS_ALL_MASKED when every entry is -inf, else BIAS_SOME. */
static int bias_row(const attn_job *j, int64_t b, int64_t h, int64_t i, double *bias) {
    const mlrt_attention_params *p = j->p;
    const mlrt_tensor *m = j->mask;
    if (!m && !p->is_causal && p->left_window < 0 && p->right_window < 0 && !j->nonpad) return BIAS_NONE;
    int64_t L = j->L, pos = i + frontier(j, b);
    int64_t limit = j->nonpad ? nonpad_len(j, b) : INT64_MAX;
    bool all_masked = L > 0;
    int64_t moff = m ? off4(m, b, h, i) : 0, lm = m ? m->shape[3] : 0;
    for (int64_t c = 0; c < L; ++c) {
        double v = 0.0;
        if (m) v = c < lm ? load(m->data, moff + c * m->strides[3], m->dtype) : -INFINITY;
        if (p->is_causal && c > pos) v += -INFINITY;
        if ((p->left_window >= 0 && pos - c > p->left_window) || (p->right_window >= 0 && c - pos > p->right_window))
            v += -INFINITY;
        if (c >= limit) v += -INFINITY;
        bias[c] = v;
        if (!(v == -INFINITY)) all_masked = false;  /* NaN counts as not masked, as numpy's max */
    }
    return all_masked ? BIAS_ALL_MASKED : BIAS_SOME;
}

/* One instantiation per compute type A (float for float32 / float16 / bfloat16,
 * double for float64) with its GEMM.  Without rounding (float32, float64) the
 * products read Q, K and V in place where their rows are unit-stride and K's scale
 * goes into the GEMM's alpha; otherwise rows are loaded, scaled and rounded into
 * scratch. */
#define DEFINE_ATTN(A, SUF, GEMM)                                                                                \
    static void attn_softmax_##SUF(const attn_job *j, A *row, void *tmp);                                        \
                                                                                                                 \
    /* dst[e] = x[off + e * stride] * mul, rounded to the inputs' type */                                        \
    static void load_row_##SUF(A *dst, const mlrt_tensor *t, int64_t off, int64_t n, A mul, int kind) {          \
        int64_t st = t->strides[3];                                                                              \
        if (t->dtype == MLRT_FLOAT) {                                                                            \
            const float *x = (const float *)t->data + off;                                                       \
            for (int64_t e = 0; e < n; ++e) dst[e] = (A)x[e * st] * mul;                                         \
        } else if (t->dtype == MLRT_DOUBLE) {                                                                    \
            const double *x = (const double *)t->data + off;                                                     \
            for (int64_t e = 0; e < n; ++e) dst[e] = (A)x[e * st] * mul;                                         \
        } else {                                                                                                 \
            for (int64_t e = 0; e < n; ++e)                                                                      \
                dst[e] = (A)rnd((float)((A)load(t->data, off + e * st, t->dtype) * mul), kind);                  \
        }                                                                                                        \
    }                                                                                                            \
                                                                                                                 \
    /* K or V rows of (b, kh) as a matrix: in place (one source, unit stride, no scaling) or copied */          \
    static const A *kv_matrix_##SUF(const attn_job *j, bool value, int64_t b, int64_t kh, A *scratch, A mul,     \
                                    int64_t *ld) {                                                               \
        int64_t n = value ? j->p->v_head_size : j->p->head_size;                                                 \
        const mlrt_tensor *pres = value ? j->pres_v : j->pres_k, *past = value ? j->past_v : j->past_k;          \
        const mlrt_tensor *one = pres ? pres : (!past || j->p->past_len == 0) ? (value ? j->v : j->k) : NULL;    \
        if (j->kind == R_NONE && mul == (A)1 && one && (one->strides[3] == 1 || n <= 1) &&                       \
            one->strides[2] >= (n > 1 ? n : 1)) {                                                                \
            *ld = one->strides[2];                                                                               \
            return (const A *)one->data + off4(one, b, kh, 0);                                                   \
        }                                                                                                        \
        for (int64_t r = 0; r < j->L; ++r) {                                                                     \
            int64_t off;                                                                                         \
            const mlrt_tensor *t = kv_row(j, value, b, kh, r, &off);                                             \
            load_row_##SUF(scratch + r * n, t, off, n, mul, j->kind);                                            \
        }                                                                                                        \
        *ld = n > 0 ? n : 1;                                                                                     \
        return scratch;                                                                                          \
    }                                                                                                            \
                                                                                                                 \
    static void attn_range_##SUF(void *arg, int64_t begin, int64_t end) {                                        \
        attn_job *j = arg;                                                                                       \
        const mlrt_attention_params *p = j->p;                                                                   \
        int64_t L = j->L, D = p->head_size, Dv = p->v_head_size, qb = QBLOCK < p->q_len ? QBLOCK : p->q_len;     \
        size_t n_acc = (size_t)(L * D + L * Dv + qb * D + qb * L);                                               \
        A *ks = malloc(n_acc * sizeof(A) + (size_t)L * 2 * sizeof(double) + 64);                                 \
        if (!ks) { __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED); return; }                                  \
        A *vs = ks + L * D, *qs = vs + L * Dv, *sc = qs + qb * D;                                                \
        double *bias = (double *)(((uintptr_t)(sc + qb * L) + 15) & ~(uintptr_t)7);                              \
        void *tmp = bias + L;                                                                                    \
        const int kind = j->kind;                                                                                \
        const A s = (A)p->scale_sqrt, cap = (A)p->softcap;                                                       \
        /* float32 / float64: Q and K unscaled, s * s in the GEMM; half types scale each row as loaded */        \
        const A qmul = kind ? s : (A)1, alpha = kind ? (A)1 : s * s;                                             \
        const A *km = NULL, *vm = NULL;                                                                          \
        int64_t ldk = 1, ldv = 1, cached = -1;                                                                   \
        for (int64_t it = begin; it < end; ++it) {                                                               \
            int64_t blk = it % j->qblocks, bh = it / j->qblocks, h = bh % p->q_heads, b = bh / p->q_heads;       \
            int64_t kh = h / j->group, i0 = blk * QBLOCK, n = p->q_len - i0 < QBLOCK ? p->q_len - i0 : QBLOCK;   \
            if (cached != b * p->kv_heads + kh) {                                                                \
                cached = b * p->kv_heads + kh;                                                                   \
                km = kv_matrix_##SUF(j, false, b, kh, ks, qmul, &ldk);                                           \
                vm = kv_matrix_##SUF(j, true, b, kh, vs, (A)1, &ldv);                                            \
            }                                                                                                    \
            const mlrt_tensor *q = j->q;                                                                         \
            const A *qm = qs;                                                                                    \
            int64_t ldq = D > 0 ? D : 1;                                                                         \
            if (kind == R_NONE && (q->strides[3] == 1 || D <= 1) && q->strides[2] >= ldq) {                      \
                qm = (const A *)q->data + off4(q, b, h, i0);                                                     \
                ldq = q->strides[2];                                                                             \
            } else {                                                                                             \
                for (int64_t i = 0; i < n; ++i) load_row_##SUF(qs + i * D, q, off4(q, b, h, i0 + i), D, qmul, kind); \
            }                                                                                                    \
            /* scores = q . k^T */                                                                               \
            if (kind == R_NONE) {                                                                                \
                GEMM(NULL, false, true, n, L, D, alpha, qm, ldq, km, ldk, (A)0, sc, L > 0 ? L : 1);              \
            } else {                                                                                             \
                for (int64_t i = 0; i < n; ++i)                                                                  \
                    for (int64_t c = 0; c < L; ++c) {                                                            \
                        float acc = 0.0f;                                                                        \
                        for (int64_t d = 0; d < D; ++d) acc += (float)qm[i * ldq + d] * (float)km[c * ldk + d];  \
                        sc[i * L + c] = (A)rnd(acc, kind);                                                       \
                    }                                                                                            \
            }                                                                                                    \
            for (int64_t i = 0; i < n; ++i) {                                                                    \
                A *row = sc + i * L;                                                                             \
                int64_t qko = j->qk ? off4(j->qk, b, h, i0 + i) : 0;                                             \
                if (j->qk && p->qk_mode == 0)                                                                    \
                    for (int64_t c = 0; c < L; ++c) store(j->qk->data, qko + c, j->dtype, row[c]);               \
                if (p->softcap > 0)                                                                              \
                    for (int64_t c = 0; c < L; ++c) {                                                            \
                        if (kind) row[c] = rnd(rnd(tanhf(rnd(row[c] / cap, kind)), kind) * cap, kind);          \
                        else row[c] = (A)tanh((double)(row[c] / cap)) * cap;                                     \
                    }                                                                                            \
                if (j->qk && p->qk_mode == 1)                                                                    \
                    for (int64_t c = 0; c < L; ++c) store(j->qk->data, qko + c, j->dtype, row[c]);               \
                int masked = bias_row(j, b, h, i0 + i, bias);                                                    \
                if (masked != BIAS_NONE)                                                                         \
                    for (int64_t c = 0; c < L; ++c)                                                              \
                        row[c] = kind ? rnd(row[c] + (A)bias[c], kind) : row[c] + (A)bias[c];                    \
                if (j->qk && p->qk_mode == 2)                                                                    \
                    for (int64_t c = 0; c < L; ++c) store(j->qk->data, qko + c, j->dtype, row[c]);               \
                if (masked == BIAS_ALL_MASKED) {                                                                 \
                    for (int64_t c = 0; c < L; ++c) row[c] = (A)0;                                               \
                } else {                                                                                         \
                    attn_softmax_##SUF(j, row, tmp);                                                             \
                    if (kind)                                                                                    \
                        for (int64_t c = 0; c < L; ++c) row[c] = rnd(row[c], kind);                              \
                }                                                                                                \
                if (j->qk && p->qk_mode == 3)                                                                    \
                    for (int64_t c = 0; c < L; ++c) store(j->qk->data, qko + c, j->dtype, row[c]);               \
            }                                                                                                    \
            /* y = probabilities . v */                                                                          \
            int64_t yoff = b * j->ys[0] + h * j->ys[1] + i0 * j->ys[2];                                          \
            if (kind == R_NONE) {                                                                                \
                GEMM(NULL, false, false, n, Dv, L, (A)1, sc, L > 0 ? L : 1, vm, ldv, (A)0,                       \
                     (A *)j->y->data + yoff, j->ys[2] > 0 ? j->ys[2] : 1);                                       \
            } else {                                                                                             \
                for (int64_t i = 0; i < n; ++i)                                                                  \
                    for (int64_t d = 0; d < Dv; ++d) {                                                           \
                        float acc = 0.0f;                                                                        \
                        for (int64_t c = 0; c < L; ++c) acc += (float)sc[i * L + c] * (float)vm[c * ldv + d];    \
                        store(j->y->data, yoff + i * j->ys[2] + d, j->dtype, acc);                               \
                    }                                                                                            \
            }                                                                                                    \
        }                                                                                                        \
        free(ks);                                                                                                \
    }

DEFINE_ATTN(float, f32, mlrt_sgemm)
DEFINE_ATTN(double, f64, mlrt_dgemm)

/* float compute: the softmax in the softmax type (double converts the row) */
static void attn_softmax_f32(const attn_job *j, float *row, void *tmp) {
    int64_t L = j->L;
    if (j->p->softmax_type == MLRT_DOUBLE) {
        double *t = tmp;
        for (int64_t c = 0; c < L; ++c) t[c] = row[c];
        softmax_d(t, L);
        for (int64_t c = 0; c < L; ++c) row[c] = (float)t[c];
    } else if (j->p->softmax_type == MLRT_FLOAT) {
        softmax_f32(row, L);
    } else {
        softmax_f(row, L, round_kind((int32_t)j->p->softmax_type));
    }
}

static void attn_softmax_f64(const attn_job *j, double *row, void *tmp) {
    int64_t L = j->L;
    if (j->p->softmax_type == MLRT_DOUBLE) {
        softmax_d(row, L);
    } else {
        float *t = tmp;
        for (int64_t c = 0; c < L; ++c) t[c] = (float)row[c];
        softmax_f(t, L, round_kind((int32_t)j->p->softmax_type));
        for (int64_t c = 0; c < L; ++c) row[c] = t[c];
    }
}

/* present_key / present_value: past rows then new rows, one row per item */
static void present_range(void *arg, int64_t begin, int64_t end) {
    const attn_job *j = arg;
    size_t es = mlrt_dtype_size(j->dtype);
    for (int64_t it = begin; it < end; ++it) {
        int64_t r = it % j->L, bh = it / j->L, kh = bh % j->p->kv_heads, b = bh / j->p->kv_heads;
        for (int v = 0; v < 2; ++v) {
            const mlrt_tensor *dst = v ? j->pres_v : j->pres_k;
            if (!dst) continue;
            int64_t n = v ? j->p->v_head_size : j->p->head_size, soff, doff = off4(dst, b, kh, r);
            const mlrt_tensor *src = kv_source(j, v, b, kh, r, &soff);
            const char *s = (const char *)src->data + (size_t)soff * es;
            char *d = (char *)dst->data + (size_t)doff * es;
            if (src->strides[3] == 1) memcpy(d, s, (size_t)n * es);
            else for (int64_t e = 0; e < n; ++e) memcpy(d + (size_t)e * es, s + (size_t)(e * src->strides[3]) * es, es);
        }
    }
}

static bool is_shape(const mlrt_tensor *t, int64_t a, int64_t b, int64_t c, int64_t d) {
    return t->rank == 4 && t->shape[0] == a && t->shape[1] == b && t->shape[2] == c && t->shape[3] == d;
}

static int k_attention(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                       const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_attention_params, p, params, params_size);
    MLRT_CHECK(n_in >= 3 && n_in <= 7 && n_out >= 1 && n_out <= 4, "expects 3 to 7 inputs and 1 to 4 outputs");
    const mlrt_tensor *q = &in[0], *k = &in[1], *v = &in[2];
    int32_t dt = q->dtype;
    if (dt != MLRT_FLOAT && dt != MLRT_DOUBLE && dt != MLRT_FLOAT16 && dt != MLRT_BFLOAT16)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", dt);
    int64_t B = p->batch, Hq = p->q_heads, Hkv = p->kv_heads, Sq = p->q_len, S = p->kv_len, P = p->past_len;
    int64_t D = p->head_size, Dv = p->v_head_size;
    MLRT_CHECK(B >= 0 && Hq >= 0 && Hkv > 0 && Sq >= 0 && S >= 0 && P >= 0 && D >= 0 && Dv >= 0 && Hq % Hkv == 0,
               "bad sizes (batch %lld, heads %lld / %lld)", (long long)B, (long long)Hq, (long long)Hkv);
    MLRT_CHECK(p->qk_mode >= 0 && p->qk_mode <= 3, "qk_matmul_output_mode %lld", (long long)p->qk_mode);
    MLRT_CHECK(p->softmax_type == MLRT_FLOAT || p->softmax_type == MLRT_DOUBLE || p->softmax_type == MLRT_FLOAT16 ||
                   p->softmax_type == MLRT_BFLOAT16,
               "softmax type %lld not supported", (long long)p->softmax_type);
    MLRT_CHECK(k->dtype == dt && v->dtype == dt, "Q, K and V must share one element type");
    MLRT_CHECK(is_shape(q, B, Hq, Sq, D) && is_shape(k, B, Hkv, S, D) && is_shape(v, B, Hkv, S, Dv),
               "Q, K, V views do not match the sizes");
    const mlrt_tensor *mask = n_in > 3 && mlrt_present(&in[3]) ? &in[3] : NULL;
    const mlrt_tensor *pk = n_in > 4 && mlrt_present(&in[4]) ? &in[4] : NULL;
    const mlrt_tensor *pv = n_in > 5 && mlrt_present(&in[5]) ? &in[5] : NULL;
    const mlrt_tensor *nonpad = n_in > 6 && mlrt_present(&in[6]) ? &in[6] : NULL;
    int64_t L = P + S;
    MLRT_CHECK(!mask || (mask->rank == 4 && mask->shape[0] == B && mask->shape[1] == Hq && mask->shape[2] == Sq &&
                         mask->shape[3] <= L && (mask->dtype == dt || mask->dtype == MLRT_BOOL)),
               "attn_mask view does not match");
    MLRT_CHECK(!pk == !pv, "past_key and past_value come together");
    MLRT_CHECK(pk ? pk->dtype == dt && pv->dtype == dt && is_shape(pk, B, Hkv, P, D) && is_shape(pv, B, Hkv, P, Dv)
                  : P == 0,
               "past_key / past_value do not match the sizes");
    MLRT_CHECK(!nonpad || (nonpad->dtype == MLRT_INT64 && nonpad->rank == 1 && nonpad->shape[0] == B && !pk),
               "nonpad_kv_seqlen must be int64 of shape [batch], without a past cache");
    const mlrt_tensor *y = &out[0];
    const mlrt_tensor *prk = n_out > 1 && mlrt_present(&out[1]) ? &out[1] : NULL;
    const mlrt_tensor *prv = n_out > 2 && mlrt_present(&out[2]) ? &out[2] : NULL;
    const mlrt_tensor *qk = n_out > 3 && mlrt_present(&out[3]) ? &out[3] : NULL;
    bool y3 = y->rank == 3;
    MLRT_CHECK(y->dtype == dt && mlrt_is_contiguous(y) &&
                   (y3 ? y->shape[0] == B && y->shape[1] == Sq && y->shape[2] == Hq * Dv : is_shape(y, B, Hq, Sq, Dv)),
               "Y does not match the sizes");
    MLRT_CHECK(!prk || (prk->dtype == dt && mlrt_is_contiguous(prk) && is_shape(prk, B, Hkv, L, D)),
               "present_key does not match the sizes");
    MLRT_CHECK(!prv || (prv->dtype == dt && mlrt_is_contiguous(prv) && is_shape(prv, B, Hkv, L, Dv)),
               "present_value does not match the sizes");
    MLRT_CHECK(!qk || (qk->dtype == dt && mlrt_is_contiguous(qk) && is_shape(qk, B, Hq, Sq, L)),
               "qk_matmul_output does not match the sizes");

    attn_job job = {.p = p, .q = q, .k = k, .v = v, .mask = mask, .past_k = pk, .past_v = pv, .nonpad = nonpad,
                    .y = y, .qk = qk};
    job.L = L;
    job.group = Hq / Hkv;
    job.qblocks = (Sq + QBLOCK - 1) / QBLOCK;
    job.dtype = dt;
    job.kind = round_kind(dt);
    if (y3) { job.ys[0] = Sq * Hq * Dv; job.ys[1] = Dv; job.ys[2] = Hq * Dv; }
    else { job.ys[0] = Hq * Sq * Dv; job.ys[1] = Sq * Dv; job.ys[2] = Dv; }
    job.ys[3] = 1;
    if (prk || prv) {
        attn_job copy = job;
        copy.pres_k = prk;
        copy.pres_v = prv;
        mlrt_parallel_for(ctx, B * Hkv * L, 4096 / (D + Dv + 1) + 1, present_range, &copy);
    }
    job.pres_k = prk;
    job.pres_v = prv;
    int64_t items = B * Hq * job.qblocks, work = (Sq < QBLOCK ? Sq : QBLOCK) * (L + 1) * (D + Dv + 1);
    mlrt_parallel_for(ctx, items, 65536 / (work + 1) + 1, dt == MLRT_DOUBLE ? attn_range_f64 : attn_range_f32, &job);
    if (job.failed) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "out of memory for attention scratch");
    return MLRT_OK;
}

MLRT_KERNEL(attention, "Attention", "", 23, MLRT_OPSET_MAX,
            MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16), k_attention);

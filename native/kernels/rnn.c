/* rnn.c -- RNN, GRU, LSTM: one layer, forward / reverse / bidirectional, float and
 * double, layouts 0 and 1, optional bias, sequence_lens, initial_h / initial_c,
 * peepholes (LSTM), linear_before_reset (GRU), input_forget (LSTM), clip and any
 * of the ONNX activation functions.
 *
 * Per direction: the input projections X W^T + (Wb + Rb) are computed for a chunk
 * of time steps at once (one GEMM over gathered rows, so reversed sequences of
 * different lengths need no special case), then each step multiplies the hidden
 * state by R^T (one GEMM over the batch) and runs the gate arithmetic per batch row
 * on the intra-op pool.  A batch row whose sequence has ended keeps its state; its
 * Y rows are zero (and an empty sequence's Y_h / Y_c are zero, as in onnxruntime).  Y, Y_h and Y_c are each optional. */
#include <math.h>
#include <stdlib.h>

#include "gemm.h"
#include "internal.h"
#include "rnn.h"

enum { KIND_RNN = 1, KIND_GRU = 3, KIND_LSTM = 4 }; /* = number of gates */

/* Work space of the input projections per chunk of time steps. */
#define RNN_CHUNK_BYTES (INT64_C(32) << 20)

/* The gate loops, cloned per ISA level (they vectorize: float32 sigmoid and tanh
 * below are branch-free polynomials, within 2 ulp of libm's over the whole range). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RNN_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define RNN_CLONES
#endif

typedef union { float f; uint32_t u; } rnn_bits;

/* exp(x) for x <= 0: 2^k * p(r), k = round(x / ln 2), r = x - k ln 2 (ln 2 in two
 * parts), p of degree 7; 0 below -87 (where exp is about to leave the normal range). */
static inline float rnn_exp_neg(float x) {
    float xc = x < -87.0f ? -87.0f : x;
    rnn_bits t = {.f = xc * 1.44269504f + 12582912.0f}; /* 1.5 * 2^23: k lands in the low bits */
    float k = t.f - 12582912.0f;
    float r = xc - k * 0.693145751953125f;
    r = r - k * 1.428606765330187e-06f;
    float p = 1.0f / 5040;
    p = p * r + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    rnn_bits scale = {.u = (t.u - 0x4B400000u + 127u) << 23};
    return x < -87.0f ? 0.0f : p * scale.f;
}

static inline float rnn_sigmoidf(float x) {
    float e = rnn_exp_neg(-fabsf(x)), s = 1.0f / (1.0f + e);
    return x >= 0 ? s : e * s;
}

/* tanh: odd Taylor polynomial below 0.25 (no cancellation), (1 - e) / (1 + e) with
 * e = exp(-2|x|) above; NaN stays NaN */
static inline float rnn_tanhf(float x) {
    float a = fabsf(x), a2 = a * a, e = rnn_exp_neg(-2.0f * a);
    float q = -1382.0f / 155925;
    q = q * a2 + 62.0f / 2835;
    q = q * a2 - 17.0f / 315;
    q = q * a2 + 2.0f / 15;
    q = q * a2 - 1.0f / 3;
    float r = a < 0.25f ? a + a * a2 * q : (1.0f - e) / (1.0f + e);
    return x < 0 ? -r : r;
}

static inline double rnn_sigmoid(double x) { return 1 / (1 + exp(-x)); }

typedef struct rnn_job {
    int32_t kind, dtype;
    size_t esz;
    const mlrt_rnn_params *p;
    int64_t S, Bt, I, H, G, nd;
    const void *X, *W, *R, *B, *P, *h0, *c0;
    const int32_t *lens;
    void *Y, *Yh, *Yc;
    /* the direction being run */
    int64_t d;
    bool reverse;
    int32_t act[3];
    double alpha[3], beta[3];
    /* work: x rows of a chunk, their projections, recurrent products, states */
    void *xg, *xw, *hr, *h, *c, *rh, *hrh, *bias;
    int64_t s0, step; /* first step of the chunk, current step */
} rnn_job;

static inline int64_t seq_len(const rnn_job *j, int64_t b) { return j->lens ? j->lens[b] : j->S; }

/* time index of step s for batch row b (-1 once its sequence has ended) */
static inline int64_t time_of(const rnn_job *j, int64_t s, int64_t b) {
    int64_t n = seq_len(j, b);
    if (s >= n) return -1;
    return j->reverse ? n - 1 - s : s;
}

static inline int64_t x_off(const rnn_job *j, int64_t t, int64_t b) {
    return (j->p->layout ? b * j->S + t : t * j->Bt + b) * j->I;
}

static inline int64_t y_off(const rnn_job *j, int64_t t, int64_t b) {
    return (j->p->layout ? (b * j->S + t) * j->nd + j->d : (t * j->nd + j->d) * j->Bt + b) * j->H;
}

/* Y_h, Y_c, initial_h, initial_c: [nd, batch, H] or [batch, nd, H] */
static inline int64_t state_off(const rnn_job *j, int64_t b) {
    return (j->p->layout ? b * j->nd + j->d : j->d * j->Bt + b) * j->H;
}

/* Per element type: activations and the gate arithmetic of one batch row. */
#define DEFINE_RNN_TYPE(T, SUF, F, SIGMOID, TANH)                                                                        \
    RNN_CLONES static void act_##SUF(T *v, int64_t n, int32_t code, T a, T b, const rnn_job *j, bool clip) { \
        if (clip && j->p->has_clip) {                                                                      \
            T c = (T)j->p->clip;                                                                           \
            for (int64_t i = 0; i < n; ++i) v[i] = v[i] < -c ? -c : v[i] > c ? c : v[i];                   \
        }                                                                                                  \
        switch (code) {                                                                                    \
        case MLRT_RNN_RELU: for (int64_t i = 0; i < n; ++i) v[i] = v[i] > 0 ? v[i] : 0; break;             \
        case MLRT_RNN_TANH: for (int64_t i = 0; i < n; ++i) v[i] = TANH(v[i]); break;                      \
        case MLRT_RNN_SIGMOID: for (int64_t i = 0; i < n; ++i) v[i] = SIGMOID(v[i]); break;                \
        case MLRT_RNN_AFFINE: for (int64_t i = 0; i < n; ++i) v[i] = a * v[i] + b; break;                  \
        case MLRT_RNN_LEAKYRELU:                                                                           \
            for (int64_t i = 0; i < n; ++i) v[i] = v[i] >= 0 ? v[i] : a * v[i];                            \
            break;                                                                                         \
        case MLRT_RNN_THRESHOLDEDRELU: for (int64_t i = 0; i < n; ++i) v[i] = v[i] > a ? v[i] : 0; break;  \
        case MLRT_RNN_SCALEDTANH: for (int64_t i = 0; i < n; ++i) v[i] = a * tanh##F(b * v[i]); break;     \
        case MLRT_RNN_HARDSIGMOID:                                                                         \
            for (int64_t i = 0; i < n; ++i) {                                                              \
                T u = a * v[i] + b;                                                                        \
                v[i] = u > 1 ? 1 : u > 0 ? u : 0;                                                          \
            }                                                                                              \
            break;                                                                                         \
        case MLRT_RNN_ELU:                                                                                 \
            for (int64_t i = 0; i < n; ++i) v[i] = v[i] >= 0 ? v[i] : a * expm1##F(v[i]);                  \
            break;                                                                                         \
        case MLRT_RNN_SOFTSIGN: for (int64_t i = 0; i < n; ++i) v[i] = v[i] / (1 + fabs##F(v[i])); break;  \
        case MLRT_RNN_SOFTPLUS:                                                                            \
            for (int64_t i = 0; i < n; ++i)                                                                \
                v[i] = v[i] > 0 ? v[i] + log1p##F(exp##F(-v[i])) : log1p##F(exp##F(v[i]));                 \
            break;                                                                                         \
        }                                                                                                  \
    }                                                                                                      \
                                                                                                           \
    /* activation k of the direction on v[0, n) (clipped first when `clip`) */                            \
    static inline void fn_##SUF(const rnn_job *j, int k, T *v, int64_t n, bool clip) {                     \
        act_##SUF(v, n, j->act[k], (T)j->alpha[k], (T)j->beta[k], j, clip);                                \
    }                                                                                                      \
                                                                                                           \
    /* one step for batch rows [begin, end): hr holds h @ R^T, xw the input projections */                \
    static void cells_##SUF(void *arg, int64_t begin, int64_t end) {                                       \
        const rnn_job *j = arg;                                                                            \
        int64_t H = j->H, GH = j->G * H;                                                                   \
        for (int64_t b = begin; b < end; ++b) {                                                            \
            int64_t t = time_of(j, j->step, b);                                                            \
            T *h = (T *)j->h + b * H;                                                                      \
            if (t < 0) {                                                                                   \
                if (j->rh) memset((T *)j->rh + b * H, 0, (size_t)H * sizeof(T));                           \
                continue;                                                                                  \
            }                                                                                              \
            const T *xw = (const T *)j->xw + ((j->step - j->s0) * j->Bt + b) * GH;                         \
            T *g = (T *)j->hr + b * GH;                                                                    \
            if (j->kind == KIND_RNN) {                                                                     \
                for (int64_t i = 0; i < H; ++i) g[i] += xw[i];                                             \
                fn_##SUF(j, 0, g, H, true);                                                                \
                memcpy(h, g, (size_t)H * sizeof(T));                                                       \
            } else if (j->kind == KIND_LSTM) {                                                             \
                T *c = (T *)j->c + b * H;                                                                  \
                const T *P = j->P ? (const T *)j->P + j->d * 3 * H : NULL;                                 \
                T *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;                                  \
                for (int64_t i = 0; i < GH; ++i) g[i] += xw[i];                                            \
                if (P)                                                                                     \
                    for (int64_t i = 0; i < H; ++i) gi[i] += P[i] * c[i];                                  \
                fn_##SUF(j, 0, gi, H, true);                                                               \
                if (j->p->input_forget) {                                                                  \
                    for (int64_t i = 0; i < H; ++i) gf[i] = 1 - gi[i];                                     \
                } else {                                                                                   \
                    if (P)                                                                                 \
                        for (int64_t i = 0; i < H; ++i) gf[i] += P[2 * H + i] * c[i];                      \
                    fn_##SUF(j, 0, gf, H, true);                                                           \
                }                                                                                          \
                fn_##SUF(j, 1, gc, H, true);                                                               \
                for (int64_t i = 0; i < H; ++i) c[i] = gf[i] * c[i] + gi[i] * gc[i];                       \
                if (P)                                                                                     \
                    for (int64_t i = 0; i < H; ++i) go[i] += P[H + i] * c[i];                              \
                fn_##SUF(j, 0, go, H, true);                                                               \
                memcpy(gc, c, (size_t)H * sizeof(T));                                                      \
                fn_##SUF(j, 2, gc, H, false);                                                              \
                for (int64_t i = 0; i < H; ++i) h[i] = go[i] * gc[i];                                      \
            } else { /* GRU: z and r; h-gate in gru_finish (default) or here */                          \
                for (int64_t i = 0; i < 2 * H; ++i) g[i] += xw[i];                                         \
                fn_##SUF(j, 0, g, 2 * H, true);                                                            \
                const T *r = g + H;                                                                        \
                if (j->rh) {                                                                               \
                    T *rh = (T *)j->rh + b * H;                                                            \
                    for (int64_t i = 0; i < H; ++i) rh[i] = r[i] * h[i];                                   \
                    continue;                                                                              \
                }                                                                                          \
                const T *rb = j->B ? (const T *)j->B + j->d * 6 * H + 5 * H : NULL;                        \
                T *gh = g + 2 * H, *z = g;                                                                 \
                for (int64_t i = 0; i < H; ++i) gh[i] = xw[2 * H + i] + r[i] * (gh[i] + (rb ? rb[i] : 0)); \
                fn_##SUF(j, 1, gh, H, true);                                                               \
                for (int64_t i = 0; i < H; ++i) h[i] = (1 - z[i]) * gh[i] + z[i] * h[i];                   \
            }                                                                                              \
            if (j->Y) memcpy((T *)j->Y + y_off(j, t, b), h, (size_t)H * sizeof(T));                        \
        }                                                                                                  \
    }                                                                                                      \
                                                                                                           \
    /* GRU without linear_before_reset: hrh holds (r * h) @ Rh^T */                                        \
    static void gru_finish_##SUF(void *arg, int64_t begin, int64_t end) {                                  \
        const rnn_job *j = arg;                                                                            \
        int64_t H = j->H, GH = 3 * H;                                                                      \
        for (int64_t b = begin; b < end; ++b) {                                                            \
            int64_t t = time_of(j, j->step, b);                                                            \
            if (t < 0) continue;                                                                           \
            const T *xw = (const T *)j->xw + ((j->step - j->s0) * j->Bt + b) * GH;                         \
            T *z = (T *)j->hr + b * GH, *gh = z + 2 * H, *h = (T *)j->h + b * H;                           \
            const T *hrh = (const T *)j->hrh + b * H;                                                      \
            for (int64_t i = 0; i < H; ++i) gh[i] = xw[2 * H + i] + hrh[i];                                \
            fn_##SUF(j, 1, gh, H, true);                                                                   \
            for (int64_t i = 0; i < H; ++i) h[i] = (1 - z[i]) * gh[i] + z[i] * h[i];                       \
            if (j->Y) memcpy((T *)j->Y + y_off(j, t, b), h, (size_t)H * sizeof(T));                        \
        }                                                                                                  \
    }                                                                                                      \
                                                                                                           \
    /* combined bias of the input projections: Wb + Rb (GRU with linear_before_reset:                     \
     * the h-gate's Rb is applied inside the reset product instead) */                                    \
    static void bias_##SUF(const rnn_job *j) {                                                             \
        int64_t GH = j->G * j->H;                                                                          \
        T *cb = j->bias;                                                                                   \
        const T *wb = j->B ? (const T *)j->B + j->d * 2 * GH : NULL;                                       \
        for (int64_t i = 0; i < GH; ++i) {                                                                 \
            bool skip_rb = j->kind == KIND_GRU && j->p->linear_before_reset && i >= 2 * j->H;              \
            cb[i] = wb ? wb[i] + (skip_rb ? 0 : wb[GH + i]) : 0;                                           \
        }                                                                                                  \
    }                                                                                                      \
                                                                                                           \
    /* x rows (steps [s0, s0 + n), all batch rows) gathered, and xw set to the bias */                    \
    static void gather_##SUF(const rnn_job *j, int64_t n) {                                                \
        int64_t GH = j->G * j->H;                                                                          \
        for (int64_t s = 0; s < n; ++s)                                                                    \
            for (int64_t b = 0; b < j->Bt; ++b) {                                                          \
                int64_t t = time_of(j, j->s0 + s, b), row = s * j->Bt + b;                                 \
                T *dst = (T *)j->xg + row * j->I;                                                          \
                if (t < 0) memset(dst, 0, (size_t)j->I * sizeof(T));                                       \
                else memcpy(dst, (const T *)j->X + x_off(j, t, b), (size_t)j->I * sizeof(T));              \
                memcpy((T *)j->xw + row * GH, j->bias, (size_t)GH * sizeof(T));                            \
            }                                                                                              \
    }                                                                                                      \
                                                                                                           \
    static void init_state_##SUF(const rnn_job *j) {                                                       \
        for (int64_t b = 0; b < j->Bt; ++b) {                                                              \
            T *h = (T *)j->h + b * j->H, *c = j->c ? (T *)j->c + b * j->H : NULL;                          \
            int64_t o = state_off(j, b);                                                                   \
            for (int64_t i = 0; i < j->H; ++i) {                                                           \
                h[i] = j->h0 ? ((const T *)j->h0)[o + i] : 0;                                              \
                if (c) c[i] = j->c0 ? ((const T *)j->c0)[o + i] : 0;                                       \
            }                                                                                              \
        }                                                                                                  \
    }                                                                                                      \
                                                                                                           \
    static void save_state_##SUF(const rnn_job *j) {                                                       \
        for (int64_t b = 0; b < j->Bt; ++b) {                                                              \
            int64_t o = state_off(j, b);                                                                   \
            bool empty = seq_len(j, b) == 0; /* no step: zero states, as onnxruntime gives */             \
            for (int64_t i = 0; i < j->H; ++i) {                                                           \
                if (j->Yh) ((T *)j->Yh)[o + i] = empty ? 0 : ((const T *)j->h)[b * j->H + i];              \
                if (j->Yc) ((T *)j->Yc)[o + i] = empty ? 0 : ((const T *)j->c)[b * j->H + i];              \
            }                                                                                              \
        }                                                                                                  \
    }

DEFINE_RNN_TYPE(float, f32, f, rnn_sigmoidf, rnn_tanhf)
DEFINE_RNN_TYPE(double, f64, , rnn_sigmoid, tanh)

/* C = A @ B^T (+ C when accumulate), row-major, in the job's type */
static int rnn_gemm(const mlrt_context *ctx, const rnn_job *j, int64_t M, int64_t N, int64_t K, const void *A,
                    int64_t lda, const void *B, int64_t ldb, bool accumulate, void *C, int64_t ldc) {
    if (j->dtype == MLRT_FLOAT)
        return mlrt_sgemm(ctx, false, true, M, N, K, 1.0f, A, lda, B, ldb, accumulate ? 1.0f : 0.0f, C, ldc);
    return mlrt_dgemm(ctx, false, true, M, N, K, 1.0, A, lda, B, ldb, accumulate ? 1.0 : 0.0, C, ldc);
}

static int rnn_direction(const mlrt_context *ctx, rnn_job *j, int64_t chunk) {
    bool f32 = j->dtype == MLRT_FLOAT;
    int64_t H = j->H, GH = j->G * H, Bt = j->Bt;
    const char *W = (const char *)j->W + (size_t)(j->d * GH * j->I) * j->esz;
    const char *R = (const char *)j->R + (size_t)(j->d * GH * H) * j->esz;
    bool gru_split = j->kind == KIND_GRU && !j->p->linear_before_reset;
    int64_t grain = GH >= 4096 ? 1 : 4096 / (GH + 1) + 1;
    if (f32) bias_f32(j), init_state_f32(j);
    else bias_f64(j), init_state_f64(j);
    int status = MLRT_OK;
    for (j->s0 = 0; j->s0 < j->S && status == MLRT_OK; j->s0 += chunk) {
        int64_t n = j->S - j->s0 < chunk ? j->S - j->s0 : chunk;
        if (f32) gather_f32(j, n);
        else gather_f64(j, n);
        status = rnn_gemm(ctx, j, n * Bt, GH, j->I, j->xg, j->I, W, j->I, true, j->xw, GH);
        for (int64_t s = 0; s < n && status == MLRT_OK; ++s) {
            j->step = j->s0 + s;
            /* h @ R^T: every gate, or z and r only (GRU's h-gate needs r first) */
            status = rnn_gemm(ctx, j, Bt, gru_split ? 2 * H : GH, H, j->h, H, R, H, false, j->hr, GH);
            if (status) break;
            mlrt_parallel_for(ctx, Bt, grain, f32 ? cells_f32 : cells_f64, j);
            if (gru_split) {
                status = rnn_gemm(ctx, j, Bt, H, H, j->rh, H, R + (size_t)(2 * H * H) * j->esz, H, false, j->hrh, H);
                if (status) break;
                mlrt_parallel_for(ctx, Bt, grain, f32 ? gru_finish_f32 : gru_finish_f64, j);
            }
        }
    }
    if (status == MLRT_OK) {
        if (f32) save_state_f32(j);
        else save_state_f64(j);
    }
    return status;
}

static bool dims_are(const mlrt_tensor *t, int32_t rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    int64_t want[4] = {d0, d1, d2, d3};
    if (t->rank != rank) return false;
    for (int32_t i = 0; i < rank; ++i)
        if (t->shape[i] != want[i]) return false;
    return mlrt_is_contiguous(t);
}

static const mlrt_tensor *opt(const mlrt_tensor *t, int32_t n, int32_t i) {
    return i < n && mlrt_present(&t[i]) ? &t[i] : NULL;
}

/* inputs: X, W, R, B, sequence_lens, initial_h (, initial_c, P for LSTM); outputs: Y, Y_h (, Y_c) */
static int rnn_run(const mlrt_context *ctx, int32_t kind, const char *op, const mlrt_tensor *in, int32_t n_in,
                   mlrt_tensor *out, int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_rnn_params, p, params, params_size);
    int32_t max_in = kind == KIND_LSTM ? 8 : 6, max_out = kind == KIND_LSTM ? 3 : 2;
    MLRT_CHECK(n_in >= 3 && n_in <= max_in && n_out >= 1 && n_out <= max_out,
               "%s: expects 3 to %d inputs and 1 to %d outputs", op, max_in, max_out);
    const mlrt_tensor *X = &in[0], *W = &in[1], *R = &in[2], *B = opt(in, n_in, 3), *L = opt(in, n_in, 4);
    const mlrt_tensor *H0 = opt(in, n_in, 5), *C0 = opt(in, n_in, 6), *P = opt(in, n_in, 7);
    const mlrt_tensor *Y = opt(out, n_out, 0), *Yh = opt(out, n_out, 1), *Yc = opt(out, n_out, 2);
    int32_t dt = X->dtype;
    if (dt != MLRT_FLOAT && dt != MLRT_DOUBLE)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "%s: element type %d not supported", op, dt);
    MLRT_CHECK(p->direction >= MLRT_RNN_FORWARD && p->direction <= MLRT_RNN_BIDIRECTIONAL &&
                   (p->layout == 0 || p->layout == 1) && p->hidden_size >= 0,
               "%s: bad direction, layout or hidden_size", op);
    for (int k = 0; k < 6; ++k)
        MLRT_CHECK(p->activations[k] >= MLRT_RNN_RELU && p->activations[k] <= MLRT_RNN_SOFTPLUS,
                   "%s: unknown activation code %lld", op, (long long)p->activations[k]);
    MLRT_CHECK(X->rank == 3 && mlrt_is_contiguous(X), "%s: X must be a contiguous 3-D tensor", op);
    int64_t nd = p->direction == MLRT_RNN_BIDIRECTIONAL ? 2 : 1, H = p->hidden_size, G = kind;
    int64_t S = p->layout ? X->shape[1] : X->shape[0], Bt = p->layout ? X->shape[0] : X->shape[1], I = X->shape[2];
    const mlrt_tensor *all[] = {W, R, B, H0, C0, P, Y, Yh, Yc};
    for (size_t k = 0; k < sizeof all / sizeof *all; ++k)
        MLRT_CHECK(!all[k] || all[k]->dtype == dt, "%s: every tensor but sequence_lens must have X's type", op);
    long long lnd = (long long)nd, lgh = (long long)(G * H);
    MLRT_CHECK(dims_are(W, 3, nd, G * H, I, 0), "%s: W must be [%lld, %lld, %lld]", op, lnd, lgh, (long long)I);
    MLRT_CHECK(dims_are(R, 3, nd, G * H, H, 0), "%s: R must be [%lld, %lld, %lld]", op, lnd, lgh, (long long)H);
    MLRT_CHECK(!B || dims_are(B, 2, nd, 2 * G * H, 0, 0), "%s: B must be [%lld, %lld]", op, lnd, 2 * lgh);
    MLRT_CHECK(!P || dims_are(P, 2, nd, 3 * H, 0, 0), "%s: P must be [%lld, %lld]", op, lnd, (long long)(3 * H));
    int64_t s0 = p->layout ? Bt : nd, s1 = p->layout ? nd : Bt;
    MLRT_CHECK(!H0 || dims_are(H0, 3, s0, s1, H, 0), "%s: initial_h has the wrong shape", op);
    MLRT_CHECK(!C0 || dims_are(C0, 3, s0, s1, H, 0), "%s: initial_c has the wrong shape", op);
    MLRT_CHECK(!Yh || dims_are(Yh, 3, s0, s1, H, 0), "%s: Y_h has the wrong shape", op);
    MLRT_CHECK(!Yc || dims_are(Yc, 3, s0, s1, H, 0), "%s: Y_c has the wrong shape", op);
    MLRT_CHECK(!Y || (p->layout ? dims_are(Y, 4, Bt, S, nd, H) : dims_are(Y, 4, S, nd, Bt, H)),
               "%s: Y has the wrong shape", op);
    MLRT_CHECK(!L || (L->dtype == MLRT_INT32 && L->rank == 1 && L->shape[0] == Bt && mlrt_is_contiguous(L)),
               "%s: sequence_lens must be int32 of shape [%lld]", op, (long long)Bt);
    const int32_t *lens = L ? L->data : NULL;
    for (int64_t b = 0; lens && b < Bt; ++b)
        MLRT_CHECK(lens[b] >= 0 && lens[b] <= S, "%s: sequence_lens[%lld] = %d is outside [0, %lld]", op, (long long)b,
                   lens[b], (long long)S);
    size_t esz = mlrt_dtype_size(dt);
    if (Y && lens) memset(Y->data, 0, (size_t)mlrt_numel(Y) * esz);
    if (Bt == 0 || H == 0) return MLRT_OK;

    /* time steps per chunk of input projections */
    int64_t row = (G * H + I) * (int64_t)esz * Bt;
    int64_t chunk = row > 0 ? RNN_CHUNK_BYTES / row : S;
    chunk = chunk < 1 ? 1 : chunk > S ? S : chunk;
    if (chunk < 1) chunk = 1;
    size_t n_xg = (size_t)(chunk * Bt * I), n_xw = (size_t)(chunk * Bt * G * H), n_state = (size_t)(Bt * H);
    size_t total = n_xg + n_xw + (size_t)(Bt * G * H) + 4 * n_state + (size_t)(G * H);
    char *work = malloc(total * esz + 64);
    if (!work) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes of work space", op, total * esz);
    rnn_job j = {.kind = kind, .dtype = dt, .esz = esz, .p = p, .S = S, .Bt = Bt, .I = I, .H = H, .G = G, .nd = nd,
                 .X = X->data, .W = W->data, .R = R->data, .B = B ? B->data : NULL, .P = P ? P->data : NULL,
                 .h0 = H0 ? H0->data : NULL, .c0 = C0 ? C0->data : NULL, .lens = lens,
                 .Y = Y ? Y->data : NULL, .Yh = Yh ? Yh->data : NULL, .Yc = Yc ? Yc->data : NULL};
    char *at = work;
    j.xg = at, at += n_xg * esz;
    j.xw = at, at += n_xw * esz;
    j.hr = at, at += (size_t)(Bt * G * H) * esz;
    j.h = at, at += n_state * esz;
    j.c = kind == KIND_LSTM ? at : NULL, at += n_state * esz;
    bool gru_split = kind == KIND_GRU && !p->linear_before_reset;
    j.rh = gru_split ? at : NULL, at += n_state * esz;
    j.hrh = gru_split ? at : NULL, at += n_state * esz;
    j.bias = at;
    int status = MLRT_OK;
    for (int64_t d = 0; d < nd && status == MLRT_OK; ++d) {
        j.d = d;
        j.reverse = p->direction == MLRT_RNN_REVERSE || d == 1;
        for (int k = 0; k < 3; ++k) {
            j.act[k] = (int32_t)p->activations[3 * d + k];
            j.alpha[k] = p->alpha[3 * d + k];
            j.beta[k] = p->beta[3 * d + k];
        }
        status = rnn_direction(ctx, &j, chunk);
    }
    free(work);
    return status;
}

static int k_rnn(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                 const void *params, size_t params_size) {
    return rnn_run(ctx, KIND_RNN, "RNN", in, n_in, out, n_out, params, params_size);
}

static int k_gru(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                 const void *params, size_t params_size) {
    return rnn_run(ctx, KIND_GRU, "GRU", in, n_in, out, n_out, params, params_size);
}

static int k_lstm(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                  const void *params, size_t params_size) {
    return rnn_run(ctx, KIND_LSTM, "LSTM", in, n_in, out, n_out, params, params_size);
}

MLRT_KERNEL(rnn, "RNN", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_rnn);
MLRT_KERNEL(gru, "GRU", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_gru);
MLRT_KERNEL(lstm, "LSTM", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_lstm);

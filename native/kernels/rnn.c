/* rnn.c -- RNN, GRU, LSTM: one layer, forward / reverse / bidirectional, float and
 * double, layouts 0 and 1, optional bias, sequence_lens, initial_h / initial_c,
 * peepholes (LSTM), linear_before_reset (GRU), input_forget (LSTM), clip and any
 * of the ONNX activation functions.
 *
 * Per direction, the input projections X W^T are computed for a chunk of time steps
 * by one GEMM (on W packed in its strips, or W^T, where the plan made one once from a
 * constant W: W's rows read in place are G * H floats apart, in the same cache sets), then
 * each step multiplies the hidden state by R^T and runs the gate arithmetic, which
 * adds the biases.  The steps run one of three ways:
 *   any batch, one thread (and float64): a direction at a time, each step's product
 *     one product over the batch rows (gathered, so reversed sequences of different
 *     lengths need no special case) -- float32 on R^T in strips of 32 columns (made
 *     once by the plan from a constant R, else per run), each strip meeting up to 8
 *     rows at a time; float64 through the GEMM -- and the gate arithmetic per batch
 *     row, on the intra-op pool;
 *   batch 1: matrix-vector products, the directions side by side (see below);
 *   float32, several rows and threads: as batch 1, each step's product on the strips
 *     of R^T (see below).
 * A batch row whose sequence has ended keeps its state; its Y rows are zero (and an
 * empty sequence's Y_h / Y_c are zero, as in onnxruntime).  Y, Y_h and Y_c are each
 * optional.  With AVX-512, float32 has its own matrix-vector and strip kernels and, for
 * the default activations, gate arithmetic that holds every gate of 16 units in registers. */
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "gemm.h"
#include "internal.h"
#include "rnn.h"
#include "sgemm.h"

enum { KIND_RNN = 1, KIND_GRU = 3, KIND_LSTM = 4 }; /* = number of gates */

/* Work space of the input projections per chunk of time steps. */
#define RNN_CHUNK_BYTES (INT64_C(32) << 20)

/* The gate loops, cloned per ISA level (MLRT_ISA_FN; they vectorize: float32 sigmoid and
 * tanh below are branch-free polynomials, within 2 ulp of libm's over the whole range). */
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
    const void *X, *W, *WT, *R, *B, *P, *h0, *c0; /* WT: W^T or NULL */
    const float *WP;  /* W of every direction packed in the GEMM's strips (rnn.h: w_packed), or NULL */
    const float *RP;  /* float32, batch > 1: R^T of every direction in strips for the steps' products
                         (rnn.h: r_packed; given by the plan or packed per run) */
    const int32_t *lens;
    void *Y, *Yh, *Yc;
    /* the direction being run */
    int64_t d;
    bool reverse;
    int32_t act[3];
    double alpha[3], beta[3];
    /* work: x rows of a chunk, their projections, recurrent products, states, bias */
    void *xg, *xw, *hr, *h, *c, *rh, *hrh, *bias;
    int64_t s0, step; /* first step of the chunk, current step */
    int32_t phase;    /* GRU without linear_before_reset: 0 for z and r, 1 for the h-gate */
    bool avx512;      /* float32 on a CPU whose GEMM runs AVX-512 (MLRT_SGEMM_KERNEL=avx2 turns it off) */
    bool fused;       /* avx512 and the default activations, no clip, peepholes or coupled gates */
} rnn_job;

/* One batch row's step for the gate arithmetic: g = h @ R^T (gate k of unit i at
 * g[k * H + i]), xw the row's input projection X W^T (job.bias is added to both), h
 * the state read and hn the state written (the same buffer on the batched path), c
 * LSTM's cell state, y the row of Y or NULL.  GRU without linear_before_reset runs in
 * two phases: with rh set, z and r leave r * h in rh; with hrh = (r * h) @ Rh^T set,
 * the h-gate finishes the step. */
typedef struct rnn_row {
    void *g;
    const void *xw, *h;
    void *hn, *c, *rh;
    const void *hrh;
    void *y;
} rnn_row;

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

/* ---- AVX-512: the matrix-vector product of a one-row step, the default gates ------------- */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RNN_X86 1

/* lane r: the sum of the 16 lanes of a[r] (one fixed tree for every r) */
__attribute__((target("avx512f"))) static inline __m512 rnn_hsum16(const __m512 *a) {
    __m512 s[8], t[4], w[2];
    for (int i = 0; i < 8; ++i) /* each 128-bit block: partial sums of rows 2i, 2i + 1, 2i, 2i + 1 */
        s[i] = _mm512_add_ps(_mm512_unpacklo_ps(a[2 * i], a[2 * i + 1]), _mm512_unpackhi_ps(a[2 * i], a[2 * i + 1]));
    for (int i = 0; i < 4; ++i) { /* each block: rows 4i .. 4i + 3 */
        __m512d x = _mm512_castps_pd(s[2 * i]), y = _mm512_castps_pd(s[2 * i + 1]);
        t[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)), _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
    }
    for (int i = 0; i < 2; ++i) /* blocks 0, 1: two halves of t[2i]; blocks 2, 3: of t[2i + 1] */
        w[i] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm512_add_ps(_mm512_shuffle_f32x4(w[0], w[1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(w[0], w[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

/* y[r] = sum_k A[r * K + k] * x[k] for r < rows: 16 rows share each load of x, each
 * accumulated in 16 lanes (a row past the end repeats the last one, unstored); the
 * blocks of rows last to first when `back` */
__attribute__((target("avx512f"))) static void rnn_gemv_avx512(const float *A, const float *x, int64_t K,
                                                                int64_t rows, float *y, bool back) {
    int64_t k_end = K & ~INT64_C(15), blocks = (rows + 15) / 16;
    __mmask16 tail = (__mmask16)((1u << (K & 15)) - 1);
    for (int64_t b = 0; b < blocks; ++b) {
        int64_t r0 = (back ? blocks - 1 - b : b) * 16, nr = rows - r0 < 16 ? rows - r0 : 16;
        const float *a[16];
        __m512 acc[16];
        for (int r = 0; r < 16; ++r) a[r] = A + (r0 + (r < nr ? r : nr - 1)) * K, acc[r] = _mm512_setzero_ps();
        for (int64_t k = 0; k < k_end; k += 16) {
            __m512 v = _mm512_loadu_ps(x + k);
            for (int r = 0; r < 16; ++r) acc[r] = _mm512_fmadd_ps(_mm512_loadu_ps(a[r] + k), v, acc[r]);
        }
        if (tail) {
            __m512 v = _mm512_maskz_loadu_ps(tail, x + k_end);
            for (int r = 0; r < 16; ++r) acc[r] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, a[r] + k_end), v, acc[r]);
        }
        _mm512_mask_storeu_ps(y + r0, (__mmask16)((1u << nr) - 1), rnn_hsum16(acc));
    }
}

/* 16 lanes of rnn_exp_neg, rnn_sigmoidf and rnn_tanhf (with fused multiply-adds) */
__attribute__((target("avx512f"))) static inline __m512 rnn_exp_neg16(__m512 x) {
    static const float c[8] = {1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f};
    __m512 lo = _mm512_set1_ps(-87.0f), xc = _mm512_max_ps(lo, x); /* NaN stays NaN */
    __m512 t = _mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504f), _mm512_set1_ps(12582912.0f));
    __m512 k = _mm512_sub_ps(t, _mm512_set1_ps(12582912.0f));
    __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), xc);
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.428606765330187e-06f), r);
    __m512 p = _mm512_set1_ps(c[0]);
    for (int i = 1; i < 8; ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c[i]));
    __m512i bits = _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(0x4B400000 - 127));
    __m512 scale = _mm512_castsi512_ps(_mm512_slli_epi32(bits, 23));
    return _mm512_maskz_mul_ps(_mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ), p, scale);
}

/* 1 / d for d in [1, 2]: the 14-bit estimate and one Newton step (within 1 ulp; a division
 * takes several times as long, and the gates hold five per unit) */
__attribute__((target("avx512f"))) static inline __m512 rnn_recip16(__m512 d) {
    __m512 r = _mm512_rcp14_ps(d);
    return _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));
}

__attribute__((target("avx512f"))) static inline __m512 rnn_sigmoid16(__m512 x) {
    __m512i minus = _mm512_or_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)); /* -|x| */
    __m512 e = rnn_exp_neg16(_mm512_castsi512_ps(minus));
    __m512 s = rnn_recip16(_mm512_add_ps(_mm512_set1_ps(1.0f), e));
    return _mm512_mask_mul_ps(s, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NGE_UQ), e, s);
}

__attribute__((target("avx512f"))) static inline __m512 rnn_tanh16(__m512 x) {
    static const float c[5] = {-1382.0f / 155925, 62.0f / 2835, -17.0f / 315, 2.0f / 15, -1.0f / 3};
    __m512i sign = _mm512_set1_epi32(INT32_MIN);
    __m512 one = _mm512_set1_ps(1.0f), a = _mm512_castsi512_ps(_mm512_andnot_si512(sign, _mm512_castps_si512(x)));
    __m512 a2 = _mm512_mul_ps(a, a), e = rnn_exp_neg16(_mm512_mul_ps(_mm512_set1_ps(-2.0f), a));
    __m512 q = _mm512_set1_ps(c[0]);
    for (int i = 1; i < 5; ++i) q = _mm512_fmadd_ps(q, a2, _mm512_set1_ps(c[i]));
    __m512 r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(0.25f), _CMP_LT_OQ),
                                    _mm512_mul_ps(_mm512_sub_ps(one, e), rnn_recip16(_mm512_add_ps(one, e))),
                                    _mm512_fmadd_ps(_mm512_mul_ps(a, a2), q, a));
    __m512i ri = _mm512_castps_si512(r);
    __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    return _mm512_castsi512_ps(_mm512_mask_xor_epi32(ri, neg, ri, sign));
}

/* p[o] + q[o] of 16 units (m: those before the end) */
__attribute__((target("avx512f"))) static inline __m512 rnn_add16(const float *p, const float *q, int64_t o,
                                                                   __mmask16 m) {
    return _mm512_add_ps(_mm512_maskz_loadu_ps(m, p + o), _mm512_maskz_loadu_ps(m, q + o));
}

/* cell_f32 for the default activations without clip, peepholes or coupled gates: all
 * the gates of 16 units at a time, in registers */
__attribute__((target("avx512f"))) static void rnn_cell_avx512(const rnn_job *j, const rnn_row *row, int64_t u0,
                                                                int64_t u1) {
    int64_t H = j->H;
    const float *b = j->bias, *xw = row->xw, *h = row->h, *hrh = row->hrh;
    const float *rb = j->B ? (const float *)j->B + j->d * 6 * H + 5 * H : NULL;
    float *g = row->g, *hn = row->hn, *c = row->c, *rh = row->rh, *y = row->y;
    __m512 one = _mm512_set1_ps(1.0f);
    for (int64_t i = u0; i < u1; i += 16) {
        __mmask16 m = u1 - i >= 16 ? 0xFFFF : (__mmask16)((1u << (u1 - i)) - 1);
        __m512 out;
#define RNN_GATE(k) _mm512_add_ps(_mm512_maskz_loadu_ps(m, g + (k) * H + i), rnn_add16(xw, b, (k) * H + i, m))
        if (hrh) { /* GRU's h-gate; the first phase left z in g */
            __m512 z = _mm512_maskz_loadu_ps(m, g + i);
            __m512 gh = rnn_tanh16(_mm512_add_ps(rnn_add16(xw, b, 2 * H + i, m), _mm512_maskz_loadu_ps(m, hrh + i)));
            out = _mm512_fmadd_ps(_mm512_sub_ps(one, z), gh, _mm512_mul_ps(z, _mm512_maskz_loadu_ps(m, h + i)));
        } else if (j->kind == KIND_RNN) {
            out = rnn_tanh16(RNN_GATE(0));
        } else if (j->kind == KIND_LSTM) {
            __m512 gi = rnn_sigmoid16(RNN_GATE(0)), go = rnn_sigmoid16(RNN_GATE(1));
            __m512 gf = rnn_sigmoid16(RNN_GATE(2)), gc = rnn_tanh16(RNN_GATE(3));
            __m512 cn = _mm512_fmadd_ps(gf, _mm512_maskz_loadu_ps(m, c + i), _mm512_mul_ps(gi, gc));
            _mm512_mask_storeu_ps(c + i, m, cn);
            out = _mm512_mul_ps(go, rnn_tanh16(cn));
        } else { /* GRU: z and r, then r * h for the second phase, or the h-gate (linear_before_reset) */
            __m512 z = rnn_sigmoid16(RNN_GATE(0)), r = rnn_sigmoid16(RNN_GATE(1)), hv = _mm512_maskz_loadu_ps(m, h + i);
            if (rh) {
                _mm512_mask_storeu_ps(g + i, m, z);
                _mm512_mask_storeu_ps(rh + i, m, _mm512_mul_ps(r, hv));
                continue;
            }
            __m512 gh = _mm512_maskz_loadu_ps(m, g + 2 * H + i);
            if (rb) gh = _mm512_add_ps(gh, _mm512_maskz_loadu_ps(m, rb + i));
            gh = rnn_tanh16(_mm512_fmadd_ps(r, gh, rnn_add16(xw, b, 2 * H + i, m)));
            out = _mm512_fmadd_ps(_mm512_sub_ps(one, z), gh, _mm512_mul_ps(z, hv));
        }
#undef RNN_GATE
        _mm512_mask_storeu_ps(hn + i, m, out);
        if (y) _mm512_mask_storeu_ps(y + i, m, out);
    }
}
#define rnn_cell_fused rnn_cell_avx512

/* The batched steps' products on R^T in strips of RNN_STRIP columns (rnn.h: r_packed):
 * Y[b * ldy + c] = sum_k X[b * K + k] * P[s][k][c - 32 s] for the columns c of strips
 * [s0, s1) (< cols) and MR batch rows of X at a time: each row's 32 sums in two vectors,
 * a broadcast of X's element times each k's two loads of the strip -- no horizontal sums,
 * every element of Y the same fused multiply-adds in k's order whatever MR is. */
#define RNN_STRIPS_AVX512(MR)                                                                             \
    __attribute__((target("avx512f"))) static void rnn_strips_avx512_##MR(                               \
        const float *P, int64_t K, int64_t cols, const float *X, int64_t s0, int64_t s1, float *Y,         \
        int64_t ldy) {                                                                                     \
        for (int64_t s = s0; s < s1; ++s) {                                                                \
            const float *p = P + s * K * 32;                                                               \
            int64_t c0 = s * 32, nc = cols - c0 < 32 ? cols - c0 : 32;                                     \
            __mmask16 m0 = nc >= 16 ? 0xFFFF : (__mmask16)((1u << nc) - 1);                                \
            __mmask16 m1 = nc >= 32 ? 0xFFFF : nc > 16 ? (__mmask16)((1u << (nc - 16)) - 1) : 0;           \
            __m512 acc[MR][2];                                                                             \
            for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();                      \
            for (int64_t k = 0; k < K; ++k) {                                                              \
                __m512 b0 = _mm512_loadu_ps(p + k * 32), b1 = _mm512_loadu_ps(p + k * 32 + 16);            \
                for (int r = 0; r < MR; ++r) {                                                             \
                    __m512 x = _mm512_set1_ps(X[r * K + k]);                                               \
                    acc[r][0] = _mm512_fmadd_ps(x, b0, acc[r][0]);                                         \
                    acc[r][1] = _mm512_fmadd_ps(x, b1, acc[r][1]);                                         \
                }                                                                                          \
            }                                                                                              \
            for (int r = 0; r < MR; ++r) {                                                                 \
                _mm512_mask_storeu_ps(Y + r * ldy + c0, m0, acc[r][0]);                                    \
                if (m1) _mm512_mask_storeu_ps(Y + r * ldy + c0 + 16, m1, acc[r][1]);                        \
            }                                                                                              \
        }                                                                                                  \
    }
RNN_STRIPS_AVX512(1)
RNN_STRIPS_AVX512(2)
RNN_STRIPS_AVX512(3)
RNN_STRIPS_AVX512(4)
RNN_STRIPS_AVX512(5)
RNN_STRIPS_AVX512(6)
RNN_STRIPS_AVX512(7)
RNN_STRIPS_AVX512(8)
#undef RNN_STRIPS_AVX512

typedef void (*rnn_strips_fn)(const float *, int64_t, int64_t, const float *, int64_t, int64_t, float *, int64_t);
static const rnn_strips_fn rnn_strips_avx512[8] = {rnn_strips_avx512_1, rnn_strips_avx512_2, rnn_strips_avx512_3,
                                                   rnn_strips_avx512_4, rnn_strips_avx512_5, rnn_strips_avx512_6,
                                                   rnn_strips_avx512_7, rnn_strips_avx512_8};
#else
#define rnn_cell_fused rnn_cell_none
#endif

static inline void rnn_cell_none(const rnn_job *j, const rnn_row *row, int64_t u0, int64_t u1) {}

/* Per element type: activations and the gate arithmetic of one batch row (FUSED: the
 * job's `fused` version). */
#define DEFINE_RNN_TYPE(T, SUF, F, SIGMOID, TANH, FUSED)                                                   \
    MLRT_ISA_FN(, void, act_##SUF, (T *v, int64_t n, int32_t code, T a, T b, const rnn_job *j, bool clip),   \
                (v, n, code, a, b, j, clip)) {                                                             \
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
    /* gate arithmetic of units [u0, u1) of one batch row (see rnn_row) */                                \
    static void cell_##SUF(const rnn_job *j, const rnn_row *row, int64_t u0, int64_t u1) {                 \
        if (j->fused) {                                                                                    \
            FUSED(j, row, u0, u1);                                                                         \
            return;                                                                                        \
        }                                                                                                  \
        int64_t H = j->H, n = u1 - u0;                                                                     \
        T *g = (T *)row->g + u0, *hn = (T *)row->hn + u0;                                                  \
        const T *xw = (const T *)row->xw + u0, *bias = (const T *)j->bias + u0, *h = (const T *)row->h + u0; \
        if (row->hrh) { /* GRU's h-gate from hrh = (r * h) @ Rh^T */                                      \
            T *z = g, *gh = g + 2 * H;                                                                     \
            const T *hrh = (const T *)row->hrh + u0;                                                       \
            for (int64_t i = 0; i < n; ++i) gh[i] = xw[2 * H + i] + bias[2 * H + i] + hrh[i];             \
            fn_##SUF(j, 1, gh, n, true);                                                                   \
            for (int64_t i = 0; i < n; ++i) hn[i] = (1 - z[i]) * gh[i] + z[i] * h[i];                      \
        } else if (j->kind == KIND_RNN) {                                                                  \
            for (int64_t i = 0; i < n; ++i) g[i] += xw[i] + bias[i];                                       \
            fn_##SUF(j, 0, g, n, true);                                                                    \
            memcpy(hn, g, (size_t)n * sizeof(T));                                                          \
        } else if (j->kind == KIND_LSTM) {                                                                 \
            T *c = (T *)row->c + u0, *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;               \
            const T *P = j->P ? (const T *)j->P + j->d * 3 * H + u0 : NULL;                                \
            for (int64_t k = 0; k < 4 * H; k += H)                                                         \
                for (int64_t i = 0; i < n; ++i) g[k + i] += xw[k + i] + bias[k + i];                       \
            if (P)                                                                                         \
                for (int64_t i = 0; i < n; ++i) gi[i] += P[i] * c[i];                                      \
            fn_##SUF(j, 0, gi, n, true);                                                                   \
            if (j->p->input_forget) {                                                                      \
                for (int64_t i = 0; i < n; ++i) gf[i] = 1 - gi[i];                                         \
            } else {                                                                                       \
                if (P)                                                                                     \
                    for (int64_t i = 0; i < n; ++i) gf[i] += P[2 * H + i] * c[i];                          \
                fn_##SUF(j, 0, gf, n, true);                                                               \
            }                                                                                              \
            fn_##SUF(j, 1, gc, n, true);                                                                   \
            for (int64_t i = 0; i < n; ++i) c[i] = gf[i] * c[i] + gi[i] * gc[i];                           \
            if (P)                                                                                         \
                for (int64_t i = 0; i < n; ++i) go[i] += P[H + i] * c[i];                                  \
            fn_##SUF(j, 0, go, n, true);                                                                   \
            memcpy(gc, c, (size_t)n * sizeof(T));                                                          \
            fn_##SUF(j, 2, gc, n, false);                                                                  \
            for (int64_t i = 0; i < n; ++i) hn[i] = go[i] * gc[i];                                         \
        } else { /* GRU: z and r, then the h-gate here (linear_before_reset) or from hrh */              \
            T *z = g, *r = g + H, *gh = g + 2 * H;                                                         \
            for (int64_t k = 0; k < 2 * H; k += H)                                                         \
                for (int64_t i = 0; i < n; ++i) g[k + i] += xw[k + i] + bias[k + i];                       \
            fn_##SUF(j, 0, z, n, true);                                                                    \
            fn_##SUF(j, 0, r, n, true);                                                                    \
            if (row->rh) {                                                                                 \
                T *rh = (T *)row->rh + u0;                                                                 \
                for (int64_t i = 0; i < n; ++i) rh[i] = r[i] * h[i];                                       \
                return;                                                                                    \
            }                                                                                              \
            const T *rb = j->B ? (const T *)j->B + j->d * 6 * H + 5 * H + u0 : NULL;                       \
            for (int64_t i = 0; i < n; ++i)                                                                \
                gh[i] = xw[2 * H + i] + bias[2 * H + i] + r[i] * (gh[i] + (rb ? rb[i] : 0));               \
            fn_##SUF(j, 1, gh, n, true);                                                                   \
            for (int64_t i = 0; i < n; ++i) hn[i] = (1 - z[i]) * gh[i] + z[i] * h[i];                      \
        }                                                                                                  \
        if (row->y) memcpy((T *)row->y + u0, hn, (size_t)n * sizeof(T));                                   \
    }                                                                                                      \
                                                                                                           \
    /* one step (one phase of it) for the job's batch rows [begin, end): hr holds h @ R^T */              \
    static void cells_##SUF(void *arg, int64_t begin, int64_t end) {                                       \
        const rnn_job *j = arg;                                                                            \
        int64_t H = j->H, GH = j->G * H;                                                                   \
        for (int64_t b = begin; b < end; ++b) {                                                            \
            int64_t t = time_of(j, j->step, b);                                                            \
            T *h = (T *)j->h + b * H;                                                                      \
            if (t < 0) {                                                                                   \
                if (j->rh && !j->phase) memset((T *)j->rh + b * H, 0, (size_t)H * sizeof(T));              \
                continue;                                                                                  \
            }                                                                                              \
            rnn_row row = {.g = (T *)j->hr + b * GH, .xw = (const T *)j->xw + ((j->step - j->s0) * j->Bt + b) * GH, \
                           .h = h, .hn = h, .c = j->c ? (T *)j->c + b * H : NULL,                          \
                           .rh = j->rh ? (T *)j->rh + b * H : NULL,                                        \
                           .hrh = j->phase ? (const T *)j->hrh + b * H : NULL,                             \
                           .y = j->Y ? (T *)j->Y + y_off(j, t, b) : NULL};                                 \
            cell_##SUF(j, &row, 0, H);                                                                     \
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
    /* x rows (steps [s0, s0 + n), the job's batch rows) gathered */                                       \
    static void gather_##SUF(const rnn_job *j, int64_t n) {                                                \
        for (int64_t s = 0; s < n; ++s)                                                                    \
            for (int64_t b = 0; b < j->Bt; ++b) {                                                          \
                int64_t t = time_of(j, j->s0 + s, b), row = s * j->Bt + b;                                 \
                T *dst = (T *)j->xg + row * j->I;                                                          \
                if (t < 0) memset(dst, 0, (size_t)j->I * sizeof(T));                                       \
                else memcpy(dst, (const T *)j->X + x_off(j, t, b), (size_t)j->I * sizeof(T));              \
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

DEFINE_RNN_TYPE(float, f32, f, rnn_sigmoidf, rnn_tanhf, rnn_cell_fused)
DEFINE_RNN_TYPE(double, f64, , rnn_sigmoid, tanh, rnn_cell_none)

/* C = A @ op(B), row-major, in the job's type */
static int rnn_gemm(const mlrt_context *ctx, const rnn_job *j, bool trans_b, int64_t M, int64_t N, int64_t K,
                    const void *A, int64_t lda, const void *B, int64_t ldb, void *C, int64_t ldc) {
    if (j->dtype == MLRT_FLOAT)
        return mlrt_sgemm(ctx, false, trans_b, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
    return mlrt_dgemm(ctx, false, trans_b, M, N, K, 1.0, A, lda, B, ldb, 0.0, C, ldc);
}

/* C[M, N] = M rows of x (I each) @ the input weights of gate columns [c0, c0 + N) of
 * all directions (nd * G * H), read from W^T in place where the plan made one */
static int rnn_project(const mlrt_context *ctx, const rnn_job *j, int64_t M, const void *x, int64_t c0, int64_t N,
                       void *C, int64_t ldc) {
    int64_t I = j->I, GH = j->G * j->H;
    if (j->WP) { /* per direction (c0 and N are whole directions) */
        int64_t size = mlrt_gemm_packed_b_size(I, GH);
        for (int64_t d = c0 / GH; d < (c0 + N) / GH; ++d) {
            int status = mlrt_sgemm_strips_b(ctx, false, M, GH, I, 1.0f, x, I, j->WP + d * size, 0.0f,
                                             (float *)C + (d * GH - c0), ldc);
            if (status) return status;
        }
        return MLRT_OK;
    }
    if (j->WT)
        return rnn_gemm(ctx, j, false, M, N, I, x, I, (const char *)j->WT + c0 * j->esz, j->nd * j->G * j->H, C, ldc);
    return rnn_gemm(ctx, j, true, M, N, I, x, I, (const char *)j->W + (size_t)(c0 * I) * j->esz, I, C, ldc);
}

/* the job's direction d: its time order and activation functions */
static void rnn_set_direction(rnn_job *j, int64_t d) {
    static const int32_t plain[3] = {MLRT_RNN_SIGMOID, MLRT_RNN_TANH, MLRT_RNN_TANH}; /* RNN: {TANH} */
    int n_act = j->kind == KIND_LSTM ? 3 : j->kind == KIND_GRU ? 2 : 1;
    j->d = d;
    j->reverse = j->p->direction == MLRT_RNN_REVERSE || d == 1;
    j->fused = j->avx512 && !j->p->has_clip && !j->P && !j->p->input_forget;
    for (int k = 0; k < 3; ++k) {
        j->act[k] = (int32_t)j->p->activations[3 * d + k];
        j->alpha[k] = j->p->alpha[3 * d + k];
        j->beta[k] = j->p->beta[3 * d + k];
        if (k < n_act) j->fused = j->fused && j->act[k] == (n_act == 1 ? MLRT_RNN_TANH : plain[k]);
    }
}

/* ---- any batch: the step's product is one product over the batch rows -------------------- */

/* One direction's R^T in strips (rnn.h: r_packed): per gate, its H columns in strips of
 * RNN_STRIP, H rows (k) a strip, zeros past H -- so a range of a gate's units is a range
 * of its strips. */
#define RNN_STRIP 32
static int64_t rnn_gate_floats(int64_t H) { return (H + RNN_STRIP - 1) / RNN_STRIP * RNN_STRIP * H; }

/* rows [0, n) of A (n x K) transposed into strips: to[s][k][c] = A[s * 32 + c][k], 0 past n */
static void rnn_strip_pack(const float *A, int64_t n, int64_t K, float *to) {
    for (int64_t s = 0; s * RNN_STRIP < n; ++s)
        for (int64_t k = 0; k < K; ++k)
            for (int64_t c = 0; c < RNN_STRIP; ++c) {
                int64_t row = s * RNN_STRIP + c;
                to[(s * K + k) * RNN_STRIP + c] = row < n ? A[row * K + k] : 0.0f;
            }
}

/* R^T of direction d packed into `to` (G * rnn_gate_floats(H) floats) */
static void rnn_pack_r(const rnn_job *j, int64_t d, float *to) {
    int64_t H = j->H;
    for (int64_t g = 0; g < j->G; ++g)
        rnn_strip_pack((const float *)j->R + (d * j->G + g) * H * H, H, H, to + g * rnn_gate_floats(H));
}

/* The strips' products in portable C (the compiler vectorizes the 32 columns) */
MLRT_ISA_FN(, void, rnn_strips_portable, (const float *P, int64_t K, int64_t cols, const float *X, int64_t nb,
                                          int64_t s0, int64_t s1, float *Y, int64_t ldy),
            (P, K, cols, X, nb, s0, s1, Y, ldy)) {
    for (int64_t s = s0; s < s1; ++s) {
        const float *p = P + s * K * RNN_STRIP;
        int64_t c0 = s * RNN_STRIP, nc = cols - c0 < RNN_STRIP ? cols - c0 : RNN_STRIP;
        for (int64_t r = 0; r < nb; ++r) {
            float acc[RNN_STRIP] = {0};
            for (int64_t k = 0; k < K; ++k) {
                float x = X[r * K + k];
                for (int c = 0; c < RNN_STRIP; ++c) acc[c] += x * p[k * RNN_STRIP + c];
            }
            memcpy(Y + r * ldy + c0, acc, (size_t)nc * sizeof(float));
        }
    }
}

/* units [u0, u1) of gates [g0, g1) for the job's batch rows: y[b * ldy + (g - g0) * H + u]
 * = (row b of x) . R[g * H + u] (P: the direction's strips; u0 a multiple of RNN_STRIP) */
static void rnn_gate_strips(const rnn_job *j, const float *P, int64_t g0, int64_t g1, int64_t u0, int64_t u1,
                            const float *x, float *y, int64_t ldy) {
    int64_t H = j->H, s0 = u0 / RNN_STRIP, s1 = (u1 + RNN_STRIP - 1) / RNN_STRIP;
    for (int64_t g = g0; g < g1; ++g) {
        const float *pg = P + g * rnn_gate_floats(H);
        float *yg = y + (g - g0) * H;
#ifdef RNN_X86
        if (j->avx512) {
            for (int64_t b = 0; b < j->Bt; b += 8) {
                int64_t mr = j->Bt - b < 8 ? j->Bt - b : 8;
                rnn_strips_avx512[mr - 1](pg, H, H, x + b * H, s0, s1, yg + b * ldy, ldy);
            }
            continue;
        }
#endif
        rnn_strips_portable(pg, H, H, x, j->Bt, s0, s1, yg, ldy);
    }
}

/* all units of gates [g0, g1), blocks of units on the pool */
typedef struct rnn_strips_job {
    const rnn_job *j;
    const float *P, *x;
    float *y;
    int64_t g0, g1, ldy;
} rnn_strips_job;

#define RNN_UNITS_PER_TASK 128

static void rnn_strips_tasks(void *arg, int64_t begin, int64_t end) {
    const rnn_strips_job *r = arg;
    int64_t H = r->j->H, u1 = end * RNN_UNITS_PER_TASK < H ? end * RNN_UNITS_PER_TASK : H;
    rnn_gate_strips(r->j, r->P, r->g0, r->g1, begin * RNN_UNITS_PER_TASK, u1, r->x, r->y, r->ldy);
}

static void rnn_strips(const mlrt_context *ctx, const rnn_job *j, const float *P, int64_t g0, int64_t g1,
                       const float *x, float *y, int64_t ldy) {
    rnn_strips_job r = {j, P, x, y, g0, g1, ldy};
    int64_t tasks = (j->H + RNN_UNITS_PER_TASK - 1) / RNN_UNITS_PER_TASK;
    int64_t work = RNN_UNITS_PER_TASK * (g1 - g0) * j->H * j->Bt;
    mlrt_parallel_for(ctx, tasks, (INT64_C(1) << 16) / (work + 1) + 1, rnn_strips_tasks, &r);
}

static int rnn_direction(const mlrt_context *ctx, rnn_job *j, int64_t chunk) {
    bool f32 = j->dtype == MLRT_FLOAT;
    int64_t H = j->H, GH = j->G * H, Bt = j->Bt;
    const char *R = (const char *)j->R + (size_t)(j->d * GH * H) * j->esz;
    bool gru_split = j->kind == KIND_GRU && !j->p->linear_before_reset;
    /* float32: the step's products on R^T in strips (rnn.h: r_packed) */
    const float *rp = f32 ? j->RP + j->d * j->G * rnn_gate_floats(H) : NULL;
    int64_t grain = GH >= 4096 ? 1 : 4096 / (GH + 1) + 1;
    mlrt_range_fn cells = f32 ? cells_f32 : cells_f64;
    if (f32) bias_f32(j), init_state_f32(j);
    else bias_f64(j), init_state_f64(j);
    int status = MLRT_OK;
    for (j->s0 = 0; j->s0 < j->S && status == MLRT_OK; j->s0 += chunk) {
        int64_t n = j->S - j->s0 < chunk ? j->S - j->s0 : chunk;
        if (f32) gather_f32(j, n);
        else gather_f64(j, n);
        status = rnn_project(ctx, j, n * Bt, j->xg, j->d * GH, GH, j->xw, GH);
        for (int64_t s = 0; s < n && status == MLRT_OK; ++s) {
            j->step = j->s0 + s;
            /* h @ R^T: every gate, or z and r only (GRU's h-gate needs r first) */
            if (rp)
                rnn_strips(ctx, j, rp, 0, gru_split ? 2 : j->G, j->h, j->hr, GH);
            else
                status = rnn_gemm(ctx, j, true, Bt, gru_split ? 2 * H : GH, H, j->h, H, R, H, j->hr, GH);
            if (status) break;
            j->phase = 0;
            mlrt_parallel_for(ctx, Bt, grain, cells, j);
            if (gru_split) {
                if (rp)
                    rnn_strips(ctx, j, rp, 2, 3, j->rh, j->hrh, H);
                else
                    status = rnn_gemm(ctx, j, true, Bt, H, H, j->rh, H, R + (size_t)(2 * H * H) * j->esz, H,
                                      j->hrh, H);
                if (status) break;
                j->phase = 1;
                mlrt_parallel_for(ctx, Bt, grain, cells, j);
            }
        }
    }
    if (status == MLRT_OK) {
        if (f32) save_state_f32(j);
        else save_state_f64(j);
    }
    return status;
}

/* ---- batch 1: the step's product is a matrix-vector product ------------------------------
 *
 * The rows of R are dotted with h in place (no packing), 16 rows at a time, every
 * other step backwards (the rows read last are still in L1).  The directions run side
 * by side, one thread each; a direction with more threads than that splits each
 * step's units into parts, one per thread (whose core keeps those rows of R cached),
 * and a part of a step (or of a phase: GRU without linear_before_reset has two, z and
 * r, then the h-gate) waits until every part of the one before is done.  A part whose
 * thread has not come, or has not begun it a while after it could (the thread lost its
 * core), is taken over by another: a thread that never shows up costs nothing, and one
 * thread alone runs them all.  A unit's result does not depend on who computes it.
 * h is double-buffered (step s reads hs[s & 1] and writes the other), so the parts of
 * a step never wait on each other. */

/* y = A x for `rows` rows of A (row length H): the AVX-512 kernel where the GEMM runs
 * AVX-512 too (so MLRT_SGEMM_KERNEL=avx2 tests this fallback), else the GEMM */
static void rnn_gemv(const rnn_job *j, const void *A, const void *x, int64_t rows, void *y, bool back) {
#ifdef RNN_X86
    if (j->avx512) {
        rnn_gemv_avx512(A, x, j->H, rows, y, back);
        return;
    }
#endif
    rnn_gemm(NULL, j, true, 1, rows, j->H, x, j->H, A, j->H, y, rows); /* sizes already checked: cannot fail */
}

/* Below this many multiply-adds a step is not split across threads (the parts of a
 * step would take less than their hand-over); at most this many parts. */
#define RNN_SPLIT_MIN (INT64_C(1) << 15)
#define RNN_MAX_PARTS 8
/* Waiting for the parts of the phase before: pauses (some 25 ns each) before one that
 * nobody has begun is taken over, and before each further wait yields the core. */
#define RNN_STEAL_SPINS 64
#define RNN_YIELD_SPINS 256

typedef struct rnn_part {
    _Alignas(64) atomic_int_fast64_t next; /* the first phase of the chunk not yet claimed */
    atomic_bool present;                   /* its own thread has come */
} rnn_part;

typedef struct rnn_seq {
    rnn_job j;       /* the direction, with its own states and work space */
    const char *R;   /* its R */
    void *hs[2];     /* h before and after a step (batched: j.Bt rows each) */
    const char *xw;  /* the chunk's projections: time t at row t - t_lo, nd * G * H per row (batched:
                        the direction's own, gathered: step s of batch row b at row (s - s0) * Bt + b) */
    const float *P;  /* batched: the direction's R^T in strips */
    int64_t len, t_lo, n, parts, part_units, phases;
    bool batched;    /* several batch rows: seq_part_rows */
    int64_t xw_ld;   /* batched, > 0: xw holds the whole sequence's projections by X's rows, xw_ld apart */
    _Alignas(64) atomic_int_fast64_t done; /* parts finished, over the chunk's phases */
    rnn_part part[RNN_MAX_PARTS];
} rnn_seq;

static void seq_part_rows(rnn_seq *q, int64_t s, int32_t phase, int64_t part);

static void seq_part(rnn_seq *q, int64_t s, int32_t phase, int64_t part) {
    if (q->batched) {
        seq_part_rows(q, s, phase, part);
        return;
    }
    rnn_job *j = &q->j;
    int64_t H = j->H, GH = j->G * H, u0 = part * q->part_units;
    int64_t u1 = u0 + q->part_units < H ? u0 + q->part_units : H, gates = q->phases == 2 ? 2 : j->G;
    size_t esz = j->esz;
    char *hr = j->hr;
    const void *h = q->hs[s & 1];
    bool back = s & 1; /* every other step backwards: the rows read last are still in L1 */
    if (phase == 1) {
        rnn_gemv(j, q->R + (size_t)(2 * H + u0) * H * esz, j->rh, u1 - u0, (char *)j->hrh + u0 * esz, back);
    } else if (u0 == 0 && u1 == H) {
        rnn_gemv(j, q->R, h, gates * H, hr, back);
    } else {
        for (int64_t i = 0; i < gates; ++i) {
            int64_t g = back ? gates - 1 - i : i;
            rnn_gemv(j, q->R + (size_t)(g * H + u0) * H * esz, h, u1 - u0, hr + (g * H + u0) * esz, back);
        }
    }
    int64_t t = j->reverse ? q->len - 1 - s : s;
    rnn_row row = {.g = hr, .xw = q->xw + (size_t)((t - q->t_lo) * j->nd * GH + j->d * GH) * esz, .h = h,
                   .hn = q->hs[(s + 1) & 1], .c = j->c, .rh = q->phases == 2 && phase == 0 ? j->rh : NULL,
                   .hrh = phase == 1 ? j->hrh : NULL, .y = j->Y ? (char *)j->Y + y_off(j, t, 0) * esz : NULL};
    if (j->dtype == MLRT_FLOAT) cell_f32(j, &row, u0, u1);
    else cell_f64(j, &row, u0, u1);
}

static inline void rnn_relax(int64_t spins) {
    if (spins < RNN_YIELD_SPINS) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else {
        sched_yield(); /* the thread it waits for lost its core */
    }
}

/* part k of phase `sub` of the chunk, unless someone has claimed it */
static void seq_claim(rnn_seq *q, int64_t sub, int64_t k) {
    int64_t want = sub;
    if (atomic_load_explicit(&q->part[k].next, memory_order_relaxed) != sub ||
        !atomic_compare_exchange_strong(&q->part[k].next, &want, sub + 1))
        return;
    seq_part(q, q->j.s0 + sub / q->phases, (int32_t)(sub % q->phases), k);
    atomic_fetch_add_explicit(&q->done, 1, memory_order_release);
}

/* until every part of the phases before `sub` is done; a part of sub - 1 that its
 * thread has not begun after a while is taken over (the thread lost its core) */
static void seq_wait(rnn_seq *q, int64_t sub) {
    for (int64_t spins = 0; atomic_load_explicit(&q->done, memory_order_acquire) < sub * q->parts; ++spins) {
        if (spins >= RNN_STEAL_SPINS && sub > 0)
            for (int64_t k = 0; k < q->parts; ++k) seq_claim(q, sub - 1, k);
        rnn_relax(spins);
    }
}

/* Thread p of a direction (-1: a helper): phase after phase, its own part first, then
 * any part whose own thread has not come (so a part stays on one core, with its rows
 * of R in that core's caches). */
static void seq_run(rnn_seq *q, int64_t p) {
    int64_t parts = q->parts, total = q->n * q->phases;
    if (p >= 0) atomic_store(&q->part[p].present, true);
    for (int64_t sub = atomic_load(&q->done) / parts; sub < total; ++sub) {
        seq_wait(q, sub);
        for (int64_t i = 0; i < parts; ++i) {
            int64_t k = (p + parts + i) % parts;
            if (k == p || !atomic_load(&q->part[k].present)) seq_claim(q, sub, k);
        }
    }
    seq_wait(q, total);
}

/* task i: thread i / nd of direction i % nd; then a helper of every direction, which
 * takes over where a thread lost its core */
static void seq_tasks(void *arg, int64_t begin, int64_t end) {
    rnn_seq *seq = arg;
    int64_t nd = seq->j.nd;
    for (int64_t i = begin; i < end; ++i) seq_run(&seq[i % nd], i / nd);
    for (int64_t d = 0; d < nd; ++d) seq_run(&seq[d], -1);
}

/* all directions of a one-row batch; j: the job with its work space unset */
static int rnn_batch1(const mlrt_context *ctx, const rnn_job *j, const char *op) {
    int64_t nd = j->nd, H = j->H, GH = j->G * H, I = j->I, len = j->lens ? j->lens[0] : j->S;
    size_t esz = j->esz;
    bool f32 = j->dtype == MLRT_FLOAT, gru_split = j->kind == KIND_GRU && !j->p->linear_before_reset;
    int64_t chunk = RNN_CHUNK_BYTES / (nd * GH * (int64_t)esz);
    chunk = chunk < 1 ? 1 : chunk > len ? len : chunk;
    /* per direction: hs[0], hs[1], c, rh, hrh (H each), hr, bias (G * H each), each 64-byte aligned */
    size_t vec = ((size_t)H * esz + 63) / 64 * 64, gvec = ((size_t)GH * esz + 63) / 64 * 64;
    size_t per_dir = 5 * vec + 2 * gvec, n_xw = (size_t)(chunk * nd * GH) * esz;
    char *work = mlrt_aligned_alloc(64, (n_xw + 63) / 64 * 64 + (size_t)nd * per_dir);
    if (!work) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate work space", op);
    /* threads per direction: parts of a step's units, 16 at least each */
    int64_t per = mlrt_ctx_threads(ctx) / nd;
    per = per < 1 || j->G * H * H < RNN_SPLIT_MIN ? 1 : per < RNN_MAX_PARTS ? per : RNN_MAX_PARTS;
    int64_t part_units = ((H + per - 1) / per + 15) / 16 * 16, parts = (H + part_units - 1) / part_units;
    rnn_seq seq[2];
    for (int64_t d = 0; d < nd; ++d) {
        rnn_seq *q = &seq[d];
        rnn_job *k = &q->j;
        *k = *j;
        rnn_set_direction(k, d);
        char *at = work + (n_xw + 63) / 64 * 64 + (size_t)d * per_dir;
        q->hs[0] = at, q->hs[1] = at + vec, k->c = j->kind == KIND_LSTM ? at + 2 * vec : NULL;
        k->rh = at + 3 * vec, k->hrh = at + 4 * vec;
        k->hr = at + 5 * vec, k->bias = at + 5 * vec + gvec;
        k->h = q->hs[0];
        if (f32) bias_f32(k), init_state_f32(k);
        else bias_f64(k), init_state_f64(k);
        q->R = (const char *)j->R + (size_t)(d * GH * H) * esz;
        q->xw = work;
        q->len = len, q->parts = parts, q->part_units = part_units, q->phases = gru_split ? 2 : 1;
        q->batched = false;
    }
    int status = MLRT_OK;
    for (int64_t s0 = 0; s0 < len && status == MLRT_OK; s0 += chunk) {
        int64_t n = len - s0 < chunk ? len - s0 : chunk;
        for (int64_t d = 0; d < nd; ++d) {
            seq[d].j.s0 = s0, seq[d].n = n;
            seq[d].t_lo = seq[d].j.reverse ? len - s0 - n : s0;
            atomic_store(&seq[d].done, 0);
            for (int64_t k = 0; k < parts; ++k) {
                atomic_store(&seq[d].part[k].next, 0);
                atomic_store(&seq[d].part[k].present, false);
            }
        }
        /* X W^T for the chunk's time rows: one product when the directions share them */
        const char *X = j->X;
        if (nd == 1 || seq[0].t_lo == seq[1].t_lo)
            status = rnn_project(ctx, j, n, X + (size_t)(seq[0].t_lo * I) * esz, 0, nd * GH, work, nd * GH);
        else
            for (int64_t d = 0; d < nd && status == MLRT_OK; ++d)
                status = rnn_project(ctx, j, n, X + (size_t)(seq[d].t_lo * I) * esz, d * GH, GH,
                                     work + (size_t)(d * GH) * esz, nd * GH);
        if (status == MLRT_OK) mlrt_parallel_for(ctx, nd * parts, 1, seq_tasks, seq);
    }
    for (int64_t d = 0; d < nd && status == MLRT_OK; ++d) {
        seq[d].j.h = seq[d].hs[len & 1];
        if (f32) save_state_f32(&seq[d].j);
        else save_state_f64(&seq[d].j);
    }
    mlrt_aligned_free(work);
    return status;
}

/* ---- several batch rows on several threads ------------------------------------------------
 *
 * As for one row, on the same machinery: each step's units in parts, a part's rows of R^T
 * (its strips) meeting every batch row at once; the input projections gathered per chunk
 * as on the pooled path; a batch row whose sequence has ended carries its h over to the
 * other buffer.  A thread that comes late, or loses its core, has its parts taken over
 * step by step, as there. */

/* Below this many multiply-adds a batched step is one part (a part would take less than
 * the hand-over between threads). */
#define RNN_ROWS_SPLIT_MIN (INT64_C(1) << 17)

/* part `part` of step s (phase `phase`) for every batch row */
static void seq_part_rows(rnn_seq *q, int64_t s, int32_t phase, int64_t part) {
    rnn_job *j = &q->j;
    int64_t H = j->H, GH = j->G * H, nb = j->Bt, u0 = part * q->part_units;
    int64_t u1 = u0 + q->part_units < H ? u0 + q->part_units : H, n = u1 - u0;
    float *hr = j->hr, *hn = q->hs[(s + 1) & 1], *c = j->c, *rh = j->rh, *hrh = j->hrh;
    const float *h = q->hs[s & 1];
    if (phase == 1) rnn_gate_strips(j, q->P, 2, 3, u0, u1, rh, hrh, H);
    else rnn_gate_strips(j, q->P, 0, q->phases == 2 ? 2 : j->G, u0, u1, h, hr, GH);
    bool writes_h = q->phases == 1 || phase == 1;
    for (int64_t b = 0; b < nb; ++b) {
        int64_t t = time_of(j, s, b);
        if (t < 0) { /* ended: h carried over (c stays); GRU's r * h zero, so hrh stays finite */
            if (writes_h) memcpy(hn + b * H + u0, h + b * H + u0, (size_t)n * sizeof(float));
            else memset(rh + b * H + u0, 0, (size_t)n * sizeof(float));
            continue;
        }
        const float *xw = q->xw_ld ? (const float *)q->xw + x_off(j, t, b) / j->I * q->xw_ld
                                   : (const float *)q->xw + ((s - j->s0) * nb + b) * GH;
        rnn_row row = {.g = hr + b * GH, .xw = xw, .h = h + b * H,
                       .hn = hn + b * H, .c = c ? c + b * H : NULL,
                       .rh = q->phases == 2 && phase == 0 ? rh + b * H : NULL,
                       .hrh = phase == 1 ? hrh + b * H : NULL,
                       .y = j->Y ? (float *)j->Y + y_off(j, t, b) : NULL};
        cell_f32(j, &row, u0, u1);
    }
}

/* The whole sequence's input projections of part p of direction d (task d + nd p, as
 * seq_tasks): the part's units of every gate, from W packed in strips whose columns the
 * parts' units start on (rnn_batch_parts), on the thread that will run the part's steps,
 * so that each core reads back the projections it wrote. */
typedef struct rnn_part_proj {
    const rnn_seq *seq;
    float *xw;
    int64_t nd, ld;
    atomic_int status;
} rnn_part_proj;

static void part_proj_tasks(void *arg, int64_t begin, int64_t end) {
    rnn_part_proj *pp = arg;
    for (int64_t i = begin; i < end; ++i) {
        const rnn_seq *q = &pp->seq[i % pp->nd];
        const rnn_job *j = &q->j;
        int64_t d = i % pp->nd, part = i / pp->nd, H = j->H, I = j->I, GH = j->G * H;
        int64_t u0 = part * q->part_units, n = u0 + q->part_units < H ? q->part_units : H - u0;
        const float *wp = j->WP + d * mlrt_gemm_packed_b_size(I, GH);
        for (int64_t g = 0; g < j->G; ++g) {
            int64_t c0 = g * H + u0; /* (a multiple of the strip width: its strip starts at wp + c0 * I) */
            int status = mlrt_sgemm_strips_b(NULL, false, j->S * j->Bt, n, I, 1.0f, j->X, I, wp + c0 * I, 0.0f,
                                             pp->xw + d * GH + c0, pp->ld);
            if (status) atomic_store(&pp->status, status);
        }
    }
}

/* float32, several batch rows, a pool of several threads: all directions side by side,
 * each step's units in parts; j: the job with its work space unset, j->RP set */
static int rnn_batch_parts(const mlrt_context *ctx, const rnn_job *j, const char *op) {
    int64_t nd = j->nd, H = j->H, GH = j->G * H, I = j->I, Bt = j->Bt, S = j->S;
    bool gru_split = j->kind == KIND_GRU && !j->p->linear_before_reset;
    int64_t steps = 0; /* the longest sequence: every row has ended after it */
    for (int64_t b = 0; b < Bt; ++b) steps = seq_len(j, b) > steps ? seq_len(j, b) : steps;
    /* the whole sequence's projections at once where they fit: every direction's in one
     * product on X's rows as they are, read by time (no gathering); else per chunk of steps,
     * gathered per direction */
    bool whole = S * Bt * nd * GH * (int64_t)sizeof(float) <= RNN_CHUNK_BYTES;
    int64_t chunk = whole ? S : RNN_CHUNK_BYTES / ((GH + I) * (int64_t)sizeof(float) * Bt);
    chunk = chunk < 1 ? 1 : chunk > S ? S : chunk;
    /* per direction: xg, xw (a chunk's), hr (G * H a row), hs[0], hs[1], c, rh, hrh (H a row), bias */
    size_t al = 16, n_state = (size_t)(Bt * H);
    size_t n_xg = whole ? 0 : (size_t)(chunk * Bt * I), n_xw = whole ? 0 : (size_t)(chunk * Bt * GH);
    size_t n_all = whole ? (size_t)(S * Bt * nd * GH) : 0;
#define RNN_ROUND(n) (((n) + al - 1) / al * al)
    size_t per_dir = RNN_ROUND(n_xg) + RNN_ROUND(n_xw) + RNN_ROUND((size_t)(Bt * GH)) + 5 * RNN_ROUND(n_state) +
                     RNN_ROUND((size_t)GH);
    float *work = mlrt_aligned_alloc(64, ((size_t)nd * per_dir + RNN_ROUND(n_all)) * sizeof(float));
    if (!work) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate work space", op);
    float *xw_all = work + (size_t)nd * per_dir;
    int64_t per = mlrt_ctx_threads(ctx) / nd;
    per = per < 1 || Bt * j->G * H * H < RNN_ROWS_SPLIT_MIN ? 1 : per < RNN_MAX_PARTS ? per : RNN_MAX_PARTS;
    int64_t part_units = ((H + per - 1) / per + RNN_STRIP - 1) / RNN_STRIP * RNN_STRIP;
    int64_t parts = (H + part_units - 1) / part_units;
    rnn_seq seq[2];
    for (int64_t d = 0; d < nd; ++d) {
        rnn_seq *q = &seq[d];
        rnn_job *k = &q->j;
        float *at = work + (size_t)d * per_dir;
        *k = *j;
        rnn_set_direction(k, d);
        k->xg = at, at += RNN_ROUND(n_xg);
        k->xw = at, at += RNN_ROUND(n_xw);
        k->hr = at, at += RNN_ROUND((size_t)(Bt * GH));
        q->hs[0] = at, at += RNN_ROUND(n_state);
        q->hs[1] = at, at += RNN_ROUND(n_state);
        k->c = j->kind == KIND_LSTM ? at : NULL, at += RNN_ROUND(n_state);
        k->rh = gru_split ? at : NULL, at += RNN_ROUND(n_state);
        k->hrh = gru_split ? at : NULL, at += RNN_ROUND(n_state);
        k->bias = at;
        k->h = q->hs[0];
        bias_f32(k), init_state_f32(k);
        q->R = (const char *)j->R + (size_t)(d * GH * H) * sizeof(float);
        q->P = j->RP + d * j->G * rnn_gate_floats(H);
        q->xw = whole ? xw_all + d * GH : k->xw, q->xw_ld = whole ? nd * GH : 0;
        q->len = steps, q->parts = parts, q->part_units = part_units, q->phases = gru_split ? 2 : 1;
        q->batched = true;
    }
#undef RNN_ROUND
    /* the projections by part where W's strips start on the parts' units (else all at once) */
    int64_t nr = mlrt_sgemm_strip_width();
    bool by_part = whole && j->WP && parts > 1 && nr > 0 && H % nr == 0 && part_units % nr == 0;
    int status = MLRT_OK;
    if (by_part) {
        rnn_part_proj pp = {.seq = seq, .xw = xw_all, .nd = nd, .ld = nd * GH};
        atomic_init(&pp.status, MLRT_OK);
        mlrt_parallel_for(ctx, nd * parts, 1, part_proj_tasks, &pp);
        status = atomic_load(&pp.status);
    } else if (whole) {
        status = rnn_project(ctx, j, S * Bt, j->X, 0, nd * GH, xw_all, nd * GH);
    }
    for (int64_t s0 = 0; s0 < steps && status == MLRT_OK; s0 += chunk) {
        int64_t n = steps - s0 < chunk ? steps - s0 : chunk;
        for (int64_t d = 0; d < nd && status == MLRT_OK; ++d) {
            rnn_seq *q = &seq[d];
            q->j.s0 = s0, q->n = n;
            atomic_store(&q->done, 0);
            for (int64_t k = 0; k < parts; ++k) {
                atomic_store(&q->part[k].next, 0);
                atomic_store(&q->part[k].present, false);
            }
            if (!whole) {
                gather_f32(&q->j, n);
                status = rnn_project(ctx, &q->j, n * Bt, q->j.xg, d * GH, GH, q->j.xw, GH);
            }
        }
        if (status == MLRT_OK) mlrt_parallel_for(ctx, nd * parts, 1, seq_tasks, seq);
    }
    for (int64_t d = 0; d < nd && status == MLRT_OK; ++d) {
        seq[d].j.h = seq[d].hs[steps & 1];
        save_state_f32(&seq[d].j);
    }
    mlrt_aligned_free(work);
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
    /* the plan's extra inputs (W^T, packed W, R^T in strips) come after the node's own, in any order */
    int32_t n_node = n_in - (p->w_transposed > 0) - (p->w_packed > 0) - (p->r_packed > 0);
    int64_t extras[3] = {p->w_transposed, p->w_packed, p->r_packed};
    MLRT_CHECK(n_node >= 3 && n_node <= max_in && n_out >= 1 && n_out <= max_out,
               "%s: expects 3 to %d inputs (and W^T, packed W and R^T) and 1 to %d outputs", op, max_in, max_out);
    for (int a = 0; a < 3; ++a) {
        MLRT_CHECK(extras[a] <= 0 || (extras[a] >= n_node && extras[a] < n_in), "%s: extra input %lld is not one", op,
                   (long long)extras[a]);
        for (int b = 0; b < a; ++b)
            MLRT_CHECK(extras[a] <= 0 || extras[a] != extras[b], "%s: two extra inputs at %lld", op,
                       (long long)extras[a]);
    }
    const mlrt_tensor *X = &in[0], *W = &in[1], *R = &in[2], *B = opt(in, n_node, 3), *L = opt(in, n_node, 4);
    const mlrt_tensor *H0 = opt(in, n_node, 5), *C0 = opt(in, n_node, 6), *P = opt(in, n_node, 7);
    const mlrt_tensor *WT = p->w_transposed > 0 ? &in[p->w_transposed] : NULL;
    const mlrt_tensor *RP = p->r_packed > 0 ? &in[p->r_packed] : NULL;
    const mlrt_tensor *WP = p->w_packed > 0 ? &in[p->w_packed] : NULL;
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
    const mlrt_tensor *all[] = {W, WT, R, B, H0, C0, P, Y, Yh, Yc};
    for (size_t k = 0; k < sizeof all / sizeof *all; ++k)
        MLRT_CHECK(!all[k] || all[k]->dtype == dt, "%s: every tensor but sequence_lens must have X's type", op);
    long long lnd = (long long)nd, lgh = (long long)(G * H);
    MLRT_CHECK(dims_are(W, 3, nd, G * H, I, 0), "%s: W must be [%lld, %lld, %lld]", op, lnd, lgh, (long long)I);
    MLRT_CHECK(dims_are(R, 3, nd, G * H, H, 0), "%s: R must be [%lld, %lld, %lld]", op, lnd, lgh, (long long)H);
    MLRT_CHECK(!WT || dims_are(WT, 2, I, nd * G * H, 0, 0), "%s: W^T must be [%lld, %lld]", op, (long long)I,
               lnd * lgh);
    MLRT_CHECK(!B || dims_are(B, 2, nd, 2 * G * H, 0, 0), "%s: B must be [%lld, %lld]", op, lnd, 2 * lgh);
    int64_t packed_r = G * rnn_gate_floats(H), packed_w = mlrt_gemm_packed_b_size(I, G * H);
    MLRT_CHECK(!WP || (dt == MLRT_FLOAT && packed_w > 0 && dims_are(WP, 1, nd * packed_w, 0, 0, 0)),
               "%s: packed W must be float32 [%lld]", op, lnd * (long long)packed_w);
    MLRT_CHECK(!RP || (dt == MLRT_FLOAT && dims_are(RP, 1, nd * packed_r, 0, 0, 0)),
               "%s: packed R^T must be float32 [%lld]", op, lnd * (long long)packed_r);
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
    rnn_job j = {.kind = kind, .dtype = dt, .esz = esz, .p = p, .S = S, .Bt = Bt, .I = I, .H = H, .G = G, .nd = nd,
                 .X = X->data, .W = W->data, .WT = WT ? WT->data : NULL, .WP = WP ? WP->data : NULL, .R = R->data,
                 .B = B ? B->data : NULL, .P = P ? P->data : NULL,
                 .h0 = H0 ? H0->data : NULL, .c0 = C0 ? C0->data : NULL, .lens = lens,
                 .Y = Y ? Y->data : NULL, .Yh = Yh ? Yh->data : NULL, .Yc = Yc ? Yc->data : NULL};
#ifdef RNN_X86
    j.avx512 = dt == MLRT_FLOAT && mlrt_cpu_isa() == MLRT_ISA_AVX512;
#endif
    if (Bt == 1) return rnn_batch1(ctx, &j, op);

    /* float32: the steps' products on R^T in strips, packed here unless the plan did once */
    float *packed = NULL;
    if (dt == MLRT_FLOAT && !RP) {
        packed = mlrt_aligned_alloc(64, (size_t)(nd * packed_r) * sizeof(float));
        if (!packed) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate R^T's strips", op);
        for (int64_t d = 0; d < nd; ++d) rnn_pack_r(&j, d, packed + d * packed_r);
    }
    j.RP = RP ? RP->data : packed;
    int status;
    if (dt == MLRT_FLOAT && mlrt_ctx_threads(ctx) >= 2) {
        status = rnn_batch_parts(ctx, &j, op);
    } else { /* a direction at a time, each step's product and gates on the pool */
        int64_t row = (G * H + I) * (int64_t)esz * Bt;
        int64_t chunk = row > 0 ? RNN_CHUNK_BYTES / row : S;
        chunk = chunk < 1 ? 1 : chunk > S ? S : chunk;
        size_t n_xg = (size_t)(chunk * Bt * I), n_xw = (size_t)(chunk * Bt * G * H), n_state = (size_t)(Bt * H);
        size_t total = n_xg + n_xw + (size_t)(Bt * G * H) + 4 * n_state + (size_t)(G * H);
        char *work = malloc(total * esz + 64);
        if (!work) {
            mlrt_aligned_free(packed);
            return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes of work space", op, total * esz);
        }
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
        status = MLRT_OK;
        for (int64_t d = 0; d < nd && status == MLRT_OK; ++d) {
            rnn_set_direction(&j, d);
            status = rnn_direction(ctx, &j, chunk);
        }
        free(work);
    }
    mlrt_aligned_free(packed);
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

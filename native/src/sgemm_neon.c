/* sgemm_neon.c -- the float32 strip micro-kernel on AArch64's Advanced SIMD (NEON),
 * compiled for aarch64 only (elsewhere this file is empty).
 *
 * The contract is src/gemm.h's mlrt_sgemm_strips and gemm.c's kernel table: C[0:mr,
 * 0:nr] (+)= A[0:mr, 0:kc] * B, row k of B at b + off[k], MLRT_SGEMM_PANEL (6) rows of A
 * at a time (a[0..5], k steps ks apart: 1 row-major, 6 packed; a[6] the run read next),
 * up to 16 columns.  Six rows of four 4-lane vectors: 24 accumulators of the 32 vector
 * registers, each k step four loads of B and six multiply-adds by element of A
 * (fmla by scalar), every one fused as a scalar fmaf, so each element of C is the same
 * sequence of roundings as on the other kernels' lanes.  A strip of fewer than 16
 * columns reads its rows through a zero-padded copy (nothing past column nr is read).
 * The epilogue is mlrt_strip_finish's, vectorised for a full strip without the
 * sigmoid-based activations, lane by lane otherwise. */
#include <string.h>

#include "gemm.h"

#ifdef __aarch64__
#include <arm_neon.h>

#define NEON_MR MLRT_SGEMM_PANEL
#define NEON_NR 16

static inline float32x4_t neon_act(float32x4_t r, int32_t act, float32x4_t lo, float32x4_t hi) {
    switch (act) {
    case MLRT_STRIP_RELU: { /* 0 > r ? 0 : r: NaN stays */
        uint32x4_t neg = vcltq_f32(r, vdupq_n_f32(0.0f));
        return vbslq_f32(neg, vdupq_n_f32(0.0f), r);
    }
    case MLRT_STRIP_CLIP: {
        uint32x4_t lt = vcltq_f32(r, lo), gt = vcgtq_f32(r, hi);
        return vbslq_f32(lt, lo, vbslq_f32(gt, hi, r));
    }
    default: return r;
    }
}

#define NEON_STEP(BV)                                                                              \
    {                                                                                              \
        const float *bk = BV;                                                                      \
        float32x4_t b0 = vld1q_f32(bk), b1 = vld1q_f32(bk + 4), b2 = vld1q_f32(bk + 8), b3 = vld1q_f32(bk + 12); \
        _Pragma("GCC unroll 6") for (int i = 0; i < NEON_MR; ++i) {                                \
            float x = row[i][ka];                                                                  \
            acc[i][0] = vfmaq_n_f32(acc[i][0], b0, x);                                             \
            acc[i][1] = vfmaq_n_f32(acc[i][1], b1, x);                                             \
            acc[i][2] = vfmaq_n_f32(acc[i][2], b2, x);                                             \
            acc[i][3] = vfmaq_n_f32(acc[i][3], b3, x);                                             \
        }                                                                                          \
    }

void mlrt_sgemm_uk_neon(int64_t kc, const float *const *a, int64_t ks, const float *b, const int64_t *off, float *c,
                        int64_t ldc, int64_t mr, int64_t nr, bool accumulate, const mlrt_strip_epilogue *e) {
    float32x4_t acc[NEON_MR][4];
    for (int i = 0; i < NEON_MR; ++i)
        for (int v = 0; v < 4; ++v) acc[i][v] = vdupq_n_f32(0.0f);
    const float *row[NEON_MR] = {a[0], a[1], a[2], a[3], a[4], a[5]};
    int64_t ka = 0;
    if (nr >= NEON_NR) {
        for (int64_t k = 0; k < kc; ++k, ka += ks) {
            __builtin_prefetch(row[0] + ka + 64 * ks);
            NEON_STEP(b + off[k])
        }
    } else {
        float pad[NEON_NR] = {0};
        for (int64_t k = 0; k < kc; ++k, ka += ks) {
            memcpy(pad, b + off[k], (size_t)nr * sizeof(float));
            NEON_STEP(pad)
        }
    }
    mlrt_strip_epilogue fin = e ? *e : (mlrt_strip_epilogue){0}; /* a copy: the stores cannot touch it */
    bool vector = nr >= NEON_NR && (fin.act == MLRT_STRIP_NONE || fin.act == MLRT_STRIP_RELU || fin.act == MLRT_STRIP_CLIP);
    const float32x4_t lo = vdupq_n_f32(fin.lo), hi = vdupq_n_f32(fin.hi);
    float lanes[NEON_NR];
    for (int64_t i = 0; i < mr; ++i) {
        float *ci = c + i * ldc;
        const float *zi = fin.z ? fin.z + i * ldc : NULL;
        float bv = fin.bias ? fin.bias[i] : 0.0f;
        if (vector) { /* the same operations, 4 lanes at a time */
            for (int v = 0; v < 4; ++v) {
                float32x4_t r = acc[i][v];
                if (accumulate) r = vaddq_f32(vld1q_f32(ci + 4 * v), r);
                if (fin.bias) r = vaddq_f32(r, vdupq_n_f32(bv));
                if (zi) r = vaddq_f32(r, vld1q_f32(zi + 4 * v));
                vst1q_f32(ci + 4 * v, neon_act(r, fin.act, lo, hi));
            }
            continue;
        }
        for (int v = 0; v < 4; ++v) vst1q_f32(lanes + 4 * v, acc[i][v]);
        for (int64_t j = 0; j < nr && j < NEON_NR; ++j)
            ci[j] = mlrt_strip_finish(lanes[j], accumulate ? ci[j] : 0.0f, bv, zi ? zi[j] : 0.0f, &fin, accumulate);
    }
}

/* sum_k a[k] * b[k]: four 4-lane chains (the fused multiply-add's latency hidden), added in
 * a fixed order, then the last K % 4 steps by scalar fused multiply-adds: the matrix-vector
 * product's dot for a transposed B (a classifier's layer at batch 1). */
float mlrt_sdot_neon(const float *a, const float *b, int64_t K) {
    float32x4_t c0 = vdupq_n_f32(0.0f), c1 = c0, c2 = c0, c3 = c0;
    int64_t k = 0;
    for (; k + 16 <= K; k += 16) {
        c0 = vfmaq_f32(c0, vld1q_f32(a + k), vld1q_f32(b + k));
        c1 = vfmaq_f32(c1, vld1q_f32(a + k + 4), vld1q_f32(b + k + 4));
        c2 = vfmaq_f32(c2, vld1q_f32(a + k + 8), vld1q_f32(b + k + 8));
        c3 = vfmaq_f32(c3, vld1q_f32(a + k + 12), vld1q_f32(b + k + 12));
    }
    for (; k + 4 <= K; k += 4) c0 = vfmaq_f32(c0, vld1q_f32(a + k), vld1q_f32(b + k));
    float32x4_t acc = vaddq_f32(vaddq_f32(c0, c1), vaddq_f32(c2, c3));
    float s = (vgetq_lane_f32(acc, 0) + vgetq_lane_f32(acc, 2)) + (vgetq_lane_f32(acc, 1) + vgetq_lane_f32(acc, 3));
    for (; k < K; ++k) s = __builtin_fmaf(a[k], b[k], s);
    return s;
}
#endif /* __aarch64__ */

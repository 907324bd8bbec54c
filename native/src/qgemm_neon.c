/* qgemm_neon.c -- the 8-bit integer product's tiles on AArch64's NEON, compiled for
 * aarch64 only (elsewhere this file declares nothing more); qgemm.c picks them by what
 * the CPU reports (src/cpu.c): SDOT where it has the dot-product extension ("dotprod"),
 * else widening multiplies, which every AArch64 CPU has.
 *
 * The contract is qgemm.c's tile kernels: up to MR (6) rows of L (int8, packed in groups
 * of four k) by one R panel (uint8 quads, up to 64 columns), the int32 sums sum_k l r,
 * wrapping, then qgemm.h's finish of each element.  Both multiply int8 by int8, so R's
 * bytes are moved to int8 by flipping their top bit (r ^ 0x80 = r - 128) as they are
 * loaded, and 128 * rowsum(l) is added back to each row's sums:
 *     sum_k l r = sum_k l (r - 128) + 128 * sum_k l      (exact modulo 2^32).
 * SDOT: a pass computes 16 columns, 6 rows x 4 vectors of 4 int32 sums (24 of the 32
 * vector registers), each group of four k one load of L's 24 bytes, four of R's and 24
 * SDOT by lane.  Without it: passes of 8 columns, each row's quad repeated across a
 * vector and multiplied into int16 products (smull, exact: |l (r - 128)| <= 2^14) that
 * add pairwise into int32 (sadalp), two columns' partial sums per vector, summed
 * pairwise at the end.  Columns past the panel's n read as zeros (a copy of the last
 * pass's quads where R's groups lie anywhere); rows past mr are L's zero rows, computed
 * and not stored. */
#include <string.h>

#include "qgemm.h"

#ifdef __aarch64__
#include <arm_neon.h>

#define MR MLRT_QGEMM_MR
#define NR MLRT_QGEMM_NR
#define SDOT_TARGET __attribute__((target("arch=armv8.2-a+dotprod")))

/* rows i of acc: four vectors, the quads of R's 16 columns against row i's quad (a lane) */
#define SDOT_ROW(i, LV, LANE)                                                                    \
    acc[i][0] = vdotq_laneq_s32(acc[i][0], r0, LV, LANE), acc[i][1] = vdotq_laneq_s32(acc[i][1], r1, LV, LANE), \
    acc[i][2] = vdotq_laneq_s32(acc[i][2], r2, LV, LANE), acc[i][3] = vdotq_laneq_s32(acc[i][3], r3, LV, LANE)

/* 128 * rowsum of each of L's MR rows, wrapping */
static void rows_fix(const int8_t *L, int64_t K4, uint32_t *fix) {
    for (int i = 0; i < MR; ++i) {
        int32_t s = 0;
        for (int64_t q = 0; q < K4; ++q)
            for (int b = 0; b < 4; ++b) s += L[q * MR * 4 + i * 4 + b];
        fix[i] = (uint32_t)s * 128u;
    }
}

/* Group q's quads of columns c0 ... c0 + w - 1 (the pass reads `width` columns): where R's
 * groups lie anywhere and the pass runs past n, through tail, zero beyond. */
static inline const uint8_t *pass_quads(const uint8_t *R, const int64_t *qoff, int64_t q, int64_t c0, int64_t w,
                                        int64_t width, uint8_t *tail) {
    const uint8_t *r = (qoff ? R + qoff[q] : R + q * NR * 4) + c0 * 4;
    if (!qoff || w >= width) return r;
    memset(tail, 0, (size_t)width * 4);
    memcpy(tail, r, (size_t)w * 4);
    return tail;
}

/* 16 of R's bytes as int8: r ^ 0x80 = r - 128 */
static inline int8x16_t r_flipped(const uint8_t *r) {
    return veorq_s8(vreinterpretq_s8_u8(vld1q_u8(r)), vdupq_n_s8((int8_t)0x80));
}

/* Row i's sums of the pass (its w columns) finished into C. */
static inline void pass_store(const mlrt_qgemm_out *o, int64_t i, int64_t c0, int64_t w, const int32_t *sums,
                              uint32_t fix) {
    for (int64_t j = 0; j < w; ++j) mlrt_qgemm_store1(o, i, c0 + j, (int32_t)((uint32_t)sums[j] + fix));
}

SDOT_TARGET static void sdot_tile(const int8_t *L, const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t mr,
                                  int64_t n, const mlrt_qgemm_out *o) {
    uint32_t fix[MR];
    rows_fix(L, K4, fix);
    uint8_t tail[64];
    for (int64_t c0 = 0; c0 < n; c0 += 16) {
        int64_t w = n - c0 < 16 ? n - c0 : 16;
        int32x4_t acc[MR][4];
        for (int i = 0; i < MR; ++i)
            for (int v = 0; v < 4; ++v) acc[i][v] = vdupq_n_s32(0);
        for (int64_t q = 0; q < K4; ++q) {
            const uint8_t *r = pass_quads(R, qoff, q, c0, w, 16, tail);
            int8x16_t r0 = r_flipped(r);
            int8x16_t r1 = r_flipped(r + 16);
            int8x16_t r2 = r_flipped(r + 32);
            int8x16_t r3 = r_flipped(r + 48);
            const int8_t *l = L + q * MR * 4;
            int8x16_t la = vld1q_s8(l), lb = vcombine_s8(vld1_s8(l + 16), vdup_n_s8(0));
            SDOT_ROW(0, la, 0);
            SDOT_ROW(1, la, 1);
            SDOT_ROW(2, la, 2);
            SDOT_ROW(3, la, 3);
            SDOT_ROW(4, lb, 0);
            SDOT_ROW(5, lb, 1);
        }
        int32_t sums[16];
        for (int64_t i = 0; i < mr; ++i) {
            for (int v = 0; v < 4; ++v) vst1q_s32(sums + 4 * v, acc[i][v]);
            pass_store(o, i, c0, w, sums, fix[i]);
        }
    }
}

/* Row i's quad (lane i of the vector of rows' quads) against the pass's two R vectors:
 * the products of each half, pairwise into the four partial-sum vectors. */
#define SMULL_ROW(i, LQ, LANE)                                                                          \
    {                                                                                                   \
        int8x16_t l4 = vreinterpretq_s8_s32(vdupq_laneq_s32(LQ, LANE));                                 \
        acc[i][0] = vpadalq_s16(acc[i][0], vmull_s8(vget_low_s8(r0), vget_low_s8(l4)));                \
        acc[i][1] = vpadalq_s16(acc[i][1], vmull_high_s8(r0, l4));                                      \
        acc[i][2] = vpadalq_s16(acc[i][2], vmull_s8(vget_low_s8(r1), vget_low_s8(l4)));                \
        acc[i][3] = vpadalq_s16(acc[i][3], vmull_high_s8(r1, l4));                                      \
    }

static void smull_tile(const int8_t *L, const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t mr, int64_t n,
                       const mlrt_qgemm_out *o) {
    uint32_t fix[MR];
    rows_fix(L, K4, fix);
    uint8_t tail[32];
    for (int64_t c0 = 0; c0 < n; c0 += 8) {
        int64_t w = n - c0 < 8 ? n - c0 : 8;
        int32x4_t acc[MR][4]; /* per row: columns 0-1, 2-3, 4-5, 6-7, each (k 0-1, k 2-3) of both */
        for (int i = 0; i < MR; ++i)
            for (int v = 0; v < 4; ++v) acc[i][v] = vdupq_n_s32(0);
        for (int64_t q = 0; q < K4; ++q) {
            const uint8_t *r = pass_quads(R, qoff, q, c0, w, 8, tail);
            int8x16_t r0 = r_flipped(r);
            int8x16_t r1 = r_flipped(r + 16);
            const int8_t *l = L + q * MR * 4;
            int32x4_t la = vreinterpretq_s32_s8(vld1q_s8(l));
            int32x4_t lb = vcombine_s32(vreinterpret_s32_s8(vld1_s8(l + 16)), vdup_n_s32(0));
            SMULL_ROW(0, la, 0);
            SMULL_ROW(1, la, 1);
            SMULL_ROW(2, la, 2);
            SMULL_ROW(3, la, 3);
            SMULL_ROW(4, lb, 0);
            SMULL_ROW(5, lb, 1);
        }
        int32_t sums[8];
        for (int64_t i = 0; i < mr; ++i) {
            vst1q_s32(sums, vpaddq_s32(acc[i][0], acc[i][1]));
            vst1q_s32(sums + 4, vpaddq_s32(acc[i][2], acc[i][3]));
            pass_store(o, i, c0, w, sums, fix[i]);
        }
    }
}

void mlrt_qgemm_tile_sdot(const int8_t *L, const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t mr, int64_t n,
                          const mlrt_qgemm_out *o) {
    (void)qoff;
    sdot_tile(L, R, NULL, K4, mr, n, o);
}

void mlrt_qgemm_tile_sdot_at(const int8_t *L, const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t mr,
                             int64_t n, const mlrt_qgemm_out *o) {
    sdot_tile(L, R, qoff, K4, mr, n, o);
}

void mlrt_qgemm_tile_neon(const int8_t *L, const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t mr, int64_t n,
                          const mlrt_qgemm_out *o) {
    (void)qoff;
    smull_tile(L, R, NULL, K4, mr, n, o);
}

void mlrt_qgemm_tile_neon_at(const int8_t *L, const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t mr,
                             int64_t n, const mlrt_qgemm_out *o) {
    smull_tile(L, R, qoff, K4, mr, n, o);
}
#endif

/* qgemm.h -- the 8-bit integer products under MatMulInteger, QLinearMatMul, ConvInteger,
 * QLinearConv and com.microsoft QGemm, and their requantization (internal, not ABI).
 *
 * Requantization, defined once (docs/undefined.md), as onnxruntime computes it:
 *     multiplier = (float)(a_scale * b_scale) / y_scale      two float32 operations, in this order
 *     y = saturate(round_half_even((float)acc * multiplier) + y_zero_point)
 * acc the int32 sum (bias included, wrapping), converted to float32 (rounding to nearest
 * even above 2^24), the product rounded to float32; a NaN product gives the low end of
 * y's range.
 *
 * The product: C (M x N, int32) = L (M x K) @ R (K x N) with 8-bit operands less their
 * zero points.  The kernels take L as int8 and R as uint8 (vpdpbusd's operands: R in the
 * vector lanes, four consecutive k of L broadcast); an operand of the other type is
 * moved there by flipping its top bit (x ^ 0x80, its zero point by 128), which leaves
 * every difference x - zero_point as it was.  With canonical operands l, r and zero
 * points lz (per row) and rz (per column):
 *     sum_k (l - lz)(r - rz) = sum_k l r - rz * (rowsum(l) - K lz) - lz * colsum(r)
 * in int32, wrapping (every step is exact modulo 2^32).  The kernels compute sum_k l r
 * and finish each element with what the caller prepared (mlrt_qgemm_out):
 *     v = acc + row_add[m] + col_add[n] + row_mul[m] * col_mul[n]
 * then store v (int32), requantize it with a multiplier per row, per column or one, or
 * (float output) store y = min(max((float)v * scale + fbias[m], flo), fhi) (fbias[n] by
 * column where fbias_col), each step a float32 operation rounded on its own, in that
 * order: the Cast, Mul, Add and Clip (or Relu) quantize_dynamic writes after a ConvInteger,
 * bit for bit, and MatMulIntegerToFloat's scale and bias.
 *
 * Layouts.  L is packed once (weights) or per call into panels of MLRT_QGEMM_MR rows,
 * each k-major in groups of four: L(m, k) at p[((m / MR) * K4 + k / 4) * MR * 4 +
 * (m % MR) * 4 + k % 4], K4 = ceil(K / 4), rows and k past the end zero.  R goes by
 * panels of up to MLRT_QGEMM_NR columns: R(k, n) at q[(k / 4) * NR * 4 + n * 4 + k % 4],
 * k past K and columns past the panel's zero. */
#ifndef MLRT_QGEMM_H
#define MLRT_QGEMM_H

#include <math.h>

#include "internal.h"

#define MLRT_QGEMM_MR 6
#define MLRT_QGEMM_NR 64

/* The requantization multiplier, as onnxruntime forms it (float32, this order). */
static inline float mlrt_requant_multiplier(float a_scale, float b_scale, float y_scale) {
    float product = a_scale * b_scale;
    return product / y_scale;
}

/* One element requantized to [lo, hi] (the output type's range). */
static inline int32_t mlrt_requantize(int32_t acc, float multiplier, int32_t zp, int32_t lo, int32_t hi) {
    float v = (float)acc * multiplier, flo = (float)(lo - zp), fhi = (float)(hi - zp);
    v = v > flo ? v : flo; /* (NaN: the low end) */
    v = v < fhi ? v : fhi;
    return (int32_t)nearbyintf(v) + zp;
}

/* What the kernels do with a finished sum (see above). */
typedef struct mlrt_qgemm_out {
    const int32_t *row_add, *col_add; /* by row / column of C, or NULL */
    const int32_t *row_mul, *col_mul; /* both or neither */
    const float *scale;               /* NULL: store int32; else the multipliers (float output: the scales) */
    int32_t scale_mode;               /* enum mlrt_qgemm_scale */
    int32_t zp, lo, hi;               /* requantized: y's zero point and range */
    int32_t out_type;                 /* MLRT_INT32, MLRT_UINT8, MLRT_INT8 or MLRT_FLOAT */
    const float *fbias;               /* float output: added by row (or column) after the scale, or NULL */
    bool fbias_col;                   /* fbias is by column of C */
    float flo, fhi;                   /* float output: the clamp (-inf, inf: none) */
    void *c;                          /* C(m, n) at c + m * ldc + n (elements) */
    int64_t ldc;
} mlrt_qgemm_out;

enum mlrt_qgemm_scale { MLRT_QSCALE_ONE = 0, MLRT_QSCALE_ROW = 1, MLRT_QSCALE_COL = 2 };

/* Bytes of L packed: ceil(M / MR) panels of K4 * MR * 4. */
static inline int64_t mlrt_qgemm_l_size(int64_t M, int64_t K) {
    return (M + MLRT_QGEMM_MR - 1) / MLRT_QGEMM_MR * ((K + 3) / 4) * MLRT_QGEMM_MR * 4;
}

/* Pack L from 8-bit elements src[m * ld + k * cs] (flip: x ^ 0x80, uint8 to int8), and
 * rowsum[m] = sum_k of the packed values (NULL: not wanted). */
void mlrt_qgemm_pack_l(const uint8_t *src, int64_t M, int64_t K, int64_t ld, int64_t cs, bool flip, int8_t *dst,
                       int32_t *rowsum);

/* Pack one R panel of n <= NR columns from rows[k] (K row pointers, n bytes each; flip:
 * x ^ 0x80, int8 to uint8) into dst (K4 * NR * 4 bytes), and add each column's sum of
 * packed values to colsum[j] (NULL: not wanted).  A panel packed by parts of a multiple
 * of 4 rows is the whole panel packed at once (dst + k0 * NR for rows from k0). */
void mlrt_qgemm_pack_r(const uint8_t *const *rows, int64_t K, int64_t n, bool flip, uint8_t *dst, int32_t *colsum);
/* The same from a matrix, row k at src + k * ld; colsum (NULL: not wanted) is set. */
void mlrt_qgemm_pack_r_rows(const uint8_t *src, int64_t ld, int64_t K, int64_t n, bool flip, uint8_t *dst,
                            int32_t *colsum);

/* A block of C, M rows by n <= NR columns, from packed L (its first panel at L) and one
 * packed R panel (K4 groups of four), finished by o: its row arrays, column arrays and c
 * start at the block's first row and column. */
void mlrt_qgemm_panel(const int8_t *L, int64_t M, int64_t K4, const uint8_t *R, int64_t n,
                      const mlrt_qgemm_out *o);

/* The same with R's groups of four k anywhere: group q (the quads of up to NR columns,
 * 4 NR bytes, read whole whatever n) at R + qoff[q]. */
void mlrt_qgemm_panel_at(const int8_t *L, int64_t M, int64_t K4, const uint8_t *R, const int64_t *qoff, int64_t n,
                         const mlrt_qgemm_out *o);
/* colsum[j] (j < n) = the sum of column j's values over those K4 groups. */
void mlrt_qgemm_colsum_at(const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t n, int32_t *colsum);

/* MatMulIntegerToFloat's product (kernels/qlinear.c): Y (float, contiguous) = (A - Az) @
 * (B - Bz) * (a_scale * Bs) + bias, the scale and the bias (N floats by column, or NULL)
 * in the product's finish: each element's (float)acc * (a_scale * b_scale) + bias as
 * separate float32 steps.  A, B and the zero points are views as for MatMulInteger, Bs a
 * float view of B's shape; packed is B packed by mlrt_qmatmul_pack_b or NULL.  Refused
 * (MLRT_ERR_INVALID_ARGUMENT) where A's zero point is per row and B's per column (the
 * integer product would need a second pass; onnxruntime's a_zero_point is per tensor). */
int mlrt_qmatmul_float(const mlrt_context *ctx, const char *op, const mlrt_tensor *A, const mlrt_tensor *Az,
                       const mlrt_tensor *B, const mlrt_tensor *Bz, const mlrt_tensor *packed, float a_scale,
                       const mlrt_tensor *Bs, const float *bias, mlrt_tensor *Y);

/* Intel AMX (src/qgemm.c): whether the matrix products (and the convolutions,
 * kernels/qlinear_conv.c) run on it -- the CPU has AMX-INT8,
 * Linux granted this process the tiles, and neither MLRT_QGEMM_KERNEL nor MLRT_ISA rules it
 * out.  Its L is packed in whole rows, R in the same panels as for the other kernels. */
bool mlrt_qgemm_amx(void);

/* Bytes of a row of L packed for AMX: K rounded up to 64 (zeros past K). */
static inline int64_t mlrt_qgemm_row_bytes(int64_t K) { return (K + 63) / 64 * 64; }

/* Bytes of L packed in rows: M rounded up to 16 rows (zero rows past M). */
static inline int64_t mlrt_qgemm_l_rows_size(int64_t M, int64_t K) {
    return (M + 15) / 16 * 16 * mlrt_qgemm_row_bytes(K);
}

/* Bytes a buffer of packed R panels must have readable past the last panel: the AMX
 * kernel's last step of 16 groups reads up to 15 groups past a panel (and multiplies them
 * by L's zero bytes past K). */
#define MLRT_QGEMM_R_SLACK (16 * MLRT_QGEMM_NR * 4)

/* Rows of L from 8-bit elements src[m * ld + k * cs] (flip: x ^ 0x80, uint8 to int8) into
 * dst rows of mlrt_qgemm_row_bytes(K), and rowsum[m] = sum_k of the packed values (NULL:
 * not wanted).  (The zero rows past M are the caller's.) */
void mlrt_qgemm_pack_l_rows(const uint8_t *src, int64_t M, int64_t K, int64_t ld, int64_t cs, bool flip, int8_t *dst,
                            int32_t *rowsum);

/* A block of C, M rows by n <= NR columns, on AMX (mlrt_qgemm_amx() true): L packed in
 * rows (its first row at L, the rows up to M rounded to 16 present), R one packed panel
 * of K4 = ceil(K / 4) groups with MLRT_QGEMM_R_SLACK readable bytes after it; finished by
 * o as mlrt_qgemm_panel. */
void mlrt_qgemm_panel_amx(const int8_t *L, int64_t M, int64_t K, const uint8_t *R, int64_t n,
                          const mlrt_qgemm_out *o);

/* The same with R's groups anywhere (the channel-quad planes of a convolution): L in rows
 * lrow bytes apart (the rows up to M rounded to 16 present), each of `steps` steps 64
 * bytes of them; step s multiplies the 16 groups of four k at R + soff[s] + g * rstride
 * (g = 0..15), each group's quads of up to NR columns read whole whatever n. */
void mlrt_qgemm_panel_amx_at(const int8_t *L, int64_t M, int64_t lrow, int64_t steps, const uint8_t *R,
                             const int64_t *soff, int64_t rstride, int64_t n, const mlrt_qgemm_out *o);

/* Which kernel runs: "avx512vnni", "avx512bw", "avxvnni", "avx2" or "portable"
 * (MLRT_QGEMM_KERNEL names the best one allowed, to test the others on a newer CPU). */
const char *mlrt_qgemm_kernel_name(void);

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Four rows of 64 bytes side by side: o[u] holds the quads (r0[c], r1[c], r2[c], r3[c]) of
 * columns 16 u .. 16 u + 15.  The byte and word unpacks give per 128-bit lane L the quads
 * of columns 16L.., 16L + 4.., 16L + 8.., 16L + 12.., which the lane shuffles put in
 * column order.  (R's packing, src/qgemm.c, and the channel-quad planes,
 * kernels/qlinear_planes.c.) */
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline void mlrt_quads_avx512(const __m512i r[4],
                                                                                                __m512i o[4]) {
    __m512i ab_lo = _mm512_unpacklo_epi8(r[0], r[1]), ab_hi = _mm512_unpackhi_epi8(r[0], r[1]);
    __m512i cd_lo = _mm512_unpacklo_epi8(r[2], r[3]), cd_hi = _mm512_unpackhi_epi8(r[2], r[3]);
    __m512i q0 = _mm512_unpacklo_epi16(ab_lo, cd_lo), q1 = _mm512_unpackhi_epi16(ab_lo, cd_lo);
    __m512i q2 = _mm512_unpacklo_epi16(ab_hi, cd_hi), q3 = _mm512_unpackhi_epi16(ab_hi, cd_hi);
    __m512i t0 = _mm512_shuffle_i32x4(q0, q1, 0x44), t1 = _mm512_shuffle_i32x4(q0, q1, 0xEE);
    __m512i t2 = _mm512_shuffle_i32x4(q2, q3, 0x44), t3 = _mm512_shuffle_i32x4(q2, q3, 0xEE);
    o[0] = _mm512_shuffle_i32x4(t0, t2, 0x88), o[1] = _mm512_shuffle_i32x4(t0, t2, 0xDD);
    o[2] = _mm512_shuffle_i32x4(t1, t3, 0x88), o[3] = _mm512_shuffle_i32x4(t1, t3, 0xDD);
}
#endif

/* Bytes per element of C. */
static inline size_t mlrt_qgemm_out_size(const mlrt_qgemm_out *o) {
    return o->out_type == MLRT_INT32 || o->out_type == MLRT_FLOAT ? 4 : 1;
}

/* Whether a float output is clamped (a NaN then gives flo, as vmaxps; unclamped it stays). */
static inline bool mlrt_qgemm_clamps(const mlrt_qgemm_out *o) { return o->flo != -INFINITY || o->fhi != INFINITY; }

/* The float output of sum v in row i, column j with multiplier s (max, min: as vmaxps, vminps). */
static inline float mlrt_qgemm_float1(const mlrt_qgemm_out *o, int64_t i, int64_t j, float s, int32_t v) {
    float y = (float)v * s;
    if (o->fbias) y = y + o->fbias[o->fbias_col ? j : i];
    if (!mlrt_qgemm_clamps(o)) return y;
    y = y > o->flo ? y : o->flo;
    return y < o->fhi ? y : o->fhi;
}

/* Row i's n int32 sums at c (already finished to v) made its float outputs, in place. */
void mlrt_qgemm_float_row(const mlrt_qgemm_out *o, int64_t i, void *c, int64_t n);

/* The finish of mlrt_qgemm_out for the sum v of row i, column j (portable). */
static inline void mlrt_qgemm_store1(const mlrt_qgemm_out *o, int64_t i, int64_t j, int32_t v) {
    uint32_t u = (uint32_t)v;
    if (o->row_add) u += (uint32_t)o->row_add[i];
    if (o->col_add) u += (uint32_t)o->col_add[j];
    if (o->row_mul) u += (uint32_t)o->row_mul[i] * (uint32_t)o->col_mul[j];
    v = (int32_t)u;
    int64_t at = i * o->ldc + j;
    if (!o->scale) {
        ((int32_t *)o->c)[at] = v;
        return;
    }
    float s = o->scale[o->scale_mode == MLRT_QSCALE_ROW ? i : o->scale_mode == MLRT_QSCALE_COL ? j : 0];
    if (o->out_type == MLRT_FLOAT) {
        ((float *)o->c)[at] = mlrt_qgemm_float1(o, i, j, s, v);
        return;
    }
    int32_t q = mlrt_requantize(v, s, o->zp, o->lo, o->hi);
    if (o->out_type == MLRT_UINT8) ((uint8_t *)o->c)[at] = (uint8_t)q;
    else ((int8_t *)o->c)[at] = (int8_t)q;
}

#ifdef __aarch64__
/* The tiles on AArch64's dot-product extension (src/qgemm_neon.c), qgemm.c's tile
 * signature: R packed, or its groups at R + qoff[q] (_at) */
void mlrt_qgemm_tile_sdot(const int8_t *L, const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t mr, int64_t n,
                          const mlrt_qgemm_out *o);
void mlrt_qgemm_tile_sdot_at(const int8_t *L, const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t mr,
                             int64_t n, const mlrt_qgemm_out *o);
/* and on plain NEON (widening multiplies), every AArch64 CPU */
void mlrt_qgemm_tile_neon(const int8_t *L, const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t mr, int64_t n,
                          const mlrt_qgemm_out *o);
void mlrt_qgemm_tile_neon_at(const int8_t *L, const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t mr,
                             int64_t n, const mlrt_qgemm_out *o);
#endif

#endif

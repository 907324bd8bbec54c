/* qgemm.c -- the 8-bit integer matrix product (src/qgemm.h): packing, the tile kernels and
 * the panel loop.
 *
 * A tile is up to MR rows of C by one R panel (up to NR = 64 columns): per group of four
 * k, each row's four int8 of L are broadcast against the panel's uint8 quads.  Kernels,
 * chosen once by what the CPU has:
 *   avx512vnni  vpdpbusd: 16 lanes x 4 products summed into int32 per instruction;
 *   avx512bw    the same sums from vpmaddwd on the quads split into even and odd bytes
 *               widened to 16 bits (exact: no 16-bit saturation, unlike vpmaddubsw);
 *   avxvnni     vpdpbusd in its VEX form on 8 lanes (AVX-VNNI), a tile in passes of 16
 *               columns (MR x 2 sums: 12 of the 16 registers);
 *   avx2        the avx512bw sums on 8 lanes, passes of 8 columns;
 *   neondot     AArch64's SDOT on 4 lanes, R's bytes flipped to int8 and 128 * rowsum(L)
 *               added back (src/qgemm_neon.c), where the CPU has the dot-product extension;
 *   neon        the same on widening multiplies (smull, sadalp), every AArch64 CPU;
 *   portable    C loops, every CPU.
 * All compute the same int32 sums (exact, wrapping), then the same finish (qgemm.h).
 * Beside them, where the CPU has Intel AMX (Sapphire Rapids on) and Linux grants the
 * tiles, the matrix products (MatMulInteger and the ops on it, M of 16 rows or more) run
 * on amx: TDPBSUD on 16 x 64-byte tiles, L in whole rows (mlrt_qgemm_pack_l_rows), R's
 * panels read as they are packed (mlrt_qgemm_panel_amx); and the convolutions over
 * channel-quad planes, R's groups read where they lie (mlrt_qgemm_panel_amx_at). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "qgemm.h"

#if defined(__x86_64__) && defined(__linux__) && (__GNUC__ >= 11 || defined(__clang__))
#define QG_AMX 1
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define QG_X86 1 /* (qgemm.h includes immintrin.h) */
#endif

#define MR MLRT_QGEMM_MR
#define NR MLRT_QGEMM_NR

/* o moved to the block of C that starts m0 rows down */
static inline void qg_block_out(const mlrt_qgemm_out *o, int64_t m0, mlrt_qgemm_out *b) {
    *b = *o;
    if (b->row_add) b->row_add += m0;
    if (b->row_mul) b->row_mul += m0;
    if (b->scale && b->scale_mode == MLRT_QSCALE_ROW) b->scale += m0;
    if (b->fbias && !b->fbias_col) b->fbias += m0;
    b->c = (char *)b->c + (size_t)(m0 * o->ldc) * mlrt_qgemm_out_size(o);
}

/* -- packing ------------------------------------------------------------------------------------ */

void mlrt_qgemm_pack_l(const uint8_t *src, int64_t M, int64_t K, int64_t ld, int64_t cs, bool flip, int8_t *dst,
                       int32_t *rowsum) {
    int64_t K4 = (K + 3) / 4, panels = (M + MR - 1) / MR;
    uint8_t f = flip ? 0x80 : 0;
    memset(dst, 0, (size_t)(panels * K4 * MR * 4));
    for (int64_t m = 0; m < M; ++m) {
        int8_t *p = dst + (m / MR) * K4 * MR * 4 + (m % MR) * 4;
        const uint8_t *s = src + m * ld;
        int32_t sum = 0;
        int64_t k = 0;
        if (cs == 1) { /* contiguous k: four bytes at a time */
            uint32_t f4 = 0x01010101u * f;
            for (; k + 4 <= K; k += 4) {
                uint32_t w;
                memcpy(&w, s + k, 4);
                w ^= f4;
                memcpy(p + (k / 4) * MR * 4, &w, 4);
            }
            for (int64_t i = 0; i < k; ++i) sum += (int8_t)(s[i] ^ f);
        }
        for (; k < K; ++k) {
            int8_t v = (int8_t)(s[k * cs] ^ f);
            p[(k / 4) * MR * 4 + k % 4] = v;
            sum += v;
        }
        if (rowsum) rowsum[m] = sum;
    }
}

MLRT_ISA_FN(, void, pack_l_row, (const uint8_t *s, int64_t K, uint8_t f, int8_t *p, int32_t *sum),
            (s, K, f, p, sum)) {
    int32_t total = 0;
    for (int64_t k = 0; k < K; ++k) {
        int8_t v = (int8_t)(s[k] ^ f);
        p[k] = v;
        total += v;
    }
    *sum = total;
}

void mlrt_qgemm_pack_l_rows(const uint8_t *src, int64_t M, int64_t K, int64_t ld, int64_t cs, bool flip, int8_t *dst,
                            int32_t *rowsum) {
    int64_t K64 = mlrt_qgemm_row_bytes(K);
    uint8_t f = flip ? 0x80 : 0;
    for (int64_t m = 0; m < M; ++m) {
        int8_t *p = dst + m * K64;
        const uint8_t *s = src + m * ld;
        int32_t sum = 0;
        if (cs == 1) {
            pack_l_row(s, K, f, p, &sum);
        } else {
            for (int64_t k = 0; k < K; ++k) {
                p[k] = (int8_t)(s[k * cs] ^ f);
                sum += p[k];
            }
        }
        memset(p + K, 0, (size_t)(K64 - K));
        if (rowsum) rowsum[m] = sum;
    }
}

static void pack_r_portable(const uint8_t *const *rows, int64_t K, int64_t n, bool flip, uint8_t *dst,
                            int32_t *colsum) {
    uint8_t f = flip ? 0x80 : 0;
    int64_t K4 = (K + 3) / 4;
    memset(dst, 0, (size_t)(K4 * NR * 4));
    for (int64_t k = 0; k < K; ++k) {
        uint8_t *q = dst + (k / 4) * NR * 4 + k % 4;
        const uint8_t *r = rows[k];
        for (int64_t j = 0; j < n; ++j) q[j * 4] = r[j] ^ f;
        if (colsum)
            for (int64_t j = 0; j < n; ++j) colsum[j] += q[j * 4];
    }
}

#ifdef QG_X86
/* Four rows of up to 64 bytes (masked loads; absent rows and columns zero) into 64 quads. */
__attribute__((target("avx512f,avx512bw"))) static void pack_r_avx512(const uint8_t *const *rows, int64_t K,
                                                                       int64_t n, bool flip, uint8_t *dst,
                                                                       int32_t *colsum) {
    __mmask64 mask = n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
    __m512i f = _mm512_set1_epi8(flip ? (char)0x80 : 0), ones8 = _mm512_set1_epi8(1), ones16 = _mm512_set1_epi16(1);
    __m512i cs[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
    for (int64_t k = 0; k < K; k += 4) {
        __m512i r[4];
        for (int i = 0; i < 4; ++i)
            r[i] = k + i < K ? _mm512_maskz_mov_epi8(mask, _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, rows[k + i]), f))
                             : _mm512_setzero_si512();
        __m512i o[4];
        mlrt_quads_avx512(r, o);
        uint8_t *q = dst + (k / 4) * NR * 4;
        for (int j = 0; j < 4; ++j) {
            _mm512_storeu_si512((void *)(q + 64 * j), o[j]);
            if (colsum) cs[j] = _mm512_add_epi32(cs[j], _mm512_madd_epi16(_mm512_maddubs_epi16(o[j], ones8), ones16));
        }
    }
    if (colsum)
        for (int j = 0; j < 4 && 16 * j < n; ++j) {
            int64_t w = n - 16 * j < 16 ? n - 16 * j : 16;
            __mmask16 m = (__mmask16)((1u << w) - 1);
            _mm512_mask_storeu_epi32(colsum + 16 * j,
                                     m, _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, colsum + 16 * j), cs[j]));
        }
}

/* Four rows of 32 bytes at a time (two per panel of 64 columns; partial panels portable):
 * per 128-bit lane the unpacks give quads of columns 16L.., 16L + 4.., 16L + 8..,
 * 16L + 12.., which the lane permutes put in column order. */
__attribute__((target("avx2"))) static void pack_r_avx2(const uint8_t *const *rows, int64_t K, int64_t n, bool flip,
                                                        uint8_t *dst, int32_t *colsum) {
    if (n != NR) {
        pack_r_portable(rows, K, n, flip, dst, colsum);
        return;
    }
    __m256i f = _mm256_set1_epi8(flip ? (char)0x80 : 0), ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
    __m256i cs[8];
    for (int j = 0; j < 8; ++j) cs[j] = _mm256_setzero_si256();
    for (int64_t k = 0; k < K; k += 4) {
        uint8_t *q = dst + (k / 4) * NR * 4;
        for (int h = 0; h < 2; ++h) {
            __m256i r[4];
            for (int i = 0; i < 4; ++i)
                r[i] = k + i < K ? _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(rows[k + i] + 32 * h)), f)
                                 : _mm256_setzero_si256();
            __m256i ab_lo = _mm256_unpacklo_epi8(r[0], r[1]), ab_hi = _mm256_unpackhi_epi8(r[0], r[1]);
            __m256i cd_lo = _mm256_unpacklo_epi8(r[2], r[3]), cd_hi = _mm256_unpackhi_epi8(r[2], r[3]);
            __m256i q0 = _mm256_unpacklo_epi16(ab_lo, cd_lo), q1 = _mm256_unpackhi_epi16(ab_lo, cd_lo);
            __m256i q2 = _mm256_unpacklo_epi16(ab_hi, cd_hi), q3 = _mm256_unpackhi_epi16(ab_hi, cd_hi);
            __m256i o[4] = {_mm256_permute2x128_si256(q0, q1, 0x20), _mm256_permute2x128_si256(q2, q3, 0x20),
                            _mm256_permute2x128_si256(q0, q1, 0x31), _mm256_permute2x128_si256(q2, q3, 0x31)};
            for (int j = 0; j < 4; ++j) {
                _mm256_storeu_si256((__m256i *)(q + 128 * h + 32 * j), o[j]);
                if (colsum)
                    cs[4 * h + j] = _mm256_add_epi32(cs[4 * h + j],
                                                     _mm256_madd_epi16(_mm256_maddubs_epi16(o[j], ones8), ones16));
            }
        }
    }
    if (colsum)
        for (int j = 0; j < 8; ++j)
            _mm256_storeu_si256((__m256i *)(colsum + 8 * j),
                                _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(colsum + 8 * j)), cs[j]));
}
#endif

/* -- tile kernels ------------------------------------------------------------------------------- */

/* R's group q of four k: at R + q * NR * 4 (a packed panel), or at R + qoff[q] (the
 * "_at" kernels: groups anywhere, each 64 columns' quads in a row) */
typedef void (*qg_tile_fn)(const int8_t *L, const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t mr, int64_t n,
                           const mlrt_qgemm_out *o);
#define QG_PACKED(q) (R + (q) * NR * 4)
#define QG_AT(q) (R + qoff[q])

#define DEFINE_TILE_PORTABLE(NAME, ADDR)                                                                              \
    static void NAME(const int8_t *L, const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t mr, int64_t n,      \
                     const mlrt_qgemm_out *o) {                                                                      \
        uint32_t acc[MR][NR]; /* (wrapping) */                                                                        \
        (void)qoff;                                                                                                   \
        memset(acc, 0, sizeof acc);                                                                                   \
        for (int64_t q = 0; q < K4; ++q) {                                                                            \
            const uint8_t *r = ADDR(q);                                                                               \
            const int8_t *l = L + q * MR * 4;                                                                         \
            for (int64_t i = 0; i < mr; ++i) {                                                                        \
                int32_t l0 = l[i * 4], l1 = l[i * 4 + 1], l2 = l[i * 4 + 2], l3 = l[i * 4 + 3];                       \
                for (int64_t j = 0; j < n; ++j)                                                                       \
                    acc[i][j] += (uint32_t)(l0 * r[j * 4] + l1 * r[j * 4 + 1] + l2 * r[j * 4 + 2] + l3 * r[j * 4 + 3]); \
            }                                                                                                         \
        }                                                                                                             \
        for (int64_t i = 0; i < mr; ++i)                                                                              \
            for (int64_t j = 0; j < n; ++j) mlrt_qgemm_store1(o, i, j, (int32_t)acc[i][j]);                           \
    }
DEFINE_TILE_PORTABLE(tile_portable, QG_PACKED)
DEFINE_TILE_PORTABLE(tile_portable_at, QG_AT)

#ifdef QG_X86
/* The finish of mlrt_qgemm_out for a tile (up to 64 columns), its fields and constant
 * vectors in locals: the stores to C (char) could alias o's fields, which the compiler
 * would then read again after every store. */
typedef struct qg_fin {
    const int32_t *row_add, *col_add, *row_mul, *col_mul;
    const float *scale, *fbias;
    int32_t mode, nv;
    bool requant, u8, fl, fbias_col, clamp; /* requantized to 8 bits; float output; its bias by column; clamped */
    char *c;
    int64_t ldc; /* bytes */
    __mmask16 k[4];
    __mmask64 k64;
    __m512 flo, fhi, s1;
    __m512i zp;
} qg_fin;

__attribute__((target("avx512f,avx512bw"), always_inline)) static inline void qg_fin_init(qg_fin *f,
                                                                                          const mlrt_qgemm_out *o,
                                                                                          int64_t n) {
    f->row_add = o->row_add, f->col_add = o->col_add, f->row_mul = o->row_mul, f->col_mul = o->col_mul;
    f->scale = o->scale, f->mode = o->scale_mode, f->u8 = o->out_type == MLRT_UINT8;
    f->fl = o->out_type == MLRT_FLOAT, f->requant = o->scale != NULL && !f->fl, f->fbias = o->fbias;
    f->fbias_col = o->fbias_col, f->clamp = mlrt_qgemm_clamps(o);
    f->c = o->c, f->ldc = o->ldc * (int64_t)mlrt_qgemm_out_size(o), f->nv = (int32_t)((n + 15) / 16);
    for (int u = 0; u < 4; ++u) {
        int64_t w = n - 16 * u;
        f->k[u] = w >= 16 ? (__mmask16)0xFFFF : w <= 0 ? 0 : (__mmask16)((1u << w) - 1);
    }
    f->k64 = n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
    f->flo = f->fhi = f->s1 = _mm512_setzero_ps(), f->zp = _mm512_setzero_si512();
    if (f->requant) {
        f->flo = _mm512_set1_ps((float)(o->lo - o->zp)), f->fhi = _mm512_set1_ps((float)(o->hi - o->zp));
        f->zp = _mm512_set1_epi32(o->zp);
        f->s1 = _mm512_set1_ps(o->scale[0]);
    }
    if (f->fl) f->flo = _mm512_set1_ps(o->flo), f->fhi = _mm512_set1_ps(o->fhi), f->s1 = _mm512_set1_ps(o->scale[0]);
}

/* Row i of the tile: v[u] holds columns 16 u ... (vectors past the tile's ignored). */
__attribute__((target("avx512f,avx512bw"), always_inline)) static inline void qg_store64(const qg_fin *f, int64_t i,
                                                                                         __m512i v0, __m512i v1,
                                                                                         __m512i v2, __m512i v3) {
    __m512i v[4] = {v0, v1, v2, v3};
    int nv = f->nv;
    if (f->row_add) {
        __m512i r = _mm512_set1_epi32(f->row_add[i]);
        for (int u = 0; u < nv; ++u) v[u] = _mm512_add_epi32(v[u], r);
    }
    if (f->col_add)
        for (int u = 0; u < nv; ++u) v[u] = _mm512_add_epi32(v[u], _mm512_maskz_loadu_epi32(f->k[u], f->col_add + 16 * u));
    if (f->row_mul) {
        __m512i r = _mm512_set1_epi32(f->row_mul[i]);
        for (int u = 0; u < nv; ++u)
            v[u] = _mm512_add_epi32(v[u], _mm512_mullo_epi32(r, _mm512_maskz_loadu_epi32(f->k[u], f->col_mul + 16 * u)));
    }
    char *c = f->c + i * f->ldc;
    if (f->fl) { /* (mul, add, max, min: each rounded as the float32 nodes it stands for) */
        __m512 s = f->mode == MLRT_QSCALE_ROW ? _mm512_set1_ps(f->scale[i]) : f->s1;
        __m512 b = f->fbias && !f->fbias_col ? _mm512_set1_ps(f->fbias[i]) : _mm512_setzero_ps();
        for (int u = 0; u < nv; ++u) {
            __m512 su = f->mode == MLRT_QSCALE_COL ? _mm512_maskz_loadu_ps(f->k[u], f->scale + 16 * u) : s;
            __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(v[u]), su);
            if (f->fbias) x = _mm512_add_ps(x, f->fbias_col ? _mm512_maskz_loadu_ps(f->k[u], f->fbias + 16 * u) : b);
            if (f->clamp) x = _mm512_min_ps(_mm512_max_ps(x, f->flo), f->fhi);
            _mm512_mask_storeu_ps((float *)c + 16 * u, f->k[u], x);
        }
        return;
    }
    if (!f->requant) {
        for (int u = 0; u < nv; ++u) _mm512_mask_storeu_epi32((int32_t *)c + 16 * u, f->k[u], v[u]);
        return;
    }
    __m512 s = f->mode == MLRT_QSCALE_ROW ? _mm512_set1_ps(f->scale[i]) : f->s1;
    for (int u = 0; u < 4; ++u) {
        if (u >= nv) {
            v[u] = _mm512_setzero_si512();
            continue;
        }
        __m512 su = f->mode == MLRT_QSCALE_COL ? _mm512_maskz_loadu_ps(f->k[u], f->scale + 16 * u) : s;
        __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(v[u]), su);
        x = _mm512_min_ps(_mm512_max_ps(x, f->flo), f->fhi); /* (a NaN product: max's second operand, the low end) */
        v[u] = _mm512_add_epi32(_mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), f->zp);
    }
    /* in range now: the saturating packs keep the values; per 128-bit lane L they give
     * v0[4L..4L+3], v1[4L..], v2[4L..], v3[4L..], which the permute puts in column order */
    __m512i w01 = _mm512_packs_epi32(v[0], v[1]), w23 = _mm512_packs_epi32(v[2], v[3]);
    __m512i b = f->u8 ? _mm512_packus_epi16(w01, w23) : _mm512_packs_epi16(w01, w23);
    b = _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), b);
    _mm512_mask_storeu_epi8(c, f->k64, b);
}

/* MR rows x NV vectors of 16 columns, the MR * NV sums in named registers (arrays of them
 * end up on the stack); rows past mr are computed on L's zero rows and not stored.
 * STEP(i) multiplies row i's broadcast quad into the row's nv (= NV) sums. */
#define QG_ZERO4(i) __m512i a##i##0 = z, a##i##1 = z, a##i##2 = z, a##i##3 = z;
#define QG_STORE4(i)                                                                                                  \
    if (i < mrc && i < mr) qg_store64(&fin, i, a##i##0, a##i##1, a##i##2, a##i##3);
#define QG_BROADCAST(i) _mm512_set1_epi32(qg_quad(l + 4 * (i)))

static inline int32_t qg_quad(const int8_t *p) {
    int32_t w;
    memcpy(&w, p, 4);
    return w;
}

#define QG_VNNI_STEP(i)                                                                                               \
    {                                                                                                                 \
        __m512i b = QG_BROADCAST(i);                                                                                  \
        a##i##0 = _mm512_dpbusd_epi32(a##i##0, r0, b);                                                                \
        if (nv > 1) a##i##1 = _mm512_dpbusd_epi32(a##i##1, r1, b);                                                    \
        if (nv > 2) a##i##2 = _mm512_dpbusd_epi32(a##i##2, r2, b);                                                    \
        if (nv > 3) a##i##3 = _mm512_dpbusd_epi32(a##i##3, r3, b);                                                    \
    }

/* Without VNNI: each quad split into its even and odd bytes as 16-bit values, two
 * vpmaddwd per broadcast row and vector (4 products, exact). */
#define QG_BW_MAC(acc, v, be, bo)                                                                                     \
    acc = _mm512_add_epi32(acc, _mm512_add_epi32(_mm512_madd_epi16(_mm512_and_si512(v, lo8), be),                     \
                                                 _mm512_madd_epi16(_mm512_srli_epi16(v, 8), bo)))
#define QG_BW_STEP(i)                                                                                                 \
    {                                                                                                                 \
        __m512i b = QG_BROADCAST(i);                                                                                  \
        __m512i be = _mm512_srai_epi16(_mm512_slli_epi16(b, 8), 8), bo = _mm512_srai_epi16(b, 8);                     \
        QG_BW_MAC(a##i##0, r0, be, bo);                                                                               \
        if (nv > 1) QG_BW_MAC(a##i##1, r1, be, bo);                                                                   \
        if (nv > 2) QG_BW_MAC(a##i##2, r2, be, bo);                                                                   \
        if (nv > 3) QG_BW_MAC(a##i##3, r3, be, bo);                                                                   \
    }

#define DEFINE_TILE(NAME, NV, MRC, TARGET, STEP, ADDR)                                                                \
    __attribute__((target(TARGET))) static void tile_##NAME##_##NV##_##MRC(const int8_t *L, const uint8_t *R,         \
                                                                           const int64_t *qoff, int64_t K4,           \
                                                                           int64_t mr, int64_t n,                     \
                                                                           const mlrt_qgemm_out *o) {                 \
        const int nv = NV, mrc = MRC; /* (rows past mrc: not computed) */                                             \
        const __m512i z = _mm512_setzero_si512(), lo8 = _mm512_set1_epi16(0x00FF);                                   \
        (void)lo8, (void)qoff;                                                                                        \
        qg_fin fin;                                                                                                   \
        qg_fin_init(&fin, o, n);                                                                                      \
        QG_ZERO4(0) QG_ZERO4(1) QG_ZERO4(2) QG_ZERO4(3) QG_ZERO4(4) QG_ZERO4(5)                                       \
        for (int64_t q = 0; q < K4; ++q) {                                                                            \
            const uint8_t *r = ADDR(q);                                                                               \
            const int8_t *l = L + q * MR * 4;                                                                         \
            __m512i r0 = _mm512_loadu_si512((const void *)r), r1 = z, r2 = z, r3 = z;                                 \
            if (nv > 1) r1 = _mm512_loadu_si512((const void *)(r + 64));                                              \
            if (nv > 2) r2 = _mm512_loadu_si512((const void *)(r + 128));                                             \
            if (nv > 3) r3 = _mm512_loadu_si512((const void *)(r + 192));                                             \
            STEP(0) if (mrc > 1) STEP(1) if (mrc > 2) STEP(2) if (mrc > 3) STEP(3) if (mrc > 4) STEP(4)               \
            if (mrc > 5) STEP(5)                                                                                      \
        }                                                                                                             \
        QG_STORE4(0) QG_STORE4(1) QG_STORE4(2) QG_STORE4(3) QG_STORE4(4) QG_STORE4(5)                                 \
    }
#if MLRT_QGEMM_MR != 6
#error "the tile kernels are written for MLRT_QGEMM_MR 6"
#endif
/* one kernel per vectors of columns (1..4) and rows computed (1..6) */
#define DEFINE_TILES_NV(NAME, NV, TARGET, STEP, ADDR)                                                                 \
    DEFINE_TILE(NAME, NV, 1, TARGET, STEP, ADDR) DEFINE_TILE(NAME, NV, 2, TARGET, STEP, ADDR)                         \
    DEFINE_TILE(NAME, NV, 3, TARGET, STEP, ADDR) DEFINE_TILE(NAME, NV, 4, TARGET, STEP, ADDR)                         \
    DEFINE_TILE(NAME, NV, 5, TARGET, STEP, ADDR) DEFINE_TILE(NAME, NV, 6, TARGET, STEP, ADDR)
#define DEFINE_TILES(NAME, TARGET, STEP, ADDR)                                                                        \
    DEFINE_TILES_NV(NAME, 1, TARGET, STEP, ADDR) DEFINE_TILES_NV(NAME, 2, TARGET, STEP, ADDR)                         \
    DEFINE_TILES_NV(NAME, 3, TARGET, STEP, ADDR) DEFINE_TILES_NV(NAME, 4, TARGET, STEP, ADDR)
#define TILE_ROW(NAME, NV)                                                                                            \
    {tile_##NAME##_##NV##_1, tile_##NAME##_##NV##_2, tile_##NAME##_##NV##_3, tile_##NAME##_##NV##_4,                  \
     tile_##NAME##_##NV##_5, tile_##NAME##_##NV##_6}
#define TILE_TABLE(NAME) {TILE_ROW(NAME, 1), TILE_ROW(NAME, 2), TILE_ROW(NAME, 3), TILE_ROW(NAME, 4)}
DEFINE_TILES(vnni, "avx512f,avx512bw,avx512vnni", QG_VNNI_STEP, QG_PACKED)
DEFINE_TILES(bw, "avx512f,avx512bw", QG_BW_STEP, QG_PACKED)
DEFINE_TILES(vnni_at, "avx512f,avx512bw,avx512vnni", QG_VNNI_STEP, QG_AT)
DEFINE_TILES(bw_at, "avx512f,avx512bw", QG_BW_STEP, QG_AT)
static const qg_tile_fn tiles_vnni[4][MR] = TILE_TABLE(vnni), tiles_bw[4][MR] = TILE_TABLE(bw);
static const qg_tile_fn tiles_vnni_at[4][MR] = TILE_TABLE(vnni_at), tiles_bw_at[4][MR] = TILE_TABLE(bw_at);

#ifdef QG_AMX
/* -- AMX: a block of 16 rows of C by one R panel (up to 64 columns) -------------------------------
 * Tiles 0-3 hold C (16 rows x 16 int32 each), tile 4 sixteen rows of L (64 bytes: 16
 * groups of four k), tiles 5-7 R's quads of those 16 groups for 16 columns each, loaded
 * from the packed panel as it lies (one group's 64 columns a row of NR * 4 bytes).  The
 * last step's groups past K4 multiply L's zero bytes (the rows are padded to K64) by
 * whatever follows the panel: MLRT_QGEMM_R_SLACK bytes the buffer holding R must have. */
typedef struct qg_amx_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} qg_amx_config;

#define QG_AMX_TARGET "amx-tile,amx-int8,avx512f,avx512bw"
#define QG_AMX_DP(c, b, col)                                                                                          \
    {                                                                                                                 \
        _tile_loadd(b, r + 4 * (col), rstride);                                                                       \
        _tile_dpbsud(c, 4, b);                                                                                        \
    }

/* One block of 16 rows of C: step s multiplies 64 bytes of each row of L (rows lrow bytes
 * apart) by the 16 groups of four k at r + g * rstride (g = 0..15), r = R + soff[s] (soff
 * NULL: the packed panel's groups, r = R + s * 16 * NR * 4 and rstride NR * 4), each
 * group's quads of 16 columns a tile row, the column tiles 64 bytes apart. */
__attribute__((target(QG_AMX_TARGET))) static void qg_amx_block(const int8_t *L, int64_t lrow, int64_t steps,
                                                                const uint8_t *R, const int64_t *soff,
                                                                int64_t rstride, int64_t nt, int32_t *acc) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t s = 0; s < steps; ++s) {
        const uint8_t *r = R + (soff ? soff[s] : s * 16 * NR * 4);
        _tile_loadd(4, L + s * 64, lrow);
        QG_AMX_DP(0, 5, 0)
        if (nt > 1) QG_AMX_DP(1, 6, 16)
        if (nt > 2) QG_AMX_DP(2, 7, 32)
        if (nt > 3) QG_AMX_DP(3, 5, 48)
    }
    _tile_stored(0, acc, NR * 4);
    if (nt > 1) _tile_stored(1, acc + 16, NR * 4);
    if (nt > 2) _tile_stored(2, acc + 32, NR * 4);
    if (nt > 3) _tile_stored(3, acc + 48, NR * 4);
}

__attribute__((target(QG_AMX_TARGET))) static void qg_amx_panel(const int8_t *L, int64_t M, int64_t lrow,
                                                                int64_t steps, const uint8_t *R, const int64_t *soff,
                                                                int64_t rstride, int64_t n, const mlrt_qgemm_out *o) {
    static const qg_amx_config config = {.palette = 1,
                                         .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
                                         .rows = {16, 16, 16, 16, 16, 16, 16, 16}};
    _Alignas(64) int32_t acc[16 * NR];
    int64_t nt = (n + 15) / 16;
    _tile_loadconfig(&config);
    for (int64_t m0 = 0; m0 < M; m0 += 16) {
        qg_amx_block(L + m0 * lrow, lrow, steps, R, soff, rstride, nt, acc);
        mlrt_qgemm_out b;
        qg_block_out(o, m0, &b);
        qg_fin fin;
        qg_fin_init(&fin, &b, n);
        __m512i z = _mm512_setzero_si512();
        for (int64_t i = 0; i < 16 && m0 + i < M; ++i) {
            const int32_t *a = acc + i * NR;
            qg_store64(&fin, i, _mm512_load_si512(a), nt > 1 ? _mm512_load_si512(a + 16) : z,
                       nt > 2 ? _mm512_load_si512(a + 32) : z, nt > 3 ? _mm512_load_si512(a + 48) : z);
        }
    }
    _tile_release();
}
#endif

/* AVX2 / AVX-VNNI: the tile in passes of CW vectors of 8 columns, MR rows. */
__attribute__((target("avx2"), always_inline)) static inline void qg_store256(const mlrt_qgemm_out *o, int64_t i,
                                                                              int64_t c0, int64_t w,
                                                                              const __m256i *acc, int cw) {
    /* w <= 8 cw columns from c0 of row i; acc[u] holds columns c0 + 8u .. */
    __m256i v[2] = {acc[0], cw > 1 ? acc[1] : _mm256_setzero_si256()};
    __m256i k[2]; /* columns inside the tile, for the masked loads and stores */
    for (int u = 0; u < 2; ++u)
        k[u] = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)w),
                                  _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(8 * u)));
    for (int u = 0; u < cw; ++u) {
        if (o->row_add) v[u] = _mm256_add_epi32(v[u], _mm256_set1_epi32(o->row_add[i]));
        if (o->col_add) v[u] = _mm256_add_epi32(v[u], _mm256_maskload_epi32(o->col_add + c0 + 8 * u, k[u]));
        if (o->row_mul)
            v[u] = _mm256_add_epi32(v[u], _mm256_mullo_epi32(_mm256_set1_epi32(o->row_mul[i]),
                                                             _mm256_maskload_epi32(o->col_mul + c0 + 8 * u, k[u])));
    }
    if (!o->scale) {
        int32_t *c = (int32_t *)o->c + i * o->ldc + c0;
        for (int u = 0; u < cw; ++u) _mm256_maskstore_epi32(c + 8 * u, k[u], v[u]);
        return;
    }
    if (o->out_type == MLRT_FLOAT) { /* (mul, add, max, min: each rounded as the float32 nodes it stands for) */
        float *c = (float *)o->c + i * o->ldc + c0;
        __m256 flo = _mm256_set1_ps(o->flo), fhi = _mm256_set1_ps(o->fhi);
        bool clamp = mlrt_qgemm_clamps(o);
        __m256 b = _mm256_set1_ps(o->fbias && !o->fbias_col ? o->fbias[i] : 0.0f);
        for (int u = 0; u < cw; ++u) {
            __m256 s = o->scale_mode == MLRT_QSCALE_COL ? _mm256_maskload_ps(o->scale + c0 + 8 * u, k[u])
                                                        : _mm256_set1_ps(o->scale[o->scale_mode == MLRT_QSCALE_ROW ? i : 0]);
            __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(v[u]), s);
            if (o->fbias) x = _mm256_add_ps(x, o->fbias_col ? _mm256_maskload_ps(o->fbias + c0 + 8 * u, k[u]) : b);
            if (clamp) x = _mm256_min_ps(_mm256_max_ps(x, flo), fhi);
            _mm256_maskstore_ps(c + 8 * u, k[u], x);
        }
        return;
    }
    __m256 flo = _mm256_set1_ps((float)(o->lo - o->zp)), fhi = _mm256_set1_ps((float)(o->hi - o->zp));
    for (int u = 0; u < cw; ++u) {
        __m256 s = o->scale_mode == MLRT_QSCALE_COL ? _mm256_maskload_ps(o->scale + c0 + 8 * u, k[u])
                                                    : _mm256_set1_ps(o->scale[o->scale_mode == MLRT_QSCALE_ROW ? i : 0]);
        __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(v[u]), s);
        x = _mm256_min_ps(_mm256_max_ps(x, flo), fhi); /* (a NaN product: max's second operand, the low end) */
        v[u] = _mm256_add_epi32(_mm256_cvtps_epi32(x), _mm256_set1_epi32(o->zp)); /* (nearest even: the default) */
    }
    /* in range: the packs keep the values; per 128-bit lane: v0[0-3], v1[0-3] | v0[4-7], v1[4-7]
     * as bytes (twice), which the permute puts in column order */
    __m256i w16 = _mm256_packs_epi32(v[0], v[1]);
    __m256i b = o->out_type == MLRT_UINT8 ? _mm256_packus_epi16(w16, w16) : _mm256_packs_epi16(w16, w16);
    b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    char *c = (char *)o->c + i * o->ldc + c0;
    if (w == 16) {
        _mm_storeu_si128((__m128i *)c, _mm256_castsi256_si128(b));
    } else if (w == 8 && cw == 1) {
        _mm_storel_epi64((__m128i *)c, _mm256_castsi256_si128(b));
    } else {
        uint8_t tmp[16];
        _mm_storeu_si128((__m128i *)tmp, _mm256_castsi256_si128(b));
        memcpy(c, tmp, (size_t)w);
    }
}

#define QG_AVXVNNI_MAC(acc, r, b) acc = _mm256_dpbusd_avx_epi32(acc, r, b)
#define QG_AVX2_MAC(acc, r, b)                                                                                        \
    acc = _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(_mm256_and_si256(r, lo8), b##e),                   \
                                                 _mm256_madd_epi16(_mm256_srli_epi16(r, 8), b##o)))
/* (AVX2: the broadcast quad's even and odd bytes, sign-extended to 16 bits) */
#define QG_AVX2_SPLIT(b) __m256i b##e = _mm256_srai_epi16(_mm256_slli_epi16(b, 8), 8), b##o = _mm256_srai_epi16(b, 8);
#define QG_AVXVNNI_SPLIT(b)
#define DEFINE_TILE256(NAME, TARGET, CW, MAC, SPLIT, ADDR)                                                            \
    __attribute__((target(TARGET))) static void tile_##NAME(const int8_t *L, const uint8_t *R, const int64_t *qoff,  \
                                                             int64_t K4, int64_t mr, int64_t n,                      \
                                                             const mlrt_qgemm_out *o) {                              \
        const __m256i lo8 = _mm256_set1_epi16(0x00FF);                                                                \
        (void)lo8, (void)qoff;                                                                                        \
        for (int64_t c0 = 0; c0 < n; c0 += 8 * CW) {                                                                  \
            __m256i a[MR][CW];                                                                                        \
            for (int i = 0; i < MR; ++i)                                                                              \
                for (int u = 0; u < CW; ++u) a[i][u] = _mm256_setzero_si256();                                       \
            for (int64_t q = 0; q < K4; ++q) {                                                                        \
                const uint8_t *r = ADDR(q) + c0 * 4;                                                                  \
                const int8_t *l = L + q * MR * 4;                                                                     \
                __m256i rv[CW];                                                                                       \
                for (int u = 0; u < CW; ++u) rv[u] = _mm256_loadu_si256((const __m256i *)(r + 32 * u));               \
                for (int i = 0; i < MR; ++i) { /* (rows past mr: L's zero rows, not stored) */                       \
                    __m256i b = _mm256_set1_epi32(qg_quad(l + 4 * i));                                                \
                    SPLIT(b)                                                                                          \
                    for (int u = 0; u < CW; ++u) MAC(a[i][u], rv[u], b);                                              \
                }                                                                                                     \
            }                                                                                                         \
            int64_t w = n - c0 < 8 * CW ? n - c0 : 8 * CW;                                                            \
            for (int64_t i = 0; i < mr; ++i) qg_store256(o, i, c0, w, a[i], CW);                                      \
        }                                                                                                             \
    }
DEFINE_TILE256(avxvnni, "avx2,avxvnni", 2, QG_AVXVNNI_MAC, QG_AVXVNNI_SPLIT, QG_PACKED)
DEFINE_TILE256(avx2, "avx2", 1, QG_AVX2_MAC, QG_AVX2_SPLIT, QG_PACKED)
DEFINE_TILE256(avxvnni_at, "avx2,avxvnni", 2, QG_AVXVNNI_MAC, QG_AVXVNNI_SPLIT, QG_AT)
DEFINE_TILE256(avx2_at, "avx2", 1, QG_AVX2_MAC, QG_AVX2_SPLIT, QG_AT)
#endif

/* -- the table ---------------------------------------------------------------------------------- */

static struct {
    bool amx;               /* the matrix products on AMX (mlrt_qgemm_panel_amx) */
    qg_tile_fn tile[4][MR]; /* by vectors of 16 columns needed (1..4) and rows (1..MR); all portable ones the same */
    qg_tile_fn tile_at[4][MR]; /* the same reading R's groups at R + qoff[q] */
    void (*pack_r)(const uint8_t *const *, int64_t, int64_t, bool, uint8_t *, int32_t *);
    const char *name;
} qg;
static pthread_once_t qg_once = PTHREAD_ONCE_INIT;

static void qg_init(void) {
    /* MLRT_QGEMM_KERNEL caps the choice at a kernel (to test the others on a newer CPU):
     * (amx >) avx512vnni > avx512bw > avxvnni > avx2 > portable (AArch64: neondot > neon >
     * portable); amx, for the matrix products, goes with the avx512vnni tiles for the rest */
    static const char *const order[] = {"avx512vnni", "avx512bw", "avxvnni", "avx2", "portable"};
    const char *want = getenv("MLRT_QGEMM_KERNEL");
    int cap = 0;
    bool amx_allowed = !want || !*want || strcmp(want, "amx") == 0;
    for (int i = 0; want && *want && i < 5; ++i)
        if (strcmp(want, order[i]) == 0) cap = i;
    /* and MLRT_ISA (src/cpu.c): portable keeps the portable tiles, avx2 the AVX2 ones */
    enum mlrt_isa isa = mlrt_cpu_isa();
    if (isa == MLRT_ISA_PORTABLE || isa == MLRT_ISA_NEON) cap = 4;
    else if (isa == MLRT_ISA_AVX2 && cap < 2) cap = 2;
    for (int i = 0; i < 4; ++i)
        for (int r = 0; r < MR; ++r) qg.tile[i][r] = tile_portable, qg.tile_at[i][r] = tile_portable_at;
    qg.pack_r = pack_r_portable;
    qg.name = "portable";
#ifdef QG_X86
    bool avx512 = MLRT_X86_FEATURE(AVX512F) && MLRT_X86_FEATURE(AVX512BW);
    bool has[4] = {avx512 && MLRT_X86_FEATURE(AVX512VNNI), avx512,
                   MLRT_X86_FEATURE(AVX2) && MLRT_X86_FEATURE(AVXVNNI), MLRT_X86_FEATURE(AVX2)};
    int pick = cap;
    while (pick < 4 && !has[pick]) ++pick;
    if (pick <= 1) {
        qg.pack_r = pack_r_avx512;
        memcpy(qg.tile, pick == 0 ? tiles_vnni : tiles_bw, sizeof qg.tile);
        memcpy(qg.tile_at, pick == 0 ? tiles_vnni_at : tiles_bw_at, sizeof qg.tile_at);
    } else if (pick <= 3) {
        qg.pack_r = pack_r_avx2;
        for (int i = 0; i < 4; ++i)
            for (int r = 0; r < MR; ++r) {
                qg.tile[i][r] = pick == 2 ? tile_avxvnni : tile_avx2;
                qg.tile_at[i][r] = pick == 2 ? tile_avxvnni_at : tile_avx2_at;
            }
    }
    qg.name = order[pick];
#ifdef QG_AMX
    /* the tiles' state is granted per process (arch_prctl ARCH_REQ_XCOMP_PERM for XTILEDATA) */
    if (amx_allowed && pick == 0 && MLRT_X86_FEATURE(AMX_TILE) && MLRT_X86_FEATURE(AMX_INT8) &&
        syscall(SYS_arch_prctl, 0x1023, 18) == 0)
        qg.amx = true;
#endif
    (void)amx_allowed;
#elif defined(__aarch64__)
    /* neondot > neon > portable, capped the same way */
    int pick = isa != MLRT_ISA_NEON || (want && strcmp(want, "portable") == 0) ? 2
               : (want && strcmp(want, "neon") == 0) || !strstr(mlrt_cpu_features(), "dotprod") ? 1
                                                                                                : 0;
    if (pick < 2)
        for (int i = 0; i < 4; ++i)
            for (int r = 0; r < MR; ++r) {
                qg.tile[i][r] = pick == 0 ? mlrt_qgemm_tile_sdot : mlrt_qgemm_tile_neon;
                qg.tile_at[i][r] = pick == 0 ? mlrt_qgemm_tile_sdot_at : mlrt_qgemm_tile_neon_at;
            }
    qg.name = pick == 0 ? "neondot" : pick == 1 ? "neon" : "portable";
    (void)cap, (void)amx_allowed;
#else
    (void)cap, (void)amx_allowed;
#endif
}

const char *mlrt_qgemm_kernel_name(void) {
    pthread_once(&qg_once, qg_init);
    return qg.name;
}

void mlrt_qgemm_pack_r(const uint8_t *const *rows, int64_t K, int64_t n, bool flip, uint8_t *dst, int32_t *colsum) {
    pthread_once(&qg_once, qg_init);
    qg.pack_r(rows, K, n, flip, dst, colsum);
}

void mlrt_qgemm_pack_r_rows(const uint8_t *src, int64_t ld, int64_t K, int64_t n, bool flip, uint8_t *dst,
                            int32_t *colsum) {
    pthread_once(&qg_once, qg_init);
    if (colsum) memset(colsum, 0, (size_t)n * sizeof(int32_t));
    const uint8_t *rows[64];
    for (int64_t k0 = 0; k0 < K; k0 += 64) { /* 64 rows (16 groups of four) at a time */
        int64_t kc = K - k0 < 64 ? K - k0 : 64;
        for (int64_t k = 0; k < kc; ++k) rows[k] = src + (k0 + k) * ld;
        qg.pack_r(rows, kc, n, flip, dst + k0 * NR, colsum);
    }
}

static void qg_panel(qg_tile_fn const *tiles, const int8_t *L, int64_t M, int64_t K4, const uint8_t *R,
                     const int64_t *qoff, int64_t n, const mlrt_qgemm_out *o) {
    for (int64_t m0 = 0; m0 < M; m0 += MR) {
        mlrt_qgemm_out b;
        qg_block_out(o, m0, &b);
        int64_t mr = M - m0 < MR ? M - m0 : MR;
        tiles[mr - 1](L + (m0 / MR) * K4 * MR * 4, R, qoff, K4, mr, n, &b);
    }
}

void mlrt_qgemm_panel(const int8_t *L, int64_t M, int64_t K4, const uint8_t *R, int64_t n,
                      const mlrt_qgemm_out *o) {
    pthread_once(&qg_once, qg_init);
    if (n > 0) qg_panel(qg.tile[(n + 15) / 16 - 1], L, M, K4, R, NULL, n, o);
}

bool mlrt_qgemm_amx(void) {
    pthread_once(&qg_once, qg_init);
    return qg.amx;
}

void mlrt_qgemm_panel_amx(const int8_t *L, int64_t M, int64_t K, const uint8_t *R, int64_t n,
                          const mlrt_qgemm_out *o) {
    pthread_once(&qg_once, qg_init);
#ifdef QG_AMX
    int64_t K64 = mlrt_qgemm_row_bytes(K);
    if (qg.amx && n > 0) qg_amx_panel(L, M, K64, K64 / 64, R, NULL, NR * 4, n, o);
#else
    (void)L, (void)M, (void)K, (void)R, (void)n, (void)o;
#endif
}

void mlrt_qgemm_panel_amx_at(const int8_t *L, int64_t M, int64_t lrow, int64_t steps, const uint8_t *R,
                             const int64_t *soff, int64_t rstride, int64_t n, const mlrt_qgemm_out *o) {
    pthread_once(&qg_once, qg_init);
#ifdef QG_AMX
    if (qg.amx && n > 0) qg_amx_panel(L, M, lrow, steps, R, soff, rstride, n, o);
#else
    (void)L, (void)M, (void)lrow, (void)steps, (void)R, (void)soff, (void)rstride, (void)n, (void)o;
#endif
}

void mlrt_qgemm_panel_at(const int8_t *L, int64_t M, int64_t K4, const uint8_t *R, const int64_t *qoff, int64_t n,
                         const mlrt_qgemm_out *o) {
    pthread_once(&qg_once, qg_init);
    if (n > 0) qg_panel(qg.tile_at[(n + 15) / 16 - 1], L, M, K4, R, qoff, n, o);
}

/* (cloned per x86-64 level without fastmath.h's contraction: the product and the sum round apart) */
MLRT_ISA_FN(, void, float_row, (const mlrt_qgemm_out *o, int64_t i, void *c, int64_t n), (o, i, c, n)) {
    int32_t *v = c; /* (read and written as int32: each float goes back through a union, no aliasing) */
    float s = o->scale[o->scale_mode == MLRT_QSCALE_ROW ? i : 0];
    float b = o->fbias && !o->fbias_col ? o->fbias[i] : 0.0f, lo = o->flo, hi = o->fhi;
    bool bias = o->fbias != NULL, clamp = mlrt_qgemm_clamps(o);
    for (int64_t j = 0; j < n; ++j) {
        union { float f; int32_t i; } x = {.f = (float)v[j] * s};
        if (bias) x.f = x.f + (o->fbias_col ? o->fbias[j] : b);
        if (clamp) {
            x.f = x.f > lo ? x.f : lo;
            x.f = x.f < hi ? x.f : hi;
        }
        v[j] = x.i;
    }
}

void mlrt_qgemm_float_row(const mlrt_qgemm_out *o, int64_t i, void *c, int64_t n) { float_row(o, i, c, n); }

void mlrt_qgemm_colsum_at(const uint8_t *R, const int64_t *qoff, int64_t K4, int64_t n, int32_t *colsum) {
    for (int64_t j = 0; j < n; ++j) colsum[j] = 0;
    for (int64_t q = 0; q < K4; ++q) {
        const uint8_t *r = R + qoff[q];
        for (int64_t j = 0; j < n; ++j) colsum[j] += r[4 * j] + r[4 * j + 1] + r[4 * j + 2] + r[4 * j + 3];
    }
}

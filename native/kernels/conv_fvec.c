/* conv_fvec.c -- Conv, filter-vector path: float32, 2-D (and 1-D as one row), one group, AVX-512.
 *
 * The other micro-kernel paths put output positions in the vector lanes and broadcast
 * the weights; their rows of input are a shifted run of one padded plane, which for
 * most taps starts mid-cache-line, and a row of an output 7 or 14 wide leaves lanes
 * empty.  Here the lanes hold 16 filters of one output position instead: a tile is
 * FV_NP positions (one output row, or 7 or fewer on each of two) times FV_V * 16
 * filters, its accumulators fed by one broadcast input value per position and FV_V
 * loads of packed weights per patch row (c, kh, kw).  A stride only spaces the
 * broadcasts.  The input is copied once per call into zero-padded blocks of 16 channels,
 * each position's 16 values side by side, and a tile runs block by block, each block's
 * taps, then its 16 channels: a tap's 16 patch rows broadcast from the same cache lines,
 * and the block's few rows under the tile stay in L1 for all its taps.  The weights,
 * packed once by the plan in that order (mlrt_conv_fvec_pack: per block of 32 filters,
 * 32 floats per patch row), stream in order.  In a model they come from memory, at a
 * third of the rate a tile reads them: the later row groups of a block prefetch the next
 * block's into L2 (where the same thread runs it), a share each, a few lines per tap, and
 * a block's first tile prefetches ahead of its reads in case they are not there
 * (ResNet-50, 2 threads, in the model: 3 x 3 convs over 256 channels at 14 x 14 3-6% faster,
 * over 512 at 7 x 7 8-10%).
 * A tile's vectors are transposed in registers (16 filters of 16 positions at a time) and
 * stored by filter into a row buffer, whose rows are copied into Y's planes, and bias, Z
 * and the activation finish each output row of a block (mlrt_epilogue_f32).
 *
 * Every output element is the same sequence of fused multiply-adds (per block of 16
 * channels, taps, then channels), so equal inputs give equal outputs. */
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define FV_X86 1
#endif

#include "conv_internal.h"

/* Sanitizer builds (tests/native/test_sanitizers.py) keep the channel loop rolled: unrolled
 * 16 times over 63 tile shapes, each step's checked loads took this file 6 minutes to
 * compile with ASAN and UBSan at -O1 (9 s optimized), 15 s rolled. */
#ifdef __SANITIZE_ADDRESS__
#define FV_UNROLL_C
#else
#define FV_UNROLL_C _Pragma("GCC unroll 16")
#endif
#define FV_V 2                /* vectors of 16 filters per tile */
#define FV_BLOCK (FV_V * 16)  /* filters per packed block */
#define FV_NP 14              /* output positions per tile (7 on each of two rows, or one row) */
#define FV_PF 1024           /* weights prefetched this far ahead (floats) on a block's first tile */
/* The largest padded copy of the input the path makes (floats, 64 MB), as the direct path. */
#define FV_MAX_FLOATS ((size_t)1 << 24)
#define FV_MAX_SPAN ((int64_t)FV_MAX_FLOATS)
/* One row of outputs (1-D convs, [N, C, 1, L]) runs here up to this width, longer rows on
 * the packed strips, in column tiles across the threads (kernels/conv_gemm.c).  Measured
 * on AVX-512, one core: here 5-50% faster up to 200 outputs (128 channels, kernel 3,
 * strides 1 and 2), 15-20% at 256 with stride 2 but 5% slower with stride 1; from 1024
 * outputs as fast (kernel 3) or 1.3-1.5x slower (kernel = stride = 4 or 8). */
#define FV_ROW_MAX 256

int64_t mlrt_conv_fvec_size(int64_t filters, int64_t kdim) {
    if (filters < 0 || filters > INT32_MAX || kdim < 0 || kdim > INT32_MAX) return 0;
    return (filters + FV_BLOCK - 1) / FV_BLOCK * kdim * FV_BLOCK;
}

int mlrt_conv_fvec_pack(int64_t filters, int64_t channels, int64_t taps, const float *w, int64_t capacity,
                        int64_t *size, float *packed) {
    MLRT_CHECK(size && filters >= 0 && channels >= 0 && taps >= 1 && channels <= INT32_MAX / taps,
               "mlrt_conv_fvec_pack: bad sizes (filters %lld, channels %lld, taps %lld)", (long long)filters,
               (long long)channels, (long long)taps);
    int64_t kdim = channels * taps;
    *size = mlrt_conv_fvec_size(filters, kdim);
    if (*size == 0 || capacity < *size || !packed) return MLRT_OK;
    MLRT_CHECK(w, "mlrt_conv_fvec_pack: no weights");
    for (int64_t b0 = 0; b0 < filters; b0 += FV_BLOCK) {
        float *dst = packed + b0 * kdim;
        for (int64_t c0 = 0; c0 < channels; c0 += 16)
            for (int64_t t = 0; t < taps; ++t)
                for (int64_t c = c0; c < channels && c < c0 + 16; ++c, dst += FV_BLOCK)
                    for (int64_t f = 0; f < FV_BLOCK; ++f)
                        dst[f] = b0 + f < filters ? w[((b0 + f) * channels + c) * taps + t] : 0.0f;
    }
    return MLRT_OK;
}

int mlrt_conv_fvec_fits(const mlrt_conv_params *p, int64_t channels, int64_t filters, int64_t height, int64_t width) {
    if (!p || (p->n_spatial != 1 && p->n_spatial != 2) || p->group != 1 || mlrt_cpu_isa() != MLRT_ISA_AVX512)
        return 0;
    const char *off = getenv("MLRT_CONV_FVEC"); /* "0": never (to compare with the other paths) */
    if (off && strcmp(off, "0") == 0) return 0;
    /* a 1-D conv (height 1, width its length) runs as 2-D over one row: its window, steps
     * and pads are [1]'s, [0]'s are 1, 1, 0 */
    int32_t at = p->n_spatial == 2 ? 0 : -1;
    int64_t k[2], s[2], d[2], span[2], out[2], in[2] = {height, width};
    if (p->n_spatial == 1 && height != 1) return 0;
    for (int i = 0; i < 2; ++i, ++at) {
        k[i] = at < 0 ? 1 : p->kernel[at], s[i] = at < 0 ? 1 : p->strides[at], d[i] = at < 0 ? 1 : p->dilations[at];
        span[i] = at < 0 ? in[i] : in[i] + p->pads_begin[at] + p->pads_end[at];
        if (s[i] < 1 || d[i] < 1 || k[i] < 1) return 0;
        out[i] = (span[i] - (k[i] - 1) * d[i] - 1) / s[i] + 1;
    }
    int64_t taps = k[0] * k[1];
    bool row = out[0] == 1; /* one output row: 1-D convs, [N, C, 1, L] */
    if (row && out[1] > FV_ROW_MAX) return 0;
    /* 1 x 1: the packed strips (in ResNet-50 the tiles ran 5-45% slower at 7 x 7 and
     * 14 x 14, but for one strided conv, and 2.5x slower at 56 x 56); under 8 channels
     * (a stem conv over RGB) the tile's few multiply-adds per output do not pay for its
     * scatter -- but for one row of outputs from a long window (a Conv-made STFT over one
     * channel: 256 taps, 3 outputs, 2x faster here), whose patch matrix has as many rows */
    if (taps < 2 || filters < 16 || (channels < 8 && !(row && channels * taps >= 64))) return 0;
    /* 16 filters fill half of a block's 32 lanes: over a plane the direct path is faster
     * (8 or 16 channels to 16 filters at 64 x 64 .. 160 x 160: 1.5-2x) */
    if (filters <= 16 && !row) return 0;
    /* strides up to 4 (one row: any, a stride only spaces the broadcasts) */
    for (int i = 0; i < 2; ++i)
        if (s[i] > 4 && !row) return 0;
    /* any width (rows of 7 or less pair up in 14-position tiles) and any number of channels
     * (a block's weights stream in order, prefetched on its first tile); a plane that the
     * scatter's int32 indexes reach */
    return out[0] >= 1 && out[1] >= 1 && out[0] * out[1] <= INT32_MAX / 16;
}

#ifdef FV_X86
typedef struct fvec_job {
    conv_job *j;
    conv_geom g;           /* j->g, or its folded form (mlrt_conv_fvec) */
    bool folded;           /* one channel's taps folded into 16 (fvec_pad_folded) */
    const float *wp;       /* packed weights */
    float *P;              /* N * CB padded blocks of 16 channels */
    int64_t PH, PW, plane; /* rows, row width, floats per block of 16 planes (with slack) */
    int64_t CB;            /* blocks of 16 channels */
    int64_t blocks;        /* filter blocks */
    int64_t rows;          /* output rows per task (2 where a row holds half a tile or less) */
    int64_t share;         /* tasks per thread's range of the pool (src/threadpool.c) */
    int64_t parts, span;   /* the rows cut in `parts` (1: not cut), of `span` row groups each */
} fvec_job;

/* 16 vectors (rows) of 16 floats transposed in place: v[i][k] <- v[k][i]. */
__attribute__((target("avx512f"))) static inline void fvec_transpose16(__m512 v[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) { /* per 128-bit lane: a0 b0 a1 b1 | a2 b2 a3 b3 */
        t[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) { /* per lane: rows i..i+3 of each of its 4 columns */
        __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
        __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
        v[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        v[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        v[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        v[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    for (int j = 0; j < 4; ++j) { /* column 4 L + j gathers lane L of the four row groups */
        __m512 u = _mm512_shuffle_f32x4(v[j], v[4 + j], _MM_SHUFFLE(1, 0, 1, 0));
        __m512 w = _mm512_shuffle_f32x4(v[8 + j], v[12 + j], _MM_SHUFFLE(1, 0, 1, 0));
        __m512 u2 = _mm512_shuffle_f32x4(v[j], v[4 + j], _MM_SHUFFLE(3, 2, 3, 2));
        __m512 w2 = _mm512_shuffle_f32x4(v[8 + j], v[12 + j], _MM_SHUFFLE(3, 2, 3, 2));
        t[j] = _mm512_shuffle_f32x4(u, w, _MM_SHUFFLE(2, 0, 2, 0));
        t[4 + j] = _mm512_shuffle_f32x4(u, w, _MM_SHUFFLE(3, 1, 3, 1));
        t[8 + j] = _mm512_shuffle_f32x4(u2, w2, _MM_SHUFFLE(2, 0, 2, 0));
        t[12 + j] = _mm512_shuffle_f32x4(u2, w2, _MM_SHUFFLE(3, 1, 3, 1));
    }
    for (int i = 0; i < 16; ++i) v[i] = t[i];
}

/* X's channels into zero-padded blocks whose position (row, column) holds its 16
 * channels side by side (channels past C are 0): padded rows [begin, end), counted over
 * (image, padded row, block of channels), so each thread makes the rows its tiles read
 * (they are cut by output row) and a plane of few channels is not one task (YOLO's
 * 16 -> 32 conv at 160 x 160 padded its one block on one thread, a fifth of the conv's
 * time on one thread: 522 -> 317 us on two).  A row's padding is zeroed, its inside
 * written once. */
__attribute__((target("avx512f"))) static void fvec_pad(void *arg, int64_t begin, int64_t end) {
    const fvec_job *f = arg;
    const conv_geom *g = &f->g;
    int64_t H = g->in[0], W = g->in[1], ph = g->pb[0], pw = g->pb[1], C = g->C, PW = f->PW;
    int64_t left = pw < PW ? pw : PW, w1 = W + pw > PW ? PW - pw : W; /* columns of X inside: [0, w1) */
    if (w1 < 0) w1 = 0;
    for (int64_t t = begin; t < end; ++t) {
        int64_t n = t / (f->PH * f->CB), pr = t / f->CB % f->PH, cb = t % f->CB;
        int64_t c0 = cb * 16, cn = C - c0 < 16 ? C - c0 : 16, r = pr - ph;
        float *dst = f->P + (n * f->CB + cb) * f->plane + pr * PW * 16;
        if (r < 0 || r >= H || w1 == 0) {
            memset(dst, 0, (size_t)(PW * 16) * sizeof(float));
            continue;
        }
        memset(dst, 0, (size_t)(left * 16) * sizeof(float));
        if (pw + w1 < PW) memset(dst + (pw + w1) * 16, 0, (size_t)((PW - pw - w1) * 16) * sizeof(float));
        const float *x = (const float *)f->j->x + (n * C + c0) * g->in_size + r * W;
        dst += pw * 16;
        for (int64_t w = 0; w < w1; w += 16) {
            int64_t nw = w1 - w < 16 ? w1 - w : 16;
            __mmask16 m = (__mmask16)((1u << nw) - 1);
            __m512 v[16];
            for (int64_t c = 0; c < 16; ++c)
                v[c] = c < cn ? _mm512_maskz_loadu_ps(m, x + c * g->in_size + w) : _mm512_setzero_ps();
            fvec_transpose16(v);
            for (int64_t k = 0; k < nw; ++k) _mm512_storeu_ps(dst + (w + k) * 16, v[k]);
        }
    }
}

/* Padded rows [begin, end) (n * PH + row) of one channel whose kernel row folds into 16
 * channels (mlrt_conv_fvec): slot c of padded position (row, col) holds input (row - ph,
 * col + c * d - pw), 0 outside X, so that folded tap q reads taps 16 q .. 16 q + 15. */
static void fvec_pad_folded(void *arg, int64_t begin, int64_t end) {
    const fvec_job *f = arg;
    const conv_geom *g = &f->j->g; /* (the real one: one channel, k taps at dilation d) */
    int64_t H = g->in[0], W = g->in[1], ph = g->pb[0], pw = g->pb[1], dl = g->d[1];
    for (int64_t t = begin; t < end; ++t) {
        int64_t n = t / f->PH, r = t % f->PH - ph;
        float *dst = f->P + n * f->plane + (t % f->PH) * f->PW * 16;
        if (r < 0 || r >= H) {
            memset(dst, 0, (size_t)(f->PW * 16) * sizeof(float));
            continue;
        }
        const float *x = (const float *)f->j->x + n * g->in_size + r * W;
        for (int64_t col = -pw; col < f->PW - pw; ++col, dst += 16) {
            if (dl == 1 && col >= 0 && col + 16 <= W) { /* (inside X: 16 in a row) */
                memcpy(dst, x + col, 16 * sizeof(float));
                continue;
            }
            for (int64_t c = 0; c < 16; ++c) {
                int64_t at = col + c * dl;
                dst[c] = at >= 0 && at < W ? x[at] : 0.0f;
            }
        }
    }
}

/* One tile: ROWS rows of NPR positions (NP in all), starting at `in` (the first tap's
 * input of its first position, in the padded blocks of image n; the second row `rs`
 * floats further) times the block's 32 filters, over all channels and taps, scattered
 * into the row buffer r (position i of the tile at r + (i / NPR) * OW + i % NPR, filter
 * rows ldr apart; `mask`: the block's filters that exist).  Positions lie S * 16 floats
 * apart (S a constant, or 0: s).  One function per shape, its
 * positions spelled out so that the accumulators stay in registers. */
#define FV_POS(i)                                                                                 \
    if ((i) < NP) {                                                                               \
        __m512 xv = _mm512_set1_ps((i) < NR ? x0[(i) * sx + c] : x1[((i) - NR) * sx + c]);      \
        acc[i][0] = _mm512_fmadd_ps(xv, w0, acc[i][0]);                                           \
        acc[i][1] = _mm512_fmadd_ps(xv, w1, acc[i][1]);                                           \
    }
#define FV_STEP                                                                                   \
    {                                                                                             \
        __m512 w0 = _mm512_loadu_ps(w), w1 = _mm512_loadu_ps(w + 16);                             \
        if (pf) { _mm_prefetch((const char *)(w + pf), _MM_HINT_T0); _mm_prefetch((const char *)(w + pf + 16), _MM_HINT_T0); } \
        FV_POS(0) FV_POS(1) FV_POS(2) FV_POS(3) FV_POS(4) FV_POS(5) FV_POS(6)                     \
        FV_POS(7) FV_POS(8) FV_POS(9) FV_POS(10) FV_POS(11) FV_POS(12) FV_POS(13)                 \
    }
#define FV_TILE(NPR, ROWS, S)                                                                     \
    __attribute__((target("avx512f"))) static void fvec_tile_##NPR##_##ROWS##_##S(               \
        const fvec_job *f, const float *in, int64_t rs, const float *w, int64_t s, float *r, int64_t OW, \
        int64_t ldr, const __mmask16 *mask, int64_t pf, const float *nx, int64_t nl) {                        \
        enum { NP = NPR * ROWS, NR = NPR };                                                                 \
        const conv_geom *g = &f->g;                                                               \
        __m512 acc[FV_NP][FV_V];                                                                  \
        const int64_t sx = (S ? S : s) * 16, plane = f->plane, CB = f->CB, tail = g->C % 16;      \
        const int64_t dh = g->d[0] * f->PW * 16, dw = g->d[1] * 16; \
        _Pragma("GCC unroll 14") for (int i = 0; i < NP; ++i)                                     \
            _Pragma("GCC unroll 2") for (int v = 0; v < FV_V; ++v) acc[i][v] = _mm512_setzero_ps(); \
        for (int64_t cb = 0; cb < CB; ++cb, in += plane) {                                        \
            const bool part = cb == CB - 1 && tail;                                               \
            for (int64_t kh = 0; kh < g->k[0]; ++kh)                                              \
                for (int64_t kw = 0; kw < g->k[1]; ++kw) {                                        \
                    const float *x0 = in + kh * dh + kw * dw, *x1 = x0 + rs;                      \
                    for (int64_t l = 0; l < nl; ++l, nx += 16) _mm_prefetch((const char *)nx, _MM_HINT_T1); \
                    if (part) {                                                                   \
                        for (int64_t c = 0; c < tail; ++c, w += FV_BLOCK) FV_STEP                 \
                    } else {                                                                      \
                        FV_UNROLL_C for (int64_t c = 0; c < 16; ++c, w += FV_BLOCK) FV_STEP \
                    }                                                                             \
                }                                                                                 \
        }                                                                                         \
        /* each vector's 16 filters of NP positions, transposed in registers into 16 filters' \
         * runs of positions, stored by row (a scatter, a lane at a time, took a fifth of a    \
         * 16-channel 3 x 3 conv's time) */                                                  \
        const __mmask16 first = (__mmask16)((1u << NR) - 1), second = (__mmask16)(((1u << NP) - 1) & ~((1u << NR) - 1)); \
        _Pragma("GCC unroll 2") for (int v = 0; v < FV_V; ++v) {                                   \
            if (!mask[v]) continue;                                                               \
            __m512 t[16];                                                                         \
            _Pragma("GCC unroll 16") for (int i = 0; i < 16; ++i)                                  \
                t[i] = i < NP ? acc[i < NP ? i : 0][v] : _mm512_setzero_ps();                     \
            fvec_transpose16(t);                                                                  \
            const int nf = __builtin_popcount(mask[v]);                                           \
            float *dst = r + 16 * v * ldr;                                                        \
            _Pragma("GCC unroll 16") for (int k = 0; k < 16; ++k)                                  \
                if (k < nf) {                                                                     \
                    _mm512_mask_storeu_ps(dst + k * ldr, first, t[k]);                            \
                    if (ROWS == 2) _mm512_mask_storeu_ps(dst + k * ldr + OW - NR, second, t[k]);  \
                }                                                                                 \
        }                                                                                         \
    }
#define FV_TILES(S)                                                                               \
    FV_TILE(1, 1, S) FV_TILE(2, 1, S) FV_TILE(3, 1, S) FV_TILE(4, 1, S) FV_TILE(5, 1, S)          \
    FV_TILE(6, 1, S) FV_TILE(7, 1, S) FV_TILE(8, 1, S) FV_TILE(9, 1, S) FV_TILE(10, 1, S)         \
    FV_TILE(11, 1, S) FV_TILE(12, 1, S) FV_TILE(13, 1, S) FV_TILE(14, 1, S)                       \
    FV_TILE(1, 2, S) FV_TILE(2, 2, S) FV_TILE(3, 2, S) FV_TILE(4, 2, S) FV_TILE(5, 2, S)          \
    FV_TILE(6, 2, S) FV_TILE(7, 2, S)
FV_TILES(0) FV_TILES(1) FV_TILES(2)
#undef FV_TILES
#undef FV_TILE
#undef FV_STEP
#undef FV_POS

typedef void (*fvec_tile_fn)(const fvec_job *, const float *, int64_t, const float *, int64_t, float *, int64_t,
                             int64_t, const __mmask16 *, int64_t, const float *, int64_t);
#define FV_ROW(S, ROWS)                                                                           \
    {NULL, fvec_tile_1_##ROWS##_##S, fvec_tile_2_##ROWS##_##S, fvec_tile_3_##ROWS##_##S,          \
     fvec_tile_4_##ROWS##_##S, fvec_tile_5_##ROWS##_##S, fvec_tile_6_##ROWS##_##S,                \
     fvec_tile_7_##ROWS##_##S}
#define FV_TABLE(S)                                                                               \
    {{NULL, fvec_tile_1_1_##S, fvec_tile_2_1_##S, fvec_tile_3_1_##S, fvec_tile_4_1_##S,           \
      fvec_tile_5_1_##S, fvec_tile_6_1_##S, fvec_tile_7_1_##S, fvec_tile_8_1_##S,                 \
      fvec_tile_9_1_##S, fvec_tile_10_1_##S, fvec_tile_11_1_##S, fvec_tile_12_1_##S,              \
      fvec_tile_13_1_##S, fvec_tile_14_1_##S},                                                    \
     FV_ROW(S, 2)}
/* [column stride 1, 2 or any (0)][rows - 1][positions a row] */
static const fvec_tile_fn fvec_tiles[3][2][FV_NP + 1] = {FV_TABLE(0), FV_TABLE(1), FV_TABLE(2)};
#undef FV_TABLE
#undef FV_ROW

/* Tasks: (image, filter block, group of f->rows output rows). */
__attribute__((target("avx512f"))) static void fvec_tasks(void *arg, int64_t begin, int64_t end) {
    const fvec_job *f = arg;
    conv_job *j = f->j;
    const conv_geom *g = &f->g;
    int64_t OH = g->out[0], OW = g->out[1], S = g->out_size, sh = g->s[0], sw = g->s[1];
    int64_t groups = (OH + f->rows - 1) / f->rows, si = sw <= 2 ? sw : 0;
    int64_t span = f->span; /* a block's row groups in a part, in order */
    for (int64_t t = begin; t < end; ++t) {
        int64_t li = t % span, b = t / span % f->blocks, part = t / span / f->blocks % f->parts;
        int64_t n = t / span / f->blocks / f->parts, gi = part * span + li, oh = gi * f->rows;
        if (gi >= groups) continue; /* (the last part's short) */
        int64_t rows = OH - oh < f->rows ? OH - oh : f->rows;
        int64_t m0 = b * FV_BLOCK, mw = g->M - m0 < FV_BLOCK ? g->M - m0 : FV_BLOCK;
        __mmask16 mask[FV_V];
        for (int v = 0; v < FV_V; ++v) {
            int64_t left = mw - 16 * v;
            mask[v] = left >= 16 ? (__mmask16)0xFFFF : left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1);
        }
        const float *row = f->P + (n * f->CB * f->plane) + oh * sh * f->PW * 16;
        const float *w = f->wp + b * g->kdim * FV_BLOCK;
        float *y = (float *)j->y + (n * g->M + m0) * S + oh * OW;
        /* the block's later row groups prefetch the next block's weights into L2, a share
         * each, spread over the taps (where the same thread runs it next) */
        const float *nx = w + g->kdim * FV_BLOCK;
        int64_t nl = 0;
        if (li > 0 && b + 1 < f->blocks && (t + span) / f->share == t / f->share) {
            /* a share of whole lines per tap, the last one short (never past the block) */
            int64_t lines = g->kdim * FV_BLOCK / 16, taps = f->CB * g->k[0] * g->k[1];
            int64_t each = ((lines + span - 2) / (span - 1) + taps - 1) / taps * taps, first = (li - 1) * each;
            nx += first * 16, nl = lines > first ? (lines - first < each ? lines - first : each) / taps : 0;
        }
        if (rows == 2) { /* (f->rows is 2 only where OW <= FV_NP / 2) */
            fvec_tiles[si][1][OW](f, row, sh * f->PW * 16, w, sw, y, OW, S, mask, li == 0 ? FV_PF : 0, nx, nl);
        } else {
            /* the row in tiles of (nearly) equal width: 20 columns as 10 + 10, not 14 + 6,
             * a tile's loads of weights costing the same whatever its width */
            int64_t n_tiles = (OW + FV_NP - 1) / FV_NP;
            for (int64_t k = 0, ow0 = 0; k < n_tiles; ++k) {
                int64_t np = OW / n_tiles + (k < OW % n_tiles);
                fvec_tiles[si][0][np](f, row + ow0 * sw * 16, 0, w, sw, y + ow0, OW, S, mask,
                                      li == 0 && k == 0 ? FV_PF : 0, nx, k == 0 ? nl : 0);
                ow0 += np;
            }
        }
        mlrt_epilogue_f32(y, j->z ? (const float *)j->z + (y - (float *)j->y) : NULL, mw, rows * OW, S,
                          j->b ? (const float *)j->b + m0 : NULL, j->activation, j->alpha, j->beta);
    }
}
#endif

int mlrt_conv_fvec(conv_job *j, const mlrt_context *ctx, const float *wp) {
#ifdef FV_X86
    fvec_job f = {.j = j, .g = j->g, .wp = wp, .blocks = (j->g.M + FV_BLOCK - 1) / FV_BLOCK};
    const conv_geom *g = &f.g;
    /* One channel and a kernel row of 16k taps (a Conv-made STFT: 256): the taps fold into
     * 16 channels, k taps at dilation 16 d, and the tiles run whole blocks of 16 (one
     * channel ran a tap at a time, the loop around each tap's 2 x NP multiply-adds
     * costing about as much: the STFT of a 512-sample call 15% slower).  The packed
     * weights are the same floats in the same order (taps 16 q + c), and so are the sums. */
    if (g->C == 1 && g->k[0] == 1 && g->k[1] % 16 == 0 && g->k[1] <= FV_MAX_SPAN) {
        f.folded = true;
        f.g.C = f.g.Cg = 16;
        f.g.k[1] /= 16, f.g.d[1] *= 16, f.g.k_size = f.g.k[1];
    }
    /* padded planes: every row and column a tap of an output reads */
    int64_t span[2];
    for (int i = 0; i < 2; ++i) { /* (checked: strides and dilations come from attributes) */
        int64_t reach;
        if (g->s[i] < 1 || g->s[i] > FV_MAX_SPAN || g->d[i] < 1 || __builtin_mul_overflow(g->k[i] - 1, g->d[i], &reach) ||
            reach > FV_MAX_SPAN || g->out[i] > FV_MAX_SPAN || (g->out[i] - 1) * g->s[i] > FV_MAX_SPAN)
            return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "Conv: strides or dilations out of the filter-vector path's range");
        span[i] = (g->out[i] - 1) * g->s[i] + reach + 1;
    }
    f.PH = span[0], f.PW = span[1];
    f.CB = (g->C + 15) / 16;
    f.rows = g->out[1] <= FV_NP / 2 && g->out[0] > 1 ? 2 : 1;
    size_t floats = FV_MAX_FLOATS + 1;
    if (f.PH <= FV_MAX_SPAN && f.PW <= FV_MAX_SPAN && f.PH * f.PW <= FV_MAX_SPAN / 16 && f.CB <= FV_MAX_SPAN) {
        f.plane = f.PH * f.PW * 16;
        floats = (size_t)(g->N * f.CB) * (size_t)f.plane; /* (N * CB: X's channel blocks, allocated) */
    }
    if (floats > FV_MAX_FLOATS)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "Conv: the filter-vector path's padded input of %zu floats is too large", floats);
    f.P = mlrt_scratch_slot(1, floats * sizeof(float) + 64);
    if (!f.P) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Conv: cannot allocate the padded input");
    if (f.folded)
        mlrt_parallel_for(ctx, g->N * f.PH, (1 << 15) / (f.PW * 16 + 1) + 1, fvec_pad_folded, &f);
    else
        mlrt_parallel_for(ctx, g->N * f.PH * f.CB, (1 << 15) / (f.PW * 16 + 1) + 1, fvec_pad, &f);
    /* Tasks: per image, each filter block's row groups in order, block by block, so a
     * thread's range streams each block's weights once.  Where an image's padded input
     * outweighs the weights, its rows are cut first into a part per thread, each part's
     * blocks in turn: a thread then reads only the rows it padded (fvec_pad), not every
     * row, half of them from the other core's cache (YOLO's 32 -> 64 conv at 40 x 40, two
     * blocks: 1.1-1.3x from a second thread, now 1.6-1.8x; in the model 371 -> 296 us). */
    int64_t threads = mlrt_ctx_threads(ctx), groups = (g->out[0] + f.rows - 1) / f.rows;
    f.parts = 1, f.span = groups;
    if (threads > 1 && f.blocks > 1 && groups >= 2 * threads && f.CB * f.plane > f.blocks * g->kdim * FV_BLOCK)
        f.parts = threads, f.span = (groups + threads - 1) / threads;
    int64_t tasks = g->N * f.parts * f.blocks * f.span;
    f.share = (tasks + threads - 1) / threads;
    int64_t work = g->kdim * FV_BLOCK * g->out[1] * f.rows; /* multiply-adds a task */
    mlrt_parallel_for(ctx, tasks, work >= (1 << 16) ? 1 : (1 << 16) / (work + 1) + 1, fvec_tasks, &f);
    if (atomic_load(&j->failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Conv: cannot allocate a row buffer");
    return MLRT_OK;
#else
    (void)j, (void)ctx, (void)wp;
    return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "Conv: the filter-vector path needs x86-64 (AVX-512)");
#endif
}

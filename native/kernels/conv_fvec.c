/* conv_fvec.c -- Conv, filter-vector path: float32, 2-D, one group, AVX-512.
 *
 * The other micro-kernel paths put output positions in the vector lanes and broadcast
 * the weights; their rows of input are a shifted run of one padded plane, which for
 * most taps starts mid-cache-line, and a row of an output 10 or 20 wide leaves lanes
 * empty.  Here the lanes hold 16 filters of one output position instead: a tile is
 * FV_NP positions of one output row times FV_V * 16 filters, its accumulators fed by
 * one broadcast input value per position and FV_V loads of packed weights per
 * patch row (c, kh, kw).  A stride only spaces the broadcasts; the weights, packed
 * once by the plan (mlrt_conv_fvec_pack: per block of 32 filters, tap-major then
 * channel, 32 floats each), stream in order.  The input is copied once per call into
 * zero-padded planes.  The tiles' vectors are scattered into a row buffer, whose rows
 * are copied into Y's planes, and bias, Z and the activation finish each output row of a
 * block (mlrt_conv_finish_f32).
 *
 * Every output element is the same sequence of fused multiply-adds (taps, then
 * channels, in order), so equal inputs give equal outputs. */
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define FV_X86 1
#endif

#include "conv_internal.h"

#define FV_V 2                /* vectors of 16 filters per tile */
#define FV_BLOCK (FV_V * 16)  /* filters per packed block */
#define FV_NP 12              /* output positions per tile */
#define FV_MIN_WIDTH 10       /* output columns, at least */
#define FV_MAX_KDIM 1152      /* patch rows (a block's weights: 144 KB), unless rows are wide */
/* The largest padded copy of the input the path makes (floats, 64 MB), as the direct path. */
#define FV_MAX_FLOATS ((size_t)1 << 24)
#define FV_MAX_SPAN ((int64_t)FV_MAX_FLOATS)

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
        for (int64_t t = 0; t < taps; ++t)
            for (int64_t c = 0; c < channels; ++c, dst += FV_BLOCK)
                for (int64_t f = 0; f < FV_BLOCK; ++f)
                    dst[f] = b0 + f < filters ? w[((b0 + f) * channels + c) * taps + t] : 0.0f;
    }
    return MLRT_OK;
}

int mlrt_conv_fvec_fits(const mlrt_conv_params *p, int64_t channels, int64_t filters, int64_t height, int64_t width) {
    if (!p || p->n_spatial != 2 || p->group != 1 || mlrt_sgemm_strip_width() != 64) return 0; /* AVX-512 */
    const char *off = getenv("MLRT_CONV_FVEC"); /* "0": never (to compare with the other paths) */
    if (off && strcmp(off, "0") == 0) return 0;
    int64_t taps = p->kernel[0] * p->kernel[1];
    /* 1 x 1: the packed strips; under 8 channels (a stem conv over RGB) the tile's few
     * multiply-adds per output do not pay for its scatter */
    if (taps < 2 || filters < 16 || channels < 8) return 0;
    for (int i = 0; i < 2; ++i)
        if (p->strides[i] < 1 || p->strides[i] > 4 || p->dilations[i] < 1) return 0;
    int64_t ow = (width + p->pads_begin[1] + p->pads_end[1] - (p->kernel[1] - 1) * p->dilations[1] - 1) /
                 p->strides[1] + 1;
    int64_t oh = (height + p->pads_begin[0] + p->pads_end[0] - (p->kernel[0] - 1) * p->dilations[0] - 1) /
                 p->strides[0] + 1;
    /* rows at least 10 wide (at 7 the other paths were faster); a block's weights within
     * 144 KB (L2) unless each row has 4 tiles to read them for (256 channels at 14 wide ran
     * slower, a 7 x 7 over 64 channels 56 wide faster); a plane that the scatter's int32
     * indexes reach */
    int64_t kdim = channels * taps;
    return oh >= 1 && ow >= FV_MIN_WIDTH && (kdim <= FV_MAX_KDIM || ow >= 4 * FV_NP) && oh * ow <= INT32_MAX / 16;
}

#ifdef FV_X86
typedef struct fvec_job {
    conv_job *j;
    const float *wp;      /* packed weights */
    float *P;             /* N * C padded planes */
    int64_t PH, PW, plane; /* rows, row width, floats per plane (with slack) */
    int64_t blocks;       /* filter blocks */
} fvec_job;

/* Planes [begin, end) of X (n * C + c) into zero-padded planes. */
static void fvec_pad(void *arg, int64_t begin, int64_t end) {
    const fvec_job *f = arg;
    const conv_geom *g = &f->j->g;
    int64_t H = g->in[0], W = g->in[1], ph = g->pb[0], pw = g->pb[1];
    for (int64_t t = begin; t < end; ++t) {
        const float *x = (const float *)f->j->x + t * g->in_size;
        float *p = f->P + t * f->plane;
        memset(p, 0, (size_t)f->plane * sizeof(float));
        for (int64_t r = 0; r < H; ++r) {
            int64_t pr = r + ph;
            if (pr < 0 || pr >= f->PH) continue;
            int64_t c0 = pw < 0 ? -pw : 0, c1 = W + pw > f->PW ? f->PW - pw : W; /* columns of X inside */
            if (c1 > c0) memcpy(p + pr * f->PW + pw + c0, x + r * W + c0, (size_t)(c1 - c0) * sizeof(float));
        }
    }
}

/* One tile: NP positions starting at `in` (their first tap's input in the padded plane
 * of channel 0, `s` apart) times the block's 32 filters, over all taps and channels,
 * scattered into the row buffer r (filter rows ldr apart; `mask`: the block's filters
 * that exist); one function per NP (a row is cut in tiles of nearly equal width),
 * its positions spelled out so that the accumulators stay in registers. */
#define FV_POS(i, NP)                                                                               \
    if ((i) < NP) {                                                                               \
        __m512 xv = _mm512_set1_ps(x[(i) * s]);                                                   \
        acc[i][0] = _mm512_fmadd_ps(xv, w0, acc[i][0]);                                           \
        acc[i][1] = _mm512_fmadd_ps(xv, w1, acc[i][1]);                                           \
    }
#define FV_TILE(NP)                                                                               \
    __attribute__((target("avx512f"))) static void fvec_tile_##NP(const fvec_job *f, const float *in, \
                                                                  const float *w, int64_t s, float *r, \
                                                                  int64_t ldr, const __mmask16 *mask) { \
        const conv_geom *g = &f->j->g;                                                            \
        __m512 acc[FV_NP][FV_V];                                                                  \
        int64_t C = g->C, plane = f->plane, dh = g->d[0] * f->PW, dw = g->d[1];                   \
        _Pragma("GCC unroll 12") for (int i = 0; i < NP; ++i)                                     \
            _Pragma("GCC unroll 2") for (int v = 0; v < FV_V; ++v) acc[i][v] = _mm512_setzero_ps(); \
        for (int64_t kh = 0; kh < g->k[0]; ++kh)                                                  \
            for (int64_t kw = 0; kw < g->k[1]; ++kw) {                                            \
                const float *x = in + kh * dh + kw * dw;                                          \
                for (int64_t c = 0; c < C; ++c, x += plane, w += FV_BLOCK) {                      \
                    __m512 w0 = _mm512_loadu_ps(w), w1 = _mm512_loadu_ps(w + 16);                 \
                    FV_POS(0, NP) FV_POS(1, NP) FV_POS(2, NP) FV_POS(3, NP) FV_POS(4, NP)         \
                    FV_POS(5, NP) FV_POS(6, NP) FV_POS(7, NP) FV_POS(8, NP) FV_POS(9, NP)         \
                    FV_POS(10, NP) FV_POS(11, NP)                                                 \
                }                                                                                 \
            }                                                                                     \
        __m512i index = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), \
                                           _mm512_set1_epi32((int)ldr));                          \
        _Pragma("GCC unroll 12") for (int i = 0; i < NP; ++i)                                     \
            _Pragma("GCC unroll 2") for (int v = 0; v < FV_V; ++v)                                \
                if (mask[v]) _mm512_mask_i32scatter_ps(r + 16 * v * ldr + i, mask[v], index, acc[i][v], 4); \
    }
FV_TILE(1) FV_TILE(2) FV_TILE(3) FV_TILE(4) FV_TILE(5) FV_TILE(6)
FV_TILE(7) FV_TILE(8) FV_TILE(9) FV_TILE(10) FV_TILE(11) FV_TILE(12)
#undef FV_TILE
#undef FV_POS

typedef void (*fvec_tile_fn)(const fvec_job *, const float *, const float *, int64_t, float *, int64_t,
                             const __mmask16 *);
static const fvec_tile_fn fvec_tiles[FV_NP + 1] = {NULL, fvec_tile_1, fvec_tile_2, fvec_tile_3, fvec_tile_4,
                                                  fvec_tile_5, fvec_tile_6, fvec_tile_7, fvec_tile_8, fvec_tile_9,
                                                  fvec_tile_10, fvec_tile_11, fvec_tile_12};

/* Tasks: (image, filter block, output row). */
__attribute__((target("avx512f"))) static void fvec_tasks(void *arg, int64_t begin, int64_t end) {
    const fvec_job *f = arg;
    conv_job *j = f->j;
    const conv_geom *g = &j->g;
    int64_t OH = g->out[0], OW = g->out[1], S = g->out_size, sh = g->s[0], sw = g->s[1];
    /* a row of the block's outputs is scattered into R (rows ldr apart: Y's planes may lie
     * a multiple of 4 KB apart, every lane of a scatter then on one cache set), then copied */
    int64_t ldr = (OW + 15) / 16 * 16 + 16;
    float *R = mlrt_scratch((size_t)(FV_BLOCK * ldr) * sizeof(float));
    if (!R) { atomic_store(&j->failed, 1); return; }
    for (int64_t t = begin; t < end; ++t) {
        int64_t oh = t % OH, b = t / OH % f->blocks, n = t / OH / f->blocks;
        int64_t m0 = b * FV_BLOCK, mw = g->M - m0 < FV_BLOCK ? g->M - m0 : FV_BLOCK;
        __mmask16 mask[FV_V];
        for (int v = 0; v < FV_V; ++v) {
            int64_t left = mw - 16 * v;
            mask[v] = left >= 16 ? (__mmask16)0xFFFF : left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1);
        }
        const float *row = f->P + n * g->C * f->plane + oh * sh * f->PW;
        const float *w = f->wp + b * g->kdim * FV_BLOCK;
        float *y = (float *)j->y + (n * g->M + m0) * S + oh * OW;
        /* the row in tiles of (nearly) equal width: 14 columns as 7 + 7, not 12 + 2, a
         * tile's loads of weights costing the same whatever its width */
        int64_t n_tiles = (OW + FV_NP - 1) / FV_NP;
        for (int64_t k = 0, ow0 = 0; k < n_tiles; ++k) {
            int64_t np = OW / n_tiles + (k < OW % n_tiles);
            fvec_tiles[np](f, row + ow0 * sw, w, sw, R + ow0, ldr, mask);
            ow0 += np;
        }
        for (int64_t m = 0; m < mw; ++m) memcpy(y + m * S, R + m * ldr, (size_t)OW * sizeof(float));
        mlrt_conv_finish_f32(y, j->z ? (const float *)j->z + (y - (float *)j->y) : NULL, mw, OW, S,
                             j->b ? (const float *)j->b + m0 : NULL, j->activation, j->alpha, j->beta);
    }
}
#endif

int mlrt_conv_fvec(conv_job *j, const mlrt_context *ctx, const float *wp) {
    const conv_geom *g = &j->g;
#ifdef FV_X86
    fvec_job f = {.j = j, .wp = wp, .blocks = (g->M + FV_BLOCK - 1) / FV_BLOCK};
    /* padded planes: every row and column a tap of an output reads */
    int64_t span[2];
    for (int i = 0; i < 2; ++i) { /* (checked: strides and dilations come from attributes) */
        int64_t reach;
        if (g->s[i] < 1 || g->s[i] > 4 || g->d[i] < 1 || __builtin_mul_overflow(g->k[i] - 1, g->d[i], &reach) ||
            reach > FV_MAX_SPAN || g->out[i] > FV_MAX_SPAN)
            return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "Conv: strides or dilations out of the filter-vector path's range");
        span[i] = (g->out[i] - 1) * g->s[i] + reach + 1;
    }
    f.PH = span[0], f.PW = span[1];
    size_t floats = FV_MAX_FLOATS + 1;
    if (f.PH <= FV_MAX_SPAN && f.PW <= FV_MAX_SPAN && f.PH * f.PW <= FV_MAX_SPAN) {
        f.plane = (f.PH * f.PW + 15) / 16 * 16;
        floats = (size_t)(g->N * g->C) * (size_t)f.plane; /* (N * C: X's planes, allocated) */
    }
    if (floats > FV_MAX_FLOATS)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "Conv: the filter-vector path's padded input of %zu floats is too large", floats);
    f.P = mlrt_scratch_slot(1, floats * sizeof(float) + 64);
    if (!f.P) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Conv: cannot allocate the padded input");
    mlrt_parallel_for(ctx, g->N * g->C, (1 << 15) / (f.plane + 1) + 1, fvec_pad, &f);
    int64_t tasks = g->N * f.blocks * g->out[0];
    int64_t work = g->kdim * FV_BLOCK * g->out[1]; /* multiply-adds a task */
    mlrt_parallel_for(ctx, tasks, work >= (1 << 16) ? 1 : (1 << 16) / (work + 1) + 1, fvec_tasks, &f);
    if (atomic_load(&j->failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Conv: cannot allocate a row buffer");
    return MLRT_OK;
#else
    (void)ctx, (void)wp, (void)g;
    return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "Conv: the filter-vector path needs x86-64 (AVX-512)");
#endif
}

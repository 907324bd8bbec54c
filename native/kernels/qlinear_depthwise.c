/* qlinear_depthwise.c -- ConvInteger / QLinearConv with one input channel per group
 * (depthwise), 1-D and 2-D, any window, stride, dilation and padding.
 *
 * A task takes a block of input channels of one image and copies each plane once into
 * int32 planes of x - x_zp (zero padding) kept as stride phases, as the GEMM path's
 * (phase (a, b) holds padded rows a, a + sh, ... and columns b, b + sw, ...): every tap of
 * an output row is then one contiguous run.  Each output channel m (of input channel
 * m / Mg) sums its taps,
 *     v = sum_t (w_t - w_zp[m]) * P_t[oh][ow]    (int32, wrapping)
 * and finishes as the integer product does (qgemm.h: + B[m], requantized or int32).
 * The sums run over the grid of output rows by the phase rows' width (positions
 * oh * PWs + ow; the columns past the output's are computed and dropped), whose 16
 * consecutive positions are one vector and one tap of them one load.  AVX-512 streams
 * the vectors of all the block's channels 8 at a time (independent sums, so small
 * planes cost no more per output than large ones), one vpmaddwd and one add per tap and
 * vector (one vpdpwssd with VNNI): the plane's int32 x - x_zp (|.| <= 255) against the
 * pair (w_t - w_zp, 0) as 16-bit halves is exactly one product per lane.  The finished
 * grids go to a scratch buffer, their output columns to y. */
#include <stdatomic.h>
#include <stdlib.h>

#include "gemm.h"
#include "qconv_internal.h"

#define DW_PLANES_BYTES (192 * 1024) /* a task's planes, about (what the blocks of channels aim at) */

typedef struct dw_job {
    const qconv_job *j;
    const int32_t *w;          /* (w - w_zp) per output channel and tap */
    const int32_t *wv;         /* the same for the vector code: the 16-bit value in the low half, 0 above */
    const int64_t *toff;       /* the taps' offsets in a channel's planes (tap (kh, kw)) */
    int64_t T;                 /* taps */
    int64_t PHs, PWs, phase;   /* phase rows, row width, elements per phase plane */
    int64_t S;                 /* elements per channel: its phases and what the grid's last vector reads past them */
    int64_t F, F16;            /* grid positions per output channel, rounded up to a vector */
    int64_t CB, n_blocks;      /* input channels per task, tasks per image */
    /* per 16 columns of a phase row (column strides 1 and 2): the row's lanes, the input
     * bytes read from column 16 c * sw - pads_begin, the lanes of column phase 0 and 1 inside x */
    uint32_t *keep, *in, *ein, *oin;
    atomic_int failed;
} dw_job;

/* The phase planes of input plane x into cp (and zeros past them, to S). */
typedef void (*dw_planes_fn)(const dw_job *d, const uint8_t *x, int32_t *cp);
/* The finished grids of output channels [m0, m1) (planes of input channel m / Mg at
 * planes + (m / Mg - c0) * S) into grid (F16 per channel, elements of o's type). */
typedef void (*dw_grid_fn)(const dw_job *d, const int32_t *planes, int64_t c0, int64_t m0, int64_t m1, void *grid);

/* Bits [lo, hi) of 16 or 32 (lo, hi clamped to [0, n]). */
static inline uint32_t dw_bits(int64_t lo, int64_t hi, int64_t n) {
    lo = lo < 0 ? 0 : lo > n ? n : lo, hi = hi < 0 ? 0 : hi > n ? n : hi;
    if (hi <= lo) return 0;
    return (uint32_t)((((uint64_t)1 << hi) - 1) & ~(((uint64_t)1 << lo) - 1));
}

static void dw_planes_portable(const dw_job *d, const uint8_t *x, int32_t *cp) {
    const qconv_geom *g = &d->j->g;
    int64_t sh = g->s[0], sw = g->s[1], H = g->in[0], W = g->in[1], w = d->PWs;
    uint8_t f = d->j->x_flip ? 0x80 : 0;
    for (int64_t a = 0; a < sh; ++a)
        for (int64_t b = 0; b < sw; ++b) {
            int32_t *P = cp + (a * sw + b) * d->phase;
            for (int64_t r = 0; r < d->PHs; ++r) {
                int64_t ih = a + r * sh - g->pb[0];
                for (int64_t c = 0; c < w; ++c) {
                    int64_t iw = b + c * sw - g->pb[1];
                    P[r * w + c] = ih >= 0 && ih < H && iw >= 0 && iw < W ? (int32_t)(x[ih * W + iw] ^ f) - d->j->xz : 0;
                }
            }
        }
    memset(cp + sh * sw * d->phase, 0, (size_t)(d->S - sh * sw * d->phase) * sizeof(int32_t));
}

static void dw_grid_portable(const dw_job *d, const int32_t *planes, int64_t c0, int64_t m0, int64_t m1, void *grid) {
    const qconv_geom *g = &d->j->g;
    mlrt_qgemm_out o = d->j->out;
    size_t esz = o.out_type == MLRT_INT32 ? 4 : 1;
    o.ldc = 0;
    for (int64_t m = m0; m < m1; ++m) {
        const int32_t *p = planes + (m / g->Mg - c0) * d->S, *w = d->w + m * d->T;
        o.c = (char *)grid + (size_t)((m - m0) * d->F16) * esz;
        for (int64_t v = 0; v < d->F; ++v) {
            uint32_t acc = 0;
            for (int64_t t = 0; t < d->T; ++t) acc += (uint32_t)w[t] * (uint32_t)p[d->toff[t] + v];
            mlrt_qgemm_store1(&o, m, v, (int32_t)acc);
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define DW_X86 1

/* Column strides 1 and 2 (both column phases of an input row from one load); others portable. */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void dw_planes_avx512(const dw_job *d, const uint8_t *x,
                                                                                   int32_t *cp) {
    const qconv_geom *g = &d->j->g;
    int64_t sh = g->s[0], sw = g->s[1], H = g->in[0], W = g->in[1], w = d->PWs, start = -g->pb[1];
    if (sw > 2) {
        dw_planes_portable(d, x, cp);
        return;
    }
    bool f = d->j->x_flip;
    const uint32_t *ins = d->in, *keeps = d->keep, *eins = d->ein, *oins = d->oin; /* (locals: no reloads) */
    /* x ^ f - xz: zero-extended less xz for uint8, sign-extended less (xz - 128) for int8 */
    __m512i vz = _mm512_set1_epi32(f ? d->j->xz - 128 : d->j->xz), byte = _mm512_set1_epi32(0xFF);
    for (int64_t a = 0; a < sh; ++a)
        for (int64_t r = 0; r < d->PHs; ++r) {
            int64_t ih = a + r * sh - g->pb[0];
            int32_t *row0 = cp + a * sw * d->phase + r * w, *row1 = row0 + d->phase; /* column phases 0, 1 */
            if (ih < 0 || ih >= H) {
                for (int64_t b = 0; b < sw; ++b) memset(row0 + b * d->phase, 0, (size_t)w * sizeof(int32_t));
                continue;
            }
            const uint8_t *xr = x + ih * W;
            for (int64_t c = 0, u = 0; c < w; c += 16, ++u) {
                int64_t at = start + sw * c; /* the input column of lane 0 */
                uint32_t in = ins[u];
                __mmask16 keep = (__mmask16)keeps[u];
                if (sw == 1) {
                    /* (a whole vector inside the row: a plain load; masked loads only at the edges) */
                    __m128i b8 = in == 0xFFFF ? _mm_loadu_si128((const __m128i *)(xr + at))
                                              : _mm_maskz_loadu_epi8((__mmask16)in, xr + (in ? at : 0));
                    __m512i v = _mm512_sub_epi32(f ? _mm512_cvtepi8_epi32(b8) : _mm512_cvtepu8_epi32(b8), vz);
                    if (in != 0xFFFF) v = _mm512_maskz_mov_epi32((__mmask16)in, v);
                    _mm512_mask_storeu_epi32(row0 + c, keep, v);
                } else {
                    __m256i b8 = in == 0xFFFFFFFF ? _mm256_loadu_si256((const __m256i *)(xr + at))
                                                  : _mm256_maskz_loadu_epi8(in, xr + (in ? at : 0));
                    __m512i h = _mm512_cvtepu8_epi16(b8);
                    __m512i e = f ? _mm512_srai_epi32(_mm512_slli_epi32(h, 24), 24) : _mm512_and_si512(h, byte);
                    __m512i o = f ? _mm512_srai_epi32(_mm512_slli_epi32(h, 8), 24) : _mm512_srli_epi32(h, 16);
                    _mm512_mask_storeu_epi32(row0 + c, keep, _mm512_maskz_sub_epi32((__mmask16)eins[u], e, vz));
                    _mm512_mask_storeu_epi32(row1 + c, keep, _mm512_maskz_sub_epi32((__mmask16)oins[u], o, vz));
                }
            }
        }
    memset(cp + sh * sw * d->phase, 0, (size_t)(d->S - sh * sw * d->phase) * sizeof(int32_t));
}

/* 16 finished sums of output channel m into dst (16 elements of o's type). */
__attribute__((target("avx512f,avx512bw"))) static inline void dw_finish16(const mlrt_qgemm_out *o, int64_t m,
                                                                           void *dst, __m512i v) {
    if (o->row_add) v = _mm512_add_epi32(v, _mm512_set1_epi32(o->row_add[m]));
    if (!o->scale) {
        _mm512_storeu_si512(dst, v);
        return;
    }
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_set1_ps(o->scale[o->scale_mode == MLRT_QSCALE_ROW ? m : 0]));
    f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps((float)(o->lo - o->zp))), _mm512_set1_ps((float)(o->hi - o->zp)));
    __m512i q = _mm512_add_epi32(_mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                                 _mm512_set1_epi32(o->zp));
    _mm_storeu_si128(dst, o->out_type == MLRT_UINT8 ? _mm512_cvtusepi32_epi8(q) : _mm512_cvtsepi32_epi8(q));
}

/* Vectors u = (m - m0) * F16 / 16 + i of the block, 8 at a time: vector u of output
 * channel m covers grid positions 16 i ...  Eight of one channel share its weights and
 * one base pointer; eight across channels (small planes) take each its own. */
#define DW_LOAD_ONE(u) _mm512_loadu_si512((const void *)(q + toff[t] + 16 * (u)))
#define DW_LOAD_MIXED(u) _mm512_loadu_si512((const void *)(p[u] + toff[t]))
#define DW_W_MIXED(u) _mm512_set1_epi32(w[u][t])
#define DEFINE_DW_GRID(NAME, TARGET, MAC)                                                                           \
    __attribute__((target(TARGET))) static void dw_grid_##NAME(const dw_job *d, const int32_t *planes, int64_t c0,  \
                                                               int64_t m0, int64_t m1, void *grid) {               \
        const qconv_geom *g = &d->j->g;                                                                             \
        const mlrt_qgemm_out *o = &d->j->out;                                                                       \
        const int64_t *toff = d->toff, T = d->T, per = d->F16 / 16, total = (m1 - m0) * per;                        \
        size_t esz = o->out_type == MLRT_INT32 ? 4 : 1;                                                             \
        /* the next vector: output channel cm (the cg-th of its input channel's, planes at cp), its vector ci */    \
        int64_t cm = m0, ci = 0, cg = m0 % g->Mg;                                                                   \
        const int32_t *cp = planes + (m0 / g->Mg - c0) * d->S, *cw = d->wv + m0 * T;                                \
        for (int64_t u0 = 0; u0 < total;) {                                                                         \
            __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;     \
            char *out = (char *)grid + (size_t)(u0 * 16) * esz;                                                     \
            if (ci + 8 <= per) { /* one channel */                                                                  \
                const int32_t *q = cp + ci * 16, *wc = cw;                                                          \
                for (int64_t t = 0; t < T; ++t) {                                                                   \
                    __m512i wt = _mm512_set1_epi32(wc[t]);                                                          \
                    a0 = MAC(a0, DW_LOAD_ONE(0), wt);                                                               \
                    a1 = MAC(a1, DW_LOAD_ONE(1), wt);                                                               \
                    a2 = MAC(a2, DW_LOAD_ONE(2), wt);                                                               \
                    a3 = MAC(a3, DW_LOAD_ONE(3), wt);                                                               \
                    a4 = MAC(a4, DW_LOAD_ONE(4), wt);                                                               \
                    a5 = MAC(a5, DW_LOAD_ONE(5), wt);                                                               \
                    a6 = MAC(a6, DW_LOAD_ONE(6), wt);                                                               \
                    a7 = MAC(a7, DW_LOAD_ONE(7), wt);                                                               \
                }                                                                                                   \
                __m512i a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};                                                    \
                for (int u = 0; u < 8; ++u) dw_finish16(o, cm, out + (size_t)(16 * u) * esz, a[u]);                 \
                u0 += 8, ci += 8;                                                                                   \
            } else {                                                                                                \
                const int32_t *p[8], *w[8];                                                                         \
                int64_t m[8];                                                                                       \
                int n = 0;                                                                                          \
                for (int u = 0; u < 8; ++u) { /* (past the end: the last vector again, not stored) */               \
                    m[u] = cm, p[u] = cp + ci * 16, w[u] = cw;                                                      \
                    if (u0 + u + 1 < total && u + 1 < 8) {                                                          \
                        if (++ci == per) {                                                                          \
                            ci = 0, ++cm, cw += T;                                                                  \
                            if (++cg == g->Mg) cg = 0, cp += d->S;                                                  \
                        }                                                                                           \
                    }                                                                                               \
                    n += u0 + u < total;                                                                            \
                }                                                                                                   \
                for (int64_t t = 0; t < T; ++t) {                                                                   \
                    a0 = MAC(a0, DW_LOAD_MIXED(0), DW_W_MIXED(0));                                                  \
                    a1 = MAC(a1, DW_LOAD_MIXED(1), DW_W_MIXED(1));                                                  \
                    a2 = MAC(a2, DW_LOAD_MIXED(2), DW_W_MIXED(2));                                                  \
                    a3 = MAC(a3, DW_LOAD_MIXED(3), DW_W_MIXED(3));                                                  \
                    a4 = MAC(a4, DW_LOAD_MIXED(4), DW_W_MIXED(4));                                                  \
                    a5 = MAC(a5, DW_LOAD_MIXED(5), DW_W_MIXED(5));                                                  \
                    a6 = MAC(a6, DW_LOAD_MIXED(6), DW_W_MIXED(6));                                                  \
                    a7 = MAC(a7, DW_LOAD_MIXED(7), DW_W_MIXED(7));                                                  \
                }                                                                                                   \
                __m512i a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};                                                    \
                for (int u = 0; u < n; ++u) dw_finish16(o, m[u], out + (size_t)(16 * u) * esz, a[u]);              \
                u0 += n, ++ci; /* (the cursor stood on the 8th) */                                                  \
            }                                                                                                       \
            if (ci == per) {                                                                                        \
                ci = 0, ++cm, cw += T;                                                                              \
                if (++cg == g->Mg) cg = 0, cp += d->S;                                                              \
            }                                                                                                       \
        }                                                                                                           \
    }
#define DW_MAC_BW(a, x, w) _mm512_add_epi32(a, _mm512_madd_epi16(x, w))
#define DW_MAC_VNNI(a, x, w) _mm512_dpwssd_epi32(a, x, w)
DEFINE_DW_GRID(bw, "avx512f,avx512bw", DW_MAC_BW)
DEFINE_DW_GRID(vnni, "avx512f,avx512bw,avx512vnni", DW_MAC_VNNI)
#endif

/* rows of OW bytes (esz 1) from a grid of PWs-wide rows, a masked vector a row where
 * the rows are narrow (small planes: a memcpy call each costs more); false: not done */
#ifdef DW_X86
__attribute__((target("avx512f,avx512bw"))) static void copy_rows_avx512(char *y, const char *src, int64_t OH,
                                                                          int64_t OW, int64_t PWs) {
    __mmask64 k = OW >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << OW) - 1);
    for (int64_t oh = 0; oh < OH; ++oh)
        _mm512_mask_storeu_epi8(y + oh * OW, k, _mm512_maskz_loadu_epi8(k, src + oh * PWs));
}
#endif

static bool copy_rows(char *y, const char *src, int64_t OH, int64_t OW, int64_t PWs, size_t esz) {
#ifdef DW_X86
    if (esz == 1 && OW <= 64 && strcmp(mlrt_qgemm_kernel_name(), "portable") != 0) {
        copy_rows_avx512(y, src, OH, OW, PWs);
        return true;
    }
#endif
    (void)y, (void)src, (void)OH, (void)OW, (void)PWs, (void)esz;
    return false;
}

/* Task t = n * n_blocks + block: input channels [c0, c1) of image n, then their outputs. */
static void dw_tasks(void *arg, int64_t begin, int64_t end) {
    dw_job *d = arg;
    const qconv_job *j = d->j;
    const qconv_geom *g = &j->g;
    int64_t OH = g->out[0], OW = g->out[1];
    size_t esz = j->out.out_type == MLRT_INT32 ? 4 : 1;
    int32_t *planes = mlrt_scratch((size_t)(d->CB * d->S) * sizeof(int32_t));
    char *grid = mlrt_scratch_slot(1, (size_t)(d->CB * g->Mg * d->F16) * esz);
    if (!planes || !grid) {
        atomic_store(&d->failed, 1);
        return;
    }
    dw_planes_fn planes_fn = dw_planes_portable;
    dw_grid_fn grid_fn = dw_grid_portable;
#ifdef DW_X86
    const char *isa = mlrt_qgemm_kernel_name();
    if (strcmp(isa, "portable") != 0) {
        planes_fn = dw_planes_avx512;
        grid_fn = strcmp(isa, "avx512vnni") == 0 ? dw_grid_vnni : dw_grid_bw;
    }
#endif
    for (int64_t t = begin; t < end; ++t) {
        int64_t n = t / d->n_blocks, c0 = t % d->n_blocks * d->CB, c1 = c0 + d->CB < g->G ? c0 + d->CB : g->G;
        for (int64_t c = c0; c < c1; ++c) planes_fn(d, j->x + (n * g->G + c) * g->in_size, planes + (c - c0) * d->S);
        int64_t m0 = c0 * g->Mg, m1 = c1 * g->Mg;
        grid_fn(d, planes, c0, m0, m1, grid);
        for (int64_t m = m0; m < m1; ++m) { /* the output columns of each grid row */
            char *y = (char *)j->out.c + (size_t)((n * g->M + m) * OH * OW) * esz;
            const char *src = grid + (size_t)((m - m0) * d->F16) * esz;
            if (!copy_rows(y, src, OH, OW, d->PWs, esz))
                for (int64_t oh = 0; oh < OH; ++oh)
                    memcpy(y + (size_t)(oh * OW) * esz, src + (size_t)(oh * d->PWs) * esz, (size_t)OW * esz);
        }
    }
}

int mlrt_qconv_depthwise(const mlrt_context *ctx, const qconv_job *j) {
    const qconv_geom *g = &j->g;
    int64_t KH = g->k[0], KW = g->k[1], sh = g->s[0], sw = g->s[1], dh = g->d[0], dw = g->d[1];
    dw_job d = {.T = KH * KW};
    atomic_init(&d.failed, 0);
    int64_t PH = (g->out[0] - 1) * sh + (KH - 1) * dh + 1, PW = (g->out[1] - 1) * sw + (KW - 1) * dw + 1;
    d.PHs = (PH + sh - 1) / sh, d.PWs = (PW + sw - 1) / sw, d.phase = d.PHs * d.PWs;
    d.F = g->out[0] * d.PWs, d.F16 = (d.F + 15) / 16 * 16;
    d.S = sh * sw * d.phase + d.PWs + 32; /* (past a phase plane: a tap's run of the last vector, <= PWs + 15) */
    d.CB = DW_PLANES_BYTES / (d.S * 4);
    int64_t want = 4 * (int64_t)j->threads, per_image = (g->G + want - 1) / want; /* enough tasks for the pool */
    if (g->N == 1 && d.CB > per_image) d.CB = per_image;
    d.CB = d.CB < 1 ? 1 : d.CB > g->G ? g->G : d.CB;
    d.n_blocks = (g->G + d.CB - 1) / d.CB;
    int32_t *w = malloc((size_t)(2 * g->M * d.T + 1) * sizeof(int32_t));
    int64_t *toff = malloc((size_t)d.T * sizeof(int64_t)), chunks = (d.PWs + 15) / 16;
    uint32_t *masks = malloc((size_t)(4 * chunks + 1) * sizeof(uint32_t));
    if (!w || !toff || !masks) {
        free(w);
        free(toff);
        free(masks);
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", j->out.scale ? "QLinearConv" : "ConvInteger");
    }
    for (int64_t m = 0; m < g->M; ++m) {
        int32_t *wm = w + m * d.T, *wv = wm + g->M * d.T;
        if (j->w_type == MLRT_INT8)
            for (int64_t t = 0; t < d.T; ++t) wm[t] = ((const int8_t *)j->w)[m * d.T + t] - j->wz[m];
        else
            for (int64_t t = 0; t < d.T; ++t) wm[t] = ((const uint8_t *)j->w)[m * d.T + t] - j->wz[m];
        for (int64_t t = 0; t < d.T; ++t) wv[t] = wm[t] & 0xFFFF;
    }
    d.keep = masks, d.in = masks + chunks, d.ein = masks + 2 * chunks, d.oin = masks + 3 * chunks;
    for (int64_t u = 0; u < chunks; ++u) {
        int64_t c = 16 * u, at = sw * c - g->pb[1], W = g->in[1];
        d.keep[u] = dw_bits(0, d.PWs - c, 16);
        d.in[u] = dw_bits(-at, W - at, sw == 1 ? 16 : 32);
        d.ein[u] = dw_bits((-at + 1) / 2, (W - at + 1) / 2, 16); /* lanes l: at + 2 l inside x */
        d.oin[u] = dw_bits(-at / 2, (W - at) / 2, 16);          /* at + 2 l + 1 inside x */
    }
    for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
            toff[kh * KW + kw] = ((kh * dh % sh) * sw + kw * dw % sw) * d.phase + (kh * dh / sh) * d.PWs + kw * dw / sw;
    qconv_job jj = *j;
    jj.out.row_add = j->bias;
    jj.out.ldc = 0;
    d.j = &jj, d.w = w, d.wv = w + g->M * d.T, d.toff = toff;
    mlrt_parallel_for(ctx, g->N * d.n_blocks, 1, dw_tasks, &d);
    free(w);
    free(toff);
    free(masks);
    if (atomic_load(&d.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "depthwise convolution: no scratch buffer");
    return MLRT_OK;
}

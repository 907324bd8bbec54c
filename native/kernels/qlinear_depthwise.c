/* qlinear_depthwise.c -- ConvInteger / QLinearConv with one input channel per group
 * (depthwise), 1-D and 2-D, any window, stride, dilation and padding.  Two ways:
 *
 * The lanes (x86 with AVX2 or AVX-512, below): 16 output channels in the int32 lanes of
 * vectors, the planes' geometry out of the vectors, so that small planes and strides cost
 * no more per output than large planes; with VNNI and windows up to 4 wide, a window
 * row's taps in one vpdpbusd (the quads).
 *
 * The grid (every CPU, the portable C): a task takes a block of input channels of one
 * image and copies each plane once into int32 planes of x - x_zp (zero padding) kept as
 * stride phases, as the GEMM path's (phase (a, b) holds padded rows a, a + sh, ... and
 * columns b, b + sw, ...): every tap of an output row is then one contiguous run.  Each
 * output channel m (of input channel m / Mg) sums its taps,
 *     v = sum_t (w_t - w_zp[m]) * P_t[oh][ow]    (int32, wrapping)
 * over the grid of output rows by the phase rows' width (the columns past the output's
 * computed and dropped), and finishes as the integer product does (qgemm.h: + B[m],
 * requantized or int32).  Both give the same bits. */
#include <stdatomic.h>
#include <stdlib.h>

#include "gemm.h"
#include "qconv_internal.h"

/* -- the grid ----------------------------------------------------------------------------------- */

#define DW_PLANES_BYTES (192 * 1024) /* a task's planes, about (what the blocks of channels aim at) */

typedef struct dw_job {
    const qconv_job *j;
    const int32_t *w;          /* (w - w_zp) per output channel and tap */
    const int64_t *toff;       /* the taps' offsets in a channel's planes (tap (kh, kw)) */
    int64_t T;                 /* taps */
    int64_t PHs, PWs, phase;   /* phase rows, row width, elements per phase plane */
    int64_t S;                 /* elements per channel: its phases and what the grid's last vector reads past them */
    int64_t F, F16;            /* grid positions per output channel, rounded up to a vector */
    int64_t CB, n_blocks;      /* input channels per task, tasks per image */
    atomic_int failed;
} dw_job;

/* The phase planes of input plane x into cp (and zeros past them, to S). */
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
    size_t esz = mlrt_qgemm_out_size(&o);
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


/* Task t = n * n_blocks + block: input channels [c0, c1) of image n, then their outputs. */
static void dw_tasks(void *arg, int64_t begin, int64_t end) {
    dw_job *d = arg;
    const qconv_job *j = d->j;
    const qconv_geom *g = &j->g;
    int64_t OH = g->out[0], OW = g->out[1];
    size_t esz = mlrt_qgemm_out_size(&j->out);
    int32_t *planes = mlrt_scratch((size_t)(d->CB * d->S) * sizeof(int32_t));
    char *grid = mlrt_scratch_slot(1, (size_t)(d->CB * g->Mg * d->F16) * esz);
    if (!planes || !grid) {
        atomic_store(&d->failed, 1);
        return;
    }
    for (int64_t t = begin; t < end; ++t) {
        int64_t n = t / d->n_blocks, c0 = t % d->n_blocks * d->CB, c1 = c0 + d->CB < g->G ? c0 + d->CB : g->G;
        for (int64_t c = c0; c < c1; ++c)
            dw_planes_portable(d, j->x + (n * g->G + c) * g->in_size, planes + (c - c0) * d->S);
        int64_t m0 = c0 * g->Mg, m1 = c1 * g->Mg;
        dw_grid_portable(d, planes, c0, m0, m1, grid);
        for (int64_t m = m0; m < m1; ++m) { /* the output columns of each grid row */
            char *y = (char *)j->out.c + (size_t)((n * g->M + m) * OH * OW) * esz;
            const char *src = grid + (size_t)((m - m0) * d->F16) * esz;
            for (int64_t oh = 0; oh < OH; ++oh)
                memcpy(y + (size_t)(oh * OW) * esz, src + (size_t)(oh * d->PWs) * esz, (size_t)OW * esz);
        }
    }
}

static int dw_grid_run(const mlrt_context *ctx, const qconv_job *j) {
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
    int32_t *w = malloc((size_t)(g->M * d.T + 1) * sizeof(int32_t));
    int64_t *toff = malloc((size_t)d.T * sizeof(int64_t));
    if (!w || !toff) {
        free(w);
        free(toff);
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: out of memory", j->out.scale ? "QLinearConv" : "ConvInteger");
    }
    for (int64_t m = 0; m < g->M; ++m) {
        int32_t *wm = w + m * d.T;
        if (j->w_type == MLRT_INT8)
            for (int64_t t = 0; t < d.T; ++t) wm[t] = ((const int8_t *)j->w)[m * d.T + t] - j->wz[m];
        else
            for (int64_t t = 0; t < d.T; ++t) wm[t] = ((const uint8_t *)j->w)[m * d.T + t] - j->wz[m];
    }
    for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
            toff[kh * KW + kw] = ((kh * dh % sh) * sw + kw * dw % sw) * d.phase + (kh * dh / sh) * d.PWs + kw * dw / sw;
    qconv_job jj = *j;
    jj.out.row_add = j->bias;
    jj.out.ldc = 0;
    d.j = &jj, d.w = w, d.toff = toff;
    mlrt_parallel_for(ctx, g->N * d.n_blocks, 1, dw_tasks, &d);
    free(w);
    free(toff);
    if (atomic_load(&d.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "depthwise convolution: no scratch buffer");
    return MLRT_OK;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define DW_X86 1

/* -- channels in vector lanes --------------------------------------------------------------------
 * The grid above computes columns it drops and builds phase planes, which on small planes
 * and at strides costs more than the sums.  Here 16 output channels go in the 16 int32
 * lanes of a vector (two of 8 with AVX2) instead: a task copies the 16 input planes they
 * read into one padded plane of 16-byte positions (position (r, c) holds the 16 channels'
 * canonical x at padded row r, column c; the padding x_zp), 16 bytes of each plane at a
 * time turned by a 16 x 16 byte transpose.  Output position p sums, per tap t, the 16
 * bytes at the tap's position of its window (zero-extended to int32, |.| <= 255) times
 * the pair (w_t - w_zp, 0) as 16-bit halves: one vpdpwssd (VNNI) or vpmaddwd and vpaddd.
 * The zero point comes out of the products,
 *     sum_t (w_t - w_zp)(x_t - x_zp) = sum_t (w_t - w_zp) x_t - x_zp sum_t (w_t - w_zp)
 * (equal in int32, modulo 2^32), its term joining the bias; padding (x = x_zp) still
 * adds nothing.  Sixteen positions' sums are finished as the grid's are, and transposed
 * back into 16 bytes of each channel's output row.  A task is one group of 16 channels of
 * one image, or a band of its output rows where the groups alone would leave a thread
 * idle (an odd count on two threads). */

#define DWL 16 /* channels per group, positions per block */

/* The variants, by the product kernels' instruction set (mlrt_qgemm_kernel_name). */
typedef enum dwl_isa { DWL_NONE, DWL_AVX2, DWL_AVXVNNI, DWL_AVX512BW, DWL_AVX512VNNI } dwl_isa;

typedef struct dwl_job {
    const qconv_job *j;
    int64_t PH, PW;      /* the padded plane the windows read */
    int64_t T, P, P16;   /* taps; output positions, rounded up to a block */
    const int32_t *toff; /* per tap: bytes from its window's first position */
    const int32_t *ob;   /* per output position (P16, the last repeated): bytes to its window's first */
    const int32_t *din;  /* per input element: bytes to its position (PH * PW: one not read) */
    int64_t groups;      /* groups of DWL output channels per image */
    bool quads;          /* the quads below (PW then as wide as they read) */
    int64_t OW4, RS;     /* their blocks of 4 output columns, quad rows kept */
    int64_t bands;       /* tasks per group: bands of output rows */
    dwl_isa isa;
    const mlrt_qgemm_out *fout; /* float output: the lanes store int32 sums, each task then makes its floats */
    atomic_int failed;
} dwl_job;

/* A task's band: output rows [oh0, oh1), the padded rows they read [r0, r1), the
 * elements of x's planes in those rows [e0, e1). */
typedef struct dwl_band {
    int64_t oh0, oh1, r0, r1, e0, e1;
} dwl_band;

/* One group's weights and finish, lanes past the channels zero (stored nowhere). */
typedef struct dwl_group {
    int32_t bias[DWL];   /* B - x_zp sum_t (w_t - w_zp) */
    float scale[DWL];    /* the requantization multiplier per lane */
    int32_t w[];         /* per tap, DWL pairs (w_t - w_zp, 0) */
} dwl_group;

/* 16 rows of 16 bytes transposed in place (r[i][j] <- r[j][i]): four rounds of unpacks,
 * bytes, 16-bit, 32-bit then 64-bit units (SSE2, for every x86 variant). */
static inline __attribute__((always_inline)) void dwl_transpose16(__m128i r[16]) {
    __m128i a[16], b[16], c[16];
    for (int k = 0; k < 8; ++k) { /* a[k]: rows 2k, 2k + 1 interleaved, columns 0-7; a[k + 8]: 8-15 */
        a[k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
        a[k + 8] = _mm_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
    }
    for (int h = 0; h < 2; ++h) /* b[4q + i]: rows 4i .. 4i + 3, columns 4q .. 4q + 3 */
        for (int k = 0; k < 4; ++k) {
            b[8 * h + k] = _mm_unpacklo_epi16(a[8 * h + 2 * k], a[8 * h + 2 * k + 1]);
            b[8 * h + 4 + k] = _mm_unpackhi_epi16(a[8 * h + 2 * k], a[8 * h + 2 * k + 1]);
        }
    for (int q = 0; q < 4; ++q) /* c[4q + k]: rows 8k .. 8k + 7, columns 4q, 4q + 1; c[4q + 2 + k]: 4q + 2, 4q + 3 */
        for (int k = 0; k < 2; ++k) {
            c[4 * q + k] = _mm_unpacklo_epi32(b[4 * q + 2 * k], b[4 * q + 2 * k + 1]);
            c[4 * q + 2 + k] = _mm_unpackhi_epi32(b[4 * q + 2 * k], b[4 * q + 2 * k + 1]);
        }
    for (int q = 0; q < 4; ++q) {
        r[4 * q] = _mm_unpacklo_epi64(c[4 * q], c[4 * q + 1]);
        r[4 * q + 1] = _mm_unpackhi_epi64(c[4 * q], c[4 * q + 1]);
        r[4 * q + 2] = _mm_unpacklo_epi64(c[4 * q + 2], c[4 * q + 3]);
        r[4 * q + 3] = _mm_unpackhi_epi64(c[4 * q + 2], c[4 * q + 3]);
    }
}

/* The band's positions of the padded plane outside x: x_zp. */
static void dwl_border(const dwl_job *d, uint8_t *buf, const dwl_band *b) {
    const qconv_geom *g = &d->j->g;
    int64_t H = g->in[0], W = g->in[1], pt = g->pb[0], pl = g->pb[1], PW = d->PW;
    int64_t left = pl < PW ? pl : PW, right = pl + W < PW ? pl + W : PW; /* x's columns: [left, right) */
    int xz = d->j->xz;
    for (int64_t r = b->r0; r < b->r1; ++r) {
        uint8_t *row = buf + r * PW * DWL;
        if (r < pt || r >= pt + H) {
            memset(row, xz, (size_t)PW * DWL);
            continue;
        }
        if (left > 0) memset(row, xz, (size_t)left * DWL);
        if (right < PW) memset(row + right * DWL, xz, (size_t)(PW - right) * DWL);
    }
}

/* The band's rows of the padded plane of the 16 input planes src[c] into buf. */
static void dwl_fill(const dwl_job *d, const uint8_t *const *src, uint8_t *buf, const dwl_band *b) {
    int64_t n = b->e1;
    dwl_border(d, buf, b);
    __m128i f = _mm_set1_epi8(d->j->x_flip ? (char)0x80 : 0);
    /* (past 16 elements the last block ends at the plane's end, again over some: a partial
     * block's bytes written one by one and read as a vector would stall the load) */
    for (int64_t f0 = b->e0; f0 < n; f0 += DWL) {
        int64_t cnt = n - f0 < DWL ? n - f0 : DWL;
        if (cnt < DWL && n - b->e0 >= DWL) f0 = n - DWL, cnt = DWL;
        __m128i r[DWL];
        for (int c = 0; c < DWL; ++c) {
            if (cnt == DWL) {
                r[c] = _mm_loadu_si128((const __m128i *)(src[c] + f0));
            } else {
                uint8_t tmp[DWL] = {0};
                memcpy(tmp, src[c] + f0, (size_t)cnt);
                r[c] = _mm_loadu_si128((const __m128i *)tmp);
            }
            r[c] = _mm_xor_si128(r[c], f);
        }
        dwl_transpose16(r);
        const int32_t *din = d->din + f0;
        for (int64_t k = 0; k < cnt; ++k) _mm_storeu_si128((__m128i *)(buf + din[k]), r[k]);
    }
}

/* The same with AVX-512: per block of 16 elements, vector a holds channels a, 4 + a, 8 + a,
 * 12 + a in its 128-bit lanes; two rounds of unpacks give, in vector b, lane L, dword i,
 * channels 4L .. 4L + 3 of element 4b + i, which a permute gathers into lane i: element
 * 4b + i's 16 channels, stored whole where four elements lie side by side in the plane. */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void dwl_fill512(const dwl_job *d,
                                                                              const uint8_t *const *src,
                                                                              uint8_t *buf, const dwl_band *band) {
    int64_t n = band->e1;
    if (n - band->e0 < DWL) {
        dwl_fill(d, src, buf, band);
        return;
    }
    dwl_border(d, buf, band);
    __m512i f = _mm512_set1_epi8(d->j->x_flip ? (char)0x80 : 0);
    __m512i gather = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    for (int64_t f0 = band->e0; f0 < n; f0 += DWL) {
        if (f0 + DWL > n) f0 = n - DWL; /* (the last block ends at the band's end, again over some) */
        __m512i z[4];
        for (int a = 0; a < 4; ++a) {
            __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(src[a] + f0)));
            v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(src[4 + a] + f0)), 1);
            v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(src[8 + a] + f0)), 2);
            v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(src[12 + a] + f0)), 3);
            z[a] = _mm512_xor_si512(v, f);
        }
        __m512i lo01 = _mm512_unpacklo_epi8(z[0], z[1]), hi01 = _mm512_unpackhi_epi8(z[0], z[1]);
        __m512i lo23 = _mm512_unpacklo_epi8(z[2], z[3]), hi23 = _mm512_unpackhi_epi8(z[2], z[3]);
        __m512i e[4] = {_mm512_unpacklo_epi16(lo01, lo23), _mm512_unpackhi_epi16(lo01, lo23),
                        _mm512_unpacklo_epi16(hi01, hi23), _mm512_unpackhi_epi16(hi01, hi23)};
        const int32_t *din = d->din + f0;
        for (int b = 0; b < 4; ++b) {
            __m512i v = _mm512_permutexvar_epi32(gather, e[b]);
            const int32_t *at = din + 4 * b;
            if (at[1] == at[0] + DWL && at[2] == at[0] + 2 * DWL && at[3] == at[0] + 3 * DWL) {
                _mm512_storeu_si512((void *)(buf + at[0]), v);
            } else {
                _mm_storeu_si128((__m128i *)(buf + at[0]), _mm512_castsi512_si128(v));
                _mm_storeu_si128((__m128i *)(buf + at[1]), _mm512_extracti32x4_epi32(v, 1));
                _mm_storeu_si128((__m128i *)(buf + at[2]), _mm512_extracti32x4_epi32(v, 2));
                _mm_storeu_si128((__m128i *)(buf + at[3]), _mm512_extracti32x4_epi32(v, 3));
            }
        }
    }
}

/* Block of 16 output positions (cnt of them stored), r[k] the 16 channels of position k:
 * transposed, into the channels' output rows (nch of them, y at the first's block). */
static inline __attribute__((always_inline)) void dwl_store_bytes(__m128i r[DWL], char *y, int64_t out_size,
                                                                  int64_t nch, int64_t cnt) {
    dwl_transpose16(r);
    for (int64_t c = 0; c < nch; ++c) {
        if (cnt == DWL) {
            _mm_storeu_si128((__m128i *)(y + c * out_size), r[c]);
        } else {
            uint8_t tmp[DWL];
            _mm_storeu_si128((__m128i *)tmp, r[c]);
            memcpy(y + c * out_size, tmp, (size_t)cnt);
        }
    }
}

/* The same, a partial block by masked stores (AVX-512). */
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) static inline void dwl_store_bytes512(
    __m128i r[DWL], char *y, int64_t out_size, int64_t nch, int64_t cnt) {
    dwl_transpose16(r);
    __mmask16 k = (__mmask16)((1u << cnt) - 1);
    for (int64_t c = 0; c < nch; ++c) _mm_mask_storeu_epi8(y + c * out_size, k, r[c]);
}

/* The same for int32 sums, v[k * 16 + c] channel c of position k. */
static void dwl_store32(const int32_t *v, int32_t *y, int64_t out_size, int64_t nch, int64_t cnt) {
    for (int64_t c = 0; c < nch; ++c)
        for (int64_t k = 0; k < cnt; ++k) y[c * out_size + k] = v[k * DWL + c];
}

/* The output positions of one group from its padded plane (y at its first channel's row). */
typedef void (*dwl_compute_fn)(const dwl_job *d, const uint8_t *buf, const dwl_group *gr, char *y, int64_t nch,
                               const dwl_band *b);

/* AVX-512: positions in blocks of 16 (4 at the end), one accumulator per position. */
#define DWL_MAC_BW(a, x, w) _mm512_add_epi32(a, _mm512_madd_epi16(x, w))
#define DWL_MAC_VNNI(a, x, w) _mm512_dpwssd_epi32(a, x, w)
#define DEFINE_DWL_512(NAME, TARGET, MAC)                                                                          \
    __attribute__((target(TARGET), always_inline)) static inline void dwl_acc_##NAME(                             \
        const dwl_job *d, const uint8_t *buf, const dwl_group *gr, const int32_t *ob, int np, __m512i a[DWL]) {     \
        for (int k = 0; k < DWL; ++k) a[k] = _mm512_setzero_si512();                                               \
        for (int64_t t = 0; t < d->T; ++t) {                                                                       \
            __m512i wt = _mm512_loadu_si512((const void *)(gr->w + t * DWL));                                      \
            const uint8_t *bt = buf + d->toff[t];                                                                  \
            _Pragma("GCC unroll 16") for (int k = 0; k < np; ++k) a[k] =                                           \
                MAC(a[k], _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(bt + ob[k]))), wt);               \
        }                                                                                                          \
    }                                                                                                              \
    __attribute__((target(TARGET))) static void dwl_compute_##NAME(                                               \
        const dwl_job *d, const uint8_t *buf, const dwl_group *gr, char *y, int64_t nch, const dwl_band *b) {      \
        const mlrt_qgemm_out *o = &d->j->out;                                                                      \
        int64_t out_size = d->j->g.out_size;                                                                       \
        __m512i bias = _mm512_loadu_si512((const void *)gr->bias), zp = _mm512_set1_epi32(o->zp);                  \
        __m512 scale = _mm512_loadu_ps(gr->scale), flo = _mm512_set1_ps((float)(o->lo - o->zp));                   \
        __m512 fhi = _mm512_set1_ps((float)(o->hi - o->zp));                                                       \
        int64_t pe = b->oh1 * d->j->g.out[1];                                                                      \
        for (int64_t p0 = b->oh0 * d->j->g.out[1]; p0 < pe; p0 += DWL) {                                           \
            int64_t cnt = pe - p0 < DWL ? pe - p0 : DWL;                                                           \
            __m512i a[DWL];                                                                                        \
            if (cnt > 4) dwl_acc_##NAME(d, buf, gr, d->ob + p0, DWL, a);                                           \
            else dwl_acc_##NAME(d, buf, gr, d->ob + p0, 4, a);                                                     \
            if (!o->scale) {                                                                                       \
                int32_t v[DWL * DWL];                                                                              \
                for (int k = 0; k < DWL; ++k) _mm512_storeu_si512((void *)(v + k * DWL), _mm512_add_epi32(a[k], bias)); \
                dwl_store32(v, (int32_t *)y + p0, out_size, nch, cnt);                                             \
                continue;                                                                                          \
            }                                                                                                      \
            __m128i r[DWL];                                                                                        \
            for (int k = 0; k < DWL; ++k) {                                                                        \
                __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(a[k], bias)), scale);                 \
                f = _mm512_min_ps(_mm512_max_ps(f, flo), fhi); /* (NaN: the low end) */                            \
                __m512i q = _mm512_add_epi32(_mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp); \
                r[k] = _mm512_cvtepi32_epi8(q); /* (in range: the low bytes) */                                    \
            }                                                                                                      \
            dwl_store_bytes512(r, y + p0, out_size, nch, cnt);                                                          \
        }                                                                                                          \
    }
DEFINE_DWL_512(bw, "avx512f,avx512bw,avx512vl", DWL_MAC_BW)
DEFINE_DWL_512(vnni, "avx512f,avx512bw,avx512vl,avx512vnni", DWL_MAC_VNNI)

/* AVX2: the 16 channels in two vectors of 8; positions in blocks of 16, summed 4 at a
 * time (8 accumulators, 2 weight vectors: the 16 registers). */
#define DWL_MAC_AVX2(a, x, w) _mm256_add_epi32(a, _mm256_madd_epi16(x, w))
#define DWL_MAC_AVXVNNI(a, x, w) _mm256_dpwssd_avx_epi32(a, x, w)
#define DEFINE_DWL_256(NAME, TARGET, MAC)                                                                          \
    __attribute__((target(TARGET))) static void dwl_compute_##NAME(                                               \
        const dwl_job *d, const uint8_t *buf, const dwl_group *gr, char *y, int64_t nch, const dwl_band *b) {      \
        const mlrt_qgemm_out *o = &d->j->out;                                                                      \
        int64_t out_size = d->j->g.out_size, OW = d->j->g.out[1], pe = b->oh1 * OW;                               \
        __m256i bias0 = _mm256_loadu_si256((const __m256i *)gr->bias), zp = _mm256_set1_epi32(o->zp);              \
        __m256i bias1 = _mm256_loadu_si256((const __m256i *)(gr->bias + 8));                                       \
        __m256 scale0 = _mm256_loadu_ps(gr->scale), scale1 = _mm256_loadu_ps(gr->scale + 8);                       \
        __m256 flo = _mm256_set1_ps((float)(o->lo - o->zp)), fhi = _mm256_set1_ps((float)(o->hi - o->zp));        \
        for (int64_t p0 = b->oh0 * OW; p0 < pe; p0 += DWL) {                                                       \
            int64_t cnt = pe - p0 < DWL ? pe - p0 : DWL;                                                           \
            const int32_t *ob = d->ob + p0;                                                                        \
            int32_t v[DWL * DWL]; /* position k's 16 sums at v + 16 k */                                          \
            for (int64_t k0 = 0; k0 < cnt; k0 += 4) {                                                              \
                __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, c0 = a0, c1 = a0, c2 = a0, c3 = a0; \
                const int32_t *o4 = ob + k0;                                                                       \
                for (int64_t t = 0; t < d->T; ++t) {                                                               \
                    __m256i w0 = _mm256_loadu_si256((const __m256i *)(gr->w + t * DWL));                           \
                    __m256i w1 = _mm256_loadu_si256((const __m256i *)(gr->w + t * DWL + 8));                       \
                    const uint8_t *bt = buf + d->toff[t];                                                          \
                    /* (channels 0-7, then 8-15, of each position, zero-extended) */                               \
                    a0 = MAC(a0, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(bt + o4[0]))), w0);        \
                    c0 = MAC(c0, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(bt + o4[0] + 8))), w1);    \
                    a1 = MAC(a1, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(bt + o4[1]))), w0);        \
                    c1 = MAC(c1, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(bt + o4[1] + 8))), w1);    \
                    a2 = MAC(a2, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(bt + o4[2]))), w0);        \
                    c2 = MAC(c2, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(bt + o4[2] + 8))), w1);    \
                    a3 = MAC(a3, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(bt + o4[3]))), w0);        \
                    c3 = MAC(c3, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(bt + o4[3] + 8))), w1);    \
                }                                                                                                  \
                __m256i s[8] = {a0, c0, a1, c1, a2, c2, a3, c3};                                                   \
                for (int i = 0; i < 8; ++i)                                                                        \
                    _mm256_storeu_si256((__m256i *)(v + (k0 + i / 2) * DWL + 8 * (i % 2)),                         \
                                        _mm256_add_epi32(s[i], i % 2 ? bias1 : bias0));                             \
            }                                                                                                      \
            if (!o->scale) {                                                                                       \
                dwl_store32(v, (int32_t *)y + p0, out_size, nch, cnt);                                             \
                continue;                                                                                          \
            }                                                                                                      \
            __m128i r[DWL];                                                                                        \
            for (int k = 0; k < DWL; ++k) {                                                                        \
                if (k >= cnt) {                                                                                    \
                    r[k] = _mm_setzero_si128();                                                                    \
                    continue;                                                                                      \
                }                                                                                                  \
                __m256i q[2];                                                                                      \
                for (int h = 0; h < 2; ++h) {                                                                      \
                    __m256 f = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(v + k * DWL + 8 * h)));      \
                    f = _mm256_mul_ps(f, h ? scale1 : scale0);                                                     \
                    f = _mm256_min_ps(_mm256_max_ps(f, flo), fhi); /* (NaN: the low end) */                        \
                    q[h] = _mm256_add_epi32(_mm256_cvtps_epi32(f), zp); /* (nearest even: the default mode) */     \
                }                                                                                                  \
                /* (in range: the saturating packs keep the values) channels 0-3, 8-11 | 4-7, 12-15 */            \
                __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), 0xD8);                        \
                __m128i lo = _mm256_castsi256_si128(w), hi = _mm256_extracti128_si256(w, 1);                       \
                r[k] = o->out_type == MLRT_UINT8 ? _mm_packus_epi16(lo, hi) : _mm_packs_epi16(lo, hi);             \
            }                                                                                                      \
            dwl_store_bytes(r, y + p0, out_size, nch, cnt);                                                        \
        }                                                                                                          \
    }
DEFINE_DWL_256(avx2, "avx2", DWL_MAC_AVX2)
DEFINE_DWL_256(avxvnni, "avx2,avxvnni", DWL_MAC_AVXVNNI)

/* Quads (AVX-512 VNNI, a requantized y, windows up to 4 wide, column stride 1, every
 * w - w_zp an int8): vpdpbusd sums four u8 x s8 products per int32 lane, so the taps of a
 * window row go in one instruction when each lane holds a channel's four x of that row.
 * A vector then covers 4 output columns (its 128-bit lanes) by 4 channels (the int32
 * lanes of each); block (r, u) of the quad plane, four vectors for the 16 channels, holds
 * padded row r's columns 4 u + L + i dw (lane L, byte i), built from the padded plane by
 * two rounds of unpacks, once per row into a ring of the KH dilated rows a window spans.
 * Output columns 4u .. 4u + 3 of row oh sum the blocks (oh sh + kh dh, u) over kh against
 * the rows' weights (w(kh, i) - w_zp in byte i, 0 past the window), KH instructions per
 * 64 outputs; the padded plane is wide enough for every lane's four columns, those past
 * the window taken by zero weights.  The finished bytes are turned into 4 columns of each
 * channel's row by a pack, a permute and a shuffle, four blocks' into 16 columns of each
 * channel's row by two rounds of unpacks.  (At column stride 2 building the quads, from
 * every other position or from planes split by column parity, costs more than they save,
 * measured: the lanes run it.) */

/* A group's weights and finish for the quads, by channel (broadcast to the 4 lanes). */
typedef struct dwq_group {
    int32_t bias[DWL];
    float scale[DWL];
    float fbias[DWL]; /* float output: the bias added after the scale */
    int32_t w[]; /* per window row kh, per channel: its 4 weights of the row as int8 */
} dwq_group;

/* Row r of the quad plane into q (OW4 blocks of 4 vectors). */
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) static inline void dwq_row(
    const uint8_t *buf, int64_t r, int64_t PW, int64_t OW4, int64_t dw, __m512i *q) {
    for (int64_t u = 0; u < OW4; ++u, q += 4) {
        const uint8_t *b = buf + (r * PW + 4 * u) * DWL;
        __m512i a[4]; /* tap i of lane L: column 4u + L + i dw */
        for (int i = 0; i < 4; ++i) a[i] = _mm512_loadu_si512((const void *)(b + i * dw * DWL));
        __m512i lo01 = _mm512_unpacklo_epi8(a[0], a[1]), hi01 = _mm512_unpackhi_epi8(a[0], a[1]);
        __m512i lo23 = _mm512_unpacklo_epi8(a[2], a[3]), hi23 = _mm512_unpackhi_epi8(a[2], a[3]);
        _mm512_storeu_si512((void *)q, _mm512_unpacklo_epi16(lo01, lo23));       /* channels 0-3 */
        _mm512_storeu_si512((void *)(q + 1), _mm512_unpackhi_epi16(lo01, lo23)); /* 4-7 */
        _mm512_storeu_si512((void *)(q + 2), _mm512_unpacklo_epi16(hi01, hi23)); /* 8-11 */
        _mm512_storeu_si512((void *)(q + 3), _mm512_unpackhi_epi16(hi01, hi23)); /* 12-15 */
    }
}

/* Float outputs of a block of 4 columns (4 u ..) from the sums acc[j] (lane L, dword i:
 * column 4 u + L, channel 4 j + i), finished as mlrt_qgemm_float1 (the same operations in the
 * same order: the bits of the other paths), each channel's 4 columns stored as they lie. */
__attribute__((target("avx512f,avx512vl"), always_inline)) static inline void dwq_store_float(
    const mlrt_qgemm_out *o, const __m512i acc[4], const __m512i bias[4], const __m512 scale[4], const __m512 fb[4],
    float *y, int64_t out_size, int64_t nch, int64_t cnt) {
    /* dword 4 L + i -> 4 i + L: 128-bit lane i then holds channel 4 j + i's 4 columns */
    __m512i turn = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m512 lo = _mm512_set1_ps(o->flo), hi = _mm512_set1_ps(o->fhi);
    bool clamp = mlrt_qgemm_clamps(o);
    __mmask8 k = (__mmask8)((1u << cnt) - 1);
    for (int j = 0; j < 4; ++j) {
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc[j], bias[j])), scale[j]);
        if (o->fbias) f = _mm512_add_ps(f, fb[j]);
        if (clamp) f = _mm512_min_ps(_mm512_max_ps(f, lo), hi); /* (as y > lo ? y : lo, then y < hi ? y : hi) */
        f = _mm512_permutexvar_ps(turn, f);
        __m128 lane[4] = {_mm512_castps512_ps128(f), _mm512_extractf32x4_ps(f, 1), _mm512_extractf32x4_ps(f, 2),
                          _mm512_extractf32x4_ps(f, 3)};
        for (int i = 0; i < 4; ++i)
            if (4 * j + i < nch) _mm_mask_storeu_ps(y + (4 * j + i) * out_size, k, lane[i]);
    }
}

/* The quad plane of the group from its padded plane, then its outputs (int8 / uint8, or
 * float). */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) static void dwq_compute(
    const dwl_job *d, const uint8_t *buf, __m512i *qp, const dwq_group *gr, char *y, int64_t nch, const dwl_band *b) {
    const qconv_geom *g = &d->j->g;
    const mlrt_qgemm_out *o = &d->j->out;
    int64_t KH = g->k[0], sh = g->s[0], dh = g->d[0], dw = g->d[1], OW = g->out[1];
    int64_t OW4 = d->OW4, PW = d->PW, out_size = g->out_size;
    __m512i zp = _mm512_set1_epi32(o->zp), bias[4];
    __m512 flo = _mm512_set1_ps((float)(o->lo - o->zp)), fhi = _mm512_set1_ps((float)(o->hi - o->zp)), scale[4], fb[4];
    for (int j = 0; j < 4; ++j) /* lane (L, i) of vector j: channel 4 j + i */
        bias[j] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(gr->bias + 4 * j))),
        scale[j] = _mm512_broadcast_f32x4(_mm_loadu_ps(gr->scale + 4 * j)),
        fb[j] = _mm512_broadcast_f32x4(_mm_loadu_ps(gr->fbias + 4 * j));
    bool fl = o->out_type == MLRT_FLOAT;
    /* lane L, dword m: channels 4m .. 4m + 3 of column L -> lane m, dword L; then lane m's
     * bytes (column L, channel 4m + i) at 4L + i -> 4i + L: dword c, channel c's 4 columns */
    __m512i gather = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m512i turn = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    bool u8 = o->out_type == MLRT_UINT8;
    int64_t RS = d->RS, built = b->oh0 * sh; /* quad rows kept (a ring), the next row to build */
    for (int64_t oh = b->oh0; oh < b->oh1; ++oh) {
        for (; built <= oh * sh + (KH - 1) * dh; ++built) dwq_row(buf, built, PW, OW4, dw, qp + (built % RS) * OW4 * 4);
        for (int64_t u0 = 0; u0 < OW4; u0 += 4) { /* 16 columns: 4 blocks */
            __m512i v[4];
            for (int64_t u = u0; u < u0 + 4; ++u) {
                if (u >= OW4) {
                    v[u - u0] = _mm512_setzero_si512();
                    continue;
                }
                __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                                  _mm512_setzero_si512()};
                for (int64_t kh = 0; kh < KH; ++kh) {
                    const __m512i *q = qp + (((oh * sh + kh * dh) % RS) * OW4 + u) * 4;
                    const int32_t *w = gr->w + kh * DWL;
                    for (int j = 0; j < 4; ++j)
                        acc[j] = _mm512_dpbusd_epi32(acc[j], _mm512_loadu_si512((const void *)(q + j)),
                                                     _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(w + 4 * j))));
                }
                if (fl) { /* (no byte packing: each block's floats stored here) */
                    int64_t cols = OW - 4 * u < 4 ? OW - 4 * u : 4;
                    dwq_store_float(o, acc, bias, scale, fb, (float *)y + oh * OW + 4 * u, out_size, nch, cols);
                    continue;
                }
                for (int j = 0; j < 4; ++j) {
                    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc[j], bias[j])), scale[j]);
                    f = _mm512_min_ps(_mm512_max_ps(f, flo), fhi); /* (NaN: the low end) */
                    acc[j] = _mm512_add_epi32(_mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                                              zp);
                }
                /* (in range: the saturating packs keep the values) lane L: channels 0-15 of column L */
                __m512i w01 = _mm512_packs_epi32(acc[0], acc[1]), w23 = _mm512_packs_epi32(acc[2], acc[3]);
                __m512i bytes = u8 ? _mm512_packus_epi16(w01, w23) : _mm512_packs_epi16(w01, w23);
                v[u - u0] = _mm512_shuffle_epi8(_mm512_permutexvar_epi32(gather, bytes), turn);
            }
            if (fl) continue;
            /* dword c of v[k]: channel c's columns 4 (u0 + k) ..; two rounds of unpacks give, in
             * lane L of t[i], channel 4L + i's 16 columns */
            __m512i lo01 = _mm512_unpacklo_epi32(v[0], v[1]), hi01 = _mm512_unpackhi_epi32(v[0], v[1]);
            __m512i lo23 = _mm512_unpacklo_epi32(v[2], v[3]), hi23 = _mm512_unpackhi_epi32(v[2], v[3]);
            __m512i t[4] = {_mm512_unpacklo_epi64(lo01, lo23), _mm512_unpackhi_epi64(lo01, lo23),
                            _mm512_unpacklo_epi64(hi01, hi23), _mm512_unpackhi_epi64(hi01, hi23)};
            int64_t ow = 4 * u0, cnt = OW - ow < 16 ? OW - ow : 16;
            __mmask16 k = (__mmask16)((1u << cnt) - 1);
            char *yo = y + oh * OW + ow;
            for (int i = 0; i < 4; ++i) {
                __m128i lane[4] = {_mm512_castsi512_si128(t[i]), _mm512_extracti32x4_epi32(t[i], 1),
                                   _mm512_extracti32x4_epi32(t[i], 2), _mm512_extracti32x4_epi32(t[i], 3)};
                for (int L = 0; L < 4; ++L)
                    if (4 * L + i < nch) _mm_mask_storeu_epi8(yo + (4 * L + i) * out_size, k, lane[L]);
            }
        }
    }
}

/* The quads' weights, bias and multipliers of output channels m0 .. m0 + nch - 1. */
static void dwq_prepare(const dwl_job *d, int64_t m0, int64_t nch, dwq_group *gr) {
    const qconv_job *j = d->j;
    const qconv_geom *g = &j->g;
    const mlrt_qgemm_out *o = &j->out;
    int64_t KH = g->k[0], KW = g->k[1], T = KH * KW;
    memset(gr, 0, sizeof(dwq_group) + (size_t)(KH * DWL) * sizeof(int32_t));
    uint8_t *quads = (uint8_t *)gr->w; /* byte kw of channel c's row kh */
    for (int64_t c = 0; c < nch; ++c) {
        int64_t m = m0 + c;
        int32_t wz = j->wz[m];
        uint32_t sum = 0;
        if (j->w_type == MLRT_INT8) {
            const int8_t *w = (const int8_t *)j->w + m * T;
            for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) {
                    int32_t v = w[kh * KW + kw] - wz;
                    quads[(kh * DWL + c) * 4 + kw] = (uint8_t)v, sum += (uint32_t)v;
                }
        } else {
            const uint8_t *w = (const uint8_t *)j->w + m * T;
            for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) {
                    int32_t v = w[kh * KW + kw] - wz;
                    quads[(kh * DWL + c) * 4 + kw] = (uint8_t)v, sum += (uint32_t)v;
                }
        }
        gr->bias[c] = (int32_t)((j->bias ? (uint32_t)j->bias[m] : 0u) - (uint32_t)j->xz * sum);
        gr->scale[c] = o->scale[o->scale_mode == MLRT_QSCALE_ROW ? m : 0];
        gr->fbias[c] = o->fbias ? o->fbias[m] : 0.0f; /* (a conv's float bias is by channel) */
    }
}

/* Task t = n * groups + group: its weights, its padded plane, its outputs. */
static void dwl_tasks(void *arg, int64_t begin, int64_t end) {
    dwl_job *d = arg;
    const qconv_job *j = d->j;
    const qconv_geom *g = &j->g;
    const mlrt_qgemm_out *o = &j->out;
    size_t esz = mlrt_qgemm_out_size(o);
    size_t bytes = (size_t)(d->PH * d->PW + 1) * DWL, quads = d->quads ? (size_t)(d->RS * d->OW4) * 4 * 64 : 0;
    uint8_t *buf = mlrt_scratch(quads + bytes); /* the quad plane, then the padded plane */
    size_t wbytes = d->quads ? sizeof(dwq_group) + (size_t)(d->j->g.k[0] * DWL) * sizeof(int32_t)
                             : sizeof(dwl_group) + (size_t)(d->T * DWL) * sizeof(int32_t);
    dwl_group *gr = mlrt_scratch_slot(1, wbytes);
    if (!buf || !gr) {
        atomic_store(&d->failed, 1);
        return;
    }
    dwl_compute_fn compute = d->isa == DWL_AVX512VNNI ? dwl_compute_vnni
                             : d->isa == DWL_AVX512BW ? dwl_compute_bw
                             : d->isa == DWL_AVXVNNI  ? dwl_compute_avxvnni
                                                      : dwl_compute_avx2;
    bool wide = d->isa == DWL_AVX512VNNI || d->isa == DWL_AVX512BW;
    int64_t T = d->T;
    for (int64_t t = begin; t < end; ++t) {
        int64_t n = t / (d->groups * d->bands), m0 = t / d->bands % d->groups * DWL, k = t % d->bands;
        int64_t nch = g->M - m0 < DWL ? g->M - m0 : DWL, OH = g->out[0], H = g->in[0], pt = g->pb[0];
        dwl_band b = {.oh0 = OH * k / d->bands, .oh1 = OH * (k + 1) / d->bands};
        b.r0 = b.oh0 * g->s[0], b.r1 = (b.oh1 - 1) * g->s[0] + (g->k[0] - 1) * g->d[0] + 1;
        int64_t ih0 = b.r0 - pt < 0 ? 0 : b.r0 - pt > H ? H : b.r0 - pt, ih1 = b.r1 - pt < 0 ? 0 : b.r1 - pt > H ? H : b.r1 - pt;
        b.e0 = ih0 * g->in[1], b.e1 = ih1 * g->in[1];
        const uint8_t *src[DWL];
        if (d->quads) {
            for (int64_t c = 0; c < DWL; ++c) {
                int64_t m = m0 + (c < nch ? c : 0);
                src[c] = j->x + (n * g->C + (g->Mg == 1 ? m : m / g->Mg)) * g->in_size;
            }
            dwq_prepare(d, m0, nch, (dwq_group *)gr);
            dwl_fill512(d, src, buf + quads, &b); /* (the quads: AVX-512 VNNI) */
            dwq_compute(d, buf + quads, (__m512i *)buf, (const dwq_group *)gr,
                        (char *)o->c + (size_t)((n * g->M + m0) * g->out_size) * esz, nch, &b);
            continue;
        }
        memset(gr->w, 0, (size_t)(T * DWL) * sizeof(int32_t));
        for (int64_t c = 0; c < DWL; ++c) {
            int64_t m = m0 + (c < nch ? c : 0);
            src[c] = j->x + (n * g->C + (g->Mg == 1 ? m : m / g->Mg)) * g->in_size;
            gr->bias[c] = 0, gr->scale[c] = 0;
            if (c >= nch) continue;
            uint32_t sum = 0;
            for (int64_t k = 0; k < T; ++k) {
                int32_t w = (j->w_type == MLRT_INT8 ? ((const int8_t *)j->w)[m * T + k] : ((const uint8_t *)j->w)[m * T + k]) - j->wz[m];
                gr->w[k * DWL + c] = w & 0xFFFF;
                sum += (uint32_t)w;
            }
            gr->bias[c] = (int32_t)((j->bias ? (uint32_t)j->bias[m] : 0u) - (uint32_t)j->xz * sum);
            if (o->scale) gr->scale[c] = o->scale[o->scale_mode == MLRT_QSCALE_ROW ? m : 0];
        }
        if (wide) dwl_fill512(d, src, buf, &b);
        else dwl_fill(d, src, buf, &b);
        compute(d, buf, gr, (char *)o->c + (size_t)((n * g->M + m0) * g->out_size) * esz, nch, &b);
        if (d->fout) /* (the band's sums, still in cache) */
            for (int64_t c = 0; c < nch; ++c)
                mlrt_qgemm_float_row(d->fout, m0 + c,
                                     (int32_t *)o->c + (n * g->M + m0 + c) * g->out_size + b.oh0 * g->out[1],
                                     (b.oh1 - b.oh0) * g->out[1]);
    }
}

/* Whether the quads take the call (see above). */
static bool dwq_fits(const qconv_job *j, dwl_isa isa) {
    const qconv_geom *g = &j->g;
    if (isa != DWL_AVX512VNNI || !j->out.scale || g->k[1] > 4 || g->s[1] != 1) return false;
    for (int64_t m = 0; m < g->M; ++m) {
        if (j->w_type == MLRT_INT8 && j->wz[m] == 0) continue;
        for (int64_t t = 0; t < g->k_size; ++t) {
            int64_t at = m * g->k_size + t;
            int32_t w = (j->w_type == MLRT_INT8 ? ((const int8_t *)j->w)[at] : ((const uint8_t *)j->w)[at]) - j->wz[m];
            if (w < -128 || w > 127) return false;
        }
    }
    return true;
}

/* The whole call on the lanes path (quicker than the grid on every MobileNet plane, measured:
 * 0.2-0.9 of its time); false: not taken (no SIMD variant, sizes past 32-bit offsets, no
 * memory for the tables: the grid runs). */
static bool dwl_run(const mlrt_context *ctx, const qconv_job *j, int *status) {
    const qconv_geom *g = &j->g;
    int64_t KH = g->k[0], KW = g->k[1], sh = g->s[0], sw = g->s[1], dh = g->d[0], dw = g->d[1];
    int64_t OH = g->out[0], OW = g->out[1], H = g->in[0], W = g->in[1];
    const char *k = mlrt_qgemm_kernel_name();
    dwl_isa isa = strcmp(k, "avx512vnni") == 0 ? DWL_AVX512VNNI
                  : strcmp(k, "avx512bw") == 0 ? DWL_AVX512BW
                  : strcmp(k, "avxvnni") == 0  ? DWL_AVXVNNI
                  : strcmp(k, "avx2") == 0     ? DWL_AVX2
                                               : DWL_NONE;
    if (isa == DWL_NONE) return false;
    qconv_job ji;
    const mlrt_qgemm_out *fout = NULL;
    bool quads = dwq_fits(j, isa); /* (the quads finish float outputs themselves) */
    if (j->out.out_type == MLRT_FLOAT && !quads) { /* int32 sums by the lanes, then floats */
        ji = *j, fout = &j->out;
        ji.out.scale = NULL, ji.out.out_type = MLRT_INT32, ji.out.fbias = NULL;
        j = &ji;
    }
    dwl_job d = {.j = j, .T = KH * KW, .P = OH * OW, .isa = isa, .fout = fout};
    atomic_init(&d.failed, 0);
    d.PH = (OH - 1) * sh + (KH - 1) * dh + 1, d.PW = (OW - 1) * sw + (KW - 1) * dw + 1;
    d.quads = quads;
    if (d.quads) d.OW4 = (OW + 3) / 4, d.PW = 4 * d.OW4 + 3 * dw, d.RS = (KH - 1) * dh + 1;
    d.P16 = (d.P + DWL - 1) / DWL * DWL, d.groups = (g->M + DWL - 1) / DWL;
    if ((d.PH * d.PW + 1) * DWL > INT32_MAX) return false;
    int32_t *tab = malloc((size_t)(d.T + d.P16 + g->in_size) * sizeof(int32_t));
    if (!tab) return false;
    int32_t *toff = tab, *ob = tab + d.T, *din = ob + d.P16;
    for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) toff[kh * KW + kw] = (int32_t)((kh * dh * d.PW + kw * dw) * DWL);
    if (!d.quads)
        for (int64_t oh = 0, p = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow, ++p) ob[p] = (int32_t)((oh * sh * d.PW + ow * sw) * DWL);
    if (!d.quads)
        for (int64_t p = d.P; p < d.P16; ++p) ob[p] = ob[d.P - 1];
    int32_t none = (int32_t)(d.PH * d.PW * DWL);
    for (int64_t ih = 0; ih < H; ++ih) {
        int64_t r = ih + g->pb[0];
        int32_t *di = din + ih * W, at = (int32_t)((r * d.PW + g->pb[1]) * DWL);
        int64_t inside = r < d.PH ? (d.PW - g->pb[1] < W ? d.PW - g->pb[1] : W) : 0; /* (columns c < PW) */
        for (int64_t iw = 0; iw < W; ++iw, at += DWL) di[iw] = iw < inside ? at : none;
    }
    d.toff = toff, d.ob = ob, d.din = din;
    /* bands of rows where the groups would leave a thread idle part of the time (an odd
     * count on two threads), each band at least 2 rows and 16 elements of x */
    int64_t tasks = g->N * d.groups, threads = j->threads > 0 ? j->threads : 1;
    d.bands = 1;
    while (tasks * d.bands % threads != 0 && tasks * d.bands < 8 * threads && OH / (d.bands + 1) >= 2 &&
           OH / (d.bands + 1) * W >= DWL)
        ++d.bands;
    if (tasks * d.bands % threads != 0 && tasks * d.bands < 8 * threads) d.bands = 1;
    mlrt_parallel_for(ctx, tasks * d.bands, 1, dwl_tasks, &d);
    free(tab);
    *status = atomic_load(&d.failed) ? mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "depthwise convolution: no scratch buffer")
                                     : MLRT_OK;
    return true;
}
#endif

int mlrt_qconv_depthwise(const mlrt_context *ctx, const qconv_job *j) {
#ifdef DW_X86
    int status;
    if (dwl_run(ctx, j, &status)) return status;
#endif
    return dw_grid_run(ctx, j);
}

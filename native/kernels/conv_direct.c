/* conv_direct.c -- Conv, direct path: float32, 2-D, strides up to 4, on the SIMD
 * micro-kernels of src/gemm.c (AVX2 / AVX-512) with no patch matrix at all.
 *
 * Each input channel is copied once into a zero-padded plane of width PW (with strides,
 * into one such plane per phase of the strides); row k = (c, kh, kw) of the patch
 * matrix is then that plane shifted by off[k], so the micro-kernels read straight from
 * it (struct conv_direct in src/conv_internal.h).
 * Outputs are computed on the PW-wide grid and its real columns copied out; where the
 * grid is Y's own (1 x 1 kernels, strided ones too) the kernels write Y, Z added in
 * their store.  Pointwise convs read X itself.  One row of outputs (1-D convs) is left
 * to the packed strips (mlrt_conv_direct_setup says why). */
#include "conv_internal.h"
#include "gemm.h"

/* The largest padded copy of the input the path makes (floats, 64 MB). */
#define CONV_DIRECT_MAX_FLOATS ((size_t)1 << 24)

/* Row r of row phase rp of one plane's padded phase planes, every column phase of it:
 * phase column q of column phase cp is input column q * sw + cp - pw (zero outside X).
 * At column strides 2 and 4 the column phases come from one pass over the input row. */
static void pad_row(const conv_job *j, int64_t plane, int64_t rp, int64_t r) {
    const conv_geom *g = &j->g;
    const conv_direct *d = &j->direct;
    int64_t H = g->in[0], Wd = g->in[1], ph = g->pb[0], pw = g->pb[1], PW = d->PW, sh = g->s[0], sw = g->s[1];
    int64_t PH = g->out[0] + (g->k[0] - 1) * g->d[0] / sh, ih = r * sh + rp - ph;
    const float *xr = ih >= 0 && ih < H ? (const float *)j->x + plane * g->in_size + ih * Wd : NULL;
    float *row[4] = {NULL, NULL, NULL, NULL};
    int64_t a[4] = {0}, b[4] = {0};
    for (int64_t cp = 0; cp < sw; ++cp) {
        if (!(d->used >> (rp * sw + cp) & 1)) continue; /* no tap reads it (a 1x1 kernel: one phase) */
        float *p = d->P + plane * d->plane + (rp * sw + cp) * d->phase;
        row[cp] = p + r * PW;
        if (r == PH - 1) memset(p + PH * PW, 0, (size_t)(d->phase - PH * PW) * sizeof(float)); /* the slack */
        if (!xr) { memset(row[cp], 0, (size_t)PW * sizeof(float)); row[cp] = NULL; continue; }
        /* the phase columns [a, b) read input columns inside X */
        int64_t lo = pw - cp <= 0 ? 0 : (pw - cp + sw - 1) / sw;
        int64_t hi = Wd + pw - cp <= 0 ? 0 : (Wd + pw - cp + sw - 1) / sw;
        lo = lo < PW ? lo : PW, hi = hi < PW ? hi : PW, hi = hi > lo ? hi : lo;
        a[cp] = lo, b[cp] = hi;
        memset(row[cp], 0, (size_t)lo * sizeof(float));
        memset(row[cp] + hi, 0, (size_t)(PW - hi) * sizeof(float));
    }
    int64_t done[2] = {0, 0};
    if (sw == 2 && row[0] && row[1]) {
        /* input column t feeds column phase (t + pw) % 2: split the run both phases read */
        int64_t t0 = 2 * a[0] - pw, t1 = 2 * a[1] + 1 - pw;
        int64_t first = t0 < t1 ? 0 : 1, second = 1 - first;
        int64_t n = b[first] - a[first] < b[second] - a[second] ? b[first] - a[first] : b[second] - a[second];
        if ((first == 0 ? t1 - t0 : t0 - t1) == 1 && n > 0) {
            mlrt_split_even_odd(xr + (first == 0 ? t0 : t1), row[first] + a[first], row[second] + a[second], n);
            done[0] = done[1] = n;
        }
    }
    /* at column stride 4 the phase columns [q0, q1) that all four phases read inside X are
     * split from one pass (input columns 4 q0 - pw ..., the first in phase 0) */
    int64_t q0 = 0, q1 = 0;
    if (sw == 4 && row[0] && row[1] && row[2] && row[3]) {
        q0 = a[0], q1 = b[0];
        for (int64_t cp = 1; cp < 4; ++cp) q0 = a[cp] > q0 ? a[cp] : q0, q1 = b[cp] < q1 ? b[cp] : q1;
        if (q1 > q0) {
            float *const at[4] = {row[0] + q0, row[1] + q0, row[2] + q0, row[3] + q0};
            mlrt_split_mod4(xr + q0 * 4 - pw, at, q1 - q0);
        } else {
            q0 = q1 = 0;
        }
    }
    for (int64_t cp = 0; cp < sw; ++cp) {
        if (!row[cp]) continue;
        const float *src = xr + a[cp] * sw + cp - pw;
        float *dst = row[cp] + a[cp];
        int64_t from = cp < 2 ? done[cp] : 0, count = b[cp] - a[cp];
        if (sw == 1) {
            memcpy(dst, src, (size_t)count * sizeof(float));
            continue;
        }
        for (int64_t q = from; q < count; ++q) {
            if (a[cp] + q == q0 && q1 > q0) { /* (split above) */
                q = q1 - a[cp] - 1;
                continue;
            }
            dst[q] = src[q * sw];
        }
    }
}

/* Rows [begin, end) of the padded phase planes, counted over (image, row, plane = the
 * image's channel, row phase): each thread pads the rows that the output rows it then
 * computes read (the conv's tasks are cut by output position), of every channel.  (Cut
 * by channel first, a thread read half of its rows from the other core's cache:
 * MobileNetV2's stem alone, 3 -> 32 at 112 x 112, took 233-250 us on two threads, 300
 * on one; now 158-173.  In the models, where the input comes from memory, 0-2% of the
 * run: SqueezeNet 1.2%, a ResNet stem and pool 2.4%.) */
static void direct_pad_rows(void *arg, int64_t begin, int64_t end) {
    const conv_job *j = arg;
    const conv_geom *g = &j->g;
    int64_t sh = g->s[0], PH = g->out[0] + (g->k[0] - 1) * g->d[0] / sh, C = g->C;
    for (int64_t t = begin; t < end; ++t) {
        int64_t n = t / (PH * C * sh), r = t / (C * sh) % PH, c = t / sh % C;
        pad_row(j, n * C + c, t % sh, r);
    }
}

/* Filters from which a 1 x 1 conv takes the packed-strip path instead; and with fewer,
 * the input channels and output positions from which it does too. */
#define POINTWISE_PACKED_MIN_FILTERS 48
#define POINTWISE_PACKED_MIN_CHANNELS 64
#define POINTWISE_PACKED_MIN_POSITIONS 2048

/* Decide on (and set up) the direct path: float, 2-D, strides up to 4, and a grid not so
 * much wider than the output that the dropped columns cost more than packing saves. */
int mlrt_conv_direct_setup(conv_job *j, const mlrt_context *ctx) {
    const conv_geom *g = &j->g;
    conv_direct *d = &j->direct;
    memset(d, 0, sizeof *d);
    int64_t sh = g->s[0], sw = g->s[1];
    if (!j->strip || g->nd != 2 || sh > 4 || sw > 4) return MLRT_OK;
    /* A 1 x 1 kernel's patch rows are X's own (strided or not): packing a tile of them
     * into strips (kernels/conv_gemm.c) is a plain copy, after which the micro-kernels
     * read whole aligned vectors in sequence instead of a row of each input channel
     * across X.  Measured on AVX-512 (Sapphire Rapids): 10-30% faster per conv from 48
     * filters on, at 16 to 24 filters the copy costs more than it saves -- but over many
     * channels and a large plane, where the tile's rows here are that many streams
     * across X: SqueezeNet's squeeze convs at 55 x 55 (64 and 128 -> 16 channels) took
     * 93 -> 77 and 191 -> 162 us on two threads (the whole model 1-2% faster on two
     * threads, within 1% on one); MobileNetV2's 1 x 1 convs to 16 and 32 filters (from 32
     * channels at 112 x 112, from 192 at 28 x 28) stay here, 30-40% slower packed. */
    if (g->k_size == 1 && (g->Mg >= POINTWISE_PACKED_MIN_FILTERS ||
                           (g->kdim >= POINTWISE_PACKED_MIN_CHANNELS && g->out_size >= POINTWISE_PACKED_MIN_POSITIONS)))
        return MLRT_OK;
    /* One row of outputs (1-D convs, [N, C, 1, L]) from a kernel of 2 taps or more: its
     * patch rows are runs of one input row, and packing a tile of them into strips costs
     * less than reading them here saves (shifted runs of each channel's plane, across
     * cache lines, one line per tap where strides keep the taps apart).  Measured on
     * AVX-512, one core: the packed strips 10-15% faster at stride 1 (kernels 3 to 7,
     * 64 to 512 channels, 1024 to 8192 long), 15-20% at strides 2 and 4.  (As rows here,
     * one task took the whole row: a 4096-long conv ran on one thread.) */
    if (g->out[0] == 1 && g->k_size > 1) return MLRT_OK;
    int64_t OH = g->out[0], OW = g->out[1];
    int64_t PW = g->pointwise ? OW : OW + (g->k[1] - 1) * g->d[1] / sw;
    if (!g->pointwise && g->Mg * (PW - OW) >= 48 * OW) return MLRT_OK;
    int64_t PH = OH + (g->k[0] - 1) * g->d[0] / sh;
    d->PW = PW;
    /* slack: the last row's taps read past it; and whole 64-byte lines, so that every
     * (phase) plane starts aligned: a 1 x 1 strided conv's rows are then all aligned (a
     * vector load across two lines costs two: 10-20% of such a conv on AVX-512) */
    d->phase = ((PH + 1) * PW + 64 + 15) / 16 * 16;
    d->plane = g->pointwise ? g->in_size : (g->k_size == 1 ? 1 : sh * sw) * d->phase; /* 1x1: one phase */
    d->vsize = g->pointwise ? g->out_size : OH * PW;
    size_t planes = g->pointwise ? 0 : (size_t)(g->N * g->C);
    if (planes * (size_t)d->plane > CONV_DIRECT_MAX_FLOATS) { /* a padded copy that big: pack instead */
        memset(d, 0, sizeof *d);
        return MLRT_OK;
    }
    char *mem = mlrt_scratch_slot(1, (size_t)g->kdim * sizeof(int64_t) + planes * (size_t)d->plane * sizeof(float) + 64);
    if (!mem) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Conv: cannot allocate the padded input");
    d->off = (int64_t *)mem;
    /* the taps' offsets within a channel's planes once, then the channels' (four
     * divisions per row of the patch matrix took a fifth of a small conv's time: 387
     * rows, 3 outputs) */
    int64_t *off = d->off;
    if (g->pointwise) {
        for (int64_t k = 0; k < g->kdim; ++k) off[k] = k * g->in_size;
    } else {
        for (int64_t t = 0; t < g->k_size; ++t) {
            int64_t kh = t / g->k[1] * g->d[0], kw = t % g->k[1] * g->d[1];
            off[t] = (kh % sh * sw + kw % sw) * d->phase + kh / sh * PW + kw / sw;
            d->used |= 1u << (kh % sh * sw + kw % sw);
        }
        for (int64_t k = g->k_size; k < g->kdim; ++k) off[k] = off[k - g->k_size] + d->plane;
    }
    if (!g->pointwise) {
        d->P = (float *)(mem + ((size_t)g->kdim * sizeof(int64_t) + 63) / 64 * 64);
        int64_t rows = (int64_t)planes * sh * PH, grain = (1 << 15) / (sw * PW) + 1; /* chunks of ~128 KB */
        mlrt_parallel_for(ctx, rows, grain, direct_pad_rows, j);
    }
    return MLRT_OK;
}

/* Rows of X per block of a pointwise conv: as many as keep the tile's block of X within
 * half of L2 (a 7 x 7 output takes K up to 1024 at once, so the packed weights stream
 * through once and Y is written once), in blocks of equal size. */
#define POINTWISE_BLOCK_FLOATS (INT64_C(1) << 17)
#define POINTWISE_KC_MAX 1024

static int64_t pointwise_kc(int64_t kdim, int64_t tw) {
    int64_t most = POINTWISE_BLOCK_FLOATS / (tw > 0 ? tw : 1);
    most = most < CONV_KC ? CONV_KC : most > POINTWISE_KC_MAX ? POINTWISE_KC_MAX : most;
    int64_t blocks = ceil_div(kdim, most);
    return ceil_div(kdim, blocks);
}

/* Grids this much wider than Y (OW of at least this) are computed an output row at a
 * time straight into Y, the grid's extra columns never computed; narrower ones in
 * tiles of the grid through V (whose vectors a row of a few outputs would leave empty). */
#define CONV_ROWWISE_MIN_OW 24

/* One output row of filters [m0, m0 + mw): OW columns of the grid from `src` into `yr`
 * (rows ldy apart), bias, Z and the activation in the store or after it. */
static void direct_row(const conv_job *j, const mlrt_sgemm_a *A, const float *src, const float *bias, float *yr,
                       int64_t ldy, const float *zr, int64_t m0, int64_t mw) {
    const conv_geom *g = &j->g;
    int64_t OW = g->out[1];
    mlrt_strip_epilogue fin;
    bool later = conv_strip_epilogue(j, bias, zr, &fin);
    for (int64_t k0 = 0; k0 < g->kdim; k0 += CONV_KC) {
        int64_t kc = g->kdim - k0 < CONV_KC ? g->kdim - k0 : CONV_KC;
        mlrt_sgemm_strips(mw, kc, A, m0, k0, src, j->direct.off + k0, j->strip, yr, ldy, OW, k0 > 0,
                          k0 + kc >= g->kdim ? &fin : NULL);
    }
    if (later) mlrt_epilogue_f32(yr, NULL, mw, OW, ldy, NULL, j->activation, j->alpha, j->beta);
}

bool mlrt_conv_direct_rowwise(const conv_job *j) {
    int64_t OW = j->g.out[1];
    return j->direct.off && j->direct.P && j->direct.PW != OW && OW >= CONV_ROWWISE_MIN_OW;
}

/* Tasks over tiles of the computed grid: the micro-kernels write a tile into V (Y
 * itself for pointwise convs), whose real columns are then copied into Y.  Bias and the
 * activations the kernels know are done in their store, Z too where they write Y. */
void mlrt_conv_direct_tasks(void *arg, int64_t begin, int64_t end) {
    conv_job *j = arg;
    const conv_geom *g = &j->g;
    const conv_direct *d = &j->direct;
    const float *b = j->b;
    float *y = j->y;
    int64_t NR = j->strip, OH = g->out[0], OW = g->out[1], PW = d->PW;
    bool pointwise = d->P == NULL, straight = PW == OW; /* the grid is Y's: written in place */
    bool rowwise = mlrt_conv_direct_rowwise(j);
    float *V = straight || rowwise ? NULL : mlrt_scratch((size_t)(j->mblock * j->tile + 16) * sizeof(float));
    if (!straight && !rowwise && !V) { atomic_store(&j->failed, 1); return; }
    for (int64_t t = begin; t < end; ++t) {
        conv_task k;
        if (!conv_task_at(j, t, d->vsize, &k)) continue;
        int64_t n = k.n, grp = k.grp, v0 = k.c0, tw = k.tw, m0 = k.m0, mw = k.mw;
        const float *base = pointwise ? (const float *)j->x + (n * g->C + grp * g->Cg) * g->in_size
                                      : d->P + (n * g->C + grp * g->Cg) * d->plane;
        mlrt_sgemm_a A = conv_filters(j, grp);
        const float *bg = b ? b + grp * g->Mg + m0 : NULL;
        float *yg = y + (n * g->M + grp * g->Mg + m0) * g->out_size;
        const float *zg = j->z ? (const float *)j->z + (yg - y) : NULL;
        if (rowwise) { /* the output rows that start in this tile, each straight into Y */
            for (int64_t oh = (v0 + PW - 1) / PW; oh * PW < v0 + tw && oh < OH; ++oh)
                direct_row(j, &A, base + oh * PW, bg, yg + oh * OW, g->out_size, zg ? zg + oh * OW : NULL, m0, mw);
            continue;
        }
        float *dst = straight ? yg + v0 : V;
        int64_t ldd = straight ? g->out_size : tw;
        mlrt_strip_epilogue fin;
        bool later = conv_strip_epilogue(j, bg, straight && zg ? zg + v0 : NULL, &fin);
        if (zg && !straight) fin.act = MLRT_STRIP_NONE, later = true; /* Z and the activation after the copy */
        int64_t kcb = g->k_size == 1 ? pointwise_kc(g->kdim, tw) : CONV_KC;
        for (int64_t k0 = 0; k0 < g->kdim; k0 += kcb) {
            int64_t kc = g->kdim - k0 < kcb ? g->kdim - k0 : kcb;
            mlrt_sgemm_strips(mw, kc, &A, m0, k0, base + v0, d->off + k0, NR, dst, ldd, tw, k0 > 0,
                              k0 + kc >= g->kdim ? &fin : NULL);
        }
        if (straight) {
            if (later)
                mlrt_epilogue_f32(yg + v0, NULL, mw, tw, g->out_size, NULL, j->activation, j->alpha, j->beta);
            continue;
        }
        /* copy the grid's real columns out: position v is (v / PW, v % PW) */
        for (int64_t v = v0; v < v0 + tw;) {
            int64_t oh = v / PW, ow = v % PW, run = PW - ow < v0 + tw - v ? PW - ow : v0 + tw - v;
            if (ow < OW) {
                int64_t len = OW - ow < run ? OW - ow : run;
                for (int64_t m = 0; m < mw; ++m)
                    memcpy(yg + m * g->out_size + oh * OW + ow, V + m * tw + (v - v0), (size_t)len * sizeof(float));
                if (later)
                    mlrt_epilogue_f32(yg + oh * OW + ow, zg ? zg + oh * OW + ow : NULL, mw, len, g->out_size, NULL,
                                      j->activation, j->alpha, j->beta);
            }
            v += run;
        }
    }
}

/* FusedConvMaxPool: a task is a band of Y's rows of one image.  The conv rows its windows
 * read are computed, every filter, into a ring of as many rows as the window is tall (this
 * thread's scratch, in cache), each once (a band's first window also takes the rows it
 * shares with the band before), and the window maxima taken from there: the conv's output
 * is never written out whole, nor read back. */
void mlrt_conv_direct_pool_tasks(void *arg, int64_t begin, int64_t end) {
    conv_job *j = arg;
    const conv_geom *g = &j->g;
    const conv_pool *q = j->pool;
    int64_t OH = g->out[0], OW = g->out[1], M = g->M, PW = j->direct.PW, KH = q->k[0];
    int64_t POH = q->out[0], POW = q->out[1], ring_row = M * OW; /* floats of one conv row, all filters */
    float *ring = mlrt_scratch((size_t)(KH * ring_row + (POW - 1) * q->s[1] + q->k[1] + 16) * sizeof(float));
    if (!ring) { atomic_store(&j->failed, 1); return; }
    float *buf = ring + KH * ring_row; /* mlrt_maxpool_row_f32's */
    const float *rows[MLRT_POOL_ROWS_MAX];
    mlrt_sgemm_a A = conv_filters(j, 0);
    for (int64_t t = begin; t < end; ++t) {
        int64_t n = t / q->bands, band = t % q->bands;
        int64_t p0 = band * POH / q->bands, p1 = (band + 1) * POH / q->bands, next = 0; /* next: first row not made */
        const float *base = j->direct.P + n * g->C * j->direct.plane;
        float *yn = (float *)j->y + n * M * POH * POW;
        for (int64_t p = p0; p < p1; ++p) {
            int64_t lo = p * q->s[0] - q->pb[0], hi = lo + KH;
            lo = lo > 0 ? lo : 0, hi = hi < OH ? hi : OH;
            if (lo >= hi) { /* a window wholly in the padding: 0, as MaxPool's */
                for (int64_t m = 0; m < M; ++m) memset(yn + (m * POH + p) * POW, 0, (size_t)POW * sizeof(float));
                continue;
            }
            for (int64_t r = next > lo ? next : lo; r < hi; ++r)
                direct_row(j, &A, base + r * PW, j->b, ring + r % KH * ring_row, OW, NULL, 0, M);
            next = hi;
            for (int64_t m = 0; m < M; ++m) {
                for (int64_t r = lo; r < hi; ++r) rows[r - lo] = ring + r % KH * ring_row + m * OW;
                mlrt_maxpool_row_f32(rows, hi - lo, OW, q->k[1], q->s[1], q->pb[1], POW, yn + (m * POH + p) * POW,
                                     buf);
            }
        }
    }
}

/* qlinear_planes.c -- the padded stride-phase copies of x that ConvInteger / QLinearConv's
 * GEMM path reads its columns from (kernels/qlinear_conv.c).
 *
 * Phase (a, b) of a channel holds the padded rows a, a + sh, ... and the columns b,
 * b + sw, ... of x (canonical: int8 read as x ^ 0x80), padding as the zero point, so
 * that a window tap of consecutive output positions is one contiguous run of a phase
 * plane.  Two forms:
 *   bytes  one plane per image-channel and phase, an element a byte;
 *   quads  one plane per image and group of four channels and phase, an element the
 *          four channels' bytes side by side: the vpdpbusd operand itself, so the
 *          product reads its groups of four k (four channels at one tap) straight from
 *          the planes and nothing is packed per panel.
 * Only the phases some tap reads are made. */
#include <string.h>

#include "gemm.h"
#include "qconv_internal.h"

/* Bytes src[0], src[sw], ... (n of them) ^ f into dst. */
static void phase_bytes_portable(const uint8_t *src, int64_t n, int64_t sw, uint8_t f, uint8_t *dst) {
    for (int64_t c = 0; c < n; ++c) dst[c] = src[c * sw] ^ f;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* sw 2: the low byte of each 16-bit lane, 32 at a time; else portable. */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void phase_bytes_avx512(const uint8_t *src, int64_t n,
                                                                                     int64_t sw, uint8_t f,
                                                                                     uint8_t *dst) {
    if (sw != 2) {
        phase_bytes_portable(src, n, sw, f, dst);
        return;
    }
    __m256i vf = _mm256_set1_epi8((char)f);
    for (int64_t c = 0; c < n; c += 32) {
        int64_t cnt = n - c < 32 ? n - c : 32;
        __mmask64 k = ((__mmask64)1 << (2 * cnt - 1)) - 1; /* the 2 cnt - 1 bytes up to the last even one */
        __m512i v = _mm512_maskz_loadu_epi8(k, src + 2 * c);
        __m256i e = _mm256_xor_si256(_mm512_cvtepi16_epi8(v), vf);
        _mm256_mask_storeu_epi8(dst + c, cnt == 32 ? ~(__mmask32)0 : (((__mmask32)1 << cnt) - 1), e);
    }
}

/* Four rows' bytes [lo, hi) (^ f; the rest z) of PW columns side by side: dst[4 c + i] =
 * rows[i][c], 64 columns at a time (masked loads, then mlrt_quads_avx512). */
__attribute__((target("avx512f,avx512bw"))) static void quads_avx512(const uint8_t *const rows[4], int64_t lo,
                                                                     int64_t hi, int64_t PW, uint8_t f, uint8_t z,
                                                                     uint8_t *dst) {
    __m512i vf = _mm512_set1_epi8((char)f), vz = _mm512_set1_epi8((char)z);
    for (int64_t c0 = 0; c0 < PW; c0 += 64) {
        int64_t a = lo > c0 ? lo - c0 : 0, b = hi - c0 < 64 ? hi - c0 : 64;
        __mmask64 m = b > a ? (b >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << b) - 1) & ~(((__mmask64)1 << a) - 1) : 0;
        __m512i r[4];
        for (int i = 0; i < 4; ++i) /* (masked: nothing outside [lo, hi) is read) */
            r[i] = _mm512_mask_mov_epi8(vz, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, rows[i] + c0), vf));
        __m512i o[4];
        mlrt_quads_avx512(r, o);
        for (int u = 0; u < 4 && c0 + 16 * u < PW; ++u) {
            int64_t w = PW - c0 - 16 * u;
            _mm512_mask_storeu_epi32(dst + 4 * (c0 + 16 * u), w >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << w) - 1),
                                     o[u]);
        }
    }
}

/* Phase b of a row of quads: dst[c] = src[c sw + b] (32-bit elements), c < n. */
__attribute__((target("avx512f"))) static void split_avx512(const uint32_t *src, int64_t sw, int64_t b, int64_t n,
                                                            uint32_t *dst) {
    if (sw != 2) {
        for (int64_t c = 0; c < n; ++c) dst[c] = src[c * sw + b];
        return;
    }
    __m512i idx = _mm512_add_epi32(_mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30),
                                   _mm512_set1_epi32((int32_t)b));
    for (int64_t c = 0; c < n; c += 16) { /* (src holds whole vectors past 2 n: the scratch's slack) */
        __m512i v = _mm512_permutex2var_epi32(_mm512_loadu_si512(src + 2 * c), idx, _mm512_loadu_si512(src + 2 * c + 16));
        int64_t w = n - c;
        _mm512_mask_storeu_epi32(dst + c, w >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << w) - 1), v);
    }
}
#endif

static void split_portable(const uint32_t *src, int64_t sw, int64_t b, int64_t n, uint32_t *dst) {
    for (int64_t c = 0; c < n; ++c) dst[c] = src[c * sw + b];
}

static void quads_portable(const uint8_t *const rows[4], int64_t lo, int64_t hi, int64_t PW, uint8_t f, uint8_t z,
                           uint8_t *dst) {
    for (int64_t c = 0; c < PW; ++c)
        for (int i = 0; i < 4; ++i) dst[4 * c + i] = c >= lo && c < hi ? rows[i][c] ^ f : z;
}

typedef void (*phase_bytes_fn)(const uint8_t *, int64_t, int64_t, uint8_t, uint8_t *);
typedef void (*quads_fn)(const uint8_t *const[4], int64_t, int64_t, int64_t, uint8_t, uint8_t, uint8_t *);
typedef void (*split_fn)(const uint32_t *, int64_t, int64_t, int64_t, uint32_t *);

/* Quads at strides above 1 are made a padded input row at a time (every column), which
 * its phases then take every sw-th element of. */
void mlrt_qconv_build_phases(void *arg, int64_t begin, int64_t end) {
    const qconv_phases *ph = arg;
    const qconv_job *j = ph->j;
    const qconv_geom *g = &j->g;
    int64_t sh = g->s[0], sw = g->s[1], H = g->in[0], W = g->in[1], PWs = ph->PWs, e = ph->quads ? 4 : 1;
    int64_t pb = g->pb[1], span = sw * PWs; /* a padded row's columns */
    uint8_t f = j->x_flip ? 0x80 : 0, z = (uint8_t)j->xz;
    phase_bytes_fn bytes = phase_bytes_portable;
    quads_fn quads = quads_portable;
    split_fn split = split_portable;
#if defined(__x86_64__) && defined(__GNUC__)
    const char *isa = mlrt_qgemm_kernel_name(); /* (the product's kernels, so MLRT_QGEMM_KERNEL caps these too) */
    if ((strcmp(isa, "avx512vnni") == 0 || strcmp(isa, "avx512bw") == 0) && MLRT_X86_FEATURE(AVX512VL))
        bytes = phase_bytes_avx512, quads = quads_avx512, split = split_avx512;
#endif
    uint32_t *tmp = NULL;
    if (ph->quads && sw > 1 && !(tmp = mlrt_scratch((size_t)(4 * span + 256)))) {
        atomic_store(ph->failed, 1);
        return;
    }
    /* task t: image-channel t (bytes), image-channel-quad t (quads), x's channels from e t */
    for (int64_t t = begin; t < end; ++t) {
        const uint8_t *x = j->x + t * e * g->in_size;
        for (int64_t a = 0; a < sh; ++a)
            for (int64_t r = 0; r < ph->PHs && (ph->used >> (a * sw) & (((uint64_t)1 << sw) - 1)); ++r) {
                int64_t ih = a + r * sh - g->pb[0];
                bool inside = ih >= 0 && ih < H;
                /* (x + ih W + c - pb: the input element of padded column c; read only inside the row) */
                const uint8_t *xr = x + ih * W - pb;
                if (inside && tmp) {
                    const uint8_t *rows[4] = {xr, xr + g->in_size, xr + 2 * g->in_size, xr + 3 * g->in_size};
                    quads(rows, pb < span ? pb : span, pb + W < span ? pb + W : span, span, f, z, (uint8_t *)tmp);
                }
                for (int64_t b = 0; b < sw; ++b) {
                    if (!(ph->used >> (a * sw + b) & 1)) continue;
                    uint8_t *row = ph->planes + ((t * sh * sw + a * sw + b) * ph->phase + r * PWs) * e;
                    if (!inside) {
                        memset(row, z, (size_t)(PWs * e));
                        continue;
                    }
                    if (tmp) {
                        split(tmp, sw, b, PWs, (uint32_t *)row);
                        continue;
                    }
                    /* phase columns [lo, hi) read x: padded columns b + c sw in [pb, pb + W) */
                    int64_t lo = b >= pb ? 0 : (pb - b + sw - 1) / sw, hi = pb + W - 1 - b < 0 ? 0 : (pb + W - 1 - b) / sw + 1;
                    lo = lo < PWs ? lo : PWs, hi = hi < PWs ? hi : PWs, hi = hi > lo ? hi : lo;
                    if (!ph->quads) {
                        if (lo > 0) memset(row, z, (size_t)lo);
                        bytes(xr + b + lo * sw, hi - lo, sw, f, row + lo);
                        if (PWs > hi) memset(row + hi, z, (size_t)(PWs - hi));
                    } else { /* (sw 1, b 0) */
                        const uint8_t *rows[4] = {xr, xr + g->in_size, xr + 2 * g->in_size, xr + 3 * g->in_size};
                        quads(rows, lo, hi, PWs, f, z, row);
                    }
                }
            }
    }
}

/* fft.c -- DFT (opsets 17 and 20) and STFT (opset 17).
 *
 * A complex FFT of any length, in double precision whatever the tensor type: a
 * self-sorting (Stockham) mixed-radix transform with radix-2/3/4 butterflies and a
 * generic one for other primes up to 64, and Bluestein's chirp-z for lengths with a
 * larger prime factor (the transform written as a convolution, done with
 * power-of-two FFTs).  A plan (roots, chirp) is made once per kernel call and shared
 * read-only; every worker has its own scratch.
 * The inverse is the forward transform of the conjugate, conjugated and scaled.
 * Shapes, dft_length, one-sidedness and frame counts are resolved in Python. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "fft.h"
#include "internal.h"
#define float_type mlrt_is_real

#define store(b, t, i, v) mlrt_store_real((b), (i), (t), (v))
#define load(b, t, i) mlrt_load_as_double((b), (i), (t))

#define MAX_FACTORS 64
#define MAX_RADIX 64 /* lengths with a prime factor above this use Bluestein */
#define FFT_MAX_LEN (INT64_C(1) << 40)

/* A mixed-radix transform of length n = factors[0] * factors[1] * ... */
typedef struct mixed_plan {
    int64_t n;
    int nf;
    int64_t factors[MAX_FACTORS];
    double *roots;  /* exp(-2 pi i t / n), t < n */
} mixed_plan;

typedef struct fft_plan {
    int64_t n;       /* transform length */
    bool bluestein;  /* n has a large prime factor: a convolution of length mix.n */
    mixed_plan mix;  /* length n, or the Bluestein convolution length (a power of two) */
    double *chirp;   /* Bluestein: exp(-pi i k^2 / n), k < n */
    double *kern;    /* Bluestein: FFT of the conjugate chirp wrapped around */
} fft_plan;

/* complex numbers are (re, im) pairs of doubles */

/* Split n into radices: 4s first, then 2, 3, 5, ...; false if a prime above MAX_RADIX remains. */
static bool factorize(int64_t n, mixed_plan *mp) {
    mp->nf = 0;
    while (n % 4 == 0 && mp->nf < MAX_FACTORS) mp->factors[mp->nf++] = 4, n /= 4;
    for (int64_t r = 2; r <= MAX_RADIX && n > 1; ++r)
        while (n % r == 0 && mp->nf < MAX_FACTORS) mp->factors[mp->nf++] = r, n /= r;
    return n == 1;
}

static double *roots_table(int64_t n) {
    double *r = malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof(double));
    if (!r) return NULL;
    for (int64_t k = 0; k < n; ++k) {
        double t = -2.0 * M_PI * (double)k / (double)n;
        r[2 * k] = cos(t), r[2 * k + 1] = sin(t);
    }
    return r;
}

/* Self-sorting (Stockham) decimation in frequency: each stage of radix r turns x into
 * y with y[q + s (r p + k)] = W_len^(p k) * sum_j x[q + s (p + j m)] W_r^(j k), where
 * len is the current sub-length, m = len / r and s the product of the radices done.
 * Every stage reads x and writes y whole; the buffers then swap. */

#define CMUL_RE(ar, ai, br, bi) ((ar) * (br) - (ai) * (bi))
#define CMUL_IM(ar, ai, br, bi) ((ar) * (bi) + (ai) * (br))

static void stage2(const double *W, int64_t step, int64_t m, int64_t s, const double *x, double *y) {
    for (int64_t p = 0; p < m; ++p) {
        double wr = W[2 * p * step], wi = W[2 * p * step + 1];
        const double *x0 = x + 2 * s * p, *x1 = x + 2 * s * (p + m);
        double *y0 = y + 2 * s * 2 * p, *y1 = y0 + 2 * s;
        for (int64_t q = 0; q < 2 * s; q += 2) {
            double dr = x0[q] - x1[q], di = x0[q + 1] - x1[q + 1];
            y0[q] = x0[q] + x1[q], y0[q + 1] = x0[q + 1] + x1[q + 1];
            y1[q] = CMUL_RE(dr, di, wr, wi), y1[q + 1] = CMUL_IM(dr, di, wr, wi);
        }
    }
}

static void stage3(const double *W, int64_t step, int64_t m, int64_t s, const double *x, double *y) {
    const double h = 0.86602540378443864676;  /* sqrt(3) / 2 */
    for (int64_t p = 0; p < m; ++p) {
        double w1r = W[2 * p * step], w1i = W[2 * p * step + 1], w2r = W[4 * p * step], w2i = W[4 * p * step + 1];
        const double *x0 = x + 2 * s * p, *x1 = x + 2 * s * (p + m), *x2 = x + 2 * s * (p + 2 * m);
        double *y0 = y + 2 * s * 3 * p, *y1 = y0 + 2 * s, *y2 = y1 + 2 * s;
        for (int64_t q = 0; q < 2 * s; q += 2) {
            double ur = x1[q] + x2[q], ui = x1[q + 1] + x2[q + 1], vr = x1[q] - x2[q], vi = x1[q + 1] - x2[q + 1];
            double cr = x0[q] - 0.5 * ur, ci = x0[q + 1] - 0.5 * ui;
            double t1r = cr + h * vi, t1i = ci - h * vr, t2r = cr - h * vi, t2i = ci + h * vr;
            y0[q] = x0[q] + ur, y0[q + 1] = x0[q + 1] + ui;
            y1[q] = CMUL_RE(t1r, t1i, w1r, w1i), y1[q + 1] = CMUL_IM(t1r, t1i, w1r, w1i);
            y2[q] = CMUL_RE(t2r, t2i, w2r, w2i), y2[q + 1] = CMUL_IM(t2r, t2i, w2r, w2i);
        }
    }
}

static void stage4(const double *W, int64_t step, int64_t m, int64_t s, const double *x, double *y) {
    for (int64_t p = 0; p < m; ++p) {
        double w1r = W[2 * p * step], w1i = W[2 * p * step + 1], w2r = W[4 * p * step], w2i = W[4 * p * step + 1];
        double w3r = W[6 * p * step], w3i = W[6 * p * step + 1];
        const double *x0 = x + 2 * s * p, *x1 = x0 + 2 * s * m, *x2 = x1 + 2 * s * m, *x3 = x2 + 2 * s * m;
        double *y0 = y + 2 * s * 4 * p, *y1 = y0 + 2 * s, *y2 = y1 + 2 * s, *y3 = y2 + 2 * s;
        for (int64_t q = 0; q < 2 * s; q += 2) {
            double b0r = x0[q] + x2[q], b0i = x0[q + 1] + x2[q + 1], b1r = x0[q] - x2[q], b1i = x0[q + 1] - x2[q + 1];
            double b2r = x1[q] + x3[q], b2i = x1[q + 1] + x3[q + 1], b3r = x1[q] - x3[q], b3i = x1[q + 1] - x3[q + 1];
            double t1r = b1r + b3i, t1i = b1i - b3r;  /* b1 - i b3 */
            double t2r = b0r - b2r, t2i = b0i - b2i;
            double t3r = b1r - b3i, t3i = b1i + b3r;  /* b1 + i b3 */
            y0[q] = b0r + b2r, y0[q + 1] = b0i + b2i;
            y1[q] = CMUL_RE(t1r, t1i, w1r, w1i), y1[q + 1] = CMUL_IM(t1r, t1i, w1r, w1i);
            y2[q] = CMUL_RE(t2r, t2i, w2r, w2i), y2[q + 1] = CMUL_IM(t2r, t2i, w2r, w2i);
            y3[q] = CMUL_RE(t3r, t3i, w3r, w3i), y3[q + 1] = CMUL_IM(t3r, t3i, w3r, w3i);
        }
    }
}

/* any radix r <= MAX_RADIX: the r-point DFT written out, O(r^2) */
static void stage_any(const double *W, int64_t N, int64_t r, int64_t step, int64_t m, int64_t s, const double *x,
                      double *y) {
    double a[2 * MAX_RADIX], tw[2 * MAX_RADIX], wr[2 * MAX_RADIX];
    for (int64_t k = 0; k < r; ++k) wr[2 * k] = W[2 * k * (N / r)], wr[2 * k + 1] = W[2 * k * (N / r) + 1];
    for (int64_t p = 0; p < m; ++p) {
        for (int64_t k = 0; k < r; ++k) tw[2 * k] = W[2 * p * k * step], tw[2 * k + 1] = W[2 * p * k * step + 1];
        for (int64_t q = 0; q < s; ++q) {
            for (int64_t j = 0; j < r; ++j) {
                const double *src = x + 2 * (q + s * (p + j * m));
                a[2 * j] = src[0], a[2 * j + 1] = src[1];
            }
            double *dst = y + 2 * (q + s * r * p);
            for (int64_t k = 0; k < r; ++k) {
                double sr = 0, si = 0;
                for (int64_t j = 0, idx = 0; j < r; ++j) {
                    sr += CMUL_RE(a[2 * j], a[2 * j + 1], wr[2 * idx], wr[2 * idx + 1]);
                    si += CMUL_IM(a[2 * j], a[2 * j + 1], wr[2 * idx], wr[2 * idx + 1]);
                    idx += k;
                    if (idx >= r) idx -= r;
                }
                dst[2 * s * k] = CMUL_RE(sr, si, tw[2 * k], tw[2 * k + 1]);
                dst[2 * s * k + 1] = CMUL_IM(sr, si, tw[2 * k], tw[2 * k + 1]);
            }
        }
    }
}

/* Returns the buffer holding the result (x or y). */
static double *mixed_run(const mixed_plan *mp, double *x, double *y) {
    int64_t N = mp->n, len = N, s = 1;
    for (int f = 0; f < mp->nf; ++f) {
        int64_t r = mp->factors[f], m = len / r, step = N / len;
        if (r == 4) stage4(mp->roots, step, m, s, x, y);
        else if (r == 2) stage2(mp->roots, step, m, s, x, y);
        else if (r == 3) stage3(mp->roots, step, m, s, x, y);
        else stage_any(mp->roots, N, r, step, m, s, x, y);
        double *swap = x;
        x = y, y = swap;
        len = m, s *= r;
    }
    return x;
}

static void conjugate(double *a, int64_t n) {
    for (int64_t k = 0; k < n; ++k) a[2 * k + 1] = -a[2 * k + 1];
}

static void plan_free(fft_plan *p) {
    free(p->mix.roots);
    free(p->chirp);
    free(p->kern);
}

static int plan_make(fft_plan *p, int64_t n) {
    *p = (fft_plan){.n = n};
    if (n < 1 || n > FFT_MAX_LEN) return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "transform length %lld is out of range", (long long)n);
    p->mix.n = n;
    if (factorize(n, &p->mix)) {
        p->mix.roots = roots_table(n);
        if (!p->mix.roots) goto oom;
        return MLRT_OK;
    }
    p->bluestein = true;
    int64_t m = 1;
    while (m < 2 * n - 1) m <<= 1;
    p->mix.n = m;
    factorize(m, &p->mix);
    p->mix.roots = roots_table(m);
    p->chirp = malloc((size_t)n * 2 * sizeof(double));
    p->kern = calloc((size_t)m * 2, sizeof(double));
    double *work = malloc((size_t)m * 2 * sizeof(double));
    if (!p->mix.roots || !p->chirp || !p->kern || !work) {
        free(work);
        goto oom;
    }
    for (int64_t k = 0, sq = 0; k < n; ++k) {  /* sq = k^2 mod 2n, kept exact */
        double t = -M_PI * (double)sq / (double)n;
        p->chirp[2 * k] = cos(t), p->chirp[2 * k + 1] = sin(t);
        sq = (sq + 2 * k + 1) % (2 * n);
    }
    for (int64_t k = 0; k < n; ++k) {
        p->kern[2 * k] = p->chirp[2 * k], p->kern[2 * k + 1] = -p->chirp[2 * k + 1];
        if (k > 0) p->kern[2 * (m - k)] = p->kern[2 * k], p->kern[2 * (m - k) + 1] = p->kern[2 * k + 1];
    }
    double *r = mixed_run(&p->mix, p->kern, work);
    if (r != p->kern) memcpy(p->kern, r, (size_t)m * 2 * sizeof(double));
    free(work);
    return MLRT_OK;
oom:
    plan_free(p);
    return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "no memory for a length-%lld FFT plan", (long long)n);
}

/* doubles of scratch a worker needs besides its n-point line */
static int64_t plan_scratch(const fft_plan *p) { return p->bluestein ? 4 * p->mix.n : 2 * p->n; }

/* forward transform of a (n complex values) in place */
static void fft_forward(const fft_plan *p, double *a, double *scratch) {
    int64_t n = p->n;
    if (!p->bluestein) {
        double *r = mixed_run(&p->mix, a, scratch);
        if (r != a) memcpy(a, r, (size_t)n * 2 * sizeof(double));
        return;
    }
    int64_t m = p->mix.n;
    const double *c = p->chirp, *kr = p->kern;
    double *buf = scratch, *work = scratch + 2 * m;
    for (int64_t k = 0; k < n; ++k) {
        buf[2 * k] = a[2 * k] * c[2 * k] - a[2 * k + 1] * c[2 * k + 1];
        buf[2 * k + 1] = a[2 * k] * c[2 * k + 1] + a[2 * k + 1] * c[2 * k];
    }
    memset(buf + 2 * n, 0, (size_t)(m - n) * 2 * sizeof(double));
    double *f = mixed_run(&p->mix, buf, work);
    for (int64_t k = 0; k < m; ++k) {  /* multiply by the kernel, conjugated for the inverse */
        double r = f[2 * k] * kr[2 * k] - f[2 * k + 1] * kr[2 * k + 1];
        double i = f[2 * k] * kr[2 * k + 1] + f[2 * k + 1] * kr[2 * k];
        f[2 * k] = r, f[2 * k + 1] = -i;
    }
    double *g = mixed_run(&p->mix, f, f == buf ? work : buf);
    double s = 1.0 / (double)m;
    for (int64_t k = 0; k < n; ++k) {
        double r = g[2 * k] * s, i = -g[2 * k + 1] * s;
        a[2 * k] = r * c[2 * k] - i * c[2 * k + 1];
        a[2 * k + 1] = r * c[2 * k + 1] + i * c[2 * k];
    }
}

static bool shape_is(const mlrt_tensor *t, int32_t rank, const int64_t *dims) {
    if (t->rank != rank) return false;
    for (int32_t d = 0; d < rank; ++d)
        if (t->shape[d] != dims[d]) return false;
    return true;
}

/* product of dims, or -1 on overflow / negative */
static int64_t product(const int64_t *dims, int n) {
    int64_t r = 1;
    for (int i = 0; i < n; ++i)
        if (dims[i] < 0 || __builtin_mul_overflow(r, dims[i], &r)) return -1;
    return r;
}

/* -- DFT ------------------------------------------------------------------------------- */

typedef struct dft_job {
    const mlrt_dft_params *p;
    const fft_plan *plan;
    const void *x;
    void *y;
    int32_t dtype;
    atomic_int failed;
} dft_job;

static void dft_lines(void *arg, int64_t begin, int64_t end) {
    dft_job *j = arg;
    const mlrt_dft_params *p = j->p;
    int64_t L = p->length;
    double *a = malloc((size_t)(2 * L + plan_scratch(j->plan)) * sizeof(double));
    if (!a) {
        atomic_store(&j->failed, 1);
        return;
    }
    double *scratch = a + 2 * L;
    bool irfft = p->inverse && p->onesided;
    int64_t take = irfft ? L / 2 + 1 : L;
    if (take > p->axis_len) take = p->axis_len;
    for (int64_t line = begin; line < end; ++line) {
        int64_t o = line / p->inner, i = line % p->inner;
        int64_t xs = p->inner * p->in_c, x0 = (o * p->axis_len * p->inner + i) * p->in_c;
        for (int64_t k = 0; k < take; ++k) {
            a[2 * k] = load(j->x, j->dtype, x0 + k * xs);
            a[2 * k + 1] = p->in_c == 2 ? load(j->x, j->dtype, x0 + k * xs + 1) : 0.0;
        }
        memset(a + 2 * take, 0, (size_t)(L - take) * 2 * sizeof(double));
        if (irfft) {  /* the full spectrum of a real signal from its first half */
            a[1] = 0.0;
            if (L % 2 == 0) a[L + 1] = 0.0;
            for (int64_t k = L / 2 + 1; k < L; ++k) a[2 * k] = a[2 * (L - k)], a[2 * k + 1] = -a[2 * (L - k) + 1];
        }
        if (p->inverse) {
            conjugate(a, L);
            fft_forward(j->plan, a, scratch);
            double s = 1.0 / (double)L;
            for (int64_t k = 0; k < L; ++k) a[2 * k] *= s, a[2 * k + 1] *= -s;
        } else {
            fft_forward(j->plan, a, scratch);
        }
        int64_t ys = p->inner * p->out_c, y0 = (o * p->out_len * p->inner + i) * p->out_c;
        for (int64_t k = 0; k < p->out_len; ++k) {
            store(j->y, j->dtype, y0 + k * ys, a[2 * k]);
            if (p->out_c == 2) store(j->y, j->dtype, y0 + k * ys + 1, a[2 * k + 1]);
        }
    }
    free(a);
}

/* inputs: input, [dft_length], [axis] (both resolved into the params); output: output */
static int k_dft(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                 const void *params, size_t params_size) {
    MLRT_CHECK(n_in >= 1 && n_in <= 3 && n_out == 1, "expects 1 to 3 inputs and 1 output");
    MLRT_PARAMS(mlrt_dft_params, p, params, params_size);
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(float_type(x->dtype) && x->dtype == y->dtype, "input and output must share a floating type");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    MLRT_CHECK((p->in_c == 1 || p->in_c == 2) && (p->out_c == 1 || p->out_c == 2), "the last dim must be 1 or 2");
    MLRT_CHECK(p->length >= 1 && p->out_len >= 0 && p->out_len <= p->length, "bad dft_length %lld / output length %lld",
               (long long)p->length, (long long)p->out_len);
    int64_t in_dims[4] = {p->outer, p->axis_len, p->inner, p->in_c};
    int64_t out_dims[4] = {p->outer, p->out_len, p->inner, p->out_c};
    int64_t n_x = product(in_dims, 4), n_y = product(out_dims, 4);
    MLRT_CHECK(n_x >= 0 && n_x == mlrt_numel(x), "[outer, axis, inner, c] does not cover the input");
    MLRT_CHECK(n_y >= 0 && n_y == mlrt_numel(y), "[outer, out_len, inner, c] does not cover the output");
    int64_t lines = p->outer * p->inner;
    if (lines == 0 || p->out_len == 0) return MLRT_OK;
    fft_plan plan;
    int status = plan_make(&plan, p->length);
    if (status != MLRT_OK) return status;
    dft_job job = {p, &plan, x->data, y->data, x->dtype, 0};
    int64_t cost = p->length * 16 + 64;
    mlrt_parallel_for(ctx, lines, 65536 / cost + 1, dft_lines, &job);
    plan_free(&plan);
    if (atomic_load(&job.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "no memory for FFT scratch lines");
    return MLRT_OK;
}

/* -- STFT ------------------------------------------------------------------------------ */

typedef struct stft_job {
    const mlrt_stft_params *p;
    const fft_plan *plan;
    const void *x;
    const void *window;  /* NULL: rectangular */
    void *y;
    int32_t dtype;
    atomic_int failed;
} stft_job;

static void stft_frames(void *arg, int64_t begin, int64_t end) {
    stft_job *j = arg;
    const mlrt_stft_params *p = j->p;
    int64_t L = p->frame_length;
    double *a = malloc((size_t)(2 * L + plan_scratch(j->plan)) * sizeof(double));
    if (!a) {
        atomic_store(&j->failed, 1);
        return;
    }
    for (int64_t line = begin; line < end; ++line) {
        int64_t b = line / p->n_frames, f = line % p->n_frames;
        for (int64_t t = 0; t < L; ++t) {
            int64_t s = f * p->frame_step + t;
            double w = j->window ? load(j->window, j->dtype, t) : 1.0;
            if (s < p->signal_len) {
                int64_t xi = (b * p->signal_len + s) * p->in_c;
                a[2 * t] = load(j->x, j->dtype, xi) * w;
                a[2 * t + 1] = p->in_c == 2 ? load(j->x, j->dtype, xi + 1) * w : 0.0;
            } else {
                a[2 * t] = a[2 * t + 1] = 0.0;
            }
        }
        fft_forward(j->plan, a, a + 2 * L);
        int64_t y0 = line * p->bins * 2;
        for (int64_t k = 0; k < p->bins; ++k) {
            store(j->y, j->dtype, y0 + 2 * k, a[2 * k]);
            store(j->y, j->dtype, y0 + 2 * k + 1, a[2 * k + 1]);
        }
    }
    free(a);
}

/* inputs: signal, frame_step, [window], [frame_length]; output: output */
static int k_stft(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                  const void *params, size_t params_size) {
    MLRT_CHECK(n_in >= 2 && n_in <= 4 && n_out == 1, "expects 2 to 4 inputs and 1 output");
    MLRT_PARAMS(mlrt_stft_params, p, params, params_size);
    const mlrt_tensor *x = &in[0];
    const mlrt_tensor *w = n_in > 2 && mlrt_present(&in[2]) ? &in[2] : NULL;
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(float_type(x->dtype) && x->dtype == y->dtype, "signal and output must share a floating type");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    MLRT_CHECK(p->in_c == 1 || p->in_c == 2, "the signal's last dim must be 1 or 2");
    MLRT_CHECK(p->frame_length >= 1 && p->frame_step >= 1 && p->n_frames >= 0 && p->bins >= 0 &&
               p->bins <= p->frame_length, "bad frame parameters");
    int64_t x_dims[3] = {p->batch, p->signal_len, p->in_c};
    int64_t y_dims[4] = {p->batch, p->n_frames, p->bins, 2};
    MLRT_CHECK(shape_is(x, 3, x_dims), "signal shape does not match the parameters");
    MLRT_CHECK(shape_is(y, 4, y_dims), "output shape does not match the parameters");
    if (w) {
        MLRT_CHECK(w->dtype == x->dtype && w->rank == 1 && w->shape[0] == p->frame_length && mlrt_is_contiguous(w),
                   "window must be a 1-D tensor of frame_length (%lld) elements of the signal's type",
                   (long long)p->frame_length);
    }
    int64_t lines;
    MLRT_CHECK(!__builtin_mul_overflow(p->batch, p->n_frames, &lines), "too many frames");
    if (lines == 0 || p->bins == 0) return MLRT_OK;
    fft_plan plan;
    int status = plan_make(&plan, p->frame_length);
    if (status != MLRT_OK) return status;
    stft_job job = {p, &plan, x->data, w ? w->data : NULL, y->data, x->dtype, 0};
    mlrt_parallel_for(ctx, lines, 65536 / (p->frame_length * 16 + 64) + 1, stft_frames, &job);
    plan_free(&plan);
    if (atomic_load(&job.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "no memory for FFT scratch lines");
    return MLRT_OK;
}

#define MASK_FFT (MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16))
MLRT_KERNEL(dft, "DFT", "", 17, MLRT_OPSET_MAX, MASK_FFT, k_dft);
MLRT_KERNEL(stft, "STFT", "", 17, MLRT_OPSET_MAX, MASK_FFT, k_stft);

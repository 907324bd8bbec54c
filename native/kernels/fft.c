/* fft.c -- DFT (opsets 17 and 20) and STFT (opset 17).
 *
 * A complex FFT of any length, in double precision whatever the tensor type:
 * iterative radix-2 for powers of two, a direct sum over a table of roots for short
 * other lengths, and Bluestein's chirp-z for long other lengths (the transform
 * written as a convolution, done with power-of-two FFTs).  A plan (roots, chirp) is
 * made once per kernel call and shared read-only; every worker has its own scratch.
 * The inverse is the forward transform of the conjugate, conjugated and scaled.
 * Shapes, dft_length, one-sidedness and frame counts are resolved in Python. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "fft.h"
#include "internal.h"

#define DIRECT_MAX 64 /* non-power-of-two lengths up to this use the O(n^2) sum */
#define FFT_MAX_LEN (INT64_C(1) << 40)

enum { FFT_RADIX2, FFT_DIRECT, FFT_BLUESTEIN };

typedef struct fft_plan {
    int64_t n;      /* transform length */
    int kind;
    int64_t m;      /* radix-2 length: n, or the Bluestein convolution length */
    double *roots;  /* radix-2: exp(-2 pi i k / m), k < m / 2; direct: exp(-2 pi i k / n), k < n */
    double *chirp;  /* Bluestein: exp(-pi i k^2 / n), k < n */
    double *kern;   /* Bluestein: FFT of the conjugate chirp wrapped around, length m */
} fft_plan;

/* complex numbers are (re, im) pairs of doubles */

static void fft_radix2(double *a, int64_t m, const double *roots, int64_t roots_m) {
    for (int64_t i = 1, j = 0; i < m; ++i) {
        int64_t bit = m >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double r = a[2 * i], s = a[2 * i + 1];
            a[2 * i] = a[2 * j], a[2 * i + 1] = a[2 * j + 1];
            a[2 * j] = r, a[2 * j + 1] = s;
        }
    }
    for (int64_t len = 2; len <= m; len <<= 1) {
        int64_t half = len >> 1, step = roots_m / len;
        for (int64_t i = 0; i < m; i += len) {
            double *u = a + 2 * i, *v = a + 2 * (i + half);
            for (int64_t k = 0; k < half; ++k) {
                double wr = roots[2 * k * step], wi = roots[2 * k * step + 1];
                double tr = v[2 * k] * wr - v[2 * k + 1] * wi, ti = v[2 * k] * wi + v[2 * k + 1] * wr;
                v[2 * k] = u[2 * k] - tr, v[2 * k + 1] = u[2 * k + 1] - ti;
                u[2 * k] += tr, u[2 * k + 1] += ti;
            }
        }
    }
}

static void conjugate(double *a, int64_t n) {
    for (int64_t k = 0; k < n; ++k) a[2 * k + 1] = -a[2 * k + 1];
}

static void plan_free(fft_plan *p) {
    free(p->roots);
    free(p->chirp);
    free(p->kern);
}

static double *roots_table(int64_t n, int64_t count) {
    double *r = malloc((size_t)count * 2 * sizeof(double));
    if (!r) return NULL;
    for (int64_t k = 0; k < count; ++k) {
        double t = -2.0 * M_PI * (double)k / (double)n;
        r[2 * k] = cos(t), r[2 * k + 1] = sin(t);
    }
    return r;
}

static int plan_make(fft_plan *p, int64_t n) {
    *p = (fft_plan){.n = n, .m = n};
    if (n < 1 || n > FFT_MAX_LEN) return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "transform length %lld is out of range", (long long)n);
    if ((n & (n - 1)) == 0) {
        p->kind = FFT_RADIX2;
        p->roots = roots_table(n, n / 2 + 1);
        if (!p->roots) goto oom;
        return MLRT_OK;
    }
    if (n <= DIRECT_MAX) {
        p->kind = FFT_DIRECT;
        p->roots = roots_table(n, n);
        if (!p->roots) goto oom;
        return MLRT_OK;
    }
    p->kind = FFT_BLUESTEIN;
    int64_t m = 1;
    while (m < 2 * n - 1) m <<= 1;
    p->m = m;
    p->roots = roots_table(m, m / 2 + 1);
    p->chirp = malloc((size_t)n * 2 * sizeof(double));
    p->kern = calloc((size_t)m * 2, sizeof(double));
    if (!p->roots || !p->chirp || !p->kern) goto oom;
    for (int64_t k = 0, sq = 0; k < n; ++k) {  /* sq = k^2 mod 2n, kept exact */
        double t = -M_PI * (double)sq / (double)n;
        p->chirp[2 * k] = cos(t), p->chirp[2 * k + 1] = sin(t);
        sq = (sq + 2 * k + 1) % (2 * n);
    }
    for (int64_t k = 0; k < n; ++k) {
        p->kern[2 * k] = p->chirp[2 * k], p->kern[2 * k + 1] = -p->chirp[2 * k + 1];
        if (k > 0) p->kern[2 * (m - k)] = p->kern[2 * k], p->kern[2 * (m - k) + 1] = p->kern[2 * k + 1];
    }
    fft_radix2(p->kern, m, p->roots, m);
    return MLRT_OK;
oom:
    plan_free(p);
    return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "no memory for a length-%lld FFT plan", (long long)n);
}

/* doubles of scratch a worker needs besides its n-point line */
static int64_t plan_scratch(const fft_plan *p) {
    return p->kind == FFT_RADIX2 ? 0 : p->kind == FFT_DIRECT ? 2 * p->n : 2 * p->m;
}

/* forward transform of a (n complex values) in place */
static void fft_forward(const fft_plan *p, double *a, double *scratch) {
    int64_t n = p->n;
    if (p->kind == FFT_RADIX2) {
        fft_radix2(a, n, p->roots, n);
    } else if (p->kind == FFT_DIRECT) {
        for (int64_t k = 0; k < n; ++k) {
            double sr = 0, si = 0;
            for (int64_t j = 0, idx = 0; j < n; ++j) {
                double wr = p->roots[2 * idx], wi = p->roots[2 * idx + 1];
                sr += a[2 * j] * wr - a[2 * j + 1] * wi;
                si += a[2 * j] * wi + a[2 * j + 1] * wr;
                idx += k;
                if (idx >= n) idx -= n;
            }
            scratch[2 * k] = sr, scratch[2 * k + 1] = si;
        }
        memcpy(a, scratch, (size_t)n * 2 * sizeof(double));
    } else {
        int64_t m = p->m;
        const double *c = p->chirp, *kr = p->kern;
        for (int64_t k = 0; k < n; ++k) {
            scratch[2 * k] = a[2 * k] * c[2 * k] - a[2 * k + 1] * c[2 * k + 1];
            scratch[2 * k + 1] = a[2 * k] * c[2 * k + 1] + a[2 * k + 1] * c[2 * k];
        }
        memset(scratch + 2 * n, 0, (size_t)(m - n) * 2 * sizeof(double));
        fft_radix2(scratch, m, p->roots, m);
        for (int64_t k = 0; k < m; ++k) {  /* multiply by the kernel, conjugated for the inverse */
            double r = scratch[2 * k] * kr[2 * k] - scratch[2 * k + 1] * kr[2 * k + 1];
            double i = scratch[2 * k] * kr[2 * k + 1] + scratch[2 * k + 1] * kr[2 * k];
            scratch[2 * k] = r, scratch[2 * k + 1] = -i;
        }
        fft_radix2(scratch, m, p->roots, m);
        double s = 1.0 / (double)m;
        for (int64_t k = 0; k < n; ++k) {
            double r = scratch[2 * k] * s, i = -scratch[2 * k + 1] * s;
            a[2 * k] = r * c[2 * k] - i * c[2 * k + 1];
            a[2 * k + 1] = r * c[2 * k + 1] + i * c[2 * k];
        }
    }
}

/* -- element access for the floating types -------------------------------------------- */

static inline double load(const void *base, int32_t dt, int64_t i) {
    switch (dt) {
    case MLRT_FLOAT: return ((const float *)base)[i];
    case MLRT_DOUBLE: return ((const double *)base)[i];
    case MLRT_FLOAT16: return mlrt_f16_to_f32(((const uint16_t *)base)[i]);
    default: return mlrt_bf16_to_f32(((const uint16_t *)base)[i]);
    }
}

static inline void store(void *base, int32_t dt, int64_t i, double v) {
    switch (dt) {
    case MLRT_FLOAT: ((float *)base)[i] = (float)v; break;
    case MLRT_DOUBLE: ((double *)base)[i] = v; break;
    case MLRT_FLOAT16: ((uint16_t *)base)[i] = mlrt_f64_to_f16(v); break;
    default: ((uint16_t *)base)[i] = mlrt_f32_to_bf16((float)v); break;
    }
}

static bool float_type(int32_t dt) {
    return dt == MLRT_FLOAT || dt == MLRT_DOUBLE || dt == MLRT_FLOAT16 || dt == MLRT_BFLOAT16;
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

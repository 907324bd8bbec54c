/* signal.c -- HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix,
 * CausalConvWithState.
 *
 * Windows and mel filters are computed in double and stored in the output's type
 * (output_datatype: any numeric type; integers truncate towards zero, as a cast
 * does).  A symmetric window of one sample has no period; it is [1] (as in torch and
 * scipy).  CausalConvWithState is a per-channel FIR filter over the past state
 * followed by the input. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "signal.h"

static bool store_value(void *base, int32_t dt, int64_t i, double v) {
    double t = trunc(v);
    switch (dt) {
    case MLRT_FLOAT: ((float *)base)[i] = (float)v; return true;
    case MLRT_DOUBLE: ((double *)base)[i] = v; return true;
    case MLRT_FLOAT16: ((uint16_t *)base)[i] = mlrt_f64_to_f16(v); return true;
    case MLRT_BFLOAT16: ((uint16_t *)base)[i] = mlrt_f32_to_bf16((float)v); return true;
    default: break;
    }
    if (!(t == t)) t = 0.0;  /* the values are finite in [0, 1]; never cast a NaN */
    switch (dt) {
    case MLRT_INT8: ((int8_t *)base)[i] = (int8_t)t; return true;
    case MLRT_INT16: ((int16_t *)base)[i] = (int16_t)t; return true;
    case MLRT_INT32: ((int32_t *)base)[i] = (int32_t)t; return true;
    case MLRT_INT64: ((int64_t *)base)[i] = (int64_t)t; return true;
    case MLRT_UINT8: ((uint8_t *)base)[i] = (uint8_t)(t < 0 ? 0 : t); return true;
    case MLRT_UINT16: ((uint16_t *)base)[i] = (uint16_t)(t < 0 ? 0 : t); return true;
    case MLRT_UINT32: ((uint32_t *)base)[i] = (uint32_t)(t < 0 ? 0 : t); return true;
    case MLRT_UINT64: ((uint64_t *)base)[i] = (uint64_t)(t < 0 ? 0 : t); return true;
    default: return false;
    }
}

static bool storable(int32_t dt) {
    if (dt == MLRT_FLOAT || dt == MLRT_DOUBLE || dt == MLRT_FLOAT16 || dt == MLRT_BFLOAT16) return true;
    return dt > 0 && dt < 64 && (MLRT_MASK_INTS & MLRT_BIT(dt)) != 0;
}

enum { WIN_HANN, WIN_HAMMING, WIN_BLACKMAN };

static double window_value(int kind, int64_t n, int64_t period) {
    if (period == 0) return 1.0;
    double x = (double)n / (double)period;
    switch (kind) {
    case WIN_HANN: {
        double s = sin(M_PI * x);
        return s * s;
    }
    case WIN_HAMMING: return 25.0 / 46.0 - 21.0 / 46.0 * cos(2.0 * M_PI * x);
    default: return 0.42 - 0.5 * cos(2.0 * M_PI * x) + 0.08 * cos(4.0 * M_PI * x);
    }
}

/* inputs: size (resolved into the params); output: the window */
static int run_window(int kind, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                      const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    MLRT_PARAMS(mlrt_window_params, p, params, params_size);
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(storable(y->dtype), "output type %d is not supported", y->dtype);
    MLRT_CHECK(y->rank == 1 && y->shape[0] == p->size && p->size >= 0, "output must have shape [%lld]",
               (long long)p->size);
    MLRT_CHECK(mlrt_is_contiguous(y), "needs a contiguous output");
    int64_t period = p->periodic ? p->size : p->size - 1;
    for (int64_t n = 0; n < p->size; ++n) store_value(y->data, y->dtype, n, window_value(kind, n, period));
    return MLRT_OK;
}

static int k_hann(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                  const void *params, size_t params_size) {
    return run_window(WIN_HANN, in, n_in, out, n_out, params, params_size);
}

static int k_hamming(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                     const void *params, size_t params_size) {
    return run_window(WIN_HAMMING, in, n_in, out, n_out, params, params_size);
}

static int k_blackman(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                      const void *params, size_t params_size) {
    return run_window(WIN_BLACKMAN, in, n_in, out, n_out, params, params_size);
}

/* inputs: num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz
 * (resolved into the params); output: the [dft_length / 2 + 1, num_mel_bins] matrix.
 * Band edges are spectrogram bins floor((dft_length + 1) * f / sample_rate); a bin
 * outside the matrix is left out. */
static int k_mel(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                 const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 5 && n_out == 1, "expects 5 inputs and 1 output");
    MLRT_PARAMS(mlrt_mel_params, p, params, params_size);
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(storable(y->dtype), "output type %d is not supported", y->dtype);
    MLRT_CHECK(p->num_mel_bins >= 0 && p->dft_length >= 1 && p->sample_rate != 0, "bad MelWeightMatrix parameters");
    int64_t rows = p->dft_length / 2 + 1, cols = p->num_mel_bins;
    MLRT_CHECK(y->rank == 2 && y->shape[0] == rows && y->shape[1] == cols && mlrt_is_contiguous(y),
               "output must be a contiguous [%lld, %lld] tensor", (long long)rows, (long long)cols);
    int64_t count = rows * cols;
    double *w = calloc((size_t)(count > 0 ? count : 1), sizeof(double));
    int64_t *edge = malloc((size_t)(cols + 2) * sizeof(int64_t));
    if (!w || !edge) {
        free(w);
        free(edge);
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "no memory for a [%lld, %lld] mel matrix", (long long)rows,
                         (long long)cols);
    }
    double low = 2595.0 * log1p(p->lower_edge_hertz / 700.0) / log(10.0);
    double high = 2595.0 * log1p(p->upper_edge_hertz / 700.0) / log(10.0);
    double step = (high - low) / (double)(cols + 2);
    for (int64_t k = 0; k < cols + 2; ++k) {
        double hz = 700.0 * expm1(((double)k * step + low) / 2595.0 * log(10.0));
        double bin = floor((double)(p->dft_length + 1) * hz / (double)p->sample_rate);
        edge[k] = isfinite(bin) && fabs(bin) < 9e18 ? (int64_t)bin : -1;
    }
    for (int64_t i = 0; i < cols; ++i) {
        int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
        if (center == left) {
            if (center >= 0 && center < rows) w[center * cols + i] = 1.0;
        } else {
            for (int64_t j = left < 0 ? 0 : left; j <= center && j < rows; ++j)
                w[j * cols + i] = (double)(j - left) / (double)(center - left);
        }
        if (right > center)
            for (int64_t j = center < 0 ? 0 : center; j < right && j < rows; ++j)
                w[j * cols + i] = (double)(right - j) / (double)(right - center);
    }
    for (int64_t k = 0; k < count; ++k) store_value(y->data, y->dtype, k, w[k]);
    free(w);
    free(edge);
    return MLRT_OK;
}

/* -- CausalConvWithState ------------------------------------------------------------------
 * Each (batch, channel) row filters the sequence past_state (or k - 1 zeros) ++ input
 * with its channel's k taps (no flip: out[t] = sum_j w[j] * seq[t + j]); the last
 * k - 1 values of that sequence are the present state.  Sums run in float (double for
 * double) and are rounded to the type like the reference: the convolution, then the
 * bias added, then SiLU computed in float. */

static inline double load_f(const void *base, int32_t dt, int64_t i) {
    switch (dt) {
    case MLRT_FLOAT: return ((const float *)base)[i];
    case MLRT_DOUBLE: return ((const double *)base)[i];
    case MLRT_FLOAT16: return mlrt_f16_to_f32(((const uint16_t *)base)[i]);
    default: return mlrt_bf16_to_f32(((const uint16_t *)base)[i]);
    }
}

static inline double round_to(int32_t dt, double v) {
    switch (dt) {
    case MLRT_FLOAT: return (float)v;
    case MLRT_FLOAT16: return mlrt_f16_to_f32(mlrt_f64_to_f16(v));
    case MLRT_BFLOAT16: return mlrt_bf16_to_f32(mlrt_f32_to_bf16((float)v));
    default: return v;
    }
}

typedef struct causal_job {
    const mlrt_causal_conv_params *p;
    const mlrt_tensor *x, *w, *bias, *past;
    mlrt_tensor *y, *present;
} causal_job;

static inline double causal_seq(const causal_job *j, int64_t row, int64_t t) {
    int64_t k1 = j->p->k - 1;
    if (t < k1) return j->past ? load_f(j->past->data, j->x->dtype, row * k1 + t) : 0.0;
    return load_f(j->x->data, j->x->dtype, row * j->p->length + t - k1);
}

static void causal_rows(void *arg, int64_t begin, int64_t end) {
    const causal_job *j = arg;
    const mlrt_causal_conv_params *p = j->p;
    int32_t dt = j->x->dtype;
    for (int64_t row = begin; row < end; ++row) {
        int64_t c = row % p->channels;
        double bias = j->bias ? load_f(j->bias->data, dt, c) : 0.0;
        for (int64_t t = 0; t < p->length; ++t) {
            double v;
            if (dt == MLRT_DOUBLE) {
                double acc = 0.0;
                for (int64_t q = 0; q < p->k; ++q) acc += load_f(j->w->data, dt, c * p->k + q) * causal_seq(j, row, t + q);
                v = acc;
            } else {
                float acc = 0.0f;
                for (int64_t q = 0; q < p->k; ++q)
                    acc += (float)load_f(j->w->data, dt, c * p->k + q) * (float)causal_seq(j, row, t + q);
                v = round_to(dt, acc);
            }
            if (j->bias) v = round_to(dt, v + bias);
            if (p->silu) v = dt == MLRT_DOUBLE ? v / (1.0 + exp(-v)) : (float)v * (1.0f / (1.0f + expf(-(float)v)));
            store_value(j->y->data, dt, row * p->length + t, v);
        }
        if (j->present)
            for (int64_t q = 0; q < p->k - 1; ++q)
                store_value(j->present->data, dt, row * (p->k - 1) + q, causal_seq(j, row, p->length + q));
    }
}

static bool dims_are(const mlrt_tensor *t, int32_t rank, int64_t d0, int64_t d1, int64_t d2) {
    int64_t d[3] = {d0, d1, d2};
    if (t->rank != rank || !mlrt_is_contiguous(t)) return false;
    for (int32_t i = 0; i < rank; ++i)
        if (t->shape[i] != d[i]) return false;
    return true;
}

/* inputs: input, weight, [bias], [past_state]; outputs: output, [present_state] */
static int k_causal_conv(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                         int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in >= 2 && n_in <= 4 && n_out >= 1 && n_out <= 2, "expects 2 to 4 inputs and 1 or 2 outputs");
    MLRT_PARAMS(mlrt_causal_conv_params, p, params, params_size);
    const mlrt_tensor *x = &in[0], *w = &in[1];
    const mlrt_tensor *bias = n_in > 2 && mlrt_present(&in[2]) ? &in[2] : NULL;
    const mlrt_tensor *past = n_in > 3 && mlrt_present(&in[3]) ? &in[3] : NULL;
    mlrt_tensor *y = &out[0], *present = n_out > 1 && mlrt_present(&out[1]) ? &out[1] : NULL;
    int32_t dt = x->dtype;
    MLRT_CHECK(dt == MLRT_FLOAT || dt == MLRT_DOUBLE || dt == MLRT_FLOAT16 || dt == MLRT_BFLOAT16,
               "element type %d not supported", dt);
    MLRT_CHECK(p->k >= 1 && p->batch >= 0 && p->channels >= 0 && p->length >= 0, "bad extents");
    MLRT_CHECK(dims_are(x, 3, p->batch, p->channels, p->length) && dims_are(y, 3, p->batch, p->channels, p->length),
               "input and output must be contiguous [batch, channels, length]");
    MLRT_CHECK(w->dtype == dt && dims_are(w, 3, p->channels, 1, p->k), "weight must be [channels, 1, k]");
    MLRT_CHECK(!bias || (bias->dtype == dt && dims_are(bias, 1, p->channels, 0, 0)), "bias must be [channels]");
    MLRT_CHECK(!past || (past->dtype == dt && dims_are(past, 3, p->batch, p->channels, p->k - 1)),
               "past_state must be [batch, channels, k - 1]");
    MLRT_CHECK(!present || (present->dtype == dt && dims_are(present, 3, p->batch, p->channels, p->k - 1)),
               "present_state must be [batch, channels, k - 1]");
    MLRT_CHECK(y->dtype == dt, "output must have the input's type");
    causal_job job = {p, x, w, bias, past, y, present};
    mlrt_parallel_for(ctx, p->batch * p->channels, 8192 / ((p->length + 1) * p->k) + 1, causal_rows, &job);
    return MLRT_OK;
}

#define MASK_SIZE (MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64))
MLRT_KERNEL(hann_window, "HannWindow", "", 17, MLRT_OPSET_MAX, MASK_SIZE, k_hann);
MLRT_KERNEL(hamming_window, "HammingWindow", "", 17, MLRT_OPSET_MAX, MASK_SIZE, k_hamming);
MLRT_KERNEL(blackman_window, "BlackmanWindow", "", 17, MLRT_OPSET_MAX, MASK_SIZE, k_blackman);
MLRT_KERNEL(mel_weight_matrix, "MelWeightMatrix", "", 17, MLRT_OPSET_MAX, MASK_SIZE, k_mel);
MLRT_KERNEL(causal_conv_with_state, "CausalConvWithState", "", 27, MLRT_OPSET_MAX,
            MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16), k_causal_conv);

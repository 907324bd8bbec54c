/* ms_nhwc.c -- com.microsoft NhwcConv and QLinearConv (channels_last 0 or 1): channels-last
 * convolutions run on the channels-first kernels of the table.
 *
 * NhwcConv: X (N, spatial..., C), W (M, kernel..., C / group), B (M) -> Y (N, out..., M).
 * QLinearConv with channels_last: x (N, spatial..., C) and y (N, out..., M), w in ONNX's
 * (M, C / group, kernel...) layout.  The channels-last tensors are moved to channels
 * first in a work buffer, the Conv / QLinearConv kernel runs there, and its result is
 * moved back. */
#include <stdlib.h>

#include "conv.h"
#include "internal.h"

#define NHWC_GRAIN 16384

typedef struct nhwc_move {
    const char *src;
    char *dst;
    int64_t S, C; /* spatial elements, channels */
    size_t es;
    bool to_last;
} nhwc_move;

/* planes (n, c): channels first (N, C, S) <-> channels last (N, S, C) */
static void move_range(void *arg, int64_t begin, int64_t end) {
    const nhwc_move *j = arg;
    for (int64_t p = begin; p < end; ++p) {
        int64_t n = p / j->C, c = p % j->C;
        for (int64_t s = 0; s < j->S; ++s) {
            size_t f = (size_t)(p * j->S + s) * j->es, l = (size_t)((n * j->S + s) * j->C + c) * j->es;
            if (j->to_last) memcpy(j->dst + l, j->src + f, j->es);
            else memcpy(j->dst + f, j->src + l, j->es);
        }
    }
}

static void nhwc_transpose(const mlrt_context *ctx, const void *src, void *dst, int64_t N, int64_t S, int64_t C,
                           size_t es, bool to_last) {
    nhwc_move j = {src, dst, S, C, es, to_last};
    mlrt_parallel_for(ctx, N * C, S >= NHWC_GRAIN ? 1 : NHWC_GRAIN / (S + 1) + 1, move_range, &j);
}

/* t, a channels-last contiguous tensor, seen as channels first over `data` */
static mlrt_tensor nhwc_first_view(const mlrt_tensor *t, void *data) {
    mlrt_tensor v = *t;
    v.shape[1] = t->shape[t->rank - 1];
    for (int32_t d = 2; d < t->rank; ++d) v.shape[d] = t->shape[d - 1];
    int64_t acc = 1;
    for (int32_t d = t->rank - 1; d >= 0; --d) v.strides[d] = acc, acc *= v.shape[d];
    v.data = data;
    return v;
}

static int64_t nhwc_spatial(const mlrt_tensor *t) {
    int64_t s = 1;
    for (int32_t d = 1; d < t->rank - 1; ++d) s *= t->shape[d];
    return s;
}

/* Run kernel k with inputs `moved` (a mask of input indices) and output 0 in channels-first
 * form, from and to the channels-last tensors. */
static int nhwc_run(const mlrt_context *ctx, const char *op, int32_t k, uint32_t moved, const mlrt_tensor *in,
                    int32_t n_in, mlrt_tensor *out, const void *params, size_t params_size) {
    if (k < 0) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "%s: no channels-first kernel to run on", op);
    MLRT_CHECK(n_in >= 2 && n_in <= 9, "%s: unexpected input count %d", op, n_in);
    mlrt_tensor t[10];
    size_t total = 0, offs[10];
    for (int32_t i = 0; i <= n_in; ++i) {
        const mlrt_tensor *src = i < n_in ? &in[i] : &out[0];
        t[i] = *src;
        if (i < n_in && !(moved >> i & 1)) continue;
        MLRT_CHECK(src->rank >= 3 && mlrt_is_contiguous(src), "%s: channels-last tensors must be contiguous, rank >= 3",
                   op);
        size_t es = mlrt_dtype_size(src->dtype);
        MLRT_CHECK(es > 0, "%s: element type %d has no size", op, src->dtype);
        offs[i] = total;
        total += ((size_t)mlrt_numel(src) * es + 63) / 64 * 64;
    }
    char *buf = malloc(total + 1);
    if (!buf) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes of work space", op, total);
    for (int32_t i = 0; i <= n_in; ++i) {
        if (i < n_in && !(moved >> i & 1)) continue;
        const mlrt_tensor *src = i < n_in ? &in[i] : &out[0];
        t[i] = nhwc_first_view(src, buf + offs[i]);
        if (i < n_in)
            nhwc_transpose(ctx, src->data, t[i].data, src->shape[0], nhwc_spatial(src), src->shape[src->rank - 1],
                           mlrt_dtype_size(src->dtype), false);
    }
    int status = mlrt_kernel_get(k)->run(ctx, t, n_in, &t[n_in], 1, params, params_size);
    if (status == MLRT_OK)
        nhwc_transpose(ctx, t[n_in].data, out[0].data, out[0].shape[0], nhwc_spatial(&out[0]),
                       out[0].shape[out[0].rank - 1], mlrt_dtype_size(out[0].dtype), true);
    free(buf);
    return status;
}

/* inputs: X, W, B (optional); output: Y -- all channels last but B */
static int k_nhwc_conv(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                       const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_conv_params, p, params, params_size);
    MLRT_CHECK(n_in >= 2 && n_in <= 3 && n_out == 1, "NhwcConv: expects 2 or 3 inputs and 1 output");
    MLRT_CHECK(p->packed_weights == 0 && p->activation == MLRT_CONV_ACT_NONE, "NhwcConv: no packed weights or activation");
    MLRT_CHECK(in[0].rank == out[0].rank && in[1].rank == out[0].rank, "NhwcConv: X, W and Y must share one rank");
    int32_t k = mlrt_kernel_find("", "Conv", 11, out[0].dtype);
    return nhwc_run(ctx, "NhwcConv", k, 0x3, in, n_in, out, params, params_size);
}

/* inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (optional) */
static int k_ms_qlinearconv(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                            int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in >= 1 && n_out == 1, "QLinearConv: expects inputs and 1 output");
    int32_t k = mlrt_kernel_find("", "QLinearConv", 10, in[0].dtype);
    if (k < 0) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "QLinearConv: no ai.onnx kernel to run on");
    return mlrt_kernel_get(k)->run(ctx, in, n_in, out, n_out, params, params_size);
}

static int k_ms_qlinearconv_last(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                                 int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK((n_in == 8 || n_in == 9) && n_out == 1, "QLinearConv: expects 8 or 9 inputs and 1 output");
    MLRT_CHECK(in[0].rank == out[0].rank, "QLinearConv: x and y must share one rank");
    int32_t k = mlrt_kernel_find("", "QLinearConv", 10, in[0].dtype);
    return nhwc_run(ctx, "QLinearConv", k, 0x1, in, n_in, out, params, params_size);
}

#define MASK_8BIT (MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_UINT8))

MLRT_KERNEL(ms_nhwc_conv, "NhwcConv", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_nhwc_conv);
MLRT_KERNEL(ms_qlinearconv, "QLinearConv", "com.microsoft", 1, MLRT_OPSET_MAX, MASK_8BIT, k_ms_qlinearconv);
/* channels_last = 1 */
MLRT_KERNEL(ms_qlinearconv_last, "QLinearConvChannelsLast", "com.microsoft", 1, MLRT_OPSET_MAX, MASK_8BIT,
            k_ms_qlinearconv_last);

/* activation.c -- Relu (more activations join this family file). */
#include "internal.h"

typedef struct relu_job { const void *x; void *y; int32_t dtype; } relu_job;

static void relu_rows(void *arg, int64_t begin, int64_t end) {
    const relu_job *j = arg;
    switch (j->dtype) {
    case MLRT_FLOAT: { const float *x = j->x; float *y = j->y;
        for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0.0f ? x[i] : (x[i] != x[i] ? x[i] : 0.0f); } break;
    case MLRT_DOUBLE: { const double *x = j->x; double *y = j->y;
        for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0.0 ? x[i] : (x[i] != x[i] ? x[i] : 0.0); } break;
    case MLRT_INT8: { const int8_t *x = j->x; int8_t *y = j->y; for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0 ? x[i] : 0; } break;
    case MLRT_INT16: { const int16_t *x = j->x; int16_t *y = j->y; for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0 ? x[i] : 0; } break;
    case MLRT_INT32: { const int32_t *x = j->x; int32_t *y = j->y; for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0 ? x[i] : 0; } break;
    case MLRT_INT64: { const int64_t *x = j->x; int64_t *y = j->y; for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0 ? x[i] : 0; } break;
    }
}

static int k_relu(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                  const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    MLRT_CHECK(in[0].dtype == out[0].dtype && mlrt_same_shape(&in[0], &out[0]), "output must match the input");
    MLRT_CHECK(mlrt_is_contiguous(&in[0]) && mlrt_is_contiguous(&out[0]), "needs contiguous tensors");
    relu_job job = {in[0].data, out[0].data, in[0].dtype};
    mlrt_parallel_for(ctx, mlrt_numel(&out[0]), 16384, relu_rows, &job);
    return MLRT_OK;
}

MLRT_KERNEL(relu, "Relu", "", 1, MLRT_OPSET_MAX,
            MLRT_MASK_FLOATS | MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_INT16) | MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64), k_relu);

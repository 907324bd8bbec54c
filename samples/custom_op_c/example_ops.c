/* example_ops.c -- two custom operators for mlrt, in a shared library of their own.
 *
 *   com.example::MulAdd  (a, b, c) -> a * b + c   float32, the three of one shape
 *   com.example::RowSum  x [N, M]  -> y [N]       float32, the sum of each row
 *
 * mlrt loads the library with SessionOptions.register_custom_ops_library(path) and
 * calls mlrt_register_custom_ops (native/include/mlrt.h, docs/custom_ops.md).  Build:
 *     cc -shared -fPIC -O2 -I native/include samples/custom_op_c/example_ops.c -o libexample_ops.so
 */
#include <stdio.h>

#include "mlrt.h"

static const mlrt_custom_op_api *api;  /* kept for set_error; valid while the process lives */

static int64_t element_count(const mlrt_tensor *t)
{
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++)
        n *= t->shape[d];
    return n;
}

static int same_shape(const mlrt_tensor *a, const mlrt_tensor *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

/* -- MulAdd ------------------------------------------------------------------------ */
static int muladd_infer(void *user_data, const mlrt_tensor *inputs, int32_t n_inputs,
                        mlrt_tensor *outputs, int32_t n_outputs)
{
    if (n_inputs != 3 || n_outputs != 1) {
        api->set_error("MulAdd takes 3 inputs and gives 1 output");
        return MLRT_ERR_INVALID_ARGUMENT;
    }
    for (int32_t i = 0; i < 3; i++) {
        if (inputs[i].dtype != MLRT_FLOAT) {
            api->set_error("MulAdd takes float32 inputs");
            return MLRT_ERR_INVALID_ARGUMENT;
        }
        if (!same_shape(&inputs[0], &inputs[i])) {
            api->set_error("MulAdd takes inputs of one shape");
            return MLRT_ERR_INVALID_ARGUMENT;
        }
    }
    outputs[0].dtype = MLRT_FLOAT;
    outputs[0].rank = inputs[0].rank;
    for (int32_t d = 0; d < inputs[0].rank; d++)
        outputs[0].shape[d] = inputs[0].shape[d];
    return MLRT_OK;
}

static int muladd_compute(void *user_data, const mlrt_tensor *inputs, int32_t n_inputs,
                          mlrt_tensor *outputs, int32_t n_outputs)
{
    const float *a = inputs[0].data, *b = inputs[1].data, *c = inputs[2].data;
    float *y = outputs[0].data;
    int64_t n = element_count(&outputs[0]);
    for (int64_t i = 0; i < n; i++)
        y[i] = a[i] * b[i] + c[i];
    return MLRT_OK;
}

/* -- RowSum -------------------------------------------------------------------------- */
static int rowsum_infer(void *user_data, const mlrt_tensor *inputs, int32_t n_inputs,
                        mlrt_tensor *outputs, int32_t n_outputs)
{
    if (n_inputs != 1 || n_outputs != 1 || inputs[0].dtype != MLRT_FLOAT || inputs[0].rank != 2) {
        api->set_error("RowSum takes one float32 matrix");
        return MLRT_ERR_INVALID_ARGUMENT;
    }
    outputs[0].dtype = MLRT_FLOAT;
    outputs[0].rank = 1;
    outputs[0].shape[0] = inputs[0].shape[0];
    return MLRT_OK;
}

static int rowsum_compute(void *user_data, const mlrt_tensor *inputs, int32_t n_inputs,
                          mlrt_tensor *outputs, int32_t n_outputs)
{
    const float *x = inputs[0].data;
    float *y = outputs[0].data;
    int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    for (int64_t r = 0; r < rows; r++) {
        float sum = 0.0f;
        for (int64_t k = 0; k < cols; k++)
            sum += x[r * cols + k];
        y[r] = sum;
    }
    return MLRT_OK;
}

/* -- the entry point mlrt calls -------------------------------------------------------- */
__attribute__((visibility("default")))
int32_t mlrt_register_custom_ops(const mlrt_custom_op_api *given, void *registry)
{
    static const mlrt_custom_op_def defs[] = {
        {"com.example", "MulAdd", muladd_infer, muladd_compute, NULL},
        {"com.example", "RowSum", rowsum_infer, rowsum_compute, NULL},
    };
    if (given->version < MLRT_CUSTOM_OP_API_VERSION)
        return MLRT_ERR_NOT_IMPLEMENTED;
    api = given;
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        int status = api->register_op(registry, &defs[i]);
        if (status != MLRT_OK)
            return status;
    }
    return MLRT_OK;
}

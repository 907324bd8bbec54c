/* tensor.c -- element sizes and shape helpers shared by the kernels. */
#include "internal.h"

size_t mlrt_dtype_size(int32_t dtype) {
    switch (dtype) {
    case MLRT_BOOL: case MLRT_UINT8: case MLRT_INT8: return 1;
    case MLRT_FLOAT8E4M3FN: case MLRT_FLOAT8E4M3FNUZ: case MLRT_FLOAT8E5M2: case MLRT_FLOAT8E5M2FNUZ:
    case MLRT_UINT4: case MLRT_INT4: case MLRT_FLOAT4E2M1: case MLRT_FLOAT8E8M0: case MLRT_UINT2:
    case MLRT_INT2: return 1; /* one byte per element, as ml_dtypes stores them */
    case MLRT_UINT16: case MLRT_INT16: case MLRT_FLOAT16: case MLRT_BFLOAT16: return 2;
    case MLRT_FLOAT: case MLRT_INT32: case MLRT_UINT32: return 4;
    case MLRT_DOUBLE: case MLRT_INT64: case MLRT_UINT64: return 8;
    default: return 0;
    }
}

int64_t mlrt_numel(const mlrt_tensor *t) {
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; ++d) n *= t->shape[d];
    return n;
}

bool mlrt_is_contiguous(const mlrt_tensor *t) {
    int64_t expect = 1;
    for (int32_t d = t->rank - 1; d >= 0; --d) {
        if (t->shape[d] != 1 && t->strides[d] != expect) return false;
        expect *= t->shape[d];
    }
    return true;
}

int mlrt_check_movement(const mlrt_tensor *in, int32_t n_in, const mlrt_tensor *out, int32_t n_out, size_t *es) {
    MLRT_CHECK(n_in >= 1 && n_out >= 1 && mlrt_present(&in[0]) && mlrt_present(&out[0]), "expects an input and an output");
    *es = mlrt_dtype_size(in[0].dtype);
    if (!*es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", in[0].dtype);
    MLRT_CHECK(in[0].dtype == out[0].dtype && in[0].rank == out[0].rank, "output must have the input's type and rank");
    MLRT_CHECK(mlrt_is_contiguous(&in[0]) && mlrt_is_contiguous(&out[0]), "needs contiguous tensors");
    return MLRT_OK;
}

bool mlrt_same_shape(const mlrt_tensor *a, const mlrt_tensor *b) {
    if (a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; ++d)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}

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

bool mlrt_same_shape(const mlrt_tensor *a, const mlrt_tensor *b) {
    if (a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; ++d)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}

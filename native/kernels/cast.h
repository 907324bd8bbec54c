/* cast.h -- parameters of the Cast / CastLike kernel (parsed by cffi). */
#ifndef MLRT_CAST_PARAMS_H
#define MLRT_CAST_PARAMS_H
#include <stdint.h>

/* Only conversions to the low-precision types read these: saturate (float8 types and
 * float8e8m0) and round_mode (float8e8m0: enum mlrt_round_mode of include/mlrt.h, onto
 * which native/ops/_elementwise.py maps the ONNX names). */
typedef struct mlrt_cast_params {
    int64_t saturate;
    int64_t round_mode;
} mlrt_cast_params;

#endif

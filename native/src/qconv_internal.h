/* qconv_internal.h -- what the files of ConvInteger / QLinearConv share
 * (kernels/qlinear_conv.c: checks, the GEMM path; kernels/qlinear_depthwise.c: one input
 * channel per group).  Internal, not ABI (cffi reads every header in kernels/).
 *
 * x is taken canonical (uint8: an int8 x has its top bit flipped and its zero point
 * moved by 128), so that x - x_zero_point is unchanged; padding reads as the zero point
 * (a zero difference).  Output element (n, m, p) is
 *     v = sum over the window of (w - w_zp[m]) * (x - x_zp), + B[m], in int32 (wrapping)
 * then stored as int32 (ConvInteger), requantized (QLinearConv) or made float
 * (ConvIntegerToFloat), as qgemm.h defines. */
#ifndef MLRT_QCONV_INTERNAL_H
#define MLRT_QCONV_INTERNAL_H

#include <stdatomic.h>

#include "qgemm.h"

#define QCONV_MAX_SPATIAL 6

typedef struct qconv_geom {
    int64_t N, C, M, G, Cg, Mg;
    int32_t nd; /* spatial rank as computed (1-D runs as 2-D) */
    int64_t in[QCONV_MAX_SPATIAL], k[QCONV_MAX_SPATIAL], out[QCONV_MAX_SPATIAL];
    int64_t s[QCONV_MAX_SPATIAL], d[QCONV_MAX_SPATIAL], pb[QCONV_MAX_SPATIAL];
    int64_t in_size, out_size, k_size, K; /* K = Cg * k_size */
    bool pointwise;                      /* 1 x 1, unit strides, no padding */
    bool depthwise;                      /* one input channel per group, several groups, 2-D */
} qconv_geom;

/* One call. */
typedef struct qconv_job {
    qconv_geom g;
    const uint8_t *x; /* N x C x in_size, 8-bit */
    bool x_flip;      /* int8 x: read as x ^ 0x80 */
    int32_t xz;       /* canonical zero point, 0..255 */
    const void *w;    /* W (M, Cg, k...) as given, of w_type */
    int32_t w_type;
    const int32_t *wz;  /* per output channel, as given (not canonical) */
    const int32_t *bias; /* per output channel, or NULL */
    mlrt_qgemm_out out;  /* the finish for the whole of y: c = y, ldc = out_size; rows are channels */
    int32_t threads;
} qconv_job;

/* The padded stride-phase copies of x (kernels/qlinear_planes.c), for 2-D windows. */
typedef struct qconv_phases {
    const qconv_job *j;
    uint8_t *planes;
    int64_t PHs, PWs, phase; /* phase rows, row width, elements per phase plane */
    uint64_t used;           /* bit a * sw + b: some tap reads phase (a, b) (the others are not made) */
    bool quads;              /* an element is four channels' bytes (C a multiple of 4), else one byte */
    atomic_int *failed;      /* set when a task has no scratch memory */
} qconv_phases;

/* Tasks [begin, end) of mlrt_parallel_for: image-channels (bytes) or image-channel-quads
 * (quads); plane t's phase (a, b) at planes + ((t sh + a) sw + b) * phase * (4 or 1). */
void mlrt_qconv_build_phases(void *arg, int64_t begin, int64_t end);

/* The depthwise path (kernels/qlinear_depthwise.c): the whole call, on the pool. */
int mlrt_qconv_depthwise(const mlrt_context *ctx, const qconv_job *j);

#endif

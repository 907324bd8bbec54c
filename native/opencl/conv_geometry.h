/* Conv's geometry: worked out on the host (native/opencl/conv.py), read by the kernels of
 * conv.cl.  Declared once, here: conv.cl includes it and the host reads it through cffi
 * (native/opencl/_programs.py: struct_bytes), filling it by field name.  int64_t is
 * OpenCL's long (a typedef in _common.cl).
 *
 * The kernels compute on a grid (see conv.cl): each channel of the input, padded and
 * split by stride phase, packed into planes of GD x GH x GW floats, one per phase; 1-D
 * and 2-D convolutions are 3-D ones with leading 1s. */

/* What the compute kernels read: the grid, the output, channels, groups and the packed layout. */
typedef struct mlrt_conv_geometry {
    int64_t p;        /* grid positions per channel: ((OD-1)*GH + OH) * GW */
    int64_t gh, gw;   /* grid height and width */
    int64_t oh, ow;   /* output height and width */
    int64_t osize;    /* OD * OH * OW */
    int64_t c;        /* input channels */
    int64_t cg;       /* input channels per group */
    int64_t m;        /* filters */
    int64_t mg;       /* filters per group */
    int64_t cstride;  /* floats per packed channel (all its phase planes) */
    int64_t k;        /* patch rows: Cg * kernel size */
    int64_t nmb;      /* blocks of CONV_MB filters per group */
    int64_t flags;    /* 1: bias, 2: Z, 4: B is X itself (no slack past the grid) */
} mlrt_conv_geometry;

/* What mlrt_conv_pack reads (depth, height, width in each array). */
typedef struct mlrt_conv_packing {
    int64_t x_shape[3];  /* D, H, W: X's spatial shape */
    int64_t grid[3];     /* GD, GH, GW */
    int64_t nphase;      /* stride phases: rows of the phase table */
    int64_t pads[3];     /* leading pads */
    int64_t strides[3];
} mlrt_conv_packing;

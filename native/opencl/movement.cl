/* Data movement: Transpose, Expand, Slice, DepthToSpace, SpaceToDepth (one strided copy),
 * Concat, Split, Gather, Tile, Pad -- and Cast between a few number types.
 *
 * Moving kernels copy element bits: they are built for uint8/16/32/64 only (`E`, the
 * unsigned integer of the element's size), so float32 and int32 share one program and
 * the builds for other types (which the partition makes for the node's own type, and
 * Cast uses) stay small.  Views are already merged and checked against their buffers
 * by the host (movement.py).  Cast is built for its real source type and converts as
 * the C kernel does. */

#if defined(MLRT_uint8) || defined(MLRT_uint16) || defined(MLRT_uint32) || defined(MLRT_uint64)
/* a build for moving bits: T is the unsigned integer of the element size */
typedef T E;
#if defined(MLRT_uint64)
typedef ulong4 E4;
#elif defined(MLRT_uint32)
typedef uint4 E4;
#elif defined(MLRT_uint16)
typedef ushort4 E4;
#else
typedef uchar4 E4;
#endif

/* ---- row kernels (MLRT_ROW_RANGE, _common.cl) ----------------------------------------------------- */

/* y[i] = x[base + i]: a view that is contiguous after merging. */
__kernel void mlrt_copy(__global const E *x, __global E *y, long base, long n)
{
    long i = get_global_id(0);
    if (i >= n) return;
    y[i] = x[base + i];
}

/* y = the rows of a view: row r starts at base + offset(outer, r), its elements are
 * `cstride` apart (0: one element repeated, negative: walking back). */
__kernel void mlrt_copy_rows(__global const E *x, __global E *y, __global const mlrt_view *outer, long base,
                             long cstride, long cols, long chunk, long rows)
{
    MLRT_ROW_RANGE;
    __global const E *xr = x + base + mlrt_view_offset(outer, r);
    __global E *yr = y + r * cols;
    if (cstride == 1) {
        for (long c = c0; c < c1; ++c) yr[c] = xr[c];
    } else if (cstride == 0) {
        E v = xr[0];
        for (long c = c0; c < c1; ++c) yr[c] = v;
    } else {
        for (long c = c0; c < c1; ++c) yr[c] = xr[c * cstride];
    }
}

/* Batched 2-D transposes, y[b, r, c] = x[base + b * bstride + r + c * cstride] (the input
 * walks contiguously along r, the output along c).  On GPUs through local memory:
 * work-groups of MLRT_TILE x MLRT_TILE_ROWS items move one MLRT_TILE-square block (both
 * build options from movement.py). */
#if !defined(MLRT_TILE) || !defined(MLRT_TILE_ROWS)
#error "MLRT_TILE and MLRT_TILE_ROWS are build options from movement.py"
#endif
__kernel __attribute__((reqd_work_group_size(MLRT_TILE, MLRT_TILE_ROWS, 1)))
void mlrt_transpose_tiled(__global const E *x, __global E *y, long base, long rows, long cols, long cstride,
                          long bstride)
{
    __local E tile[MLRT_TILE][MLRT_TILE + 1];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const long r0 = (long)get_group_id(1) * MLRT_TILE, c0 = (long)get_group_id(0) * MLRT_TILE;
    const long b = get_global_id(2);
    __global const E *xb = x + base + b * bstride;
    for (int k = ly; k < MLRT_TILE; k += MLRT_TILE_ROWS) {
        long r = r0 + lx, c = c0 + k;
        if (r < rows && c < cols) tile[k][lx] = xb[r + c * cstride];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    __global E *yb = y + b * rows * cols;
    for (int k = ly; k < MLRT_TILE; k += MLRT_TILE_ROWS) {
        long r = r0 + k, c = c0 + lx;
        if (r < rows && c < cols) yb[r * cols + c] = tile[lx][k];
    }
}

/* ... and on CPU devices each item moves a 4 x 4 block through vector registers. */
__kernel void mlrt_transpose_blocks(__global const E *x, __global E *y, long base, long rows, long cols,
                                    long cstride, long bstride)
{
    long c = get_global_id(0) * 4, r = get_global_id(1) * 4, b = get_global_id(2);
    if (r >= rows || c >= cols) return;
    __global const E *xb = x + base + b * bstride;
    __global E *yb = y + b * rows * cols;
    if (r + 4 <= rows && c + 4 <= cols) {
        E4 a0 = vload4(0, xb + r + c * cstride), a1 = vload4(0, xb + r + (c + 1) * cstride);
        E4 a2 = vload4(0, xb + r + (c + 2) * cstride), a3 = vload4(0, xb + r + (c + 3) * cstride);
        vstore4((E4)(a0.s0, a1.s0, a2.s0, a3.s0), 0, yb + r * cols + c);
        vstore4((E4)(a0.s1, a1.s1, a2.s1, a3.s1), 0, yb + (r + 1) * cols + c);
        vstore4((E4)(a0.s2, a1.s2, a2.s2, a3.s2), 0, yb + (r + 2) * cols + c);
        vstore4((E4)(a0.s3, a1.s3, a2.s3, a3.s3), 0, yb + (r + 3) * cols + c);
        return;
    }
    for (long i = r; i < min(r + 4, rows); ++i)
        for (long j = c; j < min(c + 4, cols); ++j) yb[i * cols + j] = xb[i + j * cstride];
}

/* ---- Concat and Split: row r of a piece (`cols` elements) is at `start` in row r of
 * the wide tensor (`wide` elements) ------------------------------------------------------------------ */

__kernel void mlrt_concat_piece(__global const E *x, __global E *y, long wide, long start, long cols, long chunk,
                                long rows)
{
    MLRT_ROW_RANGE;
    __global const E *xr = x + r * cols;
    __global E *yr = y + r * wide + start;
    for (long c = c0; c < c1; ++c) yr[c] = xr[c];
}

__kernel void mlrt_split_piece(__global const E *x, __global E *y, long wide, long start, long cols, long chunk,
                               long rows)
{
    MLRT_ROW_RANGE;
    __global const E *xr = x + r * wide + start;
    __global E *yr = y + r * cols;
    for (long c = c0; c < c1; ++c) yr[c] = xr[c];
}

/* ---- Gather: row (o, k) of y is row (o, ind[k]) of x, rows of `cols` elements; an index
 * outside [-dim, dim) stores `code` in *err (the run then fails) --------------------------------- */

#define MLRT_GATHER(NAME, I)                                                                       \
__kernel void NAME(__global const E *x, __global const I *ind, __global E *y, long n_ind, long dim,   \
                   __global int *err, int code, long cols, long chunk, long rows)                  \
{                                                                                                  \
    MLRT_ROW_RANGE;                                                                                \
    long o = r / n_ind;                                                                            \
    long v = (long)ind[r - o * n_ind];                                                             \
    if (v < 0) v += dim;                                                                           \
    __global E *yr = y + r * cols;                                                                 \
    if (v < 0 || v >= dim) {                                                                       \
        *err = code;                                                                               \
        return;                                                                                    \
    }                                                                                              \
    __global const E *xr = x + (o * dim + v) * cols;                                               \
    for (long c = c0; c < c1; ++c) yr[c] = xr[c];                                                  \
}
MLRT_GATHER(mlrt_gather_i32, int)
MLRT_GATHER(mlrt_gather_i64, long)

/* ---- Tile: y[i] = x[i mod the input's shape, axis by axis] ---------------------------------- */

/* `outer`: the output's outer shape with the input's strides; `in`: the input's shape;
 * `len`: the input's last dimension. */
__kernel void mlrt_tile(__global const E *x, __global E *y, __global const mlrt_view *outer,
                        __global const mlrt_view *in, long len, long cols, long chunk, long rows)
{
    MLRT_ROW_RANGE;
    long rem = r, off = 0;
    for (int d = outer->rank - 1; d >= 0; --d) {
        long o = outer->shape[d];
        long q = rem / o;
        off += ((rem - q * o) % in->shape[d]) * outer->strides[d];
        rem = q;
    }
    __global const E *xr = x + off;
    __global E *yr = y + r * cols;
    for (long c = c0, j = c0 % len; c < c1; j = 0) {  /* runs of the input row */
        long n = min(c1 - c, len - j);
        for (long t = 0; t < n; ++t) yr[c + t] = xr[j + t];
        c += n;
    }
}

/* ---- Pad: per axis d, pad_begin[d] positions, the kept run [start[d], start[d] + len[d]),
 * then padding; `plan` holds start, len, pad_begin (rank each).  mode: MLRT_PAD_CONSTANT
 * (value[0]), _REFLECT, _EDGE or _WRAP (build options: the constants of kernels/pad.h) --
 * padding reads the kept elements.  `out` is the output's shape with the input's strides
 * (1 along the last axis); rows run along the last axis. ------------------------------------ */
#if !defined(MLRT_PAD_CONSTANT) || !defined(MLRT_PAD_REFLECT) || !defined(MLRT_PAD_EDGE) || !defined(MLRT_PAD_WRAP)
#error "the MLRT_PAD_* modes are build options (movement.py's C_CONSTANTS)"
#endif

inline long mlrt_pad_map(long j, long len, int mode)
{
    if (j >= 0 && j < len) return j;
    if (mode == MLRT_PAD_CONSTANT || len <= 0) return -1;
    if (mode == MLRT_PAD_EDGE) return j < 0 ? 0 : len - 1;
    if (mode == MLRT_PAD_WRAP) return ((j % len) + len) % len;
    /* MLRT_PAD_REFLECT */
    if (len == 1) return 0;
    long period = 2 * (len - 1);
    j = ((j % period) + period) % period;
    return j >= len ? period - j : j;
}

__kernel void mlrt_pad(__global const E *x, __global E *y, __global const E *value, __global const mlrt_view *out,
                       __global const long *plan, int mode, long cols, long chunk, long rows)
{
    MLRT_ROW_RANGE;
    const int rank = out->rank, last = rank - 1;
    __global E *yr = y + r * cols;
    long rem = r, off = 0;
    for (int d = last - 1; d >= 0; --d) {
        long o = out->shape[d];
        long q = rem / o;
        long j = mlrt_pad_map(rem - q * o - plan[2 * rank + d], plan[rank + d], mode);
        rem = q;
        if (j < 0) {
            E v = value[0];
            for (long c = c0; c < c1; ++c) yr[c] = v;
            return;
        }
        off += (plan[d] + j) * out->strides[d];
    }
    long len = plan[rank + last], begin = plan[2 * rank + last];
    long lo = clamp(begin, c0, c1), hi = clamp(begin + len, lo, c1);  /* [lo, hi) reads the kept run */
    __global const E *xr = x + off + plan[last];
    for (long c = c0; c < lo; ++c) {
        long j = mlrt_pad_map(c - begin, len, mode);
        yr[c] = j < 0 ? value[0] : xr[j];
    }
    for (long c = lo; c < hi; ++c) yr[c] = xr[c - begin];
    for (long c = hi; c < c1; ++c) {
        long j = mlrt_pad_map(c - begin, len, mode);
        yr[c] = j < 0 ? value[0] : xr[j];
    }
}

#endif /* moving bits */

/* ---- Cast: built for the source type; one kernel per destination type ---------------------- */

#if defined(MLRT_float32) || defined(MLRT_float16)
#define SRC(i) LOAD(x, i)
#define SRC_FLOAT 1
#elif defined(MLRT_int64)
#define SRC(i) ((long)x[i])
#elif defined(MLRT_int32)
#define SRC(i) ((int)x[i])
#elif defined(MLRT_int16)
#define SRC(i) ((short)x[i])
#elif defined(MLRT_int8)
#define SRC(i) ((char)x[i])
#elif defined(MLRT_bool)
#define SRC(i) ((uchar)(x[i] != 0))
#else
#define SRC(i) (x[i])
#endif

#ifdef SRC_FLOAT
/* float -> integer truncates; out of range and NaN give the lowest value (as x86 does) */
#define TO_I32(v) (((v) >= -2147483648.0f && (v) < 2147483648.0f) ? (int)(v) : INT_MIN)
#define TO_I64(v) (((v) >= -9223372036854775808.0f && (v) < 9223372036854775808.0f) ? (long)(v) : LONG_MIN)
#else
#define TO_I32(v) ((int)(v))
#define TO_I64(v) ((long)(v))
#endif

__kernel void mlrt_cast_float32(__global const T *x, __global float *y, long n)
{
    long i = get_global_id(0);
    if (i < n) y[i] = (float)SRC(i);
}

__kernel void mlrt_cast_float16(__global const T *x, __global half *y, long n)
{
    long i = get_global_id(0);
    if (i < n) vstore_half_rte((float)SRC(i), i, y);
}

__kernel void mlrt_cast_int32(__global const T *x, __global int *y, long n)
{
    long i = get_global_id(0);
    if (i < n) y[i] = TO_I32(SRC(i));
}

__kernel void mlrt_cast_int64(__global const T *x, __global long *y, long n)
{
    long i = get_global_id(0);
    if (i < n) y[i] = TO_I64(SRC(i));
}

__kernel void mlrt_cast_bool(__global const T *x, __global uchar *y, long n)
{
    long i = get_global_id(0);
    if (i < n) y[i] = SRC(i) != 0;
}

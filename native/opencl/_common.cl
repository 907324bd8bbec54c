/* mlrt OpenCL preamble: prepended to every family file.
 *
 * Each program is built once per element type with -DMLRT_<type>.  `T` is the storage
 * type of the tensors a kernel reads and writes; float math happens in `float`, with
 * LOAD/STORE converting (vload_half / vstore_half_rte for float16, which need no
 * cl_khr_fp16).  Index arithmetic is in `long` so large tensors never wrap.
 */
#if defined(MLRT_float16)
typedef half T;
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((float)(v), (i), (p))
#define T_IS_FLOAT 1
#elif defined(MLRT_float32)
typedef float T;
#define LOAD(p, i) ((p)[(i)])
#define STORE(p, i, v) ((p)[(i)] = (float)(v))
#define T_IS_FLOAT 1
#elif defined(MLRT_int64) || defined(MLRT_uint64) || defined(MLRT_float64)
typedef ulong T;
#elif defined(MLRT_int32) || defined(MLRT_uint32)
typedef uint T;
#elif defined(MLRT_int16) || defined(MLRT_uint16)
typedef ushort T;
#else
typedef uchar T;
#endif
#ifndef LOAD
#define LOAD(p, i) ((p)[(i)])
#define STORE(p, i, v) ((p)[(i)] = (v))
#endif

/* A strided view as kernels receive it: rank, shape and element strides. */
#define MLRT_MAX_RANK 8
typedef struct { int rank; int pad; long shape[MLRT_MAX_RANK]; long strides[MLRT_MAX_RANK]; } mlrt_view;

/* Element offset, in a view, of the i-th element of a contiguous tensor of the view's shape. */
inline long mlrt_view_offset(const __global mlrt_view *v, long i)
{
    long off = 0;
    for (int d = v->rank - 1; d >= 0; --d) {
        long n = v->shape[d];
        off += (i % n) * v->strides[d];
        i /= n;
    }
    return off;
}

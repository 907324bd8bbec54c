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

/* The headers the host reads too (through cffi: native/opencl/_programs.py) declare
 * their fields with C's sized types; here they are OpenCL's.  An `#include "<name>.h"`
 * is replaced by that header of this folder when the program's source is read. */
typedef long int64_t;
typedef int int32_t;

/* mlrt_view: a strided view as kernels receive it (rank, shape and element strides). */
#include "_view.h"

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

/* Vector loads and stores in float: LOADV/STOREV move 8 elements, LOAD16/STORE16 16.
 * float16 is widened by its bits (after PoCL 3.1's vload_half8 the math runs several
 * times slower). */
inline float8 mlrt_load_half8(const __global half *p)
{
    uint8 h = convert_uint8(vload8(0, (const __global ushort *)p));
    uint8 em = h & 0x7fffu;
    uint8 bits = em >= 0x7c00u ? (em << 13) | 0x7f800000u : (em << 13) + (112u << 23);  /* inf/NaN : normal */
    float8 f = em < 0x400u ? convert_float8(em) * 5.9604644775390625e-8f : as_float8(bits);  /* subnormal: em 2^-24 */
    return as_float8(as_uint8(f) | ((h & 0x8000u) << 16));
}
#if defined(MLRT_float16)
#define LOADV(p, i) mlrt_load_half8((p) + (i))
#define STOREV(p, i, v) vstore_half8_rte((v), 0, (p) + (i))
#define LOAD16(p, i) vload_half16(0, (p) + (i))
#define STORE16(p, i, v) vstore_half16_rte((v), 0, (p) + (i))
#elif defined(MLRT_float32)
#define LOADV(p, i) vload8(0, (p) + (i))
#define STOREV(p, i, v) vstore8((v), 0, (p) + (i))
#define LOAD16(p, i) vload16(0, (p) + (i))
#define STORE16(p, i, v) vstore16((v), 0, (p) + (i))
#endif

/* Row kernels walk an output of `rows` rows of `cols` elements; item r * items + i
 * handles columns [c0, c1) = [i * chunk, i * chunk + chunk) of row r (items: cols / chunk
 * rounded up).  The host picks chunk: 1 on GPUs (neighbouring items touch neighbouring
 * elements), a run of elements on CPU devices (the row's index arithmetic is paid once
 * per run). */
#define MLRT_ROW_RANGE                                                          \
    long g = get_global_id(0), items = (cols + chunk - 1) / chunk, r = g / items; \
    if (r >= rows) return;                                                     \
    long c0 = (g - r * items) * chunk, c1 = min(c0 + chunk, cols)

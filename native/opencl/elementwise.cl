/* Broadcasting elementwise ops: Add, Sub, Mul, Div, Pow, Max, Min, PRelu (and the
 * variadic Sum, Mean, Max, Min, run as a chain of pairs as binary.c does), the
 * comparisons Equal, Less, LessOrEqual, Greater, GreaterOrEqual, and Where.
 *
 * Binary ops see y as rows: the last dim of y's (merged) shape is the row, n_rows
 * rows.  `va` / `vb` are views over the other dims, giving where a row starts in a
 * and b; along the row an operand is contiguous (sa / sb = 1) or one repeated value
 * (0).  A same-shape op is one row and views of rank 0.  Work-item (i, r)
 * computes VEC elements of row r from i * VEC with vector loads (PoCL does not
 * vectorise across work-items here; on GPUs these are wide loads), the row's tail
 * one element at a time.
 *
 * Float math is done in float (LOAD/STORE convert float16); NaN rules follow the C
 * kernels: Max/Min return the first NaN operand, comparisons with NaN are false. */

/* Element offsets of row r in two views of one shape (the dims before the row). */
inline void mlrt_pair_offsets(const __global mlrt_view *va, const __global mlrt_view *vb, long r,
                              long *oa, long *ob)
{
    int rank = va->rank;
    if (rank == 1) { *oa = r * va->strides[0]; *ob = r * vb->strides[0]; return; }
    long a = 0, b = 0;
    for (int d = rank - 1; d >= 0; --d) {
        long n = va->shape[d];
        long k = r % n;
        r /= n;
        a += k * va->strides[d];
        b += k * vb->strides[d];
    }
    *oa = a;
    *ob = b;
}

/* VEC elements per work-item (a build option: elementwise.py's VEC) */
#if !defined(VEC) || VEC != 8
#error "VEC, a build option from elementwise.py, is the width of LOADV's float8"
#endif

#ifdef T_IS_FLOAT


/* sa, sb: 1 when a (b) is contiguous along the row, 0 when it repeats one value.
 * EXPR is f(u, v) for float values u (of a) and v (of b), EXPRV for float8 ones --
 * usually one expression (ternaries select per lane, evaluating both sides).
 * (NAME is pasted by the macros calling this: `max`, `pow`... may be macros themselves.) */
#define MLRT_BINARY_KERNEL(NAME, BT, LOADB, LOADBV, YT, STOREY, STOREYV, EXPR, EXPRV)                 \
__kernel void NAME(__global const T *a, __global const mlrt_view *va, long sa,                         \
                   __global const BT *b, __global const mlrt_view *vb, long sb,                        \
                   __global YT *y, long n_inner, long n_rows)                                          \
{                                                                                                       \
    long i = get_global_id(0) * VEC, r = get_global_id(1);                                              \
    if (i >= n_inner || r >= n_rows) return;                                                            \
    long oa, ob, oy = r * n_inner + i;                                                                  \
    mlrt_pair_offsets(va, vb, r, &oa, &ob);                                                             \
    oa += sa * i;                                                                                       \
    ob += sb * i;                                                                                       \
    if (i + VEC <= n_inner) {                                                                           \
        float8 u = sa ? LOADV(a, oa) : (float8)(LOAD(a, oa));                                           \
        float8 v = sb ? LOADBV(b, ob) : (float8)(LOADB(b, ob));                                         \
        STOREYV(y, oy, (EXPRV));                                                                        \
    } else {                                                                                            \
        for (long k = 0; k < n_inner - i; ++k) {                                                        \
            float u = LOAD(a, oa + sa * k), v = LOADB(b, ob + sb * k);                                  \
            STOREY(y, oy + k, (EXPR));                                                                  \
        }                                                                                               \
    }                                                                                                   \
}
#define MLRT_BINARY(NAME, EXPR) MLRT_BINARY_KERNEL(mlrt_##NAME, T, LOAD, LOADV, T, STORE, STOREV, EXPR, EXPR)

/* comparisons: true is 1 for a scalar comparison, -1 for a vector one */
#define STORE_BOOL(p, i, c) ((p)[(i)] = (uchar)((c) & 1))
#define STORE_BOOLV(p, i, c) vstore8(convert_uchar8((c) & 1), 0, (p) + (i))
#define MLRT_COMPARE(NAME, EXPR) \
    MLRT_BINARY_KERNEL(mlrt_##NAME, T, LOAD, LOADV, uchar, STORE_BOOL, STORE_BOOLV, EXPR, EXPR)

/* Pow's exponent may have its own element type */
#define LOAD_F32(p, i) ((p)[(i)])
#define LOADV_F32(p, i) vload8(0, (p) + (i))
#define LOAD_F16(p, i) vload_half((i), (p))
#define LOADV_F16(p, i) mlrt_load_half8((p) + (i))
#define LOAD_INT(p, i) ((float)(p)[(i)])
#define LOADV_INT(p, i) convert_float8(vload8(0, (p) + (i)))
#define MLRT_POW(NAME, BT, LOADB, LOADBV) \
    MLRT_BINARY_KERNEL(mlrt_##NAME, BT, LOADB, LOADBV, T, STORE, STOREV, POW(u, v), POWV(u, v))

/* NaN wins, else the larger (smaller); on a tie the second operand, as binary.c */
#define MAX_NAN(u, v) (isnan(u) ? (u) : isnan(v) ? (v) : ((u) > (v) ? (u) : (v)))
#define MIN_NAN(u, v) (isnan(u) ? (u) : isnan(v) ? (v) : ((u) < (v) ? (u) : (v)))

/* Pow: PoCL's pow and pown are slow (~6 ns an element), so an integral exponent up to
 * 64 multiplies by squaring (x^2 is x*x exactly, as pow.c's constant-square path, and
 * correctly rounded powf gives the same; higher powers are within a few ulps), and
 * x^0.5 is sqrt (but +0 for -0 and +inf for -inf, as pow); the vector forms take a
 * fast path when all lanes can. */
inline float mlrt_powi(float b, int n)
{
    float r = 1.0f;
    for (int m = n < 0 ? -n : n; m; m >>= 1) {
        if (m & 1) r *= b;
        b *= b;
    }
    return n < 0 ? 1.0f / r : r;
}
inline float8 mlrt_powi8(float8 b, int8 n)
{
    float8 r = 1.0f;
    for (int8 m = n < 0 ? -n : n; any(m != 0); m >>= 1) {
        r = (m & 1) != 0 ? r * b : r;
        b *= b;
    }
    return n < 0 ? 1.0f / r : r;
}
#define SMALL_INT(v) ((v) == rint(v) && fabs(v) <= 64.0f)
#define SQRT_POW(u) ((u) == -INFINITY ? INFINITY : sqrt(u) + 0.0f)
#define POW(u, v) (SMALL_INT(v) ? mlrt_powi((u), (int)(v)) : (v) == 0.5f ? SQRT_POW(u) : pow((u), (v)))
#define POWV(u, v)                                                                              \
    (all((v) == 2.0f) ? (u) * (u) : all(SMALL_INT(v)) ? mlrt_powi8((u), convert_int8(v))         \
     : all((v) == 0.5f) ? SQRT_POW(u) : pow((u), (v)))

MLRT_BINARY(add, u + v)
MLRT_BINARY(sub, u - v)
MLRT_BINARY(mul, u * v)
MLRT_BINARY(div, u / v)
MLRT_BINARY(max, MAX_NAN(u, v))
MLRT_BINARY(min, MIN_NAN(u, v))
MLRT_BINARY(prelu, u > 0.0f ? u : u * v)

MLRT_POW(pow, T, LOAD, LOADV)
MLRT_POW(pow_float32, float, LOAD_F32, LOADV_F32)
MLRT_POW(pow_float16, half, LOAD_F16, LOADV_F16)
MLRT_POW(pow_int32, int, LOAD_INT, LOADV_INT)
MLRT_POW(pow_int64, long, LOAD_INT, LOADV_INT)

MLRT_COMPARE(equal, u == v)
MLRT_COMPARE(less, u < v)
MLRT_COMPARE(less_or_equal, u <= v)
MLRT_COMPARE(greater, u > v)
MLRT_COMPARE(greater_or_equal, u >= v)

#else

/* Where: y = c ? x : z, moving element bits (built for the unsigned type of the
 * element's size, so any element type).  Rows as the binary ops: vc, vx, vz give
 * where row r starts in c, x and z; sc, sx, sz (0 or 1) how each moves along it. */
__kernel void mlrt_where(__global const uchar *c, __global const mlrt_view *vc, long sc,
                         __global const T *x, __global const mlrt_view *vx, long sx,
                         __global const T *z, __global const mlrt_view *vz, long sz,
                         __global T *y, long n_inner, long n_rows)
{
    long i = get_global_id(0) * VEC, r = get_global_id(1);
    if (i >= n_inner || r >= n_rows) return;
    long oc = 0, ox = 0, oz = 0, q = r;
    for (int d = vc->rank - 1; d >= 0; --d) {
        long m = vc->shape[d];
        long k = q % m;
        q /= m;
        oc += k * vc->strides[d];
        ox += k * vx->strides[d];
        oz += k * vz->strides[d];
    }
    long oy = r * n_inner + i;
    oc += i * sc;
    ox += i * sx;
    oz += i * sz;
    for (long k = 0, e = min(n_inner - i, (long)VEC); k < e; ++k)
        y[oy + k] = c[oc + k * sc] ? x[ox + k * sx] : z[oz + k * sz];
}

#endif

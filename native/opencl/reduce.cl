/* Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
 * ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare (float types).
 *
 * The input comes as two views (the split of the semantics' grouped view): `vk` over
 * the kept dims (output element o is at mlrt_view_offset(vk, o)) and `vr` over the
 * reduced dims (`count` elements).  Three kernels per op:
 *   mlrt_reduce_<op>          serial loops: work-item (i, r) computes outputs
 *                             [i * VEC, i * VEC + VEC) of row r of the outputs (the
 *                             last kept dim; rows of 1 when it is not contiguous) --
 *                             VEC at once with vector loads across them when it can,
 *                             else one by one;
 *   mlrt_reduce_<op>_group    one work-group of RWG per output and chunk of the
 *                             reduced range, combined in local memory; with one chunk
 *                             it writes y, else partials to `part`;
 *   mlrt_reduce_<op>_finish   combines the partials of each output.
 * A contiguous reduced line is read in float8 vectors with one accumulator per lane
 * (PoCL does not vectorise across work-items here; a serial sum is latency-bound).
 *
 * State (a, k) of type acc_t: sums and products accumulate in double as reduce.c does
 * when the device has fp64 (a mean or L2 of values near FLT_MAX does not overflow on
 * the way), else in float with Kahan compensation in k; max/min keep the extreme so
 * far (NaN wins).  Log-sum-exp takes the max m first, then sums e^(x - m); a non-finite
 * m is the result.  An empty reduction gives the identity (0, 1, -inf, +inf), then the
 * final step (mean 0/0 = NaN, log 0 = -inf), as reduce.c does. */

/* Build options: RWG, the work-group size of the _group kernels (reduce.py's GROUP);
 * VEC lanes (elementwise.py's VEC). */
#ifndef RWG
#error "RWG is a build option from reduce.py"
#endif
#if !defined(VEC) || VEC != 8
#error "VEC, a build option from elementwise.py, is the width of LOADV's float8"
#endif

#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
typedef double8 accv_t;
#define CONV(x) ((double)(x))
#define CONVV(x) convert_double8(x)
#define ADD(TYPE, a, k, w) { a += (w); }
#else
typedef float acc_t;
typedef float8 accv_t;
#define CONV(x) (x)
#define CONVV(x) (x)
/* compensated a += w; an infinite or NaN sum stops compensating (inf - inf is NaN) */
#define ADD(TYPE, a, k, w) { TYPE y_ = (w) - k, t_ = a + y_; k = isfinite(t_) ? (t_ - a) - y_ : (TYPE)0; a = t_; }
#endif

/* W: the float to accumulate from element v (m: log-sum-exp's max);
 * S: accumulate w (acc_t or accv_t) into a, k; M: merge a scalar state; F: the result */
#define W_PLAIN(v, m) (v)
#define W_ABS(v, m) fabs(v)
#define W_EXP(v, m) exp((v) - (m))
#define S_ADD(TYPE, a, k, w) ADD(TYPE, a, k, w)
#define S_SQ(TYPE, a, k, w) ADD(TYPE, a, k, (w) * (w))
#define S_PROD(TYPE, a, k, w) { a *= (w); }
#define S_MAX(TYPE, a, k, w) { a = ((w) > a || isnan(w)) ? (w) : a; }
#define S_MIN(TYPE, a, k, w) { a = ((w) < a || isnan(w)) ? (w) : a; }
#define M_SUM(a, k, a2, k2) { a = (a - k) + ((a2) - (k2)); k = 0; }
#define M_PROD(a, k, a2, k2) { a *= (a2); }
#define M_MAX(a, k, a2, k2) S_MAX(acc_t, a, k, a2)
#define M_MIN(a, k, a2, k2) S_MIN(acc_t, a, k, a2)
#define F_SUM(a, k, n, m) ((a) - (k))
#define F_MEAN(a, k, n, m) (((a) - (k)) / (acc_t)(n))
#define F_L2(a, k, n, m) sqrt((a) - (k))
#define F_LOG(a, k, n, m) log((a) - (k))
#define F_KEEP(a, k, n, m) (a)
#define F_LSE(a, k, n, m) ((m) + log((a) - (k)))

#define MERGE_LANES(A, K, av, kv, M)                                                    \
    M(A, K, av.s0, kv.s0) M(A, K, av.s1, kv.s1) M(A, K, av.s2, kv.s2) M(A, K, av.s3, kv.s3) \
    M(A, K, av.s4, kv.s4) M(A, K, av.s5, kv.s5) M(A, K, av.s6, kv.s6) M(A, K, av.s7, kv.s7)

/* (A, K) over every element of the output at `base`, rows of the reduced view one
 * after the other (names from the kernel: x, vr, rows, rr, len, s) */
#define SERIAL(A, K, A0, W, S, M, mm)                                                   \
    {                                                                                   \
        accv_t av = (accv_t)(A0), kv = (accv_t)0;                                       \
        for (long r = 0; r < rows; ++r) {                                               \
            long q = base + (rr > 0 ? mlrt_view_offset(vr, r * len) : 0), i = 0;        \
            if (s == 1)                                                                 \
                for (; i + VEC <= len; i += VEC) { float8 v = LOADV(x, q + i); S(accv_t, av, kv, CONVV(W(v, mm))); } \
            for (; i < len; ++i) { float v = LOAD(x, q + i * s); S(acc_t, A, K, CONV(W(v, mm))); } \
        }                                                                               \
        MERGE_LANES(A, K, av, kv, M)                                                    \
    }

/* this work-item's share of elements [j0, j1) of the output at `base`: vectors
 * l, l + RWG, ... when the reduced range is contiguous, else elements so */
#define GROUP_SHARE(A, K, A0, W, S, M, mm)                                              \
    if (rank == 1 && s == 1) {                                                          \
        accv_t av = (accv_t)(A0), kv = (accv_t)0;                                       \
        long nv = (j1 - j0) / VEC, j = j0 + nv * VEC + l;                               \
        for (long t = l; t < nv; t += RWG) {                                            \
            float8 v = LOADV(x, base + j0 + t * VEC);                                   \
            S(accv_t, av, kv, CONVV(W(v, mm)));                                         \
        }                                                                               \
        if (j < j1) { float v = LOAD(x, base + j); S(acc_t, A, K, CONV(W(v, mm))); }    \
        MERGE_LANES(A, K, av, kv, M)                                                    \
    } else {                                                                            \
        for (long j = j0 + l; j < j1; j += RWG) {                                       \
            float v = LOAD(x, base + (rank == 1 ? j * s : mlrt_view_offset(vr, j)));    \
            S(acc_t, A, K, CONV(W(v, mm)));                                             \
        }                                                                               \
    }

/* the work-group's (A, K) into la[0], lk[0] */
#define TREE(A, K, M)                                                                   \
    la[l] = A;                                                                          \
    lk[l] = K;                                                                          \
    barrier(CLK_LOCAL_MEM_FENCE);                                                       \
    for (int h = RWG / 2; h > 0; h >>= 1) {                                             \
        if (l < h) { acc_t a1 = la[l], k1 = lk[l]; M(a1, k1, la[l + h], lk[l + h]) la[l] = a1; lk[l] = k1; } \
        barrier(CLK_LOCAL_MEM_FENCE);                                                   \
    }

#define MLRT_REDUCE(NAME, A0, W, S, M, F, LSE)                                                          \
__kernel void mlrt_reduce_##NAME(__global const T *x, __global const mlrt_view *vk,                   \
                                 __global const mlrt_view *vr, __global T *y,                          \
                                 long n_inner, long n_rows, long count)                                \
{                                                                                                       \
    long i = get_global_id(0) * VEC, r0 = get_global_id(1);                                             \
    if (i >= n_inner || r0 >= n_rows) return;                                                           \
    long o = r0 * n_inner + i, base0 = mlrt_view_offset(vk, o);                                         \
    int rr = vr->rank - 1;                                                                              \
    long len = vr->shape[rr], s = vr->strides[rr], rows = len > 0 ? count / len : 0;                    \
    if (i + VEC <= n_inner) { /* VEC neighbouring outputs, lane by lane */                              \
        float8 m = 0.0f;                                                                                \
        if (LSE) {                                                                                      \
            accv_t a = -INFINITY, k = 0;                                                                \
            for (long r = 0; r < rows; ++r) {                                                           \
                long q = base0 + (rr > 0 ? mlrt_view_offset(vr, r * len) : 0);                          \
                for (long j = 0; j < len; ++j) { float8 v = LOADV(x, q + j * s); S_MAX(accv_t, a, k, CONVV(v)); } \
            }                                                                                           \
            m = convert_float8(a);                                                                      \
        }                                                                                               \
        accv_t a = (accv_t)(A0), k = 0;                                                                 \
        for (long r = 0; r < rows; ++r) {                                                               \
            long q = base0 + (rr > 0 ? mlrt_view_offset(vr, r * len) : 0);                              \
            for (long j = 0; j < len; ++j) { float8 v = LOADV(x, q + j * s); S(accv_t, a, k, CONVV(W(v, m))); } \
        }                                                                                               \
        float8 res = convert_float8(F(a, k, count, CONVV(m)));                                          \
        STOREV(y, o, LSE ? (isfinite(m) ? res : m) : res);                                              \
        return;                                                                                         \
    }                                                                                                   \
    for (long e = o + n_inner - i; o < e; ++o) { /* one output at a time */                             \
        long base = base0++;                                                                            \
        float m = 0.0f;                                                                                 \
        if (LSE) {                                                                                      \
            acc_t a = -INFINITY, k = 0;                                                                 \
            SERIAL(a, k, -INFINITY, W_PLAIN, S_MAX, M_MAX, 0.0f)                                        \
            m = a;                                                                                      \
            if (!isfinite(m)) { STORE(y, o, m); continue; }                                             \
        }                                                                                               \
        acc_t a = A0, k = 0;                                                                            \
        SERIAL(a, k, A0, W, S, M, m)                                                                    \
        STORE(y, o, F(a, k, count, CONV(m)));                                                           \
    }                                                                                                   \
}                                                                                                       \
__kernel __attribute__((reqd_work_group_size(RWG, 1, 1)))                                               \
void mlrt_reduce_##NAME##_group(__global const T *x, __global const mlrt_view *vk,                     \
                                __global const mlrt_view *vr, __global T *y, __global acc_t *part,     \
                                long count, long chunks, long chunk_len)                                \
{                                                                                                       \
    __local acc_t la[RWG], lk[RWG];                                                                     \
    long g = get_group_id(0);                                                                           \
    int l = get_local_id(0);                                                                            \
    long o = g / chunks, j0 = (g % chunks) * chunk_len;                                                 \
    long j1 = min(count, j0 + chunk_len);                                                               \
    long base = mlrt_view_offset(vk, o);                                                                \
    int rank = vr->rank;                                                                                \
    long s = vr->strides[rank - 1];                                                                     \
    float m = 0.0f;                                                                                     \
    if (LSE) {                                                                                          \
        acc_t a = -INFINITY, k = 0;                                                                     \
        GROUP_SHARE(a, k, -INFINITY, W_PLAIN, S_MAX, M_MAX, 0.0f)                                       \
        TREE(a, k, M_MAX)                                                                               \
        m = la[0];                                                                                      \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                   \
        if (!isfinite(m)) { /* (m is the group's: every work-item leaves here) */                       \
            if (l == 0 && chunks == 1) STORE(y, o, m);                                                  \
            else if (l == 0) { part[2 * g] = 0; part[2 * g + 1] = m; }                                  \
            return;                                                                                     \
        }                                                                                               \
    }                                                                                                   \
    acc_t a = A0, k = 0;                                                                                \
    GROUP_SHARE(a, k, A0, W, S, M, m)                                                                   \
    TREE(a, k, M)                                                                                       \
    if (l == 0) {                                                                                       \
        if (chunks == 1) STORE(y, o, F(la[0], lk[0], count, CONV(m)));                                  \
        else if (LSE) { part[2 * g] = la[0] - lk[0]; part[2 * g + 1] = m; }                             \
        else { part[2 * g] = la[0]; part[2 * g + 1] = lk[0]; }                                          \
    }                                                                                                   \
}                                                                                                       \
__kernel void mlrt_reduce_##NAME##_finish(__global const acc_t *part, __global T *y, long n_out,       \
                                          long count, long chunks)                                      \
{                                                                                                       \
    long o = get_global_id(0);                                                                          \
    if (o >= n_out) return;                                                                             \
    __global const acc_t *p = part + 2 * o * chunks;                                                    \
    float m = 0.0f;                                                                                     \
    acc_t a = p[0], k = p[1];                                                                           \
    if (LSE) { /* partials are (sum of e^(x - m_chunk), m_chunk) */                                     \
        acc_t mx = -INFINITY, unused = 0;                                                               \
        for (long c = 0; c < chunks; ++c) S_MAX(acc_t, mx, unused, p[2 * c + 1])                        \
        m = mx;                                                                                         \
        if (!isfinite(m)) { STORE(y, o, m); return; }                                                   \
        a = 0;                                                                                          \
        k = 0;                                                                                          \
        for (long c = 0; c < chunks; ++c)                                                               \
            if (p[2 * c + 1] > -INFINITY) a += p[2 * c] * exp((float)(p[2 * c + 1] - mx));             \
    } else {                                                                                            \
        for (long c = 1; c < chunks; ++c) M(a, k, p[2 * c], p[2 * c + 1])                               \
    }                                                                                                   \
    STORE(y, o, F(a, k, count, CONV(m)));                                                               \
}

#ifdef T_IS_FLOAT
MLRT_REDUCE(sum, 0, W_PLAIN, S_ADD, M_SUM, F_SUM, 0)
MLRT_REDUCE(mean, 0, W_PLAIN, S_ADD, M_SUM, F_MEAN, 0)
MLRT_REDUCE(sum_square, 0, W_PLAIN, S_SQ, M_SUM, F_SUM, 0)
MLRT_REDUCE(l1, 0, W_ABS, S_ADD, M_SUM, F_SUM, 0)
MLRT_REDUCE(l2, 0, W_PLAIN, S_SQ, M_SUM, F_L2, 0)
MLRT_REDUCE(log_sum, 0, W_PLAIN, S_ADD, M_SUM, F_LOG, 0)
MLRT_REDUCE(prod, 1, W_PLAIN, S_PROD, M_PROD, F_KEEP, 0)
MLRT_REDUCE(max, -INFINITY, W_PLAIN, S_MAX, M_MAX, F_KEEP, 0)
MLRT_REDUCE(min, INFINITY, W_PLAIN, S_MIN, M_MIN, F_KEEP, 0)
MLRT_REDUCE(log_sum_exp, 0, W_EXP, S_ADD, M_SUM, F_LSE, 1)
#endif

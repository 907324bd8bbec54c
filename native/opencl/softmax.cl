/* Softmax, LogSoftmax: each line of n elements of a contiguous [outer, n, inner] block
 * (opsets < 13 coerce to 2-D, so there inner is 1) is normalised on its own:
 *   Softmax    y = exp(x - max) / sum(exp(x - max))
 *   LogSoftmax y = (x - max) - log(sum(exp(x - max)))
 * As the C kernels: the max skips NaN (fmax), but a NaN still poisons the sum, so the
 * line comes out NaN; a line whose max is +inf is all NaN (inf - inf).
 *
 * mlrt_softmax_lines: one work-item per line (short lines; neighbouring work-items
 *   read neighbouring inner positions).
 * mlrt_softmax_group: one work-group of SM_WG work-items per line, partial results
 *   combined in local memory (long lines). */

#ifndef SM_WG
#error "SM_WG is a build option from softmax.py"
#endif

/* Softmax keeps exp(x - max) in y between the sum and the scaling when y holds floats;
 * float16 recomputes it, so the result is rounded to half once. */
#if defined(MLRT_float16)
#define SM_KEEP(y, i, e)
#define SM_KEPT(x, y, i, m) exp(LOAD(x, i) - (m))
#else
#define SM_KEEP(y, i, e) STORE(y, i, e)
#define SM_KEPT(x, y, i, m) LOAD(y, i)
#endif

inline float mlrt_softmax_fix_max(float m)
{
    return m == INFINITY ? NAN : m;
}

__kernel void mlrt_softmax_lines(__global const T *x, __global T *y, long lines, long n, long inner, int log_out)
{
    long l = get_global_id(0);
    if (l >= lines) return;
    long base = (l / inner) * n * inner + l % inner;
    float m = -INFINITY;
    for (long k = 0; k < n; ++k) m = fmax(m, LOAD(x, base + k * inner));
    m = mlrt_softmax_fix_max(m);
    float s = 0.0f;
    for (long k = 0; k < n; ++k) {
        float e = exp(LOAD(x, base + k * inner) - m);
        s += e;
        if (!log_out) SM_KEEP(y, base + k * inner, e);
    }
    if (log_out) {
        float ls = log(s);
        for (long k = 0; k < n; ++k) STORE(y, base + k * inner, (LOAD(x, base + k * inner) - m) - ls);
    } else {
        float inv = 1.0f / s;
        for (long k = 0; k < n; ++k) STORE(y, base + k * inner, SM_KEPT(x, y, base + k * inner, m) * inv);
    }
}

/* The combination of every work-item's `v` by `OP` (fmax or +), seen by all of them. */
#define SM_REDUCE(red, lid, v, OP)                                      \
    do {                                                                \
        red[lid] = v;                                                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                   \
        for (int w = SM_WG / 2; w > 0; w >>= 1) {                       \
            if (lid < w) red[lid] = OP(red[lid], red[lid + w]);          \
            barrier(CLK_LOCAL_MEM_FENCE);                               \
        }                                                               \
        v = red[0];                                                     \
        barrier(CLK_LOCAL_MEM_FENCE);                                   \
    } while (0)
#define SM_ADD(a, b) ((a) + (b))

__kernel __attribute__((reqd_work_group_size(SM_WG, 1, 1)))
void mlrt_softmax_group(__global const T *x, __global T *y, long n, long inner, int log_out)
{
    __local float red[SM_WG];
    long l = get_group_id(0);
    int lid = (int)get_local_id(0);
    long base = (l / inner) * n * inner + l % inner;
    float m = -INFINITY;
    for (long k = lid; k < n; k += SM_WG) m = fmax(m, LOAD(x, base + k * inner));
    SM_REDUCE(red, lid, m, fmax);
    m = mlrt_softmax_fix_max(m);
    float s = 0.0f;
    for (long k = lid; k < n; k += SM_WG) {
        float e = exp(LOAD(x, base + k * inner) - m);
        s += e;
        if (!log_out) SM_KEEP(y, base + k * inner, e);
    }
    SM_REDUCE(red, lid, s, SM_ADD);
    if (log_out) {
        float ls = log(s);
        for (long k = lid; k < n; k += SM_WG) STORE(y, base + k * inner, (LOAD(x, base + k * inner) - m) - ls);
    } else {
        float inv = 1.0f / s;
        for (long k = lid; k < n; k += SM_WG) STORE(y, base + k * inner, SM_KEPT(x, y, base + k * inner, m) * inv);
    }
}

/* Normalizations: BatchNormalization (inference), InstanceNormalization,
 * LayerNormalization.
 *
 * BatchNormalization is y = x * a[q] + b[q], a = scale / sqrt(var + eps) and
 * b = B - mean * a per channel q (or per channel and position: spatial=0), folded
 * beforehand (on the host when the parameters are constants, else by
 * mlrt_batchnorm_fold).
 *
 * Instance/LayerNormalization: the Python semantics hand X over as a view whose first
 * n_kept dims pick a group and whose other dims are the group's `count` elements;
 * scale and bias are views of the same shape (stride 0 where they broadcast).  The
 * recorder splits each into a kept view and a reduced view.  One work-group of NORM_WG
 * work-items per group: mean, then the mean squared deviation (two passes, partial
 * sums combined in local memory), then
 *   y = (x - mean) / sqrt(var + eps) * scale + bias
 * written at X's offsets; `stats` bit 0 / bit 1 also write each group's mean / 1/sqrt(var + eps). */

#ifndef NORM_WG
#error "NORM_WG is a build option from normalization.py"
#endif

#if defined(MLRT_float16)
#define LOAD4(p, i) vload_half4(0, (p) + (i))
#define STORE4(p, i, v) vstore_half4_rte((v), 0, (p) + (i))
#else
#define LOAD4(p, i) vload4(0, (p) + (i))
#define STORE4(p, i, v) vstore4((v), 0, (p) + (i))
#endif

/* global size (ceil(S / 4) rounded up, C rounded up, N): 4 positions of one channel and
 * image per work-item */
__kernel void mlrt_batchnorm(__global const T *x, __global T *y, __global const float *a, __global const float *b,
                             long C, long S, int per_element)
{
    long s = get_global_id(0) * 4, c = get_global_id(1);
    if (s >= S || c >= C) return;
    long i = ((long)get_global_id(2) * C + c) * S + s;
    if (per_element) {
        for (long e = min(s + 4, S); s < e; ++s, ++i) STORE(y, i, LOAD(x, i) * a[c * S + s] + b[c * S + s]);
        return;
    }
    float av = a[c], bv = b[c];
    if (s + 4 <= S) STORE4(y, i, LOAD4(x, i) * av + bv);
    else for (; s < S; ++s, ++i) STORE(y, i, LOAD(x, i) * av + bv);
}

__kernel void mlrt_batchnorm_fold(__global const T *scale, __global const T *bias, __global const T *mean,
                                  __global const T *var, __global float *a, __global float *b, long n, float eps)
{
    long q = get_global_id(0);
    if (q >= n) return;
    float aq = LOAD(scale, q) / sqrt(LOAD(var, q) + eps);
    a[q] = aq;
    b[q] = LOAD(bias, q) - LOAD(mean, q) * aq;
}

/* Offset of element i in a view: `line` = the view's stride when it has rank 1 (the usual
 * case after merging: no divisions), else -1. */
inline long mlrt_norm_offset(const __global mlrt_view *v, long line, long i)
{
    return line >= 0 ? i * line : mlrt_view_offset(v, i);
}

inline long mlrt_norm_line(const __global mlrt_view *v)
{
    return v->rank == 1 ? v->strides[0] : -1;
}

/* (sum, max) of every work-item's (v.x, v.y), seen by all of them. */
inline float2 mlrt_norm_reduce(__local float2 *red, int lid, float2 v)
{
    red[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = NORM_WG / 2; w > 0; w >>= 1) {
        if (lid < w) red[lid] = (float2)(red[lid].x + red[lid + w].x, fmax(red[lid].y, red[lid + w].y));
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    v = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return v;
}

/* Groups holding values of 2^60 or more take their statistics on x * f, f = 2^-e a power
 * of two bringing the largest |x| near 2^40, so sums of squares cannot overflow (the C
 * kernels use double); the scaling is exact, and f = 1 for values of ordinary size. */
__kernel __attribute__((reqd_work_group_size(NORM_WG, 1, 1)))
void mlrt_normalize(__global const T *x, __global T *y, __global const T *scale, __global const T *bias,
                    const __global mlrt_view *xk, const __global mlrt_view *xr,
                    const __global mlrt_view *sk, const __global mlrt_view *sr,
                    const __global mlrt_view *bk, const __global mlrt_view *br,
                    long count, float eps, int has_scale, int has_bias,
                    __global float *mean_out, __global float *inv_out, int stats)
{
    __local float2 red[NORM_WG];
    long g = get_group_id(0);
    int lid = (int)get_local_id(0);
    long gx = mlrt_view_offset(xk, g), xl = mlrt_norm_line(xr), sl = mlrt_norm_line(sr), bl = mlrt_norm_line(br);
    float2 acc = (float2)(0.0f, 0.0f);
    for (long r = lid; r < count; r += NORM_WG) {
        float v = LOAD(x, gx + mlrt_norm_offset(xr, xl, r));
        acc += (float2)(v, 0.0f);
        acc.y = fmax(acc.y, fabs(v));
    }
    acc = mlrt_norm_reduce(red, lid, acc);
    int e = isfinite(acc.y) && acc.y >= 0x1p60f ? ilogb(acc.y) - 40 : 0;  /* squares could overflow: scale */
    float f = ldexp(1.0f, -e);
    if (e != 0 && isfinite(acc.x)) {
        acc.x *= f;
    } else if (e != 0) {  /* the sum itself overflowed */
        acc.x = 0.0f;
        for (long r = lid; r < count; r += NORM_WG) acc.x += LOAD(x, gx + mlrt_norm_offset(xr, xl, r)) * f;
        acc = mlrt_norm_reduce(red, lid, acc);
    }
    float mean = acc.x / (float)count;  /* of the scaled values */
    acc = (float2)(0.0f, 0.0f);
    for (long r = lid; r < count; r += NORM_WG) {
        float d = LOAD(x, gx + mlrt_norm_offset(xr, xl, r)) * f - mean;
        acc.x += d * d;
    }
    float var = mlrt_norm_reduce(red, lid, acc).x / (float)count;
    float inv = 1.0f / sqrt(var + eps * f * f);  /* of the scaled values: 1/sqrt(var + eps) = inv * f */
    float inv_true = inv * f;
    if (e != 0 && !(var + eps * f * f > 0.0f)) {  /* equal values (eps * f * f underflows): y = 0 */
        inv = 0.0f;
        inv_true = 1.0f / sqrt(eps);
    }
    long gs = has_scale ? mlrt_view_offset(sk, g) : 0, gb = has_bias ? mlrt_view_offset(bk, g) : 0;
    for (long r = lid; r < count; r += NORM_WG) {
        long ox = gx + mlrt_norm_offset(xr, xl, r);
        float v = (LOAD(x, ox) * f - mean) * inv;
        if (has_scale) v *= LOAD(scale, gs + mlrt_norm_offset(sr, sl, r));
        if (has_bias) v += LOAD(bias, gb + mlrt_norm_offset(br, bl, r));
        STORE(y, ox, v);
    }
    if (lid == 0 && (stats & 1)) mean_out[g] = mean / f;
    if (lid == 0 && (stats & 2)) inv_out[g] = inv_true;
}

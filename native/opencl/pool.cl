/* Pooling: MaxPool, AveragePool (windows of 1 to 3 spatial dims), GlobalMaxPool,
 * GlobalAveragePool, and LRN (across channels).
 *
 * Windows: the Python semantics resolve output sizes and pads (auto_pad, ceil_mode);
 * the recorder hands them over as a table of 3 dims (1-D and 2-D padded in front with
 * size-1 dims), POOL_FIELDS ints per dim:  in, out, kernel, stride, dilation,
 * pad_begin, pad_end.  Every window is clipped to the input, so any size is safe.
 * As the C kernels: MaxPool skips NaN and gives 0 for a window with no element in X;
 * AveragePool divides by the taps inside X, or with count_include_pad by the taps
 * inside the padded input (the end padding, not what ceil_mode adds past it).
 * Global pools: GlobalMaxPool skips NaN except in a plane's first element (the C
 * kernel starts its max there), GlobalAveragePool sums in float. */

#if !defined(POOL_FIELDS) || !defined(POOL_WG) || !defined(POOL_MAX) || !defined(POOL_AVERAGE)
#error "POOL_FIELDS, POOL_WG, POOL_MAX and POOL_AVERAGE are build options from pool.py"
#endif

/* Taps [*t0, *t1) of window o along one dim that fall inside X; returns the taps
 * inside the padded input [-pad_begin, in + pad_end).  (In-image arithmetic is in int:
 * the recorder checks that an image's positions, pads included, fit.) */
inline int mlrt_pool_taps(__global const int *f, int o, int *t0, int *t1)
{
    int in = f[0], k = f[2], s = f[3], dl = f[4], pb = f[5], pe = f[6];
    int a = o * s - pb;                  /* input position of tap 0 */
    int lo, hi, padded;
    if (dl == 1) {
        lo = max(-a, 0), hi = in - a, padded = in + pe - a;
    } else {
        lo = a >= 0 ? 0 : (-a + dl - 1) / dl;
        hi = in - a > 0 ? (in - a + dl - 1) / dl : 0;
        padded = in + pe - a > 0 ? (in + pe - a + dl - 1) / dl : 0;
    }
    *t0 = min(lo, k);
    *t1 = clamp(hi, *t0, k);
    return clamp(padded, 0, k);
}

/* global size (OW, OH rounded up, planes * OD); kind POOL_MAX or POOL_AVERAGE
 * (count_include_pad in include_pad) */
__kernel void mlrt_pool_window(__global const T *x, __global T *y, __global const int *g, int kind, int include_pad)
{
    __global const int *fd = g, *fh = g + POOL_FIELDS, *fw = g + 2 * POOL_FIELDS;
    int ow = get_global_id(0), oh = get_global_id(1), OD = fd[1], OH = fh[1], OW = fw[1];
    long r = get_global_id(2);
    if (ow >= OW || oh >= OH) return;
    int od = OD == 1 ? 0 : r % OD;
    long plane = OD == 1 ? r : r / OD;
    int ID = fd[0], IH = fh[0], IW = fw[0];
    int d0, d1, h0, h1, w0, w1;
    int pd = mlrt_pool_taps(fd, od, &d0, &d1);
    int ph = mlrt_pool_taps(fh, oh, &h0, &h1);
    int pw = mlrt_pool_taps(fw, ow, &w0, &w1);
    int dd = fd[4], dh = fh[4], dw = fw[4];
    int bd = od * fd[3] - fd[5], bh = oh * fh[3] - fh[5], bw = ow * fw[3] - fw[5];
    int valid = (d1 - d0) * (h1 - h0) * (w1 - w0);
    __global const T *xp = x + plane * ID * IH * IW;
    float acc = kind == POOL_MAX ? -INFINITY : 0.0f;
    for (int td = d0; td < d1; ++td) {
        int rd = (bd + td * dd) * IH;
        for (int th = h0; th < h1; ++th) {
            __global const T *row = xp + ((rd + bh + th * dh) * IW + bw);
            if (kind == POOL_MAX) {
                for (int tw = w0; tw < w1; ++tw) { float v = LOAD(row, tw * dw); acc = v > acc ? v : acc; }
            } else {
                for (int tw = w0; tw < w1; ++tw) acc += LOAD(row, tw * dw);
            }
        }
    }
    if (kind == POOL_MAX) acc = valid == 0 ? 0.0f : acc;
    else acc = acc / (float)(include_pad ? pd * ph * pw : valid);
    STORE(y, (r * OH + oh) * OW + ow, acc);
}

/* Global pools, one work-item per (image, channel) plane of `size` elements. */
__kernel void mlrt_global_pool_planes(__global const T *x, __global T *y, long planes, long size, int is_max)
{
    long p = get_global_id(0);
    if (p >= planes) return;
    __global const T *xp = x + p * size;
    float first = LOAD(xp, 0), acc = is_max ? first : 0.0f;
    for (long i = 0; i < size; ++i) {
        float v = LOAD(xp, i);
        acc = is_max ? fmax(acc, v) : acc + v;
    }
    if (is_max) acc = isnan(first) ? first : acc;
    else acc = acc / (float)size;
    STORE(y, p, acc);
}

/* Global pools, one work-group of POOL_WG work-items per plane (large planes). */
__kernel __attribute__((reqd_work_group_size(POOL_WG, 1, 1)))
void mlrt_global_pool_group(__global const T *x, __global T *y, long size, int is_max)
{
    __local float red[POOL_WG];
    long p = get_group_id(0);
    int lid = (int)get_local_id(0);
    __global const T *xp = x + p * size;
    float first = LOAD(xp, 0), acc = is_max ? first : 0.0f;
    for (long i = lid; i < size; i += POOL_WG) {
        float v = LOAD(xp, i);
        acc = is_max ? fmax(acc, v) : acc + v;
    }
    red[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = POOL_WG / 2; w > 0; w >>= 1) {
        if (lid < w) red[lid] = is_max ? fmax(red[lid], red[lid + w]) : red[lid] + red[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        acc = red[0];
        if (is_max) acc = isnan(first) ? first : acc;
        else acc = acc / (float)size;
        STORE(y, p, acc);
    }
}

/* LRN: y = x / (bias + k * sum of x^2 over channels [c - lo, c + hi]) ^ beta, k = alpha / size;
 * x is (N, C, S positions), the global size (S, C rounded up, N). */
__kernel void mlrt_lrn(__global const T *x, __global T *y, long C, long S, long lo, long hi, float k, float bias,
                       float beta)
{
    long s = get_global_id(0), c = get_global_id(1);
    if (s >= S || c >= C) return;
    long i = ((long)get_global_id(2) * C + c) * S + s;
    long c0 = max(c - lo, 0L), c1 = min(c + hi, C - 1);
    float acc = 0.0f;
    for (long cc = c0; cc <= c1; ++cc) {
        float v = LOAD(x, i + (cc - c) * S);
        acc += v * v;
    }
    float a = bias + k * acc, v = LOAD(x, i), out;
    if (beta == 0.75f) {
        float q = sqrt(a);
        out = v / (q * sqrt(q));
    } else if (beta == 0.5f) {
        out = v / sqrt(a);
    } else if (beta == 1.0f) {
        out = v / a;
    } else {
        out = v / pow(a, beta);
    }
    STORE(y, i, out);
}

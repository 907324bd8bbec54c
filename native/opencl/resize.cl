/* Resize and Upsample: nearest, n-linear and cubic (with antialias), every coordinate mode.
 *
 * The host (resize.py) turns the operator's parameters into a tap table per axis:
 * for each output position, `taps` source indices (clamped into the input) and their
 * weights; index -1 in a position's first tap marks it extrapolated
 * (tf_crop_and_resize), which writes `ext`.  An output element is the sum, over the
 * product of its axes' taps, of weight products times input elements.
 *
 * `axes` holds, per axis d, (output length, taps, first entry of its table in idx/w,
 * input stride): position o's taps are idx/w[first + o * taps + t].  The kernels walk
 * the output as rows along the last axis: item r * items + i writes columns
 * [i * chunk, i * chunk + chunk) of row r, so the outer axes are worked out once per run. */

#if defined(MLRT_float16)
typedef ushort E;
#else
typedef uint E;
#endif

/* Nearest: one tap per axis, a copy of element bits (`ext` too). */
__kernel void mlrt_resize_nearest(__global const E *x, __global E *y, __global const long *axes,
                                  __global const int *idx, int rank, E ext, long cols, long chunk, long rows)
{
    MLRT_ROW_RANGE;
    __global E *yr = y + r * cols;
    long rem = r, off = 0;
    bool outside = false;
    for (int d = rank - 2; d >= 0; --d) {
        __global const long *a = axes + 4 * d;
        long q = rem / a[0];
        int s = idx[a[2] + rem - q * a[0]];
        rem = q;
        outside |= s < 0;
        off += (long)s * a[3];
    }
    __global const long *a = axes + 4 * (rank - 1);
    __global const int *ci = idx + a[2];
    if (outside) {
        for (long c = c0; c < c1; ++c) yr[c] = ext;
        return;
    }
    __global const E *xr = x + off;
    for (long c = c0; c < c1; ++c) {
        int s = ci[c];
        yr[c] = s < 0 ? ext : xr[s];
    }
}

/* Bilinear on the last two axes (the outer axes unchanged): rows are (plane, output row). */
__kernel void mlrt_resize_bilinear(__global const T *x, __global T *y, __global const int *hidx,
                                   __global const float *hw, __global const int *widx, __global const float *ww,
                                   long hin, long win, long hout, float ext, long cols, long chunk, long rows)
{
    MLRT_ROW_RANGE;
    long p = r / hout, o = r - p * hout;
    long yr = r * cols;
    int h0 = hidx[2 * o], h1 = hidx[2 * o + 1];
    if (h0 < 0) {
        for (long c = c0; c < c1; ++c) STORE(y, yr + c, ext);
        return;
    }
    float a0 = hw[2 * o], a1 = hw[2 * o + 1];
    long x0 = (p * hin + h0) * win, x1 = (p * hin + h1) * win;
    for (long c = c0; c < c1; ++c) {
        int i0 = widx[2 * c], i1 = widx[2 * c + 1];
        if (i0 < 0) {
            STORE(y, yr + c, ext);
            continue;
        }
        float v = ww[2 * c] * (a0 * LOAD(x, x0 + i0) + a1 * LOAD(x, x1 + i0)) +
                  ww[2 * c + 1] * (a0 * LOAD(x, x0 + i1) + a1 * LOAD(x, x1 + i1));
        STORE(y, yr + c, v);
    }
}

/* Any taps on any axes: per column, the last axis's taps times every combination of
 * the outer axes' taps (walked as an odometer). */
__kernel void mlrt_resize_taps(__global const T *x, __global T *y, __global const long *axes,
                               __global const int *idx, __global const float *w, int rank, float ext, long cols,
                               long chunk, long rows)
{
    MLRT_ROW_RANGE;
    long yr = r * cols;
    long fixed = 0, rem = r;
    float wfixed = 1.0f;
    int m = 0;                 /* outer axes with more than one tap */
    long at[MLRT_MAX_RANK], st[MLRT_MAX_RANK];
    int nt[MLRT_MAX_RANK];
    for (int d = rank - 2; d >= 0; --d) {
        __global const long *a = axes + 4 * d;
        long q = rem / a[0];
        long e = a[2] + (rem - q * a[0]) * a[1];
        rem = q;
        if (idx[e] < 0) {
            for (long c = c0; c < c1; ++c) STORE(y, yr + c, ext);
            return;
        }
        if (a[1] == 1) {
            fixed += (long)idx[e] * a[3];
            wfixed *= w[e];
        } else {
            at[m] = e;
            st[m] = a[3];
            nt[m] = (int)a[1];
            ++m;
        }
    }
    __global const long *a = axes + 4 * (rank - 1);
    const int nl = (int)a[1];
    const long ls = a[3];
    __global const int *li = idx + a[2];
    __global const float *lw = w + a[2];
    for (long c = c0; c < c1; ++c) {
        __global const int *ci = li + c * nl;
        __global const float *cw = lw + c * nl;
        if (ci[0] < 0) {
            STORE(y, yr + c, ext);
            continue;
        }
        float acc;
        if (m == 0) {          /* taps along the last axis only */
            acc = cw[0] * LOAD(x, fixed + (long)ci[0] * ls);
            for (int tl = 1; tl < nl; ++tl) acc += cw[tl] * LOAD(x, fixed + (long)ci[tl] * ls);
            acc *= wfixed;
        } else if (m == 1) {   /* and along one outer axis (e.g. H of NCHW) */
            __global const int *oi = idx + at[0];
            __global const float *ow = w + at[0];
            acc = 0.0f;
            for (int to = 0; to < nt[0]; ++to) {
                long row = fixed + (long)oi[to] * st[0];
                float s = cw[0] * LOAD(x, row + (long)ci[0] * ls);
                for (int tl = 1; tl < nl; ++tl) s += cw[tl] * LOAD(x, row + (long)ci[tl] * ls);
                acc = to ? acc + ow[to] * s : ow[0] * s;
            }
            acc *= wfixed;
        } else if (m == 2) {   /* two outer axes (e.g. D and H, or H and W of NHWC) */
            acc = 0.0f;
            bool first = true;
            for (int t0 = 0; t0 < nt[0]; ++t0) {
                long off0 = fixed + (long)idx[at[0] + t0] * st[0];
                float w0 = w[at[0] + t0];
                for (int t1 = 0; t1 < nt[1]; ++t1) {
                    long row = off0 + (long)idx[at[1] + t1] * st[1];
                    float s = cw[0] * LOAD(x, row + (long)ci[0] * ls);
                    for (int tl = 1; tl < nl; ++tl) s += cw[tl] * LOAD(x, row + (long)ci[tl] * ls);
                    s *= w0 * w[at[1] + t1];
                    acc = first ? s : acc + s;
                    first = false;
                }
            }
            acc *= wfixed;
        } else {               /* more outer axes: their taps walked as an odometer */
            bool first = true;
            acc = 0.0f;
            for (int tl = 0; tl < nl; ++tl) {
                long col = fixed + (long)ci[tl] * ls;
                float wl = wfixed * cw[tl];
                int t[MLRT_MAX_RANK];
                for (int j = 0; j < m; ++j) t[j] = 0;
                for (;;) {
                    long off = col;
                    float wk = wl;
                    for (int j = 0; j < m; ++j) {
                        off += (long)idx[at[j] + t[j]] * st[j];
                        wk *= w[at[j] + t[j]];
                    }
                    acc = first ? wk * LOAD(x, off) : acc + wk * LOAD(x, off);
                    first = false;
                    int j = 0;
                    while (j < m && ++t[j] == nt[j]) t[j++] = 0;
                    if (j == m) break;
                }
            }
        }
        STORE(y, yr + c, acc);
    }
}

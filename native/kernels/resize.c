/* resize.c -- Resize (opsets 10-19) and Upsample (7, 9): nearest, n-linear and
 * cubic interpolation (with antialiasing), every coordinate transformation mode.
 *
 * The Python semantics resolve the output sizes, the per-axis scales and roi, and
 * which axes are left alone.  Here every axis gets a tap table: for each output
 * position along it, the source indices (clamped into the input, which is edge
 * padding) and their weights, so the inner loops never compute a coordinate.  An
 * output row (the last axis) combines the taps of the outer axes -- their products,
 * e.g. two source rows for bilinear -- with the per-column taps of the last axis.
 * Nearest is a gather of element bytes (a repeated source row is one memcpy) and
 * works for every element type.  Linear and cubic accumulate in double, summing over
 * the outer taps first as onnx.reference's axis-by-axis passes do (integer results
 * round half to even and saturate); bilinear on float32/float16/bfloat16 -- a convex
 * combination, the common case -- runs in float.  Rows are spread over the pool. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"
#include "resize.h"

#define RS_STACK 64

typedef struct rs_axis {
    int64_t in, out, taps, stride;
    bool identity;
    int64_t *idx;  /* out * taps source indices in [0, in) */
    double *w;     /* out * taps weights */
    float *wf;     /* the same as float */
    uint8_t *ext;  /* tf_crop_and_resize: 1 where the position falls outside the input (else NULL) */
} rs_axis;

typedef struct rs_job {
    int32_t rank;
    size_t es;
    rs_axis ax[MLRT_MAX_RANK];
    const char *x;
    char *y;
    int64_t combos;           /* product of the outer axes' tap counts */
    double extrapolation;
    int64_t extrapolation_bits;
    atomic_int failed;
} rs_job;

/* ---- tap tables ------------------------------------------------------------------------------- */

/* Weights are computed with the same expressions as onnx.reference, so that integer
 * results (which round) agree with it exactly in the common cases. */
static double rs_linear_w(double t) {
    t = 1 - fabs(t);
    return t < 0 ? 0 : t > 1 ? 1 : t;
}

static double rs_cubic_w(double t, double a) {  /* antialiased cubic */
    t = fabs(t);
    double t2 = t * t, t3 = t * t2;
    if (t <= 1) return (a + 2) * t3 - (a + 3) * t2 + 1;
    if (t < 2) return a * t3 - 5 * a * t2 + 8 * a * t - 4 * a;
    return 0;
}

static void rs_cubic4(double r, double a, double *w) {  /* plain cubic: taps floor(x) - 1 .. floor(x) + 2 */
    double r1 = r + 1, u = 1 - r, u1 = u + 1;
    w[0] = ((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a;
    w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
    w[2] = ((a + 2) * u - (a + 3)) * u * u + 1;
    w[3] = ((a * u1 - 5 * a) * u1 + 8 * a) * u1 - 4 * a;
}

/* Source coordinate of output position o along axis d. */
static double rs_coord(const mlrt_resize_params *p, int32_t d, int64_t o, int64_t in, int64_t out) {
    const double s = p->scales[d], len = s * (double)in, y = (double)o, last = (double)(in - 1);
    switch (p->coord_mode) {
    case MLRT_RESIZE_HALF_PIXEL: return (y + 0.5) / s - 0.5;
    case MLRT_RESIZE_HALF_PIXEL_SYMMETRIC: {
        double offset = (double)in / 2 * (1 - (double)out / len);
        return offset + (y + 0.5) / s - 0.5;
    }
    case MLRT_RESIZE_PYTORCH_HALF_PIXEL: return len == 1 ? -0.5 : (y + 0.5) / s - 0.5;
    case MLRT_RESIZE_ALIGN_CORNERS: return len == 1 ? 0 : y * last / (len - 1);
    case MLRT_RESIZE_ASYMMETRIC: return y / s;
    case MLRT_RESIZE_TF_CROP_AND_RESIZE: {
        double r0 = p->roi_start[d], r1 = p->roi_end[d];
        double x = len == 1 ? (r1 - r0) * last / 2 : y * (r1 - r0) * last / (len - 1);
        return x + r0 * last;
    }
    default: return (y + 0.5) / s;
    }
}

static int64_t rs_round(double x, int64_t mode, double scale) {
    double f = floor(x), r = x - f;
    if (r == 0) return (int64_t)f;
    switch (mode) {
    case MLRT_RESIZE_ROUND_PREFER_FLOOR: return (int64_t)f + (r > 0.5);
    case MLRT_RESIZE_ROUND_PREFER_CEIL: return (int64_t)f + (r >= 0.5);
    case MLRT_RESIZE_FLOOR: return (int64_t)f;
    case MLRT_RESIZE_CEIL: return (int64_t)f + 1;
    default: return (int64_t)f + (scale < 1);
    }
}

static inline int64_t rs_clamp(int64_t i, int64_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

/* Tap window of linear/cubic: first offset (relative to floor(x)) and count. */
static void rs_window(const mlrt_resize_params *p, double scale, double *s, int64_t *start, int64_t *n) {
    *s = p->antialias && scale < 1 ? scale : 1;
    double reach = p->mode == MLRT_RESIZE_LINEAR ? 1 : 2;
    *start = (int64_t)floor(-reach / *s) + 1;
    *n = 2 - 2 * *start;
}

static int rs_axis_build(rs_axis *a, const mlrt_resize_params *p, int32_t d) {
    const int64_t in = a->in, out = a->out;
    double s = 1;
    int64_t start = 0;
    a->taps = 1;
    if (!a->identity && p->mode != MLRT_RESIZE_NEAREST) rs_window(p, p->scales[d], &s, &start, &a->taps);
    const int64_t n = a->taps;
    a->idx = malloc((size_t)(out * n) * sizeof *a->idx);
    a->w = malloc((size_t)(out * n) * sizeof *a->w);
    a->wf = malloc((size_t)(out * n) * sizeof *a->wf);
    if (p->coord_mode == MLRT_RESIZE_TF_CROP_AND_RESIZE && !a->identity) a->ext = calloc((size_t)out, 1);
    if (!a->idx || !a->w || !a->wf || (p->coord_mode == MLRT_RESIZE_TF_CROP_AND_RESIZE && !a->identity && !a->ext))
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate the tap table of axis %d", d);
    const double lim = (double)(in + n + 2);
    for (int64_t o = 0; o < out; ++o) {
        int64_t *ix = a->idx + o * n;
        double *w = a->w + o * n;
        if (a->identity) {
            ix[0] = o;
            w[0] = 1;
            a->wf[o] = 1;
            continue;
        }
        double x = rs_coord(p, d, o, in, out);
        if (a->ext && (x < 0 || x > (double)(in - 1) || x != x)) a->ext[o] = 1;
        if (x != x) x = 0;
        if (x < -lim) x = -lim;
        if (x > lim) x = lim;  /* far outside every tap clamps to the edge anyway */
        if (p->mode == MLRT_RESIZE_NEAREST) {
            ix[0] = rs_clamp(rs_round(x, p->nearest_mode, p->scales[d]), in);
            w[0] = 1;
        } else {
            double fl = floor(x), ratio = x - fl;
            int64_t base = (int64_t)fl;
            if (ratio == 0) {  /* onnx.reference takes the window left of an exact integer */
                base -= 1;
                ratio = 1;
            }
            if (!p->antialias && p->mode == MLRT_RESIZE_LINEAR) {
                w[0] = 1 - ratio;
                w[1] = ratio;
            } else if (!p->antialias) {
                rs_cubic4(ratio, p->cubic_coeff_a, w);
            } else {
                double sum = 0;
                for (int64_t t = 0; t < n; ++t) {
                    double arg = ((double)(start + t) - ratio) * s;
                    w[t] = p->mode == MLRT_RESIZE_LINEAR ? rs_linear_w(arg) : rs_cubic_w(arg, p->cubic_coeff_a);
                    sum += w[t];
                }
                if (sum != 0)
                    for (int64_t t = 0; t < n; ++t) w[t] /= sum;
            }
            if (p->exclude_outside) {
                double sum = 0;
                for (int64_t t = 0; t < n; ++t) {
                    int64_t j = base + start + t;
                    if (j < 0 || j >= in) w[t] = 0;
                    sum += w[t];
                }
                if (sum == 0) sum = 1;
                for (int64_t t = 0; t < n; ++t) w[t] /= sum;
            }
            for (int64_t t = 0; t < n; ++t) ix[t] = rs_clamp(base + start + t, in);
        }
        for (int64_t t = 0; t < n; ++t) a->wf[o * n + t] = (float)w[t];
    }
    return MLRT_OK;
}

/* Decompose output row r into outer positions; true if any of them is extrapolated.
 * With combos, fill the (offset, weight) products of the outer axes' taps. */
#define RS_OUTER(A, WFIELD)                                                                  \
    do {                                                                                   \
        int64_t rem = r;                                                                   \
        k_n = 1;                                                                           \
        off[0] = 0;                                                                        \
        w[0] = 1;                                                                          \
        for (int32_t d = L - 1; d >= 0; --d) {                                             \
            const rs_axis *a = &j->ax[d];                                                  \
            int64_t o = rem % a->out, n = a->taps;                                         \
            rem /= a->out;                                                                 \
            if (a->ext && a->ext[o]) ext = true;                                           \
            const int64_t *ai = a->idx + o * n;                                            \
            if (n == 1) {                                                                  \
                for (int64_t k = 0; k < k_n; ++k) off[k] += ai[0] * a->stride;             \
                continue;                                                                  \
            }                                                                              \
            const __typeof__(a->WFIELD[0]) *aw = a->WFIELD + o * n;                        \
            for (int64_t k = k_n - 1; k >= 0; --k) {                                       \
                int64_t ok = off[k];                                                       \
                A wk = w[k];                                                               \
                for (int64_t t = n - 1; t >= 0; --t) {                                     \
                    off[k * n + t] = ok + ai[t] * a->stride;                               \
                    w[k * n + t] = wk * (A)aw[t];                                          \
                }                                                                          \
            }                                                                              \
            k_n *= n;                                                                      \
        }                                                                                  \
    } while (0)

/* ---- nearest: a byte gather, any element type -------------------------------------------------- */

#define RS_GATHER(T)                                                                         \
    do {                                                                                   \
        const T *xs = (const T *)xr;                                                       \
        T *ys = (T *)yr, ev;                                                               \
        memcpy(&ev, &j->extrapolation_bits, sizeof ev);                                    \
        if (ce) {                                                                          \
            for (int64_t c = 0; c < cols; ++c) ys[c] = ce[c] ? ev : xs[ci[c]];             \
        } else {                                                                           \
            for (int64_t c = 0; c < cols; ++c) ys[c] = xs[ci[c]];                          \
        }                                                                                  \
    } while (0)

static void rs_fill(char *row, int64_t cols, size_t es, int64_t bits) {
    for (int64_t c = 0; c < cols; ++c) memcpy(row + (size_t)c * es, &bits, es);
}

static void rs_nearest_rows(void *arg, int64_t begin, int64_t end) {
    rs_job *j = arg;
    const int32_t L = j->rank - 1;
    const rs_axis *la = &j->ax[L];
    const int64_t cols = la->out, *ci = la->idx;
    const uint8_t *ce = la->ext;
    const size_t es = j->es;
    int64_t prev = -1;  /* source offset of the previous row, which upsampling repeats */
    for (int64_t r = begin; r < end; ++r) {
        char *yr = j->y + (size_t)(r * cols) * es;
        int64_t rem = r, src = 0;
        bool ext = false;
        for (int32_t d = L - 1; d >= 0; --d) {
            const rs_axis *a = &j->ax[d];
            int64_t o = rem % a->out;
            rem /= a->out;
            if (a->ext && a->ext[o]) ext = true;
            src += a->idx[o] * a->stride;
        }
        if (ext) {
            rs_fill(yr, cols, es, j->extrapolation_bits);
            prev = -1;
            continue;
        }
        if (src == prev) {
            memcpy(yr, yr - (size_t)cols * es, (size_t)cols * es);
            continue;
        }
        prev = src;
        const char *xr = j->x + (size_t)src * es;
        if (la->identity) {
            memcpy(yr, xr, (size_t)cols * es);
            continue;
        }
        switch (es) {
        case 1: RS_GATHER(uint8_t); break;
        case 2: RS_GATHER(uint16_t); break;
        case 4: RS_GATHER(uint32_t); break;
        default: RS_GATHER(uint64_t); break;
        }
    }
}

/* ---- linear and cubic --------------------------------------------------------------------------- */

static inline float rs_ld_f32(float v) { return v; }
static inline float rs_st_f32(float v) { return v; }
static inline double rs_ld_f64(double v) { return v; }
static inline double rs_st_f64(double v) { return v; }
static inline float rs_ld_f16(uint16_t v) { return mlrt_f16_to_f32(v); }
static inline uint16_t rs_st_f16(float v) { return mlrt_f32_to_f16(v); }
static inline float rs_ld_bf16(uint16_t v) { return mlrt_bf16_to_f32(v); }
static inline uint16_t rs_st_bf16(float v) { return mlrt_f32_to_bf16(v); }

/* Round half to even, then saturate (NaN becomes 0). */
#define RS_INT_STORE(NAME, T, LO, HI)                                                        \
    static inline T NAME(double v) {                                                       \
        if (v != v) return 0;                                                              \
        v = nearbyint(v);                                                                  \
        if (v <= (double)(LO)) return (T)(LO);                                             \
        if (v >= (double)(HI)) return (T)(HI);                                             \
        return (T)v;                                                                       \
    }
RS_INT_STORE(rs_st_u8, uint8_t, 0, UINT8_MAX)
RS_INT_STORE(rs_st_i8, int8_t, INT8_MIN, INT8_MAX)
RS_INT_STORE(rs_st_u16, uint16_t, 0, UINT16_MAX)
RS_INT_STORE(rs_st_i16, int16_t, INT16_MIN, INT16_MAX)
RS_INT_STORE(rs_st_u32, uint32_t, 0, UINT32_MAX)
RS_INT_STORE(rs_st_i32, int32_t, INT32_MIN, INT32_MAX)
RS_INT_STORE(rs_st_i64, int64_t, INT64_MIN, INT64_MAX)  /* (double)INT64_MAX is 2^63: >= catches it */
RS_INT_STORE(rs_st_u64, uint64_t, 0, UINT64_MAX)
#define rs_ld_int(v) ((double)(v))

#define RS_INTERP(NAME, T, A, WFIELD, FA, FWF, LOAD, STORE)                                  \
    static void NAME(void *arg, int64_t begin, int64_t end) {                              \
        rs_job *j = arg;                                                                   \
        const int32_t L = j->rank - 1;                                                     \
        const rs_axis *la = &j->ax[L];                                                     \
        const int64_t cols = la->out, nt = la->taps, *ci = la->idx;                        \
        const __typeof__(la->WFIELD[0]) *cw = la->WFIELD;                                  \
        const uint8_t *ce = la->ext;                                                       \
        const T *x = (const T *)j->x;                                                      \
        const T ev = STORE((A)j->extrapolation);                                           \
        int64_t off_stack[RS_STACK], *off = off_stack, k_n;                                \
        A w_stack[RS_STACK], *w = w_stack;                                                 \
        if (j->combos > RS_STACK) {                                                        \
            off = malloc((size_t)j->combos * sizeof *off);                                 \
            w = malloc((size_t)j->combos * sizeof *w);                                     \
            if (!off || !w) {                                                              \
                free(off);                                                                 \
                free(w);                                                                   \
                atomic_store(&j->failed, 1);                                               \
                return;                                                                    \
            }                                                                              \
        }                                                                                  \
        for (int64_t r = begin; r < end; ++r) {                                            \
            T *yr = (T *)j->y + r * cols;                                                  \
            bool ext = false;                                                              \
            RS_OUTER(A, WFIELD);                                                           \
            if (ext) {                                                                     \
                for (int64_t c = 0; c < cols; ++c) yr[c] = ev;                             \
                continue;                                                                  \
            }                                                                              \
            if (nt == 2 && k_n == 2) { /* bilinear on the last two axes (convex: FA will do) */ \
                const T *x0 = x + off[0], *x1 = x + off[1];                                \
                const FA a0 = (FA)w[0], a1 = (FA)w[1], *fw = la->FWF;                      \
                for (int64_t c = 0; c < cols; ++c) {                                       \
                    const int64_t i0 = ci[2 * c], i1 = ci[2 * c + 1];                      \
                    const FA b0 = fw[2 * c], b1 = fw[2 * c + 1];                           \
                    FA v = b0 * (a0 * LOAD(x0[i0]) + a1 * LOAD(x1[i0])) +                  \
                           b1 * (a0 * LOAD(x0[i1]) + a1 * LOAD(x1[i1]));                   \
                    yr[c] = ce && ce[c] ? ev : STORE(v);                                   \
                }                                                                          \
                continue;                                                                  \
            }                                                                              \
            for (int64_t c = 0; c < cols; ++c) {                                           \
                if (ce && ce[c]) {                                                         \
                    yr[c] = ev;                                                            \
                    continue;                                                              \
                }                                                                          \
                const int64_t *ic = ci + c * nt;                                           \
                const __typeof__(la->WFIELD[0]) *wc = cw + c * nt;                         \
                A acc = 0;                                                                 \
                for (int64_t t = 0; t < nt; ++t) {                                         \
                    const T *xt = x + ic[t];                                               \
                    A s = 0;                                                               \
                    for (int64_t k = 0; k < k_n; ++k) s += w[k] * LOAD(xt[off[k]]);        \
                    acc += (A)wc[t] * s;                                                   \
                }                                                                          \
                yr[c] = STORE(acc);                                                        \
            }                                                                              \
        }                                                                                  \
        if (off != off_stack) {                                                            \
            free(off);                                                                     \
            free(w);                                                                       \
        }                                                                                  \
    }

RS_INTERP(rs_rows_f32, float, double, w, float, wf, rs_ld_f32, rs_st_f32)
RS_INTERP(rs_rows_f64, double, double, w, double, w, rs_ld_f64, rs_st_f64)
RS_INTERP(rs_rows_f16, uint16_t, double, w, float, wf, rs_ld_f16, rs_st_f16)
RS_INTERP(rs_rows_bf16, uint16_t, double, w, float, wf, rs_ld_bf16, rs_st_bf16)
RS_INTERP(rs_rows_u8, uint8_t, double, w, double, w, rs_ld_int, rs_st_u8)
RS_INTERP(rs_rows_i8, int8_t, double, w, double, w, rs_ld_int, rs_st_i8)
RS_INTERP(rs_rows_u16, uint16_t, double, w, double, w, rs_ld_int, rs_st_u16)
RS_INTERP(rs_rows_i16, int16_t, double, w, double, w, rs_ld_int, rs_st_i16)
RS_INTERP(rs_rows_u32, uint32_t, double, w, double, w, rs_ld_int, rs_st_u32)
RS_INTERP(rs_rows_i32, int32_t, double, w, double, w, rs_ld_int, rs_st_i32)
RS_INTERP(rs_rows_u64, uint64_t, double, w, double, w, rs_ld_int, rs_st_u64)
RS_INTERP(rs_rows_i64, int64_t, double, w, double, w, rs_ld_int, rs_st_i64)

static mlrt_range_fn rs_interp_fn(int32_t dtype) {
    switch (dtype) {
    case MLRT_FLOAT: return rs_rows_f32;
    case MLRT_DOUBLE: return rs_rows_f64;
    case MLRT_FLOAT16: return rs_rows_f16;
    case MLRT_BFLOAT16: return rs_rows_bf16;
    case MLRT_UINT8: return rs_rows_u8;
    case MLRT_INT8: return rs_rows_i8;
    case MLRT_UINT16: return rs_rows_u16;
    case MLRT_INT16: return rs_rows_i16;
    case MLRT_UINT32: return rs_rows_u32;
    case MLRT_INT32: return rs_rows_i32;
    case MLRT_UINT64: return rs_rows_u64;
    case MLRT_INT64: return rs_rows_i64;
    default: return NULL;
    }
}

/* ---- the kernel --------------------------------------------------------------------------------- */

static void rs_free(rs_job *j) {
    for (int32_t d = 0; d < j->rank; ++d) {
        free(j->ax[d].idx);
        free(j->ax[d].w);
        free(j->ax[d].wf);
        free(j->ax[d].ext);
    }
}

static int rs_check_modes(const mlrt_resize_params *p) {
    MLRT_CHECK(p->mode >= MLRT_RESIZE_NEAREST && p->mode <= MLRT_RESIZE_CUBIC, "unknown mode %lld", (long long)p->mode);
    MLRT_CHECK(p->coord_mode >= MLRT_RESIZE_HALF_PIXEL && p->coord_mode <= MLRT_RESIZE_TF_HALF_PIXEL_FOR_NN,
               "unknown coordinate transformation mode %lld", (long long)p->coord_mode);
    MLRT_CHECK(p->nearest_mode >= MLRT_RESIZE_ROUND_PREFER_FLOOR && p->nearest_mode <= MLRT_RESIZE_SIMPLE,
               "unknown nearest mode %lld", (long long)p->nearest_mode);
    return MLRT_OK;
}

static int rs_check_axis(const mlrt_resize_params *p, int32_t d, int64_t in, int64_t out) {
    MLRT_CHECK(in > 0, "cannot resize axis %d: the input has no elements along it", d);
    MLRT_CHECK(out >= 0, "axis %d: negative output length %lld", d, (long long)out);
    MLRT_CHECK(!p->identity[d] || in == out, "axis %d is marked unchanged but goes from %lld to %lld", d,
               (long long)in, (long long)out);
    MLRT_CHECK(p->identity[d] || (p->scales[d] > 0 && isfinite(p->scales[d])), "scale of axis %d must be positive", d);
    return MLRT_OK;
}

int mlrt_resize_taps(const mlrt_resize_params *p, int32_t d, int64_t in, int64_t out, int64_t capacity,
                     int64_t *taps, int32_t *idx, float *w) {
    MLRT_CHECK(p && taps && d >= 0 && d < MLRT_MAX_RANK, "needs parameters, an axis below %d and *taps", MLRT_MAX_RANK);
    int status = rs_check_modes(p);
    if (status == MLRT_OK) status = rs_check_axis(p, d, in, out);
    if (status != MLRT_OK) return status;
    rs_axis a = {.in = in, .out = out, .identity = p->identity[d] != 0, .taps = 1};
    double s;
    int64_t start;
    if (!a.identity && p->mode != MLRT_RESIZE_NEAREST) rs_window(p, p->scales[d], &s, &start, &a.taps);
    *taps = a.taps;
    if (!idx || out == 0) return MLRT_OK;
    MLRT_CHECK(w && out <= capacity / a.taps, "room for %lld entries, %lld x %lld needed", (long long)capacity,
               (long long)out, (long long)a.taps);
    MLRT_CHECK(in <= INT32_MAX, "axis %d: %lld source positions do not fit 32-bit indices", d, (long long)in);
    status = rs_axis_build(&a, p, d);
    if (status == MLRT_OK) {
        for (int64_t i = 0; i < out * a.taps; ++i) {
            idx[i] = (int32_t)a.idx[i];
            w[i] = a.wf[i];
        }
        for (int64_t o = 0; a.ext && o < out; ++o)
            if (a.ext[o]) idx[o * a.taps] = -1;
    }
    free(a.idx);
    free(a.w);
    free(a.wf);
    free(a.ext);
    return status;
}

static int k_resize(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_resize_params, p, params, params_size);
    size_t es;
    int status = mlrt_check_movement(in, n_in, out, n_out, &es);
    if (status != MLRT_OK) return status;
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    status = rs_check_modes(p);
    if (status != MLRT_OK) return status;
    mlrt_range_fn interp = NULL;
    if (p->mode != MLRT_RESIZE_NEAREST) {
        interp = rs_interp_fn(x->dtype);
        if (!interp)
            return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "linear and cubic resize do not support element type %d", x->dtype);
    }
    if (mlrt_numel(y) == 0) return MLRT_OK;
    if (x->rank == 0) {
        memcpy(y->data, x->data, es);
        return MLRT_OK;
    }
    rs_job job = {.rank = x->rank, .es = es, .x = x->data, .y = y->data, .combos = 1,
                  .extrapolation = p->extrapolation_value, .extrapolation_bits = p->extrapolation_bits};
    atomic_init(&job.failed, 0);
    int64_t stride = 1;
    for (int32_t d = x->rank - 1; d >= 0; --d) {
        rs_axis *a = &job.ax[d];
        a->in = x->shape[d];
        a->out = y->shape[d];
        a->stride = stride;
        a->identity = p->identity[d] != 0;
        stride *= a->in;
        status = rs_check_axis(p, d, a->in, a->out);
        if (status != MLRT_OK) return status;
    }
    for (int32_t d = 0; d < x->rank && status == MLRT_OK; ++d) {
        status = rs_axis_build(&job.ax[d], p, d);
        if (d < x->rank - 1) job.combos *= job.ax[d].taps;
    }
    if (status == MLRT_OK) {
        const int32_t L = x->rank - 1;
        int64_t cols = job.ax[L].out, rows = mlrt_numel(y) / cols;
        int64_t cost = cols * job.combos * job.ax[L].taps + 1;
        mlrt_parallel_for(ctx, rows, 32768 / cost + 1, interp ? interp : rs_nearest_rows, &job);
        if (atomic_load(&job.failed)) status = mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate tap products");
    }
    rs_free(&job);
    return status;
}

MLRT_KERNEL(resize, "Resize", "", 10, MLRT_OPSET_MAX, MLRT_MASK_ALL, k_resize);
MLRT_KERNEL(upsample, "Upsample", "", 7, MLRT_OPSET_MAX, MLRT_MASK_ALL, k_resize);

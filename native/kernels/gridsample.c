/* gridsample.c -- GridSample (opsets 16 and 20): sample X at the normalised
 * positions of a grid, nearest / n-linear / cubic, zeros / border / reflection
 * padding, any number of spatial axes.
 *
 * Semantics follow onnx.reference (after PyTorch): a grid value g in [-1, 1] maps to
 * ((g + 1) * L - 1) / 2, or (g + 1) / 2 * (L - 1) with align_corners; a coordinate
 * outside the border is clamped (border) or reflected (reflection) before the taps
 * are taken, and taps outside the input read 0 (zeros), the edge (border) or their
 * reflection.  Output positions are handled in blocks: the taps of a block (offsets
 * into one image plane and weights, the same for every channel) are worked out once
 * and then applied to each channel.  Blocks are spread over the intra-op pool.
 * Nearest copies element bytes (any element type); linear and cubic take float32,
 * float64, float16 or bfloat16 input; the grid is float32 or float64. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "gridsample.h"
#include "internal.h"

#define GS_MAX_SPATIAL 6

typedef struct gs_job {
    const mlrt_gridsample_params *p;
    int32_t nd, grid_dtype, dtype;
    size_t es;
    int64_t n, c, plane, positions, block, blocks_per_image, max_taps;
    int64_t dims[GS_MAX_SPATIAL], strides[GS_MAX_SPATIAL];
    const char *x;
    const void *grid;
    char *y;
    atomic_int failed;
} gs_job;

static double gs_reflect(double x, double lo, double hi) {
    double range = hi - lo;
    if (!(range > 0)) return lo;
    if (x < lo) {
        double dx = lo - x, q = floor(dx / range), r = dx - q * range;
        return fmod(q, 2) == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi, q = floor(dx / range), r = dx - q * range;
        return fmod(q, 2) == 0 ? hi - r : lo + r;
    }
    return x;
}

static void gs_cubic(double t, double *w) {
    const double a = -0.75;
    double t1 = t + 1, u = 1 - t, u1 = 2 - t;
    w[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
    w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    w[2] = ((a + 2) * u - (a + 3)) * u * u + 1;
    w[3] = ((a * u1 - 5 * a) * u1 + 8 * a) * u1 - 4 * a;
}

/* Tap i along an axis of length len: its index, or -1 when it reads zero padding. */
static int64_t gs_tap(int64_t i, int64_t len, int64_t pad, double lo, double hi) {
    if (i >= 0 && i < len) return i;
    if (pad == MLRT_GRIDSAMPLE_ZEROS) return -1;
    if (pad == MLRT_GRIDSAMPLE_REFLECTION) i = (int64_t)gs_reflect((double)i, lo, hi);
    return i < 0 ? 0 : i >= len ? len - 1 : i;
}

/* Taps of one grid position: offsets into the image plane and weights; returns the count. */
static int64_t gs_position(const gs_job *j, const double *g, int64_t *off, double *w) {
    const mlrt_gridsample_params *p = j->p;
    int64_t count = 1;
    off[0] = 0;
    w[0] = 1;
    for (int32_t d = 0; d < j->nd; ++d) {
        const int64_t len = j->dims[d];
        const double gv = g[j->nd - 1 - d];
        double x = p->align_corners ? (gv + 1) / 2 * (double)(len - 1) : ((gv + 1) * (double)len - 1) / 2;
        if (j->grid_dtype == MLRT_FLOAT) x = (float)x;
        double lo = p->align_corners ? 0 : -0.5, hi = p->align_corners ? (double)(len - 1) : (double)len - 0.5;
        if (x != x) x = -8;
        if (p->mode == MLRT_GRIDSAMPLE_NEAREST) x = nearbyint(x);
        if (x < lo || x > hi) {
            if (p->padding_mode == MLRT_GRIDSAMPLE_BORDER)
                x = x < 0 ? 0 : x > (double)(len - 1) ? (double)(len - 1) : x;
            else if (p->padding_mode == MLRT_GRIDSAMPLE_REFLECTION) x = gs_reflect(x, lo, hi);
        }
        if (x < -8) x = -8;  /* far outside: every tap is padding either way */
        if (x > (double)len + 8) x = (double)len + 8;
        int64_t idx[4], n = 0;
        double wt[4];
        if (p->mode == MLRT_GRIDSAMPLE_NEAREST) {
            idx[0] = gs_tap((int64_t)x, len, p->padding_mode, lo, hi);
            wt[0] = 1;
            n = 1;
        } else {
            double f = floor(x), t = x - f;
            int64_t base = (int64_t)f;
            if (p->mode == MLRT_GRIDSAMPLE_LINEAR) {
                idx[0] = gs_tap(base, len, p->padding_mode, lo, hi);
                idx[1] = gs_tap(base + 1, len, p->padding_mode, lo, hi);
                wt[0] = 1 - t;
                wt[1] = t;
                n = 2;
            } else {
                gs_cubic(t, wt);
                for (int k = 0; k < 4; ++k) idx[k] = gs_tap(base - 1 + k, len, p->padding_mode, lo, hi);
                n = 4;
            }
        }
        /* expand the products with this axis' valid taps (in place, from the end) */
        int64_t valid = 0;
        for (int64_t k = 0; k < n; ++k) valid += idx[k] >= 0;
        for (int64_t c = count - 1; c >= 0; --c) {
            int64_t oc = off[c], m = valid;
            double wc = w[c];
            for (int64_t k = n - 1; k >= 0; --k) {
                if (idx[k] < 0) continue;
                --m;
                off[c * valid + m] = oc + idx[k] * j->strides[d];
                w[c * valid + m] = wc * wt[k];
            }
        }
        count *= valid;
        if (count == 0) return 0;
    }
    return count;
}

static void gs_load_grid(const gs_job *j, int64_t at, double *g) {
    if (j->grid_dtype == MLRT_FLOAT) {
        const float *src = (const float *)j->grid + at * j->nd;
        for (int32_t d = 0; d < j->nd; ++d) g[d] = src[d];
    } else {
        const double *src = (const double *)j->grid + at * j->nd;
        for (int32_t d = 0; d < j->nd; ++d) g[d] = src[d];
    }
}

#define GS_APPLY(T, A, LOAD, STORE)                                                          \
    do {                                                                                   \
        for (int64_t ch = 0; ch < j->c; ++ch) {                                            \
            const T *plane = (const T *)j->x + (n * j->c + ch) * j->plane;                 \
            T *yo = (T *)j->y + (n * j->c + ch) * j->positions;                            \
            for (int64_t q = 0; q < m; ++q) {                                              \
                const int64_t *o = off + q * j->max_taps;                                  \
                const double *wq = w + q * j->max_taps;                                    \
                A acc = 0;                                                                 \
                for (int64_t k = 0; k < cnt[q]; ++k) acc += (A)wq[k] * LOAD(plane[o[k]]);  \
                yo[p0 + q] = STORE(acc);                                                   \
            }                                                                              \
        }                                                                                  \
    } while (0)

#define GS_COPY(T)                                                                           \
    do {                                                                                   \
        for (int64_t ch = 0; ch < j->c; ++ch) {                                            \
            const T *plane = (const T *)j->x + (n * j->c + ch) * j->plane;                 \
            T *yo = (T *)j->y + (n * j->c + ch) * j->positions;                            \
            for (int64_t q = 0; q < m; ++q) yo[p0 + q] = cnt[q] ? plane[off[q]] : (T)0;    \
        }                                                                                  \
    } while (0)

static void gs_blocks(void *arg, int64_t begin, int64_t end) {
    gs_job *j = arg;
    const int64_t B = j->block, T = j->max_taps;
    int64_t *off = malloc((size_t)(B * T) * sizeof *off), *cnt = malloc((size_t)B * sizeof *cnt);
    double *w = malloc((size_t)(B * T) * sizeof *w);
    if (!off || !cnt || !w) {
        atomic_store(&j->failed, 1);
        goto done;
    }
    for (int64_t b = begin; b < end; ++b) {
        const int64_t n = b / j->blocks_per_image, p0 = (b % j->blocks_per_image) * B;
        const int64_t m = p0 + B <= j->positions ? B : j->positions - p0;
        for (int64_t q = 0; q < m; ++q) {
            double g[GS_MAX_SPATIAL];
            gs_load_grid(j, n * j->positions + p0 + q, g);
            cnt[q] = gs_position(j, g, off + q * T, w + q * T);
        }
        if (j->p->mode == MLRT_GRIDSAMPLE_NEAREST) {
            switch (j->es) {
            case 1: GS_COPY(uint8_t); break;
            case 2: GS_COPY(uint16_t); break;
            case 4: GS_COPY(uint32_t); break;
            default: GS_COPY(uint64_t); break;
            }
        } else if (j->dtype == MLRT_FLOAT) {
            GS_APPLY(float, float, (float), (float));
        } else if (j->dtype == MLRT_DOUBLE) {
            GS_APPLY(double, double, (double), (double));
        } else if (j->dtype == MLRT_FLOAT16) {
            GS_APPLY(uint16_t, float, mlrt_f16_to_f32, mlrt_f32_to_f16);
        } else {
            GS_APPLY(uint16_t, float, mlrt_bf16_to_f32, mlrt_f32_to_bf16);
        }
    }
done:
    free(off);
    free(cnt);
    free(w);
}

static int k_gridsample(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                        const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_gridsample_params, p, params, params_size);
    MLRT_CHECK(n_in >= 2 && n_out >= 1 && mlrt_present(&in[0]) && mlrt_present(&in[1]) && mlrt_present(&out[0]),
               "expects X, grid and an output");
    const mlrt_tensor *x = &in[0], *grid = &in[1];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(p->mode >= MLRT_GRIDSAMPLE_LINEAR && p->mode <= MLRT_GRIDSAMPLE_CUBIC, "unknown mode %lld",
               (long long)p->mode);
    MLRT_CHECK(p->padding_mode >= MLRT_GRIDSAMPLE_ZEROS && p->padding_mode <= MLRT_GRIDSAMPLE_REFLECTION,
               "unknown padding mode %lld", (long long)p->padding_mode);
    const size_t es = mlrt_dtype_size(x->dtype);
    if (!es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    if (p->mode != MLRT_GRIDSAMPLE_NEAREST && x->dtype != MLRT_FLOAT && x->dtype != MLRT_DOUBLE &&
        x->dtype != MLRT_FLOAT16 && x->dtype != MLRT_BFLOAT16)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "linear and cubic GridSample take floating-point X, not type %d",
                         x->dtype);
    if (grid->dtype != MLRT_FLOAT && grid->dtype != MLRT_DOUBLE)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "grid must be float or double, not type %d", grid->dtype);
    const int32_t nd = x->rank - 2;
    MLRT_CHECK(nd >= 1 && nd <= GS_MAX_SPATIAL, "X must have 1 to %d spatial axes, has rank %d", GS_MAX_SPATIAL, x->rank);
    MLRT_CHECK(grid->rank == nd + 2 && grid->shape[0] == x->shape[0] && grid->shape[nd + 1] == nd,
               "grid must be (N, out..., %d) for X of rank %d", nd, x->rank);
    MLRT_CHECK(y->dtype == x->dtype && y->rank == x->rank && y->shape[0] == x->shape[0] && y->shape[1] == x->shape[1],
               "output must be (N, C, out...) of X's type");
    for (int32_t d = 0; d < nd; ++d)
        MLRT_CHECK(y->shape[d + 2] == grid->shape[d + 1], "output spatial shape must be the grid's");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(grid) && mlrt_is_contiguous(y), "needs contiguous tensors");
    if (mlrt_numel(y) == 0) return MLRT_OK;
    gs_job job = {.p = p, .nd = nd, .grid_dtype = grid->dtype, .dtype = x->dtype, .es = es, .n = x->shape[0],
                  .c = x->shape[1], .x = x->data, .grid = grid->data, .y = y->data};
    atomic_init(&job.failed, 0);
    int64_t plane = 1, positions = 1, taps = 1;
    int64_t per = p->mode == MLRT_GRIDSAMPLE_NEAREST ? 1 : p->mode == MLRT_GRIDSAMPLE_LINEAR ? 2 : 4;
    for (int32_t d = nd - 1; d >= 0; --d) {
        job.dims[d] = x->shape[d + 2];
        job.strides[d] = plane;
        plane *= x->shape[d + 2];
        positions *= grid->shape[d + 1];
        taps *= per;
    }
    if (plane == 0) {  /* nothing to sample: every tap is padding (zeros) or has no edge to clamp to */
        MLRT_CHECK(p->padding_mode == MLRT_GRIDSAMPLE_ZEROS,
                   "cannot sample an empty X with border or reflection padding");
        memset(y->data, 0, (size_t)mlrt_numel(y) * es);
        return MLRT_OK;
    }
    job.plane = plane;
    job.positions = positions;
    job.max_taps = taps;
    job.block = 4096 / taps > 1 ? 4096 / taps : 1;
    if (job.block > positions) job.block = positions;
    job.blocks_per_image = (positions + job.block - 1) / job.block;
    mlrt_parallel_for(ctx, job.n * job.blocks_per_image, 1, gs_blocks, &job);
    if (atomic_load(&job.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate GridSample tap buffers");
    return MLRT_OK;
}

MLRT_KERNEL(gridsample, "GridSample", "", 16, MLRT_OPSET_MAX, MLRT_MASK_ALL, k_gridsample);

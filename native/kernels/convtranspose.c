/* convtranspose.c -- ConvTranspose: 1-D to 6-D, groups, strides, dilations, pads
 * (negative pads too, from an output_shape larger than the natural one), optional
 * bias.  Output sizes, output_padding and auto_pad are resolved by the Python
 * semantics; the kernel clips every contribution to Y, so any Y size is memory-safe.
 *
 * Per (image, group): columns = W_g^T X_g (GEMM, by tiles of input positions), then
 * col2im adds every column into Y.  A task owns a block of output channels of one
 * (image, group), so no two tasks ever add into the same element. */
#include <stdatomic.h>

#include "conv.h"
#include "gemm.h"

#define CT_MAX_SPATIAL 6
#define CT_TILE_ELEMS (INT64_C(1) << 18)

typedef struct ct_job {
    int64_t N, C, M, G, Cg, Mg;
    int32_t nd;                                   /* 1-D runs as 2-D */
    int64_t in[CT_MAX_SPATIAL], k[CT_MAX_SPATIAL], out[CT_MAX_SPATIAL];
    int64_t s[CT_MAX_SPATIAL], d[CT_MAX_SPATIAL], pb[CT_MAX_SPATIAL];
    int64_t in_size, out_size, k_size;
    int64_t mblock, n_mblocks, tile;
    const void *x, *w, *b;
    void *y;
    atomic_int failed;
} ct_job;

#define DEFINE_CT(T, GEMM, NAME)                                                                          \
    /* Add the columns of input positions [p0, p0 + tw) of output channel block into Y (2-D). */        \
    static void col2im_2d_##NAME(const ct_job *j, const T *cols, int64_t mb, int64_t p0, int64_t tw,     \
                                 T *y) {                                                                 \
        int64_t Win = j->in[1], OH = j->out[0], OW = j->out[1], KH = j->k[0], KW = j->k[1];              \
        int64_t sh = j->s[0], sw = j->s[1], dh = j->d[0], dw = j->d[1], ph = j->pb[0], pw = j->pb[1];   \
        for (int64_t mm = 0; mm < mb; ++mm) {                                                            \
            T *yp = y + mm * j->out_size;                                                                \
            for (int64_t kh = 0; kh < KH; ++kh)                                                          \
                for (int64_t kw = 0; kw < KW; ++kw) {                                                    \
                    const T *src = cols + ((mm * KH + kh) * KW + kw) * tw;                               \
                    int64_t off = kw * dw - pw; /* ow = iw * sw + off */                                 \
                    int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;                                    \
                    int64_t hi = OW - off > 0 ? (OW - off + sw - 1) / sw : 0;                            \
                    if (hi > Win) hi = Win;                                                              \
                    int64_t ih = p0 / Win, iw = p0 % Win, left = tw;                                     \
                    while (left > 0) {                                                                   \
                        int64_t seg = Win - iw < left ? Win - iw : left;                                 \
                        int64_t oh = ih * sh - ph + kh * dh;                                             \
                        if (oh >= 0 && oh < OH) {                                                        \
                            int64_t a = lo < iw ? iw : lo > iw + seg ? iw + seg : lo;                    \
                            int64_t b = hi < a ? a : hi > iw + seg ? iw + seg : hi;                      \
                            T *yr = yp + oh * OW;                                                        \
                            for (int64_t i = a; i < b; ++i) yr[i * sw + off] += src[i - iw];             \
                        }                                                                                \
                        src += seg, left -= seg, iw = 0, ++ih;                                           \
                    }                                                                                    \
                }                                                                                        \
        }                                                                                                \
    }                                                                                                    \
                                                                                                         \
    /* The same for any spatial rank, position by position. */                                          \
    static void col2im_nd_##NAME(const ct_job *j, const T *cols, int64_t mb, int64_t p0, int64_t tw,     \
                                 T *y) {                                                                 \
        int32_t nd = j->nd;                                                                              \
        int64_t kidx[CT_MAX_SPATIAL], iidx[CT_MAX_SPATIAL];                                              \
        for (int64_t mm = 0; mm < mb; ++mm)                                                              \
            for (int64_t kk = 0; kk < j->k_size; ++kk) {                                                 \
                int64_t rest = kk;                                                                       \
                for (int32_t d = nd - 1; d >= 0; --d) kidx[d] = rest % j->k[d], rest /= j->k[d];         \
                rest = p0;                                                                               \
                for (int32_t d = nd - 1; d >= 0; --d) iidx[d] = rest % j->in[d], rest /= j->in[d];       \
                const T *src = cols + (mm * j->k_size + kk) * tw;                                        \
                T *yp = y + mm * j->out_size;                                                            \
                for (int64_t i = 0; i < tw; ++i, mlrt_index_next(iidx, j->in, nd)) {                     \
                    int64_t at = 0;                                                                      \
                    bool ok = true;                                                                      \
                    for (int32_t d = 0; d < nd; ++d) {                                                   \
                        int64_t o = iidx[d] * j->s[d] - j->pb[d] + kidx[d] * j->d[d];                    \
                        ok = ok && o >= 0 && o < j->out[d];                                              \
                        at = at * j->out[d] + o;                                                         \
                    }                                                                                    \
                    if (ok) yp[at] += src[i];                                                            \
                }                                                                                        \
            }                                                                                            \
    }                                                                                                    \
                                                                                                         \
    static void ct_tasks_##NAME(void *arg, int64_t begin, int64_t end) {                                 \
        ct_job *j = arg;                                                                                 \
        const T *x = j->x, *w = j->w, *b = j->b;                                                         \
        T *cols = mlrt_scratch((size_t)(j->mblock * j->k_size * j->tile) * sizeof(T));                   \
        if (!cols) { atomic_store(&j->failed, 1); return; }                                              \
        for (int64_t t = begin; t < end; ++t) {                                                          \
            int64_t mbi = t % j->n_mblocks, ng = t / j->n_mblocks, n = ng / j->G, g = ng % j->G;         \
            int64_t m0 = mbi * j->mblock, mb = j->Mg - m0 < j->mblock ? j->Mg - m0 : j->mblock;          \
            if (mb <= 0) continue;                                                                       \
            T *y = (T *)j->y + (n * j->M + g * j->Mg + m0) * j->out_size;                                \
            for (int64_t mm = 0; mm < mb; ++mm) {                                                        \
                T bv = b ? b[g * j->Mg + m0 + mm] : 0;                                                   \
                for (int64_t i = 0; i < j->out_size; ++i) y[mm * j->out_size + i] = bv;                  \
            }                                                                                            \
            const T *xg = x + (n * j->C + g * j->Cg) * j->in_size;                                       \
            const T *wg = w + g * j->Cg * j->Mg * j->k_size + m0 * j->k_size;                            \
            for (int64_t p0 = 0; p0 < j->in_size; p0 += j->tile) {                                       \
                int64_t tw = j->in_size - p0 < j->tile ? j->in_size - p0 : j->tile;                      \
                GEMM(NULL, true, false, mb * j->k_size, tw, j->Cg, 1, wg, j->Mg * j->k_size, xg + p0,    \
                     j->in_size, 0, cols, tw);                                                           \
                if (j->nd == 2) col2im_2d_##NAME(j, cols, mb, p0, tw, y);                                \
                else col2im_nd_##NAME(j, cols, mb, p0, tw, y);                                           \
            }                                                                                            \
        }                                                                                                \
    }

DEFINE_CT(float, mlrt_sgemm, f32)
DEFINE_CT(double, mlrt_dgemm, f64)

static int k_convtranspose(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                           int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_conv_params, p, params, params_size);
    MLRT_CHECK((n_in == 2 || n_in == 3) && n_out == 1, "ConvTranspose: expects 2 or 3 inputs and 1 output");
    const mlrt_tensor *X = &in[0], *W = &in[1], *B = n_in == 3 && mlrt_present(&in[2]) ? &in[2] : NULL;
    mlrt_tensor *Y = &out[0];
    int64_t nd = p->n_spatial;
    MLRT_CHECK(nd >= 1 && nd <= CT_MAX_SPATIAL, "ConvTranspose: %lld spatial dimensions (1..6 supported)",
               (long long)nd);
    MLRT_CHECK(X->rank == nd + 2 && W->rank == nd + 2 && Y->rank == nd + 2, "ConvTranspose: X, W, Y must have rank %lld",
               (long long)(nd + 2));
    MLRT_CHECK(X->dtype == MLRT_FLOAT || X->dtype == MLRT_DOUBLE, "ConvTranspose: element type %d not supported",
               X->dtype);
    MLRT_CHECK(W->dtype == X->dtype && Y->dtype == X->dtype && (!B || B->dtype == X->dtype),
               "ConvTranspose: operand types differ");
    MLRT_CHECK(mlrt_is_contiguous(X) && mlrt_is_contiguous(W) && mlrt_is_contiguous(Y) && (!B || mlrt_is_contiguous(B)),
               "ConvTranspose: needs contiguous tensors");
    ct_job j = {.N = X->shape[0], .C = X->shape[1], .G = p->group, .x = X->data, .w = W->data,
                .b = B ? B->data : NULL, .y = Y->data};
    MLRT_CHECK(j.G >= 1 && j.C % j.G == 0 && W->shape[0] == j.C, "ConvTranspose: W must be (C, M / group, ...) with "
               "group dividing C");
    j.Cg = j.C / j.G, j.Mg = W->shape[1], j.M = j.Mg * j.G;
    MLRT_CHECK(Y->shape[0] == j.N && Y->shape[1] == j.M, "ConvTranspose: Y must be (%lld, %lld, ...)", (long long)j.N,
               (long long)j.M);
    MLRT_CHECK(!B || (B->rank == 1 && B->shape[0] == j.M), "ConvTranspose: B must have %lld elements", (long long)j.M);
    int32_t off = nd == 1 ? 1 : 0;
    j.nd = (int32_t)nd + off;
    if (off) j.in[0] = j.k[0] = j.out[0] = j.s[0] = j.d[0] = 1, j.pb[0] = 0;
    j.in_size = j.out_size = j.k_size = 1;
    for (int32_t i = 0; i < nd; ++i) {
        MLRT_CHECK(p->kernel[i] == W->shape[2 + i], "ConvTranspose: kernel_shape differs from W");
        MLRT_CHECK(p->strides[i] >= 1 && p->dilations[i] >= 1, "ConvTranspose: bad stride or dilation");
        MLRT_CHECK(W->shape[2 + i] >= 1, "ConvTranspose: W's spatial dimension %d is empty", (int)i);
        j.in[i + off] = X->shape[2 + i], j.k[i + off] = W->shape[2 + i], j.out[i + off] = Y->shape[2 + i];
        j.s[i + off] = p->strides[i], j.d[i + off] = p->dilations[i], j.pb[i + off] = p->pads_begin[i];
        j.in_size *= X->shape[2 + i], j.out_size *= Y->shape[2 + i], j.k_size *= W->shape[2 + i];
    }
    if (mlrt_numel(Y) == 0) return MLRT_OK;
    MLRT_CHECK(j.Mg * j.k_size <= INT32_MAX && j.in_size <= INT32_MAX && j.Cg <= INT32_MAX,
               "ConvTranspose: sizes exceed the 32-bit BLAS limit");
    /* filter blocks until every thread has a task; tiles of input positions bound the buffer */
    int64_t threads = mlrt_ctx_threads(ctx), base = j.N * j.G, f = 1;
    while (base * f < threads && f < j.Mg) ++f;
    j.mblock = (j.Mg + f - 1) / f;
    j.n_mblocks = j.mblock ? (j.Mg + j.mblock - 1) / j.mblock : 1;
    if (j.mblock < 1) j.mblock = 1;
    j.tile = CT_TILE_ELEMS / (j.mblock * j.k_size);
    if (j.tile < 16) j.tile = 16;
    if (j.tile > j.in_size) j.tile = j.in_size > 0 ? j.in_size : 1;
    atomic_init(&j.failed, 0);
    mlrt_range_fn fn = X->dtype == MLRT_FLOAT ? ct_tasks_f32 : ct_tasks_f64;
    if ((double)j.N * (double)j.M * (double)j.k_size * (double)j.in_size * (double)j.Cg < (double)(INT64_C(1) << 22))
        fn(&j, 0, base * j.n_mblocks); /* too little work to wake the pool for */
    else
        mlrt_parallel_for(ctx, base * j.n_mblocks, 1, fn, &j);
    if (atomic_load(&j.failed))
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "ConvTranspose: cannot allocate the column buffer");
    return MLRT_OK;
}

MLRT_KERNEL(convtranspose, "ConvTranspose", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_convtranspose);

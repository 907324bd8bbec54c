/* topk.c -- TopK.
 *
 * X is a contiguous [outer, n, inner] block (k and the axis are resolved in
 * Python); each line of n elements keeps its k best in a binary heap whose root
 * is the worst kept one (O(n log k)), then the heap is unwound best-first.  The
 * order is total: by value (a NaN ranks above every number, as in a numpy sort),
 * then by lower index, so results never depend on the walk. */
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"
#include "topk.h"

typedef struct topk_job {
    const void *x;
    void *values;
    int64_t *indices;
    int64_t n, inner, k;
    bool largest;
    atomic_int failed;
} topk_job;

#define DEFINE_TOPK(T, SUF, ISNAN)                                                                  \
    typedef struct { T v; int64_t i; } pair_##SUF;                                                  \
                                                                                                    \
    /* does a rank strictly before b? */                                                            \
    static inline bool before_##SUF(pair_##SUF a, pair_##SUF b, bool largest) {                     \
        bool an = ISNAN(a.v), bn = ISNAN(b.v);                                                      \
        bool a_gt = (an && !bn) || (!an && !bn && a.v > b.v);                                       \
        bool b_gt = (bn && !an) || (!an && !bn && b.v > a.v);                                       \
        if (a_gt != b_gt) return largest ? a_gt : b_gt;                                             \
        return a.i < b.i;                                                                           \
    }                                                                                               \
                                                                                                    \
    /* heap with the worst element at the root: a parent never ranks before its children */         \
    static void sift_down_##SUF(pair_##SUF *h, int64_t size, int64_t at, bool largest) {            \
        for (;;) {                                                                                  \
            int64_t c = 2 * at + 1;                                                                 \
            if (c >= size) return;                                                                  \
            if (c + 1 < size && before_##SUF(h[c], h[c + 1], largest)) ++c;                         \
            if (!before_##SUF(h[at], h[c], largest)) return;                                        \
            pair_##SUF t = h[at]; h[at] = h[c]; h[c] = t;                                           \
            at = c;                                                                                 \
        }                                                                                           \
    }                                                                                               \
                                                                                                    \
    static void topk_##SUF(void *arg, int64_t begin, int64_t end) {                                 \
        topk_job *j = arg;                                                                          \
        int64_t n = j->n, inner = j->inner, k = j->k;                                               \
        pair_##SUF *h = malloc((size_t)k * sizeof *h);                                              \
        if (!h) { atomic_store(&j->failed, 1); return; }                                            \
        for (int64_t l = begin; l < end; ++l) {                                                     \
            int64_t o = l / inner, c = l % inner;                                                   \
            const T *p = (const T *)j->x + o * n * inner + c;                                       \
            int64_t size = 0;                                                                       \
            for (int64_t i = 0; i < n; ++i) {                                                       \
                pair_##SUF e = {p[i * inner], i};                                                   \
                if (size < k) { /* sift up */                                                       \
                    int64_t at = size++;                                                            \
                    while (at > 0 && before_##SUF(h[(at - 1) / 2], e, j->largest)) {                \
                        h[at] = h[(at - 1) / 2];                                                    \
                        at = (at - 1) / 2;                                                          \
                    }                                                                               \
                    h[at] = e;                                                                      \
                } else if (before_##SUF(e, h[0], j->largest)) {                                     \
                    h[0] = e;                                                                       \
                    sift_down_##SUF(h, size, 0, j->largest);                                        \
                }                                                                                   \
            }                                                                                       \
            T *v = (T *)j->values + o * k * inner + c;                                              \
            int64_t *ix = j->indices + o * k * inner + c;                                           \
            for (int64_t r = size - 1; r >= 0; --r) { /* pop the worst into the last free place */  \
                v[r * inner] = h[0].v;                                                              \
                ix[r * inner] = h[0].i;                                                             \
                h[0] = h[r];                                                                        \
                sift_down_##SUF(h, r, 0, j->largest);                                               \
            }                                                                                       \
        }                                                                                           \
        free(h);                                                                                    \
    }

#define TOPK_FNAN(v) ((v) != (v))
#define TOPK_INAN(v) false
DEFINE_TOPK(float, f32, TOPK_FNAN)
DEFINE_TOPK(double, f64, TOPK_FNAN)
DEFINE_TOPK(int8_t, i8, TOPK_INAN)
DEFINE_TOPK(int16_t, i16, TOPK_INAN)
DEFINE_TOPK(int32_t, i32, TOPK_INAN)
DEFINE_TOPK(int64_t, i64, TOPK_INAN)
DEFINE_TOPK(uint8_t, u8, TOPK_INAN)
DEFINE_TOPK(uint16_t, u16, TOPK_INAN)
DEFINE_TOPK(uint32_t, u32, TOPK_INAN)
DEFINE_TOPK(uint64_t, u64, TOPK_INAN)

static mlrt_range_fn topk_fn(int32_t dtype) {
    switch (dtype) {
    case MLRT_FLOAT: return topk_f32;
    case MLRT_DOUBLE: return topk_f64;
    case MLRT_INT8: return topk_i8;
    case MLRT_INT16: return topk_i16;
    case MLRT_INT32: return topk_i32;
    case MLRT_INT64: return topk_i64;
    case MLRT_UINT8: return topk_u8;
    case MLRT_UINT16: return topk_u16;
    case MLRT_UINT32: return topk_u32;
    case MLRT_UINT64: return topk_u64;
    default: return NULL;
    }
}

/* inputs: X, K (already resolved into the params); outputs: values, indices */
static int k_topk(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                  const void *params, size_t params_size) {
    MLRT_CHECK(n_in >= 1 && n_in <= 2 && n_out == 2, "expects 2 inputs and 2 outputs");
    MLRT_PARAMS(mlrt_topk_params, p, params, params_size);
    const mlrt_tensor *x = &in[0], *v = &out[0], *ix = &out[1];
    MLRT_CHECK(v->dtype == x->dtype && ix->dtype == MLRT_INT64, "outputs must be of X's type and int64");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(v) && mlrt_is_contiguous(ix), "needs contiguous tensors");
    MLRT_CHECK(p->k >= 0 && p->k <= p->n, "k = %lld is not within the axis (%lld)", (long long)p->k, (long long)p->n);
    MLRT_CHECK(mlrt_block_covers(p->outer, p->n, p->inner, mlrt_numel(x)), "[outer, n, inner] does not cover the input");
    MLRT_CHECK(mlrt_block_covers(p->outer, p->k, p->inner, mlrt_numel(v)) && mlrt_numel(v) == mlrt_numel(ix),
               "[outer, k, inner] does not cover the outputs");
    mlrt_range_fn fn = topk_fn(x->dtype);
    if (!fn) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    if (mlrt_numel(v) == 0) return MLRT_OK;
    topk_job job = {.x = x->data, .values = v->data, .indices = ix->data, .n = p->n, .inner = p->inner, .k = p->k,
                    .largest = p->largest != 0};
    atomic_init(&job.failed, 0);
    mlrt_parallel_for(ctx, p->outer * p->inner, 16384 / (p->n + 1) + 1, fn, &job);
    if (atomic_load(&job.failed))
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate %lld heap entries", (long long)p->k);
    return MLRT_OK;
}

MLRT_KERNEL(topk, "TopK", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS | MLRT_MASK_INTS, k_topk);

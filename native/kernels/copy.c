/* copy.c -- data movement without arithmetic.
 *
 * One strided copy serves Identity, Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
 * Expand, DepthToSpace and SpaceToDepth: the Python semantics hand the input over as
 * a view (shape in output order, element strides) and the kernel writes it out
 * contiguously (or, where a plan kept the output in the input's own bytes, leaves
 * them as they are).  Slice builds its view here from per-axis starts and
 * steps (negative steps walk back).  Dropout in inference is the same copy (y = x)
 * plus a mask filled with "true" (1 before opset 10).
 *
 * Elements are moved by size (1, 2, 4 or 8 bytes), so one kernel serves every
 * element type.  The copy first merges dimensions the view walks contiguously, then
 * cuts the work into blocks: rows are memcpy'd when the view is contiguous along its
 * last dimension, transposes go through small blocks (4x4 SSE2 shuffles inside), and
 * the blocks are spread over the session's thread pool. */
#include "internal.h"
#include "copy.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define CHUNK_BYTES ((int64_t)256 * 1024) /* a work item moves about this much */
#define SMALL_BYTES ((int64_t)1024 * 1024) /* plain copies below this run on one thread */
#define SMALL_TRANSPOSE ((int64_t)64 * 1024) /* transposes below this run on one thread */
#ifndef TILE_R_BYTES
#define TILE_R_BYTES 32 /* transpose blocks: this many bytes along the input's contiguous axis */
#endif
#ifndef TILE_C
#define TILE_C 32       /* ... by this many output columns (few cache lines per set, even at 2^k strides) */
#endif

/* n elements of es bytes from src (element stride `stride`, may be 0 or negative)
 * to contiguous dst. */
static void move_elems(char *dst, const char *src, int64_t n, int64_t stride, size_t es) {
    if (n <= 0) return;
    if (stride == 1) {
        memcpy(dst, src, (size_t)n * es);
        return;
    }
#define MOVE(T) { T *d = (T *)dst; const T *s = (const T *)src; for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride]; } break
    switch (es) {
    case 1: MOVE(uint8_t);
    case 2: MOVE(uint16_t);
    case 4: MOVE(uint32_t);
    case 8: MOVE(uint64_t);
    }
#undef MOVE
}

/* n elements of es bytes, all equal to the first es bytes of `pattern`. */
static void fill_elems(char *dst, int64_t n, const void *pattern, size_t es) {
    if (n <= 0) return;
#define FILL(T) { T v; memcpy(&v, pattern, sizeof v); T *d = (T *)dst; for (int64_t i = 0; i < n; ++i) d[i] = v; } break
    switch (es) {
    case 1: memset(dst, *(const uint8_t *)pattern, (size_t)n); break;
    case 2: FILL(uint16_t);
    case 4: FILL(uint32_t);
    case 8: FILL(uint64_t);
    }
#undef FILL
}

/* ---- the strided copy ------------------------------------------------------------ */

typedef struct copy_job {
    const char *src; /* the view's origin (element offsets from here may be negative) */
    char *dst;
    int64_t es;
    int32_t n_outer; /* dimensions walked outside the tile */
    int64_t outer_shape[MLRT_MAX_RANK], outer_in[MLRT_MAX_RANK], outer_out[MLRT_MAX_RANK];
    int64_t rows, cols;          /* the tile plane: a row dimension and the last dimension */
    int64_t in_rs, in_cs, out_rs; /* element strides (the output's column stride is 1) */
    int64_t row_block, col_block, n_rb, n_cb;
    int64_t tile_r, tile_c; /* > 0: a transpose, walked in tile_r x tile_c blocks */
} copy_job;

/* Scalar transpose of rows [r0, r1) x columns [c0, c1) (output contiguous along columns). */
static void transpose_scalar(const copy_job *j, int64_t in_off, int64_t out_off, int64_t r0, int64_t r1, int64_t c0,
                             int64_t c1) {
#define TILE(TY) {                                                                              \
        TY *d = (TY *)j->dst + out_off;                                                         \
        const TY *s = (const TY *)j->src + in_off;                                              \
        for (int64_t r = r0; r < r1; ++r) {                                                     \
            TY *dr = d + r * j->out_rs;                                                         \
            const TY *sr = s + r * j->in_rs;                                                    \
            for (int64_t c = c0; c < c1; ++c) dr[c] = sr[c * j->in_cs];                         \
        } } break
    switch (j->es) {
    case 1: TILE(uint8_t);
    case 2: TILE(uint16_t);
    case 4: TILE(uint32_t);
    case 8: TILE(uint64_t);
    }
#undef TILE
}

#if defined(__SSE2__)
/* 4x4 blocks of 4-byte and 2x2 blocks of 8-byte elements through SSE2 registers
 * (integer shuffles: bits move unchanged). Needs the input contiguous along rows. */
static int64_t transpose_simd(const copy_job *j, int64_t in_off, int64_t out_off, int64_t r0, int64_t r1, int64_t c0,
                              int64_t c1) {
    const int64_t cs = j->in_cs, rs = j->out_rs;
    if (j->in_rs != 1) return c0;
    if (j->es == 4) {
        int64_t c = c0;
        for (; c + 4 <= c1; c += 4) {
            int64_t r = r0;
            for (; r + 4 <= r1; r += 4) {
                const uint32_t *s = (const uint32_t *)j->src + in_off + r + c * cs;
                uint32_t *d = (uint32_t *)j->dst + out_off + r * rs + c;
                __m128i a0 = _mm_loadu_si128((const __m128i *)s), a1 = _mm_loadu_si128((const __m128i *)(s + cs));
                __m128i a2 = _mm_loadu_si128((const __m128i *)(s + 2 * cs)), a3 = _mm_loadu_si128((const __m128i *)(s + 3 * cs));
                __m128i t0 = _mm_unpacklo_epi32(a0, a1), t1 = _mm_unpacklo_epi32(a2, a3);
                __m128i t2 = _mm_unpackhi_epi32(a0, a1), t3 = _mm_unpackhi_epi32(a2, a3);
                _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi64(t0, t1));
                _mm_storeu_si128((__m128i *)(d + rs), _mm_unpackhi_epi64(t0, t1));
                _mm_storeu_si128((__m128i *)(d + 2 * rs), _mm_unpacklo_epi64(t2, t3));
                _mm_storeu_si128((__m128i *)(d + 3 * rs), _mm_unpackhi_epi64(t2, t3));
            }
            if (r < r1) transpose_scalar(j, in_off, out_off, r, r1, c, c + 4);
        }
        return c;
    }
    if (j->es == 8) {
        int64_t c = c0;
        for (; c + 2 <= c1; c += 2) {
            int64_t r = r0;
            for (; r + 2 <= r1; r += 2) {
                const uint64_t *s = (const uint64_t *)j->src + in_off + r + c * cs;
                uint64_t *d = (uint64_t *)j->dst + out_off + r * rs + c;
                __m128i a0 = _mm_loadu_si128((const __m128i *)s), a1 = _mm_loadu_si128((const __m128i *)(s + cs));
                _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi64(a0, a1));
                _mm_storeu_si128((__m128i *)(d + rs), _mm_unpackhi_epi64(a0, a1));
            }
            if (r < r1) transpose_scalar(j, in_off, out_off, r, r1, c, c + 2);
        }
        return c;
    }
    return c0;
}
#endif

static void copy_block(const copy_job *j, int64_t in_off, int64_t out_off, int64_t r0, int64_t r1, int64_t c0,
                       int64_t c1) {
    const int64_t es = j->es;
    if (j->tile_r > 0) {
        const int64_t TR = j->tile_r, TC = j->tile_c;
        for (int64_t rr = r0; rr < r1; rr += TR) {
            int64_t re = rr + TR < r1 ? rr + TR : r1;
            for (int64_t cc = c0; cc < c1; cc += TC) {
                int64_t ce = cc + TC < c1 ? cc + TC : c1, done = cc;
#if defined(__SSE2__)
                done = transpose_simd(j, in_off, out_off, rr, re, cc, ce);
#endif
                if (done < ce) transpose_scalar(j, in_off, out_off, rr, re, done, ce);
            }
        }
        return;
    }
    if (j->in_cs == 0) {
        for (int64_t r = r0; r < r1; ++r)
            fill_elems(j->dst + (out_off + r * j->out_rs + c0) * es, c1 - c0, j->src + (in_off + r * j->in_rs) * es,
                       (size_t)es);
        return;
    }
    for (int64_t r = r0; r < r1; ++r)
        move_elems(j->dst + (out_off + r * j->out_rs + c0) * es, j->src + (in_off + r * j->in_rs + c0 * j->in_cs) * es,
                   c1 - c0, j->in_cs, (size_t)es);
}

/* Work items [begin, end) in (outer index, row block, column block) order. */
static void copy_range(void *arg, int64_t begin, int64_t end) {
    const copy_job *j = arg;
    int64_t idx[MLRT_MAX_RANK] = {0};
    int64_t t = begin;
    int64_t cb = t % j->n_cb;
    t /= j->n_cb;
    int64_t rb = t % j->n_rb;
    t /= j->n_rb;
    int64_t in_off = 0, out_off = 0;
    for (int32_t d = j->n_outer - 1; d >= 0; --d) {
        idx[d] = t % j->outer_shape[d];
        t /= j->outer_shape[d];
        in_off += idx[d] * j->outer_in[d];
        out_off += idx[d] * j->outer_out[d];
    }
    for (int64_t w = begin; w < end; ++w) {
        int64_t r0 = rb * j->row_block, r1 = r0 + j->row_block < j->rows ? r0 + j->row_block : j->rows;
        int64_t c0 = cb * j->col_block, c1 = c0 + j->col_block < j->cols ? c0 + j->col_block : j->cols;
        copy_block(j, in_off, out_off, r0, r1, c0, c1);
        if (++cb < j->n_cb) continue;
        cb = 0;
        if (++rb < j->n_rb) continue;
        rb = 0;
        for (int32_t d = j->n_outer - 1; d >= 0; --d) {
            in_off += j->outer_in[d];
            out_off += j->outer_out[d];
            if (++idx[d] < j->outer_shape[d]) break;
            in_off -= idx[d] * j->outer_in[d];
            out_off -= idx[d] * j->outer_out[d];
            idx[d] = 0;
        }
    }
}

/* Copy the view (shape, strides over `src`) into contiguous `dst`. */
static void copy_view(const mlrt_context *ctx, const int64_t *shape, const int64_t *strides, int32_t rank,
                      const char *src, char *dst, size_t es) {
    int64_t sh[MLRT_MAX_RANK], st[MLRT_MAX_RANK];
    int32_t r = 0;
    int64_t numel = 1;
    for (int32_t d = 0; d < rank; ++d) {
        if (shape[d] == 0) return;
        numel *= shape[d];
        if (shape[d] == 1) continue;
        if (r > 0 && st[r - 1] == strides[d] * shape[d]) {
            sh[r - 1] *= shape[d];
            st[r - 1] = strides[d];
        } else {
            sh[r] = shape[d];
            st[r] = strides[d];
            ++r;
        }
    }
    if (r == 0) {
        sh[0] = 1;
        st[0] = 1;
        r = 1;
    }
    copy_job j = {.src = src, .dst = dst, .es = (int64_t)es};
    const int32_t last = r - 1;
    int64_t ost[MLRT_MAX_RANK], acc = 1;
    for (int32_t d = last; d >= 0; --d) {
        ost[d] = acc;
        acc *= sh[d];
    }
    j.cols = sh[last];
    j.in_cs = st[last];
    int32_t row_dim = -1;
    if (j.in_cs != 1 && j.in_cs != 0) {
        for (int32_t k = last - 1; k >= 0; --k)
            if (st[k] == 1 || st[k] == -1) {
                row_dim = k;
                j.tile_r = TILE_R_BYTES / (int64_t)es;
                j.tile_c = TILE_C;
                if (j.cols < 4) j.tile_r = 1024; /* e.g. CHW -> HWC with 3 channels: long thin blocks */
                break;
            }
    }
    if (row_dim < 0 && r >= 2) row_dim = last - 1;
    if (row_dim >= 0) {
        j.rows = sh[row_dim];
        j.in_rs = st[row_dim];
        j.out_rs = ost[row_dim];
    } else {
        j.rows = 1;
    }
    int64_t n_outer_total = 1;
    for (int32_t d = 0; d < last; ++d) {
        if (d == row_dim) continue;
        j.outer_shape[j.n_outer] = sh[d];
        j.outer_in[j.n_outer] = st[d];
        j.outer_out[j.n_outer] = ost[d];
        ++j.n_outer;
        n_outer_total *= sh[d];
    }
    if (j.tile_r > 0) {
        j.col_block = j.cols <= 256 ? j.cols : 256;
        int64_t rb = CHUNK_BYTES / (j.col_block * j.es) / j.tile_r * j.tile_r;
        j.row_block = rb < j.tile_r ? j.tile_r : rb;
    } else {
        j.col_block = j.cols * j.es <= CHUNK_BYTES ? j.cols : CHUNK_BYTES / j.es;
        int64_t rb = CHUNK_BYTES / (j.col_block * j.es);
        j.row_block = rb < 1 ? 1 : rb;
    }
    if (j.row_block > j.rows) j.row_block = j.rows;
    j.n_rb = (j.rows + j.row_block - 1) / j.row_block;
    j.n_cb = (j.cols + j.col_block - 1) / j.col_block;
    int64_t items = n_outer_total * j.n_rb * j.n_cb;
    int64_t item_bytes = j.row_block * j.col_block * j.es;
    int64_t small = j.tile_r > 0 ? SMALL_TRANSPOSE : SMALL_BYTES;
    int64_t grain = numel * (int64_t)es < small ? items : small / item_bytes + 1;
    mlrt_parallel_for(ctx, items, grain, copy_range, &j);
}

/* Every element the view reaches must lie in [0, src_numel). */
static int check_view(const mlrt_tensor *v, int64_t src_numel) {
    if (mlrt_numel(v) == 0) return MLRT_OK;
    int64_t hi = 0;
    for (int32_t d = 0; d < v->rank; ++d) {
        MLRT_CHECK(v->strides[d] >= 0, "the input view has a negative stride");
        hi += (v->shape[d] - 1) * v->strides[d];
    }
    MLRT_CHECK(hi < src_numel, "the input view reaches element %lld of a %lld-element buffer", (long long)hi,
               (long long)src_numel);
    return MLRT_OK;
}

static int k_copy(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                  const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_copy_params, p, params, params_size);
    MLRT_CHECK(n_in >= 1 && n_out >= 1 && mlrt_present(&in[0]) && mlrt_present(&out[0]), "expects an input and an output");
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(x->dtype == y->dtype, "input type %d and output type %d differ", x->dtype, y->dtype);
    size_t es = mlrt_dtype_size(x->dtype);
    if (!es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(mlrt_numel(x) == mlrt_numel(y), "input view has %lld elements, output %lld",
               (long long)mlrt_numel(x), (long long)mlrt_numel(y));
    MLRT_CHECK(mlrt_is_contiguous(y), "output must be contiguous");
    int status = check_view(x, p->src_numel);
    if (status) return status;
    if (mlrt_numel(y) == 0) return MLRT_OK;
    if (x->data == y->data && mlrt_is_contiguous(x)) return MLRT_OK; /* a plan's reshape in place: same bytes */
    copy_view(ctx, x->shape, x->strides, x->rank, x->data, y->data, es);
    return MLRT_OK;
}

MLRT_KERNEL(identity, "Identity", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_copy);
MLRT_KERNEL(reshape, "Reshape", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_copy);
MLRT_KERNEL(flatten, "Flatten", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_copy);
MLRT_KERNEL(squeeze, "Squeeze", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_copy);
MLRT_KERNEL(unsqueeze, "Unsqueeze", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_copy);
MLRT_KERNEL(transpose, "Transpose", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_copy);
MLRT_KERNEL(expand, "Expand", "", 8, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_copy);
MLRT_KERNEL(depth_to_space, "DepthToSpace", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_copy);
MLRT_KERNEL(space_to_depth, "SpaceToDepth", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_copy);

/* ---- Slice: the view is built here from starts and steps, so negative steps need no
 * negative strides in the plan's descriptors ----------------------------------------- */

static int k_slice(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                   const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_slice_params, p, params, params_size);
    size_t es;
    int status = mlrt_check_movement(in, n_in, out, n_out, &es);
    if (status != MLRT_OK) return status;
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    if (mlrt_numel(y) == 0) return MLRT_OK;
    int64_t strides[MLRT_MAX_RANK], offset = 0, acc = 1;
    for (int32_t d = x->rank - 1; d >= 0; --d) {
        int64_t first = p->starts[d], step = p->steps[d], n = y->shape[d], last = first + (n - 1) * step;
        MLRT_CHECK(step != 0 && first >= 0 && first < x->shape[d] && last >= 0 && last < x->shape[d],
                   "axis %d: %lld reads from %lld step %lld leave [0, %lld)", d, (long long)n, (long long)first,
                   (long long)step, (long long)x->shape[d]);
        strides[d] = acc * step;
        offset += first * acc;
        acc *= x->shape[d];
    }
    copy_view(ctx, y->shape, strides, y->rank, (const char *)x->data + offset * (int64_t)es, y->data, es);
    return MLRT_OK;
}

MLRT_KERNEL(slice, "Slice", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_slice);

/* ---- Dropout (inference): y = x, mask = all "true" ----------------------------- */

typedef struct fill_job { char *dst; int64_t pattern; size_t es; } fill_job;

static void fill_range(void *arg, int64_t begin, int64_t end) {
    const fill_job *j = arg;
    fill_elems(j->dst + begin * (int64_t)j->es, end - begin, &j->pattern, j->es);
}

static int k_dropout(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                     const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_dropout_params, p, params, params_size);
    MLRT_CHECK(n_in >= 1 && n_out >= 1 && mlrt_present(&in[0]) && mlrt_present(&out[0]), "expects an input and an output");
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    size_t es = mlrt_dtype_size(x->dtype);
    if (!es) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", x->dtype);
    MLRT_CHECK(x->dtype == y->dtype && mlrt_same_shape(x, y), "output must match the input");
    MLRT_CHECK(mlrt_is_contiguous(x) && mlrt_is_contiguous(y), "needs contiguous tensors");
    int64_t n = mlrt_numel(x);
    if (n > 0 && x->data != y->data) {
        int64_t shape[1] = {n}, strides[1] = {1};
        copy_view(ctx, shape, strides, 1, x->data, y->data, es);
    }
    if (n_out >= 2 && mlrt_present(&out[1])) {
        mlrt_tensor *m = &out[1];
        size_t ms = mlrt_dtype_size(m->dtype);
        MLRT_CHECK(ms > 0 && mlrt_numel(m) == n && mlrt_is_contiguous(m), "mask must have the input's shape");
        fill_job job = {m->data, p->mask_bits, ms};
        mlrt_parallel_for(ctx, n, SMALL_BYTES, fill_range, &job);
    }
    return MLRT_OK;
}

MLRT_KERNEL(dropout, "Dropout", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL | MLRT_MASK_LOWP, k_dropout);

/* pad.c -- Pad: constant, reflect, edge and wrap modes, negative pads crop.
 *
 * The Python semantics resolve pads (attribute or input, optional axes) into, per
 * axis, the run of input elements kept and how many padding positions precede it.
 * Each output row (the last axis) is its padding on the left, one memcpy of the
 * kept input, and its padding on the right; a row whose outer position falls in
 * the padding of constant mode is the constant throughout. */
#include "internal.h"
#include "pad.h"

typedef struct pad_job {
    const mlrt_pad_params *p;
    const char *src;
    char *dst;
    int64_t es, value;
    int32_t rank;
    int64_t oshape[MLRT_MAX_RANK], istride[MLRT_MAX_RANK];
} pad_job;

/* Input index for output index i along axis d, or -1 for the constant. */
static int64_t pad_map(const mlrt_pad_params *p, int32_t d, int64_t i) {
    int64_t len = p->src_len[d], j = i - p->pad_begin[d];
    if (j < 0 || j >= len) {
        switch (p->mode) {
        case MLRT_PAD_EDGE: j = j < 0 ? 0 : len - 1; break;
        case MLRT_PAD_WRAP: j = ((j % len) + len) % len; break;
        case MLRT_PAD_REFLECT:
            if (len == 1) {
                j = 0;
            } else {
                int64_t period = 2 * (len - 1);
                j = ((j % period) + period) % period;
                if (j >= len) j = period - j;
            }
            break;
        default: return -1;
        }
    }
    return p->src_start[d] + j;
}

static inline void put(char *dst, const void *src, int64_t es) {
    switch (es) {
    case 1: *(uint8_t *)dst = *(const uint8_t *)src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    default: memcpy(dst, src, 8); break;
    }
}

static void pad_rows(void *arg, int64_t begin, int64_t end) {
    const pad_job *j = arg;
    const mlrt_pad_params *p = j->p;
    const int32_t last = j->rank - 1;
    const int64_t cols = j->oshape[last], es = j->es;
    for (int64_t r = begin; r < end; ++r) {
        char *row = j->dst + r * cols * es;
        int64_t rem = r, src = 0;
        bool constant_row = false;
        for (int32_t d = last - 1; d >= 0; --d) {
            int64_t i = rem % j->oshape[d], s = pad_map(p, d, i);
            rem /= j->oshape[d];
            if (s < 0) constant_row = true;
            else src += s * j->istride[d];
        }
        if (constant_row) {
            for (int64_t c = 0; c < cols; ++c) put(row + c * es, &j->value, es);
            continue;
        }
        const char *in = j->src + src * es;
        int64_t lo = p->pad_begin[last], hi = lo + p->src_len[last];
        if (hi > cols) hi = cols;
        for (int64_t c = 0; c < lo && c < cols; ++c) {
            int64_t s = pad_map(p, last, c);
            put(row + c * es, s < 0 ? (const char *)&j->value : in + s * es, es);
        }
        if (hi > lo) memcpy(row + lo * es, in + p->src_start[last] * es, (size_t)((hi - lo) * es));
        for (int64_t c = hi > lo ? hi : lo; c < cols; ++c) {
            int64_t s = pad_map(p, last, c);
            put(row + c * es, s < 0 ? (const char *)&j->value : in + s * es, es);
        }
    }
}

static int k_pad(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                 const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_pad_params, p, params, params_size);
    size_t es;
    int status = mlrt_check_movement(in, n_in, out, n_out, &es);
    if (status != MLRT_OK) return status;
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(p->mode >= MLRT_PAD_CONSTANT && p->mode <= MLRT_PAD_WRAP, "unknown mode %lld", (long long)p->mode);
    pad_job job = {.p = p, .src = x->data, .dst = y->data, .es = (int64_t)es, .value = p->value_bits, .rank = x->rank};
    if (n_in >= 3 && mlrt_present(&in[2]) && mlrt_numel(&in[2]) > 0) {
        MLRT_CHECK(in[2].dtype == x->dtype && mlrt_numel(&in[2]) == 1, "constant_value must be one element of the input's type");
        job.value = 0;
        memcpy(&job.value, in[2].data, es);
    }
    int64_t acc = 1;
    for (int32_t d = x->rank - 1; d >= 0; --d) {
        int64_t s = p->src_start[d], n = p->src_len[d], b = p->pad_begin[d];
        MLRT_CHECK(s >= 0 && n >= 0 && b >= 0 && s + n <= x->shape[d] && b + n <= y->shape[d],
                   "pads for axis %d do not fit input %lld and output %lld", d, (long long)x->shape[d], (long long)y->shape[d]);
        MLRT_CHECK(n > 0 || p->mode == MLRT_PAD_CONSTANT || y->shape[d] == 0,
                   "axis %d keeps no input elements to pad from in this mode", d);
        job.oshape[d] = y->shape[d];
        job.istride[d] = acc;
        acc *= x->shape[d];
    }
    int64_t total = mlrt_numel(y);
    if (total == 0) return MLRT_OK;
    if (x->rank == 0) {
        memcpy(y->data, x->data, es);
        return MLRT_OK;
    }
    int64_t cols = y->shape[y->rank - 1];
    mlrt_parallel_for(ctx, total / cols, 16384 / cols + 1, pad_rows, &job);
    return MLRT_OK;
}

MLRT_KERNEL(pad, "Pad", "", 1, MLRT_OPSET_MAX, MLRT_MASK_ALL, k_pad);

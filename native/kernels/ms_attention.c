/* ms_attention.c -- com.microsoft RotaryEmbedding, Attention, MultiHeadAttention,
 * GroupQueryAttention and EmbedLayerNormalization (as onnxruntime's CPU kernels).
 *
 *   RotaryEmbedding     the ai.onnx RotaryEmbedding kernel (transformer.c) on the
 *                       input's per-head view; a one-element position_ids p reads
 *                       cache rows p, p + 1, ... (a strided view of the tables)
 *   Attention           qkv = input . weights + bias (mlrt_sgemm) into scratch, then
 *                       the ai.onnx Attention kernel (attention.c) on per-head views
 *                       of qkv, past (2, B, N, P, D) split into key and value views
 *   MultiHeadAttention  Q, K, V (+ bias, copied into scratch when given) likewise
 *   GroupQueryAttention the Attention kernel with kv_heads < heads, causal over a
 *                       past of seqlens_k + 1 - q_len keys (one length for the batch)
 *   EmbedLayerNormalization  word + position (+ segment) embedding rows, then a layer
 *                       norm over hidden; mask_index = count of nonzero mask values
 *
 * Masks follow onnxruntime: mask_index adds mask_filter_value (not -inf) to the
 * masked scores and unidirectional drops later keys from the softmax, built here as
 * an additive float mask [B, 1 or N, Sq, total] (attention_bias added in) that the
 * Attention kernel reads.
 * Everything is float32, as onnxruntime's CPU kernels of these operators. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "gemm.h"
#include "attention.h"
#include "transformer.h"
#include "ms_attention.h"
#include "normalize.h"

static mlrt_tensor absent(void) {
    mlrt_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = MLRT_UNDEFINED;
    return t;
}

/* a float32 view of `data`: rank-d shape and element strides */
static mlrt_tensor fview(void *data, int32_t rank, const int64_t *shape, const int64_t *strides) {
    mlrt_tensor t = absent();
    t.dtype = MLRT_FLOAT;
    t.rank = rank;
    for (int32_t d = 0; d < rank; ++d) { t.shape[d] = shape[d]; t.strides[d] = strides[d]; }
    t.data = data;
    return t;
}

static bool dims_are(const mlrt_tensor *t, int32_t rank, const int64_t *shape) {
    if (t->rank != rank) return false;
    for (int32_t d = 0; d < rank; ++d)
        if (t->shape[d] != shape[d]) return false;
    return true;
}

static bool plain_f32(const mlrt_tensor *t, int32_t rank, const int64_t *shape) {
    return t->dtype == MLRT_FLOAT && mlrt_is_contiguous(t) && dims_are(t, rank, shape);
}

/* -- RotaryEmbedding ------------------------------------------------------------------------------ */

static int k_ms_rotary(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                       int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ms_rotary_params, p, params, params_size);
    MLRT_CHECK(n_in == 4 && n_out == 1, "expects 4 inputs and 1 output");
    const mlrt_tensor *x = &in[0], *pos = &in[1], *c = &in[2], *s = &in[3];
    MLRT_CHECK(x->rank == 4 && c->rank == 2 && s->rank == 2 && c->shape[0] == s->shape[0] &&
                   c->shape[1] == s->shape[1] && pos->dtype == MLRT_INT64,
               "needs a 4-D input view, 2-D caches and int64 position_ids");
    int64_t B = x->shape[0], S = x->shape[1], rows = c->shape[0];
    mlrt_rotary_params q = {.rotary_dim = p->rotary_dim, .interleaved = p->interleaved, .has_position_ids = 1};
    mlrt_tensor ins[4] = {*x, *c, *s, *pos};
    if (p->offset_form) {
        MLRT_CHECK(mlrt_numel(pos) == 1, "position_ids of the offset form holds one value");
        int64_t start = ((const int64_t *)pos->data)[0];
        if (start < 0 || start > rows || rows - start < S)
            return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "positions %lld to %lld are outside the caches' %lld rows",
                             (long long)start, (long long)(start + S - 1), (long long)rows);
        size_t es = mlrt_dtype_size(c->dtype);
        for (int k = 1; k <= 2; ++k) {  /* [B, S, half] views starting at row `start` */
            const mlrt_tensor *t = k == 1 ? c : s;
            mlrt_tensor v = *t;
            v.rank = 3;
            v.shape[0] = B; v.shape[1] = S; v.shape[2] = t->shape[1];
            v.strides[0] = 0; v.strides[1] = t->strides[0]; v.strides[2] = t->strides[1];
            v.data = (char *)t->data + (size_t)(start * t->strides[0]) * es;
            ins[k] = v;
        }
        q.has_position_ids = 0;
    } else {
        MLRT_CHECK(pos->rank == 2 && pos->shape[0] == B && pos->shape[1] == S, "position_ids must be [batch, seq]");
    }
    int32_t k = mlrt_kernel_find("", "RotaryEmbedding", 23, x->dtype);
    if (k < 0) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "no RotaryEmbedding kernel for element type %d", x->dtype);
    return mlrt_kernel_run(k, ctx->pool, ins, q.has_position_ids ? 4 : 3, out, 1, &q, sizeof q);
}

MLRT_KERNEL(ms_rotary, "RotaryEmbedding", "com.microsoft", 1, MLRT_OPSET_MAX,
            MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16), k_ms_rotary);

/* -- the shared attention core ---------------------------------------------------------------------- */

/* The additive mask [B, H, Sq, L] (H = heads with attention_bias, else 1) from mask_index
 * (int32; NULL when none), unidirectional and attention_bias ([B or 1, N or 1, Sq, L]).
 * NULL in *out when nothing masks; returns an error status. */
static int build_mask(const mlrt_ms_attention_params *p, const mlrt_tensor *mask, const mlrt_tensor *abias,
                      float **out, int64_t *heads) {
    int64_t B = p->batch, S = p->q_len, L = p->past_len + p->kv_len, N = p->heads;
    *out = NULL;
    *heads = abias ? N : 1;
    if (!mask && !abias && !p->unidirectional) return MLRT_OK;
    if (mask) {
        int64_t want[3] = {B, S, L};
        bool ok = mask->dtype == MLRT_INT32 && mlrt_is_contiguous(mask);
        switch (p->mask_kind) {
        case MLRT_MS_MASK_END: ok = ok && mask->rank == 1 && mask->shape[0] == B; break;
        case MLRT_MS_MASK_END_START: ok = ok && mask->rank == 1 && mask->shape[0] == 2 * B; break;
        case MLRT_MS_MASK_RAW_2D: want[1] = L; ok = ok && dims_are(mask, 2, want); break;
        case MLRT_MS_MASK_RAW_3D: ok = ok && dims_are(mask, 3, want); break;
        default: ok = false;
        }
        MLRT_CHECK(ok, "mask_index does not match its form %lld", (long long)p->mask_kind);
    }
    if (abias)
        MLRT_CHECK(abias->dtype == MLRT_FLOAT && abias->rank == 4 && (abias->shape[0] == B || abias->shape[0] == 1) &&
                       (abias->shape[1] == N || abias->shape[1] == 1) && abias->shape[2] == S && abias->shape[3] == L &&
                       mlrt_is_contiguous(abias),
                   "attention_bias must be [batch or 1, heads or 1, %lld, %lld]", (long long)S, (long long)L);
    int64_t H = *heads;
    float *m = malloc((size_t)(B * H * S * L + 1) * sizeof(float));
    if (!m) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "out of memory for the attention mask");
    const float f = (float)p->mask_filter_value;
    const int32_t *mi = mask ? mask->data : NULL;
    for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < S; ++i) {
            float *row = m + (b * H * S + i) * L;  /* head 0 */
            for (int64_t j = 0; j < L; ++j) {
                bool keep = true;
                switch (mask ? p->mask_kind : MLRT_MS_MASK_NONE) {
                case MLRT_MS_MASK_END: keep = j < mi[b]; break;
                case MLRT_MS_MASK_END_START: keep = j < mi[b] && j >= mi[B + b]; break;
                case MLRT_MS_MASK_RAW_2D: keep = mi[b * L + j] > 0; break;
                case MLRT_MS_MASK_RAW_3D: keep = mi[(b * S + i) * L + j] > 0; break;
                }
                row[j] = keep ? 0.0f : f;
                if (p->unidirectional && j > p->past_len + i) row[j] = -INFINITY;  /* causal: dropped, not filtered */
            }
            for (int64_t h = H - 1; h >= 0; --h) {
                float *dst = m + ((b * H + h) * S + i) * L;
                if (h) memcpy(dst, row, (size_t)L * sizeof(float));
                if (abias) {
                    const float *ab = (const float *)abias->data +
                                      (((abias->shape[0] == 1 ? 0 : b) * abias->shape[1] + (abias->shape[1] == 1 ? 0 : h)) * S + i) * L;
                    for (int64_t j = 0; j < L; ++j) dst[j] += ab[j];
                }
            }
        }
    *out = m;
    return MLRT_OK;
}

/* Runs the ai.onnx Attention kernel on q [B, N, Sq, D], k / v [B, Nkv, Skv, D / Dv] views,
 * past / present key and value views (dtype MLRT_UNDEFINED when absent), the additive mask
 * (NULL: none) and y [B, Sq, N * Dv]. */
static int attention_core(const mlrt_context *ctx, const mlrt_ms_attention_params *p, mlrt_tensor q, mlrt_tensor k,
                          mlrt_tensor v, const float *mask, int64_t mask_heads, mlrt_tensor pk, mlrt_tensor pv,
                          mlrt_tensor *y, mlrt_tensor prk, mlrt_tensor prv, bool causal) {
    int64_t B = p->batch, S = p->q_len, L = p->past_len + p->kv_len;
    mlrt_tensor ins[6] = {q, k, v, absent(), pk, pv};
    if (mask) {
        int64_t shape[4] = {B, p->heads, S, L}, strides[4] = {mask_heads * S * L, mask_heads > 1 ? S * L : 0, L, 1};
        ins[3] = fview((void *)mask, 4, shape, strides);
    }
    mlrt_tensor outs[3] = {*y, prk, prv};
    float ss = (float)sqrt(p->scale);
    mlrt_attention_params a = {.batch = B, .q_heads = p->heads, .kv_heads = p->kv_heads, .q_len = S,
                               .kv_len = p->kv_len, .past_len = p->past_len, .head_size = p->head_size,
                               .v_head_size = p->v_head_size, .is_causal = causal, .left_window = p->local_window,
                               .right_window = -1, .qk_mode = 0, .softmax_type = MLRT_FLOAT, .scale_sqrt = ss,
                               .softcap = p->softcap};
    int32_t kid = mlrt_kernel_find("", "Attention", 23, MLRT_FLOAT);
    if (kid < 0) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "no Attention kernel");
    return mlrt_kernel_run(kid, ctx->pool, ins, 6, outs, 3, &a, sizeof a);
}

/* [B, S, heads * size] at `data` (row stride ld) seen as [B, heads, S, size] */
static mlrt_tensor head_view(void *data, int64_t B, int64_t heads, int64_t S, int64_t size, int64_t ld) {
    int64_t shape[4] = {B, heads, S, size}, strides[4] = {S * ld, size, ld, 1};
    return fview(data, 4, shape, strides);
}

static bool sizes_ok(const mlrt_ms_attention_params *p) {
    return p->batch >= 0 && p->q_len >= 0 && p->kv_len >= 0 && p->past_len >= 0 && p->heads > 0 && p->kv_heads > 0 &&
           p->heads % p->kv_heads == 0 && p->head_size > 0 && p->v_head_size > 0 && p->in_hidden >= 0;
}

/* -- Attention: packed QKV weights -------------------------------------------------------------------- */

/* inputs: input, weights, bias, mask_index, past, attention_bias; outputs: output, present */
static int k_ms_attention(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                          int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ms_attention_params, p, params, params_size);
    MLRT_CHECK(n_in >= 2 && n_in <= 6 && n_out >= 1 && n_out <= 2, "expects 2 to 6 inputs and 1 or 2 outputs");
    MLRT_CHECK(sizes_ok(p) && p->kv_heads == p->heads && p->kv_len == p->q_len, "bad sizes");
    int64_t B = p->batch, S = p->q_len, N = p->heads, D = p->head_size, Dv = p->v_head_size, P = p->past_len;
    int64_t Din = p->in_hidden, H = N * D, W = 2 * H + N * Dv, L = P + S;
    const mlrt_tensor *bias = n_in > 2 && mlrt_present(&in[2]) ? &in[2] : NULL;
    const mlrt_tensor *mask = n_in > 3 && mlrt_present(&in[3]) ? &in[3] : NULL;
    const mlrt_tensor *past = n_in > 4 && mlrt_present(&in[4]) ? &in[4] : NULL;
    const mlrt_tensor *abias = n_in > 5 && mlrt_present(&in[5]) ? &in[5] : NULL;
    mlrt_tensor *pres = n_out > 1 && mlrt_present(&out[1]) ? &out[1] : NULL;
    int64_t xs[3] = {B, S, Din}, ws[2] = {Din, W}, ys[3] = {B, S, N * Dv};
    int64_t pst[5] = {2, B, N, P, D}, prs[5] = {2, B, N, L, D};
    MLRT_CHECK(plain_f32(&in[0], 3, xs) && plain_f32(&in[1], 2, ws) && (!bias || plain_f32(bias, 1, &W)),
               "input, weights and bias must be float32 [%lld, %lld, %lld], [%lld, %lld], [%lld]", (long long)B,
               (long long)S, (long long)Din, (long long)Din, (long long)W, (long long)W);
    MLRT_CHECK(plain_f32(&out[0], 3, ys), "output must be float32 [%lld, %lld, %lld]", (long long)B, (long long)S,
               (long long)(N * Dv));
    MLRT_CHECK(past ? plain_f32(past, 5, pst) && D == Dv : P == 0, "past does not match the sizes");
    MLRT_CHECK(!pres || (plain_f32(pres, 5, prs) && D == Dv), "present does not match the sizes");
    float *qkv = malloc((size_t)(B * S * W + 1) * sizeof(float));
    if (!qkv) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "out of memory for Q, K, V");
    int rc = MLRT_OK;
    if (B * S > 0) {
        if (bias) {
            const float *bs = bias->data;
            for (int64_t r = 0; r < B * S; ++r) memcpy(qkv + r * W, bs, (size_t)W * sizeof(float));
        }
        rc = mlrt_sgemm(ctx, false, false, B * S, W, Din, 1.0f, in[0].data, Din > 0 ? Din : 1, in[1].data, W,
                        bias ? 1.0f : 0.0f, qkv, W);
    }
    float *m = NULL;
    int64_t mh = 1;
    if (rc == MLRT_OK) rc = build_mask(p, mask, abias, &m, &mh);
    if (rc == MLRT_OK) {
        mlrt_tensor pk = absent(), pv = absent(), prk = absent(), prv = absent();
        int64_t s4[4] = {B, N, P, D}, c4[4] = {N * P * D, P * D, D, 1};
        int64_t l4[4] = {B, N, L, D}, lc4[4] = {N * L * D, L * D, D, 1};
        if (past) {
            pk = fview(past->data, 4, s4, c4);
            pv = fview((float *)past->data + B * N * P * D, 4, s4, c4);
        }
        if (pres) {
            prk = fview(pres->data, 4, l4, lc4);
            prv = fview((float *)pres->data + B * N * L * D, 4, l4, lc4);
        }
        rc = attention_core(ctx, p, head_view(qkv, B, N, S, D, W), head_view(qkv + H, B, N, S, D, W),
                            head_view(qkv + 2 * H, B, N, S, Dv, W), m, mh, pk, pv, &out[0], prk, prv, false);
    }
    free(m);
    free(qkv);
    return rc;
}

MLRT_KERNEL(ms_attention, "Attention", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_BIT(MLRT_FLOAT), k_ms_attention);

/* -- MultiHeadAttention: separate Q, K, V --------------------------------------------------------------- */

/* inputs: query, key, value, bias, key_padding_mask, attention_bias, past_key, past_value;
 * outputs: output, present_key, present_value */
static int k_ms_mha(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ms_attention_params, p, params, params_size);
    MLRT_CHECK(n_in >= 3 && n_in <= 8 && n_out >= 1 && n_out <= 3, "expects 3 to 8 inputs and 1 to 3 outputs");
    MLRT_CHECK(sizes_ok(p) && p->kv_heads == p->heads, "bad sizes");
    int64_t B = p->batch, S = p->q_len, Skv = p->kv_len, N = p->heads, D = p->head_size, Dv = p->v_head_size;
    int64_t P = p->past_len, L = P + Skv, H = N * D, Hv = N * Dv;
    const mlrt_tensor *opt[8];
    for (int i = 3; i < 8; ++i) opt[i] = n_in > i && mlrt_present(&in[i]) ? &in[i] : NULL;
    const mlrt_tensor *bias = opt[3], *mask = opt[4], *abias = opt[5], *past_k = opt[6], *past_v = opt[7];
    mlrt_tensor *prk_t = n_out > 1 && mlrt_present(&out[1]) ? &out[1] : NULL;
    mlrt_tensor *prv_t = n_out > 2 && mlrt_present(&out[2]) ? &out[2] : NULL;
    int64_t qs[3] = {B, S, H}, ks[3] = {B, Skv, H}, vs[3] = {B, Skv, Hv}, ys[3] = {B, S, Hv}, bw = 2 * H + Hv;
    int64_t pks[4] = {B, N, P, D}, pvs[4] = {B, N, P, Dv}, rks[4] = {B, N, L, D}, rvs[4] = {B, N, L, Dv};
    MLRT_CHECK(plain_f32(&in[0], 3, qs) && plain_f32(&in[1], 3, ks) && plain_f32(&in[2], 3, vs),
               "query, key, value must be float32 [B, S, N * head size] tensors matching the sizes");
    MLRT_CHECK(!bias || plain_f32(bias, 1, &bw), "bias must be float32 [%lld]", (long long)bw);
    MLRT_CHECK(plain_f32(&out[0], 3, ys), "output does not match the sizes");
    MLRT_CHECK(!past_k == !past_v && (past_k ? plain_f32(past_k, 4, pks) && plain_f32(past_v, 4, pvs) : P == 0),
               "past_key / past_value do not match the sizes");
    MLRT_CHECK((!prk_t || plain_f32(prk_t, 4, rks)) && (!prv_t || plain_f32(prv_t, 4, rvs)),
               "present_key / present_value do not match the sizes");
    float *scratch = NULL;
    const float *q = in[0].data, *k = in[1].data, *v = in[2].data;
    if (bias) {
        int64_t nq = B * S * H, nk = B * Skv * H, nv = B * Skv * Hv;
        scratch = malloc((size_t)(nq + nk + nv + 1) * sizeof(float));
        if (!scratch) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "out of memory for Q, K, V");
        const float *bs = bias->data;
        float *sq = scratch, *sk = sq + nq, *sv = sk + nk;
        for (int64_t i = 0; i < nq; ++i) sq[i] = q[i] + bs[i % H];
        for (int64_t i = 0; i < nk; ++i) sk[i] = k[i] + bs[H + i % H];
        for (int64_t i = 0; i < nv; ++i) sv[i] = v[i] + bs[2 * H + i % Hv];
        q = sq; k = sk; v = sv;
    }
    float *m = NULL;
    int64_t mh = 1;
    int rc = build_mask(p, mask, abias, &m, &mh);
    if (rc == MLRT_OK)
        rc = attention_core(ctx, p, head_view((void *)q, B, N, S, D, H), head_view((void *)k, B, N, Skv, D, H),
                            head_view((void *)v, B, N, Skv, Dv, Hv), m, mh, past_k ? *past_k : absent(),
                            past_v ? *past_v : absent(), &out[0], prk_t ? *prk_t : absent(),
                            prv_t ? *prv_t : absent(), false);
    free(m);
    free(scratch);
    return rc;
}

MLRT_KERNEL(ms_mha, "MultiHeadAttention", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_BIT(MLRT_FLOAT), k_ms_mha);

/* -- GroupQueryAttention ------------------------------------------------------------------------------ */

/* Rotates one head's row: pairs (i, i + half) or, interleaved, (2i, 2i + 1) by the cache
 * row's angles; elements past 2 * half are copied. */
static void gqa_rotate(float *dst, const float *src, int64_t D, int64_t half, bool interleaved, const float *c,
                       const float *s) {
    for (int64_t i = 0; i < half; ++i) {
        int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
        float x = src[a], y = src[b];
        dst[a] = x * c[i] - y * s[i];
        dst[b] = y * c[i] + x * s[i];
    }
    for (int64_t e = 2 * half; e < D; ++e) dst[e] = src[e];
}

/* inputs: query (or packed Q, K, V when key is absent), key, value, past_key, past_value,
 * seqlens_k, total_sequence_length (, cos_cache, sin_cache with rotary); outputs: output,
 * present_key, present_value.  Row b holds t_b = seqlens_k[b] + 1 keys.  A first prompt
 * (q_len == total) reads no past: its q_len new rows start the present buffer and attend
 * causally (query rows at or past t_b are padding, their output unspecified).  Otherwise
 * the row's past is t_b - q_len keys of past_key, its new keys follow them, and query i
 * sits at position t_b - q_len + i.  Present rows past the written ones are zero.  Rotary
 * positions are those absolute positions (padding rows of a first prompt: 1). */
static int k_ms_gqa(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ms_attention_params, p, params, params_size);
    MLRT_CHECK(n_in >= (p->rotary ? 9 : 7) && n_out >= 1 && n_out <= 3, "expects at least 7 inputs (9 with rotary) "
               "and 1 to 3 outputs");
    MLRT_CHECK(sizes_ok(p) && p->head_size == p->v_head_size && p->kv_len == p->q_len &&
                   p->present_len >= p->past_len && p->present_len >= (p->first_prompt ? p->q_len : 0),
               "bad sizes");
    int64_t B = p->batch, S = p->q_len, N = p->heads, Nk = p->kv_heads, D = p->head_size, P = p->past_len;
    int64_t Lp = p->present_len;
    bool packed = !mlrt_present(&in[1]);
    const mlrt_tensor *pk = mlrt_present(&in[3]) ? &in[3] : NULL, *pv = mlrt_present(&in[4]) ? &in[4] : NULL;
    const mlrt_tensor *lens = &in[5], *total = &in[6];
    int64_t W = packed ? (N + 2 * Nk) * D : N * D, qs[3] = {B, S, W}, ks[3] = {B, S, Nk * D}, ys[3] = {B, S, N * D};
    int64_t ps[4] = {B, Nk, P, D}, rs[4] = {B, Nk, Lp, D};
    MLRT_CHECK(plain_f32(&in[0], 3, qs) && (packed || (plain_f32(&in[1], 3, ks) && plain_f32(&in[2], 3, ks))),
               "query, key, value must be float32 tensors matching the sizes");
    MLRT_CHECK(!pk == !pv && (pk ? plain_f32(pk, 4, ps) && plain_f32(pv, 4, ps) : P == 0),
               "past_key / past_value do not match the sizes");
    MLRT_CHECK(plain_f32(&out[0], 3, ys), "output does not match the sizes");
    for (int i = 1; i < n_out; ++i)
        MLRT_CHECK(!mlrt_present(&out[i]) || plain_f32(&out[i], 4, rs), "present_key / present_value do not match");
    MLRT_CHECK(lens->dtype == MLRT_INT32 && mlrt_numel(lens) == B && mlrt_is_contiguous(lens) &&
                   total->dtype == MLRT_INT32 && mlrt_numel(total) == 1,
               "seqlens_k must be int32 [batch] and total_sequence_length one int32");
    int64_t t = *(const int32_t *)total->data;
    MLRT_CHECK((t == S) == (p->first_prompt != 0) && (t > P ? t : P) == Lp,
               "total_sequence_length %lld does not match the planned sizes", (long long)t);
    const int32_t *sk = lens->data;
    for (int64_t b = 0; b < B; ++b) {
        int64_t tb = (int64_t)sk[b] + 1;
        bool ok = p->first_prompt ? tb >= 1 && tb <= S : tb >= S && tb - S <= P && tb <= Lp;
        if (!ok)
            return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "seqlens_k[%lld] = %lld does not fit %s (%lld new keys, "
                             "%lld past, %lld present)", (long long)b, (long long)sk[b],
                             p->first_prompt ? "a first prompt" : "the cache", (long long)S, (long long)P,
                             (long long)Lp);
    }
    const mlrt_tensor *cc = p->rotary ? &in[7] : NULL, *sc = p->rotary ? &in[8] : NULL;
    int64_t half = 0;
    if (cc) {
        MLRT_CHECK(cc->dtype == MLRT_FLOAT && sc->dtype == MLRT_FLOAT && cc->rank == 2 && dims_are(sc, 2, cc->shape) &&
                       mlrt_is_contiguous(cc) && mlrt_is_contiguous(sc) && cc->shape[1] > 0 && 2 * cc->shape[1] <= D,
                   "cos_cache and sin_cache must be float32 [positions, rotary_dim / 2 <= head_size / 2]");
        half = cc->shape[1];
    }
    float *q = in[0].data;
    const float *kin = packed ? q + N * D : in[1].data, *vin = packed ? q + (N + Nk) * D : in[2].data;
    int64_t ldk = packed ? W : Nk * D;
    /* scratch: rotated Q and K (rotary), present K and V when not asked for, int64 key counts */
    size_t n_rot = cc ? (size_t)(B * S * (N + Nk) * D) : 0;
    size_t n_pres = (size_t)(B * Nk * Lp * D);
    bool own_k = n_out < 2 || !mlrt_present(&out[1]), own_v = n_out < 3 || !mlrt_present(&out[2]);
    size_t n_f = n_rot + (own_k ? n_pres : 0) + (own_v ? n_pres : 0);
    float *scratch = malloc(n_f * sizeof(float) + (size_t)B * sizeof(int64_t) + 16);
    if (!scratch) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "out of memory for GroupQueryAttention scratch");
    int64_t *kv_len = (int64_t *)(((uintptr_t)(scratch + n_f) + 7) & ~(uintptr_t)7);
    float *qr = scratch, *kr = qr + (cc ? B * S * N * D : 0), *next = scratch + n_rot;
    float *prk = own_k ? next : out[1].data;
    next += own_k ? n_pres : 0;
    float *prv = own_v ? next : out[2].data;
    int rc = MLRT_OK;
    if (cc) {
        const float *ct = cc->data, *st = sc->data;
        for (int64_t b = 0; b < B && rc == MLRT_OK; ++b) {
            int64_t tb = (int64_t)sk[b] + 1, past = p->first_prompt ? 0 : tb - S;
            for (int64_t i = 0; i < S; ++i) {
                int64_t pos = p->first_prompt ? (i < tb ? i : 1) : past + i;
                if (pos >= cc->shape[0]) {
                    rc = mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "position %lld is past the %lld rows of cos_cache",
                                   (long long)pos, (long long)cc->shape[0]);
                    break;
                }
                const float *c = ct + pos * half, *s = st + pos * half, *row = q + (b * S + i) * W;
                for (int64_t h = 0; h < N; ++h)
                    gqa_rotate(qr + ((b * S + i) * N + h) * D, row + h * D, D, half, p->rotary_interleaved, c, s);
                for (int64_t h = 0; h < Nk; ++h)
                    gqa_rotate(kr + ((b * S + i) * Nk + h) * D, kin + (b * S + i) * ldk + h * D, D, half,
                               p->rotary_interleaved, c, s);
            }
        }
        kin = kr;
        ldk = Nk * D;
    }
    if (rc == MLRT_OK) {
        memset(prk, 0, n_pres * sizeof(float));
        memset(prv, 0, n_pres * sizeof(float));
        int64_t ldv = packed ? W : Nk * D;
        for (int64_t b = 0; b < B; ++b) {
            int64_t tb = (int64_t)sk[b] + 1, past = p->first_prompt ? 0 : tb - S;
            kv_len[b] = tb;
            for (int64_t h = 0; h < Nk; ++h) {
                float *dk = prk + (b * Nk + h) * Lp * D, *dv = prv + (b * Nk + h) * Lp * D;
                if (past > 0) {
                    memcpy(dk, (const float *)pk->data + (b * Nk + h) * P * D, (size_t)(past * D) * sizeof(float));
                    memcpy(dv, (const float *)pv->data + (b * Nk + h) * P * D, (size_t)(past * D) * sizeof(float));
                }
                for (int64_t i = 0; i < S; ++i) {
                    memcpy(dk + (past + i) * D, kin + (b * S + i) * ldk + h * D, (size_t)D * sizeof(float));
                    memcpy(dv + (past + i) * D, vin + (b * S + i) * ldv + h * D, (size_t)D * sizeof(float));
                }
            }
        }
        mlrt_tensor ins[7] = {cc ? head_view(qr, B, N, S, D, N * D) : head_view(q, B, N, S, D, W), absent(), absent(),
                              absent(), absent(), absent(), absent()};
        int64_t r4[4] = {B, Nk, Lp, D}, rst[4] = {Nk * Lp * D, Lp * D, D, 1}, nb = B, ns = 1;
        ins[1] = fview(prk, 4, r4, rst);
        ins[2] = fview(prv, 4, r4, rst);
        if (!p->first_prompt) {  /* keys past t_b masked, query i at t_b - q_len + i */
            ins[6] = fview(kv_len, 1, &nb, &ns);
            ins[6].dtype = MLRT_INT64;
        }
        mlrt_attention_params a = {.batch = B, .q_heads = N, .kv_heads = Nk, .q_len = S, .kv_len = Lp, .past_len = 0,
                                   .head_size = D, .v_head_size = D, .is_causal = 1, .left_window = p->local_window,
                                   .right_window = -1, .qk_mode = 0, .softmax_type = MLRT_FLOAT,
                                   .scale_sqrt = (float)sqrt(p->scale), .softcap = p->softcap};
        mlrt_tensor outs[3] = {out[0], absent(), absent()};
        int32_t kid = mlrt_kernel_find("", "Attention", 23, MLRT_FLOAT);
        rc = kid < 0 ? mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "no Attention kernel")
                     : mlrt_kernel_run(kid, ctx->pool, ins, 7, outs, 3, &a, sizeof a);
    }
    free(scratch);
    return rc;
}

MLRT_KERNEL(ms_gqa, "GroupQueryAttention", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_BIT(MLRT_FLOAT), k_ms_gqa);

/* -- EmbedLayerNormalization ------------------------------------------------------------------------------ */

/* inputs: input_ids, segment_ids, word_embedding, position_embedding, segment_embedding, gamma,
 * beta, mask, position_ids; outputs: output, mask_index, embedding_sum.  The sums go into
 * embedding_sum (or scratch) and the LayerNormalization kernel normalises them into output. */
static int k_ms_embed_ln(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                         int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_ms_embed_ln_params, p, params, params_size);
    MLRT_CHECK(n_in >= 7 && n_in <= 9 && n_out >= 1 && n_out <= 3, "expects 7 to 9 inputs and 1 to 3 outputs");
    const mlrt_tensor *ids = &in[0], *word = &in[2], *posemb = &in[3], *gamma = &in[5], *beta = &in[6];
    const mlrt_tensor *seg = mlrt_present(&in[1]) ? &in[1] : NULL, *segemb = mlrt_present(&in[4]) ? &in[4] : NULL;
    const mlrt_tensor *mask = n_in > 7 && mlrt_present(&in[7]) ? &in[7] : NULL;
    const mlrt_tensor *pids = n_in > 8 && mlrt_present(&in[8]) ? &in[8] : NULL;
    MLRT_CHECK(ids->dtype == MLRT_INT32 && ids->rank == 2 && mlrt_is_contiguous(ids), "input_ids must be int32 [B, S]");
    int64_t B = ids->shape[0], S = ids->shape[1], H = word->rank == 2 ? word->shape[1] : -1, BS = B * S;
    int64_t ys[3] = {B, S, H}, hs[1] = {H};
    MLRT_CHECK(H > 0 && word->dtype == MLRT_FLOAT && mlrt_is_contiguous(word) && posemb->rank == 2 &&
                   posemb->shape[1] == H && posemb->dtype == MLRT_FLOAT && mlrt_is_contiguous(posemb) &&
                   plain_f32(gamma, 1, hs) && plain_f32(beta, 1, hs),
               "embeddings must be float32 [rows, hidden], gamma and beta [hidden]");
    MLRT_CHECK(!seg == !segemb && (!seg || (seg->dtype == MLRT_INT32 && mlrt_same_shape(seg, ids) &&
                                            mlrt_is_contiguous(seg) && segemb->rank == 2 && segemb->shape[1] == H &&
                                            segemb->dtype == MLRT_FLOAT && mlrt_is_contiguous(segemb))),
               "segment_ids and segment_embedding come together, int32 [B, S] and float32 [rows, hidden]");
    MLRT_CHECK(!mask || (mask->dtype == MLRT_INT32 && mlrt_same_shape(mask, ids) && mlrt_is_contiguous(mask)),
               "mask must be int32 [B, S]");
    MLRT_CHECK(!pids == !p->has_position_ids &&
                   (!pids || (pids->dtype == MLRT_INT32 && pids->rank == 2 && mlrt_is_contiguous(pids) &&
                              (pids->shape[0] == B || pids->shape[0] == 1) && pids->shape[1] == S)),
               "position_ids must be int32 [B or 1, S]");
    MLRT_CHECK(plain_f32(&out[0], 3, ys), "output does not match [B, S, hidden]");
    mlrt_tensor *mi = n_out > 1 && mlrt_present(&out[1]) ? &out[1] : NULL;
    mlrt_tensor *esum = n_out > 2 && mlrt_present(&out[2]) ? &out[2] : NULL;
    MLRT_CHECK(!mi || (mi->dtype == MLRT_INT32 && mlrt_numel(mi) == B), "mask_index must be int32 [B]");
    MLRT_CHECK(!esum || plain_f32(esum, 3, ys), "embedding_sum does not match [B, S, hidden]");
    float *sum = esum ? esum->data : malloc((size_t)(BS * H + 1) * sizeof(float));
    if (!sum) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "out of memory for the embedding sums");
    const int32_t *id = ids->data, *sg = seg ? seg->data : NULL, *pi = pids ? pids->data : NULL;
    const float *we = word->data, *pe = posemb->data, *se = segemb ? segemb->data : NULL;
    int rc = MLRT_OK;
    for (int64_t r = 0; r < BS && rc == MLRT_OK; ++r) {
        int64_t b = r / S, s = r % S;
        int64_t w = id[r], ps = pi ? pi[(pids->shape[0] == 1 ? 0 : b * S) + s] : s, g = sg ? sg[r] : 0;
        if (w < 0 || w >= word->shape[0] || ps < 0 || ps >= posemb->shape[0] || (sg && (g < 0 || g >= segemb->shape[0]))) {
            rc = mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "an input, position or segment id at [%lld, %lld] is out of range",
                           (long long)b, (long long)s);
            break;
        }
        float *dst = sum + r * H;
        for (int64_t h = 0; h < H; ++h) dst[h] = we[w * H + h] + pe[ps * H + h] + (sg ? se[g * H + h] : 0.0f);
    }
    if (rc == MLRT_OK && mi) {
        int32_t *m = mi->data;
        for (int64_t b = 0; b < B; ++b) {
            int32_t c = 0;
            for (int64_t s = 0; mask && s < S; ++s) c += ((const int32_t *)mask->data)[b * S + s] != 0;
            m[b] = c;
        }
    }
    if (rc == MLRT_OK && BS > 0) {
        int64_t st[3] = {S * H, H, 1}, zs[3] = {0, 0, 1};
        mlrt_tensor views[3] = {fview(sum, 3, ys, st), fview(gamma->data, 3, ys, zs), fview(beta->data, 3, ys, zs)};
        mlrt_normalize_params q = {.n_kept = 2, .epsilon = p->epsilon, .p = 0};
        int32_t k = mlrt_kernel_find("", "LayerNormalization", 17, MLRT_FLOAT);
        rc = k < 0 ? mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "no LayerNormalization kernel")
                   : mlrt_kernel_run(k, ctx->pool, views, 3, &out[0], 1, &q, sizeof q);
    }
    if (!esum) free(sum);
    return rc;
}

MLRT_KERNEL(ms_embed_ln, "EmbedLayerNormalization", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_BIT(MLRT_INT32),
            k_ms_embed_ln);

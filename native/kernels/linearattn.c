/* linearattn.c -- LinearAttention (opset 27).
 *
 * The recurrence run token by token, in float whatever the tensor types: for each
 * (batch, kv head) a dk x dv state S is decayed (gated rules: S *= exp(g)), written
 * (S += k (x) v, or with the delta rules k (x) beta * (v - S^T k)) and read by every
 * query head of its group (o = scale * q^T S).  (batch, kv head) pairs are
 * independent and spread over the pool. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"
#include "linearattn.h"

static inline float load_f(const void *base, int32_t dt, int64_t i) {
    switch (dt) {
    case MLRT_FLOAT: return ((const float *)base)[i];
    case MLRT_FLOAT16: return mlrt_f16_to_f32(((const uint16_t *)base)[i]);
    case MLRT_BFLOAT16: return mlrt_bf16_to_f32(((const uint16_t *)base)[i]);
    default: return (float)((const double *)base)[i];
    }
}

static inline void store_f(void *base, int32_t dt, int64_t i, float v) {
    switch (dt) {
    case MLRT_FLOAT: ((float *)base)[i] = v; break;
    case MLRT_FLOAT16: ((uint16_t *)base)[i] = mlrt_f32_to_f16(v); break;
    case MLRT_BFLOAT16: ((uint16_t *)base)[i] = mlrt_f32_to_bf16(v); break;
    default: ((double *)base)[i] = v; break;
    }
}

typedef struct la_job {
    const mlrt_linear_attention_params *p;
    const mlrt_tensor *q, *k, *v, *past, *decay, *beta;
    mlrt_tensor *y, *present;
    atomic_int failed;
} la_job;

static void la_heads(void *arg, int64_t begin, int64_t end) {
    la_job *j = arg;
    const mlrt_linear_attention_params *p = j->p;
    int64_t dk = p->dk, dv = p->dv, T = p->steps, hq = p->q_heads, hkv = p->kv_heads, group = hq / hkv;
    float *S = malloc((size_t)(dk * dv + 2 * dv + dk) * sizeof(float));
    if (!S) {
        atomic_store(&j->failed, 1);
        return;
    }
    float *u = S + dk * dv, *r = u + dv, *g = r + dv;
    int32_t dt = j->q->dtype;
    for (int64_t bh = begin; bh < end; ++bh) {
        int64_t b = bh / hkv, h = bh % hkv;
        for (int64_t i = 0; i < dk * dv; ++i) S[i] = j->past ? load_f(j->past->data, j->past->dtype, bh * dk * dv + i) : 0.0f;
        for (int64_t t = 0; t < T; ++t) {
            int64_t bt = b * T + t;
            int64_t k0 = (bt * hkv + h) * dk, v0 = (bt * hkv + h) * dv;
            if (p->gated) {
                for (int64_t d = 0; d < dk; ++d)
                    g[d] = expf(load_f(j->decay->data, dt, p->decay_per_key ? k0 + d : bt * hkv + h));
                for (int64_t d = 0; d < dk; ++d)
                    for (int64_t m = 0; m < dv; ++m) S[d * dv + m] *= g[d];
            }
            for (int64_t m = 0; m < dv; ++m) u[m] = load_f(j->v->data, dt, v0 + m);
            if (p->delta) {
                float beta = load_f(j->beta->data, dt, p->beta_per_head ? bt * hkv + h : bt);
                for (int64_t m = 0; m < dv; ++m) r[m] = 0.0f;
                for (int64_t d = 0; d < dk; ++d) {
                    float kd = load_f(j->k->data, dt, k0 + d);
                    for (int64_t m = 0; m < dv; ++m) r[m] += S[d * dv + m] * kd;
                }
                for (int64_t m = 0; m < dv; ++m) u[m] = beta * (u[m] - r[m]);
            }
            for (int64_t d = 0; d < dk; ++d) {
                float kd = load_f(j->k->data, dt, k0 + d);
                for (int64_t m = 0; m < dv; ++m) S[d * dv + m] += kd * u[m];
            }
            for (int64_t qh = h * group; qh < (h + 1) * group; ++qh) {
                int64_t q0 = (bt * hq + qh) * dk, y0 = (bt * hq + qh) * dv;
                for (int64_t m = 0; m < dv; ++m) r[m] = 0.0f;
                for (int64_t d = 0; d < dk; ++d) {
                    float qd = load_f(j->q->data, dt, q0 + d);
                    for (int64_t m = 0; m < dv; ++m) r[m] += qd * S[d * dv + m];
                }
                for (int64_t m = 0; m < dv; ++m) store_f(j->y->data, j->y->dtype, y0 + m, (float)p->scale * r[m]);
            }
        }
        if (j->present)
            for (int64_t i = 0; i < dk * dv; ++i) store_f(j->present->data, j->present->dtype, bh * dk * dv + i, S[i]);
    }
    free(S);
}

static bool dims(const mlrt_tensor *t, int32_t rank, const int64_t *d) {
    if (t->rank != rank || !mlrt_is_contiguous(t)) return false;
    for (int32_t i = 0; i < rank; ++i)
        if (t->shape[i] != d[i]) return false;
    return true;
}

static bool float_type(int32_t dt) {
    return dt == MLRT_FLOAT || dt == MLRT_FLOAT16 || dt == MLRT_BFLOAT16 || dt == MLRT_DOUBLE;
}

/* inputs: query, key, value, [past_state], [decay], [beta]; outputs: output, [present_state] */
static int k_linear_attention(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                              int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in >= 3 && n_in <= 6 && n_out >= 1 && n_out <= 2, "expects 3 to 6 inputs and 1 or 2 outputs");
    MLRT_PARAMS(mlrt_linear_attention_params, p, params, params_size);
    const mlrt_tensor *opt[3] = {NULL, NULL, NULL};
    for (int32_t i = 3; i < n_in; ++i) opt[i - 3] = mlrt_present(&in[i]) ? &in[i] : NULL;
    la_job job = {p, &in[0], &in[1], &in[2], opt[0], opt[1], opt[2], &out[0],
                  n_out > 1 && mlrt_present(&out[1]) ? &out[1] : NULL, 0};
    int64_t B = p->batch, T = p->steps, hq = p->q_heads, hkv = p->kv_heads, dk = p->dk, dv = p->dv;
    MLRT_CHECK(B >= 0 && T >= 0 && hkv >= 1 && hq >= hkv && hq % hkv == 0 && dk >= 0 && dv >= 0, "bad extents");
    int32_t dt = job.q->dtype;
    MLRT_CHECK(float_type(dt) && job.k->dtype == dt && job.v->dtype == dt && job.y->dtype == dt,
               "query, key, value and output must share a float type");
    int64_t qd[3] = {B, T, hq * dk}, kd[3] = {B, T, hkv * dk}, vd[3] = {B, T, hkv * dv}, yd[3] = {B, T, hq * dv};
    int64_t sd[4] = {B, hkv, dk, dv};
    MLRT_CHECK(dims(job.q, 3, qd) && dims(job.k, 3, kd) && dims(job.v, 3, vd) && dims(job.y, 3, yd),
               "query, key, value or output does not match the packed [B, T, heads * d] shapes");
    MLRT_CHECK(!job.past || (float_type(job.past->dtype) && dims(job.past, 4, sd)), "past_state must be [B, hkv, dk, dv]");
    MLRT_CHECK(!job.present || (float_type(job.present->dtype) && dims(job.present, 4, sd)),
               "present_state must be [B, hkv, dk, dv]");
    if (p->gated) {
        int64_t dd[3] = {B, T, p->decay_per_key ? hkv * dk : hkv};
        MLRT_CHECK(job.decay && job.decay->dtype == dt && dims(job.decay, 3, dd), "decay must be [B, T, hkv(*dk)]");
    }
    if (p->delta) {
        int64_t bd[3] = {B, T, p->beta_per_head ? hkv : 1};
        MLRT_CHECK(job.beta && job.beta->dtype == dt && dims(job.beta, 3, bd), "beta must be [B, T, hkv or 1]");
    }
    mlrt_parallel_for(ctx, B * hkv, 1, la_heads, &job);
    if (atomic_load(&job.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "no memory for a %lld x %lld state",
                                                   (long long)dk, (long long)dv);
    return MLRT_OK;
}

MLRT_KERNEL(linear_attention, "LinearAttention", "", 27, MLRT_OPSET_MAX,
            MLRT_BIT(MLRT_FLOAT) | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16), k_linear_attention);

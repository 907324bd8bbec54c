/* random.c -- RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike,
 * Bernoulli, Multinomial.
 *
 * A counter-based generator: draw k of a call is splitmix64's output function of
 * key + (k + 1) * golden gamma, i.e. the splitmix64 sequence started at the key.
 * So any element can be drawn independently, the pool can split the work any way
 * and a seeded call gives the same tensor whatever the thread count.  The key comes
 * from the `seed` attribute when given; otherwise from the clock, a call counter and
 * the output address, so that every call differs.  Normal draws use Box-Muller on
 * two draws per element; Multinomial inverts the cumulative distribution of each
 * row (probabilities from the unnormalised log-probabilities, in double). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "random.h"
#define load_f(b, t, i) mlrt_load_as_double((b), (i), (t))

#define GAMMA UINT64_C(0x9E3779B97F4A7C15)

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static inline uint64_t draw(uint64_t key, uint64_t k) { return mix64(key + (k + 1) * GAMMA); }

/* uniform in [0, 1) and in (0, 1] with 53 random bits */
static inline double unit_open_hi(uint64_t u) { return (double)(u >> 11) * 0x1.0p-53; }
static inline double unit_open_lo(uint64_t u) { return (double)((u >> 11) + 1) * 0x1.0p-53; }

static uint64_t make_key(const mlrt_random_params *p, const void *salt, uint64_t op) {
    if (p->has_seed) {
        uint64_t bits;
        double s = p->seed;
        memcpy(&bits, &s, sizeof bits);
        return mix64(bits ^ mix64(op));
    }
    static atomic_uint_fast64_t calls;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t t = (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
    uint64_t n = atomic_fetch_add(&calls, 1) + 1;
    return mix64(t ^ mix64(n * GAMMA) ^ mix64((uint64_t)(uintptr_t)salt) ^ op);
}

static bool float_type(int32_t dt) {
    return dt == MLRT_FLOAT || dt == MLRT_DOUBLE || dt == MLRT_FLOAT16 || dt == MLRT_BFLOAT16;
}

/* store a value of a float output; integers and bool only ever get 0 or 1 (Bernoulli) */
static inline void store(void *base, int32_t dt, int64_t i, double v) {
    switch (dt) {
    case MLRT_FLOAT: ((float *)base)[i] = (float)v; break;
    case MLRT_DOUBLE: ((double *)base)[i] = v; break;
    case MLRT_FLOAT16: ((uint16_t *)base)[i] = mlrt_f64_to_f16(v); break;
    case MLRT_BFLOAT16: ((uint16_t *)base)[i] = mlrt_f32_to_bf16((float)v); break;
    case MLRT_BOOL: case MLRT_UINT8: ((uint8_t *)base)[i] = (uint8_t)v; break;
    case MLRT_INT8: ((int8_t *)base)[i] = (int8_t)v; break;
    case MLRT_INT16: ((int16_t *)base)[i] = (int16_t)v; break;
    case MLRT_UINT16: ((uint16_t *)base)[i] = (uint16_t)v; break;
    case MLRT_INT32: ((int32_t *)base)[i] = (int32_t)v; break;
    case MLRT_UINT32: ((uint32_t *)base)[i] = (uint32_t)v; break;
    case MLRT_INT64: ((int64_t *)base)[i] = (int64_t)v; break;
    case MLRT_UINT64: ((uint64_t *)base)[i] = (uint64_t)v; break;
    default: break;
    }
}

/* A 16-bit float's bits one step toward -inf (sign and magnitude: as float16 and bfloat16 lie). */
static inline uint16_t half_step_down(uint16_t h) {
    return h == 0 ? 0x8001 : (h & 0x8000) ? (uint16_t)(h + 1) : (uint16_t)(h - 1);
}

/* A uniform draw v in [lo, hi) stored in the output's type, staying below hi: a value
 * just under hi that rounds up to it (to nearest, in the type's precision) takes the
 * type's next value down instead, not below lo (RandomUniform's range is [low, high)). */
static inline void store_below(void *base, int32_t dt, int64_t i, double v, double lo, double hi) {
    switch (dt) {
    case MLRT_FLOAT: {
        float f = (float)v;
        while (f >= hi && f > lo) f = nextafterf(f, -INFINITY);
        ((float *)base)[i] = f;
        return;
    }
    case MLRT_DOUBLE:
        while (v >= hi && v > lo) v = nextafter(v, -INFINITY);
        ((double *)base)[i] = v;
        return;
    case MLRT_FLOAT16: case MLRT_BFLOAT16: {
        bool half = dt == MLRT_FLOAT16;
        uint16_t h = half ? mlrt_f64_to_f16(v) : mlrt_f32_to_bf16((float)v);
        for (;;) {
            double got = half ? mlrt_f16_to_f32(h) : mlrt_bf16_to_f32(h);
            if (!(got >= hi && got > lo)) break;
            h = half_step_down(h);
        }
        ((uint16_t *)base)[i] = h;
        return;
    }
    default: store(base, dt, i, v);
    }
}

enum { GEN_UNIFORM, GEN_NORMAL, GEN_BERNOULLI };

typedef struct gen_job {
    int kind;
    uint64_t key;
    double a, b;
    const mlrt_tensor *p;  /* Bernoulli probabilities */
    mlrt_tensor *y;
} gen_job;

static void gen_range(void *arg, int64_t begin, int64_t end) {
    const gen_job *j = arg;
    int32_t dt = j->y->dtype;
    for (int64_t i = begin; i < end; ++i) {
        double v;
        if (j->kind == GEN_UNIFORM) {
            v = j->a + (j->b - j->a) * unit_open_hi(draw(j->key, (uint64_t)i));
            store_below(j->y->data, dt, i, v, j->a, j->b);
            continue;
        } else if (j->kind == GEN_NORMAL) {
            double r = sqrt(-2.0 * log(unit_open_lo(draw(j->key, 2 * (uint64_t)i))));
            v = j->a + j->b * r * cos(2.0 * M_PI * unit_open_hi(draw(j->key, 2 * (uint64_t)i + 1)));
        } else {
            v = unit_open_hi(draw(j->key, (uint64_t)i)) < load_f(j->p->data, j->p->dtype, i) ? 1.0 : 0.0;
        }
        store(j->y->data, dt, i, v);
    }
}

static int generate(const mlrt_context *ctx, int kind, const mlrt_tensor *prob, mlrt_tensor *y,
                    const mlrt_random_params *p, uint64_t op) {
    MLRT_CHECK(mlrt_is_contiguous(y), "needs a contiguous output");
    if (kind == GEN_BERNOULLI) {
        MLRT_CHECK(y->dtype != MLRT_UNDEFINED && y->dtype != MLRT_STRING && mlrt_dtype_size(y->dtype) > 0,
                   "output type %d not supported", y->dtype);
        MLRT_CHECK(float_type(prob->dtype) && mlrt_is_contiguous(prob) && mlrt_same_shape(prob, y),
                   "input must be a contiguous float tensor of the output's shape");
    } else {
        MLRT_CHECK(float_type(y->dtype), "output type %d is not a float type", y->dtype);
        MLRT_CHECK(isfinite(p->a) && isfinite(p->b), "the distribution's parameters must be finite");
    }
    gen_job job = {kind, make_key(p, y->data, op), p->a, p->b, prob, y};
    mlrt_parallel_for(ctx, mlrt_numel(y), 16384, gen_range, &job);
    return MLRT_OK;
}

static int k_random_uniform(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                            int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in <= 1 && n_out == 1, "expects at most 1 input and 1 output");
    MLRT_PARAMS(mlrt_random_params, p, params, params_size);
    return generate(ctx, GEN_UNIFORM, NULL, &out[0], p, 1);
}

static int k_random_normal(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                           int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in <= 1 && n_out == 1, "expects at most 1 input and 1 output");
    MLRT_PARAMS(mlrt_random_params, p, params, params_size);
    return generate(ctx, GEN_NORMAL, NULL, &out[0], p, 2);
}

static int k_bernoulli(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                       int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    MLRT_PARAMS(mlrt_random_params, p, params, params_size);
    return generate(ctx, GEN_BERNOULLI, &in[0], &out[0], p, 3);
}

/* -- Multinomial ------------------------------------------------------------------------- */

typedef struct multinomial_job {
    const mlrt_tensor *x;
    mlrt_tensor *y;
    int64_t samples;
    uint64_t key;
    atomic_int failed;  /* 1: no memory, 2: a row without probability mass */
} multinomial_job;

static void multinomial_rows(void *arg, int64_t begin, int64_t end) {
    multinomial_job *j = arg;
    int64_t classes = j->x->shape[1];
    double *cdf = malloc((size_t)classes * sizeof(double));
    if (!cdf) {
        atomic_store(&j->failed, 1);
        return;
    }
    for (int64_t b = begin; b < end; ++b) {
        double top = -INFINITY;
        for (int64_t c = 0; c < classes; ++c) {
            double v = load_f(j->x->data, j->x->dtype, b * classes + c);
            if (v > top) top = v;
        }
        double total = 0.0;
        for (int64_t c = 0; c < classes; ++c) {
            double v = load_f(j->x->data, j->x->dtype, b * classes + c);
            total += v == v ? exp(v - top) : 0.0;
            cdf[c] = total;
        }
        if (!(total > 0.0) || !isfinite(total)) {
            atomic_store(&j->failed, 2);
            break;
        }
        for (int64_t s = 0; s < j->samples; ++s) {
            double t = unit_open_hi(draw(j->key, (uint64_t)(b * j->samples + s))) * total;
            int64_t lo = 0, hi = classes - 1;  /* the first class whose cdf exceeds t */
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (cdf[mid] > t) hi = mid;
                else lo = mid + 1;
            }
            if (j->y->dtype == MLRT_INT32) ((int32_t *)j->y->data)[b * j->samples + s] = (int32_t)lo;
            else ((int64_t *)j->y->data)[b * j->samples + s] = lo;
        }
    }
    free(cdf);
}

/* inputs: input [batch, classes] (unnormalised log-probabilities); output [batch, sample_size] */
static int k_multinomial(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                         int32_t n_out, const void *params, size_t params_size) {
    MLRT_CHECK(n_in == 1 && n_out == 1, "expects 1 input and 1 output");
    MLRT_PARAMS(mlrt_random_params, p, params, params_size);
    const mlrt_tensor *x = &in[0];
    mlrt_tensor *y = &out[0];
    MLRT_CHECK(float_type(x->dtype) && x->rank == 2 && mlrt_is_contiguous(x), "input must be a [batch, classes] float tensor");
    MLRT_CHECK((y->dtype == MLRT_INT32 || y->dtype == MLRT_INT64) && mlrt_is_contiguous(y), "output must be int32 or int64");
    MLRT_CHECK(y->rank == 2 && y->shape[0] == x->shape[0] && y->shape[1] == p->sample_size,
               "output must be [batch, sample_size]");
    if (mlrt_numel(y) == 0) return MLRT_OK;
    MLRT_CHECK(x->shape[1] > 0, "cannot draw from zero classes");
    multinomial_job job = {x, y, p->sample_size, make_key(p, y->data, 4), 0};
    mlrt_parallel_for(ctx, x->shape[0], 4096 / (x->shape[1] + p->sample_size) + 1, multinomial_rows, &job);
    int failed = atomic_load(&job.failed);
    if (failed == 1) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "no memory for a row of %lld classes", (long long)x->shape[1]);
    if (failed == 2) return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "a row has no finite log-probability to draw from");
    return MLRT_OK;
}

#define MASK_FLOATS_ALL (MLRT_MASK_FLOATS | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16))
#define MASK_ANY (MLRT_MASK_ALL | MLRT_BIT(MLRT_STRING))
MLRT_KERNEL(random_uniform, "RandomUniform", "", 1, MLRT_OPSET_MAX, MASK_ANY, k_random_uniform);
MLRT_KERNEL(random_normal, "RandomNormal", "", 1, MLRT_OPSET_MAX, MASK_ANY, k_random_normal);
MLRT_KERNEL(random_uniform_like, "RandomUniformLike", "", 1, MLRT_OPSET_MAX, MASK_ANY, k_random_uniform);
MLRT_KERNEL(random_normal_like, "RandomNormalLike", "", 1, MLRT_OPSET_MAX, MASK_ANY, k_random_normal);
MLRT_KERNEL(bernoulli, "Bernoulli", "", 15, MLRT_OPSET_MAX, MASK_FLOATS_ALL, k_bernoulli);
MLRT_KERNEL(multinomial, "Multinomial", "", 7, MLRT_OPSET_MAX, MASK_FLOATS_ALL, k_multinomial);

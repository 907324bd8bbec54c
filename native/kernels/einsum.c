/* einsum.c -- Einsum.
 *
 * The Python semantics resolve the equation into labels: Y's dims first (in
 * order), then the summed ones, with every input's element stride along each
 * label (repeated labels in one input add their strides: a diagonal; broadcast or
 * missing labels have stride 0).  Then
 *   Y[o] = sum over the summed labels of  prod_k X_k[offset_k(o, r)]
 * Two paths:
 *   - a loop nest over Y's elements (in parallel) and the summed labels, the
 *     largest of which runs innermost; every type, any number of inputs;
 *     floats accumulate in double, integers wrap as in their own type;
 *   - float32 / float64 with two inputs and enough work, or with three or more:
 *     pairwise contractions from left to right, each a batched GEMM.  Labels in
 *     both operands and the result are the batch, those of one operand and the
 *     result M or N, those of both operands only K, those of one operand only are
 *     summed while the operands are packed into [batch, M, K] and [batch, K, N];
 *     the product is scattered into the result (a scratch tensor holding the
 *     labels Y or a later input needs, or Y itself at the last step). */
#include <stdlib.h>

#include "einsum.h"
#include "gemm.h"

#define MAXL 24
#define MAXI 8
#define GEMM_MIN_WORK 4096

typedef struct ein_job {
    const mlrt_einsum_params *p;
    const void *x[MAXI];
    void *y;
    int32_t dtype;
    int32_t order[MAXL];  /* summed labels (size > 1), innermost last */
    int32_t n_sum;
} ein_job;

/* -- loop nest ------------------------------------------------------------------------------------ */

/* Y's elements [begin, end) walk in segments along Y's last dim (one div/mod per
 * segment); each element sums over the summed labels, the innermost one as a
 * strided loop specialised for one and two inputs. */
#define DEFINE_NEST(SUF, T, ACC, TO_ACC, FROM_ACC)                                                      \
    static void nest_##SUF(void *arg, int64_t begin, int64_t end) {                                     \
        const ein_job *j = arg;                                                                         \
        const mlrt_einsum_params *p = j->p;                                                             \
        int32_t n_in = (int32_t)p->n_inputs, n_out = (int32_t)p->n_out, ns = j->n_sum;                  \
        const T *x[MAXI];                                                                               \
        int64_t so[MAXI][MAXL], ss[MAXI][MAXL], s_in[MAXI], s_last[MAXI];                               \
        for (int32_t k = 0; k < n_in; ++k) {                                                            \
            x[k] = j->x[k];                                                                             \
            for (int32_t l = 0; l < n_out; ++l) so[k][l] = p->strides[k * MAXL + l];                    \
            for (int32_t a = 0; a < ns; ++a) ss[k][a] = p->strides[k * MAXL + j->order[a]];             \
            s_in[k] = ns > 0 ? ss[k][ns - 1] : 0;                                                       \
            s_last[k] = n_out > 0 ? so[k][n_out - 1] : 0;                                               \
        }                                                                                               \
        int64_t n_inner = ns > 0 ? p->sizes[j->order[ns - 1]] : 1;                                      \
        int64_t n_last = n_out > 0 ? p->sizes[n_out - 1] : 1;                                           \
        T *y = j->y;                                                                                    \
        for (int64_t o = begin; o < end;) {                                                             \
            int64_t base[MAXI] = {0}, rem = o / n_last, pos = o % n_last;                               \
            for (int32_t l = n_out - 2; l >= 0; --l) {                                                  \
                int64_t i = rem % p->sizes[l];                                                          \
                rem /= p->sizes[l];                                                                     \
                for (int32_t k = 0; k < n_in; ++k) base[k] += i * so[k][l];                             \
            }                                                                                           \
            int64_t seg = end - o < n_last - pos ? end - o : n_last - pos;                              \
            for (int64_t e = 0; e < seg; ++e, ++o) {                                                    \
                int64_t at[MAXI];                                                                       \
                for (int32_t k = 0; k < n_in; ++k) at[k] = base[k] + (pos + e) * s_last[k];             \
                ACC acc = 0;                                                                            \
                int64_t idx[MAXL];                                                                      \
                for (int32_t a = 0; a + 1 < ns; ++a) idx[a] = 0;                                        \
                for (;;) {                                                                              \
                    int64_t off[MAXI];                                                                  \
                    for (int32_t k = 0; k < n_in; ++k) {                                                \
                        off[k] = at[k];                                                                 \
                        for (int32_t a = 0; a + 1 < ns; ++a) off[k] += idx[a] * ss[k][a];               \
                    }                                                                                   \
                    if (n_in <= 2) { /* four partial sums: the adds need not wait on each other */     \
                        const T *x0 = x[0] + off[0], *x1 = n_in == 2 ? x[1] + off[1] : NULL;            \
                        int64_t s0 = s_in[0], s1 = n_in == 2 ? s_in[1] : 0, t = 0;                       \
                        ACC part[4] = {0, 0, 0, 0};                                                     \
                        if (x1) {                                                                       \
                            for (; t + 4 <= n_inner; t += 4)                                            \
                                for (int u = 0; u < 4; ++u)                                             \
                                    part[u] += TO_ACC(x0[(t + u) * s0]) * TO_ACC(x1[(t + u) * s1]);     \
                            for (; t < n_inner; ++t) part[0] += TO_ACC(x0[t * s0]) * TO_ACC(x1[t * s1]); \
                        } else {                                                                        \
                            for (; t + 4 <= n_inner; t += 4)                                            \
                                for (int u = 0; u < 4; ++u) part[u] += TO_ACC(x0[(t + u) * s0]);        \
                            for (; t < n_inner; ++t) part[0] += TO_ACC(x0[t * s0]);                     \
                        }                                                                               \
                        acc += (part[0] + part[1]) + (part[2] + part[3]);                               \
                    } else {                                                                            \
                        for (int64_t t = 0; t < n_inner; ++t) {                                         \
                            ACC prod = TO_ACC(x[0][off[0] + t * s_in[0]]);                              \
                            for (int32_t k = 1; k < n_in; ++k) prod *= TO_ACC(x[k][off[k] + t * s_in[k]]); \
                            acc += prod;                                                                \
                        }                                                                               \
                    }                                                                                   \
                    int32_t a = ns - 2;                                                                 \
                    for (; a >= 0; --a) {                                                               \
                        if (++idx[a] < p->sizes[j->order[a]]) break;                                    \
                        idx[a] = 0;                                                                     \
                    }                                                                                   \
                    if (a < 0) break;                                                                   \
                }                                                                                       \
                y[o] = FROM_ACC(acc);                                                                   \
            }                                                                                           \
        }                                                                                               \
    }

static inline double f16_in(uint16_t v) { return mlrt_f16_to_f32(v); }
static inline double bf16_in(uint16_t v) { return mlrt_bf16_to_f32(v); }
static inline uint16_t bf16_out(double v) { return mlrt_f32_to_bf16((float)v); }

#define AS_DOUBLE(v) ((double)(v))
#define TO_INT(v) ((uint64_t)(int64_t)(v))
DEFINE_NEST(f32, float, double, AS_DOUBLE, (float))
DEFINE_NEST(f64, double, double, AS_DOUBLE, (double))
DEFINE_NEST(f16, uint16_t, double, f16_in, mlrt_f64_to_f16)
DEFINE_NEST(bf16, uint16_t, double, bf16_in, bf16_out)
DEFINE_NEST(i8, int8_t, uint64_t, TO_INT, (int8_t))
DEFINE_NEST(i16, int16_t, uint64_t, TO_INT, (int16_t))
DEFINE_NEST(i32, int32_t, uint64_t, TO_INT, (int32_t))
DEFINE_NEST(i64, int64_t, uint64_t, TO_INT, (int64_t))
DEFINE_NEST(u8, uint8_t, uint64_t, TO_INT, (uint8_t))
DEFINE_NEST(u16, uint16_t, uint64_t, TO_INT, (uint16_t))
DEFINE_NEST(u32, uint32_t, uint64_t, TO_INT, (uint32_t))
DEFINE_NEST(u64, uint64_t, uint64_t, (uint64_t), (uint64_t))

static mlrt_range_fn nest_for(int32_t dtype) {
    switch (dtype) {
    case MLRT_FLOAT: return nest_f32;
    case MLRT_DOUBLE: return nest_f64;
    case MLRT_FLOAT16: return nest_f16;
    case MLRT_BFLOAT16: return nest_bf16;
    case MLRT_INT8: return nest_i8;
    case MLRT_INT16: return nest_i16;
    case MLRT_INT32: return nest_i32;
    case MLRT_INT64: return nest_i64;
    case MLRT_UINT8: return nest_u8;
    case MLRT_UINT16: return nest_u16;
    case MLRT_UINT32: return nest_u32;
    case MLRT_UINT64: return nest_u64;
    default: return NULL;
    }
}

/* -- pairwise contractions as batched GEMMs ---------------------------------------------------------- */

enum { G_BATCH, G_M, G_N, G_K, G_SUM_A, G_SUM_B, G_COUNT };

/* One contraction dst = sum(a * b): labels present in a and/or b are classified
 * by where they go (kept in dst or summed). */
typedef struct pair_plan {
    const void *a, *b;
    void *dst;
    int64_t sa[MAXL], sb[MAXL], sd[MAXL];  /* element strides per label */
    int32_t labels[G_COUNT][MAXL], n[G_COUNT];
    int64_t size[G_COUNT];
    int64_t *ta[G_COUNT], *tb[G_COUNT], *td[G_COUNT];  /* offset tables per group */
    void *ap, *bp, *cp;                                /* [batch, M, K], [batch, K, N], [batch, M, N] */
    double mult;
} pair_plan;

/* offsets of every index of a group of labels (row-major, last label fastest) */
static void build_table(int64_t *tab, const int32_t *labels, int32_t n, const int64_t *sizes, const int64_t *strides) {
    int64_t len = 1;
    tab[0] = 0;
    for (int32_t a = 0; a < n; ++a) {
        int64_t sz = sizes[labels[a]], st = strides[labels[a]];
        for (int64_t t = len - 1; t >= 0; --t)
            for (int64_t i = sz - 1; i >= 0; --i) tab[t * sz + i] = tab[t] + i * st;
        len *= sz;
    }
}

#define DEFINE_PAIR(SUF, T, GEMM)                                                                       \
    static void pack_a_##SUF(void *arg, int64_t begin, int64_t end) { /* rows (batch, m) */             \
        const pair_plan *g = arg;                                                                       \
        const T *x = g->a;                                                                              \
        int64_t M = g->size[G_M], K = g->size[G_K], S = g->size[G_SUM_A];                               \
        for (int64_t r = begin; r < end; ++r) {                                                         \
            int64_t base = g->ta[G_BATCH][r / M] + g->ta[G_M][r % M];                                   \
            T *out = (T *)g->ap + r * K;                                                                \
            for (int64_t k = 0; k < K; ++k) {                                                           \
                double acc = 0.0;                                                                       \
                for (int64_t s = 0; s < S; ++s) acc += x[base + g->ta[G_K][k] + g->ta[G_SUM_A][s]];     \
                out[k] = (T)acc;                                                                        \
            }                                                                                           \
        }                                                                                               \
    }                                                                                                   \
    static void pack_b_##SUF(void *arg, int64_t begin, int64_t end) { /* rows (batch, k) */             \
        const pair_plan *g = arg;                                                                       \
        const T *x = g->b;                                                                              \
        int64_t K = g->size[G_K], N = g->size[G_N], S = g->size[G_SUM_B];                               \
        for (int64_t r = begin; r < end; ++r) {                                                         \
            int64_t base = g->tb[G_BATCH][r / K] + g->tb[G_K][r % K];                                   \
            T *out = (T *)g->bp + r * N;                                                                \
            for (int64_t n = 0; n < N; ++n) {                                                           \
                double acc = 0.0;                                                                       \
                for (int64_t s = 0; s < S; ++s) acc += x[base + g->tb[G_N][n] + g->tb[G_SUM_B][s]];     \
                out[n] = (T)acc;                                                                        \
            }                                                                                           \
        }                                                                                               \
    }                                                                                                   \
    static void products_##SUF(void *arg, int64_t begin, int64_t end) { /* batches, one thread each */  \
        const pair_plan *g = arg;                                                                       \
        int64_t M = g->size[G_M], N = g->size[G_N], K = g->size[G_K];                                   \
        for (int64_t b = begin; b < end; ++b)                                                           \
            GEMM(NULL, false, false, M, N, K, (T)1, (const T *)g->ap + b * M * K, K, (const T *)g->bp + b * K * N, \
                 N, (T)0, (T *)g->cp + b * M * N, N);                                                   \
    }                                                                                                   \
    static void scatter_##SUF(void *arg, int64_t begin, int64_t end) { /* rows (batch, m) */            \
        const pair_plan *g = arg;                                                                       \
        int64_t M = g->size[G_M], N = g->size[G_N];                                                     \
        T *y = g->dst;                                                                                  \
        for (int64_t r = begin; r < end; ++r) {                                                         \
            int64_t base = g->td[G_BATCH][r / M] + g->td[G_M][r % M];                                   \
            const T *src = (const T *)g->cp + r * N;                                                    \
            for (int64_t n = 0; n < N; ++n) y[base + g->td[G_N][n]] = (T)(src[n] * g->mult);            \
        }                                                                                               \
    }                                                                                                   \
    static int pair_run_##SUF(const mlrt_context *ctx, pair_plan *g) {                                  \
        int64_t B = g->size[G_BATCH], M = g->size[G_M], N = g->size[G_N], K = g->size[G_K];             \
        mlrt_parallel_for(ctx, B * M, 4096 / (K * g->size[G_SUM_A] + 1) + 1, pack_a_##SUF, g);          \
        mlrt_parallel_for(ctx, B * K, 4096 / (N * g->size[G_SUM_B] + 1) + 1, pack_b_##SUF, g);          \
        if (B >= 2 * mlrt_ctx_threads(ctx)) {                                                           \
            mlrt_parallel_for(ctx, B, 1, products_##SUF, g);                                            \
        } else {                                                                                        \
            for (int64_t b = 0; b < B; ++b) {                                                           \
                int status = GEMM(ctx, false, false, M, N, K, (T)1, (const T *)g->ap + b * M * K, K,    \
                                  (const T *)g->bp + b * K * N, N, (T)0, (T *)g->cp + b * M * N, N);    \
                if (status) return status;                                                              \
            }                                                                                           \
        }                                                                                               \
        mlrt_parallel_for(ctx, B * M, 4096 / (N + 1) + 1, scatter_##SUF, g);                            \
        return MLRT_OK;                                                                                 \
    }

DEFINE_PAIR(f32, float, mlrt_sgemm)
DEFINE_PAIR(f64, double, mlrt_dgemm)

/* dst (strides sd over the labels in keep) = sum over the other labels of a * b.
 * in_a / in_b: the labels a and b carry (size > 1).  min_work > 0: return -1
 * without doing anything when B * M * N * K is below it. */
static int contract_pair(const mlrt_context *ctx, const ein_job *j, pair_plan *g, const bool *in_a, const bool *in_b,
                         const bool *keep, int64_t min_work) {
    const mlrt_einsum_params *p = j->p;
    for (int grp = 0; grp < G_COUNT; ++grp) g->n[grp] = 0;
    for (int32_t l = 0; l < p->n_labels; ++l) {
        if (p->sizes[l] <= 1) continue;
        int grp;
        if (keep[l]) grp = in_a[l] && !in_b[l] ? G_M : !in_a[l] && in_b[l] ? G_N : G_BATCH;
        else if (in_a[l] && in_b[l]) grp = G_K;
        else if (in_a[l]) grp = G_SUM_A;
        else if (in_b[l]) grp = G_SUM_B;
        else continue;  /* not in this pair */
        g->labels[grp][g->n[grp]++] = l;
    }
    int64_t total = 0;
    for (int grp = 0; grp < G_COUNT; ++grp) {
        g->size[grp] = 1;
        for (int32_t a = 0; a < g->n[grp]; ++a) g->size[grp] *= p->sizes[g->labels[grp][a]];
        total += g->size[grp];
    }
    int64_t B = g->size[G_BATCH], M = g->size[G_M], N = g->size[G_N], K = g->size[G_K];
    if (min_work > 0 && (B * M * N * K < min_work || K < 4)) return -1;  /* (no overflow: all within the work) */
    size_t es = j->dtype == MLRT_FLOAT ? sizeof(float) : sizeof(double);
    int64_t *tables = malloc((size_t)(3 * total) * sizeof(int64_t));
    char *bufs = malloc((size_t)(B * M * K + B * K * N + B * M * N) * es);
    if (!tables || !bufs) {
        free(tables);
        free(bufs);
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "out of memory for einsum buffers");
    }
    int64_t *t = tables;
    for (int grp = 0; grp < G_COUNT; ++grp) {
        g->ta[grp] = t;
        build_table(t, g->labels[grp], g->n[grp], p->sizes, g->sa);
        g->tb[grp] = t += g->size[grp];
        build_table(t, g->labels[grp], g->n[grp], p->sizes, g->sb);
        g->td[grp] = t += g->size[grp];
        build_table(t, g->labels[grp], g->n[grp], p->sizes, g->sd);
        t += g->size[grp];
    }
    g->ap = bufs;
    g->bp = bufs + (size_t)(B * M * K) * es;
    g->cp = bufs + (size_t)(B * M * K + B * K * N) * es;
    int status = j->dtype == MLRT_FLOAT ? pair_run_f32(ctx, g) : pair_run_f64(ctx, g);
    free(tables);
    free(bufs);
    return status;
}

/* float32 / float64 with two or more inputs: contract left to right, each step
 * keeping the labels Y or a later input needs, into a scratch tensor (the last
 * step into Y).  Two inputs with little work return -1 (the loop nest is faster). */
static int contract_all(const mlrt_context *ctx, const ein_job *j) {
    const mlrt_einsum_params *p = j->p;
    int32_t n_in = (int32_t)p->n_inputs, L = (int32_t)p->n_labels;
    bool has[MAXI][MAXL] = {{false}}, cur[MAXL], keep[MAXL];
    int64_t ystrides[MAXL] = {0}, acc = 1;
    for (int32_t l = (int32_t)p->n_out - 1; l >= 0; --l) {
        ystrides[l] = acc;
        acc *= p->sizes[l];
    }
    double mult = 1.0;  /* summed labels no input carries repeat every term */
    for (int32_t l = 0; l < L; ++l) {
        bool any = false;
        for (int32_t k = 0; k < n_in; ++k) any |= has[k][l] = p->sizes[l] > 1 && p->strides[k * MAXL + l] != 0;
        if (!any && l >= p->n_out && p->sizes[l] > 1) mult *= (double)p->sizes[l];
    }
    pair_plan g = {.a = j->x[0], .mult = 1.0};
    for (int32_t l = 0; l < L; ++l) {
        g.sa[l] = p->strides[l];
        cur[l] = has[0][l];
    }
    void *scratch[2] = {NULL, NULL};
    int status = MLRT_OK;
    for (int32_t k = 1; k < n_in && status == MLRT_OK; ++k) {
        bool last = k == n_in - 1;
        int64_t size = 1;
        for (int32_t l = L - 1; l >= 0; --l) {
            bool later = l < p->n_out;
            for (int32_t m = k + 1; m < n_in; ++m) later |= has[m][l];
            keep[l] = (cur[l] || has[k][l]) && later;
            g.sb[l] = p->strides[k * MAXL + l];
            if (last) {
                g.sd[l] = ystrides[l];
            } else {
                g.sd[l] = keep[l] ? size : 0;
                if (keep[l]) size *= p->sizes[l];
            }
        }
        if (last) {
            for (int32_t l = 0; l < (int32_t)p->n_out; ++l) keep[l] = true;
            g.dst = j->y;
            g.mult = mult;
        } else {
            size_t es = j->dtype == MLRT_FLOAT ? sizeof(float) : sizeof(double);
            free(scratch[k % 2]);
            if (!(scratch[k % 2] = malloc((size_t)size * es))) {
                status = mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "out of memory for einsum intermediates");
                break;
            }
            g.dst = scratch[k % 2];
        }
        g.b = j->x[k];
        status = contract_pair(ctx, j, &g, cur, has[k], keep, n_in == 2 ? GEMM_MIN_WORK : 0);
        /* the result is the next step's first operand */
        g.a = g.dst;
        for (int32_t l = 0; l < L; ++l) {
            g.sa[l] = g.sd[l];
            cur[l] = keep[l] && p->sizes[l] > 1;
        }
    }
    free(scratch[0]);
    free(scratch[1]);
    return status;
}

static int k_einsum(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_einsum_params, p, params, params_size);
    MLRT_CHECK(n_out == 1 && n_in >= 1 && n_in <= MAXI && p->n_inputs == n_in, "expects 1 to 8 inputs and 1 output");
    MLRT_CHECK(p->n_labels >= 0 && p->n_labels <= MAXL && p->n_out >= 0 && p->n_out <= p->n_labels &&
                   p->n_out <= MLRT_MAX_RANK,
               "bad label counts");
    int32_t dtype = in[0].dtype;
    mlrt_range_fn nest = nest_for(dtype);
    if (!nest) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "element type %d not supported", dtype);
    const mlrt_tensor *y = &out[0];
    MLRT_CHECK(y->dtype == dtype && mlrt_is_contiguous(y) && y->rank == p->n_out, "Y does not match the labels");
    int64_t work = 1;
    bool empty = false;
    for (int32_t l = 0; l < p->n_labels; ++l) {
        MLRT_CHECK(p->sizes[l] >= 0, "negative label size");
        if (l < p->n_out) MLRT_CHECK(y->shape[l] == p->sizes[l], "Y's dim %d is not its label's size", l);
        if (p->sizes[l] == 0) empty = true;
        else MLRT_CHECK(!__builtin_mul_overflow(work, p->sizes[l], &work), "einsum work overflows");
    }
    ein_job job = {.p = p, .y = y->data, .dtype = dtype};
    for (int32_t k = 0; k < n_in; ++k) {
        MLRT_CHECK(in[k].dtype == dtype && mlrt_is_contiguous(&in[k]), "inputs must be contiguous and of one type");
        int64_t reach = 0;
        for (int32_t l = 0; l < p->n_labels; ++l) {
            int64_t s = p->strides[k * MAXL + l];
            MLRT_CHECK(s >= 0, "negative stride");
            if (p->sizes[l] > 0) reach += (p->sizes[l] - 1) * s;
        }
        MLRT_CHECK(empty || reach < mlrt_numel(&in[k]), "input %d is smaller than its labels reach", k);
        job.x[k] = in[k].data;
    }
    int64_t n_y = mlrt_numel(y);
    if (n_y == 0) return MLRT_OK;
    if (empty) {  /* a summed label of size 0: every sum is empty */
        memset(y->data, 0, (size_t)n_y * mlrt_dtype_size(dtype));
        return MLRT_OK;
    }
    /* summed labels of size > 1, the largest innermost */
    int32_t best = -1;
    for (int32_t l = (int32_t)p->n_out; l < p->n_labels; ++l)
        if (p->sizes[l] > 1 && (best < 0 || p->sizes[l] > p->sizes[best])) best = l;
    for (int32_t l = (int32_t)p->n_out; l < p->n_labels; ++l)
        if (p->sizes[l] > 1 && l != best) job.order[job.n_sum++] = l;
    if (best >= 0) job.order[job.n_sum++] = best;
    if (n_in >= 2 && (dtype == MLRT_FLOAT || dtype == MLRT_DOUBLE)) {
        int status = contract_all(ctx, &job);
        if (status >= 0) return status;
    }
    mlrt_parallel_for(ctx, n_y, 65536 / (work / n_y + 1) + 1, nest, &job);
    return MLRT_OK;
}

MLRT_KERNEL(einsum, "Einsum", "", 12, MLRT_OPSET_MAX,
            MLRT_MASK_NUMERIC | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16), k_einsum);

/* qlinear.c -- MatMulInteger and QLinearMatMul on the integer product (src/qgemm.h);
 * ConvInteger and QLinearConv are in qlinear_conv.c and qlinear_depthwise.c.
 *
 * Per batch, C (M x N) = (A - a_zp) @ (B - b_zp) in int32 (wrapping, as "accumulation may
 * overflow if and only if in 32 bits"): A is the product's L (packed per call, as int8),
 * B its R (by panels of 64 columns, as uint8: packed once by mlrt_qmatmul_pack_b when the
 * plan has a constant B, passed as one more input named by params.packed_b, else here
 * per call), the zero points and the requantization in the product's finish.  QLinearMatMul requantizes as qgemm.h says:
 * multiplier = (float)(a_scale * b_scale) / y_scale in float32 (float16 / bfloat16 scales
 * converted to float32 first), y = saturate(round_half_even(float(acc) * multiplier) + y_zp).
 *
 * Operands come as views broadcast to a common batch shape (numpy.matmul); zero points
 * and scales as views of their operand's shape: per tensor, per row of a, per column
 * of b.  Zero points per row of a and per column of b at once, or scales per row and per
 * column at once, take a second, element-by-element pass after the product. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "gemm.h"
#include "qgemm.h"
#include "qlinear.h"

#define NR MLRT_QGEMM_NR
#define MR MLRT_QGEMM_MR

static bool ql_is_8bit(int32_t t) { return t == MLRT_INT8 || t == MLRT_UINT8; }
static bool ql_is_scale(int32_t t) { return t == MLRT_FLOAT || t == MLRT_FLOAT16 || t == MLRT_BFLOAT16; }

static inline int32_t ql_load8(const void *p, int64_t i, int32_t t) {
    return t == MLRT_INT8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

static inline int64_t batch_offset(const mlrt_tensor *t, int32_t R, int64_t b) {
    int64_t off = 0;
    for (int32_t d = R - 3; d >= 0; --d) {
        off += (b % t->shape[d]) * t->strides[d];
        b /= t->shape[d];
    }
    return off;
}

static bool batch_shared(const mlrt_tensor *t, int32_t R) {
    for (int32_t d = 0; d < R - 2; ++d)
        if (t->shape[d] != 1 && t->strides[d] != 0) return false;
    return true;
}

typedef struct qmm_job {
    const mlrt_tensor *A, *B;
    int32_t R;
    int64_t batch, M, N, K, K4, n_panels, nb; /* nb: batches of B packed (1 when shared) */
    int8_t *La;      /* batch x l_bytes: l_size(M, K), or on AMX l_rows_size(M, K) */
    int64_t l_bytes, ru; /* L's bytes per batch; rows of C a block of L holds (MR, AMX: 16) */
    bool amx;
    int32_t *rowsum; /* batch x M */
    uint8_t *Rb;     /* nb x n_panels x K4 * NR * 4 */
    int32_t *colsum; /* nb x N */
    /* the finish, per batch: row arrays (M), column arrays (N), multipliers */
    int32_t *row_add, *row_mul, *col_add, *col_mul;
    float *scale;
    int64_t scale_len;             /* per batch: 1, M or N */
    mlrt_qgemm_out fin;            /* its template (scale mode, zp, type) */
    void *c;                       /* batch x M x N */
    int64_t n_mc, mc_rows;
    atomic_int failed;
} qmm_job;

/* A's rows packed in tasks of PACK_A_PANELS panels of MR rows: task t = b * chunks + chunk */
#define PACK_A_PANELS 8

static int64_t pack_a_chunks(const qmm_job *j) {
    return ((j->M + MR - 1) / MR + PACK_A_PANELS - 1) / PACK_A_PANELS;
}

static void pack_a(void *arg, int64_t begin, int64_t end) {
    qmm_job *j = arg;
    const mlrt_tensor *A = j->A;
    int64_t chunks = pack_a_chunks(j), sm = A->strides[j->R - 2], sk = A->strides[j->R - 1];
    for (int64_t t = begin; t < end; ++t) {
        int64_t b = t / chunks, m0 = t % chunks * PACK_A_PANELS * MR;
        int64_t rows = j->M - m0 < PACK_A_PANELS * MR ? j->M - m0 : PACK_A_PANELS * MR;
        const uint8_t *src = (const uint8_t *)A->data + batch_offset(A, j->R, b) + m0 * sm;
        int8_t *la = j->La + b * j->l_bytes;
        if (j->amx) {
            int64_t row = mlrt_qgemm_row_bytes(j->K);
            mlrt_qgemm_pack_l_rows(src, rows, j->K, sm, sk, A->dtype == MLRT_UINT8, la + m0 * row,
                                   j->rowsum + b * j->M + m0);
            if (m0 + rows == j->M) /* the zero rows up to a multiple of 16 */
                memset(la + j->M * row, 0, (size_t)(j->l_bytes - j->M * row));
        } else {
            mlrt_qgemm_pack_l(src, rows, j->K, sm, sk, A->dtype == MLRT_UINT8, la + m0 / MR * j->K4 * MR * 4,
                              j->rowsum + b * j->M + m0);
        }
    }
}

/* task t = b * n_panels + panel */
static void pack_b(void *arg, int64_t begin, int64_t end) {
    qmm_job *j = arg;
    const mlrt_tensor *B = j->B;
    int64_t sk = B->strides[j->R - 2], sn = B->strides[j->R - 1], K = j->K;
    uint8_t *tmp = NULL;
    if (sn != 1 && !(tmp = mlrt_scratch((size_t)(K * NR + 1)))) {
        atomic_store(&j->failed, 1);
        return;
    }
    for (int64_t t = begin; t < end; ++t) {
        int64_t b = t / j->n_panels, panel = t % j->n_panels, n0 = panel * NR;
        int64_t n = j->N - n0 < NR ? j->N - n0 : NR;
        const uint8_t *src = (const uint8_t *)B->data + batch_offset(B, j->R, b) + n0 * sn;
        uint8_t *dst = j->Rb + t * j->K4 * NR * 4;
        int32_t *cs = j->colsum + b * j->N + n0;
        if (sn != 1) { /* a strided view: its columns gathered first */
            for (int64_t k = 0; k < K; ++k)
                for (int64_t i = 0; i < n; ++i) tmp[k * NR + i] = src[k * sk + i * sn];
            src = tmp, sk = NR;
        }
        mlrt_qgemm_pack_r_rows(src, sk, K, n, B->dtype == MLRT_INT8, dst, cs);
        sk = B->strides[j->R - 2];
    }
}

/* task t = (b * n_panels + panel) * n_mc + chunk */
static void product_tasks(void *arg, int64_t begin, int64_t end) {
    const qmm_job *j = arg;
    size_t esz = mlrt_qgemm_out_size(&j->fin);
    for (int64_t t = begin; t < end; ++t) {
        int64_t mc = t % j->n_mc, r = t / j->n_mc, panel = r % j->n_panels, b = r / j->n_panels;
        int64_t n0 = panel * NR, n = j->N - n0 < NR ? j->N - n0 : NR, m0 = mc * j->mc_rows;
        int64_t mrows = j->M - m0 < j->mc_rows ? j->M - m0 : j->mc_rows, bb = j->nb == 1 ? 0 : b;
        if (mrows <= 0) continue;
        mlrt_qgemm_out o = j->fin;
        o.row_add = j->row_add ? j->row_add + b * j->M + m0 : NULL;
        o.col_add = j->col_add ? j->col_add + b * j->N + n0 : NULL;
        o.row_mul = j->row_mul ? j->row_mul + b * j->M + m0 : NULL;
        o.col_mul = j->col_mul ? j->col_mul + b * j->N + n0 : NULL;
        if (o.scale) o.scale = j->scale + b * j->scale_len + (o.scale_mode == MLRT_QSCALE_ROW ? m0 :
                                                              o.scale_mode == MLRT_QSCALE_COL ? n0 : 0);
        if (o.fbias) o.fbias += n0; /* (by column) */
        o.c = (char *)j->c + (size_t)((b * j->M + m0) * j->N + n0) * esz;
        o.ldc = j->N;
        const uint8_t *rp = j->Rb + (bb * j->n_panels + panel) * j->K4 * NR * 4;
        if (j->amx)
            mlrt_qgemm_panel_amx(j->La + b * j->l_bytes + m0 * mlrt_qgemm_row_bytes(j->K), mrows, j->K, rp, n, &o);
        else
            mlrt_qgemm_panel(j->La + b * j->l_bytes + (m0 / MR) * j->K4 * MR * 4, mrows, j->K4, rp, n, &o);
    }
}

/* (the AMX kernel's slack after the panels) */
static int64_t packed_b_size(int64_t K, int64_t N) {
    return 4 * N + (N + NR - 1) / NR * ((K + 3) / 4) * NR * 4 + MLRT_QGEMM_R_SLACK;
}

int mlrt_qmatmul_pack_b(int64_t K, int64_t N, int32_t b_type, const void *b, int64_t stride_k, int64_t stride_n,
                        int64_t capacity, int64_t *size, void *packed) {
    MLRT_CHECK(size && K >= 0 && N >= 0 && ql_is_8bit(b_type), "mlrt_qmatmul_pack_b: bad arguments");
    *size = packed_b_size(K, N);
    if (!packed || capacity < *size) return MLRT_OK;
    MLRT_CHECK(b || K * N == 0, "mlrt_qmatmul_pack_b: no B");
    mlrt_tensor B = {.dtype = b_type, .rank = 2, .shape = {K, N}, .strides = {stride_k, stride_n}, .data = (void *)b};
    qmm_job j = {.B = &B, .R = 2, .K = K, .N = N, .K4 = (K + 3) / 4, .n_panels = (N + NR - 1) / NR, .nb = 1,
                 .colsum = packed, .Rb = (uint8_t *)packed + 4 * N};
    atomic_init(&j.failed, 0);
    pack_b(&j, 0, j.n_panels);
    if (atomic_load(&j.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "mlrt_qmatmul_pack_b: no scratch buffer");
    return MLRT_OK;
}

/* What a QLinearMatMul adds to the product: its multipliers by row / column / element
 * (MatMulIntegerToFloat: y_scale 1, float output, and a bias by column). */
typedef struct qmm_scales {
    const mlrt_tensor *As, *Bs;
    float y_scale;
    int32_t zp, lo, hi, out_type;
    const float *fbias;
} qmm_scales;

static float scale_at(const mlrt_tensor *s, int32_t R, int64_t b, int32_t along, int64_t i) {
    return (float)mlrt_load_as_double(s->data, batch_offset(s, R, b) + i * s->strides[along], s->dtype);
}

/* Check the views; y (batch, M, N) = (A - Az) @ (B - Bz), int32 (sc NULL) or requantized. */
static int qmm_run(const mlrt_context *ctx, const char *op, const mlrt_tensor *A, const mlrt_tensor *Az,
                   const mlrt_tensor *B, const mlrt_tensor *Bz, const mlrt_tensor *packed, mlrt_tensor *Y,
                   const qmm_scales *sc) {
    int32_t R = A->rank;
    MLRT_CHECK(R >= 2 && B->rank == R, "%s: A and B must be views of equal rank >= 2", op);
    MLRT_CHECK(ql_is_8bit(A->dtype) && ql_is_8bit(B->dtype), "%s: A and B must be int8 or uint8", op);
    MLRT_CHECK(!Az || (Az->dtype == A->dtype && mlrt_same_shape(Az, A)),
               "%s: A's zero point must be a view of A's type and shape", op);
    MLRT_CHECK(!Bz || (Bz->dtype == B->dtype && mlrt_same_shape(Bz, B)),
               "%s: B's zero point must be a view of B's type and shape", op);
    MLRT_CHECK(mlrt_is_contiguous(Y), "%s: needs a contiguous output", op);
    qmm_job j = {.A = A, .B = B, .R = R, .M = A->shape[R - 2], .K = A->shape[R - 1], .N = B->shape[R - 1], .batch = 1,
                 .c = Y->data};
    atomic_init(&j.failed, 0);
    MLRT_CHECK(B->shape[R - 2] == j.K, "%s: inner dimensions differ (%lld vs %lld)", op, (long long)j.K,
               (long long)B->shape[R - 2]);
    for (int32_t d = 0; d < R - 2; ++d) {
        MLRT_CHECK(A->shape[d] == B->shape[d], "%s: batch dimensions of the views differ", op);
        j.batch *= A->shape[d];
    }
    int64_t M = j.M, N = j.N, K = j.K, batch = j.batch;
    MLRT_CHECK(mlrt_numel(Y) == batch * M * N, "%s: the output has %lld elements, expected %lld", op,
               (long long)mlrt_numel(Y), (long long)(batch * M * N));
    if (batch * M * N == 0) return MLRT_OK;
    bool az_rows = Az && Az->strides[R - 2] != 0 && M > 1, bz_cols = Bz && Bz->strides[R - 1] != 0 && N > 1;
    bool as_rows = sc && sc->As->strides[R - 2] != 0 && M > 1, bs_cols = sc && sc->Bs->strides[R - 1] != 0 && N > 1;
    bool second = (az_rows && bz_cols) || (as_rows && bs_cols); /* an element-by-element pass after */
    if (second && sc && sc->out_type == MLRT_FLOAT)
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT,
                         "%s: a zero point per row of A with one per column of B (or scales so) is not supported", op);
    j.K4 = (K + 3) / 4, j.n_panels = (N + NR - 1) / NR;
    j.nb = batch_shared(B, R) ? 1 : batch;
    if (packed)
        MLRT_CHECK(j.nb == 1 && packed->dtype == MLRT_UINT8 && mlrt_is_contiguous(packed) &&
                       mlrt_numel(packed) == packed_b_size(K, N),
                   "%s: the packed B does not fit B", op);
    j.scale_len = bs_cols ? N : as_rows ? M : 1;
    j.amx = M >= 16 && mlrt_qgemm_amx(); /* (fewer rows would leave most of a 16-row tile empty) */
    j.ru = j.amx ? 16 : MR;
    j.l_bytes = j.amx ? mlrt_qgemm_l_rows_size(M, K) : mlrt_qgemm_l_size(M, K);
    size_t la = (size_t)(batch * j.l_bytes);
    size_t rb = packed ? 0 : (size_t)(j.nb * j.n_panels * j.K4 * NR * 4 + MLRT_QGEMM_R_SLACK);
    size_t ints = (size_t)(batch * M + j.nb * N + 2 * batch * (M + N)), floats = sc ? (size_t)(batch * j.scale_len) : 0;
    size_t accs = second && sc ? (size_t)(batch * M * N) : 0;
    char *buf = malloc(la + rb + (ints + floats + accs) * 4 + 192);
    if (!buf) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate the work space", op);
    int32_t *ip = (int32_t *)buf;
    j.rowsum = ip, ip += batch * M;
    j.colsum = ip, ip += j.nb * N;
    int32_t *ra = ip, *rm = ip + batch * M, *ca = rm + batch * M, *cm = ca + batch * N;
    ip = cm + batch * N;
    j.scale = (float *)ip;
    int32_t *acc = (int32_t *)(j.scale + floats);
    /* L and R on cache lines of their own (a tile's rows are 64-byte lines) */
    j.La = (int8_t *)(((uintptr_t)(acc + accs) + 63) & ~(uintptr_t)63);
    j.Rb = (uint8_t *)(((uintptr_t)(j.La + la) + 63) & ~(uintptr_t)63);
    mlrt_parallel_for(ctx, batch * pack_a_chunks(&j), 1, pack_a, &j);
    if (packed) j.colsum = packed->data, j.Rb = (uint8_t *)packed->data + 4 * N;
    else mlrt_parallel_for(ctx, j.nb * j.n_panels, 1, pack_b, &j);
    if (atomic_load(&j.failed)) {
        free(buf);
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate a scratch buffer", op);
    }
    /* the finish: v = acc - bz' (rowsum - K az') - az' colsum (canonical zero points) */
    int32_t a_shift = A->dtype == MLRT_UINT8 ? -128 : 0, b_shift = B->dtype == MLRT_INT8 ? 128 : 0;
    for (int64_t b = 0; b < batch; ++b) {
        int64_t oa = Az ? batch_offset(Az, R, b) : 0, ob = Bz ? batch_offset(Bz, R, b) : 0, bb = j.nb == 1 ? 0 : b;
        for (int64_t m = 0; m < M; ++m) {
            int32_t az = (Az ? ql_load8(Az->data, oa + m * Az->strides[R - 2], Az->dtype) : 0) + a_shift;
            uint32_t rA = (uint32_t)j.rowsum[b * M + m] - (uint32_t)K * (uint32_t)az;
            int32_t bz0 = (Bz ? ql_load8(Bz->data, ob, Bz->dtype) : 0) + b_shift;
            ra[b * M + m] = bz_cols ? 0 : (int32_t)(0u - (uint32_t)bz0 * rA);
            rm[b * M + m] = bz_cols ? (int32_t)rA : (int32_t)(0u - (uint32_t)az); /* (az: used when !bz_cols) */
        }
        int32_t az0 = (Az ? ql_load8(Az->data, oa, Az->dtype) : 0) + a_shift;
        for (int64_t n = 0; n < N; ++n) {
            int32_t bz = (Bz ? ql_load8(Bz->data, ob + n * Bz->strides[R - 1], Bz->dtype) : 0) + b_shift;
            uint32_t cs = (uint32_t)j.colsum[bb * N + n];
            ca[b * N + n] = az_rows ? 0 : (int32_t)(0u - (uint32_t)az0 * cs);
            cm[b * N + n] = bz_cols ? (int32_t)(0u - (uint32_t)bz) : (int32_t)cs;
        }
    }
    j.row_add = bz_cols ? NULL : ra, j.col_add = az_rows ? NULL : ca;
    j.row_mul = bz_cols || az_rows ? rm : NULL, j.col_mul = j.row_mul ? cm : NULL;
    j.fin.out_type = MLRT_INT32;
    if (sc && !second) {
        j.fin = (mlrt_qgemm_out){.scale = j.scale, .scale_mode = bs_cols ? MLRT_QSCALE_COL : as_rows ? MLRT_QSCALE_ROW
                                                                                            : MLRT_QSCALE_ONE,
                                 .zp = sc->zp, .lo = sc->lo, .hi = sc->hi, .out_type = sc->out_type,
                                 .fbias = sc->fbias, .fbias_col = true, .flo = -INFINITY, .fhi = INFINITY};
        for (int64_t b = 0; b < batch; ++b)
            for (int64_t i = 0; i < j.scale_len; ++i)
                j.scale[b * j.scale_len + i] = mlrt_requant_multiplier(
                    scale_at(sc->As, R, b, R - 2, bs_cols ? 0 : i), scale_at(sc->Bs, R, b, R - 1, bs_cols ? i : 0),
                    sc->y_scale);
    }
    if (second && sc) j.c = acc;
    int64_t mpanels = (M + j.ru - 1) / j.ru, outer = batch * j.n_panels, want = 4 * (int64_t)mlrt_ctx_threads(ctx);
    j.n_mc = outer >= want ? 1 : (want + outer - 1) / outer;
    j.n_mc = j.n_mc > mpanels ? mpanels : j.n_mc < 1 ? 1 : j.n_mc;
    j.mc_rows = (mpanels + j.n_mc - 1) / j.n_mc * j.ru;
    j.n_mc = (M + j.mc_rows - 1) / j.mc_rows;
    mlrt_parallel_for(ctx, outer * j.n_mc, 1, product_tasks, &j);
    mlrt_note_path(j.amx ? "qgemm/amx" : "qgemm/tiles");
    if (second) { /* the term the product could not take, - az'[m] * colsum[n], then any scales */
        int32_t *v = sc ? acc : Y->data;
        for (int64_t b = 0; b < batch; ++b) {
            int64_t oa = Az ? batch_offset(Az, R, b) : 0, bb = j.nb == 1 ? 0 : b;
            for (int64_t m = 0; m < M; ++m) {
                int32_t az = (Az ? ql_load8(Az->data, oa + m * Az->strides[R - 2], Az->dtype) : 0) + a_shift;
                for (int64_t n = 0; n < N; ++n) {
                    int64_t i = (b * M + m) * N + n;
                    if (az_rows && bz_cols) v[i] = (int32_t)((uint32_t)v[i] - (uint32_t)az * (uint32_t)j.colsum[bb * N + n]);
                    if (!sc) continue;
                    float mult = mlrt_requant_multiplier(scale_at(sc->As, R, b, R - 2, m),
                                                         scale_at(sc->Bs, R, b, R - 1, n), sc->y_scale);
                    int32_t q = mlrt_requantize(v[i], mult, sc->zp, sc->lo, sc->hi);
                    if (sc->out_type == MLRT_UINT8) ((uint8_t *)Y->data)[i] = (uint8_t)q;
                    else ((int8_t *)Y->data)[i] = (int8_t)q;
                }
            }
        }
    }
    free(buf);
    return MLRT_OK;
}

int mlrt_qmatmul_float(const mlrt_context *ctx, const char *op, const mlrt_tensor *A, const mlrt_tensor *Az,
                       const mlrt_tensor *B, const mlrt_tensor *Bz, const mlrt_tensor *packed, float a_scale,
                       const mlrt_tensor *Bs, const float *bias, mlrt_tensor *Y) {
    MLRT_CHECK(Y->dtype == MLRT_FLOAT && Bs->dtype == MLRT_FLOAT, "%s: needs a float output and float scales", op);
    mlrt_tensor As = *A; /* a_scale as a view of A's shape */
    As.dtype = MLRT_FLOAT, As.data = &a_scale;
    for (int32_t d = 0; d < As.rank; ++d) As.strides[d] = 0;
    /* (y_scale 1: x / 1.0f is x, so the multiplier is a_scale * b_scale) */
    qmm_scales sc = {&As, Bs, 1.0f, 0, 0, 0, MLRT_FLOAT, bias};
    return qmm_run(ctx, op, A, Az, B, Bz, packed, Y, &sc);
}

/* The packed B named by params (NULL params: none), and the node's inputs before it. */
static int packed_input(const char *op, const void *params, size_t params_size, const mlrt_tensor *in, int32_t *n_in,
                        int32_t lo, const mlrt_tensor **packed) {
    *packed = NULL;
    if (!params) return MLRT_OK;
    MLRT_PARAMS(mlrt_qmatmul_params, p, params, params_size);
    MLRT_CHECK(p->packed_b == 0 || (p->packed_b >= lo && p->packed_b == *n_in - 1), "%s: packed B at input %lld of %d",
               op, (long long)p->packed_b, *n_in);
    if (p->packed_b) *packed = &in[p->packed_b], *n_in = (int32_t)p->packed_b;
    return MLRT_OK;
}

/* inputs: A, B, a_zero_point (optional), b_zero_point (optional) [, packed B]; output: Y (int32) */
static int k_matmulinteger(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                           int32_t n_out, const void *params, size_t params_size) {
    const mlrt_tensor *packed;
    int status = packed_input("MatMulInteger", params, params_size, in, &n_in, 2, &packed);
    if (status) return status;
    MLRT_CHECK(n_in >= 2 && n_in <= 4 && n_out == 1, "MatMulInteger: expects 2 to 4 inputs and 1 output");
    const mlrt_tensor *az = n_in > 2 && mlrt_present(&in[2]) ? &in[2] : NULL;
    const mlrt_tensor *bz = n_in > 3 && mlrt_present(&in[3]) ? &in[3] : NULL;
    MLRT_CHECK(out[0].dtype == MLRT_INT32, "MatMulInteger: the output must be int32");
    return qmm_run(ctx, "MatMulInteger", &in[0], az, &in[1], bz, packed, &out[0], NULL);
}

/* inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point [, packed B]; output: y */
static int k_qlinearmatmul(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                           int32_t n_out, const void *params, size_t params_size) {
    const mlrt_tensor *packed;
    int status = packed_input("QLinearMatMul", params, params_size, in, &n_in, 8, &packed);
    if (status) return status;
    MLRT_CHECK(n_in == 8 && n_out == 1, "QLinearMatMul: expects 8 inputs and 1 output");
    const mlrt_tensor *A = &in[0], *As = &in[1], *B = &in[3], *Bs = &in[4], *Ys = &in[6];
    const mlrt_tensor *Az = mlrt_present(&in[2]) ? &in[2] : NULL, *Bz = mlrt_present(&in[5]) ? &in[5] : NULL;
    const mlrt_tensor *Yz = mlrt_present(&in[7]) ? &in[7] : NULL;
    mlrt_tensor *Y = &out[0];
    MLRT_CHECK(ql_is_8bit(Y->dtype) && (!Yz || Yz->dtype == Y->dtype),
               "QLinearMatMul: y must be int8 or uint8, of its zero point's type");
    MLRT_CHECK(ql_is_scale(As->dtype) && Bs->dtype == As->dtype && Ys->dtype == As->dtype,
               "QLinearMatMul: the scales must share one float type");
    MLRT_CHECK(mlrt_same_shape(As, A) && mlrt_same_shape(Bs, B),
               "QLinearMatMul: scales must be views of their operand's shape");
    MLRT_CHECK(mlrt_numel(Ys) == 1 && (!Yz || mlrt_numel(Yz) == 1),
               "QLinearMatMul: y_scale and y_zero_point must be scalars");
    qmm_scales sc = {As, Bs, (float)mlrt_load_as_double(Ys->data, 0, Ys->dtype), Yz ? ql_load8(Yz->data, 0, Yz->dtype) : 0,
                     Y->dtype == MLRT_INT8 ? -128 : 0, Y->dtype == MLRT_INT8 ? 127 : 255, Y->dtype, NULL};
    return qmm_run(ctx, "QLinearMatMul", A, Az, B, Bz, packed, Y, &sc);
}

#define MASK_8BIT (MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_UINT8))

MLRT_KERNEL(matmulinteger, "MatMulInteger", "", 10, MLRT_OPSET_MAX, MASK_8BIT, k_matmulinteger);
MLRT_KERNEL(qlinearmatmul, "QLinearMatMul", "", 10, MLRT_OPSET_MAX, MASK_8BIT, k_qlinearmatmul);

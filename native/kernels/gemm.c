/* gemm.c (kernels) -- Gemm and MatMul.
 *
 * Gemm: Y = alpha * op(A) op(B) + beta * C, A and B 2-D, C a view of Y's shape
 * (broadcast by the Python semantics, stride 0 where it repeats).
 * MatMul: A and B arrive as views of rank R = batch rank + 2 with the broadcast batch
 * shape (stride 0 on repeated dims; 1-D operands already made (1, K) / (K, 1));
 * Y is contiguous with batch * M * N elements.
 * Floats go to the BLAS core (src/gemm.c); integer types use plain loops.
 * com.microsoft FusedGemm (Gemm, then FusedConv's activations) and FusedMatMul (alpha and
 * transposes of MatMul), as onnxruntime's. */
#include <string.h>

#include "conv.h"
#include "gemm.h"
#include "gemm_params.h"
#include "sgemm.h"

/* ---- integer products (plain loops, wrapping like numpy) ------------------------------------ */

typedef struct int_mm_job {
    const void *A, *B;
    void *Y;
    int64_t M, N, K;
    int64_t sa_m, sa_k, sb_k, sb_n; /* element strides of A (rows, cols) and B (rows, cols) */
    int64_t a_batch[MLRT_MAX_RANK], b_batch[MLRT_MAX_RANK], batch_shape[MLRT_MAX_RANK];
    int32_t batch_rank;
    int32_t dtype;
} int_mm_job;

static void int_mm_offsets(const int_mm_job *j, int64_t b, int64_t *oa, int64_t *ob) {
    *oa = 0, *ob = 0;
    for (int32_t d = j->batch_rank - 1; d >= 0; --d) {
        int64_t i = b % j->batch_shape[d];
        b /= j->batch_shape[d];
        *oa += i * j->a_batch[d];
        *ob += i * j->b_batch[d];
    }
}

#define DEFINE_INT_MM(T, NAME)                                                                  \
    static void int_mm_rows_##NAME(void *arg, int64_t begin, int64_t end) {                     \
        const int_mm_job *j = arg;                                                              \
        for (int64_t r = begin; r < end; ++r) { /* r = batch * M + row */                       \
            int64_t b = r / j->M, i = r % j->M, oa, ob;                                         \
            int_mm_offsets(j, b, &oa, &ob);                                                     \
            const T *a = (const T *)j->A + oa + i * j->sa_m;                                    \
            const T *bm = (const T *)j->B + ob;                                                 \
            T *y = (T *)j->Y + r * j->N;                                                        \
            for (int64_t n = 0; n < j->N; ++n) y[n] = 0;                                        \
            for (int64_t k = 0; k < j->K; ++k) {                                                \
                T av = a[k * j->sa_k];                                                          \
                const T *brow = bm + k * j->sb_k;                                               \
                for (int64_t n = 0; n < j->N; ++n) y[n] = (T)(y[n] + av * brow[n * j->sb_n]);   \
            }                                                                                   \
        }                                                                                       \
    }
DEFINE_INT_MM(int32_t, i32)
DEFINE_INT_MM(int64_t, i64)
DEFINE_INT_MM(uint32_t, u32)
DEFINE_INT_MM(uint64_t, u64)

static mlrt_range_fn int_mm_fn(int32_t dtype) {
    switch (dtype) {
    case MLRT_INT32: return int_mm_rows_i32;
    case MLRT_INT64: return int_mm_rows_i64;
    case MLRT_UINT32: return int_mm_rows_u32;
    case MLRT_UINT64: return int_mm_rows_u64;
    default: return NULL;
    }
}

/* The batch dims of a product's views (all but the last two, equal in A and B) into j,
 * their product into *batch; Y must hold batch * M * N elements. */
static int mm_batch_views(int_mm_job *j, const mlrt_tensor *A, const mlrt_tensor *B, const mlrt_tensor *Y, int64_t M,
                      int64_t N, int64_t *batch) {
    int32_t R = A->rank;
    *batch = 1;
    for (int32_t d = 0; d < R - 2; ++d) {
        MLRT_CHECK(B->shape[d] == A->shape[d], "batch dimensions of the views differ");
        j->batch_shape[d] = A->shape[d];
        j->a_batch[d] = A->strides[d];
        j->b_batch[d] = B->strides[d];
        *batch *= A->shape[d];
    }
    MLRT_CHECK(mlrt_numel(Y) == *batch * M * N, "Y has %lld elements, expected %lld", (long long)mlrt_numel(Y),
               (long long)(*batch * M * N));
    return MLRT_OK;
}

static void int_mm_run(const mlrt_context *ctx, int_mm_job *j, int64_t batch) {
    int64_t rows = batch * j->M;
    int64_t per_row = j->N * (j->K + 1);
    int64_t grain = per_row >= (1 << 17) ? 1 : (1 << 17) / (per_row + 1) + 1;
    mlrt_parallel_for(ctx, rows, grain, int_mm_fn(j->dtype), j);
}

/* ---- Gemm ------------------------------------------------------------------------------------- */

typedef struct fill_job {
    const void *C;
    void *Y;
    int64_t N, s0, s1;
    double beta;
    int32_t dtype;
} fill_job;

/* Y[i, :] = beta * C[i, :] (the bias term, before the product is added). */
static void fill_rows(void *arg, int64_t begin, int64_t end) {
    const fill_job *j = arg;
    for (int64_t i = begin; i < end; ++i) {
        if (j->dtype == MLRT_FLOAT) {
            const float *c = (const float *)j->C + i * j->s0;
            float *y = (float *)j->Y + i * j->N, beta = (float)j->beta;
            for (int64_t n = 0; n < j->N; ++n) y[n] = beta * c[n * j->s1];
        } else {
            const double *c = (const double *)j->C + i * j->s0;
            double *y = (double *)j->Y + i * j->N;
            for (int64_t n = 0; n < j->N; ++n) y[n] = j->beta * c[n * j->s1];
        }
    }
}

/* Integer Gemm epilogue: y = alpha * y + beta * c, computed in double unless exact. */
#define DEFINE_INT_EPILOGUE(T, NAME)                                                                        \
    static void int_epilogue_##NAME(T *y, const T *c, int64_t M, int64_t N, int64_t s0, int64_t s1,          \
                                    double alpha, double beta) {                                            \
        bool exact = alpha == 1.0 && (c == NULL || beta == 1.0);                                            \
        for (int64_t i = 0; i < M; ++i)                                                                     \
            for (int64_t n = 0; n < N; ++n) {                                                               \
                T *v = &y[i * N + n];                                                                       \
                if (exact) {                                                                                \
                    if (c) *v = (T)(*v + c[i * s0 + n * s1]);                                               \
                } else {                                                                                    \
                    *v = (T)(alpha * (double)*v + (c ? beta * (double)c[i * s0 + n * s1] : 0.0));           \
                }                                                                                           \
            }                                                                                               \
    }
DEFINE_INT_EPILOGUE(int32_t, i32)
DEFINE_INT_EPILOGUE(int64_t, i64)
DEFINE_INT_EPILOGUE(uint32_t, u32)
DEFINE_INT_EPILOGUE(uint64_t, u64)

static int k_gemm(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                  const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_gemm_params, p, params, params_size);
    int64_t bt = p->b_transposed; /* the node's inputs come before it */
    MLRT_CHECK(bt == 0 || (bt >= 2 && bt == n_in - 1), "Gemm: B made over at input %lld of %d", (long long)bt, n_in);
    int32_t n_node = bt ? (int32_t)bt : n_in;
    MLRT_CHECK((n_node == 2 || n_node == 3) && n_out == 1, "expects 2 or 3 inputs and 1 output");
    const mlrt_tensor *A = &in[0], *B = &in[1], *C = n_node == 3 && mlrt_present(&in[2]) ? &in[2] : NULL;
    mlrt_tensor *Y = &out[0];
    MLRT_CHECK(A->rank == 2 && B->rank == 2 && Y->rank == 2, "A, B and Y must be 2-D");
    MLRT_CHECK(A->dtype == Y->dtype && B->dtype == Y->dtype && (!C || C->dtype == Y->dtype),
               "operand types differ");
    MLRT_CHECK(mlrt_is_contiguous(A) && mlrt_is_contiguous(B) && mlrt_is_contiguous(Y), "needs contiguous A, B, Y");
    bool ta = p->trans_a != 0, tb = p->trans_b != 0;
    const float *strips = NULL; /* B packed in strips */
    if (bt && in[bt].rank == 1) {
        const mlrt_tensor *T = &in[bt];
        int64_t K = B->shape[tb ? 1 : 0], N = B->shape[tb ? 0 : 1], want = mlrt_gemm_packed_b_size(K, N);
        MLRT_CHECK(T->dtype == MLRT_FLOAT && B->dtype == MLRT_FLOAT && mlrt_is_contiguous(T) && want > 0 &&
                       T->shape[0] == want,
                   "Gemm: packed B must be %lld float32 values, got %lld", (long long)want, (long long)T->shape[0]);
        strips = T->data, tb = false;
    } else if (bt) { /* B (N x K) read as its transpose, made once: (K x N), not transposed */
        const mlrt_tensor *T = &in[bt];
        MLRT_CHECK(tb && T->dtype == B->dtype && T->rank == 2 && mlrt_is_contiguous(T) && T->shape[0] == B->shape[1] &&
                       T->shape[1] == B->shape[0],
                   "Gemm: B^T must be a contiguous %lld x %lld tensor of B's type", (long long)B->shape[1],
                   (long long)B->shape[0]);
        B = T, tb = false;
    }
    int64_t M = A->shape[ta ? 1 : 0], K = A->shape[ta ? 0 : 1];
    bool b_rows_n = strips ? p->trans_b != 0 : tb; /* B's stored shape is N x K */
    int64_t Kb = B->shape[b_rows_n ? 1 : 0], N = B->shape[b_rows_n ? 0 : 1];
    MLRT_CHECK(K == Kb, "inner dimensions differ (%lld vs %lld)", (long long)K, (long long)Kb);
    MLRT_CHECK(Y->shape[0] == M && Y->shape[1] == N, "Y must be %lld x %lld", (long long)M, (long long)N);
    MLRT_CHECK(!C || (C->rank == 2 && C->shape[0] == M && C->shape[1] == N),
               "C must be a view of Y's shape");
    if (M == 0 || N == 0) return MLRT_OK;
    int64_t lda = A->shape[1], ldb = B->shape[1];
    if (Y->dtype == MLRT_FLOAT || Y->dtype == MLRT_DOUBLE) {
        if (C) {
            fill_job fj = {C->data, Y->data, N, C->strides[0], C->strides[1], p->beta, Y->dtype};
            mlrt_parallel_for(ctx, M, N >= (1 << 17) ? 1 : (1 << 17) / N + 1, fill_rows, &fj);
        }
        if (strips) {
            mlrt_note_path(MLRT_PATH("sgemm"));
            return mlrt_sgemm_strips_b(ctx, ta, M, N, K, (float)p->alpha, A->data, lda, strips, C ? 1.0f : 0.0f,
                                       Y->data, N);
        }
        if (Y->dtype == MLRT_FLOAT)
            return mlrt_sgemm(ctx, ta, tb, M, N, K, (float)p->alpha, A->data, lda, B->data, ldb, C ? 1.0f : 0.0f,
                              Y->data, N);
        return mlrt_dgemm(ctx, ta, tb, M, N, K, p->alpha, A->data, lda, B->data, ldb, C ? 1.0 : 0.0, Y->data, N);
    }
    mlrt_range_fn fn = int_mm_fn(Y->dtype);
    if (!fn) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "Gemm: element type %d not supported", Y->dtype);
    int_mm_job j = {A->data, B->data, Y->data, M, N, K, ta ? 1 : lda, ta ? lda : 1, tb ? 1 : ldb, tb ? ldb : 1,
                    {0}, {0}, {0}, 0, Y->dtype};
    int_mm_run(ctx, &j, 1);
    int64_t s0 = C ? C->strides[0] : 0, s1 = C ? C->strides[1] : 0;
    const void *c = C ? C->data : NULL;
    switch (Y->dtype) {
    case MLRT_INT32: int_epilogue_i32(Y->data, c, M, N, s0, s1, p->alpha, p->beta); break;
    case MLRT_INT64: int_epilogue_i64(Y->data, c, M, N, s0, s1, p->alpha, p->beta); break;
    case MLRT_UINT32: int_epilogue_u32(Y->data, c, M, N, s0, s1, p->alpha, p->beta); break;
    case MLRT_UINT64: int_epilogue_u64(Y->data, c, M, N, s0, s1, p->alpha, p->beta); break;
    }
    return MLRT_OK;
}

#define GEMM_TYPES                                                                                    \
    (MLRT_MASK_FLOATS | MLRT_BIT(MLRT_INT32) | MLRT_BIT(MLRT_INT64) | MLRT_BIT(MLRT_UINT32) |         \
     MLRT_BIT(MLRT_UINT64))
MLRT_KERNEL(gemm, "Gemm", "", 1, MLRT_OPSET_MAX, GEMM_TYPES, k_gemm);

/* ---- MatMul ----------------------------------------------------------------------------------- */

static void mm_batches(void *arg, int64_t begin, int64_t end) {
    const int_mm_job *j = arg;
    for (int64_t b = begin; b < end; ++b) {
        int64_t oa, ob;
        int_mm_offsets(j, b, &oa, &ob);
        if (j->dtype == MLRT_FLOAT)
            mlrt_sgemm(NULL, false, false, j->M, j->N, j->K, 1.0f, (const float *)j->A + oa, j->sa_m,
                       (const float *)j->B + ob, j->sb_k, 0.0f, (float *)j->Y + b * j->M * j->N, j->N);
        else
            mlrt_dgemm(NULL, false, false, j->M, j->N, j->K, 1.0, (const double *)j->A + oa, j->sa_m,
                       (const double *)j->B + ob, j->sb_k, 0.0, (double *)j->Y + b * j->M * j->N, j->N);
    }
}

static int k_matmul(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size) {
    MLRT_CHECK((n_in == 2 || n_in == 3) && n_out == 1, "expects 2 inputs (and B packed) and 1 output");
    const mlrt_tensor *A = &in[0], *B = &in[1];
    mlrt_tensor *Y = &out[0];
    MLRT_CHECK(A->dtype == Y->dtype && B->dtype == Y->dtype, "operand types differ");
    int32_t R = A->rank;
    MLRT_CHECK(R >= 2 && B->rank == R, "A and B must be views of equal rank >= 2");
    MLRT_CHECK(mlrt_is_contiguous(Y), "needs a contiguous Y");
    int64_t M = A->shape[R - 2], K = A->shape[R - 1], N = B->shape[R - 1];
    MLRT_CHECK(B->shape[R - 2] == K, "inner dimensions differ (%lld vs %lld)", (long long)K,
               (long long)B->shape[R - 2]);
    const float *strips = NULL; /* a constant B shared by every batch, packed by mlrt_gemm_pack_b */
    if (n_in == 3) {
        const mlrt_tensor *P = &in[2];
        int64_t want = mlrt_gemm_packed_b_size(K, N);
        MLRT_CHECK(P->rank == 1 && P->dtype == MLRT_FLOAT && Y->dtype == MLRT_FLOAT && mlrt_is_contiguous(P) &&
                       want > 0 && P->shape[0] == want,
                   "MatMul: packed B must be %lld float32 values, got %lld", (long long)want,
                   (long long)(P->rank == 1 ? P->shape[0] : -1));
        strips = P->data;
    }
    int_mm_job j = {A->data, B->data, Y->data, M, N, K, A->strides[R - 2], A->strides[R - 1], B->strides[R - 2],
                    B->strides[R - 1], {0}, {0}, {0}, R - 2, Y->dtype};
    int64_t batch = 1;
    int status = mm_batch_views(&j, A, B, Y, M, N, &batch);
    if (status) return status;
    if (batch == 0 || M == 0 || N == 0) return MLRT_OK;
    if (Y->dtype != MLRT_FLOAT && Y->dtype != MLRT_DOUBLE) {
        if (!int_mm_fn(Y->dtype)) return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "MatMul: element type %d not supported", Y->dtype);
        int_mm_run(ctx, &j, batch);
        return MLRT_OK;
    }
    /* BLAS wants unit column strides; the Python views always give them */
    MLRT_CHECK((j.sa_k == 1 || K == 1) && (j.sb_n == 1 || N == 1), "MatMul views need unit column strides");
    if (K == 1) j.sa_k = 1;
    if (N == 1) j.sb_n = 1;
    if (M == 1 && j.sa_m < K) j.sa_m = K;  /* a single row's stride is never used */
    if (K == 1 && j.sb_k < N) j.sb_k = N;
    /* B shared by every batch and A's batches back to back: one product with batch * M rows */
    bool b_shared = true, a_packed = j.sa_m == K;
    int64_t expect = M * K;
    for (int32_t d = R - 3; d >= 0; --d) {
        if (j.b_batch[d] != 0 && j.batch_shape[d] != 1) b_shared = false;
        if (j.a_batch[d] != expect && j.batch_shape[d] != 1) a_packed = false;
        expect *= j.batch_shape[d];
    }
    if (batch > 1 && b_shared && a_packed) {
        M *= batch;
        batch = 1;
    }
    if (batch == 1) {
        if (strips && b_shared) {
            mlrt_note_path(MLRT_PATH("sgemm"));
            return mlrt_sgemm_strips_b(ctx, false, M, N, K, 1.0f, A->data, j.sa_m, strips, 0.0f, Y->data, N);
        }
        if (Y->dtype == MLRT_FLOAT)
            return mlrt_sgemm(ctx, false, false, M, N, K, 1.0f, A->data, j.sa_m, B->data, j.sb_k, 0.0f, Y->data, N);
        return mlrt_dgemm(ctx, false, false, M, N, K, 1.0, A->data, j.sa_m, B->data, j.sb_k, 0.0, Y->data, N);
    }
    /* the per-batch calls below cannot fail once these hold */
    MLRT_CHECK(M <= INT32_MAX && N <= INT32_MAX && K <= INT32_MAX && j.sa_m <= INT32_MAX && j.sb_k <= INT32_MAX &&
                   j.sa_m >= K && j.sb_k >= N,
               "MatMul: sizes %lld x %lld x %lld exceed the 32-bit BLAS limit", (long long)M, (long long)N, (long long)K);
    /* large products one after another, each over the threads, unless the batches fall on the
     * threads evenly (attention's heads: whole heads per thread, one loop in all) */
    int64_t threads = mlrt_ctx_threads(ctx);
    if ((M * N * K >= (INT64_C(1) << 20) && batch % threads != 0) || batch < threads) {
        for (int64_t b = 0; b < batch; ++b) {
            int64_t oa, ob;
            int_mm_offsets(&j, b, &oa, &ob);
            if (Y->dtype == MLRT_FLOAT)
                mlrt_sgemm(ctx, false, false, M, N, K, 1.0f, (const float *)A->data + oa, j.sa_m,
                           (const float *)B->data + ob, j.sb_k, 0.0f, (float *)Y->data + b * M * N, N);
            else
                mlrt_dgemm(ctx, false, false, M, N, K, 1.0, (const double *)A->data + oa, j.sa_m,
                           (const double *)B->data + ob, j.sb_k, 0.0, (double *)Y->data + b * M * N, N);
        }
        return MLRT_OK;
    }
    if ((double)batch * (double)M * (double)N * (double)K < (double)(INT64_C(1) << 22))
        mm_batches(&j, 0, batch); /* too little work to wake the pool for */
    else
        mlrt_parallel_for(ctx, batch, 1, mm_batches, &j);
    if (Y->dtype == MLRT_FLOAT) /* (the batches ran on the pool's threads: named here) */
        mlrt_note_path(mlrt_cpu_isa() == MLRT_ISA_PORTABLE ? "sgemm/blas" : MLRT_PATH("sgemm"));
    return MLRT_OK;
}

MLRT_KERNEL(matmul, "MatMul", "", 1, MLRT_OPSET_MAX, GEMM_TYPES, k_matmul);

/* ---- com.microsoft FusedGemm: activation(Gemm) ------------------------------------------------ */

static int k_fused_gemm(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                        const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_fused_gemm_params, p, params, params_size);
    MLRT_CHECK(p->activation >= MLRT_CONV_ACT_NONE && p->activation <= MLRT_CONV_ACT_SWISH, "unknown activation %lld",
               (long long)p->activation);
    mlrt_gemm_params g = {p->trans_a, p->trans_b, p->alpha, p->beta, p->b_transposed};
    int rc = k_gemm(ctx, in, n_in, out, n_out, &g, sizeof g);
    if (rc != MLRT_OK) return rc;
    mlrt_tensor *Y = &out[0];
    mlrt_epilogue_f32(Y->data, NULL, Y->shape[0], Y->shape[1], Y->shape[1], NULL, p->activation, p->act_alpha,
                      p->act_beta);
    return MLRT_OK;
}

MLRT_KERNEL(fused_gemm, "FusedGemm", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_BIT(MLRT_FLOAT), k_fused_gemm);

/* ---- com.microsoft FusedMatMul: alpha * A' B' ------------------------------------------------- */

static int k_fused_matmul(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                          int32_t n_out, const void *params, size_t params_size) {
    MLRT_PARAMS(mlrt_fused_matmul_params, p, params, params_size);
    MLRT_CHECK(n_in == 2 && n_out == 1, "expects 2 inputs and 1 output");
    const mlrt_tensor *A = &in[0], *B = &in[1];
    mlrt_tensor *Y = &out[0];
    if (Y->dtype != MLRT_FLOAT && Y->dtype != MLRT_DOUBLE)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "FusedMatMul: element type %d not supported", Y->dtype);
    MLRT_CHECK(A->dtype == Y->dtype && B->dtype == Y->dtype, "operand types differ");
    int32_t R = A->rank;
    MLRT_CHECK(R >= 2 && R <= MLRT_MAX_RANK && B->rank == R, "A and B must be views of equal rank >= 2");
    MLRT_CHECK(mlrt_is_contiguous(Y), "needs a contiguous Y");
    bool ta = p->trans_a != 0, tb = p->trans_b != 0;
    int64_t ar = A->shape[R - 2], ac = A->shape[R - 1], br = B->shape[R - 2], bc = B->shape[R - 1];
    int64_t M = ta ? ac : ar, K = ta ? ar : ac, N = tb ? br : bc;
    MLRT_CHECK((tb ? bc : br) == K, "inner dimensions differ (%lld vs %lld)", (long long)K, (long long)(tb ? bc : br));
    MLRT_CHECK((A->strides[R - 1] == 1 || ac <= 1) && (B->strides[R - 1] == 1 || bc <= 1),
               "FusedMatMul views need unit column strides");
    /* leading dims: the row strides (a single row's is never used, but must cover its columns) */
    int64_t lda = ar <= 1 || A->strides[R - 2] < ac ? (ac > 1 ? ac : 1) : A->strides[R - 2];
    int64_t ldb = br <= 1 || B->strides[R - 2] < bc ? (bc > 1 ? bc : 1) : B->strides[R - 2];
    MLRT_CHECK(ar <= 1 || A->strides[R - 2] >= ac, "A's rows overlap");
    MLRT_CHECK(br <= 1 || B->strides[R - 2] >= bc, "B's rows overlap");
    int_mm_job j = {.batch_rank = R - 2, .dtype = Y->dtype};
    int64_t batch = 1;
    int status = mm_batch_views(&j, A, B, Y, M, N, &batch);
    if (status) return status;
    if (batch == 0 || M == 0 || N == 0) return MLRT_OK;
    size_t es = Y->dtype == MLRT_FLOAT ? sizeof(float) : sizeof(double);
    if (K == 0) {
        memset(Y->data, 0, (size_t)(batch * M * N) * es);
        return MLRT_OK;
    }
    for (int64_t b = 0; b < batch; ++b) {
        int64_t oa, ob;
        int_mm_offsets(&j, b, &oa, &ob);
        int rc = Y->dtype == MLRT_FLOAT
                     ? mlrt_sgemm(ctx, ta, tb, M, N, K, (float)p->alpha, (const float *)A->data + oa, lda,
                                  (const float *)B->data + ob, ldb, 0.0f, (float *)Y->data + b * M * N, N)
                     : mlrt_dgemm(ctx, ta, tb, M, N, K, p->alpha, (const double *)A->data + oa, lda,
                                  (const double *)B->data + ob, ldb, 0.0, (double *)Y->data + b * M * N, N);
        if (rc != MLRT_OK) return rc;
    }
    return MLRT_OK;
}

MLRT_KERNEL(fused_matmul, "FusedMatMul", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_fused_matmul);

/* conv.c -- Conv and FusedConv: 1-D to 6-D, groups (grouped and depthwise), strides,
 * dilations, pads (auto_pad resolved by the Python semantics), optional bias; FusedConv
 * adds Z and an activation.
 *
 * This file checks the operands, picks a path and cuts the work into tasks over the
 * intra-op pool (GEMM runs single-threaded inside the tasks); the paths, sharing
 * src/conv_internal.h, are
 *   - conv_depthwise.c: depthwise 1-D/2-D (one input channel per group), a plane per task;
 *   - conv_direct.c: float32 on AVX2 / AVX-512, 2-D, strides up to 4: the micro-kernels
 *     of src/gemm.c read the (zero-padded) input directly, no patch matrix (not 1 x 1
 *     kernels with 48 filters or more: for those packing is a plain copy that pays; nor
 *     one row of outputs, a 1-D conv's, whose patch rows pack cheaply);
 *   - conv_winograd.c: float32 3 x 3, stride 1, where the plan made Winograd filters;
 *   - conv_fvec.c: float32 on AVX-512, one group, kernels of 2 taps or more, where the
 *     plan made filter vectors: 16 filters of one output in each vector (1-D convs too,
 *     up to 256 outputs);
 *   - conv_gemm.c: the patch columns (im2col) of a tile of output positions, gathered
 *     straight into packed strips for the micro-kernels (float32 on AVX2 / AVX-512;
 *     long 1-D convs in tiles of 256 columns across the threads), or else multiplied
 *     through BLAS.
 * A plan packs a constant float32 W once (mlrt_conv_pack_weights, below: the micro-
 * kernels' panels) and passes it as one more input, named by params.packed_weights; the
 * micro-kernel paths then read only that copy.
 * Tasks are (image, group, column tile, filter block); the tiling is chosen so that
 * the threads get equal shares and each tile's buffer stays bounded.  Every path ends
 * with bias, Z and the activation: in the micro-kernels' store where they know it, else
 * in mlrt_epilogue_* (src/epilogue.c). */
#include "conv.h"
#include "conv_internal.h"
#include "gemm.h"

/* Elements of one im2col tile buffer (per task): bounds memory, keeps tiles warm. */
#define CONV_TILE_ELEMS (INT64_C(1) << 18)
/* Work below which threads cost more than they save: multiply-adds of a GEMM-path
 * conv, and of a depthwise conv; a depthwise chunk of planes holds at least
 * CONV_CHUNK_MIN (small chunks even out the threads' shares). */
#define CONV_PARALLEL_MIN (INT64_C(1) << 20)
#define CONV_DEPTHWISE_MIN (INT64_C(1) << 18)
#define CONV_CHUNK_MIN (INT64_C(1) << 16)
/* A depthwise plane's fixed cost (its padding, its rows' set-up) in multiply-adds: 576
 * planes of 7 x 7 outputs (MobileNetV2's last stride-2 depthwise) took 46 us on one
 * thread, about 80 ns a plane for 441 multiply-adds. */
#define CONV_PLANE_COST 256
/* Output positions per tile of the micro-kernel paths (CONV_KC x tile floats of packed
 * strips, 256 KB, stay in L2). */
#define CONV_STRIP_TILE 256

/* Check X (N, C, in...), W (M, C/G, k...), B (M), Y (N, M, out...) against the params. */
static int conv_setup(const mlrt_conv_params *p, const mlrt_tensor *X, const mlrt_tensor *W, const mlrt_tensor *B,
                      const mlrt_tensor *Y, conv_geom *g) {
    memset(g, 0, sizeof *g);
    int64_t nd = p->n_spatial;
    MLRT_CHECK(nd >= 1 && nd <= CONV_MAX_SPATIAL, "Conv: %lld spatial dimensions (1..6 supported)", (long long)nd);
    MLRT_CHECK(X->rank == nd + 2 && W->rank == nd + 2 && Y->rank == nd + 2, "Conv: X, W, Y must have rank %lld",
               (long long)(nd + 2));
    MLRT_CHECK(W->dtype == X->dtype && Y->dtype == X->dtype && (!B || B->dtype == X->dtype),
               "Conv: operand types differ");
    MLRT_CHECK(mlrt_is_contiguous(X) && mlrt_is_contiguous(W) && mlrt_is_contiguous(Y) && (!B || mlrt_is_contiguous(B)),
               "Conv: needs contiguous tensors");
    g->N = X->shape[0], g->C = X->shape[1], g->M = W->shape[0], g->G = p->group;
    MLRT_CHECK(g->G >= 1 && g->C % g->G == 0 && g->M % g->G == 0, "Conv: group %lld does not divide channels %lld / %lld",
               (long long)g->G, (long long)g->C, (long long)g->M);
    g->Cg = g->C / g->G, g->Mg = g->M / g->G;
    MLRT_CHECK(W->shape[1] == g->Cg, "Conv: W has %lld input channels per group, expected %lld",
               (long long)W->shape[1], (long long)g->Cg);
    MLRT_CHECK(Y->shape[0] == g->N && Y->shape[1] == g->M, "Conv: Y must be (%lld, %lld, ...)", (long long)g->N,
               (long long)g->M);
    MLRT_CHECK(!B || (B->rank == 1 && B->shape[0] == g->M), "Conv: B must have %lld elements", (long long)g->M);
    /* 1-D runs as 2-D with a unit leading dimension */
    int32_t off = nd == 1 ? 1 : 0;
    g->nd = (int32_t)nd + off;
    if (off) {
        g->in[0] = g->k[0] = g->out[0] = g->s[0] = g->d[0] = 1;
        g->pb[0] = 0;
    }
    g->in_size = g->out_size = g->k_size = 1;
    bool unit = true;
    for (int32_t i = 0; i < nd; ++i) {
        int64_t in = X->shape[2 + i], k = W->shape[2 + i], s = p->strides[i], dl = p->dilations[i];
        int64_t pb = p->pads_begin[i], pe = p->pads_end[i];
        MLRT_CHECK(p->kernel[i] == k, "Conv: kernel_shape %lld differs from W's %lld", (long long)p->kernel[i],
                   (long long)k);
        MLRT_CHECK(s >= 1 && dl >= 1 && pb >= 0 && pe >= 0 && k >= 1, "Conv: bad stride, dilation, pad or kernel");
        int64_t span = in + pb + pe - dl * (k - 1) - 1;
        int64_t out = span >= 0 ? span / s + 1 : 0;
        MLRT_CHECK(Y->shape[2 + i] == out, "Conv: output dimension %d is %lld, expected %lld", i,
                   (long long)Y->shape[2 + i], (long long)out);
        g->in[i + off] = in, g->k[i + off] = k, g->out[i + off] = out;
        g->s[i + off] = s, g->d[i + off] = dl, g->pb[i + off] = pb;
        g->in_size *= in, g->out_size *= out, g->k_size *= k;
        unit = unit && k == 1 && s == 1 && pb == 0 && pe == 0;
    }
    g->kdim = g->Cg * g->k_size;
    g->pointwise = unit;
    g->depthwise = g->Cg == 1 && g->G > 1 && g->nd == 2 && !unit; /* (one input channel in all: a plain product) */
    MLRT_CHECK(g->kdim <= INT32_MAX && g->out_size <= INT32_MAX && g->in_size <= INT32_MAX && g->Mg <= INT32_MAX,
               "Conv: sizes exceed the 32-bit BLAS limit");
    return MLRT_OK;
}

/* Cut the work into tasks: whole (image, group) products, then column tiles that
 * bound the im2col buffer, then more tiles (or filter blocks) until the threads get
 * equal shares. */
static void conv_plan(conv_job *j, int64_t threads) {
    const conv_geom *g = &j->g;
    int64_t base = g->N * g->G;
    j->n_tiles = 1, j->n_mblocks = 1, j->mblock = g->Mg;
    int64_t size = j->direct.off ? j->direct.vsize : g->out_size;  /* positions to cover */
    if (j->strip) {
        j->n_tiles = ceil_div(size, CONV_STRIP_TILE);  /* a packed tile stays in L2 */
    } else if (!g->pointwise) {
        int64_t limit = CONV_TILE_ELEMS / g->kdim;
        if (limit < 16) limit = 16;
        j->n_tiles = ceil_div(g->out_size, limit);
    }
    int64_t f = 1;
    while (threads > 1 && (base * j->n_tiles * f) % threads != 0 && base * j->n_tiles * f < 8 * threads) ++f;
    if (f > 1) {
        /* cut the filters where they outweigh a tile's columns: with packed weights each
         * thread then streams its share of them only (and the tile stays whole) */
        int64_t cols = ceil_div(size, j->n_tiles * f); /* per task, if the tiles are cut */
        bool filters = j->wp ? g->Mg >= f * 4 * MLRT_SGEMM_PANEL && g->Mg >= f * cols : cols < 32 && g->Mg >= 2 * f;
        if (filters)
            j->n_mblocks = f;
        else
            j->n_tiles *= f;
    }
    j->tile = ceil_div(size, j->n_tiles);
    int64_t align = 16; /* the kernels' vectors: strips of 16 to 64 columns run equally well */
    if (j->tile > align && j->n_tiles > 1) j->tile = ceil_div(j->tile, align) * align;
    if (j->tile < 1) j->tile = 1;
    j->n_tiles = ceil_div(size, j->tile);
    j->mblock = ceil_div(g->Mg, j->n_mblocks);
    if (j->wp && j->mblock < g->Mg) j->mblock = ceil_div(j->mblock, MLRT_SGEMM_PANEL) * MLRT_SGEMM_PANEL; /* whole panels */
    j->n_mblocks = ceil_div(g->Mg, j->mblock);
}

int mlrt_conv_pack_weights(int64_t group, int64_t filters, int64_t kdim, const float *w, int64_t capacity,
                           int64_t *size, float *packed) {
    MLRT_CHECK(size && group >= 1 && filters >= 0 && filters % group == 0 && kdim >= 0 && kdim <= INT32_MAX &&
                   filters <= INT32_MAX,
               "mlrt_conv_pack_weights: bad sizes (group %lld, filters %lld, kdim %lld)", (long long)group,
               (long long)filters, (long long)kdim);
    int64_t Mg = filters / group, each = mlrt_sgemm_packed_size(Mg, kdim);
    *size = mlrt_cpu_isa() != MLRT_ISA_PORTABLE ? group * each : 0;
    if (*size == 0 || capacity < *size || !packed) return MLRT_OK;
    MLRT_CHECK(w, "mlrt_conv_pack_weights: no weights");
    for (int64_t grp = 0; grp < group; ++grp) mlrt_sgemm_pack_a(w + grp * Mg * kdim, Mg, kdim, kdim, packed + grp * each);
    return MLRT_OK;
}

/* The conv's paths, after conv_setup: *path is set to the one taken (for the profiler). */
static int conv_paths(const mlrt_context *ctx, conv_job *j_, const mlrt_tensor *in, int64_t pk,
                      const mlrt_conv_params *p, const char **path) {
    conv_job j = *j_; /* (tasks read it through &j) */
    int32_t dtype = j.dtype;
    const mlrt_tensor *Z = j.z ? &in[3] : NULL;
    bool B = j.b != NULL;
    int status;
    if (j.g.kdim == 0) { /* no input channels or an empty kernel: bias only */
        *path = "conv/bias-only";
        int64_t planes = j.g.N * j.g.M, S = j.g.out_size;
        for (int64_t t = 0; t < planes; ++t) {
            int64_t m = t % j.g.M;
            if (dtype == MLRT_FLOAT) {
                float *y = (float *)j.y + t * S;
                memset(y, 0, (size_t)S * sizeof(float));
                mlrt_epilogue_f32(y, Z ? (const float *)j.z + t * S : NULL, 1, S, S,
                                  B ? (const float *)j.b + m : NULL, j.activation, j.alpha, j.beta);
            } else {
                double *y = (double *)j.y + t * S;
                for (int64_t i = 0; i < S; ++i) y[i] = 0;
                mlrt_epilogue_f64(y, Z ? (const double *)j.z + t * S : NULL, 1, S, S,
                                  B ? (const double *)j.b + m : NULL, j.activation, j.alpha, j.beta);
            }
        }
        return MLRT_OK;
    }
    if (j.g.depthwise) {
        *path = MLRT_LOOP_PATH("conv/depthwise");
        j.n_tiles = mlrt_conv_depthwise_bands(&j, mlrt_ctx_threads(ctx));
        int64_t tasks = j.g.N * j.g.M * j.n_tiles;
        /* (a small plane costs more than its taps) */
        int64_t work = j.g.out_size * j.g.k_size / j.n_tiles + CONV_PLANE_COST;
        int64_t grain = tasks * work < CONV_DEPTHWISE_MIN ? tasks : CONV_CHUNK_MIN / (work + 1) + 1;
        mlrt_parallel_for(ctx, tasks, grain, mlrt_conv_depthwise_tasks, &j);
        if (atomic_load(&j.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Conv: cannot allocate a padded plane");
        return MLRT_OK;
    }
    j.strip = dtype == MLRT_FLOAT ? mlrt_sgemm_strip_width() : 0;
    MLRT_CHECK(p->winograd >= 0 && p->winograd <= 2, "Conv: unknown packed weights kind %lld", (long long)p->winograd);
    if (p->winograd == 2) { /* W given as filter vectors (conv_fvec.c) */
        const conv_geom *g = &j.g;
        MLRT_CHECK(pk && mlrt_cpu_isa() == MLRT_ISA_AVX512 && dtype == MLRT_FLOAT && g->nd == 2 && g->G == 1 &&
                       g->out_size <= INT32_MAX / 16,
                   "Conv: filter vectors given for a conv that is not float32 2-D with one group on AVX-512");
        const mlrt_tensor *P = &in[pk];
        int64_t want = mlrt_conv_fvec_size(g->M, g->kdim);
        MLRT_CHECK(P->dtype == MLRT_FLOAT && mlrt_is_contiguous(P) && mlrt_numel(P) == want,
                   "Conv: filter vectors of %lld floats, W makes %lld (mlrt_conv_fvec_pack)",
                   (long long)mlrt_numel(P), (long long)want);
        *path = "conv/fvec/avx512";
        return mlrt_conv_fvec(&j, ctx, P->data);
    }
    if (p->winograd) { /* W given as Winograd filters (conv_winograd.c) */
        const conv_geom *g = &j.g;
        MLRT_CHECK(pk && j.strip && dtype == MLRT_FLOAT && g->nd == 2 && g->k[0] == 3 && g->k[1] == 3 &&
                       g->s[0] == 1 && g->s[1] == 1 && g->d[0] == 1 && g->d[1] == 1,
                   "Conv: Winograd filters given for a conv that is not float32 3 x 3 with stride 1 and no dilation");
        const mlrt_tensor *P = &in[pk];
        int64_t want = mlrt_conv_winograd_size(g->G, g->M, g->Cg);
        MLRT_CHECK(P->dtype == MLRT_FLOAT && mlrt_is_contiguous(P) && mlrt_numel(P) == want,
                   "Conv: Winograd filters of %lld floats, W makes %lld (mlrt_conv_winograd_pack)",
                   (long long)mlrt_numel(P), (long long)want);
        *path = MLRT_PATH("conv/winograd");
        return mlrt_conv_winograd(&j, ctx, P->data);
    }
    if (pk && j.strip) {
        const mlrt_tensor *P = &in[pk];
        MLRT_CHECK(P->dtype == MLRT_FLOAT && mlrt_is_contiguous(P) &&
                       mlrt_numel(P) == j.g.G * mlrt_sgemm_packed_size(j.g.Mg, j.g.kdim),
                   "Conv: packed weights of %lld floats, W packs into %lld (mlrt_conv_pack_weights)",
                   (long long)mlrt_numel(P), (long long)(j.g.G * mlrt_sgemm_packed_size(j.g.Mg, j.g.kdim)));
        j.wp = P->data;
    }
    if ((status = mlrt_conv_direct_setup(&j, ctx))) return status;
    double flops = (double)j.g.N * (double)j.g.M * (double)j.g.out_size * (double)j.g.kdim;
    if (j.pool && mlrt_conv_direct_rowwise(&j)) { /* FusedConvMaxPool, fused */
        int64_t tasks = j.g.N * j.pool->bands;
        *path = MLRT_PATH("conv/direct+maxpool");
        if (flops < (double)CONV_PARALLEL_MIN)
            mlrt_conv_direct_pool_tasks(&j, 0, tasks);
        else
            mlrt_parallel_for(ctx, tasks, 1, mlrt_conv_direct_pool_tasks, &j);
        if (atomic_load(&j.failed)) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Conv: cannot allocate a row buffer");
        return MLRT_OK;
    }
    if (j.pool) { /* (not the direct rows: FusedConvMaxPool takes the conv and the pool apart) */
        j_->pool = NULL;
        return MLRT_OK;
    }
    conv_plan(&j, mlrt_ctx_threads(ctx));
    int64_t tasks = j.g.N * j.g.G * j.n_tiles * j.n_mblocks;
    mlrt_range_fn fn = j.direct.off ? mlrt_conv_direct_tasks : j.strip ? mlrt_conv_strip_tasks : mlrt_conv_gemm_tasks;
    *path = j.direct.off ? MLRT_PATH("conv/direct") : j.strip ? MLRT_PATH("conv/strips") : "conv/im2col/blas";
    if (flops < (double)CONV_PARALLEL_MIN)
        fn(&j, 0, tasks);
    else
        mlrt_parallel_for(ctx, tasks, 1, fn, &j);
    if (atomic_load(&j.failed))
        return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "Conv: cannot allocate the im2col buffer (%lld bytes)",
                         (long long)(j.g.kdim * j.tile * (int64_t)mlrt_dtype_size(dtype)));
    return MLRT_OK;
}

/* FusedConvMaxPool: the pool's geometry, and the conv's output (Yc: Y's image and
 * channels, the conv's rows and columns) from X, W and p. */
static int pool_setup(const mlrt_conv_params *p, const mlrt_tensor *X, const mlrt_tensor *W, const mlrt_tensor *Y,
                      mlrt_tensor *Yc, conv_pool *q) {
    MLRT_CHECK(p->n_spatial == 2 && X->rank == 4 && W->rank == 4 && Y->rank == 4,
               "FusedConvMaxPool: 2-D only (X, W and Y of rank 4)");
    MLRT_CHECK(mlrt_is_contiguous(Y), "FusedConvMaxPool: needs a contiguous Y");
    memset(q, 0, sizeof *q);
    *Yc = *Y;
    Yc->data = NULL;
    for (int i = 0; i < 2; ++i) {
        int64_t k = p->pool_kernel[i], s = p->pool_strides[i], pb = p->pool_pads_begin[i];
        MLRT_CHECK(k >= 1 && s >= 1 && pb >= 0 && pb < k, "FusedConvMaxPool: bad pool window %lld, stride %lld or pad %lld",
                   (long long)k, (long long)s, (long long)pb);
        int64_t in = X->shape[2 + i], kc = W->shape[2 + i], dl = p->dilations[i];
        int64_t span = in + p->pads_begin[i] + p->pads_end[i] - dl * (kc - 1) - 1;
        Yc->shape[2 + i] = span >= 0 && p->strides[i] >= 1 ? span / p->strides[i] + 1 : 0; /* (conv_setup checks) */
        q->k[i] = k, q->s[i] = s, q->pb[i] = pb, q->out[i] = Y->shape[2 + i];
    }
    int64_t stride = 1;
    for (int d = 3; d >= 0; --d) Yc->strides[d] = stride, stride *= Yc->shape[d];
    return MLRT_OK;
}

/* The conv itself (FusedConvMaxPool's pool too); *path is set to the path it takes (for
 * the profiler). */
static int conv_run(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                    const void *params, size_t params_size, bool pooled, const char **path) {
    MLRT_PARAMS(mlrt_conv_params, p, params, params_size);
    MLRT_CHECK((p->pool != 0) == pooled, pooled ? "FusedConvMaxPool: params without the pool"
                                                : "Conv: params with a pool (FusedConvMaxPool's)");
    int64_t pk = p->packed_weights; /* the node's inputs come before it */
    MLRT_CHECK(pk == 0 || (pk >= 2 && pk == n_in - 1), "Conv: packed weights at input %lld of %d", (long long)pk,
               n_in);
    int32_t n_node = pk ? (int32_t)pk : n_in;
    MLRT_CHECK(n_node >= 2 && n_node <= 4 && n_out == 1, "Conv: expects 2 to 4 inputs and 1 output");
    const mlrt_tensor *B = n_node >= 3 && mlrt_present(&in[2]) ? &in[2] : NULL;
    const mlrt_tensor *Z = n_node >= 4 && mlrt_present(&in[3]) ? &in[3] : NULL;
    MLRT_CHECK(p->activation >= MLRT_CONV_ACT_NONE && p->activation <= MLRT_CONV_ACT_SWISH,
               "Conv: unknown activation code %lld", (long long)p->activation);
    mlrt_tensor Yc = out[0]; /* the conv's output: Y, or what FusedConvMaxPool's pool reads */
    conv_pool pool;
    int status = p->pool ? pool_setup(p, &in[0], &in[1], &out[0], &Yc, &pool) : MLRT_OK;
    if (status) return status;
    MLRT_CHECK(!p->pool || !Z, "FusedConvMaxPool: no Z");
    conv_job j = {.x = in[0].data, .w = in[1].data, .b = B ? B->data : NULL, .y = out[0].data,
                  .activation = p->activation, .alpha = p->alpha, .beta = p->beta, .z = Z ? Z->data : NULL};
    if ((status = conv_setup(p, &in[0], &in[1], B, &Yc, &j.g))) return status;
    MLRT_CHECK(!Z || (Z->dtype == out[0].dtype && mlrt_same_shape(Z, &out[0]) && mlrt_is_contiguous(Z)),
               "Conv: Z must be a contiguous tensor of Y's shape and type");
    int32_t dtype = out[0].dtype;
    if (dtype != MLRT_FLOAT && dtype != MLRT_DOUBLE)
        return mlrt_fail(MLRT_ERR_NOT_IMPLEMENTED, "Conv: element type %d not supported", dtype);
    if (mlrt_numel(&out[0]) == 0) return MLRT_OK;
    j.dtype = dtype;
    atomic_init(&j.failed, 0);
    if (!p->pool) return conv_paths(ctx, &j, in, pk, p, path);
    if (mlrt_numel(&Yc) == 0) { /* every window empty: 0, as MaxPool's */
        memset(out[0].data, 0, (size_t)mlrt_numel(&out[0]) * mlrt_dtype_size(dtype));
        return MLRT_OK;
    }
    /* FusedConvMaxPool: on the direct rows the pool takes each band's conv rows from a
     * buffer of a few rows (conv_direct.c); elsewhere the conv's whole output is made, then pooled */
    if (dtype == MLRT_FLOAT && p->winograd == 0 && mlrt_sgemm_strip_width() > 0 && !j.g.depthwise &&
        j.g.kdim > 0 && j.g.G == 1 && pool.k[0] <= MLRT_POOL_ROWS_MAX) {
        int64_t threads = mlrt_ctx_threads(ctx), bands = j.g.N >= threads ? 1 : ceil_div(threads, j.g.N);
        pool.bands = bands < pool.out[0] ? bands : pool.out[0];
        j.pool = &pool;
        if ((status = conv_paths(ctx, &j, in, pk, p, path)) || j.pool) return status;
    }
    size_t bytes = (size_t)mlrt_numel(&Yc) * mlrt_dtype_size(dtype);
    Yc.data = mlrt_aligned_alloc(64, bytes + 64);
    if (!Yc.data) return mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "FusedConvMaxPool: cannot allocate the conv's output");
    j.y = Yc.data;
    status = conv_paths(ctx, &j, in, pk, p, path);
    if (!status) status = mlrt_maxpool_2d(ctx, &Yc, &out[0], pool.k, pool.s, pool.pb);
    mlrt_aligned_free(Yc.data);
    return status;
}

static int k_conv(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out, int32_t n_out,
                  const void *params, size_t params_size) {
    const char *path = NULL;
    int status = conv_run(ctx, in, n_in, out, n_out, params, params_size, false, &path);
    mlrt_note_path(path); /* (last: the products inside note their own) */
    return status;
}

static int k_conv_maxpool(const mlrt_context *ctx, const mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                          int32_t n_out, const void *params, size_t params_size) {
    const char *path = NULL;
    int status = conv_run(ctx, in, n_in, out, n_out, params, params_size, true, &path);
    mlrt_note_path(path);
    return status;
}

MLRT_KERNEL(conv, "Conv", "", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_conv);
/* com.microsoft FusedConv (as onnxruntime): activation(Conv(X, W, B) + Z), for fusion passes */
MLRT_KERNEL(fusedconv, "FusedConv", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_conv);
/* com.microsoft FusedConvMaxPool (mlrt's own): MaxPool(FusedConv(...)), for the fusion pass */
MLRT_KERNEL(fusedconvmaxpool, "FusedConvMaxPool", "com.microsoft", 1, MLRT_OPSET_MAX, MLRT_MASK_FLOATS, k_conv_maxpool);

/* kernel_paths.c -- the hot kernels on the instruction set in use, from C alone.
 *
 * Built against the core library by tests/native/test_kernel_paths.py (natively, and for
 * aarch64 by the cross compiler, run under qemu-user) and run once per path the CPU
 * has, chosen by MLRT_ISA: MatMul (matrix-vector, the strip kernels' full and short
 * strips), Gemm with a transposed B, Conv through each of its paths (pointwise, direct
 * with strides and pads, Winograd filters, packed weights, depthwise, groups) and
 * FusedConv with bias, Z and each activation the strip kernels finish, MaxPool,
 * AveragePool, Softmax, Cast through float16 and the element-wise Exp, Sigmoid, Tanh,
 * Erf and Gelu, every result against a float64 reference computed here; and the 8-bit
 * integer product (MatMulInteger, ConvInteger: its tiles, SDOT where the CPU has the
 * dot-product extension), exact against int64 sums.
 * Prints the path that ran ("isa neon"), one line per case, and "ok N" at the end;
 * exits 1 on the first case out of tolerance (naming it and the worst element). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlrt.h"
#include "conv.h"
#include "gemm_params.h"
#include "pool.h"
#include "softmax.h"
#include "normalize.h"
#include "activation.h"
#include "cast.h"
#include "qlinear.h"

static uint64_t seed = 88172645463325252ull;

static float uniform(void) { /* xorshift64: the same values on every platform */
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return (float)((double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static uint8_t random_byte(void) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return (uint8_t)(seed >> 56);
}

static float *random_floats(int64_t n) {
    float *p = malloc((size_t)(n ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; ++i) p[i] = uniform();
    return p;
}

static mlrt_tensor tensor(int32_t rank, const int64_t *shape, void *data) {
    mlrt_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = MLRT_FLOAT, t.rank = rank, t.data = data;
    int64_t stride = 1;
    for (int32_t d = rank - 1; d >= 0; --d) t.shape[d] = shape[d], t.strides[d] = stride, stride *= shape[d];
    return t;
}

static int cases;
static mlrt_threadpool *pool;

/* Runs `op` and compares n outputs with the reference: |y - r| <= tol * (1 + |r|). */
static void run_and_check(const char *name, const char *op, mlrt_tensor *in, int32_t n_in, mlrt_tensor *out,
                          const void *params, size_t size, const double *ref, int64_t n, double tol) {
    int32_t k = mlrt_kernel_find("", op, 17, MLRT_FLOAT);
    if (k < 0) k = mlrt_kernel_find("com.microsoft", op, 1, MLRT_FLOAT);
    if (k < 0) {
        printf("FAIL %s: no kernel %s\n", name, op);
        exit(1);
    }
    int status = mlrt_kernel_run(k, pool, in, n_in, out, 1, params, size);
    if (status != MLRT_OK) {
        printf("FAIL %s: status %d: %s\n", name, status, mlrt_last_error());
        exit(1);
    }
    const float *y = out[0].data;
    int64_t worst = 0;
    double err = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        double e = fabs((double)y[i] - ref[i]) / (1.0 + fabs(ref[i]));
        if (!(e <= err)) err = e, worst = i; /* (NaN counts as worst) */
    }
    if (!(err <= tol)) {
        printf("FAIL %s: element %lld is %.9g, expected %.9g\n", name, (long long)worst, (double)y[worst], ref[worst]);
        exit(1);
    }
    printf("%-64s max error %.2e\n", name, err);
    ++cases;
}

/* ref = alpha * a (M x K) * b, b K x N, or N x K read transposed, in double. */
static double *reference_product(const float *a, const float *b, int64_t M, int64_t K, int64_t N, bool trans_b,
                                 double alpha) {
    double *ref = calloc((size_t)(M * N), sizeof(double));
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double s = 0;
            for (int64_t k = 0; k < K; ++k) s += (double)a[i * K + k] * (trans_b ? b[j * K + k] : b[k * N + j]);
            ref[i * N + j] = alpha * s;
        }
    return ref;
}

static void check_matmul(int64_t M, int64_t K, int64_t N) {
    float *a = random_floats(M * K), *b = random_floats(K * N), *y = calloc((size_t)(M * N), sizeof(float));
    double *ref = reference_product(a, b, M, K, N, false, 1.0);
    int64_t sa[2] = {M, K}, sb[2] = {K, N}, sy[2] = {M, N};
    mlrt_tensor in[2] = {tensor(2, sa, a), tensor(2, sb, b)}, out = tensor(2, sy, y);
    char name[64];
    snprintf(name, sizeof name, "MatMul %lldx%lld * %lldx%lld", (long long)M, (long long)K, (long long)K, (long long)N);
    run_and_check(name, "MatMul", in, 2, &out, NULL, 0, ref, M * N, 1e-5 * sqrt((double)K));
    free(a), free(b), free(y), free(ref);
}

static void check_gemm(int64_t M, int64_t K, int64_t N, double alpha) {
    float *a = random_floats(M * K), *bt = random_floats(N * K), *y = calloc((size_t)(M * N), sizeof(float));
    double *ref = reference_product(a, bt, M, K, N, true, alpha);
    int64_t sa[2] = {M, K}, sb[2] = {N, K}, sy[2] = {M, N};
    mlrt_tensor in[2] = {tensor(2, sa, a), tensor(2, sb, bt)}, out = tensor(2, sy, y);
    mlrt_gemm_params p = {.trans_a = 0, .trans_b = 1, .alpha = alpha, .beta = 0.0};
    char name[64];
    snprintf(name, sizeof name, "Gemm transB %lldx%lldx%lld alpha %g", (long long)M, (long long)K, (long long)N, alpha);
    run_and_check(name, "Gemm", in, 2, &out, &p, sizeof p, ref, M * N, 1e-5 * sqrt((double)K));
    free(a), free(bt), free(y), free(ref);
}

static double activate(double v, int64_t act, double alpha, double beta) {
    switch (act) {
    case MLRT_CONV_ACT_RELU: return v > 0 ? v : 0;
    case MLRT_CONV_ACT_CLIP: return v < alpha ? alpha : v > beta ? beta : v;
    case MLRT_CONV_ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case MLRT_CONV_ACT_HARD_SWISH: {
        double h = alpha * v + beta;
        return v * (h < 0 ? 0 : h > 1 ? 1 : h);
    }
    case MLRT_CONV_ACT_SWISH: return v / (1.0 + exp(-alpha * v));
    default: return v;
    }
}

enum conv_weights { PLAIN, PACKED, WINOGRAD };

/* A 2-D conv (N, C, H, W) * (M, C / G, kh, kw), symmetric pads, optional bias and Z. */
static void check_conv(const char *what, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t G, int64_t kh,
                       int64_t kw, int64_t s, int64_t pad, int64_t dil, bool bias, bool z, int64_t act,
                       enum conv_weights kind) {
    int64_t Cg = C / G, Mg = M / G;
    int64_t OH = (H + 2 * pad - dil * (kh - 1) - 1) / s + 1, OW = (W + 2 * pad - dil * (kw - 1) - 1) / s + 1;
    int64_t nx = N * C * H * W, nw = M * Cg * kh * kw, ny = N * M * OH * OW;
    float *x = random_floats(nx), *w = random_floats(nw), *b = random_floats(M), *zz = random_floats(ny);
    float *y = calloc((size_t)ny, sizeof(float));
    double *ref = calloc((size_t)ny, sizeof(double));
    double alpha = act == MLRT_CONV_ACT_CLIP ? -0.5 : act == MLRT_CONV_ACT_HARD_SWISH ? 1.0 / 6 : 1.0;
    double beta = act == MLRT_CONV_ACT_CLIP ? 0.75 : act == MLRT_CONV_ACT_HARD_SWISH ? 0.5 : 0.0;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t m = 0; m < M; ++m)
            for (int64_t oh = 0; oh < OH; ++oh)
                for (int64_t ow = 0; ow < OW; ++ow) {
                    int64_t g = m / Mg;
                    double sum = bias ? b[m] : 0.0;
                    for (int64_t c = 0; c < Cg; ++c)
                        for (int64_t i = 0; i < kh; ++i)
                            for (int64_t j = 0; j < kw; ++j) {
                                int64_t ih = oh * s - pad + i * dil, iw = ow * s - pad + j * dil;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                sum += (double)x[((n * C + g * Cg + c) * H + ih) * W + iw] *
                                       w[((m * Cg + c) * kh + i) * kw + j];
                            }
                    int64_t at = ((n * M + m) * OH + oh) * OW + ow;
                    if (z) sum += zz[at];
                    ref[at] = activate(sum, act, alpha, beta);
                }
    mlrt_conv_params p;
    memset(&p, 0, sizeof p);
    p.group = G, p.n_spatial = 2, p.kernel[0] = kh, p.kernel[1] = kw, p.strides[0] = p.strides[1] = s;
    p.dilations[0] = p.dilations[1] = dil, p.pads_begin[0] = p.pads_begin[1] = p.pads_end[0] = p.pads_end[1] = pad;
    p.activation = act, p.alpha = alpha, p.beta = beta;
    int64_t sx[4] = {N, C, H, W}, sw[4] = {M, Cg, kh, kw}, sb[1] = {M}, sy[4] = {N, M, OH, OW};
    mlrt_tensor in[5] = {tensor(4, sx, x), tensor(4, sw, w), tensor(1, sb, b), tensor(4, sy, zz)};
    if (!bias) in[2].dtype = MLRT_UNDEFINED;
    if (!z) in[3].dtype = MLRT_UNDEFINED;
    int32_t n_in = 4;
    float *packed = NULL;
    int64_t size = 0;
    const char *made = "";
    if (kind == WINOGRAD && mlrt_conv_winograd_fits(&p, C, M, H, W)) {
        mlrt_conv_winograd_pack(G, M, Cg, w, 0, &size, NULL);
        if (size > 0) {
            packed = malloc((size_t)size * sizeof(float));
            mlrt_conv_winograd_pack(G, M, Cg, w, size, &size, packed);
            p.winograd = 1, made = ", Winograd filters";
        }
    } else if (kind != PLAIN) {
        mlrt_conv_pack_weights(G, M, Cg * kh * kw, w, 0, &size, NULL);
        if (size > 0) {
            packed = malloc((size_t)size * sizeof(float));
            mlrt_conv_pack_weights(G, M, Cg * kh * kw, w, size, &size, packed);
            made = ", packed weights";
        }
    }
    if (packed) {
        int64_t sp[1] = {size};
        in[4] = tensor(1, sp, packed);
        p.packed_weights = 4, n_in = 5;
    }
    char name[160];
    snprintf(name, sizeof name, "%s %lldx%lldx%lldx%lld k%lldx%lld s%lld g%lld%s%s act %lld%s", what, (long long)N,
             (long long)C, (long long)H, (long long)W, (long long)kh, (long long)kw, (long long)s, (long long)G,
             bias ? " +B" : "", z ? " +Z" : "", (long long)act, made);
    int64_t taps = Cg * kh * kw;
    /* Winograd transforms round more than a direct sum; the sigmoid is fastmath's */
    double tol = (p.winograd ? 1e-4 : 2e-5) * sqrt((double)taps);
    mlrt_tensor out = tensor(4, sy, y);
    run_and_check(name, act || z ? "FusedConv" : "Conv", in, n_in, &out, &p, sizeof p, ref, ny, tol);
    free(x), free(w), free(b), free(zz), free(y), free(ref), free(packed);
}

/* MatMulInteger (the 8-bit product's tiles: SDOT on AArch64 with the dot-product
 * extension, VNNI / AVX-512 / AVX2 on x86-64, else portable): uint8 A by int8 or uint8 B
 * less their zero points, every int32 sum exact. */
static void check_matmul_integer(int64_t M, int64_t K, int64_t N, bool b_signed) {
    uint8_t *a = malloc((size_t)(M * K)), *b = malloc((size_t)(K * N));
    for (int64_t i = 0; i < M * K; ++i) a[i] = random_byte();
    for (int64_t i = 0; i < K * N; ++i) b[i] = random_byte();
    uint8_t az = 131, bz = b_signed ? (uint8_t)(int8_t)-3 : 200;
    int32_t *y = calloc((size_t)(M * N), sizeof(int32_t));
    int64_t sa[2] = {M, K}, sb[2] = {K, N}, sy[2] = {M, N};
    /* (the zero points as views of their operand's shape: one value, strides 0) */
    mlrt_tensor in[4] = {tensor(2, sa, a), tensor(2, sb, b), tensor(2, sa, &az), tensor(2, sb, &bz)};
    in[2].strides[0] = in[2].strides[1] = in[3].strides[0] = in[3].strides[1] = 0;
    in[0].dtype = in[2].dtype = MLRT_UINT8, in[1].dtype = in[3].dtype = b_signed ? MLRT_INT8 : MLRT_UINT8;
    mlrt_tensor out = tensor(2, sy, y);
    out.dtype = MLRT_INT32;
    mlrt_qmatmul_params p = {0};
    char name[96];
    snprintf(name, sizeof name, "MatMulInteger %lldx%lld @ %lldx%lld %s", (long long)M, (long long)K, (long long)K,
             (long long)N, b_signed ? "u8 x s8" : "u8 x u8");
    int32_t k = mlrt_kernel_find("", "MatMulInteger", 17, MLRT_UINT8);
    if (k < 0 || mlrt_kernel_run(k, pool, in, 4, &out, 1, &p, sizeof p) != MLRT_OK) {
        printf("FAIL %s: %s\n", name, k < 0 ? "no kernel" : mlrt_last_error());
        exit(1);
    }
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            int64_t sum = 0;
            for (int64_t kk = 0; kk < K; ++kk) {
                int64_t bv = b_signed ? (int8_t)b[kk * N + j] - (int8_t)bz : b[kk * N + j] - bz;
                sum += ((int64_t)a[i * K + kk] - az) * bv;
            }
            if (sum != y[i * N + j]) {
                printf("FAIL %s: element (%lld, %lld) is %d, expected %lld\n", name, (long long)i, (long long)j,
                       y[i * N + j], (long long)sum);
                exit(1);
            }
        }
    printf("%-64s exact\n", name);
    ++cases;
    free(a), free(b), free(y);
}

/* ConvInteger (uint8 x less 131, int8 w less -3; groups of four channels: R's quads read
 * where they lie), every int32 sum exact. */
static void check_conv_integer(int64_t C, int64_t H, int64_t W, int64_t M, int64_t s, int64_t pad) {
    int64_t OH = (H + 2 * pad - 3) / s + 1, OW = (W + 2 * pad - 3) / s + 1;
    uint8_t *x = malloc((size_t)(C * H * W)), *w = malloc((size_t)(M * C * 9)), xz = 131, wz = (uint8_t)(int8_t)-3;
    for (int64_t i = 0; i < C * H * W; ++i) x[i] = random_byte();
    for (int64_t i = 0; i < M * C * 9; ++i) w[i] = random_byte();
    int32_t *y = calloc((size_t)(M * OH * OW), sizeof(int32_t));
    int64_t sx[4] = {1, C, H, W}, sw[4] = {M, C, 3, 3}, sy[4] = {1, M, OH, OW};
    mlrt_tensor in[4] = {tensor(4, sx, x), tensor(4, sw, w), tensor(0, sx, &xz), tensor(0, sw, &wz)};
    in[0].dtype = in[2].dtype = MLRT_UINT8, in[1].dtype = in[3].dtype = MLRT_INT8;
    mlrt_tensor out = tensor(4, sy, y);
    out.dtype = MLRT_INT32;
    mlrt_conv_params p;
    memset(&p, 0, sizeof p);
    p.group = 1, p.n_spatial = 2, p.kernel[0] = p.kernel[1] = 3, p.strides[0] = p.strides[1] = s;
    p.dilations[0] = p.dilations[1] = 1, p.pads_begin[0] = p.pads_begin[1] = p.pads_end[0] = p.pads_end[1] = pad;
    char name[96];
    snprintf(name, sizeof name, "ConvInteger 1x%lldx%lldx%lld k3x3 s%lld pad %lld -> %lld", (long long)C, (long long)H,
             (long long)W, (long long)s, (long long)pad, (long long)M);
    int32_t k = mlrt_kernel_find("", "ConvInteger", 17, MLRT_UINT8);
    if (k < 0 || mlrt_kernel_run(k, pool, in, 4, &out, 1, &p, sizeof p) != MLRT_OK) {
        printf("FAIL %s: %s\n", name, k < 0 ? "no kernel" : mlrt_last_error());
        exit(1);
    }
    for (int64_t m = 0; m < M; ++m)
        for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
                int64_t sum = 0;
                for (int64_t c = 0; c < C; ++c)
                    for (int64_t i = 0; i < 3; ++i)
                        for (int64_t jj = 0; jj < 3; ++jj) {
                            int64_t ih = oh * s - pad + i, iw = ow * s - pad + jj;
                            int64_t xv = ih < 0 || ih >= H || iw < 0 || iw >= W ? xz : x[(c * H + ih) * W + iw];
                            sum += (xv - xz) * ((int8_t)w[((m * C + c) * 3 + i) * 3 + jj] - (int8_t)wz);
                        }
                int32_t got = y[(m * OH + oh) * OW + ow];
                if (sum != got) {
                    printf("FAIL %s: element (%lld, %lld, %lld) is %d, expected %lld\n", name, (long long)m,
                           (long long)oh, (long long)ow, got, (long long)sum);
                    exit(1);
                }
            }
    printf("%-64s exact\n", name);
    ++cases;
    free(x), free(w), free(y);
}

/* Cast float32 -> float16 -> float32 (the half rows: F16C, NEON or portable): each value
 * back within half a float16 step (2^-11 relative, 2^-25 among subnormal halves). */
static void check_cast_half(int64_t n) {
    float *x = random_floats(n), *y = calloc((size_t)n, sizeof(float));
    uint16_t *h = calloc((size_t)n, sizeof(uint16_t));
    double *ref = calloc((size_t)n, sizeof(double));
    for (int64_t i = 0; i < n; ++i) x[i] *= i % 3 == 0 ? 60000.0f : i % 3 == 1 ? 1.0f : 1e-4f, ref[i] = x[i];
    mlrt_cast_params p = {.saturate = 1, .round_mode = 2};
    int64_t shape[1] = {n};
    mlrt_tensor in = tensor(1, shape, x), half = tensor(1, shape, h), out = tensor(1, shape, y);
    half.dtype = MLRT_FLOAT16;
    int32_t k = mlrt_kernel_find("", "Cast", 21, MLRT_FLOAT);
    if (k < 0 || mlrt_kernel_run(k, pool, &in, 1, &half, 1, &p, sizeof p) != MLRT_OK) {
        printf("FAIL Cast float -> float16: %s\n", k < 0 ? "no kernel" : mlrt_last_error());
        exit(1);
    }
    char name[64];
    snprintf(name, sizeof name, "Cast float -> float16 -> float %lld", (long long)n);
    run_and_check(name, "Cast", &half, 1, &out, &p, sizeof p, ref, n, 1.0 / 2048);
    free(x), free(y), free(h), free(ref);
}

static void check_pool(const char *op, int64_t C, int64_t H, int64_t k, int64_t s, int64_t pad) {
    int64_t OH = (H + 2 * pad - k) / s + 1;
    float *x = random_floats(C * H * H), *y = calloc((size_t)(C * OH * OH), sizeof(float));
    double *ref = calloc((size_t)(C * OH * OH), sizeof(double));
    bool max = strcmp(op, "MaxPool") == 0;
    for (int64_t c = 0; c < C; ++c)
        for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OH; ++ow) {
                double best = -INFINITY, sum = 0;
                int64_t count = 0;
                for (int64_t i = 0; i < k; ++i)
                    for (int64_t j = 0; j < k; ++j) {
                        int64_t ih = oh * s - pad + i, iw = ow * s - pad + j;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= H) continue;
                        double v = x[(c * H + ih) * H + iw];
                        best = v > best ? v : best, sum += v, ++count;
                    }
                ref[(c * OH + oh) * OH + ow] = max ? best : sum / (double)count;
            }
    mlrt_pool_params p;
    memset(&p, 0, sizeof p);
    p.n_spatial = 2, p.kernel[0] = p.kernel[1] = k, p.strides[0] = p.strides[1] = s;
    p.dilations[0] = p.dilations[1] = 1, p.pads_begin[0] = p.pads_begin[1] = p.pads_end[0] = p.pads_end[1] = pad;
    int64_t sx[4] = {1, C, H, H}, sy[4] = {1, C, OH, OH};
    mlrt_tensor in = tensor(4, sx, x), out = tensor(4, sy, y);
    char name[96];
    snprintf(name, sizeof name, "%s 1x%lldx%lldx%lld k%lld s%lld", op, (long long)C, (long long)H, (long long)H,
             (long long)k, (long long)s);
    run_and_check(name, op, &in, 1, &out, &p, sizeof p, ref, C * OH * OH, 1e-6);
    free(x), free(y), free(ref);
}

/* GlobalMaxPool / GlobalAveragePool over C planes of n values (a NaN in plane 1 past x[0]:
 * skipped by the max, as numpy's fmax would) */
static void check_global_pool(const char *op, int64_t C, int64_t n) {
    float *x = random_floats(C * n), *y = calloc((size_t)C, sizeof(float));
    double *ref = calloc((size_t)C, sizeof(double));
    bool max = strcmp(op, "GlobalMaxPool") == 0;
    if (max && C > 1 && n > 2) x[n + n / 2] = NAN;
    for (int64_t c = 0; c < C; ++c) {
        double best = -INFINITY, sum = 0;
        for (int64_t i = 0; i < n; ++i) {
            double v = x[c * n + i];
            best = v > best ? v : best, sum += v;
        }
        ref[c] = max ? best : sum / (double)n;
    }
    int64_t sx[4] = {1, C, n, 1}, sy[4] = {1, C, 1, 1};
    mlrt_tensor in = tensor(4, sx, x), out = tensor(4, sy, y);
    char name[96];
    snprintf(name, sizeof name, "%s 1x%lldx%lldx1", op, (long long)C, (long long)n);
    run_and_check(name, op, &in, 1, &out, NULL, 0, ref, C, 1e-6);
    free(x), free(y), free(ref);
}

static void check_softmax(int64_t rows, int64_t n) {
    float *x = random_floats(rows * n), *y = calloc((size_t)(rows * n), sizeof(float));
    double *ref = calloc((size_t)(rows * n), sizeof(double));
    for (int64_t r = 0; r < rows; ++r) {
        double top = -INFINITY, sum = 0;
        for (int64_t i = 0; i < n; ++i) x[r * n + i] *= 8, top = x[r * n + i] > top ? x[r * n + i] : top;
        for (int64_t i = 0; i < n; ++i) sum += exp(x[r * n + i] - top);
        for (int64_t i = 0; i < n; ++i) ref[r * n + i] = exp(x[r * n + i] - top) / sum;
    }
    mlrt_softmax_params p = {.outer = rows, .n = n, .inner = 1};
    int64_t shape[2] = {rows, n};
    mlrt_tensor in = tensor(2, shape, x), out = tensor(2, shape, y);
    char name[64];
    snprintf(name, sizeof name, "Softmax %lldx%lld", (long long)rows, (long long)n);
    run_and_check(name, "Softmax", &in, 1, &out, &p, sizeof p, ref, rows * n, 1e-6);
    free(x), free(y), free(ref);
}

/* LayerNormalization over rows of n (scale and bias along them) around an offset: the
 * float32 line path, its sums in blocks and its deviations from each row's first element. */
static void check_layer_norm(int64_t rows, int64_t n, float offset) {
    float *x = random_floats(rows * n), *sc = random_floats(n), *b = random_floats(n);
    float *y = calloc((size_t)(rows * n), sizeof(float));
    double *ref = calloc((size_t)(rows * n), sizeof(double));
    for (int64_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < n; ++i) x[r * n + i] = x[r * n + i] * 0.5f + offset, mean += x[r * n + i];
        mean /= (double)n;
        for (int64_t i = 0; i < n; ++i) var += (x[r * n + i] - mean) * (x[r * n + i] - mean);
        double inv = 1.0 / sqrt(var / (double)n + 1e-5);
        for (int64_t i = 0; i < n; ++i) ref[r * n + i] = (x[r * n + i] - mean) * inv * sc[i] + b[i];
    }
    mlrt_normalize_params p = {.n_kept = 1, .epsilon = 1e-5};
    int64_t shape[2] = {rows, n};
    mlrt_tensor in[3] = {tensor(2, shape, x), tensor(2, shape, sc), tensor(2, shape, b)}, out = tensor(2, shape, y);
    in[1].strides[0] = in[2].strides[0] = 0; /* scale and bias: views of X's shape */
    char name[80];
    snprintf(name, sizeof name, "LayerNormalization %lldx%lld around %g", (long long)rows, (long long)n, offset);
    run_and_check(name, "LayerNormalization", in, 3, &out, &p, sizeof p, ref, rows * n, 2e-6);
    free(x), free(sc), free(b), free(y), free(ref);
}

/* An element-wise op over n values spread over [-span, span] (odd n: the vector loops'
 * tails), against f in double. */
static void check_unary(const char *op, const char *how, double (*f)(double), const void *params, size_t size,
                        double span, double tol) {
    int64_t n = 10007;
    float *x = malloc((size_t)n * sizeof(float)), *y = calloc((size_t)n, sizeof(float));
    double *ref = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; ++i) x[i] = (float)(span * uniform()), ref[i] = f(x[i]);
    int64_t shape[1] = {n};
    mlrt_tensor in = tensor(1, shape, x), out = tensor(1, shape, y);
    char name[64];
    snprintf(name, sizeof name, "%s%s over [-%g, %g]", op, how, span, span);
    run_and_check(name, op, &in, 1, &out, params, size, ref, n, tol);
    free(x), free(y), free(ref);
}

static double sigmoid_d(double v) { return 1.0 / (1.0 + exp(-v)); }
static double gelu_d(double v) { return 0.5 * v * (1.0 + erf(v / sqrt(2.0))); }
static double gelu_tanh_d(double v) { return 0.5 * v * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v))); }

int main(void) {
    printf("isa %s\nfeatures %s\n", mlrt_cpu_isa_name(), mlrt_cpu_features());
    pool = mlrt_threadpool_create(2);
    /* products: one row (matrix-vector), narrow and wide strips, a K past the kernels' blocks */
    check_matmul(1, 37, 50);
    check_matmul(13, 70, 33);
    check_matmul(64, 300, 130);
    check_matmul(7, 5, 3);
    check_gemm(20, 64, 40, 0.5);
    check_gemm(96, 129, 17, 1.0);
    check_gemm(1, 300, 37, 1.0); /* one row: the matrix-vector product's dot products */
    /* Conv's paths: pointwise, direct with stride and pads, Winograd (3 x 3 stride 1 over
     * enough channels), packed weights, dilation, groups and depthwise, a 1-D-like row */
    check_conv("Conv", 1, 16, 14, 14, 24, 1, 1, 1, 1, 0, 1, true, false, 0, PLAIN);
    check_conv("Conv", 1, 64, 12, 12, 64, 1, 1, 1, 1, 0, 1, true, false, 0, PACKED);
    check_conv("Conv", 2, 3, 23, 19, 16, 1, 3, 3, 2, 1, 1, true, false, 0, PACKED);
    check_conv("Conv", 1, 64, 20, 20, 64, 1, 3, 3, 1, 1, 1, true, false, 0, WINOGRAD);
    check_conv("Conv", 1, 8, 17, 17, 12, 1, 3, 3, 1, 2, 2, false, false, 0, PACKED);
    check_conv("Conv", 1, 8, 15, 15, 8, 2, 3, 3, 1, 1, 1, true, false, 0, PACKED);
    check_conv("Conv", 1, 24, 16, 16, 24, 24, 3, 3, 1, 1, 1, true, false, 0, PLAIN);
    check_conv("Conv", 1, 24, 16, 16, 24, 24, 3, 3, 2, 1, 1, true, false, 0, PLAIN);
    /* depthwise 3 x 3 (the vector planes): odd widths, planes narrower than a vector,
     * no pads, a channel multiplier, the clamps in the store and the epilogues after it */
    check_conv("Conv", 2, 8, 13, 37, 16, 8, 3, 3, 1, 0, 1, false, false, 0, PLAIN);
    check_conv("Conv", 1, 12, 3, 2, 12, 12, 3, 3, 1, 1, 1, true, false, 0, PLAIN);
    check_conv("FusedConv", 1, 32, 7, 7, 32, 32, 3, 3, 1, 1, 1, true, false, MLRT_CONV_ACT_RELU, PLAIN);
    check_conv("FusedConv", 1, 16, 19, 29, 16, 16, 3, 3, 2, 1, 1, true, false, MLRT_CONV_ACT_CLIP, PLAIN);
    check_conv("FusedConv", 1, 16, 28, 28, 16, 16, 3, 3, 2, 0, 1, true, true, MLRT_CONV_ACT_SWISH, PLAIN);
    /* Swish and HardSwish in the 3 x 3 store (no Z): rows of planes, and a narrow plane run flat */
    check_conv("FusedConv", 1, 16, 21, 30, 16, 16, 3, 3, 1, 1, 1, true, false, MLRT_CONV_ACT_SWISH, PLAIN);
    check_conv("FusedConv", 1, 16, 19, 29, 16, 16, 3, 3, 2, 1, 1, true, false, MLRT_CONV_ACT_HARD_SWISH, PLAIN);
    check_conv("FusedConv", 1, 24, 7, 7, 24, 24, 3, 3, 1, 1, 1, true, false, MLRT_CONV_ACT_SWISH, PLAIN);
    /* narrow planes at stride 1 run flat: 14 x 14 under a clamp, 16 wide over 5 rows with a
     * residual, a plane of one column, and 2 x 2 (a tail of output lanes) */
    check_conv("FusedConv", 1, 8, 14, 14, 8, 8, 3, 3, 1, 1, 1, true, false, MLRT_CONV_ACT_CLIP, PLAIN);
    check_conv("FusedConv", 2, 4, 5, 16, 4, 4, 3, 3, 1, 1, 1, true, true, MLRT_CONV_ACT_RELU, PLAIN);
    check_conv("Conv", 1, 4, 9, 1, 4, 4, 3, 3, 1, 1, 1, false, false, 0, PLAIN);
    check_conv("Conv", 1, 4, 2, 2, 8, 4, 3, 3, 1, 1, 1, true, false, 0, PLAIN);
    check_conv("Conv", 1, 16, 1, 200, 32, 1, 1, 5, 1, 2, 1, true, false, 0, PACKED);
    /* FusedConv: bias, Z and each activation the strip kernels finish in their store */
    static const int64_t acts[] = {MLRT_CONV_ACT_RELU, MLRT_CONV_ACT_CLIP, MLRT_CONV_ACT_SIGMOID,
                                   MLRT_CONV_ACT_HARD_SWISH, MLRT_CONV_ACT_SWISH};
    for (size_t i = 0; i < sizeof acts / sizeof *acts; ++i)
        check_conv("FusedConv", 1, 16, 10, 10, 20, 1, 3, 3, 1, 1, 1, true, i % 2 == 0, acts[i], PACKED);
    check_conv("FusedConv", 1, 32, 9, 9, 40, 1, 1, 1, 1, 0, 1, true, true, MLRT_CONV_ACT_RELU, PACKED);
    check_pool("MaxPool", 8, 19, 3, 2, 1);
    check_pool("AveragePool", 8, 16, 2, 2, 0);
    check_global_pool("GlobalMaxPool", 6, 49);
    check_global_pool("GlobalMaxPool", 3, 1031);
    check_global_pool("GlobalAveragePool", 5, 300);
    check_softmax(5, 1000);
    check_layer_norm(7, 256, 0.0f);
    check_layer_norm(3, 3001, -1000.0f);
    check_cast_half(1003);
    /* the integer product: one row, column tails of a panel, a K past a group of four */
    check_matmul_integer(1, 5, 13, true);
    check_matmul_integer(7, 300, 100, true);
    check_matmul_integer(13, 64, 64, false);
    check_matmul_integer(40, 200, 70, true); /* 16 rows and more: on AMX where the CPU has it */
    check_matmul_integer(6, 1, 1, false);
    check_conv_integer(8, 11, 13, 12, 1, 1);
    check_conv_integer(16, 20, 9, 7, 2, 1);
    check_conv_integer(4, 6, 70, 5, 1, 0);
    /* element-wise loops (cloned per x86 level, vectorised by the compiler on NEON) */
    check_unary("Exp", "", exp, NULL, 0, 80.0, 1e-6);
    check_unary("Sigmoid", "", sigmoid_d, NULL, 0, 30.0, 1e-6);
    check_unary("Tanh", "", tanh, NULL, 0, 12.0, 1e-6);
    check_unary("Erf", "", erf, NULL, 0, 5.0, 1e-6);
    mlrt_activation_params gelu = {.mode = MLRT_GELU_NONE}, gelu_tanh = {.mode = MLRT_GELU_TANH};
    check_unary("Gelu", "", gelu_d, &gelu, sizeof gelu, 10.0, 1e-6);
    check_unary("Gelu", " (tanh)", gelu_tanh_d, &gelu_tanh, sizeof gelu_tanh, 10.0, 1e-6);
    mlrt_threadpool_destroy(pool);
    printf("ok %d\n", cases);
    return 0;
}

/* Gemm and MatMul: Y[b] = alpha * A[b] B[b] + beta * C, computed in float.
 *
 * Operands are strided: element (m, k) of A[b] is A[offs[2b] + m * sam + k * sak] and element
 * (k, n) of B[b] is B[offs[2b + 1] + k * sbk + n * sbn] (transposes, 1-D operands and broadcast
 * batch dimensions are all strides and offsets, worked out by the host).  Y is contiguous,
 * batch x M x N.  C (Gemm only, has_c != 0) is read at m * scm + n * scn (stride 0 where it
 * broadcasts).
 *
 *   mlrt_gemm_tiled     any shape: TM x TN tiles of Y per work-group, A and B staged TK deep in
 *                       local memory, each work-item computing RM rows x VN columns.
 *   mlrt_gemv_rows1/4   1 or up to 8 rows, B contiguous along K (B^T, the usual FC weight
 *                       layout): a column n per work-item, streaming B's row n.
 *   mlrt_gemv_cols1/8   1 or up to 16 rows, B contiguous along N: VN adjacent columns per
 *                       work-item, 1 or 8 rows at a time.
 *   mlrt_gemm_reduce    split-K: the gemv kernels (splits > 1) leave partial sums for the K range
 *                       [s * kc, (s + 1) * kc) in part[(s * batch + b) * M * N + m * N + n].
 *
 * On a CPU device (PoCL runs a work-group as loops over its work-items, split at barriers) two
 * things matter: the staged tiles are double-buffered, so each tile needs one barrier and the
 * addresses of the compute loop depend on the tile (nothing per work-item is kept across a
 * barrier but the accumulators), and the work of each work-item is explicit float16 vectors.
 */
#ifdef T_IS_FLOAT

/* Tile sizes, build options from gemm.py (its dispatch geometry): VN columns per work-item
 * (one float16), TM x TN tiles of Y, RM rows per work-item, GV the gemv work-group size,
 * KR and KCC the depth of the A chunk staged by mlrt_gemv_rows4 and mlrt_gemv_cols1/8. */
#if !defined(VN) || !defined(TM) || !defined(TN) || !defined(RM) || !defined(GV) || !defined(KR) || !defined(KCC)
#error "gemm.cl is built with VN, TM, TN, RM, GV, KR and KCC from gemm.py's BUILD_OPTIONS"
#endif
#if VN != 16
#error "VN is the width of a float16"
#endif
#define WX (TN / VN)
#define WY (TM / RM)
#define WG (WX * WY)
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__)
#define TK 64      /* depth of the staged tiles: 64 KiB of local memory, cache on a CPU device */
#else              /* (PoCL compiles for the host's architecture), 32 KiB elsewhere (GPUs have */
#define TK 32      /* 32-64 KiB) */
#endif


inline float mlrt_gemm_epilogue(float acc, __global const T *C, long m, long n, float alpha, float beta,
                                long scm, long scn, int has_c)
{
    float y = alpha * acc;
    if (has_c) y += beta * LOAD(C, m * scm + n * scn);
    return y;
}

inline float mlrt_hsum16(float16 v)
{
    float8 a = v.lo + v.hi;
    float4 b = a.lo + a.hi;
    float2 c = b.lo + b.hi;
    return c.x + c.y;
}

/* ---- tiled ------------------------------------------------------------------------------------ */

/* Stage src[r0 : r0 + R, c0 : c0 + Cn] (element (r, c) at r * sr + c * sc; zeros from row nr and
 * column nc on) into dst[r * Cn + c], 16 elements at a time along whichever stride is 1.
 * R and Cn are multiples of VN; `lid` counts the work-group's WG work-items. */
inline void mlrt_tile_stage(__local float *dst, const int R, const int Cn, __global const T *src, long sr, long sc,
                            long r0, long c0, long nr, long nc, int lid)
{
    if (sc == 1) {
        for (int v = lid; v < R * (Cn / VN); v += WG) {
            const int rr = v / (Cn / VN), cc = (v % (Cn / VN)) * VN;
            const long r = r0 + rr, c = c0 + cc;
            __local float *d = dst + rr * Cn + cc;
            if (r < nr && c + VN <= nc) {
                vstore16(LOAD16(src, r * sr + c), 0, d);
            } else {
                for (int j = 0; j < VN; ++j) d[j] = (r < nr && c + j < nc) ? LOAD(src, r * sr + c + j) : 0.0f;
            }
        }
    } else if (sr == 1) {  /* contiguous down the columns: read 16 rows of a column, scatter them */
        for (int v = lid; v < Cn * (R / VN); v += WG) {
            const int cc = v / (R / VN), rr = (v % (R / VN)) * VN;
            const long r = r0 + rr, c = c0 + cc;
            float w[VN];
            if (c < nc && r + VN <= nr) {
                vstore16(LOAD16(src, c * sc + r), 0, w);
            } else {
                for (int j = 0; j < VN; ++j) w[j] = (c < nc && r + j < nr) ? LOAD(src, c * sc + r + j) : 0.0f;
            }
            for (int j = 0; j < VN; ++j) dst[(rr + j) * Cn + cc] = w[j];
        }
    } else {
        for (int e = lid; e < R * Cn; e += WG) {
            const int rr = e / Cn, cc = e % Cn;
            const long r = r0 + rr, c = c0 + cc;
            dst[e] = (r < nr && c < nc) ? LOAD(src, r * sr + c * sc) : 0.0f;
        }
    }
}

/* Work-group (WX, WY): a TM x TN tile of Y[b]; work-item (x, y): rows y * RM + [0, RM), columns
 * x * VN + [0, VN) of it.  Global size (ceil(N / TN) * WX, ceil(M / TM) * WY, batch). */
__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void mlrt_gemm_tiled(__global const T *A, __global const T *B, __global const T *C, __global T *Y,
                     long M, long N, long K, long sam, long sak, long sbk, long sbn,
                     __global const long *offs, float alpha, float beta, long scm, long scn, int has_c)
{
    __local float As[2 * TM * TK];          /* tile t of A (TM x TK, row-major) at As + (t % 2) * TM * TK */
    __local float16 Bs[2 * TK * (TN / VN)]; /* tile t of B (TK x TN) at Bs + (t % 2) * TK * TN / VN */
    const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * WX + lx;
    const long m0 = (long)get_group_id(1) * TM, n0 = (long)get_group_id(0) * TN, b = get_global_id(2);
    A += offs[2 * b];
    B += offs[2 * b + 1];
    Y += b * M * N;

    float16 acc[RM];
    for (int r = 0; r < RM; ++r) acc[r] = (float16)(0.0f);
    for (long k0 = 0; k0 < K; k0 += TK) {
        const int t = (int)(k0 / TK) & 1;
        __local float *at = As + t * TM * TK;
        __local float16 *bt = Bs + t * TK * (TN / VN);
        mlrt_tile_stage(at, TM, TK, A, sam, sak, m0, k0, M, K, lid);
        mlrt_tile_stage((__local float *)bt, TK, TN, B, sbk, sbn, k0, n0, K, N, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        at += get_local_id(1) * RM * TK;
        bt += get_local_id(0);
#pragma unroll
        for (int kk = 0; kk < TK; ++kk) {
            const float16 bv = bt[kk * (TN / VN)];
#pragma unroll
            for (int r = 0; r < RM; ++r) acc[r] = fma((float16)(at[r * TK + kk]), bv, acc[r]);
        }
    }

    const long nb = n0 + lx * VN;
    for (int r = 0; r < RM; ++r) {
        const long m = m0 + ly * RM + r;
        if (m >= M) break;
        if (nb + VN <= N && (!has_c || scn == 1)) {
            float16 y = alpha * acc[r];
            if (has_c) y += beta * LOAD16(C, m * scm + nb);
            STORE16(Y, m * N + nb, y);
        } else {
            float v[VN];
            vstore16(acc[r], 0, v);
            for (int j = 0; j < VN && nb + j < N; ++j)
                STORE(Y, m * N + nb + j, mlrt_gemm_epilogue(v[j], C, m, nb + j, alpha, beta, scm, scn, has_c));
        }
    }
}

/* ---- gemv: few rows ------------------------------------------------------------------------------ */

/* Work-item (column or block of VN columns, block of rv rows, b * splits + s), in work-groups of GV
 * along the columns; those staging A share its rows in local memory, `depth` along K at a time
 * (double-buffered: chunk t at As + (t % 2) * rv * depth). */

/* Stage A[m0 : m0 + rows, c0 : c0 + len] (A already at row m0) as As[r * depth + k], zeros past the edges. */
inline void mlrt_gemv_stage(__local float *As, const int rv, const int depth, __global const T *A, long sam,
                            long sak, int rows, long c0, int len)
{
    for (int e = get_local_id(0); e < rv * depth; e += GV) {
        const int r = e / depth, kk = e % depth;
        As[e] = (r < rows && kk < len) ? LOAD(A, r * sam + (c0 + kk) * sak) : 0.0f;
    }
}

inline void mlrt_gemv_store(float v, __global const T *C, __global T *Y, long m, long n, long M, long N, long b,
                            long batch, long s, int splits, float alpha, float beta, long scm, long scn, int has_c,
                            __global float *part)
{
    if (splits > 1)
        part[(s * batch + b) * M * N + m * N + n] = v;
    else
        STORE(Y, b * M * N + m * N + n, mlrt_gemm_epilogue(v, C, m, n, alpha, beta, scm, scn, has_c));
}

#define GEMV_ARGS __global const T *A, __global const T *B, __global const T *C, __global T *Y, \
    long M, long N, long K, long sam, long sak, long sb, __global const long *offs, \
    float alpha, float beta, long scm, long scn, int has_c, __global float *part, long batch, int splits, long kc
#define GEMV_PASS A, B, C, Y, M, N, K, sam, sak, sb, offs, alpha, beta, scm, scn, has_c, part, batch, splits, kc

/* B contiguous along K (sb: its stride along N): work-item n dots 4 rows of A with B's row n. */
__kernel __attribute__((reqd_work_group_size(GV, 1, 1))) void mlrt_gemv_rows4(GEMV_ARGS)
{
    const int rv = 4;
    __local float As[2 * 4 * KR];
    const long n = get_global_id(0), m0 = get_global_id(1) * rv, bs = get_global_id(2);
    const long b = bs / splits, s = bs % splits;
    const long k0 = s * kc, k1 = min(K, k0 + kc);
    const int rows = (int)min((long)rv, M - m0);
    A += offs[2 * b] + m0 * sam;
    B += offs[2 * b + 1] + min(n, N - 1) * sb;  /* columns past N compute a copy of the last */

    float16 acc[4];
    float tail[4];
    for (int r = 0; r < rv; ++r) { acc[r] = (float16)(0.0f); tail[r] = 0.0f; }
    for (long c0 = k0; c0 < k1; c0 += KR) {
        const int len = (int)min((long)KR, k1 - c0), t = (int)((c0 - k0) / KR) & 1;
        __local float *a = As + t * rv * KR;
        mlrt_gemv_stage(a, rv, KR, A, sam, sak, rows, c0, len);
        barrier(CLK_LOCAL_MEM_FENCE);
        __global const T *w = B + c0;
        int kk = 0;
        for (; kk + VN <= len; kk += VN) {
            const float16 wv = LOAD16(w, kk);
            for (int r = 0; r < rv; ++r) acc[r] = fma(vload16(0, a + r * KR + kk), wv, acc[r]);
        }
        for (; kk < len; ++kk) {
            const float wv = LOAD(w, kk);
            for (int r = 0; r < rv; ++r) tail[r] = fma(a[r * KR + kk], wv, tail[r]);
        }
    }
    if (n >= N) return;
    for (int r = 0; r < rows; ++r)
        mlrt_gemv_store(mlrt_hsum16(acc[r]) + tail[r], C, Y, m0 + r, n, M, N, b, batch, s, splits, alpha, beta,
                        scm, scn, has_c, part);
}

/* B contiguous along N (sb: its stride along K): work-item columns n0 + [0, VN) of rv rows. */
inline void mlrt_gemv_cols(const int rv, __local float *As, GEMV_ARGS)
{
    const long n0 = get_global_id(0) * VN, m0 = get_global_id(1) * rv, bs = get_global_id(2);
    const long b = bs / splits, s = bs % splits;
    const long k0 = s * kc, k1 = min(K, k0 + kc);
    const int rows = (int)min((long)rv, M - m0);
    const int cols = (int)clamp(N - n0, 0L, (long)VN);
    A += offs[2 * b] + m0 * sam;
    B += offs[2 * b + 1] + n0;

    float16 acc[8];
    for (int r = 0; r < rv; ++r) acc[r] = (float16)(0.0f);
    for (long c0 = k0; c0 < k1; c0 += KCC) {
        const int len = (int)min((long)KCC, k1 - c0), t = (int)((c0 - k0) / KCC) & 1;
        __local float *a = As + t * rv * KCC;
        mlrt_gemv_stage(a, rv, KCC, A, sam, sak, rows, c0, len);
        barrier(CLK_LOCAL_MEM_FENCE);
        __global const T *w = B + c0 * sb;
        if (cols == VN) {
            for (int kk = 0; kk < len; ++kk) {
                const float16 wv = LOAD16(w, kk * sb);
                for (int r = 0; r < rv; ++r) acc[r] = fma((float16)(a[r * KCC + kk]), wv, acc[r]);
            }
        } else {
            for (int kk = 0; kk < len; ++kk) {
                float wj[VN];
                for (int j = 0; j < VN; ++j) wj[j] = j < cols ? LOAD(w, kk * sb + j) : 0.0f;
                const float16 wv = vload16(0, wj);
                for (int r = 0; r < rv; ++r) acc[r] = fma((float16)(a[r * KCC + kk]), wv, acc[r]);
            }
        }
    }
    for (int r = 0; r < rows; ++r) {
        float v[VN];
        vstore16(acc[r], 0, v);
        for (int j = 0; j < cols; ++j)
            mlrt_gemv_store(v[j], C, Y, m0 + r, n0 + j, M, N, b, batch, s, splits, alpha, beta, scm, scn, has_c,
                            part);
    }
}

/* One row of A, B contiguous along K: work-item n streams B's row n from start to end (no staging:
 * one long sequential read per work-item is what a CPU's prefetchers like best). */
__kernel __attribute__((reqd_work_group_size(GV, 1, 1))) void mlrt_gemv_rows1(GEMV_ARGS)
{
    const long n = get_global_id(0), bs = get_global_id(2);
    if (n >= N) return;
    const long b = bs / splits, s = bs % splits;
    const long k0 = s * kc, k1 = min(K, k0 + kc);
    __global const T *a = A + offs[2 * b] + k0 * sak;
    __global const T *w = B + offs[2 * b + 1] + n * sb + k0;
    const long len = k1 - k0;

    float16 acc0 = (float16)(0.0f), acc1 = (float16)(0.0f);
    float tail = 0.0f;
    long kk = 0;
    if (sak == 1) {
        for (; kk + 2 * VN <= len; kk += 2 * VN) {
            acc0 = fma(LOAD16(a, kk), LOAD16(w, kk), acc0);
            acc1 = fma(LOAD16(a, kk + VN), LOAD16(w, kk + VN), acc1);
        }
    }
    for (; kk < len; ++kk) tail = fma(LOAD(a, kk * sak), LOAD(w, kk), tail);
    mlrt_gemv_store(mlrt_hsum16(acc0 + acc1) + tail, C, Y, 0, n, M, N, b, batch, s, splits, alpha, beta,
                    scm, scn, has_c, part);
}

__kernel __attribute__((reqd_work_group_size(GV, 1, 1))) void mlrt_gemv_cols1(GEMV_ARGS)
{
    __local float As[2 * 1 * KCC];
    mlrt_gemv_cols(1, As, GEMV_PASS);
}

__kernel __attribute__((reqd_work_group_size(GV, 1, 1))) void mlrt_gemv_cols8(GEMV_ARGS)
{
    __local float As[2 * 8 * KCC];
    mlrt_gemv_cols(8, As, GEMV_PASS);
}

/* Split-K finish: Y[b, m, n] = epilogue(sum over s of part[s, b, m, n]); work-item (n, m, b). */
__kernel void mlrt_gemm_reduce(__global const float *part, __global const T *C, __global T *Y,
                               long M, long N, long batch, int splits,
                               float alpha, float beta, long scm, long scn, int has_c)
{
    const long n = get_global_id(0), m = get_global_id(1), b = get_global_id(2);
    if (n >= N || m >= M) return;
    const long i = b * M * N + m * N + n;
    float v = 0.0f;
    for (int s = 0; s < splits; ++s) v += part[s * batch * M * N + i];
    STORE(Y, i, mlrt_gemm_epilogue(v, C, m, n, alpha, beta, scm, scn, has_c));
}

#endif /* T_IS_FLOAT */

/* internal.h -- what kernels and the core share but the ABI does not expose:
 * kernel registration, errors, the parallel loop, small tensor helpers. */
#ifndef MLRT_INTERNAL_H
#define MLRT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _WIN32
#include <malloc.h> /* _aligned_malloc */
#endif

#include "../include/mlrt.h"

/* Register a kernel: MLRT_KERNEL(relu_f32, "Relu", "", 6, 2147483647, MASK, fn);
 * A constructor run when the library loads links the definition into the registry's
 * list (src/registry.c sorts it into the table), so adding a kernel file never edits a
 * central list, and no linker section is named: gcc, clang and mingw run constructors
 * the same on ELF, Mach-O and PE/COFF. */
typedef struct mlrt_kernel_link {
    const mlrt_kernel_def *def;
    struct mlrt_kernel_link *next;
} mlrt_kernel_link;
void mlrt_kernel_register(mlrt_kernel_link *link);

#define MLRT_KERNEL(id, op, dom, since, until, mask, fn)                              \
    static const mlrt_kernel_def mlrt_kdef_##id = {op, dom, since, until, mask, fn}; \
    static mlrt_kernel_link mlrt_klink_##id = {&mlrt_kdef_##id, NULL};               \
    __attribute__((constructor)) static void mlrt_kreg_##id(void) {                  \
        mlrt_kernel_register(&mlrt_klink_##id);                                       \
    }                                                                                  \
    typedef int mlrt_kernel_registered_##id

/* x86-only code (intrinsics, target attributes, CPU feature checks) sits under MLRT_X86;
 * the portable C path is always compiled, so the core builds for any CPU (aarch64 is
 * checked by tests/native/test_cross_build.py). */
#if defined(__x86_64__) || defined(__i386__)
#define MLRT_X86 1
#endif
/* Memory aligned to `align` bytes (a power of two), `bytes` rounded up to a multiple of
 * it; freed by mlrt_aligned_free only (Windows' C library has no aligned_alloc, and what
 * its _aligned_malloc gives only _aligned_free may free). */
static inline void *mlrt_aligned_alloc(size_t align, size_t bytes) {
    bytes = (bytes + align - 1) / align * align;
#ifdef _WIN32
    return _aligned_malloc(bytes ? bytes : align, align);
#else
    return aligned_alloc(align, bytes ? bytes : align);
#endif
}
static inline void mlrt_aligned_free(void *p) {
#ifdef _WIN32
    _aligned_free(p);
#else
    free(p);
#endif
}

/* One function compiled per x86-64 level -- v4 (AVX-512), v3 (AVX2, FMA) and the baseline
 * -- and a dispatcher that calls the one mlrt_isa_level allows (src/cpu.c: the level the
 * CPU has, narrowed by MLRT_ISA; set when the library loads, before any kernel runs), so a
 * forced path holds for these loops too and every clone can be tested on one machine.
 * Elsewhere one portable function (the compiler vectorises it for NEON on aarch64).
 *     MLRT_ISA_FN(attributes, return type, name, (parameters), (arguments)) { body }
 * defines `static ret name(parameters)`; the body is inlined into each clone.  (gcc only:
 * clang keeps the one function, as it ignores per-function optimize attributes.) */
extern int mlrt_isa_level; /* 4, 3 or 0 on x86-64; 0 elsewhere */

/* The kernel path a node ran, for the profiler (mlrt_plan_run_profiled): a kernel notes a
 * string of static storage, "family/path/isa" ("conv/winograd/avx512", "sgemm/neon"), on
 * the thread that called it; the last note of a node's run is the node's.  MLRT_PATH(p)
 * is p + "/" + the instruction set the float32 kernels run on; MLRT_LOOP_PATH(p) the one
 * the cloned loops run on (MLRT_ISA_FN's level; the compiler's NEON on aarch64). */
void mlrt_note_path(const char *path);
#define MLRT_PATH(p) ((const char *const[]){p "/portable", p "/avx2", p "/avx512", p "/neon"}[mlrt_cpu_isa()])
#define MLRT_LOOP_PATH(p) (mlrt_isa_level >= 4   ? p "/avx512" \
                           : mlrt_isa_level == 3 ? p "/avx2"   \
                           : mlrt_cpu_isa() == MLRT_ISA_NEON ? p "/neon" : p "/portable")
#if defined(MLRT_X86) && defined(__GNUC__) && !defined(__clang__)
#define MLRT_ISA_FN(attrs, ret, name, params, args)                                                       \
    static inline __attribute__((always_inline)) attrs ret name##_body params;                          \
    static __attribute__((target("arch=x86-64-v4"))) attrs ret name##_v4 params { return name##_body args; } \
    static __attribute__((target("arch=x86-64-v3"))) attrs ret name##_v3 params { return name##_body args; } \
    static attrs ret name##_v0 params { return name##_body args; }                                       \
    static ret name params {                                                                              \
        return mlrt_isa_level >= 4 ? name##_v4 args : mlrt_isa_level == 3 ? name##_v3 args : name##_v0 args; \
    }                                                                                                     \
    static inline __attribute__((always_inline)) attrs ret name##_body params
#else
#define MLRT_ISA_FN(attrs, ret, name, params, args) static attrs ret name params
#endif

#define MLRT_OPSET_MAX 2147483647
#define MLRT_BIT(t) (UINT64_C(1) << (t))
#define MLRT_MASK_FLOATS (MLRT_BIT(MLRT_FLOAT) | MLRT_BIT(MLRT_DOUBLE))
#define MLRT_MASK_INTS                                                            \
    (MLRT_BIT(MLRT_INT8) | MLRT_BIT(MLRT_INT16) | MLRT_BIT(MLRT_INT32) |          \
     MLRT_BIT(MLRT_INT64) | MLRT_BIT(MLRT_UINT8) | MLRT_BIT(MLRT_UINT16) |        \
     MLRT_BIT(MLRT_UINT32) | MLRT_BIT(MLRT_UINT64))
#define MLRT_MASK_NUMERIC (MLRT_MASK_FLOATS | MLRT_MASK_INTS)
#define MLRT_MASK_ALL (MLRT_MASK_NUMERIC | MLRT_BIT(MLRT_BOOL) | MLRT_BIT(MLRT_FLOAT16) | MLRT_BIT(MLRT_BFLOAT16))
/* the low-precision types (one byte each): float8, float4, 4- and 2-bit integers */
#define MLRT_MASK_LOWP                                                                    \
    (MLRT_BIT(MLRT_FLOAT8E4M3FN) | MLRT_BIT(MLRT_FLOAT8E4M3FNUZ) | MLRT_BIT(MLRT_FLOAT8E5M2) | \
     MLRT_BIT(MLRT_FLOAT8E5M2FNUZ) | MLRT_BIT(MLRT_UINT4) | MLRT_BIT(MLRT_INT4) |          \
     MLRT_BIT(MLRT_FLOAT4E2M1) | MLRT_BIT(MLRT_FLOAT8E8M0) | MLRT_BIT(MLRT_UINT2) | MLRT_BIT(MLRT_INT2))

/* errors: set the thread's last-error text and return the status */
/* printf-style messages, checked as C99 formats (%zu, %lld): on Windows mingw's own
 * printf, which the build selects there (__USE_MINGW_ANSI_STDIO), not msvcrt's */
#if defined(_WIN32) && defined(__GNUC__)
#define MLRT_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#else
#define MLRT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#endif
int mlrt_fail(int status, const char *fmt, ...) MLRT_PRINTF(2, 3);
void mlrt_error_prefix(const char *fmt, ...) MLRT_PRINTF(1, 2);

/* parallel loop over [0, n): fn(arg, begin, end) runs on chunks of at least grain */
typedef void (*mlrt_range_fn)(void *arg, int64_t begin, int64_t end);
void mlrt_parallel_for(const mlrt_context *ctx, int64_t n, int64_t grain, mlrt_range_fn fn, void *arg);
/* CLOCK_MONOTONIC in nanoseconds (plan timings, the pool's spin limit) */
static inline int64_t mlrt_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}
/* a plan starts (+1) or ends (-1) on the pool: its workers spin between loops meanwhile */
void mlrt_threadpool_hold(mlrt_threadpool *pool, int delta);

/* The instruction set the float32 kernels take their paths by, one answer for all of
 * them, decided once (src/cpu.c): on x86-64 AVX-512F, else AVX2 with FMA; on AArch64
 * NEON; else portable C (products on OpenBLAS).  MLRT_ISA=portable|avx2|avx512|neon
 * forces one the CPU runs (to test the narrower paths on a wider CPU, or compare with
 * BLAS); the older MLRT_SGEMM_KERNEL=avx2|blas where it is not set.  A path choice asks
 * this, not mlrt_sgemm_strip_width (src/gemm.h: the strips' column count, 64 / 16 / 16 /
 * 0 at AVX-512, AVX2, NEON, portable). */
enum mlrt_isa {
    MLRT_ISA_PORTABLE = 0,
    MLRT_ISA_AVX2 = 1,
    MLRT_ISA_AVX512 = 2,
    MLRT_ISA_NEON = 3 /* AArch64's Advanced SIMD (src/sgemm_neon.c) */
};
enum mlrt_isa mlrt_cpu_isa(void);
/* An x86 kernel's own feature test (x86 code only): the CPU has `feature` and the
 * instruction set in use is at least `level` (so MLRT_ISA=avx2 or =portable also keeps
 * the AVX-512 byte kernels, say, from running). */
#define MLRT_X86_HAS(level, feature) (mlrt_cpu_isa() >= (level) && MLRT_X86_FEATURE(feature))
/* The x86 features src/cpu.c reads once with cpuid and xgetbv (the instruction set's bit and
 * the register state the operating system saves), as bits of mlrt_x86_bits (0 elsewhere):
 * MLRT_X86_FEATURE(AVX512VL) is whether this CPU has AVX512VL, a load and a shift. */
enum mlrt_x86_feature {
    MLRT_X86_CX16,
    MLRT_X86_SSSE3,
    MLRT_X86_SSE42,
    MLRT_X86_POPCNT,
    MLRT_X86_MOVBE,
    MLRT_X86_FMA,
    MLRT_X86_AVX,
    MLRT_X86_F16C,
    MLRT_X86_BMI,
    MLRT_X86_BMI2,
    MLRT_X86_AVX2,
    MLRT_X86_AVX512F,
    MLRT_X86_AVX512DQ,
    MLRT_X86_AVX512CD,
    MLRT_X86_AVX512BW,
    MLRT_X86_AVX512VL,
    MLRT_X86_AVX512VNNI,
    MLRT_X86_AVXVNNI,
    MLRT_X86_AMX_TILE,
    MLRT_X86_AMX_INT8,
    MLRT_X86_LZCNT,
    MLRT_X86_LAHF,
    MLRT_X86_COUNT
};
extern uint32_t mlrt_x86_bits;
#define MLRT_X86_FEATURE(feature) (mlrt_cpu_isa(), (mlrt_x86_bits >> MLRT_X86_##feature & 1u) != 0)

/* e[i] = v[2i], o[i] = v[2i + 1] for i < n (SIMD permutes), in src/deinterleave.c */
void mlrt_split_even_odd(const float *v, float *e, float *o, int64_t n);
/* o[p][i] = v[4i + p] for p < 4, i < n, the same way */
void mlrt_split_mod4(const float *v, float *const o[4], int64_t n);

/* Pooling pieces other kernels run (kernels/pool.c).  One output row of a 2-D float
 * MaxPool, unit dilations: y[ow] (ow < OW) is the largest value of rows[0 .. nr) (1 to
 * MLRT_POOL_ROWS_MAX rows, Wd wide) at columns ow * sw - pw .. + KW - 1 inside the row
 * (NaN skipped), 0 where none is; buf holds (OW - 1) * sw + KW floats.  And a whole 2-D
 * MaxPool of X into Y (float or double, shapes as MaxPool's, unit dilations), as the
 * MaxPool kernel runs it. */
#define MLRT_POOL_ROWS_MAX 8
void mlrt_maxpool_row_f32(const float *const *rows, int64_t nr, int64_t Wd, int64_t KW, int64_t sw, int64_t pw,
                          int64_t OW, float *y, float *buf);
int mlrt_maxpool_2d(const mlrt_context *ctx, const mlrt_tensor *X, mlrt_tensor *Y, const int64_t k[2],
                    const int64_t s[2], const int64_t pb[2]);

/* float16 / bfloat16 <-> float (round to nearest even), in src/half.c */
float mlrt_f16_to_f32(uint16_t h);
uint16_t mlrt_f32_to_f16(float f);
/* n of them at a time on the vector units where the CPU has them (the same bits), and
 * the kernel path those rows take ("cast/avx2", "cast/neon", "cast/portable") */
void mlrt_f16_to_f32_row(const uint16_t *x, float *y, int64_t n);
void mlrt_f32_to_f16_row(const float *x, uint16_t *y, int64_t n);
const char *mlrt_half_rows_path(void);
uint16_t mlrt_f64_to_f16(double d);
float mlrt_bf16_to_f32(uint16_t h);
uint16_t mlrt_f32_to_bf16(float f);

/* low-precision types <-> float, in src/half.c: float8 E4M3FN / E4M3FNUZ / E5M2 /
 * E5M2FNUZ, float4 E2M1 and float8 E8M0 (one byte each); rounding to nearest even,
 * `saturate` clamps out-of-range values to the largest finite one (float8; float4
 * always saturates), else they become inf / NaN as ONNX's Cast table says; float8
 * E8M0 rounds as round_mode says (enum mlrt_round_mode, include/mlrt.h) */
float mlrt_lowp_to_f32(uint8_t v, int32_t dtype);
uint8_t mlrt_f32_to_lowp(float f, int32_t dtype, int saturate);
uint8_t mlrt_f32_to_e8m0(float f, int saturate, int round_mode);
/* int4 / uint4 / int2 / uint2 held in the low bits of a byte, as an int */
int32_t mlrt_lowp_int_load(uint8_t v, int32_t dtype);
static inline bool mlrt_is_lowp_float(int32_t t) {
    return (t >= MLRT_FLOAT8E4M3FN && t <= MLRT_FLOAT8E5M2FNUZ) || t == MLRT_FLOAT4E2M1 || t == MLRT_FLOAT8E8M0;
}
static inline bool mlrt_is_lowp_int(int32_t t) {
    return t == MLRT_INT4 || t == MLRT_UINT4 || t == MLRT_INT2 || t == MLRT_UINT2;
}

/* One element of a tensor of any numeric type (bool, integers, float16, bfloat16,
 * float, double, the low-precision types) as a double: for kernels that compute in double whatever they are
 * given.  NaN for a type that is not numeric. */
static inline double mlrt_load_as_double(const void *base, int64_t i, int32_t dtype) {
    switch (dtype) {
    case MLRT_FLOAT: return ((const float *)base)[i];
    case MLRT_DOUBLE: return ((const double *)base)[i];
    case MLRT_FLOAT16: return mlrt_f16_to_f32(((const uint16_t *)base)[i]);
    case MLRT_BFLOAT16: return mlrt_bf16_to_f32(((const uint16_t *)base)[i]);
    case MLRT_INT8: return ((const int8_t *)base)[i];
    case MLRT_INT16: return ((const int16_t *)base)[i];
    case MLRT_INT32: return ((const int32_t *)base)[i];
    case MLRT_INT64: return (double)((const int64_t *)base)[i];
    case MLRT_UINT8: case MLRT_BOOL: return ((const uint8_t *)base)[i];
    case MLRT_UINT16: return ((const uint16_t *)base)[i];
    case MLRT_UINT32: return ((const uint32_t *)base)[i];
    case MLRT_UINT64: return (double)((const uint64_t *)base)[i];
    case MLRT_INT4: case MLRT_UINT4: case MLRT_INT2: case MLRT_UINT2:
        return mlrt_lowp_int_load(((const uint8_t *)base)[i], dtype);
    case MLRT_FLOAT8E4M3FN: case MLRT_FLOAT8E4M3FNUZ: case MLRT_FLOAT8E5M2: case MLRT_FLOAT8E5M2FNUZ:
    case MLRT_FLOAT4E2M1: case MLRT_FLOAT8E8M0:
        return mlrt_lowp_to_f32(((const uint8_t *)base)[i], dtype);
    default: return __builtin_nan("");
    }
}

/* Store v into element i of a floating-point tensor (float, double, float16, bfloat16),
 * rounding to nearest even; other types are left untouched. */
static inline void mlrt_store_real(void *base, int64_t i, int32_t dtype, double v) {
    switch (dtype) {
    case MLRT_FLOAT: ((float *)base)[i] = (float)v; break;
    case MLRT_DOUBLE: ((double *)base)[i] = v; break;
    case MLRT_FLOAT16: ((uint16_t *)base)[i] = mlrt_f64_to_f16(v); break;
    case MLRT_BFLOAT16: ((uint16_t *)base)[i] = mlrt_f32_to_bf16((float)v); break;
    default: break;
    }
}

static inline bool mlrt_is_real(int32_t dtype) {
    return dtype == MLRT_FLOAT || dtype == MLRT_DOUBLE || dtype == MLRT_FLOAT16 || dtype == MLRT_BFLOAT16;
}

/* outer * n * inner == numel, without overflow: checks an (outer, axis, inner) split
 * of a tensor handed in by the Python semantics before a kernel relies on it. */
static inline bool mlrt_block_covers(int64_t outer, int64_t n, int64_t inner, int64_t numel) {
    int64_t on, all;
    if (outer < 0 || n < 0 || inner < 0) return false;
    if (__builtin_mul_overflow(outer, n, &on) || __builtin_mul_overflow(on, inner, &all)) return false;
    return all == numel;
}

/* tensor helpers */
size_t mlrt_dtype_size(int32_t dtype);
int64_t mlrt_numel(const mlrt_tensor *t);
bool mlrt_is_contiguous(const mlrt_tensor *t);
bool mlrt_same_shape(const mlrt_tensor *a, const mlrt_tensor *b);
static inline bool mlrt_present(const mlrt_tensor *t) { return t->dtype != MLRT_UNDEFINED; }
/* What a kernel moving elements of in[0] into out[0] relies on: both present, of one
 * type (a known size, stored in *es) and rank, contiguous. */
int mlrt_check_movement(const mlrt_tensor *in, int32_t n_in, const mlrt_tensor *out, int32_t n_out, size_t *es);

/* Check the params blob has the size of the struct the kernel expects. */
#define MLRT_PARAMS(type, var, params, size)                                                   \
    if ((params) == NULL || (size) != sizeof(type))                                          \
        return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, "parameter block is %zu bytes, expected %zu (" #type ")", \
                         (size_t)(size), sizeof(type));                                      \
    const type *var = (const type *)(params)

#define MLRT_CHECK(cond, ...) \
    do { if (!(cond)) return mlrt_fail(MLRT_ERR_INVALID_ARGUMENT, __VA_ARGS__); } while (0)

/* Walk every index of a shape, odometer style. */
static inline void mlrt_index_next(int64_t *idx, const int64_t *shape, int32_t rank) {
    for (int32_t d = rank - 1; d >= 0; --d) {
        if (++idx[d] < shape[d]) return;
        idx[d] = 0;
    }
}

#endif

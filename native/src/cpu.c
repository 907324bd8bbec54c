/* cpu.c -- what the CPU can run, read once when the library loads: the instruction set
 * the float32 kernels run on (mlrt_cpu_isa), the x86-64 level the cloned loops run at
 * (mlrt_isa_level, internal.h's MLRT_ISA_FN) and the features behind them.
 *
 * x86-64: cpuid through the compiler's __builtin_cpu_supports (AVX2 with FMA, AVX-512F,
 * the VNNI dot products).  AArch64: NEON (Advanced SIMD) is part of the architecture;
 * the dot-product (SDOT/UDOT) and half-precision extensions are read from the kernel's
 * hardware capabilities on Linux (getauxval(AT_HWCAP)), from sysctlbyname on macOS and
 * from IsProcessorFeaturePresent on Windows.
 *
 * The GEMM's micro-kernels (src/gemm.c, src/sgemm_neon.c) and the float32 paths built
 * beside them (Conv's, pooling's, reductions', the recurrent cells') ask mlrt_cpu_isa, so
 * that they all take the same side.  MLRT_ISA=portable|avx2|avx512|neon forces a path
 * (for tests, and to compare): one the CPU cannot run falls to the widest it can, and
 * mlrt_cpu_isa_name() says which runs.  The older MLRT_SGEMM_KERNEL=avx2|blas (blas: the
 * portable path, products on OpenBLAS) is read where MLRT_ISA is not set. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDHP
#define HWCAP_ASIMDHP (1UL << 10)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1UL << 20)
#endif
#elif defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>
#elif defined(__aarch64__) && defined(_WIN32)
#include <windows.h>
#endif

static enum mlrt_isa cpu_isa;
static char cpu_features[128];
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static const char *const isa_names[] = {"portable", "avx2", "avx512", "neon"};

static void add_feature(const char *name) {
    size_t used = strlen(cpu_features);
    snprintf(cpu_features + used, sizeof cpu_features - used, "%s%s", used ? " " : "", name);
}

#if defined(__aarch64__) && defined(__APPLE__)
static bool sysctl_flag(const char *name) {
    int value = 0;
    size_t size = sizeof value;
    return sysctlbyname(name, &value, &size, NULL, 0) == 0 && value != 0;
}
#endif

/* The widest instruction set each architecture's kernels use, and its features. */
static enum mlrt_isa detect(void) {
    enum mlrt_isa best = MLRT_ISA_PORTABLE;
#if defined(MLRT_X86) && defined(__GNUC__)
    __builtin_cpu_init();
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    bool avx512 = __builtin_cpu_supports("avx512f");
    if (avx2) add_feature("avx2"), add_feature("fma"), best = MLRT_ISA_AVX2;
    if (avx512) add_feature("avx512f"), best = MLRT_ISA_AVX512;
    if (__builtin_cpu_supports("avx512bw")) add_feature("avx512bw");
    if (__builtin_cpu_supports("avx512vnni")) add_feature("avx512vnni");
    if (__builtin_cpu_supports("avxvnni")) add_feature("avxvnni");
#elif defined(__aarch64__)
    bool dot = false, half = false;
#if defined(__linux__)
    unsigned long caps = getauxval(AT_HWCAP);
    dot = (caps & HWCAP_ASIMDDP) != 0, half = (caps & HWCAP_ASIMDHP) != 0;
#elif defined(__APPLE__)
    dot = sysctl_flag("hw.optional.arm.FEAT_DotProd"), half = sysctl_flag("hw.optional.arm.FEAT_FP16");
#elif defined(_WIN32)
    dot = IsProcessorFeaturePresent(PF_ARM_V82_DP_INSTRUCTIONS_AVAILABLE) != 0;
#endif
    add_feature("neon");
    if (dot) add_feature("dotprod");
    if (half) add_feature("fp16");
    best = MLRT_ISA_NEON;
#endif
    return best;
}

/* Whether the kernels of `isa` run here, given the widest one that does. */
static bool runs(enum mlrt_isa isa, enum mlrt_isa best) {
    if (isa == MLRT_ISA_PORTABLE) return true;
    if (isa == MLRT_ISA_NEON || best == MLRT_ISA_NEON) return isa == best;
    return isa <= best; /* x86: AVX-512 machines run AVX2 */
}

int mlrt_isa_level;

/* The x86-64 level the hot loops' clones run at (MLRT_ISA_FN, internal.h): the level the
 * CPU has in full, no higher than the instruction set in use. */
static int isa_level(void) {
#if defined(MLRT_X86) && defined(__GNUC__) && !defined(__clang__)
    if (cpu_isa == MLRT_ISA_AVX512 && __builtin_cpu_supports("x86-64-v4")) return 4;
    if (cpu_isa >= MLRT_ISA_AVX2 && __builtin_cpu_supports("x86-64-v3")) return 3;
#endif
    return 0;
}

static void cpu_init(void) {
    enum mlrt_isa best = detect();
    cpu_isa = best;
    const char *want = getenv("MLRT_ISA");
    const char *older = getenv("MLRT_SGEMM_KERNEL");
    if (want && *want) {
        for (int i = 0; i < (int)(sizeof isa_names / sizeof *isa_names); ++i)
            if (strcmp(want, isa_names[i]) == 0 && runs((enum mlrt_isa)i, best)) cpu_isa = (enum mlrt_isa)i;
    } else if (older && strcmp(older, "blas") == 0) {
        cpu_isa = MLRT_ISA_PORTABLE;
    } else if (older && strcmp(older, "avx2") == 0 && runs(MLRT_ISA_AVX2, best)) {
        cpu_isa = MLRT_ISA_AVX2;
    }
    mlrt_isa_level = isa_level();
}

/* Read when the library loads, so that the hot loops' dispatchers only read a variable. */
__attribute__((constructor)) static void cpu_at_load(void) { pthread_once(&cpu_once, cpu_init); }

enum mlrt_isa mlrt_cpu_isa(void) {
    pthread_once(&cpu_once, cpu_init);
    return cpu_isa;
}

const char *mlrt_cpu_isa_name(void) { return isa_names[mlrt_cpu_isa()]; }

const char *mlrt_cpu_features(void) {
    pthread_once(&cpu_once, cpu_init);
    return cpu_features;
}

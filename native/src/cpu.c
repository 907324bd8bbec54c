/* cpu.c -- what the CPU can run, read once when the library loads: the instruction set
 * the float32 kernels run on (mlrt_cpu_isa), the x86-64 level the cloned loops run at
 * (mlrt_isa_level, internal.h's MLRT_ISA_FN) and the features behind them.
 *
 * x86-64: cpuid and xgetbv read once (mlrt_x86_bits: the instruction set bits, and the
 * register state the operating system saves: YMM for AVX, the opmask and ZMM for AVX-512,
 * the tiles for AMX), by mlrt's own table rather than the compiler's
 * __builtin_cpu_supports, whose feature names vary with the compiler's version (clang 14
 * knows neither "avxvnni" nor "f16c").  AArch64: NEON (Advanced SIMD) is part of the architecture;
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

#if defined(MLRT_X86) && defined(__GNUC__)
#include <cpuid.h>
#endif
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
uint32_t mlrt_x86_bits;
static char cpu_features[128];
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static const char *const isa_names[] = {"portable", "avx2", "avx512", "neon"};

static void add_feature(const char *name) {
    size_t used = strlen(cpu_features);
    snprintf(cpu_features + used, sizeof cpu_features - used, "%s%s", used ? " " : "", name);
}

#if defined(MLRT_X86) && defined(__GNUC__)
/* The x86 features by name: cpuid leaf (and subleaf), register, bit; and the XCR0 state
 * bits the operating system must save for it (0: none). */
typedef struct x86_feature {
    const char *name;
    unsigned leaf, sub, reg, bit; /* reg: 0 eax, 1 ebx, 2 ecx, 3 edx */
    unsigned xcr0;
} x86_feature;

#define XCR0_AVX 0x6u            /* SSE and YMM state */
#define XCR0_AVX512 0xE6u        /* and the opmask, ZMM_Hi256 and Hi16_ZMM state */
#define XCR0_AMX 0x60000u        /* XTILECFG and XTILEDATA */
static const x86_feature x86_features[MLRT_X86_COUNT] = {
    [MLRT_X86_CX16] = {"cx16", 1, 0, 2, 13, 0},
    [MLRT_X86_SSSE3] = {"ssse3", 1, 0, 2, 9, 0},
    [MLRT_X86_SSE42] = {"sse4.2", 1, 0, 2, 20, 0},
    [MLRT_X86_POPCNT] = {"popcnt", 1, 0, 2, 23, 0},
    [MLRT_X86_MOVBE] = {"movbe", 1, 0, 2, 22, 0},
    [MLRT_X86_FMA] = {"fma", 1, 0, 2, 12, XCR0_AVX},
    [MLRT_X86_AVX] = {"avx", 1, 0, 2, 28, XCR0_AVX},
    [MLRT_X86_F16C] = {"f16c", 1, 0, 2, 29, XCR0_AVX},
    [MLRT_X86_BMI] = {"bmi", 7, 0, 1, 3, 0},
    [MLRT_X86_BMI2] = {"bmi2", 7, 0, 1, 8, 0},
    [MLRT_X86_AVX2] = {"avx2", 7, 0, 1, 5, XCR0_AVX},
    [MLRT_X86_AVX512F] = {"avx512f", 7, 0, 1, 16, XCR0_AVX512},
    [MLRT_X86_AVX512DQ] = {"avx512dq", 7, 0, 1, 17, XCR0_AVX512},
    [MLRT_X86_AVX512CD] = {"avx512cd", 7, 0, 1, 28, XCR0_AVX512},
    [MLRT_X86_AVX512BW] = {"avx512bw", 7, 0, 1, 30, XCR0_AVX512},
    [MLRT_X86_AVX512VL] = {"avx512vl", 7, 0, 1, 31, XCR0_AVX512},
    [MLRT_X86_AVX512VNNI] = {"avx512vnni", 7, 0, 2, 11, XCR0_AVX512},
    [MLRT_X86_AVXVNNI] = {"avxvnni", 7, 1, 0, 4, XCR0_AVX},
    [MLRT_X86_AMX_TILE] = {"amx-tile", 7, 0, 3, 24, XCR0_AMX},
    [MLRT_X86_AMX_INT8] = {"amx-int8", 7, 0, 3, 25, XCR0_AMX},
    [MLRT_X86_LZCNT] = {"lzcnt", 0x80000001u, 0, 2, 5, 0},
    [MLRT_X86_LAHF] = {"lahf", 0x80000001u, 0, 2, 0, 0},
};
#define X86_N ((size_t)MLRT_X86_COUNT)

static void x86_read(void) {
    unsigned a, b, c, d, regs[4], max = __get_cpuid_max(0, NULL), ext = __get_cpuid_max(0x80000000u, NULL);
    unsigned long long xcr0 = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c >> 27 & 1)) { /* OSXSAVE: xgetbv may be asked */
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = (unsigned long long)hi << 32 | lo;
    }
    for (size_t i = 0; i < X86_N; ++i) {
        const x86_feature *f = &x86_features[i];
        if (f->leaf >= 0x80000000u ? f->leaf > ext : f->leaf > max) continue;
        if (!__get_cpuid_count(f->leaf, f->sub, &regs[0], &regs[1], &regs[2], &regs[3])) continue;
        if ((regs[f->reg] >> f->bit & 1) && (xcr0 & f->xcr0) == f->xcr0) mlrt_x86_bits |= UINT32_C(1) << i;
    }
}

/* Whether this CPU (and its operating system) has the feature named by the n characters at
 * name; false for a name not in the table. */
static bool x86_named(const char *name, size_t n) {
    for (size_t i = 0; i < X86_N; ++i)
        if (strlen(x86_features[i].name) == n && strncmp(x86_features[i].name, name, n) == 0)
            return (mlrt_x86_bits >> i & 1u) != 0;
    return false;
}

/* Every feature of a space-separated list (the x86-64 levels' definitions below). */
static bool x86_has_all(const char *list) {
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, " ");
        if (!x86_named(p, n)) return false;
        p += n;
        p += strspn(p, " ");
    }
    return true;
}
#define X86_V3 "cx16 lahf popcnt ssse3 sse4.2 avx avx2 bmi bmi2 f16c fma lzcnt movbe"
#define X86_V4 X86_V3 " avx512f avx512bw avx512cd avx512dq avx512vl"
#endif

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
    x86_read();
    bool avx2 = x86_has_all("avx2 fma");
    bool avx512 = x86_has_all("avx512f");
    if (avx2) add_feature("avx2"), add_feature("fma"), best = MLRT_ISA_AVX2;
    if (avx512) add_feature("avx512f"), best = MLRT_ISA_AVX512;
    if (x86_has_all("avx512bw")) add_feature("avx512bw");
    if (x86_has_all("avx512vnni")) add_feature("avx512vnni");
    if (x86_has_all("avxvnni")) add_feature("avxvnni");
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
    if (cpu_isa == MLRT_ISA_AVX512 && x86_has_all(X86_V4)) return 4;
    if (cpu_isa >= MLRT_ISA_AVX2 && x86_has_all(X86_V3)) return 3;
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

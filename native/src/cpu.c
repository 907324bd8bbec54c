/* cpu.c -- mlrt_cpu_isa: the instruction set the float32 kernels run on, decided once.
 *
 * The GEMM's micro-kernels (src/gemm.c) and the float32 paths built beside them (Conv's,
 * pooling's, reductions', the recurrent cells') ask here, so that they all take the same
 * side: MLRT_SGEMM_KERNEL=avx2 moves each of them to its AVX2 (or portable) path on an
 * AVX-512 machine, MLRT_SGEMM_KERNEL=blas to its portable path, products on OpenBLAS. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static enum mlrt_isa cpu_isa;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static void cpu_init(void) {
    cpu_isa = MLRT_ISA_PORTABLE;
#if defined(__x86_64__) && defined(__GNUC__)
    const char *want = getenv("MLRT_SGEMM_KERNEL");
    bool blas = want && strcmp(want, "blas") == 0, avx2 = want && strcmp(want, "avx2") == 0;
    __builtin_cpu_init();
    if (!blas && !avx2 && __builtin_cpu_supports("avx512f"))
        cpu_isa = MLRT_ISA_AVX512;
    else if (!blas && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        cpu_isa = MLRT_ISA_AVX2;
#endif
}

enum mlrt_isa mlrt_cpu_isa(void) {
    pthread_once(&cpu_once, cpu_init);
    return cpu_isa;
}

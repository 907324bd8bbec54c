/* version.c -- version, ABI number and build description. */
#include "internal.h"

#ifndef MLRT_VERSION_STRING
#define MLRT_VERSION_STRING "0.0.0"
#endif
#ifndef MLRT_BUILD_FLAGS
#define MLRT_BUILD_FLAGS ""
#endif

int32_t mlrt_abi_version(void) { return MLRT_ABI_VERSION; }
const char *mlrt_version(void) { return MLRT_VERSION_STRING; }
const char *mlrt_build_info(void) { return "cc " __VERSION__ "; flags " MLRT_BUILD_FLAGS; }

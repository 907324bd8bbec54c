/* error.c -- the thread-local last-error string of the C ABI. */
#if defined(_WIN32) && !defined(__USE_MINGW_ANSI_STDIO)
#define __USE_MINGW_ANSI_STDIO 1 /* C99 formats (%zu, %lld) on Windows: mingw's printf */
#endif
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static _Thread_local char last_error[1024];

const char *mlrt_last_error(void) { return last_error; }

void mlrt_clear_error(void) { last_error[0] = '\0'; }

int mlrt_fail(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

/* Put a prefix (e.g. the node name) in front of the current message. */
void mlrt_error_prefix(const char *fmt, ...) {
    char prefix[256], old[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, last_error, sizeof old);
    snprintf(last_error, sizeof last_error, "%s%s", prefix, old);
}

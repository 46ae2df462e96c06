/* sbf_error.c -- per-thread last error message: library code never prints. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sbf_error.h"

static _Thread_local char last_message[1024];

int sbf_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    return code;
}

int sbf_error_errno(int code, int errno_value, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof last_message)
        snprintf(last_message + n, sizeof last_message - (size_t)n, ": %s", strerror(errno_value));
    return code;
}

const char *sbf_error_message(void) { return last_message; }

void sbf_error_clear(void) { last_message[0] = '\0'; }

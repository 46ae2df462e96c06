/* sbf_error.h -- the per-thread last-error message of the engine; the status codes are the
 * public ones of plugin/sbf.h (a header of plain C types that filters/ may include). */
#ifndef SBF_ERROR_H
#define SBF_ERROR_H

#include "../plugin/sbf.h"   /* the status codes: SBF_OK and SBF_E_*, defined once there */

#if defined(__GNUC__)
#define SBF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SBF_PRINTF(a, b)
#endif

/* Record a message for this thread and return code, so callers can write
 * `return sbf_error(SBF_E_IO, "...")`. */
int sbf_error(int code, const char *fmt, ...) SBF_PRINTF(2, 3);
/* The same, with ": strerror(errno_value)" appended. */
int sbf_error_errno(int code, int errno_value, const char *fmt, ...) SBF_PRINTF(3, 4);
const char *sbf_error_message(void);
void sbf_error_clear(void);

#endif

/* sbf_error.h -- status codes and the per-thread last-error message of the engine.
 * The public header plugin/sbf.h repeats these codes (a static assertion keeps them equal). */
#ifndef SBF_ERROR_H
#define SBF_ERROR_H

enum {
    SBFI_OK = 0,
    SBFI_E_NOMEM = -1,   /* an allocation failed */
    SBFI_E_PARAM = -2,   /* invalid parameter or argument */
    SBFI_E_IO = -3,      /* open, read, write, close, rename failed */
    SBFI_E_FORMAT = -4,  /* input file is not what it claims: bad magic, truncated, corrupt */
    SBFI_E_VERSION = -5, /* index file of another format version */
    SBFI_E_THREAD = -6   /* a thread could not be started */
};

#if defined(__GNUC__)
#define SBF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SBF_PRINTF(a, b)
#endif

/* Record a message for this thread and return code, so callers can write
 * `return sbf_error(SBFI_E_IO, "...")`. */
int sbf_error(int code, const char *fmt, ...) SBF_PRINTF(2, 3);
/* The same, with ": strerror(errno_value)" appended. */
int sbf_error_errno(int code, int errno_value, const char *fmt, ...) SBF_PRINTF(3, 4);
const char *sbf_error_message(void);
void sbf_error_clear(void);

#endif

/* sbf_tmpfile.c -- the temporary file an output is written to before its rename. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbf_error.h"
#include "sbf_tmpfile.h"

int sbf_tmpfile_create(const char *path, char **tmp_out)
{
    *tmp_out = NULL;
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp)
        return sbf_error(SBFI_E_NOMEM, "out of memory");
    snprintf(tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int rc = sbf_error_errno(SBFI_E_IO, errno, "%s: cannot create a temporary file", path);
        free(tmp);
        return rc;
    }
    /* umask can only be read by setting it: set it straight back */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        int rc = sbf_error_errno(SBFI_E_IO, errno, "%s: chmod failed", tmp);
        close(fd);
        unlink(tmp);
        free(tmp);
        return rc;
    }
    *tmp_out = tmp;
    return fd;
}

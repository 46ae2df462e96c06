/* sbf_cli.c -- helpers shared by the subcommands of `sbf`. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../filters/sbf_tmpfile.h"
#include "sbf.h"
#include "sbf_cli.h"

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "sbf %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_int(const char *cmd, const char *option, const char *arg, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < min || v > max) {
        cli_error(cmd, "invalid value '%s' for %s: expected an integer from %ld to %ld", arg, option, min, max);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int cli_double(const char *cmd, const char *option, const char *arg, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || end == arg || *end || !(v >= min && v <= max)) {
        cli_error(cmd, "invalid value '%s' for %s: expected a number from %g to %g", arg, option, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_size(const char *cmd, const char *option, const char *arg, uint64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    double mult = 1;
    if (end != arg && *end) {
        switch (*end == 'k' ? 'K' : *end) {
        case 'K': mult = 1024.0; break;
        case 'M': mult = 1024.0 * 1024; break;
        case 'G': mult = 1024.0 * 1024 * 1024; break;
        case 'T': mult = 1024.0 * 1024 * 1024 * 1024; break;
        default: mult = 0; break;
        }
        ++end;
        if (*end == 'i')
            ++end;
        if (*end == 'B' || *end == 'b')
            ++end;
    }
    v *= mult;
    if (errno || end == arg || *end || !(v >= 1.0 && v < 9.0e18)) {
        cli_error(cmd, "invalid size '%s' for %s: expected a positive number of bytes, K/M/G/T suffixes allowed",
                  arg, option);
        return -1;
    }
    *out = (uint64_t)ceil(v);
    return 0;
}

const char *cli_bytes(uint64_t bytes, char *buf, size_t size)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    if (u == 0)
        snprintf(buf, size, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, size, "%.1f %s", v, unit[u]);
    return buf;
}

int cli_finish_stdout(const char *cmd)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(cmd, "error writing to standard output: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int cli_output_open(const char *cmd, const char *path, cli_output_t *out)
{
    memset(out, 0, sizeof *out);
    if (!path || !strcmp(path, "-")) {
        out->fp = stdout;
        return 0;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* a device or a pipe is written in place: there is nothing to rename */
        if (!(out->fp = fopen(path, "w"))) {
            cli_error(cmd, "%s: cannot open for writing: %s", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    if (!(out->path = strdup(path))) {
        cli_error(cmd, "out of memory");
        return -1;
    }
    int fd = sbf_tmpfile_create(path, &out->tmp);
    if (fd < 0) {
        cli_error(cmd, "%s", sbf_last_error());
        cli_output_abort(out);
        return -1;
    }
    if (!(out->fp = fdopen(fd, "w"))) {
        cli_error(cmd, "%s: cannot open for writing: %s", out->tmp, strerror(errno));
        close(fd);
        cli_output_abort(out);
        return -1;
    }
    return 0;
}

int cli_output_commit(const char *cmd, cli_output_t *out)
{
    if (out->fp == stdout) {
        out->fp = NULL;
        return cli_finish_stdout(cmd);
    }
    int failed = ferror(out->fp) || fflush(out->fp) != 0;
    int saved = errno;
    if (fclose(out->fp) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    out->fp = NULL;
    if (failed) {
        cli_error(cmd, "%s: write failed: %s", out->path ? out->path : "output", strerror(saved));
        cli_output_abort(out);
        return -1;
    }
    if (out->tmp && sbf_tmpfile_commit(out->tmp, out->path) != 0) {
        cli_error(cmd, "%s: cannot rename the temporary file into place: %s", out->path, strerror(errno));
        cli_output_abort(out);
        return -1;
    }
    free(out->tmp);
    free(out->path);
    out->tmp = out->path = NULL;
    return 0;
}

void cli_output_abort(cli_output_t *out)
{
    if (out->fp && out->fp != stdout)
        fclose(out->fp);
    out->fp = NULL;
    if (out->tmp)
        sbf_tmpfile_discard(out->tmp);
    free(out->tmp);
    free(out->path);
    out->tmp = out->path = NULL;
}

int cli_gpu_option(const char *cmd, const char *arg, int *out)
{
    if (!strcmp(arg, "auto")) {
        *out = SBF_GPU_AUTO;
        return 0;
    }
    if (!strcmp(arg, "none") || !strcmp(arg, "cpu")) {
        *out = SBF_GPU_NONE;
        return 0;
    }
    /* a list (0,1) is accepted; this version uses its first device (several GPUs: issue 5) */
    char first[16];
    size_t len = strcspn(arg, ",");
    if (len == 0 || len >= sizeof first) {
        cli_error(cmd, "invalid value '%s' for --gpu: expected auto, none or a device number", arg);
        return -1;
    }
    memcpy(first, arg, len);
    first[len] = '\0';
    return cli_int(cmd, "--gpu", first, 0, 1023, out);
}

int cli_gpu_resolve(const char *cmd, int want)
{
    int n = sbf_gpu_devices();
    if (want == SBF_GPU_NONE)
        return SBF_GPU_NONE;
    if (want == SBF_GPU_AUTO)
        return n > 0 ? 0 : SBF_GPU_NONE;
    if (want >= n) {
        if (n == 0)
            fprintf(stderr, "sbf %s: notice: GPU %d requested but no CUDA device is usable: using the CPU engine\n", cmd, want);
        else
            fprintf(stderr, "sbf %s: notice: no GPU number %d (devices 0 to %d): using the CPU engine\n", cmd, want, n - 1);
        return SBF_GPU_NONE;
    }
    return want;
}

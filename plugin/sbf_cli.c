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

int cli_gpu_option(const char *cmd, const char *arg, cli_gpus_t *out)
{
    *out = (cli_gpus_t){0, 0, {0}};
    if (!strcmp(arg, "auto") || !strcmp(arg, "none") || !strcmp(arg, "cpu") || !strcmp(arg, "all")) {
        out->mode = arg[0] == 'a' ? (arg[1] == 'u' ? SBF_GPU_AUTO : CLI_GPU_ALL) : SBF_GPU_NONE;
        return 0;
    }
    const char *p = arg;
    for (;;) {   /* ID[,ID...] */
        char one[16];
        size_t len = strcspn(p, ",");
        int d;
        if (len == 0 || len >= sizeof one || out->n == SBF_MAX_GPUS) {
            cli_error(cmd, "invalid value '%s' for --gpu: expected auto, none, all or device numbers (0,1)", arg);
            return -1;
        }
        memcpy(one, p, len);
        one[len] = '\0';
        if (cli_int(cmd, "--gpu", one, 0, 1023, &d) < 0)
            return -1;
        for (int i = 0; i < out->n; ++i)
            if (out->dev[i] == d) {
                cli_error(cmd, "--gpu %s: device %d is listed twice", arg, d);
                return -1;
            }
        out->dev[out->n++] = d;
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

int cli_gpu_resolve(const char *cmd, const cli_gpus_t *want, int dev[SBF_MAX_GPUS])
{
    if (want->mode == SBF_GPU_NONE)   /* before asking the driver: its start costs a run 0.1-0.3 s */
        return 0;
    int have = sbf_gpu_devices(), n = 0;
    if (want->mode == SBF_GPU_AUTO) {
        dev[0] = 0;
        return have > 0;
    }
    if (want->mode == CLI_GPU_ALL) {
        for (int d = 0; d < have && d < SBF_MAX_GPUS; ++d)
            dev[n++] = d;
        if (!n)
            fprintf(stderr, "sbf %s: notice: --gpu all but no CUDA device is usable: using the CPU engine\n", cmd);
        return n;
    }
    for (int i = 0; i < want->n; ++i) {
        int d = want->dev[i];
        if (d < have) {
            dev[n++] = d;
        } else if (have == 0) {
            fprintf(stderr, "sbf %s: notice: GPU %d requested but no CUDA device is usable: using the CPU engine\n", cmd, d);
            return 0;
        } else {
            fprintf(stderr, "sbf %s: notice: no GPU number %d (devices 0 to %d)%s\n", cmd, d, have - 1,
                    i + 1 < want->n || n ? ": left out" : ": using the CPU engine");
        }
    }
    return n;
}

int cli_once(const char *cmd, cli_seen_t *seen, int c, const char *shortopts, const struct option *lopts,
             const int *accumulate)
{
    if (c < 0 || c >= CLI_OPT_MAX || c == '?' || c == ':')
        return 0;
    for (const int *a = accumulate; a && *a; ++a)
        if (*a == c)
            return 0;
    /* does c take a value? its short letter is followed by ':', or its long entry says so */
    const char *sp = c < 128 && c != ':' ? strchr(shortopts, c) : NULL;
    int takes = sp && sp[1] == ':';
    const char *lname = NULL;
    for (const struct option *o = lopts; o && o->name; ++o)
        if (o->val == c && !o->flag) {
            takes |= o->has_arg == required_argument;
            if (!lname)
                lname = o->name;
        }
    if (!takes || !seen->seen[c]++)
        return 0;
    if (sp && lname)
        cli_error(cmd, "-%c/--%s given twice: give it once", c, lname);
    else if (lname)
        cli_error(cmd, "--%s given twice: give it once", lname);
    else
        cli_error(cmd, "-%c given twice: give it once", c);
    return -1;
}

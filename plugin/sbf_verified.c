/* sbf_verified.c -- records of indexes whose filters a run has verified (sbf_verified.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbf_cli.h"
#include "sbf_verified.h"

#define RECORD_TAG "sbf-verified 1"

/* The records' folder, or NULL (then every run verifies). */
static const char *verified_folder(void)
{
    static char folder[4096];
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && *xdg == '/')   /* the XDG rule: a relative path is ignored */
        n = snprintf(folder, sizeof folder, "%s/sbf/verified", xdg);
    else if (home && *home)
        n = snprintf(folder, sizeof folder, "%s/.cache/sbf/verified", home);
    else
        return NULL;
    return n > 0 && (size_t)n < sizeof folder ? folder : NULL;
}

/* The record's file name for the file of st, and the line it holds for that file as it is now. */
static int record_name(const struct stat *st, char *name, size_t size)
{
    const char *folder = verified_folder();
    if (!folder)
        return 0;
    int n = snprintf(name, size, "%s/%" PRIx64 "-%" PRIx64, folder, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
    return n > 0 && (size_t)n < size;
}

static void record_line(const struct stat *st, uint64_t identity, char *line, size_t size)
{
    snprintf(line, size, RECORD_TAG " %" PRIu64 " %lld.%09ld %lld.%09ld %016" PRIx64 "\n", (uint64_t)st->st_size,
             (long long)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec,
             (long)st->st_ctim.tv_nsec, identity);
}

/* 1 with *identity when the record of path matches the file as it is now. */
static int verified_before(const char *path, uint64_t *identity)
{
    struct stat st;
    char name[4200], want[256], have[256];
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !record_name(&st, name, sizeof name))
        return 0;
    FILE *fp = fopen(name, "r");
    if (!fp)
        return 0;
    int ok = fgets(have, sizeof have, fp) != NULL;
    fclose(fp);
    unsigned long long id;
    const char *last = strrchr(have, ' ');
    if (!ok || !last || sscanf(last + 1, "%16llx", &id) != 1)
        return 0;
    record_line(&st, (uint64_t)id, want, sizeof want);
    if (strcmp(have, want) != 0)
        return 0;
    *identity = (uint64_t)id;
    return 1;
}

/* mkdir -p of the records' folder (0700: the names say which files a user screened against). */
static int make_folder(const char *folder)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", folder);
    for (char *s = p + 1; *s; ++s)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST)
                return 0;
            *s = '/';
        }
    return mkdir(p, 0700) == 0 || errno == EEXIST;
}

/* The file's data on the disk before a record vouches for it: `sbf build` writes without
 * fsync (doc/decisions.md), and a record made while the verified pages were still only in the
 * page cache would outlive a crash that lost them. Free when the kernel has written them back
 * already (the usual case: an index is screened against long after its build). */
static int durable(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int ok = fdatasync(fd) == 0;
    return (close(fd) == 0) && ok;
}

/* Written to a temporary name and renamed: runs verifying the same file at once (array jobs)
 * leave one whole record. Failures are silent: the next run verifies again. */
static void verified_record(const char *path, uint64_t identity)
{
    struct stat st;
    char name[4200], tmp[4300], line[256];
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !record_name(&st, name, sizeof name) ||
        !durable(path) || !make_folder(verified_folder()))
        return;
    record_line(&st, identity, line, sizeof line);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", name, (long)getpid());
    FILE *fp = fopen(tmp, "w");
    if (!fp)
        return;
    int ok = fputs(line, fp) >= 0;
    ok = (fclose(fp) == 0) && ok;
    if (!ok || rename(tmp, name) != 0)
        unlink(tmp);
}

int cli_index_open(const char *cmd, const char *path, int always, sbf_index_t **out, index_verified_t *how)
{
    uint64_t identity = 0;
    if (how)
        *how = INDEX_VERIFIED_NOW;
    if (!always && verified_before(path, &identity)) {
        if (sbf_index_load(path, SBF_LOAD_NO_VERIFY, out) == SBF_OK) {
            if (sbf_index_checksum(*out) == identity) {
                if (how)
                    *how = INDEX_VERIFIED_BEFORE;
                return 0;
            }
            sbf_index_destroy(*out);   /* another index under the same name and times: verify it */
        }
    }
    if (sbf_index_load(path, 0, out) != SBF_OK) {
        cli_error(cmd, "%s", sbf_last_error());
        return -1;
    }
    verified_record(path, sbf_index_checksum(*out));
    return 0;
}

/* replay_main.c -- runs a libFuzzer target (linked in) on every file of its seed corpus and of
 * its regression folder: tests/fuzz/corpus/TARGET and tests/fuzz/regress/TARGET (crashes found
 * by scripts/fuzz.sh, kept once fixed). Part of `make check`, so CI replays them without clang;
 * under scripts/sanitize.sh it does so with ASan and UBSan. TAP-like output, one line per file;
 * scripts/test-summary.sh reports these replays apart from the test cases.
 *
 * Built with -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (and filters/sbf_format.c compiled with
 * it, see Makefile.am), the replay runs the target as scripts/fuzz.sh builds it: checksums off.
 * A target that says what became of each input (fuzz_outcome, set by fuzz_index: "loaded" or the
 * loader's error) has it printed; in that build an input rejected for a checksum is a failure,
 * as it shows the replay was not built as the fuzzer is and so never reaches the parser. */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FUZZ_TARGET
#error "FUZZ_TARGET must name the target (fuzz_index, fuzz_reads, fuzz_classify, fuzz_fastx)"
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* weak: only some targets define it (its address is NULL otherwise) */
extern const char *fuzz_outcome __attribute__((weak));

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
static const int checksums_off = 1;
#else
static const int checksums_off = 0;
#endif

static int n, loaded, rejected, checksum_rejected;
static char current[4096];   /* the input being replayed, for the abort handler */

/* A target's check failed (abort()): name the input before dying of it. */
static void on_abort(int sig)
{
    char line[4200];
    int len = snprintf(line, sizeof line, "not ok %d - %s: aborted (a check of the target failed)\n", n + 1, current);
    if (len > 0)
        (void)!write(STDOUT_FILENO, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1);
    signal(sig, SIG_DFL);
    raise(sig);
}

static int replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;   /* no regression folder yet */
    struct dirent *e;
    int bad = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *fp = fopen(path, "rb");
        uint8_t *buf = NULL;
        long size = -1;
        if (fp && fseek(fp, 0, SEEK_END) == 0 && (size = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0 &&
            (buf = malloc((size_t)size + 1)) && fread(buf, 1, (size_t)size, fp) == (size_t)size) {
            snprintf(current, sizeof current, "%s", path);
            fflush(stdout);   /* the abort handler writes straight to the file descriptor */
            if (&fuzz_outcome)
                fuzz_outcome = NULL;
            LLVMFuzzerTestOneInput(buf, (size_t)size);   /* a failure aborts the program */
            const char *outcome = &fuzz_outcome ? fuzz_outcome : NULL;
            if (!outcome) {
                printf("ok %d - %s\n", ++n, path);
            } else {
                char what[512];   /* no '#' in a TAP line: it would read as a directive */
                snprintf(what, sizeof what, "%s", outcome);
                for (char *c = what; *c; ++c)
                    if (*c == '#' || *c == '\n')
                        *c = ' ';
                int is_loaded = strcmp(outcome, "loaded") == 0, for_checksum = strstr(outcome, "checksum") != NULL;
                loaded += is_loaded;
                rejected += !is_loaded;
                checksum_rejected += !is_loaded && for_checksum;
                if (checksums_off && !is_loaded && for_checksum) {
                    printf("not ok %d - %s: %s\n", ++n, path, what);
                    printf("#   rejected for a checksum although this replay is built with checksums off: was "
                           "filters/sbf_format.c compiled without FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION?\n");
                    bad = 1;
                } else {
                    printf("ok %d - %s: %s%s\n", ++n, path, is_loaded ? "" : "rejected: ", what);
                }
            }
        } else {
            printf("not ok %d - %s: cannot read\n", ++n, path);
            bad = 1;
        }
        free(buf);
        if (fp)
            fclose(fp);
    }
    closedir(d);
    return bad;
}

int main(void)
{
    const char *srcdir = getenv("srcdir");
    char dir[4096];
    int bad = 0;
    signal(SIGABRT, on_abort);
    printf("# %s, checksums %s\n", STR(FUZZ_TARGET),
           checksums_off ? "off (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, as scripts/fuzz.sh builds it)" : "on");
    snprintf(dir, sizeof dir, "%s/fuzz/corpus/%s", srcdir ? srcdir : "tests", STR(FUZZ_TARGET));
    bad |= replay_dir(dir);
    snprintf(dir, sizeof dir, "%s/fuzz/regress/%s", srcdir ? srcdir : "tests", STR(FUZZ_TARGET));
    bad |= replay_dir(dir);
    if (n == 0) {
        printf("not ok 1 - no input found under %s/fuzz (set srcdir)\n", srcdir ? srcdir : "tests");
        return 1;
    }
    if (&fuzz_outcome)
        printf("# %d of %d inputs loaded, %d rejected (%d of them for a checksum)\n", loaded, n, rejected,
               checksum_rejected);
    printf("1..%d\n", n);
    return bad;
}

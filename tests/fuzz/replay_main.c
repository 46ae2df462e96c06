/* replay_main.c -- runs a libFuzzer target (linked in) on every file of its seed corpus and of
 * its regression folder: tests/fuzz/corpus/TARGET and tests/fuzz/regress/TARGET (crashes found
 * by scripts/fuzz.sh, kept once fixed). Part of `make check`, so CI replays them without clang;
 * under scripts/sanitize.sh it does so with ASan and UBSan. TAP-like output, one line per file. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FUZZ_TARGET
#error "FUZZ_TARGET must name the target (fuzz_index, fuzz_reads, fuzz_classify, fuzz_fastx)"
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int n;

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
            LLVMFuzzerTestOneInput(buf, (size_t)size);   /* a failure aborts the program */
            printf("ok %d - %s\n", ++n, path);
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
    snprintf(dir, sizeof dir, "%s/fuzz/corpus/%s", srcdir ? srcdir : "tests", STR(FUZZ_TARGET));
    bad |= replay_dir(dir);
    snprintf(dir, sizeof dir, "%s/fuzz/regress/%s", srcdir ? srcdir : "tests", STR(FUZZ_TARGET));
    bad |= replay_dir(dir);
    if (n == 0) {
        printf("not ok 1 - no input found under %s/fuzz (set srcdir)\n", srcdir ? srcdir : "tests");
        return 1;
    }
    printf("1..%d\n", n);
    return bad;
}

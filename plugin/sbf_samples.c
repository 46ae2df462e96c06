/* sbf_samples.c -- `--samples LIST` of sbf classify and sbf filter: many samples screened in
 * one command against indexes opened once (and put on the GPUs once), each sample a run of its
 * own with its own outputs, named by putting {sample} in the output options.
 *
 * The list is a text file, one sample per line: NAME, a tab, its input, and for mate files a
 * tab and the second input; blank lines and lines starting with '#' are skipped. Every line is
 * checked before the first sample runs (a malformed line 90 should not cost the first 89
 * samples' hours), and so is every input (it must exist and be readable). A sample that fails
 * stops the command: the samples before it are complete, its own outputs do not appear (each
 * run writes to temporary names), and the later ones are not run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbf_cli.h"
#include "sbf_screen_int.h"

#define SAMPLE_MARK "{sample}"

typedef struct {
    char *name, *in[2];
    int line;
} sample_t;

typedef struct {
    sample_t *v;
    int n, cap;
} sample_list_t;

static void list_free(sample_list_t *l)
{
    for (int i = 0; i < l->n; ++i) {
        free(l->v[i].name);
        free(l->v[i].in[0]);
        free(l->v[i].in[1]);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* A sample's name goes into file names: letters, digits, '.', '_' and '-', not starting with
 * '.' or '-' (no hidden files, no option-like names). */
static int good_name(const char *s)
{
    if (!*s || *s == '.' || *s == '-')
        return 0;
    for (; *s; ++s)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
              *s == '_' || *s == '-'))
            return 0;
    return 1;
}

/* One line (its newline removed) into a sample; 0, 1 when the line is blank or a comment, or
 * -1 after printing. */
static int parse_line(const screen_opt_t *o, const char *path, int line_no, char *line, sample_t *out)
{
    size_t len = strlen(line);
    if (len && line[len - 1] == '\r')   /* a list written on Windows */
        line[--len] = 0;
    if (!len || line[0] == '#')
        return 1;
    char *field[4] = {NULL};
    int n = 0;
    for (char *p = line; n < 4; ++n) {
        field[n] = p;
        char *tab = strchr(p, '\t');
        if (!tab) {
            ++n;
            break;
        }
        *tab = 0;
        p = tab + 1;
    }
    if (n < 2 || n > 3) {
        cli_error(o->cmd, "%s, line %d: %s: want NAME<tab>INPUT[<tab>INPUT2]", path, line_no,
                  n < 2 ? "one field" : "more than three fields");
        return -1;
    }
    if (!good_name(field[0])) {
        cli_error(o->cmd, "%s, line %d: sample name '%s': letters, digits, '.', '_' and '-' only, not first '.' or '-'",
                  path, line_no, field[0]);
        return -1;
    }
    for (int i = 1; i < n; ++i) {
        if (!*field[i] || !strcmp(field[i], "-")) {
            cli_error(o->cmd, "%s, line %d: sample '%s': %s", path, line_no, field[0],
                      *field[i] ? "standard input ('-') cannot be a sample's input" : "an empty input");
            return -1;
        }
        if (access(field[i], R_OK) != 0) {
            cli_error(o->cmd, "%s, line %d: sample '%s': %s: %s", path, line_no, field[0], field[i], strerror(errno));
            return -1;
        }
    }
    if (n == 3 && o->interleaved) {
        cli_error(o->cmd, "%s, line %d: sample '%s' has two inputs: --interleaved reads pairs from one", path, line_no,
                  field[0]);
        return -1;
    }
    out->line = line_no;
    if (!(out->name = strdup(field[0])) || !(out->in[0] = strdup(field[1])) ||
        (n == 3 && !(out->in[1] = strdup(field[2])))) {
        cli_error(o->cmd, "out of memory");
        return -1;
    }
    return 0;
}

static int read_list(const screen_opt_t *o, sample_list_t *l)
{
    const char *path = o->samples;
    FILE *fp = fopen(path, "r");
    if (!fp) {
        cli_error(o->cmd, "%s: cannot open the sample list: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int line_no = 0, rc = 0;
    while (rc == 0 && getline(&line, &cap, fp) >= 0) {
        ++line_no;
        line[strcspn(line, "\n")] = 0;
        if (l->n == l->cap) {
            int ncap = l->cap ? 2 * l->cap : 16;
            sample_t *v = realloc(l->v, (size_t)ncap * sizeof *v);
            if (!v) {
                cli_error(o->cmd, "out of memory");
                rc = -1;
                break;
            }
            l->v = v;
            l->cap = ncap;
        }
        memset(&l->v[l->n], 0, sizeof l->v[l->n]);
        int r = parse_line(o, path, line_no, line, &l->v[l->n]);
        for (int i = 0; r == 0 && i < l->n; ++i)
            if (!strcmp(l->v[i].name, l->v[l->n].name)) {
                cli_error(o->cmd, "%s, line %d: sample '%s' is also on line %d", path, line_no, l->v[i].name,
                          l->v[i].line);
                r = -1;
            }
        if (r != 1)
            ++l->n;   /* freed with the list, whole or not */
        if (r < 0)
            rc = -1;
    }
    if (rc == 0 && ferror(fp)) {
        cli_error(o->cmd, "%s: read failed: %s", path, strerror(errno));
        rc = -1;
    }
    free(line);
    fclose(fp);
    if (rc == 0 && l->n == 0) {
        cli_error(o->cmd, "%s: no sample in the list", path);
        rc = -1;
    }
    return rc;
}

/* The output options that name files: the option, where its path lies, the suffix of the
 * example a refusal gives, and whether it writes reads (else a summary). */
typedef struct {
    const char *option;
    const char **path;
    const char *example;
    int reads;
} out_slot_t;

#define OUT_SLOTS 7

static void out_slots(screen_opt_t *o, out_slot_t slot[OUT_SLOTS])
{
    slot[0] = (out_slot_t){"-o", &o->out, "fq.gz", 1};
    slot[1] = (out_slot_t){"-1", &o->out1, "fq.gz", 1};
    slot[2] = (out_slot_t){"-2", &o->out2, "fq.gz", 1};
    slot[3] = (out_slot_t){"--split", &o->split_pattern, "fq.gz", 1};
    slot[4] = (out_slot_t){"--summary", &o->summary_tsv, "tsv", 0};
    slot[5] = (out_slot_t){"--json", &o->json, "json", 0};
    slot[6] = (out_slot_t){"--report", &o->report, "html", 0};
}

int screen_check_samples(screen_opt_t *o)
{
    out_slot_t slot[OUT_SLOTS];
    int reads_out = 0;
    out_slots(o, slot);
    for (int i = 0; i < OUT_SLOTS; ++i) {
        const char *p = *slot[i].path;
        if (!p)
            continue;
        if (!strstr(p, SAMPLE_MARK)) {
            cli_error(o->cmd, "with --samples, %s '%s' must contain %s (each sample writes its own; e.g. %s "
                      "'%s.%s')", slot[i].option, p, SAMPLE_MARK, slot[i].option, SAMPLE_MARK, slot[i].example);
            return -1;
        }
        reads_out |= slot[i].reads;
    }
    if (o->mode != SCREEN_COUNT && !reads_out) {
        cli_error(o->cmd, "with --samples, name each sample's reads output: -o '%s.fq.gz' (or -1/-2, --split)",
                  SAMPLE_MARK);
        return -1;
    }
    return 0;
}

/* path with every {sample} replaced by name (malloc'd), or NULL for NULL. */
static char *with_name(const char *path, const char *name, int *oom)
{
    if (!path)
        return NULL;
    size_t n = 0, ln = strlen(name), lm = strlen(SAMPLE_MARK);
    for (const char *p = strstr(path, SAMPLE_MARK); p; p = strstr(p + lm, SAMPLE_MARK))
        ++n;
    char *out = malloc(strlen(path) + n * ln + 1), *w = out;
    if (!out) {
        *oom = 1;
        return NULL;
    }
    for (const char *p = path;;) {
        const char *m = strstr(p, SAMPLE_MARK);
        size_t k = m ? (size_t)(m - p) : strlen(p);
        memcpy(w, p, k);
        w += k;
        if (!m)
            break;
        memcpy(w, name, ln);
        w += ln;
        p = m + lm;
    }
    *w = 0;
    return out;
}

int screen_run_samples(const screen_opt_t *o)
{
    sample_list_t l = {0};
    if (read_list(o, &l) < 0) {
        list_free(&l);
        return 1;
    }
    screen_kept_t kept;
    memset(&kept, 0, sizeof kept);
    int status = 0, done = 0;
    const double t0 = sbf_now();
    for (int i = 0; i < l.n && status == 0; ++i) {
        const sample_t *sm = &l.v[i];
        screen_opt_t so = *o;
        out_slot_t slot[OUT_SLOTS];
        char *owned[OUT_SLOTS] = {NULL};
        int oom = 0;
        out_slots(&so, slot);
        for (int j = 0; j < OUT_SLOTS; ++j)
            *slot[j].path = owned[j] = with_name(*slot[j].path, sm->name, &oom);
        so.in[0] = sm->in[0];
        so.in[1] = sm->in[1];
        so.sample = sm->name;
        so.kept = &kept;
        if (oom) {
            cli_error(o->cmd, "out of memory");
            status = 1;
        } else {
            fprintf(stderr, "sbf %s: sample %s (%d of %d): %s%s%s\n", o->cmd, sm->name, i + 1, l.n, sm->in[0],
                    sm->in[1] ? " " : "", sm->in[1] ? sm->in[1] : "");
            status = screen_run(&so);
        }
        for (int j = 0; j < OUT_SLOTS; ++j)
            free(owned[j]);
        if (status != 0)
            cli_error(o->cmd, "sample '%s' (line %d of %s) failed: %d of %d samples done; the later ones were not run",
                      sm->name, sm->line, o->samples, done, l.n);
        else
            ++done;
    }
    if (status == 0)
        fprintf(stderr, "sbf %s: %d sample%s done in %.2f s, the index%s opened once\n", o->cmd, done, done == 1 ? "" : "s",
                sbf_now() - t0, kept.n > 1 ? "es" : "");
    for (int x = 0; x < kept.n; ++x)
        sbf_index_destroy(kept.idx[x]);
    list_free(&l);
    return status;
}

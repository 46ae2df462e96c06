/* sbf_summary.c -- the reports of a screening run (see sbf_summary.h). */
#include <stdlib.h>
#include <string.h>

#include "sbf_summary.h"
#include "../filters/sbf_classify.h"

int summary_alloc(screen_summary_t *s, int n_targets)
{
    s->n_targets = n_targets;
    s->cat = calloc((size_t)n_targets + 2, sizeof *s->cat);
    s->hits = calloc((size_t)n_targets + 1, sizeof *s->hits);
    s->shared = calloc((size_t)n_targets + 1, sizeof *s->shared);
    s->score_hist = calloc(((size_t)n_targets + 1) * SUMMARY_BINS, sizeof *s->score_hist);
    return s->cat && s->hits && s->shared && s->score_hist ? 0 : -1;
}

void summary_free(screen_summary_t *s)
{
    free(s->cat);
    free(s->hits);
    free(s->shared);
    free(s->score_hist);
    s->cat = s->hits = s->shared = s->score_hist = NULL;
}

static double rate(uint64_t n, uint64_t total) { return total ? (double)n / (double)total : 0.0; }

/* BioBloom Tools' categorizer summary: per target, fragments that pass it (hits), that do not
 * (misses) and that pass it and another target too (shared); then multiMatch and noMatch. */
void summary_write_tsv(const screen_summary_t *s, FILE *fp)
{
    uint64_t n = s->frags;
    fprintf(fp, "filter_id\thits\tmisses\tshared\trate_hit\trate_miss\trate_shared\n");
    for (int t = 0; t < s->n_targets; ++t)
        fprintf(fp, "%s\t%llu\t%llu\t%llu\t%.6g\t%.6g\t%.6g\n", s->names[t], (unsigned long long)s->hits[t],
                (unsigned long long)(n - s->hits[t]), (unsigned long long)s->shared[t], rate(s->hits[t], n),
                rate(n - s->hits[t], n), rate(s->shared[t], n));
    const char *rows[2] = {"multiMatch", "noMatch"};
    for (int i = 0; i < 2; ++i) {
        uint64_t c = s->cat[s->n_targets + i];
        fprintf(fp, "%s\t%llu\t%llu\t0\t%.6g\t%.6g\t0\n", rows[i], (unsigned long long)c,
                (unsigned long long)(n - c), rate(c, n), rate(n - c, n));
    }
}

/* V's characters as in a JSON string, without the quotes. */
static void json_chars(FILE *fp, const char *v)
{
    for (const unsigned char *p = (const unsigned char *)v; *p; ++p) {
        if (*p == '"' || *p == '\\')
            fprintf(fp, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(fp, "\\u%04x", *p);
        else
            fputc(*p, fp);
    }
}

static void json_string(FILE *fp, const char *v)
{
    fputc('"', fp);
    json_chars(fp, v);
    fputc('"', fp);
}

/* The loaded indexes' targets in order, each with its masks: pos starts at {0, 0}; 0 when none
 * is left. A target the library cannot describe is skipped. */
typedef struct {
    int index;                   /* which of the run's indexes */
    sbf_target_info_t ti;
    int n_masks;
    const char *const *masks;
    uint64_t masked;             /* k-mers its masks left out */
} summary_target_t;

static int next_target(const screen_summary_t *s, int pos[2], summary_target_t *v)
{
    for (; s->indexes && pos[0] < s->n_indexes; ++pos[0], pos[1] = 0)
        while (pos[1] < sbf_index_n_targets(s->indexes[pos[0]])) {
            const int t = pos[1]++;
            v->index = pos[0];
            if (sbf_index_target(s->indexes[pos[0]], t, &v->ti) == SBF_OK &&
                sbf_index_target_masks(s->indexes[pos[0]], t, &v->n_masks, &v->masks, &v->masked) == SBF_OK)
                return 1;
        }
    return 0;
}

/* The sample a JSON summary at PATH reports: its file name less ".json", then "_mqc" (MultiQC's
 * custom-content suffix), then ".summary" or "_summary"; "sbf" for standard output. */
static void json_sample(const char *path, char *buf, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!strcmp(path, "-") || !*base)
        base = "sbf";
    snprintf(buf, size, "%s", base);
    const char *suffixes[] = {".json", "_mqc", ".summary", "_summary"};
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; ++i) {
        size_t n = strlen(buf), m = strlen(suffixes[i]);
        if (n > m && !strcmp(buf + n - m, suffixes[i]))
            buf[n - m] = '\0';
    }
}

/* MultiQC's custom content (its id, section, table settings and one row, "data"): what a
 * submission's reviewer checks. Every value is a string or a number: MultiQC shows them as is. */
static void json_multiqc(const screen_summary_t *s, const char *path, FILE *fp)
{
    char sample[256], rule[256];
    json_sample(path, sample, sizeof sample);
    sbf_classify_opt_describe(s->rule, rule, sizeof rule);
    fprintf(fp, "  \"id\": \"sbf_provenance\",\n  \"section_name\": \"sbf: index and provenance\",\n"
            "  \"description\": \"What each sample was screened against: the index files, their checksums "
            "(sbf info --check), the targets with their masks, the scoring rule, and the %s in, out and "
            "removed.\",\n  \"plot_type\": \"table\",\n"
            "  \"pconfig\": {\"id\": \"sbf_provenance_table\", \"title\": \"sbf: provenance\", "
            "\"col1_header\": \"Sample\"},\n  \"data\": {", s->unit);
    json_string(fp, sample);
    fprintf(fp, ": {\"command\": \"sbf %s\", \"index\": \"", s->cmd);
    for (int i = 0; i < s->n_indexes; ++i) {
        fputs(i ? ", " : "", fp);
        json_chars(fp, s->index_paths[i]);
    }
    fprintf(fp, "\", \"checksum\": \"");
    for (int i = 0; i < s->n_indexes && s->indexes; ++i)
        fprintf(fp, "%s%016llx", i ? ", " : "", (unsigned long long)sbf_index_checksum(s->indexes[i]));
    fprintf(fp, "\", \"targets\": \"");
    summary_target_t v;
    for (int pos[2] = {0, 0}, first = 1; next_target(s, pos, &v); first = 0) {
        fputs(first ? "" : "; ", fp);
        json_chars(fp, v.ti.name);
        for (int j = 0; j < v.n_masks; ++j) {   /* files by name; "(low complexity: ...)" bare */
            const char *m = v.masks[j], *slash = strrchr(m, '/');
            size_t len = strlen(m);
            char bare[128];
            if (m[0] == '(' && len > 2 && m[len - 1] == ')')
                snprintf(bare, sizeof bare, "%.*s", (int)(len - 2), m + 1);
            else
                snprintf(bare, sizeof bare, "%s", slash ? slash + 1 : m);
            fputs(j ? ", " : " (masks: ", fp);
            json_chars(fp, bare);
        }
        if (v.n_masks)
            fprintf(fp, "; %llu k-mers left out)", (unsigned long long)v.masked);
    }
    fprintf(fp, "\", \"scoring\": ");
    json_string(fp, rule);
    fprintf(fp, ", \"renamed\": \"%s\", \"%s in\": %llu", s->renamed ? "yes" : "no", s->unit,
            (unsigned long long)s->frags);
    if (!strcmp(s->mode, "filter"))
        fprintf(fp, ", \"%s out\": %llu, \"%s removed\": %llu, \"removed %%\": %.4f", s->unit,
                (unsigned long long)s->frags_out, s->unit, (unsigned long long)(s->frags - s->frags_out),
                100 * rate(s->frags - s->frags_out, s->frags));
    fprintf(fp, "}},\n");
}

void summary_write_json(const screen_summary_t *s, const char *path, FILE *fp)
{
    fprintf(fp, "{\n  \"program\": \"sbf %s\",\n  \"mode\": ", s->cmd);
    json_string(fp, s->mode);
    if (s->sample) {
        fprintf(fp, ",\n  \"sample\": ");
        json_string(fp, s->sample);
    }
    fprintf(fp, ",\n  \"index\": ");
    json_string(fp, s->index_path);
    fprintf(fp, ",\n  \"indexes\": [");
    for (int i = 0; i < s->n_indexes; ++i) {
        fprintf(fp, i ? ", " : "");
        json_string(fp, s->index_paths[i]);
    }
    fputc(']', fp);
    /* provenance: which index, byte for byte, and what each target was built from */
    fprintf(fp, ",\n  \"index_checksums\": [");
    for (int i = 0; i < s->n_indexes && s->indexes; ++i)
        fprintf(fp, "%s\"%016llx\"", i ? ", " : "", (unsigned long long)sbf_index_checksum(s->indexes[i]));
    fprintf(fp, "],\n  \"targets\": [");
    summary_target_t v;
    for (int pos[2] = {0, 0}, first = 1; next_target(s, pos, &v); first = 0) {
        fprintf(fp, "%s\n    {\"name\": ", first ? "" : ",");
        json_string(fp, v.ti.name);
        fprintf(fp, ", \"index\": %d, \"sources\": [", v.index);
        for (int j = 0; j < v.ti.n_sources; ++j) {
            fprintf(fp, j ? ", " : "");
            json_string(fp, v.ti.sources[j]);
        }
        fprintf(fp, "], \"masks\": [");
        for (int j = 0; j < v.n_masks; ++j) {
            fprintf(fp, j ? ", " : "");
            json_string(fp, v.masks[j]);
        }
        fprintf(fp, "], \"masked_kmers\": %llu}", (unsigned long long)v.masked);
    }
    fprintf(fp, "\n  ]");
    fprintf(fp, ",\n  \"inputs\": [");
    for (int i = 0; i < 2 && s->inputs[i]; ++i) {
        fprintf(fp, i ? ", " : "");
        json_string(fp, s->inputs[i]);
    }
    fprintf(fp, "],\n  \"engine\": ");
    json_string(fp, s->engine);
    const sbf_classify_opt_t *r = s->rule;
    fprintf(fp, ",\n  \"scoring\": {\"rule\": \"%s\", \"min_score\": %g, \"min_hits\": %u, \"min_fraction\": %g, "
            "\"margin\": %g, \"mask_lowcomp\": %u, \"mates\": \"%s\"},\n",
            r->min_score > 0 ? "calibrated" : "fraction", r->min_score, r->min_hits, r->min_fraction, r->margin,
            r->mask_lowcomp, sbf_mates_name(r->mates));
    fprintf(fp, "  \"masked\": {\"reads\": %llu, \"bases\": %llu},\n", (unsigned long long)s->masked_reads,
            (unsigned long long)s->masked_bases);
    fprintf(fp, "  \"renamed\": %s,\n", s->renamed ? "true" : "false");
    if (s->layer_k)
        fprintf(fp, "  \"long_read_layer\": {\"k\": %d, \"min_read_bases\": %d, \"%s\": %llu},\n", s->layer_k,
                SBF_LONG_READ_BASES, s->unit, (unsigned long long)s->long_frags);
    else
        fprintf(fp, "  \"long_read_layer\": null,\n");
    fprintf(fp, "  \"test_switches\": [");
    for (const char *p = s->switches; p && *p;) {   /* comma-separated names, as a JSON list */
        size_t n = strcspn(p, ",");
        fprintf(fp, "%s\"%.*s\"", p == s->switches ? "" : ", ", (int)n, p);
        p += n + (p[n] == ',');
    }
    fprintf(fp, "],\n");
    fprintf(fp, "  \"unit\": \"%s\",\n", s->unit);
    for (int io = 0; io < 2; ++io) {
        uint64_t frags = io ? s->frags_out : s->frags, reads = io ? s->reads_out : s->reads_in;
        uint64_t bases = io ? s->bases_out : s->bases_in;
        fprintf(fp, "  \"%s\": {", io ? "out" : "in");
        if (strcmp(s->unit, "reads") != 0)   /* pairs or fragments, then reads */
            fprintf(fp, "\"%s\": %llu, ", s->unit, (unsigned long long)frags);
        fprintf(fp, "\"reads\": %llu, \"bases\": %llu},\n", (unsigned long long)reads, (unsigned long long)bases);
    }
    fprintf(fp, "  \"not_classified_records\": %llu,\n", (unsigned long long)s->extras);
    fprintf(fp, "  \"no_kmer\": %llu,\n  \"categories\": [\n", (unsigned long long)s->no_kmer);
    for (int c = 0; c < s->n_targets + 2; ++c) {
        fprintf(fp, "    {\"name\": ");
        json_string(fp, s->names[c]);
        fprintf(fp, ", \"%s\": %llu, \"fraction\": %.6g", s->unit, (unsigned long long)s->cat[c],
                rate(s->cat[c], s->frags));
        if (c < s->n_targets)
            fprintf(fp, ", \"passing\": %llu, \"shared\": %llu", (unsigned long long)s->hits[c],
                    (unsigned long long)s->shared[c]);
        if (c == s->n_targets)   /* multi: of which chimeric (parts of different targets) */
            fprintf(fp, ", \"chimeric\": %llu", (unsigned long long)s->chimeric);
        fprintf(fp, "}%s\n", c + 1 < s->n_targets + 2 ? "," : "");
    }
    fprintf(fp, "  ],\n");
    json_multiqc(s, path, fp);
    fprintf(fp, "  \"seconds\": %.3f,\n  \"reads_per_second\": %.0f\n}\n", s->seconds,
            s->seconds > 0 ? (double)s->reads_in / s->seconds : 0.0);
}

void summary_print(const screen_summary_t *s, FILE *fp)
{
    fprintf(fp, "sbf %s: %llu %s", s->cmd, (unsigned long long)s->frags, s->unit);
    if (s->reads_in != s->frags)
        fprintf(fp, " (%llu reads)", (unsigned long long)s->reads_in);
    fprintf(fp, ", %.1f Mbp in %.2f s, %.0f reads/s; engine %s\n", (double)s->bases_in / 1e6, s->seconds,
            s->seconds > 0 ? (double)s->reads_in / s->seconds : 0.0, s->engine);
    size_t w = 8;
    for (int c = 0; c < s->n_targets + 2; ++c)
        if (strlen(s->names[c]) > w)
            w = strlen(s->names[c]);
    for (int c = 0; c < s->n_targets + 2; ++c) {
        fprintf(fp, "  %-*s %12llu  %6.2f%%", (int)w, s->names[c], (unsigned long long)s->cat[c],
                100 * rate(s->cat[c], s->frags));
        if (c == s->n_targets && s->chimeric)
            fprintf(fp, "  (%llu with parts of different targets)", (unsigned long long)s->chimeric);
        if (c == s->n_targets + 1 && s->no_kmer)
            fprintf(fp, "  (%llu without a valid k-mer)", (unsigned long long)s->no_kmer);
        fputc('\n', fp);
    }
    char rule[256];
    sbf_classify_opt_describe(s->rule, rule, sizeof rule);
    fprintf(fp, "  scoring: %s\n", rule);
    for (int i = 0; i < s->n_indexes && s->indexes; ++i)
        fprintf(fp, "  index: %s, checksum %016llx\n", s->index_paths[i],
                (unsigned long long)sbf_index_checksum(s->indexes[i]));
    if (s->switches)
        fprintf(fp, "  test switches set: %s (see sbf(1), ENVIRONMENT)\n", s->switches);
    if (s->renamed)
        fprintf(fp, "  names: replaced by %s numbers (--rename)\n", strcmp(s->unit, "reads") ? "fragment" : "read");
    if (s->long_frags)
        fprintf(fp, "  long reads: %llu %s %s %d+ bases screened with the k=%d layer\n", (unsigned long long)s->long_frags,
                s->unit, strcmp(s->unit, "reads") ? "with a read of" : "of", SBF_LONG_READ_BASES, s->layer_k);
    if (s->masked_reads)
        fprintf(fp, "  low complexity: %llu reads had %llu bases masked\n", (unsigned long long)s->masked_reads,
                (unsigned long long)s->masked_bases);
    if (!strcmp(s->mode, "filter"))
        fprintf(fp, "  written: %llu of %llu %s\n", (unsigned long long)s->frags_out, (unsigned long long)s->frags,
                s->unit);
    if (s->extras)
        fprintf(fp, "  %llu secondary/supplementary records not classified\n", (unsigned long long)s->extras);
}

/* sbf_info_cmd.c -- `sbf info`: what an index holds, as text or JSON. */
#include <string.h>

#include "sbf.h"
#include "sbf_cli.h"
#include "sbf_verified.h"

void usage_info(FILE *fp)
{
    fprintf(fp,
            "Usage: sbf info [--json | --check] IDX.sbf\n"
            "\n"
            "Prints the parameters and, per target, its sources, bases, k-mers, filter size, fill,\n"
            "predicted false-positive rate (of a random k-mer) and panel: \"own\" for a filter of\n"
            "its own, \"N: c/W\" for c of the W columns of panel N, which targets of about the\n"
            "same size share (one query reads them together); then, for each target masked at\n"
            "build time, its masks and the k-mers they left out; then the long-read layer (the\n"
            "targets with shorter k-mers, for reads of 1,000 bases or more). Checks the header's\n"
            "and metadata's checksums, and the filters' the first time it meets the file (as\n"
            "every command does: see --check).\n"
            "The text form is for people; use --json in scripts.\n"
            "\n"
            "Options:\n"
            "      --json   machine-readable output\n"
            "      --check  verify every section and print only the file's checksum (exit 1 on\n"
            "               a damaged file): compare it with a shared index's manifest\n"
            "  -h, --help   this help\n");
}

static void json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

static void print_json(const char *path, const sbf_index_t *idx, const sbf_opt_t *o)
{
    printf("{\n  \"file\": ");
    json_string(path);
    printf(",\n  \"checksum\": \"%016llx\",\n  \"sbf_version\": \"%s\",\n  \"k\": %d,\n  \"m\": %d,\n  \"s\": %d,\n  \"hashes\": %d,\n"
           "  \"shard_bits\": %d,\n  \"bits_per_kmer\": %g,\n",
           (unsigned long long)sbf_index_checksum(idx), sbf_version(), o->k, o->m, o->s, o->hashes, o->shard_bits,
           o->bits_per_kmer);
    char desc[256];
    if (sbf_gpu_devices() > 0 && sbf_gpu_describe_device(0, desc, sizeof desc) == SBF_OK) {
        printf("  \"gpu\": ");
        json_string(desc);
        printf(",\n");
    } else {
        printf("  \"gpu\": null,\n");
    }
    printf("  \"targets\": [");
    for (int t = 0; t < sbf_index_n_targets(idx); ++t) {
        sbf_target_info_t ti;
        if (sbf_index_target(idx, t, &ti) != SBF_OK)
            continue;
        printf("%s\n    {\"name\": ", t ? "," : "");
        json_string(ti.name);
        printf(", \"sources\": [");
        for (int i = 0; i < ti.n_sources; ++i) {
            if (i)
                printf(", ");
            json_string(ti.sources[i]);
        }
        int pn = 0, cols = 0, width = 0;
        sbf_index_target_panel(idx, t, &pn, &cols, &width);
        int n_masks = 0;
        const char *const *masks = NULL;
        uint64_t masked = 0;
        sbf_index_target_masks(idx, t, &n_masks, &masks, &masked);
        printf("], \"bases\": %llu, \"kmers\": %llu, \"bytes\": %llu, \"fill\": %.6f, \"predicted_fpr\": %.6g, "
               "\"panel\": %d, \"columns\": %d, \"panel_columns\": %d, \"masks\": [",
               (unsigned long long)ti.bases, (unsigned long long)ti.kmers, (unsigned long long)ti.bytes, ti.fill,
               ti.predicted_fpr, pn, cols, width);
        for (int i = 0; i < n_masks; ++i) {
            if (i)
                printf(", ");
            json_string(masks[i]);
        }
        printf("], \"masked_kmers\": %llu}", (unsigned long long)masked);
    }
    printf("\n  ],\n  \"long_read_layer\": ");
    const sbf_index_t *ly = sbf_index_long_layer(idx);
    if (!ly) {
        printf("null\n}\n");
        return;
    }
    sbf_opt_t lo;
    sbf_index_params(ly, &lo);
    printf("{\"k\": %d, \"m\": %d, \"s\": %d, \"hashes\": %d, \"shard_bits\": %d, \"bits_per_kmer\": %g, "
           "\"min_read_bases\": %d, \"targets\": [",
           lo.k, lo.m, lo.s, lo.hashes, lo.shard_bits, lo.bits_per_kmer, SBF_LONG_READ_BASES);
    for (int t = 0; t < sbf_index_n_targets(ly); ++t) {
        sbf_target_info_t ti;
        uint64_t masked = 0;
        double chance = 0;
        if (sbf_index_target(ly, t, &ti) != SBF_OK || sbf_index_target_masks(ly, t, NULL, NULL, &masked) != SBF_OK ||
            sbf_index_target_chance(ly, t, &chance) != SBF_OK)
            continue;
        printf("%s\n    {\"name\": ", t ? "," : "");
        json_string(ti.name);
        printf(", \"kmers\": %llu, \"masked_kmers\": %llu, \"bytes\": %llu, \"fill\": %.6f, \"predicted_fpr\": %.6g, "
               "\"measured_chance\": %.6g}",
               (unsigned long long)ti.kmers, (unsigned long long)masked, (unsigned long long)ti.bytes, ti.fill,
               ti.predicted_fpr, chance);
    }
    printf("\n  ]}\n}\n");
}

/* Aligned table for people; --json is the stable format for programs. */
static void print_text(const char *path, const sbf_index_t *idx, const sbf_opt_t *o)
{
    const int n = sbf_index_n_targets(idx);
    printf("index       %s\n", path);
    printf("checksum    %016llx\n", (unsigned long long)sbf_index_checksum(idx));
    printf("parameters  k=%d m=%d s=%d H=%d, %d-bit shards", o->k, o->m, o->s, o->hashes, o->shard_bits);
    if (o->bits_per_kmer > 0)
        printf(", %g bits per k-mer", o->bits_per_kmer);
    else
        printf(", fixed filter size");
    printf("\ntargets     %d\n", n);
    char desc[256];
    if (sbf_gpu_devices() > 0 && sbf_gpu_describe_device(0, desc, sizeof desc) == SBF_OK)
        printf("engine      GPU 0: %s\n\n", desc);
    else
        printf("engine      CPU (no usable CUDA device)\n\n");
    int wname = 6;
    for (int t = 0; t < n; ++t) {
        sbf_target_info_t ti;
        if (sbf_index_target(idx, t, &ti) == SBF_OK && (int)strlen(ti.name) > wname)
            wname = (int)strlen(ti.name);
    }
    printf("%-*s  %13s  %13s  %10s  %6s  %9s  %-11s  %s\n", wname, "target", "bases", "k-mers", "filter", "fill",
           "pred. FPR", "panel", "sources");
    for (int t = 0; t < n; ++t) {
        sbf_target_info_t ti;
        char size[32], panel[32];
        int pn, cols, width;
        if (sbf_index_target(idx, t, &ti) != SBF_OK || sbf_index_target_panel(idx, t, &pn, &cols, &width) != SBF_OK)
            continue;
        /* "own": a filter of its own; "N: c/W": c of the W columns of panel N */
        if (width == 1)
            snprintf(panel, sizeof panel, "own");
        else
            snprintf(panel, sizeof panel, "%d: %d/%d", pn, cols, width);
        printf("%-*s  %13llu  %13llu  %10s  %6.4f  %9.2e  %-11s  ", wname, ti.name, (unsigned long long)ti.bases,
               (unsigned long long)ti.kmers, cli_bytes(ti.bytes, size, sizeof size), ti.fill, ti.predicted_fpr, panel);
        for (int i = 0; i < ti.n_sources; ++i)
            printf("%s%s", i ? ", " : "", ti.sources[i]);
        putchar('\n');
    }
    /* the masks after the table: a list of files does not fit a column */
    int first = 1;
    for (int t = 0; t < n; ++t) {
        sbf_target_info_t ti;
        int n_masks = 0;
        const char *const *masks = NULL;
        uint64_t masked = 0;
        if (sbf_index_target(idx, t, &ti) != SBF_OK || sbf_index_target_masks(idx, t, &n_masks, &masks, &masked) != SBF_OK ||
            n_masks == 0)
            continue;
        printf("%s%-*s  %llu k-mers (%.4f%%) left out, found in ", first ? "\nmasked\n" : "", wname, ti.name,
               (unsigned long long)masked, 100.0 * (double)masked / (double)(masked + ti.kmers));
        first = 0;
        for (int i = 0; i < n_masks; ++i)
            printf("%s%s", i ? ", " : "", masks[i]);
        putchar('\n');
    }
    const sbf_index_t *ly = sbf_index_long_layer(idx);
    if (!ly) {
        printf("\nlong-read layer: none (fragments of every length are screened with the k-mers above)\n");
        return;
    }
    sbf_opt_t lo;
    sbf_index_params(ly, &lo);
    printf("\nlong-read layer: k=%d m=%d s=%d H=%d, %d-bit shards, %g bits per k-mer, sequencing adapters and\n"
           "low-complexity k-mers left out; screens fragments with a read of %d bases or more\n",
           lo.k, lo.m, lo.s, lo.hashes, lo.shard_bits, lo.bits_per_kmer, SBF_LONG_READ_BASES);
    printf("%-*s  %13s  %13s  %10s  %6s  %9s  %9s\n", wname, "target", "k-mers", "masked", "filter", "fill", "pred. FPR",
           "chance");
    for (int t = 0; t < n; ++t) {
        sbf_target_info_t ti;
        uint64_t masked = 0;
        double chance = 0;
        char size[32];
        if (sbf_index_target(ly, t, &ti) != SBF_OK || sbf_index_target_masks(ly, t, NULL, NULL, &masked) != SBF_OK ||
            sbf_index_target_chance(ly, t, &chance) != SBF_OK)
            continue;
        printf("%-*s  %13llu  %13llu  %10s  %6.4f  %9.2e  %9.2e\n", wname, ti.name, (unsigned long long)ti.kmers,
               (unsigned long long)masked, cli_bytes(ti.bytes, size, sizeof size), ti.fill, ti.predicted_fpr, chance);
    }
}

int main_info(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"json", no_argument, NULL, OPT_JSON}, {"check", no_argument, NULL, OPT_CHECK},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int json = 0, check = 0, c;
    while ((c = getopt_long(argc, argv, "h", lopts, NULL)) >= 0) {
        switch (c) {
        case OPT_JSON: json = 1; break;
        case OPT_CHECK: check = 1; break;
        case 'h': usage_info(stdout); return 0;
        default: usage_info(stderr); return 1;
        }
    }
    if (optind + 1 != argc) {
        cli_error("info", optind >= argc ? "no index given" : "one index at a time");
        usage_info(stderr);
        return 1;
    }
    const char *path = argv[optind];
    if (json && check) {
        cli_error("info", "--json and --check: give one");
        return 1;
    }
    sbf_index_t *idx;
    if (cli_index_open("info", path, check, &idx, NULL) < 0)   /* --check: every checksum, always */
        return 1;
    sbf_opt_t o;
    sbf_index_params(idx, &o);
    if (check)   /* loading checked every section: header, metadata, every filter's checksum */
        printf("%016llx  %s\n", (unsigned long long)sbf_index_checksum(idx), path);
    else if (json)
        print_json(path, idx, &o);
    else
        print_text(path, idx, &o);
    sbf_index_destroy(idx);
    return cli_finish_stdout("info") ? 1 : 0;
}

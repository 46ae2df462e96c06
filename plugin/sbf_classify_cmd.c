/* sbf_classify_cmd.c -- `sbf classify`: tag every read with its best-matching target (tag mode),
 * or write one output per category (--split). The work is done by sbf_screen.c. */
#include <stdlib.h>
#include <string.h>

#include "sbf_cli.h"
#include "sbf_screen.h"

void usage_classify(FILE *fp)
{
    fprintf(fp,
            "Usage: sbf classify -x IDX.sbf [options] IN [IN2]\n"
            "\n"
            "Scores every read (pair) against each target of the index and writes every record,\n"
            "in input order, unchanged apart from the tags sb:Z:<category> (a target name, 'multi'\n"
            "or 'none') and ss:f:<best score>; with --split, one output per category instead.\n"
            "Secondary and supplementary records are passed through untagged (tag mode) or dropped\n"
            "(--split); they are never scored twice.\n"
            "Then:  samtools view -d sb:human out.bam   (or samtools split -d sb, samtools >= 1.17)\n"
            "\n");
    screen_usage_common(fp);
    fprintf(fp,
            "Classify:\n"
            "  -o, --output FILE    output [standard output]\n"
            "  -1, --output1 FILE   mate 1 to FILE (with -2: mates to separate files)\n"
            "  -2, --output2 FILE   mate 2 to FILE\n"
            "      --split PATTERN  one output per category: %% is the category, # the mate (1 or 2),\n"
            "                       e.g. 'out_%%_#.fq.gz'; all categories' files are created\n"
            "      --hits           also write the per-target hit counts (sh:B:I, in index order)\n"
            "      --tags C,S,H     names of the category, score and hits tags [sb,ss,sh]\n");
}

static int parse_tag_names(const char *arg, sbf_tagnames_t *t)
{
    char *names[3] = {t->category, t->score, t->hits};
    const char *p = arg;
    for (int i = 0; i < 3; ++i) {
        size_t n = strcspn(p, ",");
        if (n != 2 || !((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) ||
            !((p[1] >= 'A' && p[1] <= 'Z') || (p[1] >= 'a' && p[1] <= 'z') || (p[1] >= '0' && p[1] <= '9')))
            return -1;
        memcpy(names[i], p, 2);
        p += n;
        if (i < 2 && *p++ != ',')
            return -1;
    }
    return *p ? -1 : 0;
}


static int classify_option(screen_opt_t *o, int c, const char *arg)
{
    switch (c) {
    case OPT_SPLIT:
        o->mode = SCREEN_SPLIT;
        o->split_pattern = arg;
        return 0;
    case OPT_HITS: o->tags.with_hits = 1; return 0;
    case OPT_TAGS:
        if (parse_tag_names(arg, &o->tags) == 0)
            return 0;
        cli_error(o->cmd, "invalid value '%s' for --tags: three two-character SAM tag names, e.g. sb,ss,sh", arg);
        return -1;
    default: return 1;
    }
}

static int classify_check(screen_opt_t *o)
{
    if (o->mode != SCREEN_SPLIT)
        return 0;
    if (!strchr(o->split_pattern, '%')) {
        cli_error(o->cmd, "--split '%s' has no %% (where the category name goes)", o->split_pattern);
        return -1;
    }
    if (o->out || o->out1 || o->out2) {
        cli_error(o->cmd, "--split writes its own files: -o, -1 and -2 cannot be used with it");
        return -1;
    }
    return 0;
}

int main_classify(int argc, char **argv)
{
    static const struct option lopts[] = {SCREEN_COMMON_LONG_OPTIONS,
                                          {"split", required_argument, NULL, OPT_SPLIT},
                                          {"hits", no_argument, NULL, OPT_HITS},
                                          {"tags", required_argument, NULL, OPT_TAGS},
                                          {NULL, 0, NULL, 0}};
    static const screen_command_t command = {"classify", SCREEN_TAG, lopts, usage_classify, classify_option,
                                             classify_check};
    return screen_main(&command, argc, argv);
}

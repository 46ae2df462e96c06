/* sbf_filter_cmd.c -- `sbf filter`: host removal. Writes only the reads (pairs) that are not
 * assigned to the removed targets; the scoring is classify's (sbf_screen.c). */
#include <stdlib.h>
#include <string.h>

#include "sbf_cli.h"
#include "sbf_screen.h"

void usage_filter(FILE *fp)
{
    fprintf(fp,
            "Usage: sbf filter -x IDX.sbf [--remove T1,T2 | --keep T] [options] IN [IN2]\n"
            "\n"
            "Host removal: writes the reads (pairs) that are not assigned to a removed target, in input\n"
            "order and unchanged; pairs stay together. A 'multi' read is removed when one of its tied\n"
            "targets is. Secondary and supplementary records are not written.\n"
            "\n");
    screen_usage_common(fp);
    fprintf(fp,
            "Filter:\n"
            "  -o, --output FILE    output [standard output]\n"
            "  -1, --output1 FILE   mate 1 to FILE (with -2: mates to separate files, as samtools fastq)\n"
            "  -2, --output2 FILE   mate 2 to FILE\n"
            "      --remove LIST    targets whose reads are removed, comma-separated; repeat to add\n"
            "                       more [all targets]\n"
            "      --keep LIST      write only the reads assigned to these targets instead (the same)\n"
            "      --invert         write the reads that would have been dropped\n");
}


static int filter_option(screen_opt_t *o, int c, const char *arg)
{
    if (c != OPT_REMOVE && c != OPT_KEEP && c != OPT_INVERT)
        return 1;
    if (c == OPT_INVERT) {
        o->invert = 1;
        return 0;
    }
    int keep = c == OPT_KEEP;
    if (o->n_select && o->keep != keep) {
        cli_error(o->cmd, "--remove and --keep cannot be used together");
        return -1;
    }
    if (o->n_select == SCREEN_MAX_INDEXES) {   /* repeated lists add up: --remove human --remove ecoli */
        cli_error(o->cmd, "--%s given more than %d times: join the lists with commas", keep ? "keep" : "remove",
                  SCREEN_MAX_INDEXES);
        return -1;
    }
    o->select[o->n_select++] = arg;
    o->keep = keep;
    return 0;
}

int main_filter(int argc, char **argv)
{
    static const struct option lopts[] = {SCREEN_COMMON_LONG_OPTIONS,
                                          {"remove", required_argument, NULL, OPT_REMOVE},
                                          {"keep", required_argument, NULL, OPT_KEEP},
                                          {"invert", no_argument, NULL, OPT_INVERT},
                                          {NULL, 0, NULL, 0}};
    static const screen_command_t command = {"filter", SCREEN_FILTER, lopts, usage_filter, filter_option, NULL};
    return screen_main(&command, argc, argv);
}

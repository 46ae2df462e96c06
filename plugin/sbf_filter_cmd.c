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
            "  -1 FILE, -2 FILE     mates 1 and 2 to separate files (as samtools fastq)\n"
            "      --remove LIST    targets whose reads are removed, comma-separated [all targets]\n"
            "      --keep LIST      write only the reads assigned to these targets instead\n"
            "      --invert         write the reads that would have been dropped\n");
}


int main_filter(int argc, char **argv)
{
    static const struct option lopts[] = {SCREEN_COMMON_LONG_OPTIONS,
                                          {"remove", required_argument, NULL, OPT_REMOVE},
                                          {"keep", required_argument, NULL, OPT_KEEP},
                                          {"invert", no_argument, NULL, OPT_INVERT},
                                          {NULL, 0, NULL, 0}};
    screen_opt_t o;
    screen_opt_init(&o, "filter", SCREEN_FILTER);
    char *cmdline = screen_cmdline(argc, argv);
    o.pg_cmdline = cmdline;
    int c, status = 1, removes = 0, keeps = 0;
    while ((c = getopt_long(argc, argv, screen_common_short, lopts, NULL)) >= 0) {
        if (c == 'h') {
            usage_filter(stdout);
            free(cmdline);
            return 0;
        }
        int r = screen_parse_common(&o, c, optarg);
        if (r < 0)
            goto done;
        if (r > 0)
            continue;
        switch (c) {
        case OPT_REMOVE: o.select = optarg; removes = 1; break;
        case OPT_KEEP: o.select = optarg; o.keep = 1; keeps = 1; break;
        case OPT_INVERT: o.invert = 1; break;
        default: usage_filter(stderr); goto done;
        }
    }
    if (removes && keeps) {
        cli_error(o.cmd, "--remove and --keep cannot be used together");
        goto done;
    }
    if (screen_check_io(&o, argc, argv, optind, usage_filter) < 0)
        goto done;
    status = screen_run(&o);
done:
    free(cmdline);
    return status;
}

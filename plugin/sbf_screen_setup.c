/* sbf_screen_setup.c -- what a screening run (sbf_screen.c) sets up before its first batch and
 * reports after its last: the indexes, the scoring rule bound to their targets, the categories and
 * the targets --remove/--keep name, the outputs (never one of the inputs), the inputs, the GPU
 * memory a run needs, the engine in words, and --stats. */
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../filters/sbf_error.h"
#include "../filters/sbf_scan.h"
#include "sbf_cli.h"
#include "sbf_engine.h"
#include "sbf_screen_int.h"
#include "sbf_verified.h"

/* ------------------------------------------------------------------ setup */

/* Target t of all the index files. */
static int target_info(const screen_t *s, int t, sbf_target_info_t *ti)
{
    int x = s->n_idx - 1;
    while (x > 0 && s->first_target[x] > t)
        --x;
    return sbf_index_target(s->idx[x], t - s->first_target[x], ti);
}

/* Load every index file; several must share k (so a read's valid k-mers are the same for all). */
int screen_load_indexes(screen_t *s)
{
    const screen_opt_t *o = s->o;
    sbf_opt_t first, p;
    const double t0 = sbf_now();
    for (int x = 0; x < o->n_indexes; ++x) {
        index_verified_t how = INDEX_VERIFIED_BEFORE;
        if (o->kept && x < o->kept->n) {   /* --samples: opened by an earlier sample's run */
            s->idx[x] = o->kept->idx[x];
            ++s->n_kept;
        } else {
            if (cli_index_open(o->cmd, o->index_paths[x], 0, &s->idx[x], &how) < 0)
                return -1;
            if (o->kept)
                o->kept->idx[o->kept->n++] = s->idx[x];
        }
        s->verified_now += how == INDEX_VERIFIED_NOW;
        s->n_idx = x + 1;
        sbf_index_params(s->idx[x], x ? &p : &first);
        if (x && p.k != first.k) {
            cli_error(o->cmd, "%s has k=%d but %s has k=%d: filters used together must share k", o->index_paths[x],
                      p.k, o->index_paths[0], first.k);
            return -1;
        }
        s->first_target[x] = s->R;
        s->R += sbf_index_n_targets(s->idx[x]);
        if (sbf_index_n_targets(s->idx[x]) > s->max_targets)
            s->max_targets = sbf_index_n_targets(s->idx[x]);
        s->k = first.k;
    }
    s->t_load = sbf_now() - t0;
    /* the long-read layers serve when every index has one, all of one k: a fragment is scored
     * with one rule over every target */
    int with = 0, lk = 0, same = 1;
    for (int x = 0; x < s->n_idx; ++x) {
        const sbf_index_t *ly = sbf_index_long_layer(s->idx[x]);
        if (!ly)
            continue;
        sbf_index_params(ly, &p);
        same &= !with || p.k == lk;
        lk = p.k;
        ++with;
    }
    s->layered = with == s->n_idx && same;
    s->layer_k = s->layered ? lk : 0;
    if (with && !s->layered)
        fprintf(stderr, "sbf %s: notice: %s: every read is screened with the k=%d seeds (long-read layers are used "
                "only when every index has one, of one k)\n", o->cmd, o->index_paths[0], s->k);
    return 0;
}

/* The rule bound to every target of every index: their false-positive rates and clumps
 * (the options were checked before). 0, or < 0 with the message kept. */
int screen_setup_scorer(screen_t *s)
{
    double *fpr = malloc(2 * (size_t)(s->R ? s->R : 1) * sizeof *fpr), *clump = fpr + s->R;
    int rc = fpr ? SBF_OK : SBF_E_NOMEM;
    for (int x = 0; rc == SBF_OK && x < s->n_idx; ++x)
        rc = sbf_engine_chance(s->idx[x], fpr + s->first_target[x], clump + s->first_target[x]);
    if (rc == SBF_OK)
        rc = sbf_scorer_init(&s->scorer, &s->o->score, (unsigned)s->k, s->R, fpr, clump);
    for (int x = 0; rc == SBF_OK && s->layered && x < s->n_idx; ++x)
        rc = sbf_engine_layer_chance(s->idx[x], fpr + s->first_target[x], clump + s->first_target[x]);
    if (rc == SBF_OK && s->layered)
        rc = sbf_scorer_add_layer(&s->scorer, (unsigned)s->layer_k, fpr, clump);
    free(fpr);
    return rc == SBF_OK ? 0 : sbf_error(rc, "out of memory setting up the scoring");
}

int screen_setup_categories(screen_t *s)
{
    const char *cmd = s->o->cmd;
    int n = s->R + 2;
    s->names = calloc((size_t)n, sizeof *s->names);
    s->file_names = calloc((size_t)n, sizeof *s->file_names);
    s->selected = calloc((size_t)s->R + 1, 1);
    s->passing = calloc((size_t)s->R + 1, 1);
    if (!s->names || !s->file_names || !s->selected || !s->passing) {
        cli_error(cmd, "out of memory");
        return -1;
    }
    for (int c = 0; c < n; ++c) {
        sbf_target_info_t ti;
        const char *name = c == s->R ? s->o->multi_name : c == s->R + 1 ? s->o->none_name : NULL;
        if (!name) {
            if (target_info(s, c, &ti) != SBF_OK) {
                cli_error(cmd, "%s", sbf_last_error());
                return -1;
            }
            name = ti.name;
        }
        if (!(s->names[c] = strdup(name)) || !(s->file_names[c] = sbf_safe_file_part(name))) {
            cli_error(cmd, "out of memory");
            return -1;
        }
    }
    for (int c = 0; c < n; ++c)
        for (int d = 0; d < c; ++d) {
            if (!strcmp(s->names[c], s->names[d])) {
                if (c < s->R)
                    cli_error(cmd, "%s: two targets are named '%s' (a damaged index?)", s->o->index_path, s->names[c]);
                else
                    cli_error(cmd, "%s: target '%s' has the name of a category sbf reports; rebuild the index "
                              "with another name", s->o->index_path, s->names[c]);
                return -1;
            }
            if (s->o->split_pattern && !strcmp(s->file_names[c], s->file_names[d])) {
                cli_error(cmd, "--split: categories '%s' and '%s' would write the same file names", s->names[d],
                          s->names[c]);
                return -1;
            }
        }
    return 0;
}

int screen_setup_selection(screen_t *s)
{
    if (s->o->n_select == 0) {   /* every target */
        memset(s->selected, 1, (size_t)s->R);
        return 0;
    }
    for (int l = 0; l < s->o->n_select; ++l)   /* every --remove (--keep) list adds its targets */
        for (const char *p = s->o->select[l]; *p;) {
            size_t n = strcspn(p, ",");
            int found = 0;
            for (int t = 0; t < s->R; ++t)
                if (strlen(s->names[t]) == n && !strncmp(s->names[t], p, n)) {
                    s->selected[t] = 1;
                    found = 1;
                }
            if (!found) {
                kstring_t all = {0, 0, NULL};
                for (int t = 0; t < s->R; ++t)
                    ksprintf(&all, "%s%s", t ? ", " : "", s->names[t]);
                cli_error(s->o->cmd, "no target '%.*s' in %s (targets: %s)", (int)n, p, s->o->index_path,
                          all.s ? all.s : "");
                free(all.s);
                return -1;
            }
            p += n + (p[n] == ',');
        }
    return 0;
}

/* Output format of `path`: -O, else the file name, else like the input. */
static int output_spec(screen_t *s, const char *path, sbf_reader_t *in, sbf_outspec_t *spec)
{
    const char *cmd = s->o->cmd;
    if (s->o->outfmt) {
        if (sbf_outspec_parse(s->o->outfmt, spec) != SBF_OK) {
            cli_error(cmd, "-O: %s", sbf_error_message());
            return -1;
        }
        return 0;
    }
    int to_file = path && strcmp(path, "-") != 0;
    spec->level = -1;
    if (to_file && sbf_outspec_from_name(path, spec))
        return 0;
    const char *f = sbf_reader_format(in);
    spec->fmt = !strcmp(f, "SAM") ? SBF_OUT_SAM : !strcmp(f, "BAM") ? SBF_OUT_BAM : !strcmp(f, "CRAM") ? SBF_OUT_CRAM
              : !strcmp(f, "FASTA") ? SBF_OUT_FASTA : SBF_OUT_FASTQ;
    spec->compress = spec->fmt == SBF_OUT_BAM || spec->fmt == SBF_OUT_CRAM || (to_file && sbf_reader_compressed(in));
    return 0;
}

/* An output path must not be one of the inputs (it would be truncated before being read). */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-"))
        return 0;
    if (!strcmp(a, b))
        return 1;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
           S_ISREG(sa.st_mode);
}

static char *expand_pattern(const char *pattern, const char *category, int mate)
{
    kstring_t k = {0, 0, NULL};
    for (const char *p = pattern; *p; ++p) {
        int rc = *p == '%' ? kputs(category, &k) : *p == '#' ? kputw(mate, &k) : kputc(*p, &k);
        if (rc < 0) {
            free(k.s);
            return NULL;
        }
    }
    return k.s;
}

static int open_output(screen_t *s, const char *path, sbf_reader_t *in, int slot)
{
    const screen_opt_t *o = s->o;
    for (int i = 0; i < 2; ++i)
        if (same_file(path, o->in[i])) {
            cli_error(o->cmd, "%s is an input: refusing to overwrite it", path);
            return -1;
        }
    sbf_writer_opt_t wo = {.hdr = sbf_reader_header(in),
                           .pg_version = SBF_VERSION,
                           .pg_cmdline = o->pg_cmdline,
                           .pool = &s->pool,
                           .reference = o->reference,
                           .write_index = o->write_index,
                           .tags = o->tags};
    if (output_spec(s, path, in, &wo.spec) < 0)
        return -1;
    s->compressed_out |= wo.spec.compress || wo.spec.fmt == SBF_OUT_BAM || wo.spec.fmt == SBF_OUT_CRAM;
    if (sbf_writer_open(path, &wo, &s->outs[slot]) != SBF_OK) {
        cli_error(o->cmd, "%s", sbf_error_message());
        return -1;
    }
    return 0;
}

int screen_setup_outputs(screen_t *s, sbf_reader_t *in)
{
    const screen_opt_t *o = s->o;
    if (o->mode == SCREEN_COUNT)
        return 0;
    s->n_slots = o->mode == SCREEN_SPLIT ? s->R + 2 : 1;
    s->mate_files = o->mode == SCREEN_SPLIT ? strchr(o->split_pattern, '#') != NULL : o->out1 != NULL;
    int per = s->mate_files ? 2 : 1;
    if (!(s->outs = calloc((size_t)(s->n_slots * per), sizeof *s->outs))) {
        cli_error(o->cmd, "out of memory");
        return -1;
    }
    if (o->mode != SCREEN_SPLIT) {
        if (!s->mate_files)
            return open_output(s, o->out, in, 0);
        return open_output(s, o->out1, in, 0) < 0 || open_output(s, o->out2, in, 1) < 0 ? -1 : 0;
    }
    for (int c = 0; c < s->n_slots; ++c)
        for (int m = 0; m < per; ++m) {
            char *path = expand_pattern(o->split_pattern, s->file_names[c], m + 1);
            if (!path) {
                cli_error(o->cmd, "out of memory");
                return -1;
            }
            int rc = open_output(s, path, in, c * per + m);
            free(path);
            if (rc < 0)
                return -1;
        }
    return 0;
}

int screen_open_inputs(screen_t *s, sbf_reader_t **first)
{
    const screen_opt_t *o = s->o;
    sbf_reader_t *rd[2] = {NULL, NULL};
    /* records read in place: the batches pin their blocks (sbf_batch.c); a block holds about
     * a batch of FASTQ (2 bytes a base and the names) or of BAM (about as much: half a byte a
     * base, a byte of quality, the names and cores), so the blocks the batches in flight pin
     * stay within a few batches, as -K promises */
    uint64_t block = 2 * s->batch_bases;
    block = block < (1u << 20) ? (1u << 20) : block > (8u << 20) ? (8u << 20) : block;
    /* a plain gzip file inflated on the input pool's threads where the GPUs answer the queries:
     * on the CPU engine every core queries, and one ISA-L stream per file costs half the CPU
     * seconds (doc/PERFORMANCE.md, "Plain gzip on several threads") */
    sbf_reader_opt_t ro = {.pool = s->in_pool.pool ? &s->in_pool : &s->pool, .reference = o->reference, .sam_no_ascii = 1,
                           .in_place = !getenv("SBF_NO_INPLACE"), .block_size = (size_t)block,
                           .parallel_gzip = s->on_gpus && s->in_pool.pool};
    for (int i = 0; i < 2 && o->in[i]; ++i)
        if (sbf_reader_open(o->in[i], &ro, &rd[i]) != SBF_OK) {
            cli_error(o->cmd, "%s", sbf_error_message());
            sbf_reader_close(rd[0]);
            return -1;
        }
    *first = rd[0];
    s->decoder = sbf_reader_decoder(rd[0]);
    if (sbf_input_new(rd[0], rd[1], o->interleaved ? SBF_PAIRS_INTERLEAVED : SBF_PAIRS_BY_FLAGS, &s->input) !=
        SBF_OK) {
        cli_error(o->cmd, "%s", sbf_error_message());
        return -1;
    }
    return 0;
}

/* Device memory a GPU run needs on each device: every filter, plus the workers' batches
 * (each has two in flight: bases, offsets and results), an estimate on the safe side. */
uint64_t screen_gpu_bytes_needed(const screen_t *s)
{
    uint64_t bytes = 0;
    for (int t = 0; t < s->R; ++t) {
        sbf_target_info_t ti;
        if (target_info(s, t, &ti) == SBF_OK)
            bytes += ti.bytes;
    }
    /* the long-read layers go to the device too (sbf_engine_use_gpus) */
    for (int x = 0; x < s->n_idx; ++x) {
        const sbf_index_t *ly = sbf_index_long_layer(s->idx[x]);
        for (int t = 0; ly && t < sbf_index_n_targets(ly); ++t) {
            sbf_target_info_t ti;
            if (sbf_index_target(ly, t, &ti) == SBF_OK)
                bytes += ti.bytes;
        }
    }
    return bytes + GPU_WORKERS_PER_COPY * 2 * s->batch_bases * 2;   /* each worker two batches */
}

/* The CPU engine's workers: each queries its batch on its share of -@, and does the rest of
 * the batch (masking, units, scoring, the records' formatting) alone: with one worker, the
 * other query threads waited through that part of every batch (H200 machine, -@ 16, 10 M
 * FASTQ pairs: 9 of 16 cores busy; 4 workers: FASTQ 6.68 -> 4.03 s). At least 4 query
 * threads each. */
int screen_cpu_workers(int threads) { return threads >= 16 ? 4 : threads >= 8 ? 2 : 1; }

void screen_describe_engine(screen_t *s, char *buf, size_t size)
{
    int dev[SBF_MAX_GPUS], n = sbf_index_gpus(s->idx[0], dev, SBF_MAX_GPUS);
    if (n == 0 || s->upload_state < 0) {
        const int w = s->engine_workers;   /* the GPU's workers where GPUs were expected and none was there */
        char workers[32] = "";
        if (w > 1 && n == 0)   /* a failed upload leaves the GPU's workers */
            snprintf(workers, sizeof workers, " in %d workers", w);
        snprintf(buf, size, "CPU, %d thread%s%s, %s scan%s", s->o->threads, s->o->threads == 1 ? "" : "s", workers,
                 sbf_scan_path_name(sbf_scan_path()), n ? " (the GPU upload failed)" : "");
        return;
    }
    char desc[256], list[64] = "";
    if (sbf_gpu_describe_device(dev[0], desc, sizeof desc) != SBF_OK)
        snprintf(desc, sizeof desc, "CUDA device");
    for (int i = 0, at = 0; i < n && at < (int)sizeof list; ++i)
        at += snprintf(list + at, sizeof list - (size_t)at, "%s%d", i ? "," : "", dev[i]);
    snprintf(buf, size, "GPU%s %s (%s%s)", n > 1 ? "s" : "", list, desc, n > 1 ? ", each" : "");
}

/* --stats: where the time went, so a user sees which stage limits a run. The engine's share is
 * the part of the wall time in which each device (or the CPU engine) had a batch in work;
 * "waiting for the engine" is time the reader's batches waited for room in the engine. */
/* CPU seconds so far of the live threads named `name` (/proc/self/task: comm, and stat's utime
 * and stime); *n counts them. 0 threads where /proc cannot say. */
static double named_threads_cpu(const char *name, int *n)
{
    *n = 0;
    double ticks = 0;
    const long hz = sysconf(_SC_CLK_TCK);
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && hz > 0 && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[64], comm[32] = "", stat[1024];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        const int got = fgets(comm, sizeof comm, f) != NULL;
        fclose(f);
        comm[strcspn(comm, "\n")] = 0;
        if (!got || strcmp(comm, name) != 0)
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
        if (!(f = fopen(path, "r")))
            continue;
        const size_t len = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[len] = 0;
        /* after the name's closing parenthesis: state is field 3, utime 14, stime 15 */
        const char *at = strrchr(stat, ')');
        unsigned long long utime, stime;
        if (at && sscanf(at + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) == 2) {
            ticks += (double)(utime + stime);
            ++*n;
        }
    }
    if (d)
        closedir(d);
    return hz > 0 ? ticks / (double)hz : 0;
}

void screen_stats_start(screen_t *s)
{
    int n;
    s->cpu_helpers0 = named_threads_cpu(SBF_ENGINE_HELPER_NAME, &n);
    sbf_engine_helper_blocks(&s->helped0, &s->lent0);
}

void screen_print_stats(const screen_t *s, FILE *fp)
{
    struct rusage ru;
    long peak_kib = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
    const pipeline_stats_t *e = &s->engine_stats;
    const double wall = s->sum.seconds > 0 ? s->sum.seconds : 1e-9;
    int dev[SBF_MAX_GPUS], n = sbf_index_gpus(s->idx[0], dev, SBF_MAX_GPUS);
    fprintf(fp, "sbf %s: stages (seconds): reading %.2f (CPU %.2f), ", s->o->cmd, s->t_read, s->cpu_read);
    if (n == 0)
        fprintf(fp, "CPU engine %.2f (busy %.0f%%)", e->busy[0], 100 * e->busy[0] / wall);
    for (int i = 0; i < n; ++i)
        fprintf(fp, "%sGPU %d %.2f (busy %.0f%%)", i ? ", " : "", dev[i], e->busy[i], 100 * e->busy[i] / wall);
    /* the workers' seconds by step: a slot's busy share says only that one of its workers was
     * querying, these say what the workers spent, so that the sum over wall times the workers
     * shows whether they are the limit */
    fprintf(fp, ", waiting for the engine %.2f, queries %.2f (in the engine %.2f, masking and the rest %.2f), "
            "scoring %.2f and encoding %.2f (seconds of %d worker%s), writing %.2f (CPU %.2f; writer idle %.2f); "
            "wall %.2f; peak RSS %.1f MiB\n", e->wait_submit, s->t_query, s->t_engine, s->t_query - s->t_engine,
            s->t_score, s->t_encode, e->workers, e->workers == 1 ? "" : "s", s->t_write, s->cpu_write,
            s->t_wait_write, s->sum.seconds, peak_kib / 1024.0);
    if (s->n_kept == s->n_idx)
        fprintf(fp, "sbf %s: opening (seconds): %d index%s %.2f (opened for an earlier sample)", s->o->cmd, s->n_idx,
                s->n_idx > 1 ? "es" : "", s->t_load);
    else
        fprintf(fp, "sbf %s: opening (seconds): %d index%s %.2f (filters verified: %d now, %d by an earlier run)",
                s->o->cmd, s->n_idx, s->n_idx > 1 ? "es" : "", s->t_load, s->verified_now,
                s->n_idx - s->verified_now);
    /* the CUDA driver's start (0.10-0.18 s of a GPU run on the H100 machine, beside the context
     * made on another thread); where GPUs were expected, the engine answered meanwhile */
    if (s->t_gpus >= 0)
        fprintf(fp, ", GPUs counted in %.2f", s->t_gpus);
    if (s->t_gpus >= 0 && s->reads_before_gpus)
        fprintf(fp, " (%llu reads on the CPU engine meanwhile)", (unsigned long long)s->reads_before_gpus);
    if (n > 0 && s->upload_kept && s->upload_state == 0)
        fprintf(fp, ", GPU copies made for an earlier sample");
    else if (n > 0 && s->upload_state == 0)
        fprintf(fp, ", GPU upload %.2f beside the first reads (%llu reads on the CPU engine meanwhile)", s->t_upload,
                (unsigned long long)s->reads_on_cpu);
    else if (n > 0 && s->upload_state == 1)
        fprintf(fp, ", GPU upload stopped: the run ended first (%llu reads on the CPU engine)",
                (unsigned long long)s->reads_on_cpu);
    else if (n > 0)
        fprintf(fp, ", GPU upload failed after %.2f", s->t_upload);
    if (n > 0 && s->layered && s->upload_state == 0) {   /* the long-read layers, on demand */
        if (s->layer_state == 0)
            fprintf(fp, "; long-read layer uploaded in %.2f when first needed (%llu reads on the CPU engine meanwhile)",
                    s->t_layer_upload, (unsigned long long)s->layer_reads_on_cpu);
        else if (s->layer_state == 1)
            fprintf(fp, "; long-read layer's upload stopped: the run ended first (%llu reads on the CPU engine)",
                    (unsigned long long)s->layer_reads_on_cpu);
        else if (s->layer_state == 2)
            fprintf(fp, "; long-read layer not uploaded (no long read)");
        else
            fprintf(fp, "; long-read layer's upload failed (%llu reads on the CPU engine)",
                    (unsigned long long)s->layer_reads_on_cpu);
    }
    fputc('\n', fp);
    /* where the CPU went: the pools (alive until the run is freed) by their threads' name */
    int n_out, n_in;
    const double cpu_out = named_threads_cpu(SCREEN_OUT_POOL, &n_out), cpu_in = named_threads_cpu(SCREEN_IN_POOL, &n_in);
    const double cpu_all = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                           ru.ru_stime.tv_usec / 1e6;
    /* the CPU engine's query helpers (sbf_engine.c's board: they live for the process) */
    int n_help;
    uint64_t helped, lent;
    const double cpu_help = named_threads_cpu(SBF_ENGINE_HELPER_NAME, &n_help) - s->cpu_helpers0;
    sbf_engine_helper_blocks(&helped, &lent);
    helped -= s->helped0;
    lent -= s->lent0;
    fprintf(fp, "sbf %s: CPU (seconds): %.2f in all; output pool %.2f (%d thread%s), input pool %.2f (%d thread%s), "
            "reader %.2f, writer %.2f, query helpers %.2f (%d thread%s, %.0f%% of their blocks of reads for other workers' "
            "batches), the rest (engine workers, opening, hand-overs) %.2f\n", s->o->cmd, cpu_all, cpu_out, n_out,
            n_out == 1 ? "" : "s", cpu_in, n_in, n_in == 1 ? "" : "s", s->cpu_read, s->cpu_write, cpu_help, n_help,
            n_help == 1 ? "" : "s", helped ? 100.0 * (double)lent / (double)helped : 0.0,
            cpu_all - cpu_out - cpu_in - s->cpu_read - s->cpu_write - cpu_help);
    fprintf(fp, "sbf %s: input: %lld of %llu records parsed in place (FASTQ, BAM), %lld of them by the read-ahead; "
            "read-ahead busy %.2f thread-s, reader waited %.2f s; decompression: %s\n", s->o->cmd, s->in_place,
            (unsigned long long)(s->sum.reads_in + s->sum.extras), s->in_place_ahead, s->t_fill, s->t_fill_wait,
            s->decoder ? s->decoder : "none");
    /* The verdict in words: the stage busy for the largest share of the run, and what helps.
     * The engine's share is its workers' occupancy (their seconds over workers x wall), not a
     * slot's busy share: one of a GPU slot's 4 workers (then) querying made the slot 77% busy in a
     * FASTQ run whose workers were 63% occupied and whose reader was the limit (H100 machine,
     * doc/PERFORMANCE.md, "What the 5a2a3fa column measured"). */
    const double engine = (s->t_query + s->t_score + s->t_encode) / (e->workers > 0 ? e->workers : 1);
    const double share[3] = {s->t_read / wall, engine / wall, s->o->mode == SCREEN_COUNT ? 0 : s->t_write / wall};
    int top = share[1] > share[0] ? 1 : 0;
    top = share[2] > share[top] ? 2 : top;
    static const char *const what[3] = {"reading", "the engine", "writing"};
    const char *help = top == 0 ? "input decompression and parsing: BAM, CRAM and BGZF use the -@ threads, plain gzip "
                                  "is one stream (bgzip it)"
                     : top == 1 ? (n ? "the GPU: --gpu all spreads batches over every GPU"
                                     : "the CPU engine: more -@ threads, or a GPU")
                     : s->compressed_out ? "output compression: more -@ threads, or a lower level (-O bam,level=1)"
                                         : "writing plain text: faster storage, or a compressed format on more -@ threads";
    fprintf(fp, "sbf %s: limit: %s (busy %.0f%% of the run); %s\n", s->o->cmd, what[top], 100 * share[top], help);
}

/* sbf_screen.c -- the read-screening pipeline behind `sbf classify` and `sbf filter`.
 *
 *   reader thread --(batches, bounded by -K bases)--> this thread (points the engine at the
 *   batch's reads) --> engine workers (sbf_pipeline.c: two per GPU, on every GPU of --gpu, or
 *   one on -@ CPU threads) --(in input order)--> scoring --> writer thread (records in input
 *   order, to one output, the two mate outputs, or one output per category).
 *
 * A fixed set of batches (jobs) circulates between the stages, so memory is bounded by their
 * number x batch size whatever the input size. The engine delivers batches in submission order,
 * so they reach the writer in input order. htslib's thread pool (-@) decompresses the input and
 * compresses the outputs. Any failure stops every stage; no output file is renamed into place
 * unless the whole run succeeded.
 *
 * This file is the run, screen_run(), in its steps; the stages are in sbf_screen_stages.c, the
 * setup in sbf_screen_setup.c, the command line in sbf_screen_opts.c (sbf_screen_int.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "../filters/sbf_error.h"
#include "../gpu/sbf_gpu.h"
#include "sbf_cli.h"
#include "sbf_engine.h"
#include "sbf_screen_int.h"

/* ------------------------------------------------------------------ the run */

/* screen_run()'s own state, handed from step to step: what it started (only those are joined
 * and freed), the summary files, and the engine in words for the summaries. */
typedef struct {
    screen_t s;
    screen_opt_t adjusted;    /* the options, when --min-match-bases set --min-hits */
    int dev[SBF_MAX_GPUS], n_gpus;
    int gpus_expected;        /* n_gpus and dev are the options' guess, counted by attach_gpus() */
    int queues, started_reader, started_writer, started_warm, started_attach;
    pthread_t reader, writer, warm, attach;
    sbf_reader_t *first;
    char engine[320];
    cli_output_t tsv, json, html;
} run_t;

/* Batches in the engine at once: its workers on each GPU copy and one more to hide the
 * hand-over, or the CPU engine's one worker. */
static int engine_in_flight(int gpu_copies, int threads)
{
    const int cpu = screen_cpu_workers(threads);
    return gpu_copies > 0 ? GPU_WORKERS_PER_COPY * gpu_copies + 1 : cpu > 1 ? cpu + 1 : 1;
}

/* The GPUs the options may use get their CUDA contexts made on a thread of their own while
 * the indexes load and the files open: made by the upload, a context cost 0.2-0.3 s of a run
 * of 1.3 s on the H200 machine, with the reader stopped for want of free batches. */
static void *warm_gpus(void *arg)
{
    const cli_gpus_t *want = arg;
    const int have = sbf_gpu_count();
    if (want->mode == SBF_GPU_AUTO && have > 0)
        sbf_gpu_warm(0);
    for (int d = 0; want->mode == CLI_GPU_ALL && d < have && d < SBF_MAX_GPUS; ++d)
        sbf_gpu_warm(d);
    for (int i = 0; want->mode != SBF_GPU_AUTO && want->mode != CLI_GPU_ALL && want->mode != SBF_GPU_NONE &&
                    i < want->n; ++i)
        if (want->dev[i] < have)
            sbf_gpu_warm(want->dev[i]);
    return NULL;
}

static void warm_join(run_t *r)
{
    if (r->started_warm)
        pthread_join(r->warm, NULL);
    r->started_warm = 0;
}

/* The GPUs counted (the CUDA driver started), timed for --stats: at once where they were not
 * expected, else by attach_gpus() while the engine's workers answer on the CPU engine (the
 * reads they answered meanwhile noted); fewer than expected leaves the workers as they are,
 * their queries on the CPU engine or on the copies there are (sbf_engine_query: slot modulo
 * copies). */
static void count_gpus(run_t *r)
{
    screen_t *s = &r->s;
    const double t = sbf_now();
    r->n_gpus = cli_gpu_resolve(s->o->cmd, &s->o->gpus, r->dev);
    s->t_gpus = sbf_now() - t;
    s->reads_before_gpus = __atomic_load_n(&s->reads_cpu_early, __ATOMIC_RELAXED);
    r->gpus_expected = 0;
}

/* The GPUs the run uses: counted now where the count decides the engine's shape (--gpu all:
 * one copy per device; --gpu-mem-limit, whose check is for devices that are there) or where
 * none can be (a build without CUDA, or no NVIDIA driver here);
 * else the options' devices are expected and counted by attach_gpus() once the engine's
 * workers answer on the CPU engine. The CUDA driver's start takes 0.1-0.3 s, in which the run
 * did nothing but read its first 8 batches (H100 machine, doc/gpu-notes.md). */
static void expect_gpus(run_t *r)
{
    screen_t *s = &r->s;
    const cli_gpus_t *want = &s->o->gpus;
    s->t_gpus = -1;
    if (want->mode == SBF_GPU_NONE)
        return;
    if (want->mode == CLI_GPU_ALL || s->o->gpu_mem_limit || !(sbf_gpu_expected() || getenv("SBF_EXPECT_GPU"))) {
        count_gpus(r);
        return;
    }
    r->gpus_expected = 1;
    r->n_gpus = want->mode == SBF_GPU_AUTO ? 1 : want->n;
    for (int i = 0; i < r->n_gpus; ++i)
        r->dev[i] = want->mode == SBF_GPU_AUTO ? 0 : want->dev[i];
}

/* The indexes, the options that depend on them, the categories, and the GPUs the run uses.
 * -1 after printing. */
static int load_run(run_t *r)
{
    screen_t *s = &r->s;
    const screen_opt_t *o = s->o;
    if (screen_load_indexes(s) < 0)
        return -1;
    if (o->min_match_bases > 0) {   /* N matching bases hold N-k+1 k-mers */
        sbf_opt_t p;
        sbf_index_params(s->idx[0], &p);
        r->adjusted = *o;
        r->adjusted.score.min_fraction = 0;
        r->adjusted.score.min_hits = o->min_match_bases > p.k ? (uint32_t)(o->min_match_bases - p.k + 1) : 1;
        s->o = o = &r->adjusted;
    }
    if (sbf_classify_opt_check(&o->score) != SBF_OK) {
        cli_error(o->cmd, "%s", sbf_last_error());
        return -1;
    }
    if (screen_setup_categories(s) < 0 || screen_setup_selection(s) < 0 || summary_alloc(&s->sum, s->R) < 0)
        return -1;
    expect_gpus(r);
    s->batch_bases = o->batch_bases ? o->batch_bases : r->n_gpus > 0 ? DEFAULT_GPU_BATCH_BASES : DEFAULT_CPU_BATCH_BASES;
    if (r->n_gpus > 0 && o->gpu_mem_limit && screen_gpu_bytes_needed(s) > o->gpu_mem_limit) {
        char need[32], limit[32];
        fprintf(stderr, "sbf %s: notice: the index and batches need %s on the GPU, more than --gpu-mem-limit %s: "
                "using the CPU engine\n", o->cmd, cli_bytes(screen_gpu_bytes_needed(s), need, sizeof need),
                cli_bytes(o->gpu_mem_limit, limit, sizeof limit));
        r->n_gpus = 0;
        r->gpus_expected = 0;
    }
    s->on_gpus = r->n_gpus > 0;
    return 0;
}

/* A pool of htslib's threads named `name` (at most 15 characters): its threads take the name of
 * the thread that starts them, so the name is lent for the start. --stats sums their CPU time by
 * that name (screen_print_stats). */
static hts_tpool *named_pool(const char *name, int threads)
{
#ifdef __linux__
    char was[17] = "";
    const int renamed = prctl(PR_GET_NAME, was) == 0 && prctl(PR_SET_NAME, name) == 0;
#endif
    hts_tpool *p = hts_tpool_init(threads);
#ifdef __linux__
    if (renamed)
        (void)prctl(PR_SET_NAME, was);
#endif
    return p;
}

/* The thread pools, then every file of the run: the inputs, the outputs and the summaries.
 * -1 after printing. */
static int open_files(run_t *r)
{
    screen_t *s = &r->s;
    const screen_opt_t *o = s->o;
    /* -@ N: the outputs are compressed by N threads, and with N >= 4 the inputs are
     * decompressed by N/2 more, in a pool of their own: in one shared pool the reader's blocks
     * wait behind the writer's (compression is the larger job), and the reader limits BAM runs
     * (bench/e2e.sh: reading 1.8 -> 1.45 s for 8 M records on the H200 machine). Inflating costs
     * a fifth of deflating, so the input threads are idle most of the time. Their queue is 8
     * blocks a thread: BGZF hands its blocks out in order, and with 2 a thread (8 at -@ 16) one
     * late block held the reader, which waited 1.9 of a BAM run's 3.5 s for decompressed blocks
     * with the pool 27% busy (H100 machine, 10 M records, --stats' CPU line: 4 threads and 8
     * blocks reading 3.09-3.48 s, 8 threads and 64 blocks 1.44-1.51 s; doc/PERFORMANCE.md).
     * The output pool's queue is 8 blocks a thread as well: the writer hands a batch's blocks
     * over at once, and with 2 a thread it then waited for the pool (writer never idle, the
     * pool 55% busy): the same BAM run's GPU row 4.23-4.98 -> 3.39-4.00 s with 128 blocks. */
    int in_threads = o->threads >= 4 ? o->threads / 2 : 0, out_threads = o->threads;
    if (out_threads > 1 || in_threads > 0) {
        if ((out_threads > 1 && !(s->pool.pool = named_pool(SCREEN_OUT_POOL, out_threads))) ||
            (in_threads > 0 && !(s->in_pool.pool = named_pool(SCREEN_IN_POOL, in_threads)))) {
            cli_error(o->cmd, "cannot start %d threads", o->threads);
            return -1;
        }
        s->pool.qsize = 8 * out_threads;
        s->in_pool.qsize = 8 * in_threads;
    }
    if (screen_open_inputs(s, &r->first) < 0 || screen_setup_outputs(s, r->first) < 0 ||
        (o->summary_tsv && cli_output_open(o->cmd, o->summary_tsv, &r->tsv) < 0) ||
        (o->json && cli_output_open(o->cmd, o->json, &r->json) < 0) ||
        (o->report && cli_output_open(o->cmd, o->report, &r->html) < 0))
        return -1;
    s->encode = o->mode != SCREEN_COUNT && !getenv("SBF_NO_ENCODE");
    for (int i = 0; i < s->n_slots * (s->mate_files ? 2 : 1); ++i)
        s->encode &= sbf_writer_can_encode(s->outs[i]);
    return 0;
}

/* The jobs and their queues, and the reader thread. -1 after printing. */
static int start_reader(run_t *r)
{
    screen_t *s = &r->s;
    const screen_opt_t *o = s->o;
    /* The engine: GPU_WORKERS_PER_COPY workers per GPU copy (batches are packed, copied, scored
     * and formatted while others' kernels run), with one batch more in flight to hide the
     * hand-over; or one worker on the CPU threads. Jobs: those, plus one being read, one being written and one between. */
    s->n_jobs = engine_in_flight(r->n_gpus, o->threads) + 3;
    if (sbf_queue_init(&s->free_q, (size_t)s->n_jobs) < 0 || sbf_queue_init(&s->class_q, (size_t)s->n_jobs) < 0 ||
        sbf_queue_init(&s->write_q, (size_t)s->n_jobs) < 0) {
        cli_error(o->cmd, "out of memory");
        return -1;
    }
    r->queues = 1;
    for (int i = 0; i < s->n_jobs; ++i)
        sbf_queue_push(&s->free_q, &s->jobs[i]);
    s->show_progress = o->progress > 0 || (o->progress < 0 && isatty(STDERR_FILENO));
    /* the reader starts at once: the first batches are read while the GPUs start and receive
     * the filters (a CUDA context and the copy cost tenths of a second per device) */
    if (pthread_create(&r->reader, NULL, screen_reader_main, s) != 0) {
        cli_error(o->cmd, "cannot start the reader thread");
        return -1;
    }
    r->started_reader = 1;
    return 0;
}

/* Test and benchmark switches of the shipped binary: each one set is said on stderr and in
 * every summary. SBF_NULL_ENGINE changes the results (no k-mer is looked up); the encoder
 * switches only choose which thread formats the records, SBF_NO_INPLACE which parser reads
 * FASTQ, SBF_EXPECT_GPU the engine's shape where no GPU is (the same bytes either way). */
static void note_switches(screen_t *s)
{
    const screen_opt_t *o = s->o;
    static const struct {
        const char *name, *what;
    } switches[] = {
        {"SBF_NULL_ENGINE", "no k-mer is looked up: every read is 'none' (the pipeline's I/O ceiling, bench/e2e.sh)"},
        {"SBF_ENCODE", "the engine workers format the records on the CPU engine too (the same bytes; a test switch)"},
        {"SBF_NO_ENCODE", "the writer thread formats every record (the same bytes; a test switch)"},
        {"SBF_EXPECT_GPU", "GPUs are expected as where the NVIDIA driver is installed: the GPU workers answer on the "
                           "CPU engine until the devices are counted (the same bytes; a test switch)"},
        {"SBF_NO_INPLACE", "FASTQ and BAM records are copied out by the general parsers, not parsed in place "
                           "(the same bytes; a test switch)"},
    };
    for (size_t i = 0; i < sizeof switches / sizeof switches[0]; ++i)
        if (getenv(switches[i].name)) {
            fprintf(stderr, "sbf %s: notice: %s is set: %s\n", o->cmd, switches[i].name, switches[i].what);
            ksprintf(&s->switches, "%s%s", s->switches.l ? "," : "", switches[i].name);
        }
    if (getenv("SBF_SIMD"))   /* said on stderr by main(), for every command */
        ksprintf(&s->switches, "%s%s", s->switches.l ? "," : "", "SBF_SIMD");
}

/* The reads the CPU engine answered for the GPU copies of the run's indexes (of their long-read
 * layers: `layer`) since their uploads began (an upload begun for an earlier sample counts its
 * reads too). */
static uint64_t upload_cpu_reads(const screen_t *s, int layer)
{
    uint64_t total = 0;
    for (int x = 0; x < s->n_idx && sbf_engine_slots(s->idx[x]) > 0; ++x) {
        double seconds;
        uint64_t cpu_reads;
        (void)(layer ? sbf_engine_layer_upload_state : sbf_engine_upload_state)(s->idx[x], &seconds, &cpu_reads);
        total += cpu_reads;
    }
    return total;
}

/* The GPUs counted where they were expected, and the indexes sent to them on threads of their
 * own: a run of a few reads ends before a large index would have been uploaded, and a long one
 * starts at once. Runs on a thread of its own (the engine's workers answering meanwhile) or on
 * the main thread before the first batch. Until the copies are made, every query runs on the CPU
 * engine; workers may be querying an index whose copies are installed here, so copies once
 * installed stay (a failure part way leaves the indexes after it on the CPU engine). */
static void *attach_gpus(void *arg)
{
    run_t *r = arg;
    screen_t *s = &r->s;
    const screen_opt_t *o = s->o;
    if (r->gpus_expected)
        count_gpus(r);
    warm_join(r);
    for (int x = 0; r->n_gpus > 0 && x < s->n_idx; ++x)
        if (sbf_engine_slots(s->idx[x]) == 0 && sbf_engine_use_gpus_async(s->idx[x], r->n_gpus, r->dev) != SBF_OK) {
            fprintf(stderr, "sbf %s: notice: %s: using the CPU engine%s\n", o->cmd, sbf_last_error(),
                    x ? " for this index and those after it" : "");
            break;
        }
    s->reads_on_cpu0 = upload_cpu_reads(s, 0);   /* an earlier sample's (--samples) counted reads of its own */
    s->layer_reads_on_cpu0 = upload_cpu_reads(s, 1);
    screen_describe_engine(s, r->engine, sizeof r->engine);
    __atomic_store_n(&s->gpus_attached, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* While the reader fills the first batches: the scoring rule, the indexes on the GPUs, the
 * engine's workers, and the writer thread. -1 after screen_fail(): the reader is to be joined. */
static int start_engine(run_t *r)
{
    screen_t *s = &r->s;
    const screen_opt_t *o = s->o;
    /* the scoring rule's chance model reads every shard of the indexes (25 ms for chr20): while
     * the reader fills the first batches */
    if (screen_setup_scorer(s) < 0) {
        screen_fail(s, sbf_error_message());
        return -1;
    }
    /* The engine's shape: the GPU copies there will be (an earlier sample's, --samples, or
     * those expected), each with its workers; until a copy is on its GPU, the workers' queries
     * run on the CPU engine (the same bits), so the run answers from its first batch while the
     * CUDA driver starts and the indexes upload. */
    const int kept = sbf_engine_slots(s->idx[0]);
    const int slots = kept > 0 ? kept : r->n_gpus;
    /* the CPU engine's threads: -@ shared by its workers; on GPUs (while the indexes upload)
     * the GPU workers share them, beside the upload's own threads */
    const int cpu_workers = slots > 0 ? 0 : screen_cpu_workers(o->threads);
    s->query_threads = slots > 0 ? o->threads / (GPU_WORKERS_PER_COPY * slots) : o->threads / cpu_workers;
    if (s->query_threads < 1)
        s->query_threads = 1;
    /* Encoding in the workers pays on GPUs and with several CPU workers (the writer thread is
     * then the limit); one CPU worker is the limit itself, and the writer formats beside it. */
    s->null_engine = getenv("SBF_NULL_ENGINE") != NULL;
    s->encode &= slots > 0 || cpu_workers > 1 || getenv("SBF_ENCODE") != NULL;   /* SBF_ENCODE: tests, on the CPU */
    note_switches(s);
    if (o->stats)
        screen_stats_start(s);
    pipeline_opt_t po = {.gpu_copies = slots, .workers_per_copy = GPU_WORKERS_PER_COPY, .cpu_workers = cpu_workers,
                         .in_flight = engine_in_flight(slots, o->threads),
                         .work = screen_work_job, .deliver = screen_deliver_job, .ctx = s, .marks_busy = 1};
    if (pipeline_open(&po, &s->engine) != SBF_OK) {
        screen_fail(s, sbf_error_message());
        return -1;
    }
    s->engine_workers = slots > 0 ? GPU_WORKERS_PER_COPY * slots : cpu_workers;
    if (pthread_create(&r->writer, NULL, screen_writer_main, s) != 0) {
        screen_fail(s, "cannot start the writer thread");
        pipeline_abort(s->engine);
        return -1;
    }
    r->started_writer = 1;
    s->upload_kept = kept > 0;
    /* expected GPUs are counted beside the first batches' queries */
    if (r->gpus_expected && pthread_create(&r->attach, NULL, attach_gpus, r) == 0)
        r->started_attach = 1;
    else
        attach_gpus(r);
    return 0;
}

static void attach_join(run_t *r)
{
    if (r->started_attach)
        pthread_join(r->attach, NULL);
    r->started_attach = 0;
}

/* This thread: every batch the reader fills, prepared and submitted to the engine; then the
 * engine drained (or stopped on a failure) and the writer told no more batches come. */
static void run_batches(screen_t *s)
{
    void *item;
    while (sbf_queue_pop(&s->class_q, &item)) {
        if (screen_prepare_job(s, item) != SBF_OK || pipeline_submit(s->engine, item) != SBF_OK) {
            screen_fail(s, sbf_error_message());
            break;
        }
    }
    if (s->failed)
        pipeline_abort(s->engine);
    else if (pipeline_finish(s->engine) != SBF_OK)
        screen_fail(s, sbf_error_message());
    pipeline_stats(s->engine, &s->engine_stats);
    sbf_queue_close(&s->write_q);
}

/* Where the uploads of a GPU run stand at its end: how long they took, the reads the CPU
 * engine answered meanwhile; one that failed is said (the CPU engine answered every read), one
 * still in flight is stopped when the index is freed. */
static void upload_outcome(run_t *r)
{
    screen_t *s = &r->s;
    for (int x = 0; x < s->n_idx && sbf_engine_slots(s->idx[x]) > 0; ++x) {
        double seconds;
        uint64_t cpu_reads;
        int state = sbf_engine_upload_state(s->idx[x], &seconds, &cpu_reads);
        s->t_upload = seconds > s->t_upload ? seconds : s->t_upload;
        if (state < 0 && s->upload_state >= 0)
            fprintf(stderr, "sbf %s: notice: %s: the CPU engine answered every read\n", s->o->cmd, sbf_last_error());
        if (state < 0 || (state == 1 && s->upload_state == 0))
            s->upload_state = state;
    }
    s->reads_on_cpu = upload_cpu_reads(s, 0) - s->reads_on_cpu0;
    if (s->upload_state < 0)
        screen_describe_engine(s, r->engine, sizeof r->engine);
    /* the long-read layers' copies: a failure is said; else the least advanced state */
    s->layer_state = 2;
    for (int x = 0; s->upload_state == 0 && x < s->n_idx && sbf_engine_slots(s->idx[x]) > 0; ++x) {
        double seconds;
        uint64_t cpu_reads;
        int state = sbf_engine_layer_upload_state(s->idx[x], &seconds, &cpu_reads);
        if (state == SBF_E_PARAM)   /* no layer */
            continue;
        s->t_layer_upload = seconds > s->t_layer_upload ? seconds : s->t_layer_upload;
        if (state < 0 && s->layer_state >= 0)
            fprintf(stderr, "sbf %s: notice: %s: the CPU engine answered the long reads\n", s->o->cmd,
                    sbf_last_error());
        if (state < 0 || (s->layer_state >= 0 && (state == 1 || (state == 0 && s->layer_state == 2))))
            s->layer_state = state;
    }
    s->layer_reads_on_cpu = upload_cpu_reads(s, 1) - s->layer_reads_on_cpu0;
}

/* The run's summary: what was run, on what, with which rule. */
static void describe_run(run_t *r)
{
    screen_t *s = &r->s;
    const screen_opt_t *o = s->o;
    upload_outcome(r);
    s->sum.seconds = sbf_now() - s->t0;
    s->sum.cmd = o->cmd;
    s->sum.mode = o->mode == SCREEN_TAG ? "tag" : o->mode == SCREEN_SPLIT ? "split" : o->mode == SCREEN_FILTER ? "filter" : "count";
    s->sum.unit = o->in[1] || o->interleaved ? "pairs" : s->pairs_seen ? "fragments" : "reads";
    s->sum.engine = r->engine;
    s->sum.index_path = o->index_path;
    s->sum.index_paths = o->index_paths;
    s->sum.indexes = (const sbf_index_t *const *)s->idx;
    s->sum.n_indexes = o->n_indexes;
    s->sum.inputs[0] = o->in[0];
    s->sum.inputs[1] = o->in[1];
    s->sum.sample = o->sample;
    s->sum.names = (const char *const *)s->names;
    s->sum.rule = &o->score;
    s->sum.layer_k = s->layer_k;
    s->sum.renamed = o->rename;
    s->sum.switches = s->switches.l ? s->switches.s : NULL;
}

/* After a run that succeeded: the summaries written, the outputs and then the summaries renamed
 * into place. -1 after printing. */
static int commit_outputs(run_t *r)
{
    screen_t *s = &r->s;
    const screen_opt_t *o = s->o;
    /* The summaries first (a full disk shows here), then every output renamed into place. */
    if (r->tsv.fp) {
        summary_write_tsv(&s->sum, r->tsv.fp);
        if (fflush(r->tsv.fp) != 0 || ferror(r->tsv.fp)) {
            cli_error(o->cmd, "%s: write failed: %s", o->summary_tsv, strerror(errno));
            return -1;
        }
    }
    if (r->json.fp) {
        summary_write_json(&s->sum, o->json, r->json.fp);
        if (fflush(r->json.fp) != 0 || ferror(r->json.fp)) {
            cli_error(o->cmd, "%s: write failed: %s", o->json, strerror(errno));
            return -1;
        }
    }
    if (r->html.fp) {
        summary_write_html(&s->sum, r->html.fp);
        if (fflush(r->html.fp) != 0 || ferror(r->html.fp)) {
            cli_error(o->cmd, "%s: write failed: %s", o->report, strerror(errno));
            return -1;
        }
    }
    int per = s->mate_files ? 2 : 1;
    for (int i = 0; i < s->n_slots * per; ++i) {
        sbf_writer_t *w = s->outs[i];
        s->outs[i] = NULL;
        if (sbf_writer_commit(w) != SBF_OK) {
            cli_error(o->cmd, "%s", sbf_error_message());
            return -1;
        }
    }
    s->in_place = sbf_input_in_place(s->input, &s->in_place_ahead, &s->t_fill, &s->t_fill_wait);
    if (sbf_input_free(s->input) != SBF_OK) {
        s->input = NULL;
        cli_error(o->cmd, "%s", sbf_error_message());
        return -1;
    }
    s->input = NULL;
    if ((r->tsv.fp && cli_output_commit(o->cmd, &r->tsv) < 0) ||
        (r->json.fp && cli_output_commit(o->cmd, &r->json) < 0) ||
        (r->html.fp && cli_output_commit(o->cmd, &r->html) < 0))
        return -1;
    return 0;
}

/* Everything the run holds, whether it succeeded or not: outputs not committed are removed. */
static void free_run(run_t *r)
{
    screen_t *s = &r->s;
    attach_join(r);   /* first: it joins the warm-up thread */
    warm_join(r);
    if (r->queues) {
        sbf_queue_destroy(&s->free_q);
        sbf_queue_destroy(&s->class_q);
        sbf_queue_destroy(&s->write_q);
    }
    for (int i = 0; s->outs && i < s->n_slots * (s->mate_files ? 2 : 1); ++i)
        sbf_writer_abort(s->outs[i]);
    cli_output_abort(&r->tsv);
    cli_output_abort(&r->json);
    cli_output_abort(&r->html);
    free(s->outs);
    sbf_input_free(s->input);
    pipeline_free(s->engine);
    for (int i = 0; i < s->n_jobs; ++i)
        screen_job_free(&s->jobs[i]);
    if (s->pool.pool)
        hts_tpool_destroy(s->pool.pool);
    if (s->in_pool.pool)
        hts_tpool_destroy(s->in_pool.pool);
    for (int c = 0; s->names && c < s->R + 2; ++c) {
        free(s->names[c]);
        free(s->file_names[c]);
    }
    free(s->names);
    free(s->file_names);
    free(s->selected);
    free(s->passing);
    free(s->switches.s);
    sbf_scorer_free(&s->scorer);
    summary_free(&s->sum);
    for (int x = 0; !s->o->kept && x < s->n_idx; ++x)   /* --samples frees them after the last */
        sbf_index_destroy(s->idx[x]);
    pthread_mutex_destroy(&s->err_lock);
}

/* The steps in turn. A failure before the reader thread starts goes straight to the cleanup;
 * one after it stops every stage (screen_fail), and the threads are joined first. */
int screen_run(const screen_opt_t *o)
{
    run_t r;
    memset(&r, 0, sizeof r);
    screen_t *s = &r.s;
    s->o = o;
    s->t0 = sbf_now();
    pthread_mutex_init(&s->err_lock, NULL);
    int status = 1;
    if (o->gpus.mode != SBF_GPU_NONE)
        r.started_warm = pthread_create(&r.warm, NULL, warm_gpus, (void *)&o->gpus) == 0;

    if (load_run(&r) < 0 || open_files(&r) < 0 || start_reader(&r) < 0)
        goto done;
    o = s->o;   /* the options adjusted by load_run() */
    if (start_engine(&r) == 0)
        run_batches(s);
    attach_join(&r);
    if (r.started_reader)
        pthread_join(r.reader, NULL);
    if (r.started_writer)
        pthread_join(r.writer, NULL);
    r.started_reader = r.started_writer = 0;
    if (s->failed) {
        cli_error(o->cmd, "%s", s->err);
        goto done;
    }
    if (s->show_progress)
        screen_progress(s, 1);
    describe_run(&r);
    if (commit_outputs(&r) < 0)
        goto done;
    summary_print(&s->sum, stderr);
    if (o->stats)
        screen_print_stats(s, stderr);
    status = 0;
done:
    free_run(&r);
    return status;
}

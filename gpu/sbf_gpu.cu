/* sbf_gpu.cu -- the GPU engine's entry points (sbf_gpu.h): devices, builds, an index on a
 * device, the blocking queries and per-k-mer presence. The kernels are in kernels/, the choice
 * among their instances in sbf_gpu_plan.cu (made once per upload and per build), streams and
 * device memory in sbf_gpu_stream.cu; bench/gpu_bench_time.cu times the same kernels on
 * device-resident data. History, predictions and measurements of every kernel version:
 * doc/gpu-notes.md. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbf_gpu_int.h"

extern "C" int sbf_gpu_warm(int device)
{
    if (cudaSetDevice(device) != cudaSuccess || cudaFree(0) != cudaSuccess) {
        cudaGetLastError();   /* not reported here: the upload meets it again and says why */
        return -1;
    }
    return 0;
}

extern "C" int sbf_gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear: no driver or no device is not an error here */
        return 0;
    }
    return n;
}

extern "C" int sbf_gpu_expected(void)
{
    /* CUDA_VISIBLE_DEVICES empty, -1 or NoDevFiles (Slurm's, for a job without GPUs) hides every
     * device from CUDA: none to expect, whatever the machine has */
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (visible && (!*visible || visible[0] == '-' || !strncmp(visible, "NoDevFiles", 10)))
        return 0;
    return access("/dev/nvidiactl", F_OK) == 0;
}

extern "C" int sbf_gpu_describe(int device, char *buf, size_t size)
{
    int rc = SBF_OK, rt = 0, drv = 0;
    cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, device));
    CUDA_TRY(cudaRuntimeGetVersion(&rt));
    CUDA_TRY(cudaDriverGetVersion(&drv));
    snprintf(buf, size, "%s, %.1f GiB, compute %d.%d, %d SMs, CUDA runtime %d.%d, driver %d.%d", prop.name,
             (double)prop.totalGlobalMem / (1024.0 * 1024 * 1024), prop.major, prop.minor, prop.multiProcessorCount,
             rt / 1000, (rt % 1000) / 10, drv / 1000, (drv % 1000) / 10);
    return SBF_OK;
fail:
    if (size)
        buf[0] = '\0';
    return rc;
}

int gpu_grid_for(uint64_t work, int device, int *blocks)
{
    int sms = 0, rc = SBF_OK;
    CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    {
        uint64_t want = (work + 255) / 256;
        uint64_t cap = (uint64_t)sms * 8;
        *blocks = (int)(want < cap ? (want ? want : 1) : cap);
    }
    return SBF_OK;
fail:
    return rc;
}


/* Build on the device: a zeroed filter there, ORed into and copied back; with `hold`, the k-mers
 * it leaves out marked first (hold_kernel), their count into kept and left_out. */
extern "C" int sbf_gpu_fail_after_sent = 0;

static int build_on_device(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                           const sbf_gpu_hold_t *hold, uint64_t *kept, uint64_t *left_out, sbf_gpu_sent_fn sent,
                           void *arg)
{
    int rc = SBF_OK, blocks = 0;
    const size_t bytes = sbf_target_bytes(idx, t);
    build_launch b;
    memset(&b, 0, sizeof b);
    b.len = len;
    b.kp = make_params(&idx->params);
    b.n_shards = t->n_shards;
    const build_plan *plan = gpu_build_plan_for(b.kp);
    const unsigned k = (unsigned)idx->params.k;
    uint8_t *d_codes = NULL;
    unsigned long long *d_bits = NULL, *d_counts = NULL, counts[2] = {0, 0};
    uint64_t *d_keys = NULL, *d_sieve = NULL, *sieve = NULL;
    uint32_t *d_held = NULL;

    CUDA_TRY(cudaSetDevice(device));
    CUDA_TRY(cudaMalloc(&d_codes, len + 8));
    CUDA_TRY(cudaMemset(d_codes, 4, len + 8));
    CUDA_TRY(cudaMalloc(&d_bits, bytes));
    if ((rc = gpu_copy_to_device(device, d_codes, codes, len, "copying the sequence to the device")) != SBF_OK)
        goto fail;
    CUDA_TRY(cudaMemset(d_bits, 0, bytes));   /* a new filter: t->bits is all zero */
    b.codes = d_codes;
    b.bits = d_bits;
    if (hold) {
        const uint64_t threads = gpu_hold_threads(len, k), words = threads / 32 + 1;
        const size_t sieve_bytes = gpu_hold_sieve_words() * sizeof(uint64_t);
        if (!(sieve = (uint64_t *)malloc(sieve_bytes))) {
            rc = sbf_error(SBF_E_NOMEM, "out of memory");
            goto fail;
        }
        gpu_hold_sieve(hold->keys, hold->keys ? hold->n_keys : 0, sieve);
        CUDA_TRY(cudaMalloc(&d_held, words * sizeof(uint32_t)));
        CUDA_TRY(cudaMalloc(&d_counts, sizeof counts));
        CUDA_TRY(cudaMemset(d_counts, 0, sizeof counts));
        CUDA_TRY(cudaMalloc(&d_sieve, sieve_bytes));
        CUDA_TRY(cudaMemcpy(d_sieve, sieve, sieve_bytes, cudaMemcpyHostToDevice));
        if (hold->keys && hold->n_keys) {
            CUDA_TRY(cudaMalloc(&d_keys, hold->n_keys * sizeof(uint64_t)));
            CUDA_TRY(cudaMemcpy(d_keys, hold->keys, hold->n_keys * sizeof(uint64_t), cudaMemcpyHostToDevice));
        }
        if (threads) {
            if ((rc = gpu_grid_for(threads, device, &blocks)))
                goto fail;
            gpu_hold_run(blocks, d_codes, len, k, hold->dust_min, d_keys, d_keys ? hold->n_keys : 0, d_sieve, d_held,
                         d_counts);
            CUDA_TRY(cudaGetLastError());
        }
        b.held = d_held;
    }
    if ((rc = gpu_grid_for(plan->threads(b), device, &blocks)))
        goto fail;
    if (plan->threads(b)) {
        plan->run(blocks, b);
        CUDA_TRY(cudaGetLastError());
    }
    if (sent)   /* the sequence is on the device: the caller's copy may go while the kernel runs */
        sent(arg);
    if (sbf_gpu_fail_after_sent) {
        rc = sbf_error(SBF_E_IO, "a failure after the upload (injected by a test)");
        goto fail;
    }
    CUDA_TRY(cudaDeviceSynchronize());
    if (hold) {
        CUDA_TRY(cudaMemcpy(counts, d_counts, sizeof counts, cudaMemcpyDeviceToHost));
        *kept = counts[0];
        *left_out = counts[1];
    }
    rc = gpu_copy_to_host(device, t->bits, d_bits, bytes, "copying the filter from the device");
fail:
    cudaFree(d_codes);
    cudaFree(d_bits);
    cudaFree(d_held);
    cudaFree(d_counts);
    cudaFree(d_keys);
    cudaFree(d_sieve);
    free(sieve);
    return rc;
}

extern "C" int sbf_gpu_build_target(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes,
                                    uint64_t len, sbf_gpu_sent_fn sent, void *arg)
{
    return build_on_device(device, idx, t, codes, len, NULL, NULL, NULL, sent, arg);
}

extern "C" int sbf_gpu_build_target_held(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes,
                                         uint64_t len, const sbf_gpu_hold_t *hold, uint64_t *kept, uint64_t *left_out)
{
    return build_on_device(device, idx, t, codes, len, hold, kept, left_out, NULL, NULL);
}

query_targets gpu_targets_of(const sbf_gpu_index_t *g, int one)
{
    static const int first = 0;
    query_targets qt;
    memset(&qt, 0, sizeof qt);
    qt.small = g->small;
    if (one < 0) {
        qt.d = g->d_targets;
        qt.h = g->h_targets;
        qt.R = g->n_targets;
        qt.plain = g->plain;
        qt.n_plain = g->n_plain;
        qt.wide = g->wide;
        qt.n_wide = g->n_wide;
        return qt;
    }
    /* one target, as target 0 of 1: in plain_panel or not (then the kernels that read any panel) */
    qt.d = g->d_targets + one;
    qt.h = g->h_targets + one;
    qt.R = 1;
    qt.plain = &first;
    qt.n_plain = g->h_targets[one].log2_width == 0;
    return qt;
}

extern "C" void sbf_gpu_index_free(sbf_gpu_index_t *g)
{
    if (!g)
        return;
    cudaSetDevice(g->device);
    for (int q = 0; q < g->n_panels && g->bits; ++q)
        cudaFree(g->bits[q]);
    free(g->bits);
    cudaFree(g->d_targets);
    free(g->h_targets);
    free(g->plain);
    free(g->wide);
    for (int c = 0; c < g->n_cache; ++c)
        gpu_blocking_set_free(g->cache[c]);
    if (g->cache_lock_ready)
        pthread_mutex_destroy(&g->cache_lock);
    free(g);
}

/* The panel kernel's view of wide panel pn: which columns are whose. */
static void wide_args(const sbf_index_t *idx, const sbf_panel_t *pn, const unsigned long long *bits, panel_args *pa)
{
    memset(pa, 0, sizeof *pa);
    pa->bits = (const uint32_t *)bits;
    pa->n_shards = (uint32_t)pn->n_shards;
    pa->log2_width = pn->log2_width;
    pa->R = idx->n_targets;
    for (int c = 0; c < 64; ++c)
        pa->target[c] = -1;
    for (int m = 0; m < pn->n_members; ++m) {
        const int r = pn->members[m];
        const sbf_target_t *t = &idx->targets[r];
        if (t->cols == 1) {
            pa->target[t->col0] = (int16_t)r;
            pa->whole[t->col0 / 32] |= 1u << (t->col0 % 32);
        } else {
            pa->split[pa->n_split].col0 = (uint8_t)t->col0;
            pa->split[pa->n_split].cols = (uint8_t)t->cols;
            pa->split[pa->n_split++].target = r;
        }
    }
}

extern "C" int sbf_gpu_index_upload(int device, const sbf_index_t *idx, sbf_gpu_index_t **out)
{
    return sbf_gpu_index_upload_stoppable(device, idx, NULL, out);
}

extern "C" int sbf_gpu_index_upload_stoppable(int device, const sbf_index_t *idx, const int *stop,
                                              sbf_gpu_index_t **out)
{
    int rc = SBF_OK;
    dev_target *host_targets = NULL;
    sbf_gpu_index_t *g = (sbf_gpu_index_t *)calloc(1, sizeof *g);
    *out = NULL;
    if (!g || !(g->bits = (unsigned long long **)calloc((size_t)idx->n_panels, sizeof *g->bits)) ||
        !(host_targets = (dev_target *)calloc((size_t)idx->n_targets, sizeof *host_targets)) ||
        !(g->plain = (int *)calloc((size_t)idx->n_targets, sizeof *g->plain)) ||
        !(g->wide = (panel_args *)calloc((size_t)idx->n_panels, sizeof *g->wide))) {
        rc = sbf_error(SBF_E_NOMEM, "out of memory");
        goto fail;
    }
    g->device = device;
    g->n_targets = idx->n_targets;
    g->n_panels = idx->n_panels;
    g->kp = make_params(&idx->params);
    if (pthread_mutex_init(&g->cache_lock, NULL) != 0) {
        rc = sbf_error(SBF_E_THREAD, "cannot create a mutex");
        goto fail;
    }
    g->cache_lock_ready = true;
    CUDA_TRY(cudaSetDevice(device));
    g->small = true;
    for (int q = 0; q < idx->n_panels; ++q) {
        const sbf_panel_t *pn = &idx->panels[q];
        size_t bytes = sbf_panel_bytes(idx, pn);
        CUDA_TRY(cudaMalloc(&g->bits[q], bytes));
        if ((rc = gpu_upload(device, g->bits[q], pn->bits, bytes, stop)) != SBF_OK)
            goto fail;
        g->small = g->small && pn->n_shards < ((uint64_t)1 << 32);
        if (pn->log2_width == 0)
            g->plain[g->n_plain++] = pn->members[0];
        else
            wide_args(idx, pn, g->bits[q], &g->wide[g->n_wide++]);
    }
    for (int r = 0; r < idx->n_targets; ++r) {
        const sbf_target_t *t = &idx->targets[r];
        host_targets[r].bits = g->bits[t->panel];
        host_targets[r].n_shards = idx->panels[t->panel].n_shards;
        host_targets[r].log2_width = idx->panels[t->panel].log2_width;
        host_targets[r].col0 = t->col0;
        host_targets[r].cols = t->cols;
    }
    CUDA_TRY(cudaMalloc(&g->d_targets, (size_t)idx->n_targets * sizeof *g->d_targets));
    CUDA_TRY(cudaMemcpy(g->d_targets, host_targets, (size_t)idx->n_targets * sizeof *host_targets,
                        cudaMemcpyHostToDevice));
    g->h_targets = host_targets; /* the v10 kernel takes the targets as parameters */
    host_targets = NULL;
    /* the kernels of every query */
    g->plan = gpu_query_plan_for(g->kp, g->small, g->n_targets, g->n_plain, g->n_wide);
    *out = g;
    return SBF_OK;
fail:
    free(host_targets);
    sbf_gpu_index_free(g);
    return rc;
}

#define STREAM_BATCH 262144u /* reads per batch of the streamed query: measured best on the H200 */

/* The blocking queries: batches of STREAM_BATCH reads alternate between the two workspaces of a
 * set; each batch's counts land in pinned buffers of its workspace and are copied to kmers /
 * hits once the workspace's next batch is due (or at the end). */
static int query_blocking(sbf_gpu_index_t *g, seq_format fmt, size_t n, const uint8_t *const *seqs, const size_t *lens,
                          uint32_t *kmers, uint32_t *hits)
{
    int rc = SBF_OK;
    const size_t R = (size_t)g->n_targets, batch = n < STREAM_BATCH ? n : STREAM_BATCH;
    const int n_ws = n > batch ? 2 : 1;
    blocking_set *set = NULL;
    size_t pend_first[2] = {0, 0}, pend_n[2] = {0, 0};
    size_t max_bases = 0;
    if (n == 0)
        return SBF_OK;
    for (size_t b0 = 0; b0 < n; b0 += batch) {
        size_t bases = 0;
        for (size_t i = b0; i < n && i < b0 + batch; ++i)
            bases += lens[i];
        max_bases = bases > max_bases ? bases : max_bases;
    }
    if ((rc = gpu_blocking_set_take(g, batch, max_bases, &set)))
        return rc;
    /* wait for workspace w's batch and copy its counts to the caller's arrays */
    auto collect = [&](int w) -> int {
        if (pend_n[w] == 0)
            return SBF_OK;
        int r = sbf_gpu_stream_sync(set->ws[w]);
        if (r == SBF_OK) {
            memcpy(kmers + pend_first[w], set->out_k[w], pend_n[w] * sizeof *kmers);
            memcpy(hits + pend_first[w] * R, set->out_h[w], pend_n[w] * R * sizeof *hits);
        }
        pend_n[w] = 0;
        return r;
    };
    for (size_t b0 = 0, k = 0; b0 < n; b0 += batch, ++k) {
        const int w = (int)(k % (size_t)n_ws);
        const size_t cnt = n - b0 < batch ? n - b0 : batch;
        if ((rc = collect(w)) || (rc = gpu_query_async(set->ws[w], fmt, cnt, seqs + b0, lens + b0, set->out_k[w], set->out_h[w])))
            goto fail;
        pend_first[w] = b0;
        pend_n[w] = cnt;
    }
    for (int w = 0; w < n_ws; ++w)
        if ((rc = collect(w)))
            goto fail;
    gpu_blocking_set_give_back(g, set);
    return SBF_OK;
fail:
    gpu_blocking_set_free(set); /* after a failure its state is not trusted again */
    return rc;
}

extern "C" int sbf_gpu_query(sbf_gpu_index_t *g, size_t n, const char *const *seqs, const size_t *lens,
                             uint32_t *kmers, uint32_t *hits)
{
    return query_blocking(g, FMT_ASCII, n, (const uint8_t *const *)seqs, lens, kmers, hits);
}

extern "C" int sbf_gpu_query_nt16(sbf_gpu_index_t *g, size_t n, const uint8_t *const *packed, const size_t *lens,
                                  uint32_t *kmers, uint32_t *hits)
{
    return query_blocking(g, FMT_NT16, n, packed, lens, kmers, hits);
}


#define PRESENCE_CHUNK 2048u /* k-mers per warp of the per-k-mer query */

extern "C" int sbf_gpu_query_kmers(sbf_gpu_index_t *g, int target, const char *seq, size_t len, uint8_t *present)
{
    int rc = SBF_OK, blocks = 0;
    const uint64_t k = g->kp.k();
    uint8_t *d_seq = NULL, *d_present = NULL;
    sequence_chunks layout;
    uint64_t rows, pieces;
    if (target < 0 || target >= g->n_targets)
        return sbf_error(SBF_E_PARAM, "no target number %d (the index has %d)", target, g->n_targets);
    if (len < k)
        return SBF_OK;
    rows = len - k + 1;
    pieces = (rows + PRESENCE_CHUNK - 1) / PRESENCE_CHUNK;
    CUDA_TRY(cudaSetDevice(g->device));
    CUDA_TRY(cudaMalloc(&d_seq, len));
    CUDA_TRY(cudaMalloc(&d_present, rows));
    CUDA_TRY(cudaMemcpy(d_seq, seq, len, cudaMemcpyHostToDevice));
    if ((rc = gpu_grid_for(pieces, g->device, &blocks)))
        goto fail;
    layout.chunk = PRESENCE_CHUNK;
    layout.total = len;
    layout.present = d_present;
    {
        const query_launch q = {blocks, d_seq, pieces, g->kp, gpu_targets_of(g, target), NULL, NULL, 0};
        g->plan->presence(q, layout);
    }
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaMemcpy(present, d_present, rows, cudaMemcpyDeviceToHost));
fail:
    cudaFree(d_seq);
    cudaFree(d_present);
    return rc;
}

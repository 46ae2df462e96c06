/* sbf_gpu_plan.cu -- the kernel instances and the choice among them. An index's query plan is
 * chosen once, when it is uploaded (gpu_query_plan_for), a build's plan once per build
 * (gpu_build_plan_for): no launch looks at the parameters again, and no environment variable
 * takes part (the switches of 0.3 are gone: doc/gpu-notes.md, "Retired kernels").
 *  - the compiled sets (defaults k31 m25 s25 H2, and H1; 512-bit shards), 32-bit shard numbers:
 *    query v10/v11 (kernels/query_run.cuh) for the targets of plain panels, 1 target, or QGROUP
 *    targets per launch, and the panel kernel (kernels/query_panel.cuh), one launch per wide
 *    panel (format 3);
 *  - the compiled sets with a panel of 2^32 shards (the format's largest): query v6
 *    (kernels/query_warp.cuh), constants folded in, which reads any panel;
 *  - any other parameter set: query v6 with runtime parameters, one instance per ring size and
 *    for m == s or not;
 *  - every build: v8 (kernels/build_warp.cuh), the default parameters with their own instance. */
#include <string.h>

#include "kernels/build_warp.cuh"
#include "kernels/hold.cuh"
#include "kernels/query_panel.cuh"
#include "kernels/query_run.cuh"
#include "kernels/query_warp.cuh"
#include "sbf_gpu_int.h"

/* One warp per read: 8 reads per block of 256, at most 32 blocks per block of gpu_grid_for(). */
static int warp_blocks(const query_launch &q)
{
    const uint64_t want = (q.n + 7) / 8, cap = (uint64_t)q.blocks * 32;
    return (int)(want < cap ? (want ? want : 1) : cap);
}

/* A target_group with no target and its powers of two (pw[i] = 2^i), as every compiled-set
 * launch starts from. */
static target_group empty_group()
{
    target_group tg;
    memset(&tg, 0, sizeof tg);
    for (int b = 0; b < 32; ++b)
        tg.pw[b] = 1u << b;
    return tg;
}

/* ---- v10: G targets of plain panels per launch (QGROUP, or 1 for one target and for
 * per-k-mer presence); k-mer counts from the first launch only (kmers NULL: none) ---- */

template <class PT, int G, class IN, class LAYOUT>
static void run_launch(const query_launch &q, const LAYOUT &layout, uint32_t *kmers)
{
    const int n = q.qt.n_plain;
    for (int i0 = 0; i0 == 0 || i0 < n; i0 += G) {
        target_group tg = empty_group();
        tg.g = n - i0 < G ? n - i0 : G;
        tg.R = q.qt.R;
        for (int t = 0; t < tg.g; ++t) {
            const int r = q.qt.plain[i0 + t];
            tg.r[t] = r;
            tg.bits[t] = (const uint32_t *)q.qt.h[r].bits;
            tg.n_shards[t] = (uint32_t)q.qt.h[r].n_shards; /* below 2^32: the plan is v10 only then */
        }
        query_run_kernel<PT, G, IN, LAYOUT><<<warp_blocks(q), 256, 0, q.st>>>(q.seqs, layout, q.n, PT(), tg,
                                                                              i0 == 0 ? kmers : NULL, q.hits);
    }
}

/* ---- the panel kernel: one launch per wide panel ---- */

template <class PT, class IN>
static void panel_launch(const query_launch &q, const packed_reads &layout, const panel_args &pa, uint32_t *kmers)
{
    const target_group tg = empty_group(); /* the step's powers of two only */
    const int blocks = warp_blocks(q);
#define PANEL_CASE(LW)                                                                                                     case LW:                                                                                                                   query_panel_kernel<PT, LW, IN><<<blocks, 256, 0, q.st>>>(q.seqs, layout, q.n, PT(), tg, pa, kmers, q.hits);           break;
    switch (pa.log2_width) {
        PANEL_CASE(1) PANEL_CASE(2) PANEL_CASE(3) PANEL_CASE(4) PANEL_CASE(5) PANEL_CASE(6)
    }
#undef PANEL_CASE
}

/* The plain panels' targets by v10, G per launch, then each wide panel by the panel kernel; the
 * first launch counts the k-mers. */
template <class PT, int G, class IN>
static void compiled_launches(const query_launch &q, const packed_reads &layout)
{
    uint32_t *kmers = q.kmers;
    if (q.qt.n_plain > 0 || q.qt.n_wide == 0) {
        run_launch<PT, G, IN>(q, layout, kmers);
        kmers = NULL;
    }
    for (int w = 0; w < q.qt.n_wide; ++w) {
        panel_launch<PT, IN>(q, layout, q.qt.wide[w], kmers);
        kmers = NULL;
    }
}

template <class PT, int G>
static void run_reads(seq_format fmt, const query_launch &q, const packed_reads &layout)
{
    if (fmt == FMT_NT16)
        compiled_launches<PT, G, nt16_input>(q, layout);
    else
        compiled_launches<PT, G, ascii_input>(q, layout);
}

/* ---- v6: PT a compiled set (constants folded in) or kparams ---- */

template <class PT, bool SHARED, unsigned RING, int G, class IN, class LAYOUT>
static void warp_launch(const query_launch &q, const LAYOUT &layout)
{
    PT p;
    if constexpr (std::is_same<PT, kparams>::value)
        p = q.kp;
    query_warp_kernel<PT, SHARED, G, RING, IN, LAYOUT>
        <<<warp_blocks(q), 256, 0, q.st>>>(q.seqs, layout, q.n, p, q.qt.d, q.qt.R, q.kmers, q.hits);
}

template <class PT, bool SHARED, unsigned RING, int G>
static void warp_reads(seq_format fmt, const query_launch &q, const packed_reads &layout)
{
    if (fmt == FMT_NT16)
        warp_launch<PT, SHARED, RING, G, nt16_input>(q, layout);
    else
        warp_launch<PT, SHARED, RING, G, ascii_input>(q, layout);
}

/* per-k-mer presence is asked of one target */
template <class PT, bool SHARED, unsigned RING>
static void warp_presence(const query_launch &q, const sequence_chunks &layout)
{
    warp_launch<PT, SHARED, RING, 1, ascii_input>(q, layout);
}

/* the compiled sets' presence: v10 for a target of a plain panel, v6 (which reads any panel)
 * for one of a wide panel */
template <class PT>
static void run_presence(const query_launch &q, const sequence_chunks &layout)
{
    if (q.qt.n_plain == 1)
        run_launch<PT, 1, ascii_input>(q, layout, NULL);
    else
        warp_presence<PT, true, 8>(q, layout);
}

/* G targets per pass over a read: 1 for an index of one target, else 8 */
template <class PT, bool SHARED, unsigned RING>
static const query_plan *warp_plan(bool one)
{
    static const query_plan p1 = {"v6, runtime parameters, 1 target", warp_reads<PT, SHARED, RING, 1>,
                                  warp_presence<PT, SHARED, RING>};
    static const query_plan p8 = {"v6, runtime parameters, 8 targets per pass", warp_reads<PT, SHARED, RING, 8>,
                                  warp_presence<PT, SHARED, RING>};
    return one ? &p1 : &p8;
}

/* The plans of a compiled parameter set PT (m == s, 16 < s < 32): v10, or v6 with PT's
 * constants where a target has 2^32 shards. */
template <class PT>
static const query_plan *compiled_plan(const char *const names[5], bool small, bool one, bool panels, bool plain_one)
{
    static const query_plan v10_one = {names[0], run_reads<PT, 1>, run_presence<PT>};
    static const query_plan v10_group = {names[1], run_reads<PT, QGROUP>, run_presence<PT>};
    static const query_plan v6_one = {names[2], warp_reads<PT, true, 8, 1>, warp_presence<PT, true, 8>};
    static const query_plan v6_group = {names[3], warp_reads<PT, true, 8, 8>, warp_presence<PT, true, 8>};
    static const query_plan panel_one = {names[4], run_reads<PT, 1>, run_presence<PT>};
    static const query_plan panel_group = {names[4], run_reads<PT, QGROUP>, run_presence<PT>};
    if (!small) /* v10 and the panel kernel need shard counts below 2^32 */
        return one ? &v6_one : &v6_group;
    if (panels)
        return plain_one ? &panel_one : &panel_group;
    return one ? &v10_one : &v10_group;
}

const query_plan *gpu_query_plan_for(const kparams &kp, bool small, int n_targets, int n_plain, int n_wide)
{
    static const char *const h2_names[5] = {"v10, 1 target", "v10, 8 targets per launch",
                                            "v6 (compiled H=2), 1 target", "v6 (compiled H=2), 8 targets per pass",
                                            "panel kernel per wide panel, v10 for plain ones"};
    static const char *const h1_names[5] = {"v10 H=1, 1 target", "v10 H=1, 8 targets per launch",
                                            "v6 (compiled H=1), 1 target", "v6 (compiled H=1), 8 targets per pass",
                                            "panel kernel H=1 per wide panel, v10 for plain ones"};
    const bool one = n_targets <= 1;
    if (params_are<default_params>(kp))
        return compiled_plan<default_params>(h2_names, small, one, n_wide > 0, n_plain <= 1);
    if (params_are<h1_params>(kp))
        return compiled_plan<h1_params>(h1_names, small, one, n_wide > 0, n_plain <= 1);
    const unsigned ring = ring_for(kp);
    const bool shared = kp.m() == kp.s();
#define QUERY_CASE(S, RG)                                                                                              \
    if (shared == S && ring == RG)                                                                                     \
        return warp_plan<kparams, S, RG>(one);
    QUERY_CASE(true, 8) QUERY_CASE(true, 16) QUERY_CASE(true, 32)
    QUERY_CASE(false, 8) QUERY_CASE(false, 16)
#undef QUERY_CASE
    return warp_plan<kparams, false, 32>(one); /* m != s, rings of 32 */
}

/* ---- build v8 ---- */

static uint64_t build_pieces(const build_launch &b)
{
    const uint64_t kmers = b.len >= b.kp.k() ? b.len - b.kp.k() + 1 : 0;
    return (kmers + BUILD_PIECE - 1) / BUILD_PIECE;
}

/* one warp per piece */
static uint64_t build_threads(const build_launch &b) { return build_pieces(b) * 32; }

template <class PT, bool SHARED, unsigned RING>
static void build_run(int blocks, const build_launch &b)
{
    PT p;
    if constexpr (std::is_same<PT, kparams>::value)
        p = b.kp;
    build_warp_kernel<PT, SHARED, RING><<<blocks, 256>>>(b.codes, b.len, b.held, p, b.n_shards, b.bits, build_pieces(b));
}

const build_plan *gpu_build_plan_for(const kparams &kp)
{
    static const build_plan v8_h2 = {"v8", build_threads, build_run<default_params, true, 8>};
    static const build_plan v8_h1 = {"v8 H=1", build_threads, build_run<h1_params, true, 8>};
    if (params_are<default_params>(kp))
        return &v8_h2;
    if (params_are<h1_params>(kp))
        return &v8_h1;
    const unsigned ring = ring_for(kp);
    const bool shared = kp.m() == kp.s();
#define BUILD_CASE(S, RG)                                                                                              \
    if (shared == S && ring == RG) {                                                                                   \
        static const build_plan v8 = {"v8, runtime parameters", build_threads, build_run<kparams, S, RG>};            \
        return &v8;                                                                                                    \
    }
    BUILD_CASE(true, 8) BUILD_CASE(true, 16) BUILD_CASE(true, 32)
    BUILD_CASE(false, 8) BUILD_CASE(false, 16)
#undef BUILD_CASE
    static const build_plan v8_last = {"v8, runtime parameters", build_threads, build_run<kparams, false, 32>};
    return &v8_last; /* m != s, rings of 32 */
}

/* ---- the k-mers a build leaves out ---- */

uint64_t gpu_hold_sieve_words(void) { return ((uint64_t)1 << HOLD_SIEVE_LOG2) / 64; }

void gpu_hold_sieve(const uint64_t *keys, uint64_t n, uint64_t *sieve)
{
    memset(sieve, 0, gpu_hold_sieve_words() * sizeof *sieve);
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t b = hold_sieve_bit(keys[i]);
        sieve[b >> 6] |= 1ull << (b & 63);
    }
}

uint64_t gpu_hold_threads(uint64_t len, unsigned k)
{
    const uint64_t n = len >= k ? len - k + 1 : 0;
    return (n + 31) / 32 * 32;
}

void gpu_hold_run(int blocks, const uint8_t *codes, uint64_t len, unsigned k, unsigned dust_min, const uint64_t *keys,
                  uint64_t n_keys, const uint64_t *sieve, uint32_t *held, unsigned long long *counts)
{
    hold_kernel<<<blocks, 256>>>(codes, len, k, dust_min, keys, n_keys, sieve, held, counts);
}

/* gpu_bench_median.cuh -- the GPU benchmark's timing (bench/gpu_bench_time.cu): CUDA events
 * around each run after an untimed prepare, the median of `repeats` runs. Included by the benchmark's CUDA files only, after gpu/sbf_gpu_int.h. */
#ifndef SBF_GPU_BENCH_MEDIAN_CUH
#define SBF_GPU_BENCH_MEDIAN_CUH

#include <stdlib.h>

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A step of time_median(): a cudaError_t becomes a status with its message; a status stays. */
static inline int step_status(cudaError_t e, const char *what)
{
    return e == cudaSuccess ? SBF_OK : sbf_error(SBF_E_IO, "CUDA: %s failed: %s", what, cudaGetErrorString(e));
}
static inline int step_status(int rc, const char *what)
{
    (void)what;
    return rc;
}

/* Time `repeats` runs of launch() with CUDA events, each after an untimed prepare(); the
 * median in milliseconds goes to *ms_median. The callables return a cudaError_t or a status. */
template <class P, class L>
static int time_median(int repeats, double *ms_median, P prepare, L launch)
{
    int rc = SBF_OK;
    cudaEvent_t ev0 = NULL, ev1 = NULL;
    double *ms = (double *)malloc((size_t)repeats * sizeof *ms);
    if (!ms)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    CUDA_TRY(cudaEventCreate(&ev0));
    CUDA_TRY(cudaEventCreate(&ev1));
    for (int i = 0; i < repeats; ++i) {
        float f;
        if ((rc = step_status(prepare(), "prepare()")))
            goto fail;
        CUDA_TRY(cudaEventRecord(ev0));
        if ((rc = step_status(launch(), "launch()")))
            goto fail;
        CUDA_TRY(cudaEventRecord(ev1));
        CUDA_TRY(cudaEventSynchronize(ev1));
        CUDA_TRY(cudaEventElapsedTime(&f, ev0, ev1));
        ms[i] = f;
    }
    qsort(ms, (size_t)repeats, sizeof *ms, cmp_double);
    *ms_median = ms[repeats / 2];
fail:
    if (ev0)
        cudaEventDestroy(ev0);
    if (ev1)
        cudaEventDestroy(ev1);
    free(ms);
    return rc;
}

#endif

/* sbf_clock.h -- seconds on the monotonic clock, and of the calling thread's CPU time, for the
 * stage timings of --stats. */
#ifndef SBF_CLOCK_H
#define SBF_CLOCK_H

#include <time.h>

static inline double sbf_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds the calling thread has run: a stage whose CPU time is well below its wall time
 * waited, for a lock, for input, or for a core (more runnable threads than cores). */
static inline double sbf_thread_cpu(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif

/* sbf_clock.h -- seconds on the monotonic clock, for the stage timings of --stats. */
#ifndef SBF_CLOCK_H
#define SBF_CLOCK_H

#include <time.h>

static inline double sbf_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif

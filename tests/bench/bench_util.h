/*
 * bench_util.h - what every benchmark needs (header-only): the count
 * argument and the monotonic clock.
 */
#ifndef IMP_BENCH_UTIL_H
#define IMP_BENCH_UTIL_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double bench_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The optional first argument, a count >= 1 named `what` in the usage line,
 * into *n (left as it is when absent). Returns 0, or 2 (the exit status)
 * after printing the usage when the argument is not such a count. */
static inline int bench_count_arg(int argc, char **argv, const char *what, size_t *n) {
    if (argc < 2) return 0;
    long v = strtol(argv[1], NULL, 10);
    if (v < 1) {
        fprintf(stderr, "usage: %s [%s >= 1]\n", argv[0], what);
        return 2;
    }
    *n = (size_t)v;
    return 0;
}

#endif

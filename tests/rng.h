/*
 * rng.h - the tests' and benchmarks' random numbers: xorshift64, seeded by
 * the caller (a fixed seed that a failing test prints), never by time.
 */
#ifndef IMP_TEST_RNG_H
#define IMP_TEST_RNG_H

#include <stdint.h>

static inline uint64_t imp_rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Uniform in [0, 1). */
static inline double imp_rng_unit(uint64_t *s) {
    return (double)(imp_rng_next(s) >> 11) * 0x1.0p-53;
}

/* Uniform in [lo, hi). */
static inline double imp_rng_uniform(uint64_t *s, double lo, double hi) {
    return lo + (hi - lo) * imp_rng_unit(s);
}

#endif

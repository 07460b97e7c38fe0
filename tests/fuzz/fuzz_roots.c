/*
 * fuzz_roots.c - the polynomial solver on arbitrary finite coefficients.
 *
 * Input: a degree (first byte, 0-4), then up to 7 doubles (coefficients,
 * then the window [lo, hi]). Findings: a crash or sanitizer report, more
 * roots than the degree, roots outside the window or out of order, and a
 * root that does not verify: |p(r)| must be within a backward-error bound,
 * 64 units of roundoff times sum |a_i| |r|^i (what a backward-stable root
 * finder guarantees, multiple roots included), plus |p'(r)| times the
 * spacing of doubles at r (the root rounded to the nearest double).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/roots.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Magnitudes the solver is specified for: coefficients 0 or of magnitude in
 * [COEFF_MIN, COEFF_MAX], a dynamic range of 300 decades that balancing
 * keeps inside doubles (beyond about 1500 binades some coefficient must
 * underflow, and the polynomial solved is no longer the one given). The
 * time-of-impact solvers stay inside it: the sphere solver rescales length
 * and time first, and the others combine velocities and positions that the
 * api caps at 1e60. */
#define COEFF_MAX 1e150
#define COEFF_MIN 1e-150

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 + 3 * sizeof(double)) return 0;
    int degree = data[0] % 5;
    double v[7] = {0};
    size_t n = (size - 1) / sizeof(double);
    if (n > 7) n = 7;
    memcpy(v, data + 1, n * sizeof(double));
    for (size_t i = 0; i < 7; ++i)
        if (!isfinite(v[i]) || fabs(v[i]) > COEFF_MAX || fabs(v[i]) < COEFF_MIN) v[i] = 0.0;
    double c[5] = {0};
    for (int i = 0; i <= degree; ++i)
        c[i] = v[i];
    double lo = fmin(v[5], v[6]), hi = fmax(v[5], v[6]);
    if (data[0] & 0x80) hi = INFINITY;
    double roots[4];
    int k = imp_poly_roots(c, degree, lo, hi, roots);
    if (k < 0 || k > degree) abort();
    for (int i = 0; i < k; ++i) {
        double r = roots[i];
        if (!(r >= lo && r <= hi) || (i > 0 && roots[i - 1] > r)) abort();
        /* backward error at r, evaluated in long double so the check is not the solver's,
         * plus what rounding the root itself to a double costs: |p'(r)| times its spacing
         * (a root below the smallest subnormal is 0) */
        long double p = 0, dp = 0, bound = 0;
        for (int j = degree; j >= 0; --j) {
            dp = dp * r + p;
            p = p * r + c[j];
            bound = bound * fabsl((long double)r) + fabsl((long double)c[j]);
        }
        double spacing = fmax(fabs(nextafter(r, INFINITY) - r), DBL_TRUE_MIN);
        if (isfinite((double)bound) &&
            fabsl(p) > 64 * (DBL_EPSILON / 2) * bound + fabsl(dp) * spacing)
            abort();
    }
    return 0;
}

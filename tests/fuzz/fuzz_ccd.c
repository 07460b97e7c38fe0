/*
 * fuzz_ccd.c - moving-triangle collision on arbitrary queries, the filter
 * against the exact path.
 *
 * Input: a mode byte, then the 24 coordinates (start, then end, of the four
 * points). Mode bit 0: the kind (edge-edge when set). Bit 1: grid mode, one
 * signed byte a coordinate divided by 8 (a small grid full of coincident,
 * collinear and coplanar points, the degenerate cases); otherwise eight
 * bytes a double, replaced by 0 when not finite or of magnitude outside
 * [2^-40, 2^40] (the exact path's rationals grow with the exponent range of
 * the input: wider inputs are answered as exactly, but at milliseconds a
 * query, too slow for the smoke run of make test). Findings: a crash or sanitizer report, a time
 * outside [0, 1], and (for one input in eight, the exact path being slow) a filter answer that
 * differs from the exact path's: another hit, or a time more than twice the promised accuracy away.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ccd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    uint8_t mode = data[0];
    imp_ccd_query q = {.kind = (mode & 1) ? IMP_CCD_EDGE_EDGE : IMP_CCD_VERTEX_FACE};
    double v[24] = {0};
    const uint8_t *p = data + 1;
    size_t left = size - 1;
    for (int i = 0; i < 24; i++) {
        if (mode & 2) {
            if (left < 1) break;
            v[i] = (double)(int8_t)p[0] / 8.0;
            p += 1, left -= 1;
        } else {
            if (left < sizeof(double)) break;
            memcpy(&v[i], p, sizeof(double));
            if (!isfinite(v[i]) || fabs(v[i]) > 0x1p40 || fabs(v[i]) < 0x1p-40) v[i] = 0.0;
            p += sizeof(double), left -= sizeof(double);
        }
    }
    for (int k = 0; k < 4; k++)
        for (int d = 0; d < 3; d++) {
            q.start[k][d] = v[3 * k + d];
            q.end[k][d] = v[12 + 3 * k + d];
        }
    imp_ccd_result r = imp_ccd(&q);
    if (r.hit && !(r.time >= 0.0 && r.time <= 1.0)) abort();
    if ((mode & 0x1c) == 0 && !r.exact) {
        imp_ccd_result x = imp_ccd_exact(&q);
        if (x.hit != r.hit) abort();
        if (r.hit && fabs(x.time - r.time) > 2.0 * IMP_CCD_TIME_ACCURACY) abort();
    }
    return 0;
}

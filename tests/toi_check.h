/*
 * toi_check.h - the independent check every time-of-impact test shares:
 * a reported answer against the static overlap test (core/overlap.c, no
 * sweep). Header-only, for unit tests.
 *
 * imp_test_toi_check returns NULL when r is consistent, else a message
 * (static buffer): OVERLAPPING must match the static depth at t = 0 to
 * depth_tol (skipped when depth_tol < 0); at a HIT the shapes must touch
 * (|gap| <= tol); and at `samples` times before the hit (every sampled
 * time of the window for a NONE) they must not interpenetrate by more than
 * tol.
 */
#ifndef IMP_TEST_TOI_CHECK_H
#define IMP_TEST_TOI_CHECK_H

#include <math.h>
#include <stdio.h>

#include "core/overlap.h"
#include "core/toi.h"

/* penetration (> 0) or minus the distance of the shapes at time t; a
 * halfspace ignores its position but is displaced along its motion, so
 * that displacement is taken off the other body */
static inline double imp_test_penetration(const imp_shape *a, const imp_motion *ma,
                                          const imp_shape *b, const imp_motion *mb, int dim,
                                          double t) {
    imp_vec3 pa = imp_path_at(ma->p, ma->v, ma->a, t), pb = imp_path_at(mb->p, mb->v, mb->a, t);
    if (b->type == IMP_SHAPE_HALFSPACE)
        pa = imp_sub(pa, imp_path_at(imp_v3(0, 0, 0), mb->v, mb->a, t));
    if (a->type == IMP_SHAPE_HALFSPACE)
        pb = imp_sub(pb, imp_path_at(imp_v3(0, 0, 0), ma->v, ma->a, t));
    imp_overlap_result o = imp_overlap(a, pa, b, pb, dim);
    return o.state == IMP_OVERLAP_OVERLAPPING ? o.depth
           : o.state == IMP_OVERLAP_APART     ? -o.distance
                                              : NAN;
}

static inline const char *imp_test_toi_check(const imp_shape *a, const imp_motion *ma,
                                             const imp_shape *b, const imp_motion *mb, int dim,
                                             double horizon, const imp_toi_result *r, double tol,
                                             double depth_tol, int samples) {
    static char msg[200];
    double end = horizon;
    if (r->state == IMP_TOI_OVERLAPPING) {
        double p = imp_test_penetration(a, ma, b, mb, dim, 0);
        if (depth_tol >= 0 && !(fabs(p - r->depth) <= depth_tol)) {
            snprintf(msg, sizeof msg, "depth %.17g, the static test says %.17g", r->depth, p);
            return msg;
        }
        return NULL;
    }
    if (r->state == IMP_TOI_HIT) {
        double p = imp_test_penetration(a, ma, b, mb, dim, r->time);
        if (!(fabs(p) <= tol)) {
            snprintf(msg, sizeof msg, "at the hit t = %.17g the gap is %.3g", r->time, p);
            return msg;
        }
        end = r->time;
    } else if (r->state != IMP_TOI_NONE) {
        snprintf(msg, sizeof msg, "state %d", r->state);
        return msg;
    }
    for (int i = 0; i < samples; ++i) {
        double t = end * (i + 0.5) / samples;
        double p = imp_test_penetration(a, ma, b, mb, dim, t);
        if (!(p <= tol)) {
            snprintf(msg, sizeof msg, "%s, yet they interpenetrate by %.3g at t = %.17g",
                     r->state == IMP_TOI_HIT ? "a later hit" : "none", p, t);
            return msg;
        }
    }
    return NULL;
}

#endif

/*
 * ep_overlap.c - POST /v1/overlap: static overlap test with separation
 * vector.
 *
 * DESIGN
 * What: decodes two bodies (velocities are read and ignored), runs
 * imp_overlap at their positions, and answers overlap, depth, the unit
 * normal from a towards b, and the minimum translation vector (moving b by
 * it separates them), or, when apart, depth 0 and the distance.
 * Why here: the one pair core/overlap.c does not solve (two halfspaces)
 * is a 422 at b's shape type, never a wrong answer. A polyhedron's hull is
 * built per call; if its allocation fails the answer is the internal
 * out-of-memory problem, like any other allocation failure.
 */
#include <string.h>

#include "api/encode.h"
#include "api/endpoints.h"
#include "core/overlap.h"

int imp_ep_overlap(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    d->spin = IMP_DEC_SPIN_SERVED; /* a static test: velocities are ignored */
    const json_t *req = in->json;
    imp_body a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    static const char *const MEMBERS[] = {"a", "b", NULL};
    if (imp_dec_request(d, req, MEMBERS, NULL) || imp_dec_body(d, req, "a", 0, &a) ||
        imp_dec_body(d, req, "b", 1, &b)) {
        imp_body_free(&a);
        imp_body_free(&b);
        return -1;
    }
    int dim = d->dim;
    imp_overlap_result r = imp_overlap(&a.shape, a.m.p, &b.shape, b.m.p, dim);
    if (r.state == IMP_OVERLAP_FAILED && r.failure != IMP_FAILURE_UNSUPPORTED) {
        /* NOMEM (a DEGENERATE polyhedron never passes decoding) */
        imp_body_free(&a);
        imp_body_free(&b);
        return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    }
    if (r.state == IMP_OVERLAP_FAILED) { /* UNSUPPORTED: two halfspaces */
        size_t saved = imp_dec_push_key(d, "b");
        size_t s2 = imp_dec_push_key(d, "shape");
        size_t s3 = imp_dec_push_key(d, "type");
        imp_dec_fail(d, IMP_E_VALUE,
                     "is not supported by /v1/overlap for this pair (two halfspaces)");
        imp_dec_pop(d, s3);
        imp_dec_pop(d, s2);
        imp_dec_pop(d, saved);
        imp_body_free(&a);
        imp_body_free(&b);
        return -1;
    }
    imp_body_free(&a);
    imp_body_free(&b);

    int ok = 1;
    json_t *o = json_object();
    if (!o) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    int overlapping = r.state == IMP_OVERLAP_OVERLAPPING;
    imp_put(o, "overlap", json_boolean(overlapping), &ok);
    imp_put_real(o, "depth", overlapping ? r.depth : 0.0, &ok);
    if (!overlapping) imp_put_real(o, "distance", r.distance, &ok);
    imp_put(o, "normal", imp_enc_vec(r.normal, dim), &ok);
    if (overlapping) imp_put(o, "mtv", imp_enc_vec(imp_scale(r.normal, r.depth), dim), &ok);
    if (!ok) {
        json_decref(o);
        return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    }
    out->doc = o;
    return 0;
}

/*
 * failure.h - how core reports failure: one convention per kind of function,
 * and the two types they share.
 *
 *   - Solvers (imp_toi_*, imp_overlap, imp_overlap_closest, imp_move_check):
 *     an input in, an output struct out whose state enum has a FAILED value.
 *     A failed result says why in its `failure` member (imp_failure below);
 *     nothing else in it is meaningful. No return codes beside the result,
 *     and no member read for a second meaning.
 *   - Fallible builders (imp_hull_build, imp_polytope_pair_build,
 *     imp_broadphase_pairs, imp_scene_predict, imp_sim_create, imp_sim_run):
 *     the module's status enum returned (0 is OK), what was built through
 *     an out parameter, and an optional imp_error (NULL: not wanted) that a
 *     failure fills with the status and a constant message. On failure
 *     there is nothing to free.
 *   - Checks and normalisers of input geometry (imp_polygon_normalize,
 *     imp_polyhedron_check, imp_quat_normalize, imp_unit_scaled): 0, or a
 *     nonzero status naming the fault, the output untouched.
 *   - Everything else cannot fail: it returns its answer, and asserts its
 *     documented preconditions (api/ checks requests before they get here).
 *
 * Thread-safety: plain data.
 */
#ifndef IMP_CORE_FAILURE_H
#define IMP_CORE_FAILURE_H

/* Why a solver's result is FAILED. */
typedef enum imp_failure {
    IMP_FAILURE_NONE = 0,    /* not failed */
    IMP_FAILURE_NOMEM,       /* an allocation failed */
    IMP_FAILURE_UNSUPPORTED, /* this pair of shapes is not solved here (two halfspaces; a pair
                                without a closed form, for a closed-form solver) */
    IMP_FAILURE_UNDECIDED,   /* an iterative solver ran out of steps before an answer */
    IMP_FAILURE_DEGENERATE   /* a polyhedron's points have no hull (too flat) */
} imp_failure;

/* What a fallible builder says about its failure. */
typedef struct imp_error {
    int code;            /* the status returned (the module's enum) */
    const char *message; /* constant text naming what failed */
} imp_error;

/* Fills *err when err is not NULL; returns code. */
static inline int imp_error_set(imp_error *err, int code, const char *message) {
    if (err) {
        err->code = code;
        err->message = message;
    }
    return code;
}

#endif

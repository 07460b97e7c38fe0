/*
 * paths.h - closest points of two straight paths (segments, rays, lines).
 *
 * Follows the contract of POST /v1/paths/intersect (../shared/spec/API.md):
 * p(t) = p.start + t (p.end - p.start), q(s) likewise; a segment takes
 * parameters in [0, 1], a ray in [0, inf), a line any. The result holds the
 * parameters of a closest pair, the pair itself, their least distance and
 * whether the paths intersect (distance within the distance tolerance) and
 * meet (|t - s| within the parameter tolerance).
 *
 * Where the closest pair is not unique (parallel paths, a zero-length
 * path), the reported pair is the one with the least |t - s|, so that
 * same_time is true exactly when the particles meet somewhere; when |t - s|
 * is the same for all of them (parallel paths with equal velocities), the
 * one with t nearest 0 (the start of the overlap on p; t = 0 for lines).
 *
 * Thread-safety: pure functions, reentrant, no global state.
 * Preconditions (asserted): finite coordinates of magnitude at most
 * IMP_PATHS_MAX_COORD, dim 2 (z components 0) or 3, a valid kind, a
 * tolerance >= 0 or IMP_PATHS_TOL_DEFAULT.
 */
#ifndef IMP_PATHS_H
#define IMP_PATHS_H

#include "vec.h"

/* Largest coordinate magnitude accepted (length unit). Closest points of
 * nearly parallel lines may lie up to about 2^60 scene scales away; this
 * keeps them, and every intermediate, inside double range. The API accepts
 * at most 1e60. */
#define IMP_PATHS_MAX_COORD 1e250

/*
 * Parallel threshold (dimensionless: the sine of the angle between the
 * directions). The directions are differences of the input points, each
 * component rounded with a relative error of at most one unit roundoff u,
 * so the angle between the computed directions is uncertain by about
 * 2 sqrt(3) u ~ 4e-16 rad. Below 32 u ~ 3.6e-15 (ten times that) whether,
 * where and on which side two lines cross is decided by that rounding,
 * not by the input points, so such paths are parallel. Treating them so
 * moves the reported distance of two segments by at most their length
 * times this sine (about 1e-14 of the scene scale, far inside the default
 * tolerance). Compared on squares: |d1 x d2|^2 <= SIN^2 |d1|^2 |d2|^2.
 */
#define IMP_PATHS_PARALLEL_SIN 0x1p-48

/*
 * Point threshold (dimensionless, relative to the scene scale). A path
 * shorter than this fraction of the scene scale is a point at its start;
 * start == end is the practical case. Below it the parameter of a point one
 * scene scale away would exceed the range of a double (2^1024) and could
 * not be reported; no physical path is 2^960 times shorter than its scene.
 */
#define IMP_PATHS_POINT_REL 0x1p-960

/*
 * Default tolerance (dimensionless). The contract's default: distance
 * within 1e-9 of the scene scale (the largest coordinate magnitude of the
 * four points) counts as intersecting. Parameters carry no length unit,
 * so the default for |t - s| is 1e-9 itself: scaling the scene by any
 * factor leaves every boolean of the answer unchanged. An explicit
 * tolerance is used as given for both, as the contract says.
 */
#define IMP_PATHS_DEFAULT_TOL_REL 1e-9

/* Pass as `tolerance` to use the defaults above. */
#define IMP_PATHS_TOL_DEFAULT (-1.0)

typedef enum imp_paths_kind {
    IMP_PATHS_SEGMENT = 0, /* parameters in [0, 1] */
    IMP_PATHS_RAY,         /* parameters in [0, inf) */
    IMP_PATHS_LINE         /* any parameter */
} imp_paths_kind;

typedef struct imp_paths_input {
    imp_vec3 p0, p1;               /* p: start, end */
    imp_vec3 q0, q1;               /* q: start, end */
    int dim;                       /* 2 (every z component 0) or 3 */
    imp_paths_kind kind_p, kind_q; /* each path's kind (a ray against a wall segment) */
    double tolerance;              /* >= 0, or IMP_PATHS_TOL_DEFAULT */
} imp_paths_input;

typedef struct imp_paths_result {
    int intersects;  /* distance <= dist_tol */
    int parallel;    /* directions parallel within IMP_PATHS_PARALLEL_SIN (not for a point) */
    int same_time;   /* |t - s| <= param_tol */
    int p_point;     /* p was taken as a point (zero length) */
    int q_point;     /* q was taken as a point */
    double t, s;     /* parameters of the closest pair on p and q */
    imp_vec3 cp, cq; /* the closest pair: p(t), q(s) */
    imp_vec3 point;  /* midpoint of cp and cq */
    double distance; /* least distance between the paths, >= 0; exactly 0 for a 2D crossing */
    double dist_tol; /* tolerances used */
    double param_tol;
} imp_paths_result;

/*
 * Closest points of paths p and q, each of its own kind.
 * Always succeeds for inputs meeting the preconditions; every field of the
 * result is finite.
 */
imp_paths_result imp_paths_closest(const imp_paths_input *in);

#endif

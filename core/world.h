/*
 * world.h - a static world of colliders (level geometry) in one bounding
 * volume hierarchy, and the queries against it: rays, shape casts and
 * overlaps (issue 16; ../shared/spec/API.md, "Worlds").
 *
 * A world holds, in one dimension (2 or 3):
 *   - triangles, from meshes and heightfields (3D), each with its
 *     collider index and its triangle index in that collider;
 *   - segments, from chains (2D), each with its collider and segment index;
 *   - convex colliders of the shapes of shape.h at a position. Halfspaces
 *     have no finite bounds: they stay outside the hierarchy, and every
 *     query tests them.
 * Counter-clockwise seen from the front defines a triangle's front face
 * (its normal (b - a) x (c - a)); a chain's segment a -> b has its front on
 * the right-hand side of its direction of travel. One-sided meshes and
 * chains ignore contacts on their back.
 *
 * Every query answers exactly what testing every primitive one by one and
 * ordering the answers would give (the hierarchy only skips work): the
 * per-primitive functions below are the ones the queries call, and the
 * unit tests check the queries against a loop over them. Answers are
 * ordered by time (or t), then collider index, then primitive index.
 *
 * Memory: imp_world_build allocates the world; the caller frees it with
 * imp_world_destroy (which accepts NULL). The world copies every input it
 * needs (shapes' vertices included): the input may be freed after the
 * build. Lists in query results are malloc'd and freed by the caller with
 * free().
 * Thread-safety: a built world is immutable; any number of threads may
 * query it at once. No global state.
 */
#ifndef IMP_CORE_WORLD_H
#define IMP_CORE_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "failure.h"
#include "filter.h"
#include "overlap.h"
#include "parallel.h"
#include "shape.h"
#include "toi.h"
#include "vec.h"

/* Most primitives (triangles, segments and convex colliders) of one world
 * (count): the hierarchy's indices are 32-bit, and it has up to twice as
 * many nodes as primitives. */
#define IMP_WORLD_MAX_PRIMS ((size_t)INT32_MAX)

/* ---- input -------------------------------------------------------------------------------- */

typedef enum imp_world_collider_kind {
    IMP_WORLD_SHAPE = 0,   /* a convex shape of shape.h, halfspaces included */
    IMP_WORLD_MESH,        /* 3D */
    IMP_WORLD_HEIGHTFIELD, /* 3D */
    IMP_WORLD_CHAIN        /* 2D */
} imp_world_collider_kind;

/* Triangles over vertices: corners tris[3 i], tris[3 i + 1], tris[3 i + 2]
 * (each < n_verts), counter-clockwise seen from the front. Triangles with
 * zero area (two corners equal, or all three on one line, decided
 * exactly) are skipped and counted. */
typedef struct imp_world_mesh {
    const imp_vec3 *verts;
    size_t n_verts;
    const uint32_t *tris;
    size_t n_tris;
} imp_world_mesh;

/* A rows x cols grid (each >= 2) in the local x-z plane, height along +y:
 * vertex (r, c) is (c dx, heights[r cols + c], r dz). Cell (r, c) (r < rows
 * - 1, c < cols - 1) is split along its diagonal from (r, c) to (r + 1,
 * c + 1) into triangle 2 k = {(r, c), (r + 1, c + 1), (r, c + 1)} and 2 k + 1
 * = {(r, c), (r + 1, c), (r + 1, c + 1)}, k = r (cols - 1) + c; both face +y. */
typedef struct imp_world_heightfield {
    size_t rows, cols;
    double dx, dz; /* > 0 */
    const double *heights;
} imp_world_heightfield;

/* Segments between consecutive vertices (z = 0), and from the last back to
 * the first when `loop`; segment i runs from vertex i to vertex i + 1.
 * Zero-length segments are skipped and counted. */
typedef struct imp_world_chain {
    const imp_vec3 *verts;
    size_t n_verts; /* >= 2 */
    int loop;
} imp_world_chain;

typedef struct imp_world_collider {
    imp_world_collider_kind kind;
    imp_vec3 position; /* translates the collider's local coordinates (a halfspace ignores it) */
    int one_sided;     /* mesh, heightfield, chain: contacts on the back are ignored */
    const imp_filter *filter; /* NULL: the default; copied (filter.h: what may touch it) */
    const imp_shape *shape;   /* SHAPE: any shape of the world's dimension */
    imp_world_mesh mesh;
    imp_world_heightfield heightfield;
    imp_world_chain chain;
} imp_world_collider;

typedef struct imp_world_input {
    int dim; /* 2 or 3 */
    const imp_world_collider *colliders;
    size_t n_colliders;
    imp_stop stop; /* polled during the build; {NULL, NULL}: never */
} imp_world_input;

typedef enum imp_world_status {
    IMP_WORLD_OK = 0,
    IMP_WORLD_NOMEM,        /* an allocation failed */
    IMP_WORLD_TOO_LARGE,    /* more than IMP_WORLD_MAX_PRIMS primitives */
    IMP_WORLD_BUILD_STOPPED /* the stop check said stop (the reason is not kept) */
} imp_world_status;

typedef struct imp_world imp_world;

/*
 * Builds the world of in->colliders. Preconditions (asserted; api/ checks
 * requests before): dim 2 or 3; finite coordinates; meshes and
 * heightfields only in 3D, chains only in 2D; indices in range; a shape
 * valid for its type (shape.h). Returns IMP_WORLD_OK with *out set, or a
 * failure status with *out NULL and *err (when not NULL) filled; nothing
 * to free then. Time O(n log n) for n primitives, whatever their layout.
 */
imp_world_status imp_world_build(const imp_world_input *in, imp_world **out, imp_error *err);

/* Frees a world; accepts NULL. */
void imp_world_destroy(imp_world *w);

typedef struct imp_world_info {
    int dim;
    size_t colliders;
    size_t triangles;            /* kept */
    size_t degenerate_triangles; /* zero-area triangles skipped */
    size_t segments;             /* kept */
    size_t degenerate_segments;  /* zero-length segments skipped */
    size_t shapes;               /* convex colliders, halfspaces included */
    size_t prims;                /* triangles + segments + shapes */
    size_t nodes;                /* of the hierarchy */
    size_t bytes;                /* memory the world holds */
    int has_bounds;              /* 0 when there is nothing with finite bounds */
    imp_vec3 lo, hi;             /* bounds of everything but halfspaces */
} imp_world_info;

imp_world_info imp_world_describe(const imp_world *w);

/* ---- answers ----------------------------------------------------------------------------- */

typedef enum imp_world_prim_kind {
    IMP_WORLD_PRIM_TRIANGLE = 0,
    IMP_WORLD_PRIM_SEGMENT,
    IMP_WORLD_PRIM_SHAPE /* a convex collider; its index is 0 */
} imp_world_prim_kind;

typedef enum imp_world_state {
    IMP_WORLD_NONE = 0,    /* nothing hit (or overlapped) */
    IMP_WORLD_HIT,         /* a hit (or, for an overlap query, at least one contact) */
    IMP_WORLD_OVERLAPPING, /* shape cast: the body overlaps the world at t = 0 */
    IMP_WORLD_STOPPED,     /* the stop check said stop; `stopped_by` is its reason */
    IMP_WORLD_FAILED       /* a primitive's solver failed; `failure` says why */
} imp_world_state;

/* Order of answers: smaller t first, then smaller collider, then smaller index. */
typedef struct imp_world_hit {
    double t;
    imp_vec3 point;
    imp_vec3 normal; /* unit, facing the ray's origin side */
    uint32_t collider, index;
    uint32_t back_face; /* 1: the ray hit the back of a face (or started inside a shape) */
    uint32_t kind;      /* imp_world_prim_kind */
} imp_world_hit;

/* ---- rays -------------------------------------------------------------------------------- */

typedef enum imp_world_ray_mode {
    IMP_WORLD_RAY_CLOSEST = 0, /* the first hit */
    IMP_WORLD_RAY_ANY,         /* whether anything is hit: HIT or NONE, no hit reported (the
                                  first hit found depends on the traversal) */
    IMP_WORLD_RAY_ALL          /* every hit, in order */
} imp_world_ray_mode;

/* The ray origin + t dir, t in [0, max_t]. */
typedef struct imp_world_ray {
    imp_vec3 origin, dir;     /* dir nonzero; z = 0 in 2D */
    double max_t;             /* > 0; INFINITY: unbounded */
    const imp_filter *filter; /* the ray's (NULL: the default): colliders it may not touch
                                 (filter.h) are not there for it */
} imp_world_ray;

typedef struct imp_world_ray_result {
    imp_world_state state; /* NONE, HIT, STOPPED or FAILED */
    imp_world_hit hit;     /* CLOSEST: the first hit */
    imp_world_hit *hits;   /* ALL: every hit in order (malloc'd; free() it), NULL when none */
    size_t n_hits;
    imp_failure failure;
    int stopped_by;
} imp_world_ray_result;

/*
 * The hits of a ray. Triangles are tested watertight (Woop, Benthin and
 * Wald, "Watertight Ray/Triangle Intersection", JCGT 2(1), 2013, with
 * exact edge-function signs): a ray through a shared edge or vertex hits
 * at least one of the triangles that share it, and a ray from inside a
 * closed mesh always hits it; t is computed from the triangle's plane in
 * double-double, exact to about 1e-16 relative. Chain segments likewise
 * in 2D. Convex colliders are cast with imp_toi_shapes (the ray as a
 * moving point); a ray starting inside one hits it at t = 0, back_face 1.
 * FAILED when a shape's solver failed before the answer (NOMEM; UNDECIDED
 * for a 3D segment collider). `stop` (may be NULL) is polled every
 * IMP_STOP_POLL_PRIMS primitives.
 */
imp_world_ray_result imp_world_raycast(const imp_world *w, const imp_world_ray *ray,
                                       imp_world_ray_mode mode, const imp_stop *stop);

/* ---- shape casts ------------------------------------------------------------------------ */

typedef struct imp_world_cast {
    const imp_shape *shape;   /* any shape of the world's dimension but a halfspace */
    imp_motion motion;        /* p is the shape's position */
    double horizon;           /* > 0; INFINITY searches all t >= 0 (a turning shape:
                                 |w| horizon <= IMP_ROT_MAX_ANGLE, else a primitive may fail
                                 UNDECIDED, and the hierarchy, which searches each primitive
                                 only up to the best contact so far, may fail less often than
                                 the loop over every primitive) */
    const imp_filter *filter; /* the body's (NULL: the default), as for a ray */
    imp_vec3 w;               /* angular velocity about the position (world axes; 2D: z only);
                                 0: the shape keeps its orientation */
    const imp_stop *stop;     /* polled within a turning shape's solve (NULL: never) */
} imp_world_cast;

typedef struct imp_world_cast_result {
    imp_world_state state; /* NONE, HIT, OVERLAPPING, STOPPED or FAILED */
    double time;           /* HIT; 0 when OVERLAPPING */
    imp_vec3 point;        /* contact point at `time` */
    imp_vec3 normal;       /* unit, from the collider towards the body */
    imp_vec3 position;     /* the body's position at `time` */
    double depth;          /* OVERLAPPING */
    double tolerance;      /* as imp_toi_result: 0 for an exact time */
    uint32_t collider, index, kind;
    imp_failure failure;
    int stopped_by;
} imp_world_cast_result;

/*
 * The first contact of a moving body with the world over [0, horizon],
 * with the rules of imp_toi_shapes, or of imp_toi_rotating for a shape that
 * turns (a certified time with its tolerance; the normal and point are
 * those at `time`) (a body that overlaps the world at
 * t = 0 is OVERLAPPING, the deepest-first order being: time, then
 * overlapping before hitting, then collider, then index). Triangles are
 * flat convex polygons cast exactly against the body's Minkowski
 * difference (core/toi_rounded.h). The hierarchy is searched with the
 * body's swept bounds over [0, best time so far]. FAILED when a
 * primitive's solver failed where it could have mattered.
 */
imp_world_cast_result imp_world_shapecast(const imp_world *w, const imp_world_cast *cast,
                                          const imp_stop *stop);

/* ---- overlaps ---------------------------------------------------------------------------- */

typedef struct imp_world_contact {
    uint32_t collider, index, kind, reserved; /* reserved: 0 */
    double depth;                             /* >= 0 (0: touching) */
    imp_vec3 normal; /* unit: moving the body along it by depth separates them */
} imp_world_contact;

typedef struct imp_world_overlap_result {
    imp_world_state state;       /* NONE, HIT, STOPPED or FAILED */
    imp_world_contact *contacts; /* malloc'd, by collider then index; free() it */
    size_t n_contacts;
    imp_failure failure;
    int stopped_by;
} imp_world_overlap_result;

/* Every primitive that shape (not a halfspace) placed at position overlaps
 * or touches (imp_overlap's rules; triangles as flat convex polygons), of
 * the colliders its filter (NULL: the default) may touch. FAILED when a
 * primitive's solver failed (NOMEM). */
imp_world_overlap_result imp_world_overlap(const imp_world *w, const imp_shape *shape,
                                           imp_vec3 position, const imp_filter *filter,
                                           const imp_stop *stop);

/* ---- one primitive at a time: what the queries call (and the tests' reference loop) ------- */

/* Primitives are numbered 0 .. imp_world_prim_count - 1 in the world's own order. */
size_t imp_world_prim_count(const imp_world *w);

/* Primitive i's collider and its index there (0 for a shape). */
void imp_world_prim_id(const imp_world *w, size_t i, uint32_t *collider, uint32_t *index);

/* Primitive i's corners in world coordinates into v: 3 for a triangle, 2 for a segment, 0
 * for a convex collider (nothing written). */
int imp_world_prim_corners(const imp_world *w, size_t i, imp_vec3 v[3]);

/* Primitive i's kind. */
imp_world_prim_kind imp_world_prim_kind_of(const imp_world *w, size_t i);

/* A ray prepared for the primitive tests (the shear of the watertight test,
 * the bounds padding). Plain data. */
typedef struct imp_world_ray_prep {
    imp_world_ray ray;
    int dim;
    int kx, ky, kz;           /* axes: kz that of the largest |dir| component */
    double sx, sy;            /* the shear: dir's kx and ky components over its kz one */
    double inv[3];            /* 1 / dir, per axis */
    int neg[3];               /* dir's sign bit, per axis: which bound the ray meets first */
    double onear[3], ofar[3]; /* the origin moved by the bounds padding, for the bound met
                                 first and for the other one */
    /* the node test in float (core/world_ray.c): onear and ofar rounded to float
     * outwards, 1 / dir in float; fast 0 when the ray's numbers are out of its range */
    float fnear[3], ffar[3], finv[3];
    int fast;
    /* where in a node (core/world_impl.h) the float bounds of each axis are that the
     * ray meets first and last: byte offsets, chosen once per ray by dir's sign */
    unsigned near_off[3], far_off[3];
} imp_world_ray_prep;

imp_world_ray_prep imp_world_ray_prepare(const imp_world *w, const imp_world_ray *ray);

/* Primitive i against the ray: 1 with *hit filled, 0 when missed, -1 when
 * its solver failed (*why set). */
int imp_world_ray_prim(const imp_world *w, const imp_world_ray_prep *p, size_t i,
                       imp_world_hit *hit, imp_failure *why);

/* Whether primitive i's padded bounds meet the ray over [0, t]: where a
 * failure of primitive i could hide a hit at or before t. */
int imp_world_ray_reaches(const imp_world *w, const imp_world_ray_prep *p, size_t i, double t);

/* The order of hits: negative, zero or positive as a comes before, with or after b. */
int imp_world_hit_cmp(const imp_world_hit *a, const imp_world_hit *b);

/* A shape cast prepared for the primitive tests: the body's points and the
 * swept-bounds parameters. Holds a pointer to the cast. */
typedef struct imp_world_cast_prep {
    const imp_world_cast *cast;
    int dim;
    imp_vec3 blo, bhi;  /* the body's bounds relative to its position (turning: in every
                           orientation it takes within the horizon) */
    double pad;         /* absolute padding of the swept bounds */
    int turning;        /* the shape turns (imp_shape_turns): imp_toi_rotating solves */
    double turn_extent; /* turning: the shape's extent (imp_shape_extent), its bounding sphere */
} imp_world_cast_prep;

imp_world_cast_prep imp_world_cast_prepare(const imp_world *w, const imp_world_cast *cast);

/* Primitive i against the cast: its result (state NONE, HIT, OVERLAPPING,
 * FAILED, or STOPPED when the cast's stop check stopped a turning shape's
 * solve; the time of a HIT within the horizon). */
imp_world_cast_result imp_world_cast_prim(const imp_world *w, const imp_world_cast_prep *p,
                                          size_t i);

/* imp_world_cast_prim with a turning shape's search ending at `window` (<= the horizon;
 * ignored for a shape that does not turn, whose casts are closed form): a contact whose
 * time plus its tolerance lies within the window is found exactly as over the whole
 * horizon; any other is NONE or later than window less one refinement width. */
imp_world_cast_result imp_world_cast_prim_within(const imp_world *w, const imp_world_cast_prep *p,
                                                 size_t i, double window);

/* The window that finds every contact no later than `bound` (a best time so far) as the whole
 * horizon would: bound plus four refinement widths (IMP_ROT_TIME_REL of max(1, bound)), within
 * the horizon; the horizon for a shape that does not turn. */
double imp_world_cast_window(const imp_world_cast_prep *p, double bound);

/* Whether primitive i's bounds meet the body's swept bounds over [0, t]. */
int imp_world_cast_reaches(const imp_world *w, const imp_world_cast_prep *p, size_t i, double t);

/* The order of cast results (HIT or OVERLAPPING): time, overlapping first,
 * collider, index. */
int imp_world_cast_cmp(const imp_world_cast_result *a, const imp_world_cast_result *b);

/* A placed shape prepared for the primitive tests: its padded bounds. */
typedef struct imp_world_overlap_prep {
    const imp_shape *shape;
    imp_vec3 position;
    const imp_filter *filter; /* NULL: the default */
    int dim;
    imp_vec3 lo, hi;
} imp_world_overlap_prep;

imp_world_overlap_prep imp_world_overlap_prepare(const imp_world *w, const imp_shape *shape,
                                                 imp_vec3 position, const imp_filter *filter);

/* Primitive i against the placed shape: 1 with *c filled when they overlap
 * or touch, 0 when apart, -1 when its solver failed (*why set). */
int imp_world_overlap_prim(const imp_world *w, const imp_world_overlap_prep *p, size_t i,
                           imp_world_contact *c, imp_failure *why);

/* ---- the surface around a contact, for moves that slide (core/world_surface.c) ----------- */

/* Every primitive whose bounds meet the closed box [lo, hi] (halfspaces
 * always) and whose collider filter f (NULL: the default) may touch,
 * appended to the growable array *out (*n items, capacity *cap; realloc'd)
 * in the world's order. 0, or -1 out of memory (*out keeps what it had). */
int imp_world_prims_in_box(const imp_world *w, imp_vec3 lo, imp_vec3 hi, const imp_filter *f,
                           size_t **out, size_t *n, size_t *cap);

/* Whether primitive i's bounds meet the closed box [lo, hi] (a halfspace's always): the
 * test imp_world_prims_in_box applies to each primitive. */
int imp_world_prim_meets_box(const imp_world *w, size_t i, imp_vec3 lo, imp_vec3 hi);

/* Shape (not a halfspace) placed at position against primitive i, as
 * imp_overlap answers (the normal runs from the shape towards the
 * primitive); a one-sided primitive that the shape meets from its back
 * answers APART at an infinite distance. */
imp_overlap_result imp_world_prim_overlap(const imp_world *w, const imp_shape *shape,
                                          imp_vec3 position, size_t i);

/*
 * The contact normal n (unit, from primitive i towards the body) at
 * `point` as the surface sees it: the face normal on n's side when point
 * lies inside the primitive (within IMP_WORLD_FEATURE_REL of its size from
 * every edge); n itself when the primitive is a convex collider, or when n
 * supports every triangle (or chain segment) that shares the edge or vertex
 * at point; else (a contact on an internal edge or vertex: the neighbours
 * continue the surface beyond the feature, flat or folding up) the
 * primitive's face normal on n's side. Neighbours are
 * the triangles and segments of the world's meshes, heightfields and
 * chains that have those corners (bit-identical coordinates), whichever
 * collider they belong to. So a body sliding over a tessellated floor never
 * catches on the shared edges, while a genuine convex edge or step keeps
 * its normal.
 */
imp_vec3 imp_world_surface_normal(const imp_world *w, size_t i, imp_vec3 point, imp_vec3 n);

/* The chain neighbours of segment primitive i, for ghost vertices (Box2D's
 * chain shapes): *prev the vertex before its start and *next the one after
 * its end; each flag 0 where the chain ends there. Returns 0, or -1 when
 * primitive i is not a segment. */
int imp_world_segment_neighbours(const imp_world *w, size_t i, imp_vec3 *prev, int *has_prev,
                                 imp_vec3 *next, int *has_next);

#endif

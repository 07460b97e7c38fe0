/*
 * world_impl.h - what the world family shares, private to core/world*.c.
 *
 *   world.c          the build from colliders (triangles, segments, shapes),
 *                    the primitives' bounds, the world's description
 *   world_bvh.c      the bounding volume hierarchy: binned SAH build, and the
 *                    box-test traversal the casts and overlaps use
 *   world_ray.c      rays: the watertight triangle and segment tests, shapes,
 *                    and the ordered traversal
 *   world_cast.c     shape casts: per primitive, and the traversal with a
 *                    shrinking time bound
 *   world_overlap.c  overlaps of a placed shape
 *
 * Layout: primitives live in one array, those with finite bounds first in
 * the hierarchy's leaf order ([0, n_bvh)), halfspaces after them. A
 * primitive is 80 bytes: three double corners (a segment uses two; a shape
 * keeps its position in v[0] and its bounds in its collider), its collider
 * and its index there. The hierarchy is stored 8 wide: a node is 256 bytes
 * (four cache lines, 64-byte aligned) with the float bounds of up to eight
 * children, per axis and child (rounded outwards, so a child's box
 * contains, in doubles, every box below it), and per child either a leaf's
 * first primitive and count or an interior child's node index. The root is
 * node 0; its box is not stored (the walks test its children's).
 */
#ifndef IMP_CORE_WORLD_IMPL_H
#define IMP_CORE_WORLD_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "world.h"

/* Most primitives in a leaf (count). */
#define IMP_WORLD_LEAF_SIZE 8

/* Deepest node the traversal stacks allow (levels): the build splits by
 * count past IMP_WORLD_SAH_MAX_DEPTH, which bounds the depth by that plus
 * log2 of 2^31 primitives. */
#define IMP_WORLD_MAX_DEPTH 128

typedef struct world_prim {
    imp_vec3 v[3];
    uint32_t collider, index;
} world_prim;

/* Children of a node (count). */
#define IMP_WORLD_WIDTH 8

typedef struct world_node {
    _Alignas(64) float lo[3][IMP_WORLD_WIDTH]; /* [axis][child] */
    float hi[3][IMP_WORLD_WIDTH];
    uint32_t child[IMP_WORLD_WIDTH]; /* leaf: first primitive; interior: its node */
    uint8_t count[IMP_WORLD_WIDTH];  /* leaf: primitives (1 to IMP_WORLD_LEAF_SIZE); interior: 0 */
    uint32_t n;                      /* children (1 to IMP_WORLD_WIDTH) */
} world_node;

typedef struct world_collider {
    imp_world_collider_kind kind;
    int one_sided;
    imp_filter filter;
    imp_vec3 position;
    imp_shape shape; /* SHAPE: the world's own copy (vertices included) */
    imp_vec3 lo, hi; /* SHAPE but halfspace: bounds in world coordinates */
    imp_vec3 *chain; /* CHAIN: its vertices in world coordinates (the world's own) */
    size_t n_chain;
    int loop;
} world_collider;

struct imp_world {
    int dim;
    world_collider *colliders;
    size_t n_colliders;
    world_prim *prims;
    size_t n_prims, n_bvh; /* [0, n_bvh) in the hierarchy; [n_bvh, n_prims) halfspaces */
    world_node *nodes;
    size_t n_nodes;
    double scale;       /* largest coordinate magnitude of the bounded primitives (0 when none) */
    int triangles_only; /* every primitive is a triangle (a mesh's or heightfield's): no shape, no
                           halfspace */
    int one_filter;     /* every collider has the filter of collider 0 */
    int avx;            /* the CPU runs AVX (world_cpu_avx, asked once at the build) */
    imp_world_info info;
};

/* Whether a query with filter f (NULL: the default) may touch primitive p's collider. */
static inline int world_prim_touches(const imp_world *w, const world_prim *p, const imp_filter *f) {
    return imp_filter_touch(f, &w->colliders[p->collider].filter);
}

static inline imp_world_prim_kind world_prim_kind(const imp_world *w, const world_prim *p) {
    imp_world_collider_kind k = w->colliders[p->collider].kind;
    return k == IMP_WORLD_SHAPE   ? IMP_WORLD_PRIM_SHAPE
           : k == IMP_WORLD_CHAIN ? IMP_WORLD_PRIM_SEGMENT
                                  : IMP_WORLD_PRIM_TRIANGLE;
}

/* Whether p is a triangle or a chain segment (not a convex collider). */
static inline int world_prim_is_flat(const imp_world *w, const world_prim *p) {
    return w->colliders[p->collider].kind != IMP_WORLD_SHAPE;
}

/* Bounds of a bounded primitive (not a halfspace), in doubles. */
void world_prim_bounds(const imp_world *w, const world_prim *p, imp_vec3 *lo, imp_vec3 *hi);

/* The bounds of the first nv corners of a triangle (3) or segment (2)
 * primitive: equal, compared as numbers, to world_prim_bounds' (finite
 * corners, so plain comparisons pick what fmin and fmax pick, up to the
 * sign of a zero), without libm's calls. */
static inline void world_corner_box(const world_prim *p, int nv, double lo[3], double hi[3]) {
    const imp_vec3 *v = p->v;
    lo[0] = hi[0] = v[0].x, lo[1] = hi[1] = v[0].y, lo[2] = hi[2] = v[0].z;
    for (int i = 1; i < nv; ++i) {
        double c[3] = {v[i].x, v[i].y, v[i].z};
        for (int k = 0; k < 3; ++k) {
            lo[k] = c[k] < lo[k] ? c[k] : lo[k];
            hi[k] = c[k] > hi[k] ? c[k] : hi[k];
        }
    }
}

/* The front normal (not unit) of a triangle, (b - a) x (c - a), or of a 2D
 * segment a -> b, its right-hand normal. */
imp_vec3 world_prim_front(const imp_world *w, const world_prim *p);

/* The bounds of shape s (not a halfspace) placed at pos: its points plus
 * pos, widened by its radius. Returns its extent: the largest coordinate
 * magnitude of a point relative to pos, plus the radius. */
double world_shape_bounds(const imp_shape *s, int dim, imp_vec3 pos, imp_vec3 *lo, imp_vec3 *hi);

/* Makes room for item n of a growable array of `size`-byte items at *items
 * (capacity *cap, doubled as needed). 0, or -1 out of memory (*items kept). */
int world_grow(void **items, size_t *cap, size_t n, size_t size);

/* Builds w->nodes over w->prims[0, n_bvh), reordering those primitives
 * into leaf order. IMP_WORLD_OK, NOMEM or BUILD_STOPPED (nothing allocated then). */
imp_world_status world_bvh_build(imp_world *w, const imp_stop *stop);

/* Child k's box of node n in doubles (exact conversions). */
static inline void world_child_box(const world_node *n, int k, double lo[3], double hi[3]) {
    for (int a = 0; a < 3; ++a) {
        lo[a] = (double)n->lo[a][k];
        hi[a] = (double)n->hi[a][k];
    }
}

/* A hint that the line holding p will be read soon (the walks ask for a
 * child's node or a leaf's primitives as soon as they know it is to be
 * visited, so that the misses of several children overlap); nothing where
 * the compiler has no such builtin. No effect on any answer. */
#if defined(__GNUC__)
#define WORLD_PREFETCH(p) __builtin_prefetch(p)
#else
#define WORLD_PREFETCH(p) ((void)(p))
#endif

/* A function the compiler must keep out of line (a rare path whose inlining
 * would make its caller's common path pay for its registers and stack). */
#if defined(__GNUC__)
#define WORLD_COLD __attribute__((noinline))
#else
#define WORLD_COLD
#endif

/* Asks for node i's two lines, or for the lines of count primitives from first. */
static inline void world_prefetch_child(const imp_world *w, uint32_t i, uint32_t count) {
    if (count == 0) {
        const char *n = (const char *)&w->nodes[i];
        for (size_t b = 0; b < sizeof(world_node); b += 64)
            WORLD_PREFETCH(n + b);
        return;
    }
    const char *p = (const char *)&w->prims[i], *e = (const char *)&w->prims[i + count];
    for (; p < e; p += 64)
        WORLD_PREFETCH(p);
    WORLD_PREFETCH(e - 1);
}

/* Whether two boxes meet (closed). */
static inline int world_boxes_meet(const double alo[3], const double ahi[3], const double blo[3],
                                   const double bhi[3]) {
    return alo[0] <= bhi[0] && blo[0] <= ahi[0] && alo[1] <= bhi[1] && blo[1] <= ahi[1] &&
           alo[2] <= bhi[2] && blo[2] <= ahi[2];
}

/* A depth-first walk of the hierarchy for the box-test queries: the
 * children (boxes in doubles) for which `enter` says 1 are descended, in
 * ascending `order` (may be NULL: the stored order), and asked again when
 * taken from the stack (a bound may have shrunk since); each leaf's
 * primitives go to `leaf`, which returns nonzero to end the walk (that
 * value is returned; 0 when the walk ran to its end). */
typedef struct world_walk {
    int (*enter)(void *ctx, const double lo[3], const double hi[3]);
    double (*order)(void *ctx, const double lo[3], const double hi[3]);
    int (*leaf)(void *ctx, size_t first, size_t count);
    void *ctx;
} world_walk;

int world_bvh_walk(const imp_world *w, const world_walk *walk);

/* Whether this CPU runs AVX (and its operating system keeps the registers), from the
 * compiler's runtime, which detects it once at start-up. */
int world_cpu_avx(void);

/* imp_world_raycast with the node test chosen: avx 1 uses AVX where the CPU has it
 * (w->avx), 0 the SSE (or plain) test; the answers are the same, which the unit tests
 * check. */
imp_world_ray_result world_raycast_isa(const imp_world *w, const imp_world_ray *ray,
                                       imp_world_ray_mode mode, const imp_stop *stop, int avx);

/* Counts work towards the next poll of the stop check; returns its reason
 * (nonzero) when it says stop. */
typedef struct world_poll {
    const imp_stop *stop;
    size_t work;
} world_poll;

static inline int world_poll_add(world_poll *p, size_t work) {
    p->work += work;
    if (p->work < IMP_STOP_POLL_PRIMS) return 0;
    p->work = 0;
    return imp_stop_now(p->stop);
}

/* The primitives whose solver failed during a query, kept until the
 * query's answer says which of them could have changed it. */
typedef struct world_fail {
    size_t i;
    imp_failure why;
} world_fail;

typedef struct world_fails {
    world_fail *f;
    size_t n, cap;
} world_fails;

/* Adds primitive i; 0, or -1 out of memory. */
int world_fails_push(world_fails *f, size_t i, imp_failure why);

/* Of the failed primitives for which `blocks(ctx, i)` says 1, the first by
 * collider and index: its failure (*prim set), or IMP_FAILURE_NONE when
 * none blocks. Frees the list. */
imp_failure world_fails_first(const imp_world *w, world_fails *f, int (*blocks)(void *, size_t),
                              void *ctx, size_t *prim);

#endif

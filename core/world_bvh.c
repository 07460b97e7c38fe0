/*
 * world_bvh.c - the bounding volume hierarchy of a world's primitives.
 *
 * DESIGN
 * What: one binary hierarchy over every bounded primitive (triangles,
 * segments, convex shapes) of a world, built once; and the depth-first walk
 * the box-test queries (shape casts, overlaps) share. Rays have their own
 * ordered walk in world_ray.c.
 * How: top-down binned SAH (Wald, "On fast construction of SAH-based
 * bounding volume hierarchies", IEEE RT 2007): each node's primitives are
 * binned by centroid into IMP_WORLD_BINS bins on each axis whose centroid
 * extent is positive, every bin boundary is costed as area(left) n(left) +
 * area(right) n(right) (half the surface area in 3D, half the perimeter in
 * 2D), and the cheapest boundary partitions the node's range in place.
 * Leaves hold at most IMP_WORLD_LEAF_SIZE primitives. Where all centroids
 * of a node coincide (10 million triangles stacked at one point), or past
 * IMP_WORLD_SAH_MAX_DEPTH levels (inputs where SAH peels off a few
 * primitives per level), the node is split by count in the middle of its
 * range: depth stays below IMP_WORLD_MAX_DEPTH and every level costs O(n),
 * so the build is O(n log n) on any input. The build works on 28-byte
 * references (float bounds rounded outwards, and the primitive's index),
 * iteratively with an explicit stack, and finally permutes the primitives
 * into leaf order in place (following the permutation's cycles). The
 * binary hierarchy is then collapsed IMP_WORLD_WIDTH (8) wide (a node holds
 * the boxes of up to eight children, 256 bytes in four adjacent cache
 * lines): a walk tests eight boxes per node fetched and cuts the chain of
 * dependent misses from the root to a leaf to a third of the binary
 * tree's, which, with the children asked for as soon as they are known to
 * be visited, is what a query over a large world waits on (8 wide against
 * 4: rays on a 1M-triangle level about 1.1x faster, bench_world_peers). The peak memory is the
 * primitives, the references and the two hierarchies. Node bounds are floats rounded outwards from
 * the primitives' double bounds: a node's box contains, exactly, every primitive box below it,
 * which the queries' consistency with the brute-force loop rests on. Why: SAH gives fast rays on
 * uneven level geometry (terrain next to dense buildings); binning keeps the build linear per
 * level; the wide nodes (about 15 bytes a triangle) and in-place permutation keep a million
 * triangles near 100 MB.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "world_impl.h"

/* SAH bins (count) per axis: Wald 2007 finds 16 within a few percent of a
 * full sweep of the candidate planes; 32 cost no measurable build time here
 * and visit 2% fewer leaves per ray on the 1M-triangle level. */
#define IMP_WORLD_BINS 32

/* Depth after which nodes are split by count (levels); with a count split
 * halving every level after it, depth stays below 64 + 31 <
 * IMP_WORLD_MAX_DEPTH for up to 2^31 primitives. */
#define IMP_WORLD_SAH_MAX_DEPTH 64

/* A node of the binary hierarchy the build makes before it is collapsed 4
 * wide: float bounds, and a leaf's first primitive and count or an
 * interior node's first child (its children are at index and index + 1). */
typedef struct bnode {
    float lo[3], hi[3];
    uint32_t index, count; /* count 0: interior */
} bnode;

typedef struct bref {
    float lo[3], hi[3];
    uint32_t prim;
} bref;

/* The next float below (above) a finite f, by its bit pattern. */
static float step(float f, int upward) {
    if (f == 0.0f) return upward ? 0x1p-149f : -0x1p-149f;
    union {
        float f;
        uint32_t u;
    } v = {f};
    v.u += (f > 0.0f) == (upward != 0) ? 1u : (uint32_t)-1;
    return v.f;
}

static float down(double x) {
    if (x > FLT_MAX) return FLT_MAX;
    if (x < -FLT_MAX) return -INFINITY;
    float f = (float)x;
    return (double)f > x ? step(f, 0) : f;
}

static float up(double x) {
    if (x > FLT_MAX) return INFINITY;
    if (x < -FLT_MAX) return -FLT_MAX;
    float f = (float)x;
    return (double)f < x ? step(f, 1) : f;
}

/* min and max of floats that are never NaN here, without libm's calls */
static float minf(float a, float b) { return a < b ? a : b; }
static float maxf(float a, float b) { return a > b ? a : b; }

static float centroid(const bref *r, int k) { return 0.5f * r->lo[k] + 0.5f * r->hi[k]; }

/* A box of floats; with the centroid bounds when it bounds a range. */
typedef struct fbox {
    float lo[3], hi[3];
} fbox;

static fbox fbox_empty(void) {
    fbox b = {{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
    return b;
}

static void fbox_grow(fbox *b, const float lo[3], const float hi[3]) {
    for (int k = 0; k < 3; ++k) {
        b->lo[k] = minf(b->lo[k], lo[k]);
        b->hi[k] = maxf(b->hi[k], hi[k]);
    }
}

static void fbox_add_centroid(fbox *c, const bref *r) {
    for (int k = 0; k < 3; ++k) {
        float x = centroid(r, k);
        c->lo[k] = minf(c->lo[k], x);
        c->hi[k] = maxf(c->hi[k], x);
    }
}

/* Half the surface area (3D) or half the perimeter (2D) of a box. */
static double box_cost(const fbox *b, int dim) {
    double x = (double)b->hi[0] - b->lo[0], y = (double)b->hi[1] - b->lo[1],
           z = (double)b->hi[2] - b->lo[2];
    return dim == 3 ? x * y + y * z + z * x : x + y;
}

/* The bounds and centroid bounds of refs[s, e). */
static void range_bounds(const bref *refs, size_t s, size_t e, fbox *box, fbox *cen) {
    *box = fbox_empty();
    *cen = fbox_empty();
    for (size_t i = s; i < e; ++i) {
        fbox_grow(box, refs[i].lo, refs[i].hi);
        fbox_add_centroid(cen, &refs[i]);
    }
}

typedef struct builder {
    imp_world *w;
    bref *refs;
    bnode *nodes;
    size_t n_nodes;
    world_poll poll;
    int stopped;
} builder;

/* A node's range with its bounds and centroid bounds. */
/* A node's range with its bounds and centroid bounds, and its slot. */
typedef struct task {
    size_t s, e;
    int depth;
    size_t slot;
    fbox box, cen;
} task;

/* Bin of centroid c on an axis binned from c0 with `scale` bins per unit. */
static int bin_of(float c, float c0, float scale) {
    int b = (int)((c - c0) * scale);
    return b < 0 ? 0 : b >= IMP_WORLD_BINS ? IMP_WORLD_BINS - 1 : b;
}

/* Splits task t by SAH over the best boundary of all three axes (binned in one
 * pass over the range; the axis of largest centroid extent alone visited 1.32
 * leaves and 6.32 nodes per ray on the 1M-triangle level of bench_world_peers,
 * all three 1.05 and 6.12): 1 with the range partitioned and *l, *r filled, or
 * 0 when the centroids coincide (or their extent overflows). */
static int split_sah(builder *b, const task *t, task *l, task *r) {
    /* the axes with a positive, finite centroid extent, binned in one pass over the range */
    float sc[3] = {0.0f, 0.0f, 0.0f}, c0[3];
    int axes[3], na = 0;
    for (int a = 0; a < 3; ++a) {
        double ext = (double)t->cen.hi[a] - t->cen.lo[a];
        float sa = (float)(IMP_WORLD_BINS / ext);
        c0[a] = t->cen.lo[a];
        if (!(ext > 0.0) || !isfinite(ext) || !(sa > 0.0f) || !isfinite(sa)) continue;
        sc[a] = sa;
        axes[na++] = a;
    }
    if (na == 0) return 0;
    fbox bins[3][IMP_WORLD_BINS];
    size_t count[3][IMP_WORLD_BINS] = {{0}};
    for (int q = 0; q < na; ++q)
        for (int j = 0; j < IMP_WORLD_BINS; ++j)
            bins[axes[q]][j] = fbox_empty();
    for (size_t i = t->s; i < t->e; ++i) {
        const bref *x = &b->refs[i];
        for (int q = 0; q < na; ++q) {
            int a = axes[q], j = bin_of(centroid(x, a), c0[a], sc[a]);
            fbox_grow(&bins[a][j], x->lo, x->hi);
            ++count[a][j];
        }
    }
    double best = INFINITY;
    int best_j = 0, k = 0;
    fbox best_l = fbox_empty(), best_r = fbox_empty();
    for (int q = 0; q < na; ++q) {
        int a = axes[q];
        /* sweep from the right, then from the left: cost of each boundary */
        fbox right[IMP_WORLD_BINS], acc = fbox_empty();
        size_t nr = 0, right_n[IMP_WORLD_BINS];
        for (int j = IMP_WORLD_BINS - 1; j > 0; --j) {
            fbox_grow(&acc, bins[a][j].lo, bins[a][j].hi);
            nr += count[a][j];
            right[j] = acc;
            right_n[j] = nr;
        }
        size_t nl = 0;
        acc = fbox_empty();
        for (int j = 1; j < IMP_WORLD_BINS; ++j) { /* the boundary before bin j */
            fbox_grow(&acc, bins[a][j - 1].lo, bins[a][j - 1].hi);
            nl += count[a][j - 1];
            if (nl == 0 || right_n[j] == 0) continue;
            double cost = box_cost(&acc, b->w->dim) * (double)nl +
                          box_cost(&right[j], b->w->dim) * (double)right_n[j];
            if (cost < best) {
                best = cost;
                best_j = j;
                k = a;
                best_l = acc;
                best_r = right[j];
            }
        }
    }
    float scale = sc[k];
    if (best_j == 0) return 0;
    /* partition, gathering each side's centroid bounds */
    fbox cl = fbox_empty(), cr = fbox_empty();
    size_t i = t->s, j = t->e;
    while (i < j) {
        bref *x = &b->refs[i];
        if (bin_of(centroid(x, k), c0[k], scale) < best_j) {
            fbox_add_centroid(&cl, x);
            ++i;
        } else {
            fbox_add_centroid(&cr, x);
            bref tmp = *x;
            *x = b->refs[--j];
            b->refs[j] = tmp;
        }
    }
    b->poll.work += t->e - t->s;
    *l = (task){t->s, i, t->depth + 1, 0, best_l, cl};
    *r = (task){i, t->e, t->depth + 1, 0, best_r, cr};
    return 1;
}

/* Splits task t in the middle of its range (coincident centroids, or too
 * deep for SAH). */
static void split_count(builder *b, const task *t, task *l, task *r) {
    size_t mid = t->s + (t->e - t->s) / 2;
    *l = (task){t->s, mid, t->depth + 1, 0, fbox_empty(), fbox_empty()};
    *r = (task){mid, t->e, t->depth + 1, 0, fbox_empty(), fbox_empty()};
    range_bounds(b->refs, l->s, l->e, &l->box, &l->cen);
    range_bounds(b->refs, r->s, r->e, &r->box, &r->cen);
    b->poll.work += t->e - t->s;
}

/* Binary nodes go to slots in pairs: the root at 0 (slot 1 is left
 * empty), and the two children of a node at 2k, 2k + 1. */
static void build_nodes(builder *b) {
    const imp_world *w = b->w;
    task stack[IMP_WORLD_MAX_DEPTH];
    int sp = 0;
    task t = {0, w->n_bvh, 0, 0, fbox_empty(), fbox_empty()};
    range_bounds(b->refs, 0, w->n_bvh, &t.box, &t.cen);
    b->n_nodes = 2;
    for (;;) {
        bnode *node = &b->nodes[t.slot];
        for (int k = 0; k < 3; ++k) {
            node->lo[k] = t.box.lo[k];
            node->hi[k] = t.box.hi[k];
        }
        if (world_poll_add(&b->poll, 1) != 0) {
            b->stopped = 1;
            return;
        }
        size_t n = t.e - t.s;
        if (n <= IMP_WORLD_LEAF_SIZE) {
            node->index = (uint32_t)t.s;
            node->count = (uint32_t)n;
            if (sp == 0) return;
            t = stack[--sp];
            continue;
        }
        task l, r;
        if (t.depth >= IMP_WORLD_SAH_MAX_DEPTH || !split_sah(b, &t, &l, &r))
            split_count(b, &t, &l, &r);
        node->index = (uint32_t)b->n_nodes;
        node->count = 0;
        l.slot = b->n_nodes;
        r.slot = b->n_nodes + 1;
        b->n_nodes += 2;
        assert(sp < IMP_WORLD_MAX_DEPTH);
        stack[sp++] = r;
        t = l;
    }
}

/* Wide nodes in 64-byte aligned memory; NULL when out of memory. */
static world_node *alloc_nodes(size_t n) {
    return aligned_alloc(64, (n ? n : 1) * sizeof(world_node));
}

static double bnode_cost(const bnode *n, int dim) {
    fbox b;
    memcpy(b.lo, n->lo, sizeof b.lo);
    memcpy(b.hi, n->hi, sizeof b.hi);
    return box_cost(&b, dim);
}

/* Collapses the binary hierarchy IMP_WORLD_WIDTH wide (Wald et al.,
 * "Getting rid of packets", 2008): a wide node takes the two children of a
 * binary node, then repeatedly replaces its interior child of largest area
 * by that child's two children, while it has fewer than IMP_WORLD_WIDTH. The bounds are
 * copied, so every box is the binary build's (outward-rounded) one. Nodes
 * are numbered depth first with a node's interior children in adjacent
 * slots. Returns the count of nodes written to out (room for n_bin / 2 + 1). */
static size_t collapse(const bnode *bin, world_node *out, int dim) {
    struct item {
        uint32_t bin, slot;
    } stack[IMP_WORLD_WIDTH * IMP_WORLD_MAX_DEPTH];
    int sp = 0;
    size_t n_out = 1;
    memset(&out[0], 0, sizeof out[0]);
    if (bin[0].count > 0) { /* one leaf: a root with one child, other slots empty */
        for (int a = 0; a < 3; ++a)
            for (int k = 0; k < IMP_WORLD_WIDTH; ++k) {
                out[0].lo[a][k] = k == 0 ? bin[0].lo[a] : INFINITY;
                out[0].hi[a][k] = k == 0 ? bin[0].hi[a] : -INFINITY;
            }
        out[0].child[0] = bin[0].index;
        out[0].count[0] = (uint8_t)bin[0].count;
        out[0].n = 1;
        return n_out;
    }
    stack[sp++] = (struct item){0, 0};
    while (sp > 0) {
        struct item it = stack[--sp];
        uint32_t c[IMP_WORLD_WIDTH] = {bin[it.bin].index, bin[it.bin].index + 1};
        int nc = 2;
        while (nc < IMP_WORLD_WIDTH) {
            int pick = -1;
            double best = -1.0;
            for (int k = 0; k < nc; ++k) {
                double cost = bin[c[k]].count == 0 ? bnode_cost(&bin[c[k]], dim) : -1.0;
                if (bin[c[k]].count == 0 && cost > best) best = cost, pick = k;
            }
            if (pick < 0) break;
            uint32_t first = bin[c[pick]].index;
            memmove(&c[pick + 2], &c[pick + 1], (size_t)(nc - pick - 1) * sizeof c[0]);
            c[pick] = first;
            c[pick + 1] = first + 1;
            ++nc;
        }
        world_node *node = &out[it.slot];
        memset(node, 0, sizeof *node);
        node->n = (uint32_t)nc;
        for (int k = 0; k < IMP_WORLD_WIDTH; ++k)
            for (int a = 0; a < 3; ++a) { /* empty slots: boxes no test meets */
                node->lo[a][k] = k < nc ? bin[c[k]].lo[a] : INFINITY;
                node->hi[a][k] = k < nc ? bin[c[k]].hi[a] : -INFINITY;
            }
        for (int k = 0; k < nc; ++k) {
            const bnode *b = &bin[c[k]];
            if (b->count > 0) {
                node->child[k] = b->index;
                node->count[k] = (uint8_t)b->count;
            } else {
                node->child[k] = (uint32_t)n_out++;
                node->count[k] = 0;
            }
        }
        for (int k = nc - 1; k >= 0; --k)
            if (node->count[k] == 0) {
                assert(sp < IMP_WORLD_WIDTH * IMP_WORLD_MAX_DEPTH);
                stack[sp++] = (struct item){c[k], node->child[k]};
            }
    }
    return n_out;
}

/* prims[i] = old prims[perm[i]] for every i, in place; perm is used up. */
static void permute(world_prim *prims, uint32_t *perm, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        if (perm[i] == UINT32_MAX) continue;
        world_prim tmp = prims[i];
        size_t j = i;
        for (;;) {
            size_t k = perm[j];
            perm[j] = UINT32_MAX;
            if (k == i) {
                prims[j] = tmp;
                break;
            }
            prims[j] = prims[k];
            j = k;
        }
    }
}

imp_world_status world_bvh_build(imp_world *w, const imp_stop *stop) {
    w->n_nodes = 0;
    w->nodes = NULL;
    if (w->n_bvh == 0) return IMP_WORLD_OK;
    size_t n = w->n_bvh;
    bref *refs = malloc(n * sizeof *refs);
    bnode *bin = malloc((2 * n + 2) * sizeof *bin); /* root, a gap, at most n - 1 pairs */
    if (!refs || !bin) {
        free(refs);
        free(bin);
        return IMP_WORLD_NOMEM;
    }
    for (size_t i = 0; i < n; ++i) {
        imp_vec3 lo, hi;
        world_prim_bounds(w, &w->prims[i], &lo, &hi);
        bref *r = &refs[i];
        r->lo[0] = down(lo.x), r->lo[1] = down(lo.y), r->lo[2] = down(lo.z);
        r->hi[0] = up(hi.x), r->hi[1] = up(hi.y), r->hi[2] = up(hi.z);
        r->prim = (uint32_t)i;
    }
    builder b = {w, refs, bin, 0, {stop, 0}, 0};
    build_nodes(&b);
    if (b.stopped) {
        free(refs);
        free(bin);
        return IMP_WORLD_BUILD_STOPPED;
    }
    /* the permutation, in the references' own memory */
    uint32_t *perm = (uint32_t *)refs;
    for (size_t i = 0; i < n; ++i)
        perm[i] = refs[i].prim;
    permute(w->prims, perm, n);
    free(refs);
    world_node *nodes = alloc_nodes(b.n_nodes / 2 + 1);
    if (!nodes) {
        free(bin);
        return IMP_WORLD_NOMEM;
    }
    w->n_nodes = collapse(bin, nodes, w->dim);
    free(bin);
    w->nodes = nodes;
    world_node *fit = alloc_nodes(w->n_nodes); /* realloc would not keep the alignment */
    if (fit) {
        memcpy(fit, w->nodes, w->n_nodes * sizeof *fit);
        free(w->nodes);
        w->nodes = fit;
    }
    return IMP_WORLD_OK;
}

int world_bvh_walk(const imp_world *w, const world_walk *walk) {
    if (w->n_nodes == 0) return 0;
    struct item {
        uint32_t node, k;
    } stack[IMP_WORLD_WIDTH * IMP_WORLD_MAX_DEPTH];
    int sp = 0;
    uint32_t at = 0;
    for (;;) {
        const world_node *n = &w->nodes[at];
        int in[IMP_WORLD_WIDTH], m = 0;
        double key[IMP_WORLD_WIDTH];
        for (int k = 0; k < (int)n->n; ++k) {
            double lo[3], hi[3];
            world_child_box(n, k, lo, hi);
            if (!walk->enter(walk->ctx, lo, hi)) continue;
            double x = walk->order ? walk->order(walk->ctx, lo, hi) : (double)k;
            int j = m++; /* insertion by key, ties in stored order */
            while (j > 0 && key[j - 1] > x) {
                in[j] = in[j - 1];
                key[j] = key[j - 1];
                --j;
            }
            in[j] = k;
            key[j] = x;
        }
        /* the first is taken at once, the others pushed last first; all asked for now */
        for (int j = 0; j < m; ++j)
            world_prefetch_child(w, n->child[in[j]], n->count[in[j]]);
        for (int j = m - 1; j >= 1; --j)
            stack[sp++] = (struct item){at, (uint32_t)in[j]};
        int have = m > 0;
        struct item next = {at, have ? (uint32_t)in[0] : 0};
        for (;;) {
            if (!have) {
                do { /* a bound that shrank since the push may now exclude the child */
                    if (sp == 0) return 0;
                    next = stack[--sp];
                    double lo[3], hi[3];
                    world_child_box(&w->nodes[next.node], (int)next.k, lo, hi);
                    have = walk->enter(walk->ctx, lo, hi);
                } while (!have);
            }
            const world_node *p = &w->nodes[next.node];
            if (p->count[next.k] == 0) {
                at = p->child[next.k];
                break;
            }
            int rc = walk->leaf(walk->ctx, p->child[next.k], p->count[next.k]);
            if (rc != 0) return rc;
            have = 0;
        }
    }
}

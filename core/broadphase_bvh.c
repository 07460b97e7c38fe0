/*
 * broadphase_bvh.c - bounding volume hierarchy.
 *
 * DESIGN
 * What: the overlapping box pairs of a scene from a tree of boxes.
 *
 * How: a binary BVH is built top-down over copies of the boxes, splitting
 * each node with the binned surface area heuristic (Wald, "On fast
 * construction of SAH-based bounding volume hierarchies", 2007: centroids
 * binned on the axis of largest centroid spread, every bin boundary costed
 * as area(left) * count(left) + area(right) * count(right); perimeter in
 * 2D). The partition reorders the box copies, so every node owns a range
 * [start, end) of positions and its leaves' boxes lie contiguous in memory.
 * A subtree over k boxes owns the 2k - 1 slots from its root's (the most
 * nodes it can have): at the top, a node over k boxes at slot s has its left
 * child at s + 1 and its right child at s + 2 * (left count), independently of
 * the order subtrees are built in. That lets the build make the top of the tree
 * a level at a time, the nodes of each level in parallel, down to subtrees of
 * at most n / BVH_PAR_SUBTREES boxes, then build those in parallel, with the
 * same result as one depth-first pass (1M clustered 3D spheres: the top's
 * levels one node after another took 102 ms of a 310 ms build; a level at a
 * time, the build took 255 ms). Inside such a subtree the nodes take its slots
 * one after another in preorder (a left child still at s + 1): a tree has
 * about n / 2 nodes with leaves of up to four boxes, and with the fixed slots
 * all the way down they were spread over all 2n - 1 slots, so every page of
 * the node array was touched (1M clustered 3D spheres: 128 MB, a tenth of the
 * solve's page faults); in preorder the untouched rest of each subtree's slots
 * is never mapped, and a descent reads nodes nearer each other. The boxes are
 * copied into the tree's array over the runner, each task's bounds merged
 * after (min, max, a count and an or: the same root whatever the split).
 * Pairs come from one query per leaf against the tree, for the leaf's
 * dynamic boxes together: the leaf's box descends the nodes that overlap it
 * and still own a position > p0 (its first dynamic box's) or hold a static
 * box, and each leaf reached is tested box by box for each of them. The box
 * at position p pairs with the leaf boxes after p and the static ones
 * before it: a pair of dynamic boxes is found once, from its first
 * position, a dynamic-static pair once, from the dynamic box, and static
 * boxes (never paired with each other) issue no query at all. One descent
 * per leaf instead of one per box, and the box tests without early outs
 * (every comparison of random boxes is a coin toss for the branch
 * predictor; the candidate is written always and kept by its test's
 * result): 1M clustered 3D spheres, the broadphase alone in 478 to 540 ms
 * against 536 to 600 ms.
 *
 * Why this way: per-box queries (now per leaf) share nothing and split over
 * the runner by position; the position bound gives them most of the halving
 * that a simultaneous tree-against-itself descent gets (both were built and
 * measured, per box: within 10% of each other on every benchmark scene,
 * either way round, so the shorter one stayed), and a scene of mostly static
 * geometry costs one query per leaf holding a moving box. SAH keeps a few huge boxes in
 * their own subtrees, so sizes spanning orders of magnitude and far-apart
 * clusters cost little more than a uniform scene. Each node's bounds come
 * from its parent's bins, so a level of the build reads the boxes twice
 * (binning, partition). Depth is bounded: past BVH_SAH_MAX_DEPTH the
 * split becomes an object median (halving), so no input can overflow the
 * fixed build and query stacks.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "broadphase_impl.h"

/* Largest leaf (boxes). Leaves of 2, 4 and 8 measured within 5% of each
 * other at 100k boxes; 4 is the middle. */
#define BVH_LEAF_SIZE 4

/* SAH bins per split (count): Wald 2007 finds 16 within a few percent of
 * the full sweep. */
#define BVH_BINS 16

/* Depth after which splits are object medians (levels). SAH can peel off a
 * few boxes per level on pathological inputs (exponentially spaced
 * centres); the median then bounds the rest to log2(n) <= 32 levels. */
#define BVH_SAH_MAX_DEPTH 48

/* Bound on tree depth, and so the size of the build and query stacks:
 * BVH_SAH_MAX_DEPTH plus 32 median levels for n < 2^32, plus slack. */
#define BVH_MAX_DEPTH 96

/* Subtrees of at most this many boxes are built as separate jobs of the
 * runner (count), when the scene is at least BVH_PAR_BUILD_MIN boxes:
 * below that the top levels dominate and the jobs are too small to pay. */
#define BVH_PAR_BUILD_MIN 16384
#define BVH_PAR_SUBTREES 64

/* Query positions per chunk, at least (count). */
#define BVH_MIN_CHUNK 256

/* Boxes per task of the copy into the tree's own array (count). */
#define BVH_COPY_GRAIN 65536

typedef struct bvh_prim {
    double lo[3], hi[3];
    uint32_t id;
    uint32_t is_static;
} bvh_prim;

typedef struct bvh_node {
    double lo[3], hi[3];
    uint32_t start, end; /* positions of the boxes below */
    uint32_t right;      /* slot of the right child; 0 for a leaf (the root is slot 0) */
    uint32_t any_static;
} bvh_node;

/* Bounds of a set of boxes: the boxes' union, their centroids' (lo + hi,
 * unscaled) range, and whether any is static. */
typedef struct bvh_bounds {
    double lo[3], hi[3], clo[3], chi[3];
    uint32_t count, any_static;
} bvh_bounds;

/* A subtree to build: its boxes' positions, its slot, its depth, and the
 * bounds of its boxes (known from the parent's bins). */
typedef struct bvh_task {
    uint32_t start, end, slot, depth;
    bvh_bounds b;
} bvh_task;

typedef struct bvh {
    const imp_bp_scene *sc;
    bvh_prim *prim;
    bvh_node *node;
    uint32_t *leaf_at;  /* per position: the slot of the leaf that starts there, else UINT32_MAX */
    bvh_task *deferred; /* subtrees left for the parallel phase */
    size_t ndeferred, capdeferred;
    size_t defer_max; /* 0: build everything now */
} bvh;

static double area(const double lo[3], const double hi[3], int dim) {
    double dx = hi[0] - lo[0], dy = hi[1] - lo[1];
    if (dim == 2) return dx + dy;
    double dz = hi[2] - lo[2];
    return dx * dy + dy * dz + dz * dx;
}

static void bounds_empty(bvh_bounds *b) {
    for (int k = 0; k < 3; ++k) {
        b->lo[k] = b->clo[k] = INFINITY;
        b->hi[k] = b->chi[k] = -INFINITY;
    }
    b->count = 0;
    b->any_static = 0;
}

/* Branch-free: the comparisons of random boxes are unpredictable. */
static inline void bounds_add(bvh_bounds *b, const bvh_prim *p) {
    for (int k = 0; k < 3; ++k) {
        double c = p->lo[k] + p->hi[k];
        b->lo[k] = imp_bp_min(b->lo[k], p->lo[k]);
        b->hi[k] = imp_bp_max(b->hi[k], p->hi[k]);
        b->clo[k] = imp_bp_min(b->clo[k], c);
        b->chi[k] = imp_bp_max(b->chi[k], c);
    }
    b->count++;
    b->any_static |= p->is_static;
}

static inline void bounds_merge(bvh_bounds *b, const bvh_bounds *o) {
    if (o->count == 0) return;
    for (int k = 0; k < 3; ++k) {
        b->lo[k] = imp_bp_min(b->lo[k], o->lo[k]);
        b->hi[k] = imp_bp_max(b->hi[k], o->hi[k]);
        b->clo[k] = imp_bp_min(b->clo[k], o->clo[k]);
        b->chi[k] = imp_bp_max(b->chi[k], o->chi[k]);
    }
    b->count += o->count;
    b->any_static |= o->any_static;
}

static void bounds_of(const bvh_prim *p, uint32_t s, uint32_t e, bvh_bounds *b) {
    bounds_empty(b);
    for (uint32_t i = s; i < e; ++i)
        bounds_add(b, &p[i]);
}

static void swap_prim(bvh_prim *a, bvh_prim *b) {
    bvh_prim t = *a;
    *a = *b;
    *b = t;
}

/* Rearranges p[0..k) so that p[m] has the m-th smallest centroid on axis,
 * none before it larger and none after it smaller (Hoare's selection with
 * a median-of-three pivot). */
static void select_median(bvh_prim *p, size_t k, size_t m, int axis) {
    ptrdiff_t lo = 0, hi = (ptrdiff_t)k - 1, target = (ptrdiff_t)m;
    while (lo < hi) {
        ptrdiff_t mid = lo + (hi - lo) / 2;
        double a = p[lo].lo[axis] + p[lo].hi[axis], b = p[mid].lo[axis] + p[mid].hi[axis];
        double c = p[hi].lo[axis] + p[hi].hi[axis];
        double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        ptrdiff_t i = lo, j = hi;
        while (i <= j) {
            while (p[i].lo[axis] + p[i].hi[axis] < pivot)
                ++i;
            while (p[j].lo[axis] + p[j].hi[axis] > pivot)
                --j;
            if (i <= j) {
                swap_prim(&p[i], &p[j]);
                ++i;
                --j;
            }
        }
        /* now [lo, j] <= pivot <= [i, hi], and everything between equals pivot */
        if (target <= j)
            hi = j;
        else if (target >= i)
            lo = i;
        else
            return;
    }
}

/* Bin of centroid c; robust to a scale that over- or underflowed. */
static inline int bin_of(double c, double cmin, double scale, int nb) {
    double f = (c - cmin) * scale;
    if (!(f < nb - 1)) return nb - 1;
    return f > 0.0 ? (int)f : 0;
}

/* Is p on the left of a split whose left side is the bins below `limit` (bin_of's bin of its
 * centroid at most limit - 1: bin_of is (int)f clamped to [0, nb - 1], and f < limit with
 * limit <= nb - 1 says the same, NaN going right in both)? */
static inline bool goes_left(const bvh_prim *p, int axis, double cmin, double scale, double limit) {
    return (p->lo[axis] + p->hi[axis] - cmin) * scale < limit;
}

/* Boxes per block of partition's scans (at most 256: offsets are bytes). */
#define BVH_PART_BLOCK 64

/* Puts the boxes of [s, e) that go left before those that go right; returns the first on the
 * right. Hoare's two-sided partition, with the sides' misplaced boxes found a block at a time
 * without branches (Edelkamp and Weiss, "BlockQuicksort", 2016): which side a box of a random
 * scene goes is a coin toss, and one branch on it per box cost a misprediction every other
 * box. */
static uint32_t partition(bvh_prim *P, uint32_t s, uint32_t e, int axis, double cmin, double scale,
                          double limit) {
    unsigned char offl[BVH_PART_BLOCK], offr[BVH_PART_BLOCK];
    uint32_t l = s, r = e; /* [s, l) left, [r, e) right, [l, r) not yet placed */
    unsigned nl = 0, nr = 0, sl = 0, sr = 0;
    while (r - l > 2 * BVH_PART_BLOCK) {
        if (nl == 0) { /* the next block from the left: its boxes that go right */
            sl = 0;
            for (unsigned i = 0; i < BVH_PART_BLOCK; ++i) {
                offl[nl] = (unsigned char)i;
                nl += !goes_left(&P[l + i], axis, cmin, scale, limit);
            }
        }
        if (nr == 0) { /* and from the right: its boxes that go left */
            sr = 0;
            for (unsigned i = 0; i < BVH_PART_BLOCK; ++i) {
                offr[nr] = (unsigned char)i;
                nr += goes_left(&P[r - 1 - i], axis, cmin, scale, limit);
            }
        }
        unsigned k = nl < nr ? nl : nr;
        for (unsigned i = 0; i < k; ++i)
            swap_prim(&P[l + offl[sl + i]], &P[r - 1 - offr[sr + i]]);
        nl -= k;
        nr -= k;
        sl += k;
        sr += k;
        if (nl == 0) l += BVH_PART_BLOCK;
        if (nr == 0) r -= BVH_PART_BLOCK;
    }
    /* the rest (a block's misplaced boxes may be in it still) box by box */
    for (;;) {
        while (l < r && goes_left(&P[l], axis, cmin, scale, limit))
            ++l;
        while (l < r && !goes_left(&P[r - 1], axis, cmin, scale, limit))
            --r;
        if (l >= r) return l;
        swap_prim(&P[l++], &P[--r]);
    }
}

/* Queues a subtree for the parallel phase; false (build it now) when the
 * list cannot grow. */
static bool defer(bvh *t, const bvh_task *task) {
    if (t->ndeferred == t->capdeferred) {
        size_t cap = t->capdeferred ? 2 * t->capdeferred : 4 * BVH_PAR_SUBTREES;
        bvh_task *d = realloc(t->deferred, cap * sizeof *d);
        if (!d) return false;
        t->deferred = d;
        t->capdeferred = cap;
    }
    t->deferred[t->ndeferred++] = *task;
    return true;
}

/* Makes the node of `task` in its slot: a leaf (false), or a split into the tasks of its two
 * children (true). A node's work touches only its own positions and slots, so nodes that do
 * not contain each other may be made at the same time. */
static bool split_node(bvh *t, const bvh_task *task, bvh_task *left_task, bvh_task *right_task) {
    int dim = t->sc->dim;
    uint32_t s = task->start, e = task->end, k = e - s;
    const bvh_bounds *tb = &task->b;
    bvh_node *nd = &t->node[task->slot];
    for (int a = 0; a < 3; ++a) {
        nd->lo[a] = tb->lo[a];
        nd->hi[a] = tb->hi[a];
    }
    nd->start = s;
    nd->end = e;
    nd->any_static = tb->any_static;
    nd->right = 0;
    if (k <= BVH_LEAF_SIZE) {
        t->leaf_at[s] = task->slot;
        for (uint32_t i = s + 1; i < e; ++i)
            t->leaf_at[i] = UINT32_MAX;
        return false;
    }

    int axis = 0;
    for (int a = 1; a < dim; ++a)
        if (tb->chi[a] - tb->clo[a] > tb->chi[axis] - tb->clo[axis]) axis = a;
    double extent = tb->chi[axis] - tb->clo[axis];
    /* no more bins than boxes: small nodes would spend their time on empty bins */
    int nb = k < BVH_BINS ? (int)k : BVH_BINS;
    double scale = extent > 0.0 ? nb / extent : 0.0;
    bvh_bounds left, right;
    uint32_t m = 0;
    if (extent > 0.0 && isfinite(scale) && task->depth < BVH_SAH_MAX_DEPTH) {
        bvh_bounds bin[BVH_BINS];
        for (int b = 0; b < nb; ++b)
            bounds_empty(&bin[b]);
        double cmin = tb->clo[axis];
        for (uint32_t i = s; i < e; ++i) {
            const bvh_prim *p = &t->prim[i];
            bounds_add(&bin[bin_of(p->lo[axis] + p->hi[axis], cmin, scale, nb)], p);
        }
        /* Cost of splitting after bin b; the right sides swept from the top. */
        double rcost[BVH_BINS];
        bvh_bounds acc;
        bounds_empty(&acc);
        for (int b = nb - 1; b > 0; --b) {
            bounds_merge(&acc, &bin[b]);
            rcost[b - 1] = acc.count ? area(acc.lo, acc.hi, dim) * acc.count : INFINITY;
        }
        bounds_empty(&acc);
        double best = INFINITY;
        int best_bin = -1;
        for (int b = 0; b < nb - 1; ++b) {
            bounds_merge(&acc, &bin[b]);
            if (acc.count == 0 || acc.count == k) continue;
            double c = area(acc.lo, acc.hi, dim) * acc.count + rcost[b];
            if (c < best) {
                best = c;
                best_bin = b;
            }
        }
        if (best_bin >= 0) {
            m = partition(t->prim, s, e, axis, cmin, scale, best_bin + 1.0);
            bounds_empty(&left);
            bounds_empty(&right);
            for (int b = 0; b < nb; ++b)
                bounds_merge(b <= best_bin ? &left : &right, &bin[b]);
        }
    }
    if (m == 0) {
        /* No SAH split (all centroids equal, extent not representable, or
         * deep): halve, by object median when centroids differ. */
        m = s + k / 2;
        if (extent > 0.0) select_median(t->prim + s, k, k / 2, axis);
        bounds_of(t->prim, s, m, &left);
        bounds_of(t->prim, m, e, &right);
    }
    assert(m > s && m < e && left.count == m - s && right.count == e - m);
    assert(task->depth + 1 < BVH_MAX_DEPTH);
    nd->right = task->slot + 2 * (m - s);
    *right_task = (bvh_task){m, e, nd->right, task->depth + 1, right};
    *left_task = (bvh_task){s, m, task->slot + 1, task->depth + 1, left};
    return true;
}

/* Builds the subtree of `root`, depth-first with an explicit stack: the left child is built
 * next, the right one waits. Its nodes take the slots after the root's one after another, in
 * preorder (each waiting right child gets the next free slot when its turn comes, and its
 * parent's link is set then): a left child is still at its parent's slot + 1, and the
 * subtree's nodes fill the start of its 2k - 1 slots, so the pages of the unused rest are
 * never touched. */
static void build(bvh *t, const bvh_task *root) {
    struct {
        bvh_task task;
        uint32_t parent;
    } stack[BVH_MAX_DEPTH + 2];
    size_t sp = 0;
    bvh_task task = *root;
    uint32_t next = root->slot + 1;
    for (;;) {
        bvh_task left, right;
        if (split_node(t, &task, &left, &right)) {
            assert(left.slot == next);
            ++next;
            stack[sp].task = right;
            stack[sp++].parent = task.slot;
            task = left;
            continue;
        }
        if (sp == 0) return;
        --sp;
        task = stack[sp].task;
        task.slot = next++;
        t->node[stack[sp].parent].right = task.slot;
    }
}

/* One level of the top of the tree: its nodes, each one's two children (when it splits) and
 * whether it did. */
typedef struct top_level {
    bvh *t;
    const bvh_task *task;
    bvh_task *child; /* 2 per task */
    bool *split;
} top_level;

static void split_range(void *ctx, size_t begin, size_t end) {
    const top_level *L = ctx;
    for (size_t i = begin; i < end; ++i)
        L->split[i] = split_node(L->t, &L->task[i], &L->child[2 * i], &L->child[2 * i + 1]);
}

/* The top of the tree, a level at a time, the nodes of a level at the same time over the
 * runner, down to subtrees of at most defer_max boxes, which are left in t->deferred (one
 * that the list cannot take is built at once). -1 when out of memory. The tree is the one
 * build makes: each node's split depends on its own boxes alone. */
static int build_top(bvh *t, const bvh_task *root) {
    bvh_task *task = malloc(sizeof *task);
    if (!task) return -1;
    task[0] = *root;
    size_t n = 1;
    while (n > 0) {
        /* subtrees small enough wait for the parallel phase (never the root) */
        size_t kept = 0;
        for (size_t i = 0; i < n; ++i) {
            if (task[i].end - task[i].start <= t->defer_max && task[i].slot != 0) {
                if (!defer(t, &task[i])) build(t, &task[i]);
            } else {
                task[kept++] = task[i];
            }
        }
        bvh_task *child = malloc((2 * kept + 1) * sizeof *child);
        bool *split = malloc(kept + 1);
        if (!child || !split) {
            free(task);
            free(child);
            free(split);
            return -1;
        }
        top_level L = {t, task, child, split};
        imp_parallel_for(t->sc->par, kept, 1, split_range, &L);
        n = 0;
        for (size_t i = 0; i < kept; ++i)
            if (split[i]) {
                child[n++] = child[2 * i];
                child[n++] = child[2 * i + 1];
            }
        free(task);
        free(split);
        task = child;
    }
    free(task);
    return 0;
}

static void build_deferred(void *ctx, size_t begin, size_t end) {
    bvh *t = ctx;
    for (size_t i = begin; i < end; ++i)
        build(t, &t->deferred[i]);
}

/* The copy of boxes [begin, end) into the tree's array, and their bounds into the part of
 * their task (the parts are merged in order: min, max, a count and an or, so the root's
 * bounds do not depend on how the range was split). */
typedef struct copy_job {
    bvh *t;
    bvh_bounds *part; /* per BVH_COPY_GRAIN boxes */
} copy_job;

static void copy_range(void *ctx, size_t begin, size_t end) {
    const copy_job *j = ctx;
    const imp_bp_scene *sc = j->t->sc;
    bvh_bounds *b = &j->part[begin / BVH_COPY_GRAIN];
    imp_bp_prefault(j->t->prim + begin, (end - begin) * sizeof *j->t->prim);
    for (size_t i = begin; i < end; ++i) {
        bvh_prim *p = &j->t->prim[i];
        imp_bp_box_arrays(sc, i, p->lo, p->hi);
        p->id = (uint32_t)i;
        p->is_static = imp_bp_is_static(sc, i);
        bounds_add(b, p);
    }
}

/* Queries from the leaves that start at positions [begin, end): one descent per leaf, with
 * its box, for all its dynamic boxes at once; each leaf reached is then tested box by box
 * for each of them. The vector's count and array are kept in locals, written back when it
 * grows and at the end: a key is a uint64_t, the count a size_t, so the compiler had to
 * assume that each key written might change the count, and went through memory for it
 * at every box tested (1M clustered 3D boxes: the broadphase in 398 to 436 ms without, 432 to 506
 * with). */
static void query_chunk(void *ctx, imp_bp_vec *out, size_t begin, size_t end) {
    const bvh *t = ctx;
    const bvh_node *node = t->node;
    const bvh_prim *prim = t->prim;
    uint32_t stack[BVH_MAX_DEPTH + 2];
    uint64_t *key = out->key;
    size_t n = out->n, cap = out->cap;
    const unsigned shift = out->shift;
    for (size_t s = begin; s < end; ++s) {
        if (t->leaf_at[s] == UINT32_MAX) continue;
        const bvh_node *L = &node[t->leaf_at[s]];
        size_t p0 = L->start;
        while (p0 < L->end && prim[p0].is_static)
            ++p0;
        if (p0 == L->end) continue; /* static boxes issue no query */
        size_t sp = 0;
        uint32_t ni = 0;
        for (;;) {
            const bvh_node *nd = &node[ni];
            /* the tests combined without early outs, so one branch decides (random boxes make
             * each comparison a coin toss) */
            if (((nd->end > p0 + 1) | (nd->any_static != 0)) & (nd->lo[0] <= L->hi[0]) &
                (L->lo[0] <= nd->hi[0]) & (nd->lo[1] <= L->hi[1]) & (L->lo[1] <= nd->hi[1]) &
                (nd->lo[2] <= L->hi[2]) & (L->lo[2] <= nd->hi[2])) {
                if (nd->right) {
                    stack[sp++] = nd->right;
                    ni = ni + 1;
                    continue;
                }
                for (size_t p = p0; p < L->end; ++p) {
                    const bvh_prim *P = &prim[p];
                    if (P->is_static) continue;
                    const double lx = P->lo[0], ly = P->lo[1], lz = P->lo[2];
                    const double hx = P->hi[0], hy = P->hi[1], hz = P->hi[2];
                    for (size_t q = nd->start; q < nd->end; ++q) {
                        const bvh_prim *Q = &prim[q];
                        /* every pair is written, and kept only when it counts */
                        if (n == cap) {
                            out->n = n;
                            if (!imp_bp_vec_grow(out)) return;
                            key = out->key;
                            cap = out->cap;
                        }
                        uint32_t a = P->id, b = Q->id;
                        key[n] = imp_bp_key(a < b ? a : b, a < b ? b : a, shift);
                        n += (size_t)(((q > p) | (Q->is_static != 0)) & (Q->lo[0] <= hx) &
                                      (lx <= Q->hi[0]) & (Q->lo[1] <= hy) & (ly <= Q->hi[1]) &
                                      (Q->lo[2] <= hz) & (lz <= Q->hi[2]));
                    }
                }
            }
            if (sp == 0) break;
            ni = stack[--sp];
        }
    }
    out->n = n;
}

int imp_bp_bvh(const imp_bp_scene *sc, imp_bp_sink *sink) {
    size_t n = sc->n;
    if (n > UINT32_MAX / 2)
        return -1; /* node slots are 32-bit; such a tree would need > 256 GiB anyway */
    bvh t = {sc,
             malloc(n * sizeof *t.prim),
             malloc((2 * n - 1) * sizeof *t.node),
             malloc(n * sizeof *t.leaf_at),
             NULL,
             0,
             0,
             0};
    size_t nparts = n / BVH_COPY_GRAIN + 1;
    copy_job cj = {&t, malloc(nparts * sizeof *cj.part)};
    int rc = -1;
    if (!t.prim || !t.node || !t.leaf_at || !cj.part) goto done;
    bvh_task root = {.start = 0, .end = (uint32_t)n, .slot = 0, .depth = 0};
    bounds_empty(&root.b);
    for (size_t c = 0; c < nparts; ++c)
        bounds_empty(&cj.part[c]);
    imp_parallel_for(sc->par, n, BVH_COPY_GRAIN, copy_range, &cj);
    for (size_t c = 0; c < nparts; ++c)
        bounds_merge(&root.b, &cj.part[c]);
    if (n >= BVH_PAR_BUILD_MIN) {
        /* Usually about 2 * BVH_PAR_SUBTREES subtrees; more (smaller) when
         * SAH peels off a few boxes per level. */
        t.defer_max = n / BVH_PAR_SUBTREES;
        if (build_top(&t, &root) != 0) goto done;
        imp_parallel_for(sc->par, t.ndeferred, 1, build_deferred, &t);
    } else {
        build(&t, &root);
    }
    rc = imp_bp_run(sink, sc->par, n, BVH_MIN_CHUNK, query_chunk, &t);
done:
    free(cj.part);
    free(t.prim);
    free(t.node);
    free(t.leaf_at);
    free(t.deferred);
    return rc;
}

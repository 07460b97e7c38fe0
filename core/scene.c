/*
 * scene.c - swept bounds, broadphase, parallel narrowphase, sorted output.
 *
 * DESIGN
 * What: imp_scene_predict, the core of POST /v1/scenes/predict.
 * How: (1) swept bounds per body over [0, horizon] (over the runner): per axis the path is a
 * parabola, so its range is spanned by the end points and, when the apex
 * t* = -v/a lies inside the window, the apex; the box grows by the radius
 * and by IMP_SCENE_BOUNDS_PAD of the scene scale so that floating-point
 * rounding can never lose a pair the narrowphase would accept. (2) the
 * broadphase yields candidate pairs, unordered (the output is sorted at the
 * end, so sorting them would be work done twice), in the blocks its chunks
 * wrote (imp_broadphase_blocks: never copied into one array). (3) the pairwise
 * time of impact runs over the candidates through the caller's parallel
 * runner; each chunk of candidates keeps its own list of contacts. (4) the
 * chunks' lists are joined into the output sorted, hits by (time, a, b) and
 * overlaps by (a, b), by a radix sort of keys (join).
 * `brute` skips (1) and (2): every pair that is not two static bodies goes
 * through the narrowphase, chunked by rows, so it checks the bounds and
 * the broadphases rather than sharing them. Filters (filter.h): a pair that
 * cannot touch is dropped from the candidates as they are mapped back to
 * body indices (brute: skipped in its rows), so no kind ever solves it and
 * every kind still equals brute; candidate_pairs counts the pairs kept
 * (brute: every pair but the static ones, as before), and max_pairs bounds
 * the broadphase's list before the filters thin it.
 * Turning bodies (angular velocity w about the position): the box that
 * holds the shape in every orientation over [0, horizon]
 * (imp_shape_turning_bounds, core/shape.c) is added to the path's range. The
 * narrowphase of a pair in which a shape other than a sphere turns is
 * imp_toi_rotating (certified conservative advancement), whose contact
 * (apart by at most its rounding margin at time + tolerance, inside the
 * horizon) lies within these bounds grown by the pad.
 * Why: per-chunk lists joined in index order and a total sort make the
 * output independent of thread scheduling and of the broadphase kind: the
 * set of candidates may differ between kinds (that is their whole point),
 * but every true contact is in each set and gets the same pairwise answer.
 * Only contacts are stored, so memory follows the answer, not the
 * candidate count.
 */
#include "scene.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broadphase_impl.h"
#include "toi_rotating.h"
#include "toi_shapes.h"

/* Candidates handed to one narrowphase task: large enough to amortise the
 * scheduling, small enough to balance pairs of very different cost. */
#define NARROW_GRAIN 2048
/* Fewer contacts than this are sorted by qsort, more by join's radix sort. */
#define SORT_RADIX_MIN 64
/* Contacts per task of join's copy to their places. */
#define PLACE_GRAIN 16384
/* How far ahead (contacts) that copy asks for the contact it will copy. */
#define PLACE_AHEAD 16
/* Runs (the narrowphase tasks' lists) per task of join's keys. */
#define KEY_GRAIN 64
/* Bodies per task of the swept bounds (candidates). */
#define BOUNDS_GRAIN 16384

imp_aabb imp_swept_bounds_shape(const imp_motion *m, const imp_shape *shape, double horizon,
                                int dim, double pad) {
    return imp_swept_bounds_turning(m, shape, imp_v3(0, 0, 0), horizon, dim, pad);
}

imp_aabb imp_swept_bounds_turning(const imp_motion *m, const imp_shape *shape, imp_vec3 w,
                                  double horizon, int dim, double pad) {
    imp_aabb b = imp_swept_bounds_sphere(m, 0.0, horizon, dim, pad);
    imp_vec3 lo, hi;
    imp_shape_turning_bounds(shape, w, horizon, dim, &lo, &hi);
    b.lo = imp_add(b.lo, lo);
    b.hi = imp_add(b.hi, hi);
    if (dim == 2) b.lo.z = b.hi.z = 0.0;
    return b;
}

imp_aabb imp_swept_bounds_sphere(const imp_motion *m, double radius, double horizon, int dim,
                                 double pad) {
    imp_aabb b;
    double r = radius + pad;
    imp_path_range(m->p.x, m->v.x, m->a.x, horizon, &b.lo.x, &b.hi.x);
    imp_path_range(m->p.y, m->v.y, m->a.y, horizon, &b.lo.y, &b.hi.y);
    if (dim == 3) {
        imp_path_range(m->p.z, m->v.z, m->a.z, horizon, &b.lo.z, &b.hi.z);
    } else {
        b.lo.z = b.hi.z = 0.0;
    }
    b.lo.x -= r;
    b.lo.y -= r;
    b.hi.x += r;
    b.hi.y += r;
    if (dim == 3) {
        b.lo.z -= r;
        b.hi.z += r;
    }
    return b;
}

/* What one narrowphase chunk found: only contacts are stored, so memory
 * follows the answer, not the number of candidates. */
typedef struct contact_vec {
    imp_scene_contact *v;
    size_t n, cap;
} contact_vec;

typedef struct chunk_out {
    contact_vec hits, overlaps;
    int nomem;
    int undecided;       /* a turning pair failed UNDECIDED (its precondition broken) */
    int stopped_by;      /* the stop check said stop inside this chunk */
    size_t pairs_solved; /* through the narrowphase */
} chunk_out;

typedef struct narrow_job {
    const imp_scene_input *in;
    const imp_pair_block *block; /* candidates, the range over all blocks in order; NULL:
                                  * brute force, the range is rows a */
    const size_t *first;         /* block k's first pair in the range */
    size_t n_blocks;
    size_t grain; /* the chunk of index begin is begin / grain */
    chunk_out *chunks;
} narrow_job;

static int push(contact_vec *cv, const imp_scene_contact *c) {
    if (cv->n == cv->cap) {
        size_t cap = cv->cap ? 2 * cv->cap : 16;
        imp_scene_contact *v = realloc(cv->v, cap * sizeof *v);
        if (!v) return -1;
        cv->v = v;
        cv->cap = cap;
    }
    cv->v[cv->n++] = *c;
    return 0;
}

/* A pair's contact, if r is one, into the chunk's hits or overlaps. */
static void record(const imp_toi_result *r, uint32_t ia, uint32_t ib, chunk_out *out) {
    if (r->state != IMP_TOI_HIT && r->state != IMP_TOI_OVERLAPPING) return;
    imp_scene_contact c = {.a = ia,
                           .b = ib,
                           .time = r->time,
                           .point = r->point,
                           .normal = r->normal,
                           .depth = r->depth,
                           .tolerance = r->state == IMP_TOI_HIT ? r->tolerance : 0.0};
    if (push(r->state == IMP_TOI_HIT ? &out->hits : &out->overlaps, &c) != 0) out->nomem = 1;
}

static void solve_pair(const imp_scene_input *in, uint32_t ia, uint32_t ib, chunk_out *out) {
    const imp_scene_body *a = &in->bodies[ia], *b = &in->bodies[ib];
    imp_toi_result r;
    if (!a->shape && !b->shape) { /* two spheres: no shape formed (clearing two per pair
                                   * took a tenth of the narrowphase) */
        imp_toi_spheres_input q = {a->m, b->m, a->radius, b->radius, in->horizon};
        r = imp_toi_spheres_impact(&q);
        record(&r, ia, ib, out);
        return;
    }
    imp_shape sa = {.type = IMP_SHAPE_SPHERE, .radius = a->radius};
    imp_shape sb = {.type = IMP_SHAPE_SPHERE, .radius = b->radius};
    if (imp_shape_turns(a->shape, a->w) || imp_shape_turns(b->shape, b->w)) {
        imp_toi_rotating_input q = {a->shape ? a->shape : &sa,
                                    b->shape ? b->shape : &sb,
                                    a->m,
                                    b->m,
                                    a->w,
                                    b->w,
                                    in->dim,
                                    in->horizon,
                                    in->par ? &in->par->stop : NULL,
                                    0};
        int stopped = 0;
        r = imp_toi_rotating(&q, &stopped);
        if (stopped) {
            out->stopped_by = stopped;
            return;
        }
        if (r.state == IMP_TOI_FAILED) {
            if (r.failure == IMP_FAILURE_NOMEM)
                out->nomem = 1;
            else
                out->undecided = 1;
            return;
        }
    } else {
        r = imp_toi_shapes(a->shape ? a->shape : &sa, &a->m, b->shape ? b->shape : &sb, &b->m,
                           in->dim, in->horizon);
        if (r.state == IMP_TOI_FAILED)
            out->nomem = 1; /* the caller checked the pairs; only memory fails here */
    }
    record(&r, ia, ib, out);
}

/* Polls the caller's stop check every IMP_STOP_POLL_PAIRS pairs; 1: stop this chunk. */
static int should_stop(const narrow_job *j, chunk_out *out) {
    ++out->pairs_solved;
    if (out->stopped_by || out->undecided) return 1; /* inside a turning pair */
    if (out->pairs_solved % IMP_STOP_POLL_PAIRS != 0) return 0;
    const imp_stop *st = j->in->par ? &j->in->par->stop : NULL;
    return (out->stopped_by = imp_stop_now(st)) != 0;
}

static int may_touch(const imp_scene_input *in, uint32_t a, uint32_t b) {
    const imp_scene_body *x = &in->bodies[a], *y = &in->bodies[b];
    return (!x->is_static || !y->is_static) && imp_filter_touch(x->filter, y->filter);
}

/* How far ahead the narrowphase asks for a pair's bodies: the candidates come in the
 * broadphase's order, their bodies scattered over the scene, a cache miss each when asked
 * for only as the pair is solved (100k uniform 3D spheres: the misses were most of the
 * narrowphase). */
#define PREFETCH_PAIRS 8

static void narrow_range(void *ctx, size_t begin, size_t end) {
    const narrow_job *j = ctx;
    chunk_out *out = &j->chunks[begin / j->grain];
    const imp_stop *st = j->in->par ? &j->in->par->stop : NULL;
    if ((out->stopped_by = imp_stop_now(st)) != 0) return;
    if (j->block) {
        /* the block that holds pair `begin`: the last whose first is not after it */
        size_t lo = 0, hi = j->n_blocks;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (j->first[mid] <= begin)
                lo = mid;
            else
                hi = mid;
        }
        size_t bk = lo, k = begin - j->first[lo];
        for (size_t i = begin; i < end; ++i, ++k) {
            while (k == j->block[bk].n) /* on to the next block (none is past the range) */
                ++bk, k = 0;
            const imp_pair *p = j->block[bk].pairs;
            if (k + PREFETCH_PAIRS < j->block[bk].n) { /* both lines of the bodies ahead */
                const imp_scene_body *a = &j->in->bodies[p[k + PREFETCH_PAIRS].a],
                                     *b = &j->in->bodies[p[k + PREFETCH_PAIRS].b];
                __builtin_prefetch(a);
                __builtin_prefetch((const char *)a + 64);
                __builtin_prefetch(b);
                __builtin_prefetch((const char *)b + 64);
            }
            solve_pair(j->in, p[k].a, p[k].b, out);
            if (should_stop(j, out)) return;
        }
        return;
    }
    for (size_t a = begin; a < end; ++a)
        for (size_t b = a + 1; b < j->in->n; ++b)
            if (may_touch(j->in, (uint32_t)a, (uint32_t)b)) {
                solve_pair(j->in, (uint32_t)a, (uint32_t)b, out);
                if (should_stop(j, out)) return;
            }
}

/* Pairs brute force examines: all but those of two static bodies. */
static size_t brute_pairs(const imp_scene_input *in) {
    size_t n_static = 0;
    for (size_t i = 0; i < in->n; ++i)
        n_static += in->bodies[i].is_static != 0;
    return in->n * (in->n - (in->n > 0)) / 2 - n_static * (n_static - (n_static > 0)) / 2;
}

/* (a, b): for one a, bodies before the world's colliders, then the primitive. */
static int by_pair_world(const imp_scene_contact *p, const imp_scene_contact *q) {
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->world != q->world) return p->world ? 1 : -1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return (p->index > q->index) - (p->index < q->index);
}

static int by_time_then_pair(const void *x, const void *y) {
    const imp_scene_contact *p = x, *q = y;
    if (p->time != q->time) return p->time < q->time ? -1 : 1;
    return by_pair_world(p, q);
}

static int by_pair_then_world(const void *x, const void *y) { return by_pair_world(x, y); }

/* Largest |coordinate| body i reaches plus its extent; the scene's scale is the largest
 * over its bodies. */
static double body_scale(const imp_scene_input *in, size_t i) {
    const imp_motion *m = &in->bodies[i].m;
    double h = in->horizon;
    double reach = imp_max_abs(m->p) + imp_max_abs(m->v) * h + 0.5 * imp_max_abs(m->a) * h * h;
    const imp_shape *shape = in->bodies[i].shape;
    double extent = in->bodies[i].radius;
    if (shape && shape->type == IMP_SHAPE_HALFSPACE) {
        extent = fabs(shape->offset);
    } else if (imp_shape_turns(shape, in->bodies[i].w)) { /* any orientation: the bounding
                                                             sphere */
        extent = imp_shape_extent(shape, in->dim);
    } else if (shape) {
        imp_vec3 lo, hi;
        imp_shape_bounds(shape, in->dim, &lo, &hi);
        extent = imp_fmax(imp_max_abs(lo), imp_max_abs(hi));
    }
    return reach + extent;
}

static int is_halfspace(const imp_scene_body *b) {
    return b->shape && b->shape->type == IMP_SHAPE_HALFSPACE;
}

/* candidates' passes over the bodies, over the runner in chunks of BOUNDS_GRAIN: the scene's
 * scale (each chunk's largest), then each body's swept bounds grown by pad, in the caller's
 * order (a halfspace's are not made), and whether a chunk holds a halfspace or a filter. A
 * runner that runs the range whole writes chunk 0's only: the rest stay 0, which changes
 * neither the largest nor what was found. */
typedef struct bounds_job {
    const imp_scene_input *in;
    double pad;
    double *scale;        /* per chunk */
    unsigned char *found; /* per chunk: FOUND_HALFSPACE | FOUND_FILTER */
    imp_aabb *box;
    unsigned char *is_static;
    uint32_t *map;
} bounds_job;

enum { FOUND_HALFSPACE = 1, FOUND_FILTER = 2 };

static void scale_range(void *ctx, size_t begin, size_t end) {
    const bounds_job *j = ctx;
    double s = 0.0;
    for (size_t i = begin; i < end; ++i)
        s = imp_fmax(s, body_scale(j->in, i));
    j->scale[begin / BOUNDS_GRAIN] = s;
}

static void bounds_range(void *ctx, size_t begin, size_t end) {
    const bounds_job *j = ctx;
    const imp_scene_input *in = j->in;
    unsigned char found = 0;
    imp_bp_prefault(j->box + begin, (end - begin) * sizeof *j->box);
    for (size_t i = begin; i < end; ++i) {
        const imp_scene_body *b = &in->bodies[i];
        found |= imp_filter_is_default(b->filter) ? 0 : FOUND_FILTER;
        j->map[i] = (uint32_t)i;
        if (is_halfspace(b)) {
            found |= FOUND_HALFSPACE;
            continue;
        }
        j->box[i] =
            b->shape ? imp_swept_bounds_turning(&b->m, b->shape, b->w, in->horizon, in->dim, j->pad)
                     : imp_swept_bounds_sphere(&b->m, b->radius, in->horizon, in->dim, j->pad);
        j->is_static[i] = (unsigned char)(b->is_static != 0);
    }
    j->found[begin / BOUNDS_GRAIN] = found;
}

/* Does box b reach into the halfspace h (its lowest corner along n at most offset)? */
static int reaches(const imp_aabb *b, const imp_shape *h, double pad) {
    imp_vec3 n = h->normal;
    double low = (n.x >= 0 ? b->lo.x : b->hi.x) * n.x + (n.y >= 0 ? b->lo.y : b->hi.y) * n.y +
                 (n.z >= 0 ? b->lo.z : b->hi.z) * n.z;
    return low <= h->offset + pad;
}

/* Candidates, a < b, unordered, in blocks: the broadphase over every body but the
 * halfspaces (whose bounds are infinite), then each halfspace with every body whose swept
 * bounds reach into it (few walls: O(n) each), in a block of their own. The broadphase's
 * blocks are walked as they are, never joined into one array (1M clustered 3D spheres:
 * 14.5M pairs; the join took 80 to 100 ms and 116 MB). TOO_MANY when there are more than
 * max_pairs, NOMEM when memory ran out; *cand is empty then. */
static imp_scene_status candidates(const imp_scene_input *in, imp_broadphase_kind *kind,
                                   imp_pair_blocks *cand) {
    size_t n = in->n, n_chunks = n / BOUNDS_GRAIN + 1;
    imp_aabb *boxes = malloc((n ? n : 1) * sizeof *boxes);
    unsigned char *is_static = malloc(n ? n : 1);
    uint32_t *map = malloc((n ? n : 1) * sizeof *map);
    double *scale = calloc(n_chunks, sizeof *scale); /* 0: a chunk of a range run whole */
    unsigned char *found = calloc(n_chunks, 1);
    *cand = (imp_pair_blocks){0};
    imp_scene_status st = IMP_SCENE_NOMEM;
    if (!boxes || !is_static || !map || !scale || !found) goto done;
    /* the scale, then the bounds with the pad it gives, over the runner */
    bounds_job bj = {in, 0.0, scale, found, boxes, is_static, map};
    double s_max = 0.0;
    imp_parallel_for(in->par, n, BOUNDS_GRAIN, scale_range, &bj);
    for (size_t c = 0; c < n_chunks; ++c)
        s_max = imp_fmax(s_max, scale[c]);
    double pad = bj.pad = IMP_SCENE_BOUNDS_PAD * s_max;
    imp_parallel_for(in->par, n, BOUNDS_GRAIN, bounds_range, &bj);
    unsigned char any = 0;
    for (size_t c = 0; c < n_chunks; ++c)
        any |= found[c];
    int filtered = (any & FOUND_FILTER) != 0;
    size_t m = n, n_half = 0;
    if (any & FOUND_HALFSPACE) { /* the halfspaces out: the rest moved down, in order */
        m = 0;
        for (size_t i = 0; i < n; ++i) {
            if (is_halfspace(&in->bodies[i])) {
                ++n_half;
                continue;
            }
            boxes[m] = boxes[i];
            is_static[m] = is_static[i];
            map[m++] = (uint32_t)i;
        }
    }
    imp_broadphase_input bin = {boxes, is_static, m, in->dim, in->max_pairs, in->par, 1};
    if (*kind == IMP_BROAD_AUTO) *kind = imp_broadphase_choose(&bin);
    imp_broadphase_status bs = imp_broadphase_blocks(*kind, &bin, cand, NULL);
    if (bs != IMP_BROADPHASE_OK) {
        if (bs == IMP_BROADPHASE_TOO_MANY) st = IMP_SCENE_TOO_MANY;
        goto done;
    }
    /* map is increasing: order and a < b are kept; pairs whose filters keep them apart
     * are dropped here, so they never reach the narrowphase. With no halfspace and no
     * filter there is nothing to do (1M clustered 3D spheres: 14.5M pairs, each reading two
     * scattered bodies, 0.2 s). */
    if (n_half > 0 || filtered) {
        cand->n_pairs = 0;
        for (size_t q = 0; q < cand->n_blocks; ++q) {
            imp_pair_block *bl = &cand->block[q];
            size_t kept = 0;
            for (size_t k = 0; k < bl->n; ++k) {
                imp_pair p = {map[bl->pairs[k].a], map[bl->pairs[k].b]};
                if (!filtered || imp_filter_touch(in->bodies[p.a].filter, in->bodies[p.b].filter))
                    bl->pairs[kept++] = p;
            }
            bl->n = kept;
            cand->n_pairs += kept;
        }
    }
    if (n_half > 0) {
        imp_pair_block *blocks = realloc(cand->block, (cand->n_blocks + 1) * sizeof *blocks);
        if (!blocks) goto done;
        cand->block = blocks;
        imp_pair_block *hb = &blocks[cand->n_blocks++];
        size_t cap = n_half * m;
        *hb = (imp_pair_block){malloc((cap ? cap : 1) * sizeof *hb->pairs), 0};
        if (!hb->pairs) goto done;
        for (size_t i = 0; i < n; ++i) {
            const imp_scene_body *h = &in->bodies[i];
            if (!is_halfspace(h)) continue;
            for (size_t k = 0; k < m; ++k) {
                uint32_t x = (uint32_t)i, y = map[k];
                if (!may_touch(in, x, y) || !reaches(&boxes[k], h->shape, pad)) continue;
                hb->pairs[hb->n++] = x < y ? (imp_pair){x, y} : (imp_pair){y, x};
            }
        }
        cand->n_pairs += hb->n;
        if (cand->n_pairs > in->max_pairs) {
            st = IMP_SCENE_TOO_MANY;
            goto done;
        }
    }
    st = IMP_SCENE_OK;
done:
    if (st != IMP_SCENE_OK) imp_pair_blocks_free(cand);
    free(scale);
    free(found);
    free(boxes);
    free(is_static);
    free(map);
    return st;
}

/* Why gather failed: a turning pair's precondition (UNDECIDED) unless memory ran out. */
static imp_scene_status gather_failure(const chunk_out *chunks, size_t n_chunks) {
    for (size_t c = 0; c < n_chunks; ++c)
        if (chunks[c].undecided && !chunks[c].nomem) return IMP_SCENE_UNDECIDED;
    return IMP_SCENE_NOMEM;
}

/* How join orders the contacts. */
typedef enum join_order { JOIN_AS_IS, JOIN_BY_TIME, JOIN_BY_PAIR } join_order;

/* What join hands the runner: the runs and where each starts in the joined order, the
 * sort's keys, indices and the contacts' addresses, and the sorted array. */
typedef struct join_job {
    const contact_vec *runs;
    const size_t *first; /* run r's contacts are [first[r], first[r] + runs[r].n) */
    join_order order;
    uint64_t n_bodies; /* JOIN_BY_PAIR: a pair's key is a (n_bodies + 1) + b */
    uint64_t *key;
    uint32_t *at;
    const imp_scene_contact **from;
    imp_scene_contact *v;
} join_job;

/* Low bits of a time's key (imp_bp_double_key) that the sort does not look at: the 42 left
 * (sign, exponent and 30 bits of the fraction) tell all but a few of a scene's times apart,
 * and times they do not are put in order with the rest of the comparator's criteria
 * afterwards, as equal keys are. Four passes of the radix sort instead of six. */
#define TIME_KEY_DROP 22

/* The keys of the contacts of runs [begin, end): each contact's first criteria (the time's
 * first bits; or the first body, then the second or, for the world's, after every body,
 * as a (n_bodies + 1) + b: fewer bits, fewer passes, than a << 32 | b). */
static void key_range(void *ctx, size_t begin, size_t end) {
    const join_job *j = ctx;
    size_t lo = j->first[begin], hi = j->first[end - 1] + j->runs[end - 1].n;
    imp_bp_prefault(j->key + lo, (hi - lo) * sizeof *j->key);
    imp_bp_prefault(j->at + lo, (hi - lo) * sizeof *j->at);
    imp_bp_prefault(j->from + lo, (hi - lo) * sizeof *j->from);
    for (size_t r = begin; r < end; ++r)
        for (size_t k = 0, i = j->first[r]; k < j->runs[r].n; ++k, ++i) {
            const imp_scene_contact *c = &j->runs[r].v[k];
            j->key[i] = j->order == JOIN_BY_TIME
                            ? imp_bp_double_key(c->time) >> TIME_KEY_DROP
                            : c->a * (j->n_bodies + 1) + (c->world ? j->n_bodies : c->b);
            j->at[i] = (uint32_t)i;
            j->from[i] = c;
        }
}

/* Each contact of [begin, end) of the sorted order copied to its place. The contacts come
 * from all over the runs: each is asked for PLACE_AHEAD places early, so that the misses
 * overlap (1M clustered 3D spheres: 110 to 120 ms a join without, 88 to 96 ms with). */
static void place_range(void *ctx, size_t begin, size_t end) {
    const join_job *j = ctx;
    imp_bp_prefault(j->v + begin, (end - begin) * sizeof *j->v);
    for (size_t i = begin; i < end; ++i) {
        if (i + PLACE_AHEAD < end) {
            const char *c = (const char *)j->from[j->at[i + PLACE_AHEAD]];
            __builtin_prefetch(c);
            __builtin_prefetch(c + sizeof(imp_scene_contact) - 1);
        }
        j->v[i] = *j->from[j->at[i]];
    }
}

/* The contacts of runs[0..n_runs) (total of them) in one new array: as they come, or sorted
 * by (time, pair) or by pair; NULL when out of memory. qsort moved each 96-byte contact
 * about log2 n times, after the runs had been copied into one array (1M clustered 3D
 * spheres: 2.2M hits and 2.3M overlaps, 1.2 s of a 3.3 s solve). Here a stable radix sort
 * orders a key of each contact's first criteria with the contacts' indices (the keys are
 * made run by run over the runner), each contact is copied once, to its place, and each
 * run of equal keys is put in the comparator's order. Without the memory for that, the
 * contacts are joined and qsorted. */
static imp_scene_contact *join(const contact_vec *runs, size_t n_runs, size_t total,
                               join_order order, size_t n_bodies, const imp_parallel *par) {
    imp_scene_contact *v = malloc((total ? total : 1) * sizeof *v);
    if (!v) return NULL;
    int (*cmp)(const void *, const void *) =
        order == JOIN_BY_TIME ? by_time_then_pair : by_pair_then_world;
    join_job j = {runs, NULL, order, n_bodies, NULL, NULL, NULL, v};
    /* the keys' width: n_bodies (n_bodies + 2) is the largest pair key */
    unsigned bits = order == JOIN_BY_TIME ? 64 - TIME_KEY_DROP : 1;
    while (order == JOIN_BY_PAIR && bits < 64 && (uint64_t)n_bodies * (n_bodies + 2) >> bits)
        ++bits;
    size_t *first = NULL;
    int sorted = 0;
    if (order != JOIN_AS_IS && total >= SORT_RADIX_MIN && total <= UINT32_MAX) {
        j.key = malloc(total * sizeof *j.key);
        j.at = malloc(total * sizeof *j.at);
        j.from = malloc(total * sizeof *j.from);
        j.first = first = malloc((n_runs ? n_runs : 1) * sizeof *first);
    }
    if (j.key && j.at && j.from && first) {
        for (size_t r = 0, i = 0; r < n_runs; i += runs[r++].n)
            first[r] = i;
        imp_parallel_for(par, n_runs, KEY_GRAIN, key_range, &j);
        if (imp_bp_radix_sort(j.key, j.at, total, bits, par) == 0) {
            imp_parallel_for(par, total, PLACE_GRAIN, place_range, &j);
            for (size_t b = 0, e; b < total; b = e) {
                for (e = b + 1; e < total && j.key[e] == j.key[b]; ++e) {
                }
                if (e - b > 1) qsort(v + b, e - b, sizeof *v, cmp);
            }
            sorted = 1;
        }
    }
    free(j.key);
    free(j.at);
    free(j.from);
    free(first);
    if (sorted) return v;
    size_t i = 0;
    for (size_t r = 0; r < n_runs; ++r) {
        if (runs[r].n) memcpy(v + i, runs[r].v, runs[r].n * sizeof *v);
        i += runs[r].n;
    }
    if (order != JOIN_AS_IS) qsort(v, total, sizeof *v, cmp);
    return v;
}

/* Joins the chunks' contacts into out: hits and overlaps as they come (chunk order), or
 * sorted (hits by (time, pair), overlaps by pair); -1 on memory or a chunk UNDECIDED
 * (gather_failure says which). */
static int gather(chunk_out *chunks, size_t n_chunks, int sort, size_t n_bodies,
                  const imp_parallel *par, imp_scene_output *out) {
    size_t hits = 0, overlaps = 0;
    for (size_t c = 0; c < n_chunks; ++c) {
        if (chunks[c].nomem || chunks[c].undecided) return -1;
        hits += chunks[c].hits.n;
        overlaps += chunks[c].overlaps.n;
    }
    contact_vec *runs = calloc(n_chunks ? n_chunks : 1, sizeof *runs);
    if (!runs) return -1;
    for (size_t c = 0; c < n_chunks; ++c)
        runs[c] = chunks[c].hits;
    out->collisions = join(runs, n_chunks, hits, sort ? JOIN_BY_TIME : JOIN_AS_IS, n_bodies, par);
    for (size_t c = 0; c < n_chunks; ++c)
        runs[c] = chunks[c].overlaps;
    out->overlapping =
        join(runs, n_chunks, overlaps, sort ? JOIN_BY_PAIR : JOIN_AS_IS, n_bodies, par);
    free(runs);
    if (!out->collisions || !out->overlapping) return -1;
    out->n_collisions = hits;
    out->n_overlapping = overlaps;
    return 0;
}

/* Sorts out's contacts as gather does. -1 when out of memory (out unchanged). */
static int sort_output(imp_scene_output *out, size_t n_bodies, const imp_parallel *par) {
    contact_vec h = {out->collisions, out->n_collisions, 0};
    contact_vec o = {out->overlapping, out->n_overlapping, 0};
    imp_scene_contact *hs = join(&h, 1, h.n, JOIN_BY_TIME, n_bodies, par);
    imp_scene_contact *os = join(&o, 1, o.n, JOIN_BY_PAIR, n_bodies, par);
    if (!hs || !os) {
        free(hs);
        free(os);
        return -1;
    }
    free(out->collisions);
    free(out->overlapping);
    out->collisions = hs;
    out->overlapping = os;
    return 0;
}

static imp_scene_status fail(imp_error *err, imp_scene_status st) {
    return (imp_scene_status)imp_error_set(
        err, st,
        st == IMP_SCENE_NOMEM       ? "out of memory"
        : st == IMP_SCENE_STOPPED   ? "stopped by the caller"
        : st == IMP_SCENE_UNDECIDED ? "a body turns too far within the horizon to be placed"
                                    : "more candidate pairs than max_pairs");
}

/* The reason of the first chunk that stopped (0: none), and the pairs solved by all. */
static int chunks_stopped(const chunk_out *chunks, size_t n_chunks, size_t *solved) {
    int by = 0;
    *solved = 0;
    for (size_t c = 0; c < n_chunks; ++c) {
        *solved += chunks[c].pairs_solved;
        if (!by) by = chunks[c].stopped_by;
    }
    return by;
}

/* ---- contacts with a world ---- */

typedef struct world_job {
    const imp_scene_input *in;
    size_t grain;
    chunk_out *chunks;
} world_job;

/* Body i against the world: its first contact with each collider (by
 * imp_world_cast_cmp), from the primitives its swept bounds reach. */
static void solve_world_body(const imp_scene_input *in, uint32_t i, chunk_out *out, size_t **near,
                             size_t *cap) {
    const imp_scene_body *b = &in->bodies[i];
    if (b->is_static || (b->shape && b->shape->type == IMP_SHAPE_HALFSPACE)) return;
    imp_shape sphere = {.type = IMP_SHAPE_SPHERE, .radius = b->radius, .rot = {1, 0, 0, 0}};
    const imp_shape *shape = b->shape ? b->shape : &sphere;
    imp_world_cast cast = {shape,     b->m, in->horizon,
                           b->filter, b->w, in->par ? &in->par->stop : NULL};
    imp_world_cast_prep prep = imp_world_cast_prepare(in->world, &cast);
    imp_aabb box = imp_swept_bounds_turning(&b->m, shape, b->w, in->horizon, in->dim, prep.pad);
    size_t n = 0;
    if (imp_world_prims_in_box(in->world, box.lo, box.hi, b->filter, near, &n, cap) != 0) {
        out->nomem = 1;
        return;
    }
    size_t first = out->hits.n, first_ov = out->overlaps.n;
    const imp_stop *st = in->par ? &in->par->stop : NULL;
    for (size_t k = 0; k < n; ++k) {
        /* a fast body may sweep much of the world: poll as the pairs do */
        if (k % IMP_STOP_POLL_PAIRS == IMP_STOP_POLL_PAIRS - 1 &&
            (out->stopped_by = imp_stop_now(st)) != 0)
            return;
        imp_world_cast_result r = imp_world_cast_prim(in->world, &prep, (*near)[k]);
        if (r.state == IMP_WORLD_STOPPED) {
            out->stopped_by = r.stopped_by;
            return;
        }
        if (r.state == IMP_WORLD_FAILED) {
            /* the shapes' pairs were checked; memory fails here, or a turning body's
             * precondition (as a turning pair) */
            if (r.failure == IMP_FAILURE_NOMEM)
                out->nomem = 1;
            else
                out->undecided = 1;
            return;
        }
        if (r.state != IMP_WORLD_HIT && r.state != IMP_WORLD_OVERLAPPING) continue;
        imp_scene_contact c = {.a = i,
                               .b = r.collider,
                               .time = r.time,
                               .point = r.point,
                               .normal = imp_neg(r.normal),
                               .depth = r.depth,
                               .tolerance = r.state == IMP_WORLD_HIT ? r.tolerance : 0.0,
                               .world = 1,
                               .index = r.index,
                               .kind = r.kind};
        /* primitives come in the world's order, not by collider: keep each collider's first */
        contact_vec *cv = r.state == IMP_WORLD_HIT ? &out->hits : &out->overlaps;
        size_t j = r.state == IMP_WORLD_HIT ? first : first_ov;
        while (j < cv->n && cv->v[j].b != c.b)
            ++j;
        if (j < cv->n) {
            const imp_scene_contact *o = &cv->v[j];
            if (c.time < o->time || (c.time == o->time && c.index < o->index)) cv->v[j] = c;
        } else if (push(cv, &c) != 0) {
            out->nomem = 1;
            return;
        }
    }
    /* a collider the body overlaps at t = 0 is not also hit later */
    size_t kept = first;
    for (size_t h = first; h < out->hits.n; ++h) {
        int overlapped = 0;
        for (size_t j = first_ov; j < out->overlaps.n && !overlapped; ++j)
            overlapped = out->overlaps.v[j].b == out->hits.v[h].b;
        if (!overlapped) out->hits.v[kept++] = out->hits.v[h];
    }
    out->hits.n = kept;
}

static void world_range(void *ctx, size_t begin, size_t end) {
    const world_job *j = ctx;
    chunk_out *out = &j->chunks[begin / j->grain];
    const imp_stop *st = j->in->par ? &j->in->par->stop : NULL;
    size_t *near = NULL, cap = 0;
    for (size_t i = begin; i < end && !out->nomem && !out->undecided && !out->stopped_by; ++i) {
        if ((out->stopped_by = imp_stop_now(st)) != 0) break;
        solve_world_body(j->in, (uint32_t)i, out, &near, &cap);
        ++out->pairs_solved;
    }
    free(near);
}

/* Appends every body's contacts with in->world to out (sorted again by the caller). */
static imp_scene_status world_contacts(const imp_scene_input *in, imp_scene_output *out) {
    size_t grain = 64, n_chunks = in->n / grain + 1;
    chunk_out *chunks = calloc(n_chunks, sizeof *chunks);
    if (!chunks) return IMP_SCENE_NOMEM;
    world_job job = {in, grain, chunks};
    imp_parallel_for(in->par, in->n, grain, world_range, &job);
    size_t solved;
    int by = chunks_stopped(chunks, n_chunks, &solved);
    imp_scene_status st = by ? IMP_SCENE_STOPPED : IMP_SCENE_OK;
    imp_scene_output more = {0};
    if (!by && gather(chunks, n_chunks, 0, in->n, in->par, &more) != 0)
        st = gather_failure(chunks, n_chunks);
    if (st == IMP_SCENE_OK) {
        imp_scene_contact *c =
            realloc(out->collisions, (out->n_collisions + more.n_collisions + 1) * sizeof *c);
        if (c) out->collisions = c;
        imp_scene_contact *o =
            realloc(out->overlapping, (out->n_overlapping + more.n_overlapping + 1) * sizeof *o);
        if (o) out->overlapping = o;
        if (!c || !o) {
            st = IMP_SCENE_NOMEM;
        } else {
            memcpy(c + out->n_collisions, more.collisions, more.n_collisions * sizeof *c);
            memcpy(o + out->n_overlapping, more.overlapping, more.n_overlapping * sizeof *o);
            out->n_collisions += more.n_collisions;
            out->n_overlapping += more.n_overlapping;
        }
    }
    if (by) out->stopped_by = by;
    imp_scene_output_free(&more);
    for (size_t c = 0; c < n_chunks; ++c) {
        free(chunks[c].hits.v);
        free(chunks[c].overlaps.v);
    }
    free(chunks);
    return st;
}

imp_scene_status imp_scene_predict(const imp_scene_input *in, imp_scene_output *out,
                                   imp_error *err) {
    memset(out, 0, sizeof *out);
    imp_broadphase_kind kind = in->kind;
    imp_pair_blocks cand = {0};
    size_t *first = NULL; /* each block's first pair in the narrowphase's range */
    size_t n_pairs = 0, range, grain;
    if (kind == IMP_BROAD_BRUTE) {
        /* every pair through the narrowphase, no bounds: the reference */
        n_pairs = brute_pairs(in);
        if (n_pairs > in->max_pairs) return fail(err, IMP_SCENE_TOO_MANY);
        range = in->n;
        grain = in->n ? 1 + NARROW_GRAIN / in->n : 1; /* rows of about NARROW_GRAIN pairs */
    } else {
        imp_scene_status why = candidates(in, &kind, &cand);
        if (why == IMP_SCENE_OK && !(first = malloc((cand.n_blocks + 1) * sizeof *first))) {
            imp_pair_blocks_free(&cand);
            why = IMP_SCENE_NOMEM;
        }
        if (why != IMP_SCENE_OK) return fail(err, why);
        n_pairs = cand.n_pairs;
        for (size_t q = 0, at = 0; q < cand.n_blocks; at += cand.block[q++].n)
            first[q] = at;
        range = n_pairs;
        grain = NARROW_GRAIN;
    }

    size_t n_chunks = range / grain + 1;
    chunk_out *chunks = calloc(n_chunks, sizeof *chunks);
    imp_scene_status st = IMP_SCENE_NOMEM;
    imp_scene_output stopped = {0};
    if (chunks) {
        narrow_job job = {in, cand.block, first, cand.n_blocks, grain, chunks};
        imp_parallel_for(in->par, range, grain, narrow_range, &job);
        imp_pair_blocks_free(&cand); /* solved: their memory is the contacts' to sort */
        size_t solved;
        int by = chunks_stopped(chunks, n_chunks, &solved);
        if (by) {
            st = IMP_SCENE_STOPPED;
            stopped = (imp_scene_output){
                .candidate_pairs = n_pairs, .kind = kind, .pairs_solved = solved, .stopped_by = by};
        } else if (gather(chunks, n_chunks, !in->world, in->n, in->par, out) == 0) {
            st = IMP_SCENE_OK;
        } else {
            st = gather_failure(chunks, n_chunks);
        }
        for (size_t c = 0; c < n_chunks; ++c) {
            free(chunks[c].hits.v);
            free(chunks[c].overlaps.v);
        }
        free(chunks);
    }
    imp_pair_blocks_free(&cand);
    free(first);
    if (st != IMP_SCENE_OK) {
        imp_scene_output_free(out);
        if (st == IMP_SCENE_STOPPED) *out = stopped;
        return fail(err, st);
    }
    if (in->world) {
        imp_scene_status ws = world_contacts(in, out);
        if (ws != IMP_SCENE_OK) {
            int by = out->stopped_by;
            imp_scene_output_free(out);
            if (ws == IMP_SCENE_STOPPED)
                *out = (imp_scene_output){
                    .candidate_pairs = n_pairs, .kind = kind, .pairs_solved = 0, .stopped_by = by};
            return fail(err, ws);
        }
        /* the pairs' contacts came unsorted (gather), to be sorted once with the world's */
        if (sort_output(out, in->n, in->par) != 0) {
            imp_scene_output_free(out);
            return fail(err, IMP_SCENE_NOMEM);
        }
    }
    out->candidate_pairs = n_pairs;
    out->kind = kind;
    return IMP_SCENE_OK;
}

void imp_scene_output_free(imp_scene_output *out) {
    if (!out) return;
    free(out->collisions);
    free(out->overlapping);
    memset(out, 0, sizeof *out);
}

int imp_scene_first_per_body(imp_scene_output *out, size_t n_bodies) {
    unsigned char *seen = calloc(n_bodies ? n_bodies : 1, 1);
    if (!seen) return -1;
    size_t kept = 0;
    for (size_t k = 0; k < out->n_collisions; ++k) {
        imp_scene_contact c = out->collisions[k];
        if (c.world) {
            if (seen[c.a]) continue;
            seen[c.a] = 1;
            out->collisions[kept++] = c;
            continue;
        }
        if (seen[c.a] && seen[c.b]) continue;
        seen[c.a] = seen[c.b] = 1;
        out->collisions[kept++] = c;
    }
    out->n_collisions = kept;
    free(seen);
    return 0;
}

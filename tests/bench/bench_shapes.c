/*
 * bench_shapes.c - overlap tests and TOI solves per second by shape pair:
 * 2D 8-gon vs 8-gon, 3D box vs box (random rotations), 2D circle vs
 * 8-gon, 3D polyhedron vs polyhedron (hulls of 12 to 20 random points).
 *
 *   make bench-build && build/tests/bench/bench_shapes [pairs_per_kind]
 *
 * Each kind draws pairs_per_kind (default 4096) pairs from a fixed seed
 * (tests/bench/box2d/pairs.h; the 8-gon pairs are the ones
 * tests/bench/box2d/bench_box2d.c gives Box2D). Shapes are 1 to 3 across,
 * motions linear over the horizon [0, 1], about half hitting within it.
 *   overlap/s  imp_overlap on a static placement of each pair (centres 0.3 to
 *              1.2 (2D) or 1.0 (3D) times the sum of the bounding radii
 *              apart), with the share that overlaps;
 *   TOI/s      imp_toi_shapes on the moving pair, with the share that hits;
 *   exact      every solver here is closed form (tolerance 0): the worst gap
 *              imp_overlap finds at a hit's time, over the pair's size (sum
 *              of bounding radii), checked outside the timed loops.
 * Each rate loops over all pairs until at least MIN_SECONDS have passed;
 * a polyhedron's hull and a polygon's edge normals are made once per shape
 * (imp_shape_prepare), as the api does when it decodes one, so no call
 * builds them (before, every polyhedron overlap test built its hull: 24k/s,
 * then 87k/s on this machine). One
 * thread; the machine may be shared, so compare rows of one run rather
 * than runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/hull.h"
#include "core/overlap.h"
#include "core/shape.h"
#include "core/toi_shapes.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/box2d/pairs.h"
#include "tests/rng.h"

#define DEFAULT_PAIRS 4096
#define MIN_SECONDS 0.5
#define MAX_POLY_VERTS 20
#define SEED BENCH_PAIRS_SEED

typedef enum kind { OCTAGONS, BOXES, CIRCLE_OCTAGON, POLYHEDRA, N_KINDS } kind;

static const struct {
    const char *name;
    int dim;
} kinds[N_KINDS] = {
    {"8-gon vs 8-gon (2D)", 2},
    {"OBB vs OBB (3D)", 3},
    {"circle vs 8-gon (2D)", 2},
    {"polyhedron vs polyhedron (3D)", 3},
};

typedef struct pair {
    imp_shape a, b;
    imp_vec3 va[MAX_POLY_VERTS], vb[MAX_POLY_VERTS]; /* the polygons' or polyhedra's points */
    double ra, rb;                                   /* bounding radii about the positions */
    imp_motion ma, mb;                               /* the TOI query */
    imp_vec3 oa, ob;                                 /* the overlap query's positions */
} pair;

static imp_quat random_rotation(uint64_t *rng) {
    for (;;) {
        imp_quat q = {imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1),
                      imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1)};
        double n2 = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z;
        imp_quat u;
        /* uniform in the 4-ball, then onto the sphere: a uniform rotation */
        if (n2 > 0.01 && n2 <= 1.0 && imp_quat_normalize(q, &u) == 0) return u;
    }
}

static imp_shape polygon(imp_vec3 *v, size_t n) {
    imp_shape s = {.type = IMP_SHAPE_POLYGON, .verts = v, .n_verts = n};
    return s;
}

static double make_octagon(uint64_t *rng, imp_shape *s, imp_vec3 *buf) {
    double r = bench_octagon(rng, imp_rng_uniform(rng, 0.5, 1.5), buf);
    *s = polygon(buf, BENCH_OCTAGON_N);
    return r;
}

static double make_box(uint64_t *rng, imp_shape *s) {
    imp_vec3 h = imp_v3(imp_rng_uniform(rng, 0.2, 1.0), imp_rng_uniform(rng, 0.2, 1.0),
                        imp_rng_uniform(rng, 0.2, 1.0));
    *s = (imp_shape){.type = IMP_SHAPE_BOX, .half = h, .rot = random_rotation(rng)};
    return imp_len(h);
}

static double make_circle(uint64_t *rng, imp_shape *s) {
    *s = (imp_shape){.type = IMP_SHAPE_SPHERE, .radius = imp_rng_uniform(rng, 0.3, 1.2)};
    return s->radius;
}

/* 12 to 20 points at 0.6 to 1 times r from the centre in random
 * directions; the polyhedron is their hull (points inside it included). */
static double make_polyhedron(uint64_t *rng, imp_shape *s, imp_vec3 *buf) {
    double r = imp_rng_uniform(rng, 0.5, 1.5), rmax;
    size_t n;
    do {
        n = 12 + (size_t)(imp_rng_next(rng) % 9);
        rmax = 0;
        for (size_t i = 0; i < n; ++i) {
            double d = r * imp_rng_uniform(rng, 0.6, 1.0);
            buf[i] = imp_scale(bench_unit_dir(rng, 3), d);
            rmax = fmax(rmax, d);
        }
    } while (imp_polyhedron_check(buf, n) != 0);
    *s = (imp_shape){.type = IMP_SHAPE_POLYHEDRON, .verts = buf, .n_verts = n};
    return rmax;
}

static void make_pairs(kind k, pair *p, size_t n, uint64_t *rng) {
    int dim = kinds[k].dim;
    for (size_t i = 0; i < n; ++i) {
        pair *q = &p[i];
        switch (k) {
        case OCTAGONS: /* the pairs bench_box2d.c draws */
            bench_octagon_pair(rng, q->va, q->vb, &q->ra, &q->rb, &q->ma, &q->mb, &q->oa, &q->ob);
            q->a = polygon(q->va, BENCH_OCTAGON_N);
            q->b = polygon(q->vb, BENCH_OCTAGON_N);
            continue;
        case BOXES:
            q->ra = make_box(rng, &q->a);
            q->rb = make_box(rng, &q->b);
            break;
        case CIRCLE_OCTAGON:
            q->ra = make_circle(rng, &q->a);
            q->rb = make_octagon(rng, &q->b, q->vb);
            break;
        case POLYHEDRA:
        case N_KINDS:
            q->ra = make_polyhedron(rng, &q->a, q->va);
            q->rb = make_polyhedron(rng, &q->b, q->vb);
            break;
        }
        bench_moving_pair(rng, dim, q->ra, q->rb, &q->ma, &q->mb);
        bench_overlap_placement(rng, dim, q->ra, q->rb, &q->oa, &q->ob);
    }
}

/* Hulls and normals made once per shape, as the api does when it decodes one. */
static void prepare_pairs(pair *p, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (imp_shape_prepare(&p[i].a) != 0 || imp_shape_prepare(&p[i].b) != 0) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
}

/* What prepare_pairs made (the vertices are the pairs'). */
static void unprepare_pairs(pair *p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        imp_shape_unprepare(&p[i].a);
        imp_shape_unprepare(&p[i].b);
    }
}

typedef struct row {
    double overlap_rate, toi_rate;
    size_t overlapping, overlap_other;             /* other: unsupported or failed */
    size_t hit, none, toi_overlapping, toi_failed; /* TOI states */
    size_t inexact;                                /* results with a tolerance > 0 */
    double worst_gap;                              /* max |gap at the hit time| / (ra + rb) */
} row;

static double gap_at(const pair *q, int dim, double t) {
    imp_vec3 pa = imp_path_at(q->ma.p, q->ma.v, q->ma.a, t);
    imp_vec3 pb = imp_path_at(q->mb.p, q->mb.v, q->mb.a, t);
    imp_overlap_result o = imp_overlap(&q->a, pa, &q->b, pb, dim);
    if (o.state == IMP_OVERLAP_APART) return o.distance;
    if (o.state == IMP_OVERLAP_OVERLAPPING) return -o.depth;
    return NAN;
}

static row measure(kind k, const pair *p, size_t n) {
    int dim = kinds[k].dim;
    row r = {0};
    double sink = 0;

    /* overlap: the first pass counts the states, later ones only time */
    size_t calls = 0;
    double t0 = bench_now_s(), el;
    do {
        for (size_t i = 0; i < n; ++i) {
            imp_overlap_result o = imp_overlap(&p[i].a, p[i].oa, &p[i].b, p[i].ob, dim);
            if (calls < n) {
                r.overlapping += o.state == IMP_OVERLAP_OVERLAPPING;
                r.overlap_other +=
                    o.state != IMP_OVERLAP_OVERLAPPING && o.state != IMP_OVERLAP_APART;
            }
            sink += o.depth + o.distance;
            ++calls;
        }
        el = bench_now_s() - t0;
    } while (el < MIN_SECONDS);
    r.overlap_rate = (double)calls / el;

    /* TOI; the first pass's answers are checked afterwards */
    imp_toi_result *res = malloc(n * sizeof *res);
    if (!res) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    calls = 0;
    t0 = bench_now_s();
    do {
        for (size_t i = 0; i < n; ++i) {
            imp_toi_result t = imp_toi_shapes(&p[i].a, &p[i].ma, &p[i].b, &p[i].mb, dim, 1.0);
            if (calls < n) res[i] = t;
            sink += t.time;
            ++calls;
        }
        el = bench_now_s() - t0;
    } while (el < MIN_SECONDS);
    r.toi_rate = (double)calls / el;

    for (size_t i = 0; i < n; ++i) {
        switch (res[i].state) {
        case IMP_TOI_HIT: {
            ++r.hit;
            double g = gap_at(&p[i], dim, res[i].time) / (p[i].ra + p[i].rb);
            r.worst_gap = isnan(g) ? NAN : fmax(r.worst_gap, fabs(g));
            break;
        }
        case IMP_TOI_NONE: ++r.none; break;
        case IMP_TOI_OVERLAPPING: ++r.toi_overlapping; break;
        case IMP_TOI_FAILED: ++r.toi_failed; break;
        }
        r.inexact += res[i].tolerance > 0;
    }
    free(res);
    if (sink == 12345.678) printf(" ");
    return r;
}

int main(int argc, char **argv) {
    size_t n = DEFAULT_PAIRS;
    if (bench_count_arg(argc, argv, "pairs_per_kind", &n)) return 2;
    pair *p = malloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    printf("bench_shapes: %zu pairs per kind, seed 0x%llx, horizon 1, linear motion, "
           ">= %.1f s per rate\n\n",
           n, (unsigned long long)SEED, MIN_SECONDS);
    printf("%-30s %12s %8s %12s %7s %7s %7s %12s\n", "pair", "overlap/s", "overlap", "TOI/s", "hit",
           "none", "other", "worst gap");
    printf("%-30s %12s %8s %12s %7s %7s %7s %12s\n", "", "", "", "", "", "", "", "at hit/size");
    int bad = 0;
    for (int k = 0; k < N_KINDS; ++k) {
        uint64_t rng = SEED + (uint64_t)k * 0x9e3779b97f4a7c15ULL;
        make_pairs((kind)k, p, n, &rng);
        prepare_pairs(p, n);
        row r = measure((kind)k, p, n);
        unprepare_pairs(p, n);
        double pct = 100.0 / (double)n;
        printf("%-30s %12.4g %7.1f%% %12.4g %6.1f%% %6.1f%% %7zu %12.2g\n", kinds[k].name,
               r.overlap_rate, pct * (double)r.overlapping, r.toi_rate, pct * (double)r.hit,
               pct * (double)r.none, r.toi_overlapping + r.toi_failed + r.overlap_other,
               r.worst_gap);
        if (r.toi_failed || r.overlap_other || r.inexact || !(r.worst_gap < 1e-9)) {
            printf("  ^ unexpected: %zu TOI failed, %zu overlap unsupported/failed, %zu inexact, "
                   "worst gap %.3g\n",
                   r.toi_failed, r.overlap_other, r.inexact, r.worst_gap);
            bad = 1;
        }
    }
    printf(
        "\nother: TOI overlapping at t = 0 or failed, plus overlap tests that were unsupported or\n"
        "failed (all 0 expected). worst gap: max |distance or -depth| at a hit's time over the "
        "sum\n"
        "of the bounding radii (closed-form solvers: rounding only).\n");
    free(p);
    return bad;
}

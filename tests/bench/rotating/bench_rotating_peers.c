/*
 * bench_rotating_peers.c - impactd's certified time of impact of turning
 * bodies (core/toi_rotating.c) against the continuous collision of Box2D
 * 2.4.1, Bullet and FCL on the same pairs: rates, and the pairs each calls
 * apart although the shapes touch.
 *
 *   make bench-rotating-peers   (installs libbox2d-dev, libbullet-dev, libfcl-dev)
 *   $(BUILD)/tests/bench/rotating/bench_rotating_peers [pairs_per_kind]
 *
 * Pairs: bench_rotating.c's (tests/bench/rotating_pairs.h, same seed, same
 * order; default 2048 per kind): 8-gons (2D) and boxes (3D) 0.4 to 2
 * across, both bodies spinning slowly (0.5 to 3 rad/s) or fast (30 to 300
 * rad/s: 5 to 50 turns in the horizon of 1 s), linear motion. Every solver
 * is asked for the first contact in [0, 1].
 *
 * Motions. impactd's body turns about its position at a constant angular
 * velocity w while the position moves at a constant velocity v. The peers
 * are given exactly that motion:
 *  - Box2D: b2Sweep c0 = p, c = p + v, a0 = 0, a = w (the angle is
 *    interpolated linearly: constant w, any number of turns), tMax 1,
 *    b2TimeOfImpact (tests/bench/box2d/box2d_toi.cpp; float);
 *  - Bullet: calcTimeOfImpact takes two poses and derives constant linear
 *    and angular velocities from them, the turn being the shortest one from
 *    the first orientation to the second (at most half a turn). Here the
 *    horizon is cut into K equal steps turning each body by at most a
 *    quarter turn (K = ceil(max |w| / (pi / 2))), the poses at the step ends
 *    are impactd's, and the steps are cast in order until one hits: per
 *    step that is exactly impactd's motion (Bullet's own screw between the
 *    two poses); the rate counts every step of a pair as one query;
 *  - FCL: continuousCollide with an InterpMotion whose linear velocity v and
 *    angular velocity w (about the box centre) are set directly, so the
 *    whole horizon is one query with the exact motion (peers3d.cpp); both
 *    its conservative advancement and its default request (CCDC_NAIVE: the
 *    static test at 10 times) are run.
 *
 * Truth, decided independently of every solver's own answer: a pair
 * touches when (a) dense sampling of [0, 1] with the static overlap test
 * (imp_overlap on the shapes turned to each sample time) finds them
 * interpenetrating by more than 1e-9 of the pair's size (sum of the
 * circumradii; step min(0.02 / max|w|, 0.002 size / |v_rel|), 64 to
 * MAX_SAMPLES samples), or (b) impactd reports a HIT at `time` and the
 * static overlap test finds the shapes touching or overlapping at time +
 * tolerance (gap <= 1e-12 size). A solver MISSES a pair that touches when
 * it answers no hit; it is LATE when it hits after the first sampled
 * contact (it passed over an earlier one). Each miss is listed with the
 * deepest sampled interpenetration; "deep" misses interpenetrate by more
 * than 0.01 units (twice Box2D's b2_linearSlop, ten times Bullet's
 * stopping distance), far beyond any solver's tolerance.
 * impactd is checked the same way (misses, late hits, hits not confirmed by
 * (b) nor by (a)); the program exits 1 when impactd misses, is late, or
 * reports an unconfirmed hit.
 *
 * Rates: each solver loops over all pairs of a kind for at least
 * MIN_SECONDS; one thread; compare rows of one run.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/overlap.h"
#include "core/shape.h"
#include "core/toi_rotating.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/box2d/box2d_toi.h"
#include "tests/bench/rotating/peers3d.h"
#include "tests/bench/rotating_pairs.h"
#include "tests/rng.h"
#include "tests/shapes.h"

#define DEFAULT_PAIRS 2048
#define MIN_SECONDS 0.5
#define HORIZON 1.0
#define MAX_SAMPLES 8192
#define DEEP 0.01
#define MAX_EXAMPLES 4
#define HALF_PI 1.57079632679489661923

enum { S_IMPACTD, S_BOX2D, S_BULLET, S_FCL_CA, S_FCL_NAIVE, N_SOLVERS };
static const char *solver_names[N_SOLVERS] = {"impactd", "Box2D b2TimeOfImpact",
                                              "Bullet btContinuousConvexCollision",
                                              "FCL continuousCollide CA", "FCL naive (default)"};

typedef enum verdict { V_NONE, V_HIT, V_FAILED, V_OVERLAPPING } verdict;
static const char *verdict_names[] = {"no hit", "hit", "failed", "overlapping at 0"};

typedef struct answer {
    verdict v;
    double t;
} answer;

typedef struct truth {
    int touches;             /* (a) or (b) of the header */
    double first;            /* first sampled contact (INFINITY: none sampled) */
    double depth;            /* deepest sampled interpenetration (0: none) */
    double depth_at;         /* its time */
    int confirmed;           /* impactd's hit confirmed by (b) */
    double size;             /* sum of the circumradii */
    double ours_t, ours_tol; /* impactd's hit (ours_t < 0: none) */
    long samples;
} truth;

typedef struct tally {
    double rate;
    size_t hit, none, failed, overlapping;
    size_t miss, miss_failed, miss_deep, late, late_deep, unconfirmed;
    size_t miss_own; /* Box2D: misses its own b2Distance finds overlapping at the deepest sample */
    double worst_depth;
} tally;

/* ---- poses ------------------------------------------------------------------------------- */

/* Body k (0: a, 1: b) of pair p turned to time t: its shape relative to
 * its position (vertices into buf) and its position. */
static imp_shape posed(const rot_pair *p, int k, double t, imp_vec3 buf[16], imp_vec3 *pos) {
    const imp_shape *s0 = k ? &p->b : &p->a;
    imp_vec3 w = k ? p->wb : p->wa;
    *pos = imp_motion_at(k ? &p->mb : &p->ma, t);
    imp_shape s = *s0;
    if (s.type == IMP_SHAPE_POLYGON) {
        memcpy(buf, s0->verts, s0->n_verts * sizeof *buf);
        s.verts = buf;
    }
    imp_shape_rotate(&s, imp_quat_from_rotvec(imp_scale(w, t)));
    return s;
}

/* Signed gap at t by the static test: distance apart, or minus the depth. */
static double gap_at(const rot_pair *p, int dim, double t) {
    imp_vec3 ba[16], bb[16], pa, pb;
    imp_shape sa = posed(p, 0, t, ba, &pa), sb = posed(p, 1, t, bb, &pb);
    imp_overlap_result o = imp_overlap(&sa, pa, &sb, pb, dim);
    if (o.state == IMP_OVERLAP_APART) return o.distance;
    if (o.state == IMP_OVERLAP_OVERLAPPING) return -o.depth;
    return NAN;
}

static imp_quat quat_at(const rot_pair *p, int k, double t) {
    imp_vec3 w = k ? p->wb : p->wa;
    imp_quat q0 = (k ? &p->b : &p->a)->rot;
    return imp_quat_mul(imp_quat_from_rotvec(imp_scale(w, t)), q0);
}

static peer_pose peer_pose_at(const rot_pair *p, int k, double t) {
    imp_vec3 c = imp_motion_at(k ? &p->mb : &p->ma, t);
    imp_quat q = quat_at(p, k, t);
    peer_pose r = {{c.x, c.y, c.z}, {q.w, q.x, q.y, q.z}};
    return r;
}

/* ---- the solvers ------------------------------------------------------------------------- */

static answer run_impactd(const rot_pair *p, int dim, imp_toi_result *full) {
    imp_toi_rotating_input in = {&p->a, &p->b, p->ma, p->mb, p->wa, p->wb, dim, HORIZON, NULL, 0};
    int stopped;
    imp_toi_result r = imp_toi_rotating(&in, &stopped);
    if (full) *full = r;
    answer a = {V_NONE, HORIZON};
    if (r.state == IMP_TOI_HIT) a.v = V_HIT, a.t = r.time;
    if (r.state == IMP_TOI_OVERLAPPING) a.v = V_OVERLAPPING, a.t = 0;
    if (r.state == IMP_TOI_FAILED) a.v = V_FAILED;
    return a;
}

/* Box2D's copy of a pair: x, y pairs of the vertices, positions, velocities. */
typedef struct b2args {
    double xa[16], xb[16], pa[2], pb[2], va[2], vb[2];
} b2args;

static b2args box2d_args(const rot_pair *p) {
    b2args g = {.pa = {p->ma.p.x, p->ma.p.y},
                .pb = {p->mb.p.x, p->mb.p.y},
                .va = {p->ma.v.x, p->ma.v.y},
                .vb = {p->mb.v.x, p->mb.v.y}};
    for (size_t k = 0; k < 8; ++k) {
        g.xa[2 * k] = p->va[k].x, g.xa[2 * k + 1] = p->va[k].y;
        g.xb[2 * k] = p->vb[k].x, g.xb[2 * k + 1] = p->vb[k].y;
    }
    return g;
}

static answer run_box2d(const rot_pair *p) {
    b2args g = box2d_args(p);
    double t;
    box2d_toi_state s =
        box2d_toi_rotating(g.xa, 8, g.pa, g.va, p->wa.z, g.xb, 8, g.pb, g.vb, p->wb.z, HORIZON, &t);
    answer a = {V_NONE, t};
    if (s == BOX2D_TOI_TOUCHING) a.v = V_HIT;
    if (s == BOX2D_TOI_OVERLAPPED) a.v = V_OVERLAPPING;
    if (s == BOX2D_TOI_FAILED || s == BOX2D_TOI_UNKNOWN || s == BOX2D_TOI_BAD_INPUT) a.v = V_FAILED;
    return a;
}

/* Box2D's own b2Distance between the polygons as its sweeps place them at t. */
static double box2d_own_distance(const rot_pair *p, double t) {
    b2args g = box2d_args(p);
    return box2d_distance_at(g.xa, 8, g.pa, g.va, p->wa.z, g.xb, 8, g.pb, g.vb, p->wb.z, HORIZON,
                             t);
}

static int bullet_steps(const rot_pair *p) {
    double turn = fmax(imp_len(p->wa), imp_len(p->wb)) * HORIZON;
    int k = (int)ceil(turn / HALF_PI);
    return k < 1 ? 1 : k;
}

static answer run_bullet(const rot_pair *p) {
    int steps = bullet_steps(p);
    double ha[3] = {p->a.half.x, p->a.half.y, p->a.half.z};
    double hb[3] = {p->b.half.x, p->b.half.y, p->b.half.z};
    peer_pose a0 = peer_pose_at(p, 0, 0), b0 = peer_pose_at(p, 1, 0);
    for (int i = 0; i < steps; ++i) {
        double t0 = HORIZON * i / steps, t1 = HORIZON * (i + 1) / steps;
        peer_pose a1 = peer_pose_at(p, 0, t1), b1 = peer_pose_at(p, 1, t1);
        double f;
        peer_state s = bullet_box_toi(ha, &a0, &a1, hb, &b0, &b1, &f);
        if (s == PEER_HIT) return (answer){V_HIT, t0 + f * (t1 - t0)};
        if (s == PEER_FAILED) return (answer){V_FAILED, t0};
        a0 = a1, b0 = b1;
    }
    return (answer){V_NONE, HORIZON};
}

static answer run_fcl(const rot_pair *p, int naive) {
    double ha[3] = {p->a.half.x, p->a.half.y, p->a.half.z};
    double hb[3] = {p->b.half.x, p->b.half.y, p->b.half.z};
    peer_pose a0 = peer_pose_at(p, 0, 0), b0 = peer_pose_at(p, 1, 0);
    double da[3] = {p->ma.v.x * HORIZON, p->ma.v.y * HORIZON, p->ma.v.z * HORIZON};
    double db[3] = {p->mb.v.x * HORIZON, p->mb.v.y * HORIZON, p->mb.v.z * HORIZON};
    double ra[3] = {p->wa.x * HORIZON, p->wa.y * HORIZON, p->wa.z * HORIZON};
    double rb[3] = {p->wb.x * HORIZON, p->wb.y * HORIZON, p->wb.z * HORIZON};
    double f;
    peer_state s = fcl_box_toi(ha, &a0, da, ra, hb, &b0, db, rb, naive, &f);
    /* FCL has no overlapping state: a hit at 0 is a hit (its conservative
     * advancement also stops at 0 when the first step is below its t_err) */
    if (s == PEER_HIT) return (answer){V_HIT, f * HORIZON};
    if (s == PEER_FAILED) return (answer){V_FAILED, 0};
    return (answer){V_NONE, HORIZON};
}

static answer run(int solver, const rot_pair *p, int dim) {
    switch (solver) {
    case S_IMPACTD: return run_impactd(p, dim, NULL);
    case S_BOX2D: return run_box2d(p);
    case S_BULLET: return run_bullet(p);
    case S_FCL_CA: return run_fcl(p, 0);
    default: return run_fcl(p, 1);
    }
}

/* ---- truth ------------------------------------------------------------------------------- */

static truth judge(const rot_pair *p, int dim, const imp_toi_result *ours) {
    truth tr = {0};
    tr.size = shape_reach(&p->a, dim) + shape_reach(&p->b, dim);
    tr.first = INFINITY;
    double wmax = fmax(imp_len(p->wa), imp_len(p->wb));
    double vrel = imp_len(imp_sub(p->mb.v, p->ma.v));
    double dt = fmin(0.02 / fmax(wmax, 1e-9), 0.002 * tr.size / fmax(vrel, 1e-9));
    long n = (long)ceil(HORIZON / dt);
    if (n > MAX_SAMPLES) n = MAX_SAMPLES;
    if (n < 64) n = 64;
    tr.samples = n + 1;
    for (long i = 0; i <= n; ++i) {
        double t = HORIZON * (double)i / (double)n, g = gap_at(p, dim, t);
        if (g < -1e-9 * tr.size) {
            if (t < tr.first) tr.first = t;
            if (-g > tr.depth) tr.depth = -g, tr.depth_at = t;
        }
    }
    tr.ours_t = ours->state == IMP_TOI_HIT ? ours->time : -1.0;
    tr.ours_tol = ours->tolerance;
    if (ours->state == IMP_TOI_HIT) {
        double t = ours->time + ours->tolerance;
        tr.confirmed = t <= HORIZON && gap_at(p, dim, t) <= 1e-12 * tr.size;
    }
    tr.touches = tr.first <= HORIZON || tr.confirmed;
    return tr;
}

/* ---- one kind ---------------------------------------------------------------------------- */

typedef struct kind {
    const char *name;
    int dim;
    double lo, hi;
} kind;

static void run_kind(const kind *k, rot_pair *p, size_t n, uint64_t *rng, const int *solvers,
                     int n_solvers, answer *ans, truth *tr, tally *tl) {
    rot_pairs_make(p, n, k->dim, k->lo, k->hi, rng);
    double sink = 0;
    for (int j = 0; j < n_solvers; ++j) {
        int s = solvers[j];
        size_t calls = 0;
        double t0 = bench_now_s(), el;
        do {
            for (size_t i = 0; i < n; ++i) {
                answer a = run(s, &p[i], k->dim);
                if (calls < n) ans[j * n + i] = a;
                sink += a.t;
                ++calls;
            }
        } while ((el = bench_now_s() - t0) < MIN_SECONDS);
        memset(&tl[j], 0, sizeof tl[j]);
        tl[j].rate = (double)calls / el;
    }
    for (size_t i = 0; i < n; ++i) {
        imp_toi_result ours;
        (void)run_impactd(&p[i], k->dim, &ours);
        tr[i] = judge(&p[i], k->dim, &ours);
    }
    int shown[N_SOLVERS] = {0};
    for (int j = 0; j < n_solvers; ++j) {
        int s = solvers[j];
        for (size_t i = 0; i < n; ++i) {
            const answer *a = &ans[j * n + i];
            const truth *t = &tr[i];
            tally *c = &tl[j];
            c->hit += a->v == V_HIT;
            c->none += a->v == V_NONE;
            c->failed += a->v == V_FAILED;
            c->overlapping += a->v == V_OVERLAPPING;
            int miss = t->touches && (a->v == V_NONE || a->v == V_FAILED);
            int late = a->v == V_HIT && a->t > t->first;
            double own = NAN;
            if (s == S_IMPACTD && a->v == V_HIT && !t->confirmed && !(t->first <= HORIZON))
                ++c->unconfirmed;
            if (miss) {
                ++c->miss;
                c->miss_failed += a->v == V_FAILED;
                c->miss_deep += t->depth > DEEP;
                c->worst_depth = fmax(c->worst_depth, t->depth);
                if (s == S_BOX2D && t->depth > 0) {
                    own = box2d_own_distance(&p[i], t->depth_at);
                    c->miss_own += own == 0.0;
                }
            }
            c->late += late;
            c->late_deep += late && -gap_at(&p[i], k->dim, a->t) > DEEP;
            if ((miss || late) && shown[s] < MAX_EXAMPLES) {
                ++shown[s];
                const rot_pair *q = &p[i];
                printf("  %s, %s, pair %zu: %s", k->name, solver_names[s], i, verdict_names[a->v]);
                if (a->v == V_HIT) printf(" at t = %.6f", a->t);
                printf(";\n      first sampled contact t = %.6f, deepest %.4f at t = %.6f "
                       "(size %.3f, %ld samples)",
                       t->first, t->depth, t->depth_at, t->size, t->samples);
                if (!isnan(own)) printf(";\n      Box2D's own b2Distance there: %.6f", own);
                if (t->ours_t >= 0)
                    printf(";\n      impactd: hit at t = %.9f, tolerance %.1e, %s", t->ours_t,
                           t->ours_tol,
                           t->confirmed ? "touching at t + tolerance" : "not confirmed");
                printf("\n      a: p (%.4f, %.4f, %.4f) v (%.4f, %.4f, %.4f) w (%.3f, %.3f, "
                       "%.3f)\n      b: p (%.4f, %.4f, %.4f) v (%.4f, %.4f, %.4f) w (%.3f, "
                       "%.3f, %.3f)\n",
                       q->ma.p.x, q->ma.p.y, q->ma.p.z, q->ma.v.x, q->ma.v.y, q->ma.v.z, q->wa.x,
                       q->wa.y, q->wa.z, q->mb.p.x, q->mb.p.y, q->mb.p.z, q->mb.v.x, q->mb.v.y,
                       q->mb.v.z, q->wb.x, q->wb.y, q->wb.z);
            }
        }
    }
    if (sink == 12345.678) printf(" ");
}

int main(int argc, char **argv) {
    size_t n = DEFAULT_PAIRS;
    if (bench_count_arg(argc, argv, "pairs_per_kind", &n)) return 2;
    static const kind kinds[] = {
        {"8-gon 2D, 0.5-3 rad/s", 2, 0.5, 3},
        {"8-gon 2D, 30-300 rad/s", 2, 30, 300},
        {"box 3D, 0.5-3 rad/s", 3, 0.5, 3},
        {"box 3D, 30-300 rad/s", 3, 30, 300},
    };
    enum { N_KINDS = sizeof kinds / sizeof kinds[0] };
    static const int solvers2[] = {S_IMPACTD, S_BOX2D};
    static const int solvers3[] = {S_IMPACTD, S_BULLET, S_FCL_CA, S_FCL_NAIVE};
    rot_pair *p = malloc(n * sizeof *p);
    answer *ans = malloc(N_SOLVERS * n * sizeof *ans);
    truth *tr = malloc(n * sizeof *tr);
    if (!p || !ans || !tr) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    printf("bench_rotating_peers: %zu pairs per kind (bench_rotating's seed 0x%llx), horizon "
           "%g s, >= %.1f s per rate\n",
           n, (unsigned long long)ROT_PAIRS_SEED, HORIZON, MIN_SECONDS);
    printf("motion: constant v of the centre, constant w about it; Box2D: one b2Sweep "
           "(angle 0 to w);\nBullet: K steps of at most a quarter turn (its two-pose screw "
           "per step); FCL: InterpMotion with v, w set\n");
    printf("truth: static overlap at dense samples (depth > 1e-9 size), or impactd's hit "
           "touching at time + tolerance\n\nmisses and late hits (up to %d examples per "
           "solver and kind):\n",
           MAX_EXAMPLES);

    tally tl[N_KINDS][N_SOLVERS];
    int ns[N_KINDS];
    uint64_t rng = ROT_PAIRS_SEED;
    for (size_t k = 0; k < N_KINDS; ++k) {
        const int *sv = kinds[k].dim == 2 ? solvers2 : solvers3;
        ns[k] = kinds[k].dim == 2 ? 2 : 4;
        run_kind(&kinds[k], p, n, &rng, sv, ns[k], ans, tr, tl[k]);
        size_t touching = 0;
        for (size_t i = 0; i < n; ++i)
            touching += tr[i].touches;
        printf("  (%s: %zu of %zu pairs touch)\n", kinds[k].name, touching, n);
    }

    int bad = 0;
    printf("\n%-24s %-35s %11s %8s | %6s %6s %6s %6s | %6s %6s %6s %6s %6s %9s\n", "kind", "solver",
           "pairs/s", "vs imp", "hit", "none", "failed", "ovl@0", "MISS", "failed", "deep", "late",
           "deep", "worst");
    for (size_t k = 0; k < N_KINDS; ++k) {
        const int *sv = kinds[k].dim == 2 ? solvers2 : solvers3;
        for (int j = 0; j < ns[k]; ++j) {
            const tally *c = &tl[k][j];
            printf(
                "%-24s %-35s %11.0f %8.2f | %6zu %6zu %6zu %6zu | %6zu %6zu %6zu %6zu %6zu %9.4f\n",
                kinds[k].name, solver_names[sv[j]], c->rate, c->rate / tl[k][0].rate, c->hit,
                c->none, c->failed, c->overlapping, c->miss, c->miss_failed, c->miss_deep, c->late,
                c->late_deep, c->worst_depth);
            if (sv[j] == S_BOX2D && c->miss)
                printf("%-24s   of Box2D's misses, %zu are overlapping by Box2D's own b2Distance "
                       "at the deepest sample\n",
                       "", c->miss_own);
        }
        const tally *o = &tl[k][0];
        if (o->miss || o->late || o->unconfirmed || o->failed) {
            printf("%s: impactd failed its check: %zu misses, %zu late, %zu unconfirmed hits, %zu "
                   "failed\n",
                   kinds[k].name, o->miss, o->late, o->unconfirmed, o->failed);
            bad = 1;
        }
    }
    printf("vs imp: the rate over impactd's. MISS: the shapes touch (truth above) but the "
           "solver answered\nno hit (failed: of them, the solver gave up; deep: interpenetrating "
           "by more than %g units;\nworst: the deepest sampled interpenetration of a missed "
           "pair). late: a hit after the first\nsampled contact (deep: the shapes interpenetrate "
           "by more than %g units at the time the solver\nreports). ovl@0: overlapping at t = 0.\n",
           DEEP, DEEP);
    free(p);
    free(ans);
    free(tr);
    return bad;
}

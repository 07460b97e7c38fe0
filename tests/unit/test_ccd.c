/*
 * test_ccd.c - moving-triangle collision (core/ccd.c, core/ccd_exact.c):
 * constructed degenerate cases with known answers, the public CCD benchmark
 * (../shared/data/ccd: every query against its ground truth), random
 * translational queries against an exact linear-programming reference
 * written here (a different method: vertex enumeration on GMP rationals),
 * random queries with one moving point (their coplanarity is linear in t)
 * against a rational reference that solves for the contact's parameters
 * at the rational contact time, and random general motion on a small integer grid checked for
 * agreement of the filter with the exact path and for invariance under relabelling, translation,
 * scaling by powers of two and time reversal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <gmp.h>
#include <math.h>

#include "core/ccd.h"
#include "tests/ccd_data.h"
#include "tests/rng.h"

enum { VF = IMP_CCD_VERTEX_FACE, EE = IMP_CCD_EDGE_EDGE };

static imp_ccd_query make(int kind, double s[4][3], double e[4][3]) {
    imp_ccd_query q = {.kind = (imp_ccd_kind)kind};
    memcpy(q.start, s, sizeof q.start);
    memcpy(q.end, e, sizeof q.end);
    return q;
}

/* Both paths give the expected answer (time within the promised accuracy). */
static void expect(const imp_ccd_query *q, int hit, double time, const char *what) {
    imp_ccd_result r = imp_ccd(q), x = imp_ccd_exact(q);
    if (r.hit != hit || x.hit != hit ||
        (hit && (fabs(r.time - time) > IMP_CCD_TIME_ACCURACY ||
                 fabs(x.time - time) > IMP_CCD_TIME_ACCURACY)))
        fail_msg("%s: want hit %d time %.17g; filter %d %.17g, exact %d %.17g", what, hit, time,
                 r.hit, r.time, x.hit, x.time);
}

/* ---- constructed cases ------------------------------------------------------------------------
 */

static void test_vf_crossing(void **state) {
    (void)state;
    /* a vertex falls through the middle of a static face at t = 0.25 */
    double s[4][3] = {{0.2, 0.2, 1}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    double e[4][3] = {{0.2, 0.2, -3}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    imp_ccd_query q = make(VF, s, e);
    expect(&q, 1, 0.25, "vertex through face");
    /* the same path beside the face misses */
    s[0][0] = e[0][0] = 0.7;
    s[0][1] = e[0][1] = 0.7;
    q = make(VF, s, e);
    expect(&q, 0, 0, "vertex beside face");
    /* exactly on the hypotenuse (x + y = 1 with dyadic x, y): touches */
    s[0][0] = e[0][0] = 0.5;
    s[0][1] = e[0][1] = 0.5;
    q = make(VF, s, e);
    expect(&q, 1, 0.25, "vertex through hypotenuse");
    /* one ulp outside the edge y = 0 misses */
    s[0][0] = e[0][0] = 0.5;
    s[0][1] = e[0][1] = -0x1p-60;
    q = make(VF, s, e);
    expect(&q, 0, 0, "vertex 2^-60 outside an edge");
}

static void test_vf_touch_at_ends(void **state) {
    (void)state;
    double s[4][3] = {{0.25, 0.25, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    double e[4][3] = {{0.25, 0.25, 5}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    imp_ccd_query q = make(VF, s, e);
    expect(&q, 1, 0.0, "on the face at t = 0");
    double s2[4][3] = {{0.25, 0.25, 5}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    double e2[4][3] = {{0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    q = make(VF, s2, e2);
    expect(&q, 1, 1.0, "reaches a corner at t = 1");
    /* the face moves up to meet a static vertex at t = 1 */
    double s3[4][3] = {{0.5, 0.25, 2}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    double e3[4][3] = {{0.5, 0.25, 2}, {0, 0, 2}, {1, 0, 2}, {0, 1, 2}};
    q = make(VF, s3, e3);
    expect(&q, 1, 1.0, "face meets vertex at t = 1");
}

static void test_vf_coplanar_motion(void **state) {
    (void)state;
    /* everything in z = 0 (the cubic vanishes identically): the vertex slides into the face
     * through the edge x = 0 at t = 1/4 */
    double s[4][3] = {{-1, 0.25, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    double e[4][3] = {{3, 0.25, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    imp_ccd_query q = make(VF, s, e);
    expect(&q, 1, 0.25, "coplanar slide in");
    /* in the plane but passing above the face */
    s[0][1] = e[0][1] = 1.5;
    q = make(VF, s, e);
    expect(&q, 0, 0, "coplanar slide past");
    /* a tilted plane, the face rotating within it and the vertex inside from the start */
    double s2[4][3] = {{0.25, 0.25, 0.5}, {0, 0, 0}, {1, 0, 1}, {0, 1, 1}};
    double e2[4][3] = {{0.25, 0.25, 0.5}, {0, 0, 0}, {0, 1, 1}, {1, 0, 1}};
    q = make(VF, s2, e2);
    expect(&q, 1, 0.0, "inside a face turning in its plane");
}

static void test_vf_vertex_along_edge(void **state) {
    (void)state;
    /* the vertex moves along the line of the edge (0,0,0)-(1,0,0) and reaches it at t = 1/2 */
    double s[4][3] = {{-1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    double e[4][3] = {{1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    imp_ccd_query q = make(VF, s, e);
    expect(&q, 1, 0.5, "vertex along an edge line");
    /* along the line of the edge but stopping short */
    e[0][0] = -0.5;
    q = make(VF, s, e);
    expect(&q, 0, 0, "vertex along an edge line, short");
    /* the same path 2^-50 above the face's plane never touches */
    s[0][2] = e[0][2] = 0x1p-50;
    e[0][0] = 1;
    q = make(VF, s, e);
    expect(&q, 0, 0, "parallel to an edge just above the face");
}

static void test_vf_zero_area_face(void **state) {
    (void)state;
    /* a face collapsed to a segment on the x axis; the vertex crosses it at t = 1/2 */
    double s[4][3] = {{0.5, -1, 0}, {0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
    double e[4][3] = {{0.5, 1, 0}, {0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
    imp_ccd_query q = make(VF, s, e);
    expect(&q, 1, 0.5, "through a zero-area face");
    /* the same above the segment's plane (z = 1): misses */
    s[0][2] = e[0][2] = 1;
    q = make(VF, s, e);
    expect(&q, 0, 0, "past a zero-area face");
    /* a face collapsed to a point meeting a vertex at t = 3/4 */
    double s2[4][3] = {{0, 0, 0}, {3, 3, 3}, {3, 3, 3}, {3, 3, 3}};
    double e2[4][3] = {{4, 4, 4}, {3, 3, 3}, {3, 3, 3}, {3, 3, 3}};
    q = make(VF, s2, e2);
    expect(&q, 1, 0.75, "a vertex meets a point face");
}

static void test_ee_crossing_and_parallel(void **state) {
    (void)state;
    /* edge a along x at z = 1 falls to z = -1 across edge b along y: meet at t = 1/2 */
    double s[4][3] = {{-1, 0, 1}, {1, 0, 1}, {0, -1, 0}, {0, 1, 0}};
    double e[4][3] = {{-1, 0, -1}, {1, 0, -1}, {0, -1, 0}, {0, 1, 0}};
    imp_ccd_query q = make(EE, s, e);
    expect(&q, 1, 0.5, "edges cross");
    /* shifted so the crossing point is past b's end */
    for (int k = 2; k < 4; k++)
        s[k][1] = e[k][1] = s[k][1] + 2.5;
    q = make(EE, s, e);
    expect(&q, 0, 0, "edges pass");
    /* parallel edges in different planes never meet */
    double s2[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 1}, {1, 1, 1}};
    double e2[4][3] = {{0, 0, 0}, {1, 0, 0}, {5, 1, 1}, {6, 1, 1}};
    q = make(EE, s2, e2);
    expect(&q, 0, 0, "parallel edges apart");
    /* collinear edges sliding together along their line: touch at t = 1/4 */
    double s3[4][3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}};
    double e3[4][3] = {{0, 0, 0}, {1, 0, 0}, {-2, 0, 0}, {-1, 0, 0}};
    q = make(EE, s3, e3);
    expect(&q, 1, 0.25, "collinear edges slide together");
    /* a degenerate edge (a point) moving onto the other edge at t = 1/2 */
    double s4[4][3] = {{0.5, 0, 2}, {0.5, 0, 2}, {0, 0, 0}, {1, 0, 0}};
    double e4[4][3] = {{0.5, 0, -2}, {0.5, 0, -2}, {0, 0, 0}, {1, 0, 0}};
    q = make(EE, s4, e4);
    expect(&q, 1, 0.5, "point edge onto an edge");
}

static void test_ee_coplanar_motion(void **state) {
    (void)state;
    /* all in z = 0: a crosses b's line and meets b's end b1 = (0, 1) at t = 1/2 */
    double s[4][3] = {{-1, 2, 0}, {1, 2, 0}, {0, -1, 0}, {0, 1, 0}};
    double e[4][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}};
    imp_ccd_query q = make(EE, s, e);
    expect(&q, 1, 0.5, "coplanar edges");
    /* crossing at t = 0 already */
    double s2[4][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}};
    q = make(EE, s2, s2);
    expect(&q, 1, 0.0, "static crossing edges");
    /* touching only at t = 1 */
    double e3[4][3] = {{-1, 1, 0}, {1, 1, 0}, {0, -1, 0}, {0, 1, 0}};
    q = make(EE, s, e3);
    expect(&q, 1, 1.0, "coplanar edges touch at t = 1");
}

static void test_vf_turning_face(void **state) {
    (void)state;
    /* the face turns about its diagonal x = y (normal (1 - 2t, 2t - 1, 1)) while the vertex
     * above the diagonal falls: they are coplanar only at t = 1/2, the vertex inside */
    double s[4][3] = {{0.1, 0.1, 0.3}, {0, 0, 0}, {1, 0, -1}, {0, 1, 1}};
    double e[4][3] = {{0.1, 0.1, -0.3}, {0, 0, 0}, {1, 0, 1}, {0, 1, -1}};
    imp_ccd_query q = make(VF, s, e);
    imp_ccd_result r = imp_ccd(&q), x = imp_ccd_exact(&q);
    assert_int_equal(r.hit, x.hit);
    assert_int_equal(r.hit, 1);
    assert_true(fabs(r.time - x.time) <= IMP_CCD_TIME_ACCURACY);
    assert_true(fabs(r.time - 0.5) <= IMP_CCD_TIME_ACCURACY);
}

static void test_shared_point_and_tilted_flat_motion(void **state) {
    (void)state;
    /* a mesh's vertex against its own face: it is the face's corner at t = 0 */
    double s[4][3] = {{1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    double e[4][3] = {{1, 0, 5}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}};
    imp_ccd_query q = make(VF, s, e);
    expect(&q, 1, 0.0, "vertex at its face's corner");
    /* edges sharing an end at t = 0 only */
    double s2[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {1, 1, 1}};
    double e2[4][3] = {{0, 0, 0}, {1, 0, 0}, {3, 0, 0}, {3, 1, 1}};
    q = make(EE, s2, e2);
    expect(&q, 1, 0.0, "edges sharing an end at t = 0");
    /* everything in the plane y = 2 at t = 0 and y = -2 at t = 1 (flat along y, not at rest):
     * the vertex slides into the face through its edge x = 0 at t = 1/4 */
    double s3[4][3] = {{-1, 2, 0.25}, {0, 2, 0}, {1, 2, 0}, {0, 2, 1}};
    double e3[4][3] = {{3, -2, 0.25}, {0, -2, 0}, {1, -2, 0}, {0, -2, 1}};
    q = make(VF, s3, e3);
    expect(&q, 1, 0.25, "flat along y, vertex slides in");
    /* the same plane, two edges that turn until their ends meet at t = 1/2 */
    double s4[4][3] = {{0, 2, 0}, {2, 2, 0}, {3, 2, 1}, {3, 2, 3}};
    double e4[4][3] = {{0, -2, 0}, {2, -2, 0}, {1, -2, -1}, {1, -2, 1}};
    q = make(EE, s4, e4);
    expect(&q, 1, 0.5, "flat along y, an end reaches the other edge");
    /* and one whose lower end stops 2^-40 short of the other edge's line */
    e4[2][2] = 0x1p-40;
    e4[3][2] = 2 + 0x1p-40;
    q = make(EE, s4, e4);
    expect(&q, 0, 0, "flat along y, an end passes the other edge");
}

/* ---- the public benchmark ----------------------------------------------------------------------
 */

static void run_set(const char *name, ccd_set *set, size_t want_n, size_t want_hits) {
    size_t fp = 0, fn = 0, hits = 0, exact = 0, checked = 0;
    for (size_t i = 0; i < set->n; i++) {
        imp_ccd_result r = imp_ccd(&set->q[i]);
        hits += set->truth[i];
        exact += (size_t)r.exact;
        if (r.hit && !set->truth[i]) fp++;
        if (!r.hit && set->truth[i]) fn++;
        if (r.hit) assert_true(r.time >= 0.0 && r.time <= 1.0);
        /* the filter's times against the exact path's on a sample */
        if (r.hit && !r.exact && i % 16 == 0) {
            imp_ccd_result x = imp_ccd_exact(&set->q[i]);
            assert_int_equal(x.hit, 1);
            if (fabs(x.time - r.time) > IMP_CCD_TIME_ACCURACY)
                fail_msg("%s query %zu: filter time %.17g, exact %.17g", name, i, r.time, x.time);
            checked++;
        }
    }
    printf("%s: %zu queries (%zu colliding): %zu false positives, %zu false negatives; "
           "%zu went to the exact path; %zu filter times checked against it\n",
           name, set->n, hits, fp, fn, exact, checked);
    assert_int_equal(set->n, want_n);
    assert_int_equal(hits, want_hits);
    assert_int_equal(fp, 0);
    assert_int_equal(fn, 0);
}

static void test_benchmark_handcrafted(void **state) {
    (void)state;
    ccd_set set = {0};
    if (!ccd_data_present()) {
        printf(
            "note: %s is absent (a clone without shared/); the handcrafted benchmark is skipped\n",
            ccd_data_dir());
        skip();
    }
    if (ccd_load_handcrafted(&set))
        fail_msg("cannot read %s/handcrafted (set IMPACT_CCD_DATA)", ccd_data_dir());
    run_set("handcrafted", &set, 7279, 435);
    ccd_set_free(&set);
}

static void test_benchmark_scalable(void **state) {
    (void)state;
    ccd_set set = {0};
    if (!ccd_data_present()) {
        printf("note: %s is absent (a clone without shared/); the scalable benchmark is skipped\n",
               ccd_data_dir());
        skip();
    }
    if (ccd_load_scalable(&set))
        fail_msg("cannot read %s/scalable (set IMPACT_CCD_DATA)", ccd_data_dir());
    run_set("scalable", &set, 19638, 19187);
    ccd_set_free(&set);
}

/* ---- the LP reference for translational motion ------------------------------------------------
 */

/*
 * When each primitive translates (all its points share one velocity), contact is linear in the
 * unknowns x = (t, u, v): vertex-face p0 + t vp = a0 + t va + u (b0 - a0) + v (c0 - a0), u, v >= 0,
 * u + v <= 1; edge-edge a0 + t va + u da = b0 + t vb + v db, u, v in [0, 1]; t in [0, 1]. The
 * feasible set is a bounded polyhedron, so the earliest contact is the least t over its vertices,
 * and a vertex is where the three equations and some inequalities held as equations have rank 3.
 * Enumerating every subset of at most three inequalities, solving exactly and keeping the
 * feasible solutions is slow but has nothing in common with the cubic of the code under test.
 */
typedef struct lp {
    mpq_t a[9][4]; /* rows: coefficients of (t, u, v) and the right-hand side */
    int neq, nin;  /* equations, then inequalities g . x <= h */
} lp;

/* Solves the rows `rows` exactly; 1 with x filled when the solution is unique. */
static int lp_solve(lp *L, const int *rows, int nrows, mpq_t x[3]) {
    mpq_t m[6][4], f, tmp;
    mpq_init(f);
    mpq_init(tmp);
    for (int i = 0; i < nrows; i++)
        for (int j = 0; j < 4; j++) {
            mpq_init(m[i][j]);
            mpq_set(m[i][j], L->a[rows[i]][j]);
        }
    int rank = 0, ok = 1;
    for (int col = 0; col < 3 && ok; col++) {
        int piv = -1;
        for (int i = rank; i < nrows; i++)
            if (mpq_sgn(m[i][col]) != 0) piv = i;
        if (piv < 0) {
            ok = 0; /* rank < 3 */
            break;
        }
        for (int j = 0; j < 4; j++)
            mpq_swap(m[rank][j], m[piv][j]);
        for (int i = 0; i < nrows; i++) {
            if (i == rank || mpq_sgn(m[i][col]) == 0) continue;
            mpq_div(f, m[i][col], m[rank][col]);
            for (int j = 0; j < 4; j++) {
                mpq_mul(tmp, f, m[rank][j]);
                mpq_sub(m[i][j], m[i][j], tmp);
            }
        }
        rank++;
    }
    if (ok) /* consistency of the remaining rows */
        for (int i = 3; i < nrows; i++)
            if (mpq_sgn(m[i][3]) != 0) ok = 0;
    if (ok)
        for (int k = 0; k < 3; k++)
            mpq_div(x[k], m[k][3], m[k][k]);
    for (int i = 0; i < nrows; i++)
        for (int j = 0; j < 4; j++)
            mpq_clear(m[i][j]);
    mpq_clear(f);
    mpq_clear(tmp);
    return ok;
}

/* The least t of the LP, or -1 when it is infeasible. */
static double lp_min_t(lp *L) {
    int rows[9];
    double best = -1.0;
    mpq_t x[3], v, tmp, bestq;
    for (int k = 0; k < 3; k++)
        mpq_init(x[k]);
    mpq_init(v);
    mpq_init(tmp);
    mpq_init(bestq);
    for (unsigned mask = 0; mask < (1u << L->nin); mask++) {
        int n = 0;
        for (int i = 0; i < L->neq; i++)
            rows[n++] = i;
        for (int i = 0; i < L->nin; i++)
            if (mask & (1u << i)) rows[n++] = L->neq + i;
        if (n - L->neq > 3 || !lp_solve(L, rows, n, x)) continue;
        int feasible = 1;
        for (int i = 0; i < L->nin && feasible; i++) {
            const int r = L->neq + i;
            mpq_set_ui(v, 0, 1);
            for (int k = 0; k < 3; k++) {
                mpq_mul(tmp, L->a[r][k], x[k]);
                mpq_add(v, v, tmp);
            }
            if (mpq_cmp(v, L->a[r][3]) > 0) feasible = 0;
        }
        if (feasible && (best < 0 || mpq_cmp(x[0], bestq) < 0)) {
            mpq_set(bestq, x[0]);
            best = mpq_get_d(x[0]);
        }
    }
    for (int k = 0; k < 3; k++)
        mpq_clear(x[k]);
    mpq_clear(v);
    mpq_clear(tmp);
    mpq_clear(bestq);
    return best;
}

/* The reference for a translational query (checked: each primitive's points share a velocity). */
static double reference_translation(const imp_ccd_query *q) {
    lp L;
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 4; j++)
            mpq_init(L.a[i][j]);
    mpq_t s0, s1, e0, e1, tmp;
    mpq_inits(s0, s1, e0, e1, tmp, NULL);
    int vf = q->kind == IMP_CCD_VERTEX_FACE;
    /* unknown coefficients per coordinate: t (v_first - v_second), u, v; rhs */
    int first = 0, second = vf ? 1 : 2;
    for (int d = 0; d < 3; d++) {
        /* velocity difference: (end - start) of point `first` minus that of `second` */
        mpq_set_d(s0, q->start[first][d]);
        mpq_set_d(e0, q->end[first][d]);
        mpq_sub(e0, e0, s0);
        mpq_set_d(s1, q->start[second][d]);
        mpq_set_d(e1, q->end[second][d]);
        mpq_sub(e1, e1, s1);
        mpq_sub(L.a[d][0], e0, e1);
        if (vf) { /* t dv - u (b0 - a0) - v (c0 - a0) = a0 - p0 */
            for (int k = 0; k < 2; k++) {
                mpq_set_d(tmp, q->start[2 + k][d]);
                mpq_sub(tmp, tmp, s1);
                mpq_neg(L.a[d][1 + k], tmp);
            }
            mpq_sub(L.a[d][3], s1, s0);
        } else { /* t dv + u (a1 - a0) - v (b1 - b0) = b0 - a0 */
            mpq_set_d(tmp, q->start[1][d]);
            mpq_sub(L.a[d][1], tmp, s0);
            mpq_set_d(tmp, q->start[3][d]);
            mpq_sub(tmp, tmp, s1);
            mpq_neg(L.a[d][2], tmp);
            mpq_sub(L.a[d][3], s1, s0);
        }
    }
    L.neq = 3;
    /* inequalities: -t <= 0, t <= 1, -u <= 0, -v <= 0, then u + v <= 1 (vf) or u <= 1, v <= 1 */
    int r = 3;
    mpq_set_si(L.a[r][0], -1, 1), r++;
    mpq_set_si(L.a[r][0], 1, 1), mpq_set_si(L.a[r][3], 1, 1), r++;
    mpq_set_si(L.a[r][1], -1, 1), r++;
    mpq_set_si(L.a[r][2], -1, 1), r++;
    if (vf) {
        mpq_set_si(L.a[r][1], 1, 1), mpq_set_si(L.a[r][2], 1, 1), mpq_set_si(L.a[r][3], 1, 1), r++;
    } else {
        mpq_set_si(L.a[r][1], 1, 1), mpq_set_si(L.a[r][3], 1, 1), r++;
        mpq_set_si(L.a[r][2], 1, 1), mpq_set_si(L.a[r][3], 1, 1), r++;
    }
    L.nin = r - 3;
    double t = lp_min_t(&L);
    mpq_clears(s0, s1, e0, e1, tmp, NULL);
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 4; j++)
            mpq_clear(L.a[i][j]);
    return t;
}

/* A small integer in [-k, k] (a grid full of coincidences, parallels and coplanarities). */
static double grid(uint64_t *s, int k) {
    return (double)((int)(imp_rng_next(s) % (uint64_t)(2 * k + 1)) - k);
}

static void random_translation(uint64_t *s, imp_ccd_query *q) {
    q->kind = (imp_rng_next(s) & 1) ? IMP_CCD_EDGE_EDGE : IMP_CCD_VERTEX_FACE;
    int flat = imp_rng_next(s) % 4 == 0; /* everything in z = 0: the cubic vanishes */
    double vel[2][3];
    for (int g = 0; g < 2; g++)
        for (int d = 0; d < 3; d++)
            vel[g][d] = flat && d == 2 ? 0 : grid(s, 4);
    double scale = ldexp(1.0, (int)(imp_rng_next(s) % 7) - 3);
    for (int k = 0; k < 4; k++) {
        int g = q->kind == IMP_CCD_VERTEX_FACE ? k > 0 : k > 1;
        for (int d = 0; d < 3; d++) {
            q->start[k][d] = flat && d == 2 ? 0 : grid(s, 2) * scale;
            q->end[k][d] = q->start[k][d] + vel[g][d] * scale;
        }
    }
}

static void test_random_translation_against_lp(void **state) {
    (void)state;
    const uint64_t seed = 0x7a11c0ffeeULL;
    uint64_t s = seed;
    printf("random translational queries: seed %#llx\n", (unsigned long long)seed);
    int hits = 0, n = 3000;
    for (int i = 0; i < n; i++) {
        imp_ccd_query q;
        random_translation(&s, &q);
        double want = reference_translation(&q);
        imp_ccd_result r = imp_ccd(&q), x = imp_ccd_exact(&q);
        int ok = r.hit == (want >= 0) && x.hit == r.hit &&
                 (want < 0 || (fabs(r.time - want) <= IMP_CCD_TIME_ACCURACY &&
                               fabs(x.time - want) <= IMP_CCD_TIME_ACCURACY));
        if (!ok)
            fail_msg("seed %#llx case %d (%s): reference %.17g; filter %d %.17g; exact %d %.17g",
                     (unsigned long long)seed, i, q.kind == IMP_CCD_VERTEX_FACE ? "vf" : "ee", want,
                     r.hit, r.time, x.hit, x.time);
        hits += want >= 0;
    }
    printf("  %d queries, %d colliding, all as the reference says\n", n, hits);
    assert_true(hits > n / 10 && hits < n - n / 10);
}

/* ---- one moving point: a rational contact time ------------------------------------------------
 */

/*
 * When only one of the four points moves, the coplanarity determinant is affine in that point and
 * so linear in t: a query that is not coplanar throughout can only touch at t* = f0 / (f0 - f1),
 * a rational. The reference decides the touch there on exact rational positions by solving for
 * the contact's parameters (Cramer's rule in the coordinate plane where the normal is largest):
 * the vertex's barycentric coordinates in the face, or the two edges' parameters, each in range.
 * Queries coplanar throughout, or with a zero normal at t* (zero-area face, parallel edges), are
 * skipped here (the constructed cases and the LP reference cover them).
 */
enum { REF_MISS = -1, REF_SKIP = -2 };

static void q_det(mpq_t out, mpq_t v[3][3], mpq_t tmp) {
    mpq_set_ui(out, 0, 1);
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3, k = (i + 2) % 3;
        mpq_mul(tmp, v[0][j], v[1][k]);
        mpq_t t2;
        mpq_init(t2);
        mpq_mul(t2, v[0][k], v[1][j]);
        mpq_sub(tmp, tmp, t2);
        mpq_mul(tmp, tmp, v[2][i]);
        mpq_add(out, out, tmp);
        mpq_clear(t2);
    }
}

/* positions of q at the rational t into pos[4][3] */
static void q_positions(const imp_ccd_query *q, const mpq_t t, mpq_t pos[4][3], mpq_t tmp) {
    for (int k = 0; k < 4; k++)
        for (int d = 0; d < 3; d++) {
            mpq_set_d(pos[k][d], q->start[k][d]);
            mpq_set_d(tmp, q->end[k][d]);
            mpq_sub(tmp, tmp, pos[k][d]);
            mpq_mul(tmp, tmp, t);
            mpq_add(pos[k][d], pos[k][d], tmp);
        }
}

/* a coplanarity determinant of q's points pos (any form that vanishes exactly at coplanarity) */
static void q_coplanarity(const imp_ccd_query *q, mpq_t pos[4][3], mpq_t out, mpq_t tmp) {
    static const int VFP[3][2] = {{2, 1}, {3, 1}, {0, 1}}, EEP[3][2] = {{1, 0}, {3, 2}, {2, 0}};
    const int(*pr)[2] = q->kind == IMP_CCD_VERTEX_FACE ? VFP : EEP;
    mpq_t v[3][3];
    for (int r = 0; r < 3; r++)
        for (int d = 0; d < 3; d++) {
            mpq_init(v[r][d]);
            mpq_sub(v[r][d], pos[pr[r][0]][d], pos[pr[r][1]][d]);
        }
    q_det(out, v, tmp);
    for (int r = 0; r < 3; r++)
        for (int d = 0; d < 3; d++)
            mpq_clear(v[r][d]);
}

static double reference_one_mover(const imp_ccd_query *q) {
    mpq_t pos[4][3], f0, f1, t, tmp, det, x, y;
    for (int k = 0; k < 4; k++)
        for (int d = 0; d < 3; d++)
            mpq_init(pos[k][d]);
    mpq_inits(f0, f1, t, tmp, det, x, y, NULL);
    double result = REF_MISS;
    mpq_set_ui(t, 0, 1);
    q_positions(q, t, pos, tmp);
    q_coplanarity(q, pos, f0, tmp);
    mpq_set_ui(t, 1, 1);
    q_positions(q, t, pos, tmp);
    q_coplanarity(q, pos, f1, tmp);
    if (mpq_sgn(f0) == 0 && mpq_sgn(f1) == 0) {
        result = REF_SKIP;
        goto done;
    }
    if (mpq_equal(f0, f1)) goto done; /* a nonzero constant: never coplanar */
    mpq_sub(tmp, f0, f1);
    mpq_div(t, f0, tmp);
    if (mpq_sgn(t) < 0 || mpq_cmp_ui(t, 1, 1) > 0) goto done;
    q_positions(q, t, pos, tmp);
    /* the two direction vectors and the right-hand side: vertex-face p - a = u (b - a) + v (c - a);
     * edge-edge s (a1 - a0) - u (b1 - b0) = b0 - a0 */
    int vf = q->kind == IMP_CCD_VERTEX_FACE;
    mpq_t e[3][3]; /* e[0], e[1]: the columns; e[2]: the right-hand side */
    for (int r = 0; r < 3; r++)
        for (int d = 0; d < 3; d++)
            mpq_init(e[r][d]);
    for (int d = 0; d < 3; d++) {
        if (vf) {
            mpq_sub(e[0][d], pos[2][d], pos[1][d]);
            mpq_sub(e[1][d], pos[3][d], pos[1][d]);
            mpq_sub(e[2][d], pos[0][d], pos[1][d]);
        } else {
            mpq_sub(e[0][d], pos[1][d], pos[0][d]);
            mpq_sub(e[1][d], pos[2][d], pos[3][d]);
            mpq_sub(e[2][d], pos[2][d], pos[0][d]);
        }
    }
    /* the normal e0 x e1; the plane of the two other axes of its largest component */
    int axis = -1;
    mpq_t best;
    mpq_init(best);
    for (int k = 0; k < 3; k++) {
        int i = (k + 1) % 3, j = (k + 2) % 3;
        mpq_mul(x, e[0][i], e[1][j]);
        mpq_mul(y, e[0][j], e[1][i]);
        mpq_sub(x, x, y);
        mpq_abs(x, x);
        if (mpq_sgn(x) != 0 && (axis < 0 || mpq_cmp(x, best) > 0)) {
            axis = k;
            mpq_set(best, x);
        }
    }
    if (axis < 0) {
        result = REF_SKIP;
    } else {
        int i = (axis + 1) % 3, j = (axis + 2) % 3;
        /* Cramer: x e0 + y e1 = rhs in the (i, j) plane */
        mpq_mul(det, e[0][i], e[1][j]);
        mpq_mul(tmp, e[0][j], e[1][i]);
        mpq_sub(det, det, tmp);
        mpq_mul(x, e[2][i], e[1][j]);
        mpq_mul(tmp, e[2][j], e[1][i]);
        mpq_sub(x, x, tmp);
        mpq_div(x, x, det);
        mpq_mul(y, e[0][i], e[2][j]);
        mpq_mul(tmp, e[0][j], e[2][i]);
        mpq_sub(y, y, tmp);
        mpq_div(y, y, det);
        int in;
        if (vf) {
            mpq_add(tmp, x, y);
            in = mpq_sgn(x) >= 0 && mpq_sgn(y) >= 0 && mpq_cmp_ui(tmp, 1, 1) <= 0;
        } else {
            in = mpq_sgn(x) >= 0 && mpq_cmp_ui(x, 1, 1) <= 0 && mpq_sgn(y) >= 0 &&
                 mpq_cmp_ui(y, 1, 1) <= 0;
        }
        if (in) result = mpq_get_d(t);
    }
    mpq_clear(best);
    for (int r = 0; r < 3; r++)
        for (int d = 0; d < 3; d++)
            mpq_clear(e[r][d]);
done:
    for (int k = 0; k < 4; k++)
        for (int d = 0; d < 3; d++)
            mpq_clear(pos[k][d]);
    mpq_clears(f0, f1, t, tmp, det, x, y, NULL);
    return result;
}

static void test_one_moving_point_against_rational_reference(void **state) {
    (void)state;
    const uint64_t seed = 0x0e1a7e5ULL;
    uint64_t s = seed;
    printf("one moving point, rational reference: seed %#llx\n", (unsigned long long)seed);
    int n = 4000, judged = 0, hits = 0;
    for (int i = 0; i < n; i++) {
        imp_ccd_query q = {.kind =
                               (imp_rng_next(&s) & 1) ? IMP_CCD_EDGE_EDGE : IMP_CCD_VERTEX_FACE};
        int mover = (int)(imp_rng_next(&s) % 4);
        double scale = ldexp(1.0, (int)(imp_rng_next(&s) % 9) - 4);
        for (int k = 0; k < 4; k++)
            for (int d = 0; d < 3; d++) {
                q.start[k][d] = grid(&s, 2) * scale;
                q.end[k][d] = k == mover ? grid(&s, 3) * scale : q.start[k][d];
            }
        double want = reference_one_mover(&q);
        if (want == REF_SKIP) continue;
        judged++;
        imp_ccd_result r = imp_ccd(&q), x = imp_ccd_exact(&q);
        int ok = r.hit == (want >= 0) && x.hit == r.hit &&
                 (want < 0 || (fabs(r.time - want) <= IMP_CCD_TIME_ACCURACY &&
                               fabs(x.time - want) <= IMP_CCD_TIME_ACCURACY));
        if (!ok)
            fail_msg("seed %#llx case %d (%s, point %d moves): reference %.17g; filter %d %.17g; "
                     "exact %d %.17g",
                     (unsigned long long)seed, i, q.kind == IMP_CCD_VERTEX_FACE ? "vf" : "ee",
                     mover, want, r.hit, r.time, x.hit, x.time);
        hits += want >= 0;
    }
    printf("  %d queries judged (%d skipped: coplanar throughout or a zero normal at the "
           "contact), %d colliding, all as the reference says\n",
           judged, n - judged, hits);
    assert_true(judged > n / 2 && hits > judged / 20 && hits < judged);
}

/* ---- general motion: agreement and invariances --------------------------------------------------
 */

static void same(const imp_ccd_result *a, const imp_ccd_result *b, uint64_t seed, int i,
                 const char *what) {
    if (a->hit != b->hit || (a->hit && fabs(a->time - b->time) > 2 * IMP_CCD_TIME_ACCURACY))
        fail_msg("seed %#llx case %d, %s: %d %.17g vs %d %.17g", (unsigned long long)seed, i, what,
                 a->hit, a->time, b->hit, b->time);
}

static void test_random_motion_invariances(void **state) {
    (void)state;
    const uint64_t seed = 0x91e7a5ULL;
    uint64_t s = seed;
    printf("random general motion: seed %#llx\n", (unsigned long long)seed);
    int hits = 0, n = 1500;
    for (int i = 0; i < n; i++) {
        imp_ccd_query q = {.kind =
                               (imp_rng_next(&s) & 1) ? IMP_CCD_EDGE_EDGE : IMP_CCD_VERTEX_FACE};
        int flat = imp_rng_next(&s) % 5 == 0;
        for (int k = 0; k < 4; k++)
            for (int d = 0; d < 3; d++) {
                q.start[k][d] = flat && d == 2 ? 0 : grid(&s, 2);
                q.end[k][d] = flat && d == 2 ? 0 : grid(&s, 2);
            }
        imp_ccd_result r = imp_ccd(&q), x = imp_ccd_exact(&q);
        same(&r, &x, seed, i, "filter vs exact");
        hits += r.hit;
        /* relabelling: face vertices rotated; edges swapped and reversed */
        imp_ccd_query p = q;
        if (q.kind == IMP_CCD_VERTEX_FACE) {
            int perm[4] = {0, 2, 3, 1};
            for (int k = 0; k < 4; k++) {
                memcpy(p.start[k], q.start[perm[k]], sizeof p.start[k]);
                memcpy(p.end[k], q.end[perm[k]], sizeof p.end[k]);
            }
        } else {
            int perm[4] = {3, 2, 0, 1};
            for (int k = 0; k < 4; k++) {
                memcpy(p.start[k], q.start[perm[k]], sizeof p.start[k]);
                memcpy(p.end[k], q.end[perm[k]], sizeof p.end[k]);
            }
        }
        imp_ccd_result rp = imp_ccd(&p);
        same(&r, &rp, seed, i, "relabelled");
        /* translation by a common vector and scaling by a power of two are exact */
        imp_ccd_query m = q;
        double shift[3] = {grid(&s, 3) * 0.5, grid(&s, 3), grid(&s, 3) * 0.25};
        double sc = ldexp(1.0, (int)(imp_rng_next(&s) % 41) - 20);
        for (int k = 0; k < 4; k++)
            for (int d = 0; d < 3; d++) {
                m.start[k][d] = (q.start[k][d] + shift[d]) * sc;
                m.end[k][d] = (q.end[k][d] + shift[d]) * sc;
            }
        imp_ccd_result rm = imp_ccd(&m);
        same(&r, &rm, seed, i, "translated and scaled");
        /* time reversal keeps the answer (not the time) */
        imp_ccd_query b = q;
        memcpy(b.start, q.end, sizeof b.start);
        memcpy(b.end, q.start, sizeof b.end);
        imp_ccd_result rb = imp_ccd(&b);
        if (rb.hit != r.hit)
            fail_msg("seed %#llx case %d: time reversal %d vs %d", (unsigned long long)seed, i,
                     rb.hit, r.hit);
    }
    printf("  %d queries, %d colliding, filter and exact path agree\n", n, hits);
    assert_true(hits > 0 && hits < n);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vf_crossing),
        cmocka_unit_test(test_vf_touch_at_ends),
        cmocka_unit_test(test_vf_coplanar_motion),
        cmocka_unit_test(test_vf_vertex_along_edge),
        cmocka_unit_test(test_vf_zero_area_face),
        cmocka_unit_test(test_ee_crossing_and_parallel),
        cmocka_unit_test(test_ee_coplanar_motion),
        cmocka_unit_test(test_vf_turning_face),
        cmocka_unit_test(test_shared_point_and_tilted_flat_motion),
        cmocka_unit_test(test_random_translation_against_lp),
        cmocka_unit_test(test_one_moving_point_against_rational_reference),
        cmocka_unit_test(test_random_motion_invariances),
        cmocka_unit_test(test_benchmark_handcrafted),
        cmocka_unit_test(test_benchmark_scalable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

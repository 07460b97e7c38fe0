/*
 * toi_rotating.c - certified time of impact of two turning bodies.
 *
 * DESIGN
 * What: imp_toi_rotating, the first contact of two convex shapes (or one
 * and a halfspace) that turn at constant angular velocities while their
 * positions follow parabolic paths, with a certificate: every interval
 * before the reported time is proven free of contact, and contact is
 * confirmed within the reported tolerance after it.
 * How: conservative advancement on the signed distance d(t) with a
 * rigorous Lipschitz bound (Mirtich, "Impulse-based Dynamic Simulation of
 * Rigid Body Systems", PhD thesis, Berkeley 1996, ch. 5; Zhang, Redon, Lee
 * and Kim, "Continuous Collision Detection for Articulated Models using
 * Taylor Models and Temporal Culling", SIGGRAPH 2007, section 4, for the
 * motion bound of rotating bodies). The signed distance of two convex sets
 * is max over unit n of (least n.y over b - largest n.x over a); a point
 * x of a body moves at v + w x (x - p), so each term, and so d, changes at
 * a rate of at most
 *     L(t) = |v_rel(t)| + |w_a| r_a + |w_b| r_b,
 * r the largest distance of a core point from the body's position (the
 * rounding radius turns with the core and changes no support value), and
 * |v_rel(t + s)| <= |v_rel(t)| + |a_rel| s. A lower bound lo of d(t) then
 * proves [t, t + h) free for h = 2 lo / (B + sqrt(B^2 + 2 |a_rel| lo)),
 * B = |v_rel(t)| + |w_a| r_a + |w_b| r_b. Two more rigorous bounds give
 * longer steps where they can: the plane gap along the query's normal n
 * (its translation part moves exactly with n.v_rel and n.a_rel; a turn
 * raises a support along n at most |n x w| rho per vertex, rho its
 * distance from the spin axis, so a turn about n moves none, and a vertex far below the support
 * cannot rise to it before a time it bounds: plane_rate; and its second order, the supports'
 * present rates n.(w x x) with the turn's acceleration |w|^2 rho as remainder, a Taylor bound
 * that makes the last steps before a contact Newton-like instead of linear; also with the
 * normal held in either body's turning frame, frame_step (3D: frame_rate3), whose first-order
 * term is the distance's exact rate where a corner meets that body's face; in 2D along the face
 * normal nearest the query's, face_normal, which rounding does not blur near contact), and the
 * bounding spheres (or, against a
 * halfspace, the bounding sphere's plane gap), which turning does not move at all, so a fast
 * spinner far away costs a few steps (without relative acceleration, one: the spheres' first
 * touch in closed form, sphere_step). The lower bound at t: the shapes are placed at t (positions
 * on their paths, each shape turned by the quaternion of w t) and imp_overlap_closest gives a
 * normal; the plane gap along it, from the placed points and radii, is a lower bound of d for any
 * unit n, and GJK's distance, which exceeds the true one by at most IMP_GJK_EXCESS_REL of it,
 * raises it when larger; then the rounding margin err(t) (IMP_ROT_ROUND_ULPS unit roundoffs of the
 * magnitudes placed, IMP_ROT_TURN_ULPS of the turned arcs) is taken off. The margin only makes
 * contact confirmation more eager; the depth a skipped graze can have (below) does not depend on
 * it. Refinement and confirmation: where the step is shorter than w(t) = min(IMP_ROT_TIME_REL
 * max(1, t), delta / L) (delta = IMP_ROT_DEPTH_REL of the pair's scale), the shapes are placed at
 * t1 = t + w: when they touch or overlap there (imp_overlap, with the
 * plane gap along its normal not proving them apart by more than the
 * rounding) the contact is a HIT at t with tolerance t1 - t: no contact
 * before t, one by t1. Otherwise advancement resumes at t1: a contact
 * inside (t, t1) that has ended by t1 is at most L w <= delta deep.
 * Standing contacts (imp_toi_rotating_standing, for a caller whose pair is
 * in contact at 0 without approaching): the same advancement on
 * d + eta instead of d until a placement proves the pair apart by eta / 2
 * (a gap of the rounding's size does not end it), so that a
 * pair sliding or spinning in contact is passed over in steps of about
 * (eta - depth) / L (or far longer where the plane gap proves more), not of
 * the refinement width.
 * Stops: the horizon; a certificate that the bounding spheres (or the
 * plane) never meet again, read from the Taylor coefficients of the gap's
 * square at t (all >= 0 with the constant > 0), or its quadratic's lack of a real root; a turn past
 * IMP_ROT_MAX_ANGLE at a time where the shapes must be placed (FAILED,
 * UNDECIDED); the caller's stop check. There is no step cap: every step
 * advances by at least w(t) (one ulp at the least), which bounds the work
 * as toi_rotating.h states.
 * A world's triangle (b_triangle) is placed through imp_overlap_triangle,
 * the flat polytope of its corners, since three points have no hull.
 * Why: no closed form exists for turning shapes (the trajectories are
 * trigonometric), and root finders on sampled distances miss grazes; the
 * Lipschitz bound makes every skipped interval a proof, whatever the spin,
 * and needs only the exact static queries that already exist for every
 * pair. Frame: a halfspace (whose position imp_overlap ignores) is held
 * and the other body moves by the relative displacement.
 */
#include "toi_rotating.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "contact_region.h"
#include "overlap.h"
#include "tolerance.h"

#define UNIT_ROUNDOFF (DBL_EPSILON / 2.0)

/* One body: its shape at t = 0, motion, spin, reach, and room for the turned vertices. */
enum { RB_KEPT = 16 };
typedef struct rbody {
    const imp_shape *s;
    imp_motion m;
    imp_vec3 w;
    double wlen;        /* |w| (0 for a sphere: its turn moves nothing) */
    double reach;       /* largest distance of a core point from the position */
    double full;        /* reach + rounding radius: the bounding sphere */
    imp_vec3 axis;      /* spinning: w / |w| */
    imp_vec3 spin_axis; /* the axis rho is taken about: w / |w|, in 2D z (about which every
                           turn of a 2D pair is, its own or relative to a turning frame) */
    int slab;           /* spinning, not in the plane about z: */
    double axlo, axhi;  /* the least and largest axis . x over the shape (radius included),
                           which turning about the axis does not change */
    imp_vec3 *verts;
    int plane; /* a halfspace */
    int zturn; /* a 2D polygon, segment or capsule turning about z (body_pose) */
    /* the buffers last (body_init clears what comes before them) */
    imp_vec3 vbuf[RB_KEPT]; /* verts for shapes of up to RB_KEPT vertices */
    double rho[RB_KEPT];    /* spinning: each point's distance from the axis (across), which
                               the turn keeps: the placed points' (imp_shape_points' order) */
    double len[RB_KEPT];    /* each point's distance from the position, rounded up */
} rbody;

typedef struct pair {
    rbody a, b;
    int dim;
    double horizon, delta;
    imp_vec3 dv0, da;   /* b's velocity at 0 and acceleration relative to a */
    double spin;        /* |w_a| r_a + |w_b| r_b */
    double wmax;        /* the larger |w| */
    int b_triangle;     /* b is a flat triangle (imp_toi_rotating_input) */
    int ready;          /* body_points done */
    imp_gjk2_cache gjk; /* 2D: the last GJK run's simplex, the next one's start */
    double mg[4];       /* margin's sums (margin_init) */
    double eta;         /* > 0: a standing contact (imp_toi_rotating_standing) until a placement
                           proves the pair apart by eta / 2 (parted); then 0 */
} pair;

/* A placement of the pair at t. */
typedef struct probe {
    double t;
    imp_overlap_state state;
    imp_failure failure;
    double lo;       /* rigorous lower bound of the signed distance (rounding taken off) */
    double sep;      /* plane gap along n (before the rounding margin) */
    double depth;    /* OVERLAPPING: imp_overlap's depth */
    double err;      /* the rounding margin at t */
    imp_vec3 n;      /* unit, a towards b */
    imp_vec3 qa, qb; /* positions in the frame */
    int has_pts;
    imp_vec3 ca, cb; /* closest points in the frame */
    double rate;     /* the plane gap along n falls through the turns at most this fast ... */
    double until;    /* ... for steps up to this long (plane_rate) */
    double rise1;    /* second order: the supports rise through the turns at most rise1 s +  */
    double rise2;    /* rise2 s^2 / 2 for steps s up to until2 (plane_rate) */
    double until2;   /* (until, until2 0: no such bound formed) */
    int near;    /* a fast pair GJK found within its tolerance of contact, measured along a hint */
    int face;    /* 2D: fn is the normal of a's face (1) or b's (2) where the pair is closest */
    imp_vec3 fn; /* (face_normal, gjk_face), from a towards b; else face 0 */
    /* the same second-order bound along the normal held in a turning frame, a's (k = 0) or
     * b's (k = 1), when fon[k]: fw[k] the frame's spin, rise1/rise2/until2 of the bodies'
     * turns relative to it (frame_step) */
    int fon[2];
    imp_vec3 fw[2];
    double frise1[2], frise2[2], funtil2[2];
} probe;

/* plane_rate's answer for one body. */
typedef struct plane_bound {
    double rate, until;          /* first order */
    double rise1, rise2, until2; /* second order */
} plane_bound;

int imp_toi_rotating_needed(const imp_shape *a, imp_vec3 wa, const imp_shape *b, imp_vec3 wb) {
    return imp_shape_turns(a, wa) || imp_shape_turns(b, wb);
}

imp_quat imp_spin_at(imp_quat q0, imp_vec3 w, double t) {
    return imp_quat_mul(imp_quat_from_rotvec(imp_scale(w, t)), q0);
}

/* A point's distance from the spin axis through the position, rounded up (a rounding of
 * the reach's size added). */
static double across(const rbody *r, imp_vec3 x) {
    return imp_len(imp_cross(x, r->spin_axis)) * (1.0 + 8.0 * UNIT_ROUNDOFF) +
           8.0 * UNIT_ROUNDOFF * r->reach;
}

/* A 2D body that turns about z only (or not at all): its rho is taken about z. */
static int about_z(const rbody *r, int dim) { return dim == 2 && r->w.x == 0.0 && r->w.y == 0.0; }

static int body_init(rbody *r, const imp_shape *s, const imp_motion *m, imp_vec3 w, int dim) {
    memset(r, 0, offsetof(rbody, vbuf)); /* the buffers are written before they are read */
    r->s = s;
    r->m = *m;
    r->plane = s->type == IMP_SHAPE_HALFSPACE;
    r->w = imp_shape_turns(s, w) ? w : imp_v3(0.0, 0.0, 0.0);
    r->wlen = imp_len(r->w);
    if (r->plane) return 0;
    imp_vec3 buf[8];
    const imp_vec3 *pts;
    double rad;
    size_t n = imp_shape_points(s, dim, buf, &pts, &rad);
    double far2 = 0.0; /* the largest |x|^2: one square root (sqrt is monotonic, exact) */
    for (size_t i = 0; i < n; ++i)
        far2 = imp_fmax_run(far2, imp_dot(pts[i], pts[i]));
    r->reach = sqrt(far2) * (1.0 + 8.0 * UNIT_ROUNDOFF);
    r->full = r->reach + rad;
    if (r->wlen > 0.0) r->axis = imp_scale(r->w, 1.0 / r->wlen);
    /* the slab (slab_step), except in the plane about z, where it is the plane itself */
    r->slab = r->wlen > 0.0 && !about_z(r, dim);
    if (r->slab) {
        r->axlo = INFINITY;
        r->axhi = -INFINITY;
        for (size_t i = 0; i < n; ++i) {
            r->axlo = imp_fmin(r->axlo, imp_dot(r->axis, pts[i]) - rad);
            r->axhi = imp_fmax(r->axhi, imp_dot(r->axis, pts[i]) + rad);
        }
    }
    r->spin_axis = about_z(r, dim) ? imp_v3(0.0, 0.0, 1.0) : r->axis;
    r->zturn = r->wlen > 0.0 && about_z(r, dim) &&
               (s->type == IMP_SHAPE_POLYGON || s->type == IMP_SHAPE_SEGMENT ||
                s->type == IMP_SHAPE_CAPSULE);
    if ((s->type == IMP_SHAPE_POLYGON || s->type == IMP_SHAPE_POLYHEDRON) && r->wlen > 0.0) {
        r->verts = s->n_verts <= RB_KEPT ? r->vbuf : malloc(s->n_verts * sizeof *r->verts);
        if (!r->verts) return -1;
    }
    return 0;
}

/* Each point's rho and |x| (rbody), for the placements' bounds: formed at the first placement
 * (ready), which a pair whose bounding spheres never meet does not reach. */
static void body_points(rbody *r, int dim) {
    if (r->plane) return;
    imp_vec3 buf[8];
    const imp_vec3 *pts;
    double rad;
    size_t n = imp_shape_points(r->s, dim, buf, &pts, &rad);
    for (size_t i = 0; i < n && i < RB_KEPT; ++i) {
        double l = imp_len(pts[i]);
        r->len[i] = l * (1.0 + 8.0 * UNIT_ROUNDOFF) + 8.0 * UNIT_ROUNDOFF * r->reach;
        /* 2D points about z: rho is |x| (z = 0); a body that does not turn has no axis, and
         * |x| bounds its distance from any through the position (its views are formed for
         * the other's frame, which reads no rho) */
        if (about_z(r, dim) ? pts[i].z != 0.0 : r->wlen > 0.0)
            r->rho[i] = across(r, pts[i]);
        else
            r->rho[i] = r->len[i];
    }
}

static void body_free(rbody *r) {
    if (r->verts != r->vbuf) free(r->verts);
}

/* A 2D point turned about z by the angle whose cosine and sine are c and s. */
static imp_vec3 turn_z(imp_vec3 x, double c, double s) {
    return imp_v3(c * x.x - s * x.y, s * x.x + c * x.y, x.z);
}

/* The body's shape at t (turned by w t), into *out; its vertices into r->verts. A 2D
 * polygon, segment or capsule turning about z turns by the angle's cosine and sine, four
 * products a point, the rotation the quaternion of w t gives to within rounding (of the
 * turned arcs' size, within the margin). */
static void body_pose(const rbody *r, double t, imp_shape *out) {
    *out = *r->s;
    if (r->wlen == 0.0) return;
    if (r->zturn) {
        double th = r->w.z * t, c = cos(th), s = sin(th);
        if (out->type == IMP_SHAPE_POLYGON) {
            for (size_t i = 0; i < out->n_verts; ++i)
                r->verts[i] = turn_z(r->s->verts[i], c, s);
            out->verts = r->verts;
        } else {
            out->a = turn_z(out->a, c, s);
            out->b = turn_z(out->b, c, s);
        }
        return;
    }
    imp_quat q = imp_quat_from_rotvec(imp_scale(r->w, t));
    if (r->verts) {
        memcpy(r->verts, r->s->verts, r->s->n_verts * sizeof *r->verts);
        out->verts = r->verts;
    }
    imp_shape_rotate(out, q);
}

/* Displacement v t + a t^2 / 2 of a body's path. */
static imp_vec3 disp(const rbody *r, double t) {
    return imp_path_at(imp_v3(0.0, 0.0, 0.0), r->m.v, r->m.a, t);
}

/* Positions in the frame (a halfspace held at its start, the other body moved by the
 * relative displacement). */
static void frame(const pair *P, double t, imp_vec3 *qa, imp_vec3 *qb) {
    *qa = imp_path_at(P->a.m.p, P->a.m.v, P->a.m.a, t);
    *qb = imp_path_at(P->b.m.p, P->b.m.v, P->b.m.a, t);
    if (P->a.plane) {
        *qb = imp_sub(*qb, disp(&P->a, t));
        *qa = P->a.m.p;
    } else if (P->b.plane) {
        *qa = imp_sub(*qa, disp(&P->b, t));
        *qb = P->b.m.p;
    }
}

/* The rounding margin of a placement at t (IMP_ROT_ROUND_ULPS of the magnitudes placed,
 * IMP_ROT_TURN_ULPS of the turned arcs). */
static double margin(const pair *P, double t) {
    return UNIT_ROUNDOFF * (IMP_ROT_ROUND_ULPS * (P->mg[0] + (P->mg[1] + P->mg[2] * t) * t) +
                            IMP_ROT_TURN_ULPS * P->mg[3] * t);
}

/* margin's sums over the bodies, once per pair: |p| + full (+ a plane's |offset|), |v|,
 * |a| / 2, and |w| reach. */
static void margin_init(pair *P) {
    const rbody *bs[2] = {&P->a, &P->b};
    P->mg[0] = P->mg[1] = P->mg[2] = P->mg[3] = 0.0;
    for (int k = 0; k < 2; ++k) {
        const rbody *r = bs[k];
        P->mg[0] += imp_len(r->m.p) + r->full + (r->plane ? fabs(r->s->offset) : 0.0);
        P->mg[1] += imp_len(r->m.v);
        P->mg[2] += 0.5 * imp_len(r->m.a);
        P->mg[3] += r->wlen * r->reach;
    }
}

/* A placed shape's points (imp_shape_points), formed once per placement: a box's corners
 * are eight turns of its half sizes, and every bound of a placement reads them. Not to be
 * copied (pts may point into buf). */
typedef struct shape_pts {
    imp_vec3 buf[8];
    const imp_vec3 *pts;
    size_t n;
    double rad;
} shape_pts;

static void points_of(const imp_shape *s, int dim, shape_pts *o) {
    o->n = imp_shape_points(s, dim, o->buf, &o->pts, &o->rad);
}

/* Both bodies' shapes at t (body_pose) and their points (points_of), which point into the
 * shapes, the bodies' buffers and pa, pb themselves (so not to be copied). */
static void pose_both(const pair *P, double t, imp_shape *sa, imp_shape *sb, shape_pts *pa,
                      shape_pts *pb) {
    body_pose(&P->a, t, sa);
    body_pose(&P->b, t, sb);
    points_of(sa, P->dim, pa);
    points_of(sb, P->dim, pb);
}

/* A placed 2D shape's points as the 2D GJK takes them, at frame position pos. */
static imp_core2 core2_of(const shape_pts *o, imp_vec3 pos) {
    return (imp_core2){o->pts, o->n, o->rad, pos};
}

/* A bound of the placed pair's radii and coordinates for the 2D GJK (imp_overlap_gjk_core2):
 * the positions' magnitudes and the bounding spheres, whose reach the turns keep. */
static double core2_scale(const pair *P, imp_vec3 qa, imp_vec3 qb) {
    return imp_max_abs(qa) + imp_max_abs(qb) + P->a.full + P->b.full;
}

/* The point of a placed shape (relative to its position) farthest along n, its radius
 * included. */
static imp_vec3 farthest(const shape_pts *o, imp_vec3 n) {
    const imp_vec3 *pts = o->pts;
    size_t best = 0;
    double top = imp_dot(n, pts[0]); /* (kept: not the best's product again each round) */
    for (size_t i = 1; i < o->n; ++i) {
        double h = imp_dot(n, pts[i]);
        if (h > top) top = h, best = i;
    }
    return imp_madd(pts[best], n, o->rad);
}

/* Largest n.x over a placed shape at pos (unit n; the rounding is within the margin). */
static double support(const shape_pts *o, imp_vec3 pos, imp_vec3 n) {
    return imp_dot(n, pos) + imp_dot(n, farthest(o, n));
}

/*
 * How fast turning can raise a placed body's support along the unit direction n, per
 * vertex: a core point x turned at w moves n.x at (R x).(n x w), in which only the part
 * of R x across the axis counts (the axis is across n x w), so at most |n x w| rho, rho
 * the point's distance from the spin axis, which the turn keeps (the rounding turns with
 * the core and changes no support value). The vertices within a quarter of `slack` of
 * the support give the rate b->rate; every other vertex i is below the
 * support by g_i and cannot overtake a point rising at b->rate before g_i / (c_i - b->rate),
 * the least of which (over the vertices that rise faster) is b->until: for steps up to
 * b->until the support rises at most b->rate s. A turn about n moves no support along n.
 * Second order (a Taylor bound, as in Zhang, Redon, Lee and Kim's Taylor models, with the
 * remainder of the turn): a vertex x moves n.x at exactly n.(w x x) now and accelerates
 * along n by n.(w x (w x x)), at most |w|^2 rho at any time; so for steps up to b->until2
 * (the least g_i / c_i over the other vertices, none of which reaches the support level
 * before it) the support rises at most b->rise1 s + b->rise2 s^2 / 2, rise1 the largest
 * present rate over the near vertices (at least 0) and rise2 |w|^2 times their largest
 * rho. Near contact the first order's rate is the turn's largest possible speed, which
 * makes advancement converge linearly; the second order's is the present one, with which
 * it converges as Newton's method does.
 * Split in two: plane_view_of reads the placed points along n once, relative to the unit
 * axis (rho, each point's n.(axis x x) and gap below the support); plane_rate scales that
 * by a spin about the axis, the body's own (`first`: with the first order's rate and until)
 * or (2D) its spin relative to a turning frame (the second order only, until 0).
 */
typedef struct plane_view {
    double c;          /* |n x axis| */
    double rmax;       /* the largest rho over the points near the support */
    double cmax, cmin; /* the largest and least n.(axis x x) over them */
    double u1, u2;     /* the least g_i / (rho_i - rmax) (rho_i > rmax) and g_i / rho_i over
                          the others, g_i a point's gap below the support less rounding
                          (when not kept below: else plane_rate forms u1 from them) */
    size_t nfar;       /* the others' g_i, rho_i and |x_i|, when there are at most RB_KEPT
                          points (else SIZE_MAX) */
    double fg[RB_KEPT], frho[RB_KEPT], flen[RB_KEPT];
    size_t nnear; /* 3D, kept: the near points' x_i x n, and their largest |x_i| */
    imp_vec3 nm[RB_KEPT];
    double nlen;
} plane_view;

static void plane_view_of(const rbody *r, const shape_pts *o, imp_vec3 n, double slack,
                          plane_view *v) {
    v->c = imp_len(imp_cross(n, r->spin_axis));
    const imp_vec3 *pts = o->pts;
    size_t k = o->n;
    int kept = k <= RB_KEPT;
    double h[RB_KEPT], top = -INFINITY;
    for (size_t i = 0; i < k; ++i) {
        double hi = imp_dot(n, pts[i]);
        if (i < RB_KEPT) h[i] = hi;
        top = imp_fmax_run(top, hi);
    }
    const double tiny = 8.0 * UNIT_ROUNDOFF * r->reach;
    double near = 0.25 * imp_fmax(slack, 0.0) + tiny;
    /* (the loops keep their sums in locals: stores through v, which may alias the points,
     * would chain each round to the last) */
    double rmax = 0.0, cmax = 0.0, cmin = 0.0, nlen = 0.0;
    size_t nnear = 0;
    int first = 1;
    for (size_t i = 0; i < k; ++i) {
        double below = top - (i < RB_KEPT ? h[i] : imp_dot(n, pts[i]));
        if (below > near) continue;
        double rho = i < RB_KEPT ? r->rho[i] : across(r, pts[i]);
        double cr = imp_dot(n, imp_cross(r->spin_axis, pts[i]));
        rmax = imp_fmax(rmax, rho);
        cmax = first ? cr : imp_fmax(cmax, cr);
        cmin = first ? cr : imp_fmin(cmin, cr);
        first = 0;
        if (kept) {
            v->nm[nnear++] = imp_cross(pts[i], n);
            nlen = imp_fmax(nlen, r->len[i]);
        }
    }
    double u1 = INFINITY, u2 = INFINITY;
    size_t nfar = 0;
    for (size_t i = 0; i < k; ++i) {
        double below = top - (i < RB_KEPT ? h[i] : imp_dot(n, pts[i]));
        if (below <= near) continue;
        double rho = i < RB_KEPT ? r->rho[i] : across(r, pts[i]);
        double g = imp_fmax(below - tiny, 0.0);
        if (kept) { /* plane_rate reads them when it needs u1 */
            v->fg[nfar] = g;
            v->flen[nfar] = r->len[i];
            v->frho[nfar++] = rho;
            continue;
        }
        if (rho > rmax) u1 = imp_fmin(u1, g / (rho - rmax));
        if (rho > 0.0) u2 = imp_fmin(u2, g / rho);
    }
    v->rmax = rmax, v->cmax = cmax, v->cmin = cmin, v->nlen = nlen;
    v->u1 = u1, v->u2 = u2;
    v->nnear = nnear;
    v->nfar = kept ? nfar : SIZE_MAX;
}

/*
 * The bounds of plane_view v for a spin about the body's axis. The second order's present
 * rate rise1 may be negative (the support turning away): the support then stays below
 * top + rise1 s + rise2 s^2 / 2 while no other point, rising at most c_i = c rho_i, can
 * reach top + rise1 s, that is for s up to g_i / (c_i - rise1); shapes of more than RB_KEPT
 * points keep rise1 >= 0 and until2 the least g_i / c_i.
 */
static void plane_rate(const rbody *r, const plane_view *v, double spin, int first,
                       plane_bound *b) {
    b->rate = b->rise1 = b->rise2 = 0.0;
    b->until = b->until2 = INFINITY;
    if (r->plane || spin == 0.0) return; /* (v is not formed then) */
    double ws = fabs(spin), c = v->c * ws * (1.0 + 8.0 * UNIT_ROUNDOFF);
    if (!(c > 0.0)) return;
    const double shorter = 1.0 - 4.0 * UNIT_ROUNDOFF; /* the divisions by c below */
    b->rate = c * v->rmax;
    double u1 = v->u1;
    if (first && v->nfar != SIZE_MAX)
        for (size_t i = 0; i < v->nfar; ++i)
            if (v->frho[i] > v->rmax) u1 = imp_fmin(u1, v->fg[i] / (v->frho[i] - v->rmax));
    b->until = first ? u1 / c * shorter : 0.0;
    /* the present rate, and its rounding: a few ulps of |w| reach */
    double rise1 =
        (spin > 0.0 ? spin * v->cmax : spin * v->cmin) + 16.0 * UNIT_ROUNDOFF * ws * r->reach;
    if (v->nfar == SIZE_MAX) {
        b->rise1 = imp_fmax(rise1, 0.0);
        b->until2 = v->u2 / c * shorter;
    } else {
        b->rise1 = rise1;
        double until2 = INFINITY; /* (a local: see plane_view_of) */
        for (size_t i = 0; i < v->nfar; ++i) {
            double ci = c * v->frho[i];
            if (ci > rise1) until2 = imp_fmin(until2, v->fg[i] / (ci - rise1) * shorter);
        }
        b->until2 = until2;
    }
    b->rise2 = ws * ws * v->rmax * (1.0 + 16.0 * UNIT_ROUNDOFF);
}

/*
 * 3D: the second-order bounds of a body turning at w_F + u in the frame turning at w_F
 * (frame_step), from its kept plane_view v. In the frame it turns by Q(s) = R_F(s)^T R(s),
 * Q' = [R_F(s)^T u] Q: at the constant speed |u| about an axis that turns back with the
 * frame, so a point x moves n.x at n.(u x x) now, with |x''| <= (|w_F x u| + |u|^2) |x|,
 * and no point moves faster than |u| |x|. The others overtake the near ones no sooner than
 * g_i / (|u| |x_i| - rise1).
 */
static void frame_rate3(const plane_view *v, imp_vec3 u, imp_vec3 wf, double reach,
                        plane_bound *b) {
    b->rate = b->rise1 = b->rise2 = 0.0;
    b->until = b->until2 = INFINITY;
    double ul = imp_len(u);
    if (ul == 0.0) return;
    const double shorter = 1.0 - 4.0 * UNIT_ROUNDOFF;
    double rise1 = -INFINITY;
    for (size_t i = 0; i < v->nnear; ++i)
        rise1 = imp_fmax(rise1, imp_dot(u, v->nm[i]));
    rise1 += 16.0 * UNIT_ROUNDOFF * ul * reach;
    b->rise1 = rise1;
    double until2 = INFINITY; /* (a local: see plane_view_of) */
    for (size_t i = 0; i < v->nfar; ++i) {
        double ci = ul * v->flen[i] * (1.0 + 8.0 * UNIT_ROUNDOFF);
        if (ci > rise1) until2 = imp_fmin(until2, v->fg[i] / (ci - rise1) * shorter);
    }
    b->until2 = until2;
    b->rise2 = (imp_len(imp_cross(wf, u)) + ul * ul) * v->nlen * (1.0 + 16.0 * UNIT_ROUNDOFF);
}

/* The distance query of a placement into q (state, normal, depth, closest points, the plane
 * gap along the normal and the lower bound lo); `fast`: 2D pairs by GJK
 * (imp_overlap_gjk_2d; within its tolerance, imp_overlap_closest), else exactly
 * (imp_overlap_closest, a triangle by imp_overlap_triangle); `hint` (or NULL): a normal for a fast
 * pair that GJK finds within its tolerance of contact, instead of the exact query. Returns the
 * query's distance when APART, else 0. */
/* 2D: the unit normal of the edge from p to q, turned to `side`, into *e; 0 when the edge has
 * no length. */
static int edge_normal(imp_vec3 p, imp_vec3 q, imp_vec3 side, imp_vec3 *e) {
    imp_vec3 f = imp_sub(q, p), u = imp_v3(f.y, -f.x, 0.0);
    double l = imp_len(u);
    if (!(l > 0.0)) return 0;
    *e = imp_scale(u, (imp_dot(u, side) < 0.0 ? -1.0 : 1.0) / l);
    return 1;
}

static int gjk_face(const pair *P, const shape_pts *pa, const shape_pts *pb, imp_vec3 side,
                    imp_vec3 *e);

/*
 * 2D: where the pair's last GJK run found it closest at a face of one body and a vertex of
 * the other (gjk_face), and the other body's support towards the face still has its foot on
 * the face, that point and the face are the cores' closest pair (the face's line separates the
 * convex cores, and the foot is on the face), so no GJK run is needed: an APART answer with
 * the face's normal (turned to `side`, from a towards b), the distance and the closest points;
 * returns gjk_face's answer, 1 or 2. 0 when the support's foot is off the face or the gap is
 * within tol of contact: GJK decides those. The placement's bound is the plane gap along the normal
 * as always (measure).
 */
static int face_measure(const pair *P, const shape_pts *pa, const shape_pts *pb, const probe *q,
                        imp_vec3 side, double tol, imp_overlap_result *r, imp_vec3 *ca,
                        imp_vec3 *cb) {
    imp_vec3 e;
    int f = gjk_face(P, pa, pb, side, &e);
    if (!f) return 0;
    const imp_gjk2_cache *c = &P->gjk;
    const shape_pts *F = f == 1 ? pa : pb, *O = f == 1 ? pb : pa;
    imp_vec3 qF = f == 1 ? q->qa : q->qb, qO = f == 1 ? q->qb : q->qa;
    unsigned i = f == 1 ? c->ia[0] : c->ib[0], j = f == 1 ? c->ia[1] : c->ib[1];
    imp_vec3 out = f == 1 ? e : imp_neg(e); /* the face's outward normal */
    size_t k = 0;                           /* O's support towards the face */
    double low = imp_dot(out, O->pts[0]);
    for (size_t m = 1; m < O->n; ++m) {
        double h = imp_dot(out, O->pts[m]);
        if (h < low) low = h, k = m;
    }
    imp_vec3 v = imp_add(qO, O->pts[k]), f0 = imp_add(qF, F->pts[i]);
    imp_vec3 fe = imp_sub(imp_add(qF, F->pts[j]), f0);
    double s = imp_dot(imp_sub(v, f0), fe), ll = imp_dot(fe, fe);
    double gap = imp_dot(out, imp_sub(v, f0)) - F->rad - O->rad;
    if (!(s >= 0.0 && s <= ll && ll > 0.0 && gap > tol)) return 0;
    imp_vec3 foot = imp_madd(f0, fe, s / ll);
    *ca = f == 1 ? imp_madd(foot, e, F->rad) : imp_madd(v, e, O->rad);
    *cb = f == 1 ? imp_madd(v, e, -O->rad) : imp_madd(foot, e, -F->rad);
    *r = (imp_overlap_result){.state = IMP_OVERLAP_APART, .distance = gap, .normal = e};
    return f;
}

static double measure(pair *P, const imp_shape *sa, const imp_shape *sb, const shape_pts *pa,
                      const shape_pts *pb, probe *q, int fast, const imp_vec3 *hint) {
    imp_overlap_result r;
    int face = 0;
    if (P->b_triangle) {
        imp_vec3 tri[3];
        for (int k = 0; k < 3; ++k)
            tri[k] = imp_add(q->qb, sb->verts[k]);
        r = imp_overlap_triangle(sa, q->qa, tri, &q->ca, &q->cb);
    } else if (fast && hint &&
               (face = face_measure(P, pa, pb, q, *hint,
                                    IMP_CONTACT_REL * core2_scale(P, q->qa, q->qb), &r, &q->ca,
                                    &q->cb)) != 0) {
        /* the last GJK run's face and point, still the closest: no run */
    } else if (fast) {
        int near = 0;
        imp_core2 ca = core2_of(pa, q->qa), cb = core2_of(pb, q->qb);
        r = imp_overlap_gjk_core2(&ca, &cb, core2_scale(P, q->qa, q->qb), &P->gjk, &q->ca, &q->cb,
                                  &near);
        if (r.state != IMP_OVERLAP_APART && near && hint) {
            /* within GJK's tolerance of contact, with the last placement's normal to hand: no
             * exact query, only the plane gap along that normal (face_normal then takes the
             * face's), a lower bound whatever it is; touching, without closest points */
            r = (imp_overlap_result){.state = IMP_OVERLAP_OVERLAPPING, .normal = *hint};
            q->near = 1;
        } else if (r.state != IMP_OVERLAP_APART) {
            r = imp_overlap_closest(sa, q->qa, sb, q->qb, P->dim, &q->ca, &q->cb);
        }
    } else {
        r = imp_overlap_closest(sa, q->qa, sb, q->qb, P->dim, &q->ca, &q->cb);
    }
    q->state = r.state;
    q->failure = r.failure;
    if (r.state == IMP_OVERLAP_FAILED) return 0.0;
    q->n = r.normal;
    q->face = face;
    q->fn = r.normal;
    q->depth = r.state == IMP_OVERLAP_OVERLAPPING ? r.depth : 0.0;
    q->has_pts = r.state == IMP_OVERLAP_APART;
    if (P->a.plane || P->b.plane) {
        /* imp_overlap's gap against a halfspace is the exact plane gap along its normal */
        q->sep = r.state == IMP_OVERLAP_APART ? r.distance : -r.depth;
    } else {
        q->sep = -support(pa, q->qa, q->n) - support(pb, q->qb, imp_neg(q->n));
    }
    double lo = q->sep;
    /* the exact 2D distance, or 3D GJK's, which exceeds the cores' true one by at most
     * IMP_GJK_EXCESS_REL of it, the radii coming off after: (distance + rr)(1 - excess) -
     * rr. The fast 2D distance may exceed the true one by its GJK's stopping tolerance
     * (IMP_CONTACT_REL of the coordinates), which no relative factor covers: the plane gap
     * along its normal alone, a lower bound whatever the normal */
    if (r.state == IMP_OVERLAP_APART && !fast)
        lo = imp_fmax(lo,
                      r.distance * (1.0 - IMP_GJK_EXCESS_REL) -
                          IMP_GJK_EXCESS_REL * (P->a.full - P->a.reach + P->b.full - P->b.reach));
    q->lo = lo - q->err;
    return r.state == IMP_OVERLAP_APART ? r.distance : 0.0;
}

/* 2D: the normal of o's face at its support along n (the edge to its next highest point
 * along n), turned to n's side, into *e; 0 when o has no such edge. */
static int face_of(const shape_pts *o, imp_vec3 n, imp_vec3 *e) {
    const imp_vec3 *pts = o->pts;
    if (o->n < 2) return 0;
    size_t i = 0, j = 1;
    if (imp_dot(n, pts[1]) > imp_dot(n, pts[0])) i = 1, j = 0;
    for (size_t k = 2; k < o->n; ++k) {
        double h = imp_dot(n, pts[k]);
        if (h > imp_dot(n, pts[i]))
            j = i, i = k;
        else if (h > imp_dot(n, pts[j]))
            j = k;
    }
    return edge_normal(pts[i], pts[j], n, e);
}

/* 2D: the face of a or b at which the last GJK run (P->gjk) found the pair closest, from its
 * final simplex: a segment of the difference whose two points share one body's vertex and
 * take adjacent vertices of the other's, that body's face between them. Its unit normal,
 * turned to `side` (from a towards b), into *e; returns 1 for a's face, 2 for b's, 0 (*e
 * unset) when the simplex is not such a segment. */
static int gjk_face(const pair *P, const shape_pts *pa, const shape_pts *pb, imp_vec3 side,
                    imp_vec3 *e) {
    const imp_gjk2_cache *c = &P->gjk;
    if (c->n != 2 || (c->ia[0] == c->ia[1]) == (c->ib[0] == c->ib[1])) return 0;
    int of_b = c->ia[0] == c->ia[1];
    const shape_pts *o = of_b ? pb : pa;
    unsigned i = of_b ? c->ib[0] : c->ia[0], j = of_b ? c->ib[1] : c->ia[1];
    size_t m = o->n;
    if (m < 3 || i >= m || j >= m ||
        !(i + 1 == j || j + 1 == i || (i == 0 && j + 1 == m) || (j == 0 && i + 1 == m)))
        return 0;
    if (!edge_normal(o->pts[i], o->pts[j], side, e)) return 0;
    return of_b ? 2 : 1;
}

/*
 * 2D: the gap along the normal of the face of a or b that q's normal meets, kept (normal,
 * gap and lower bound) where it proves more. Any unit direction's gap is a lower bound of
 * the distance; close to a contact the normal a distance query gives is the difference of
 * two closest points that rounding blurs (a relative error of the coordinates' ulps over
 * the distance), which on a face spanning the reach turns the gap along it negative at
 * distances of about 1e-8; the face's own normal keeps it exact there, and is the contact's.
 */
static void face_normal(const pair *P, const shape_pts *pa, const shape_pts *pb, probe *q) {
    imp_vec3 e[2];
    int face[2] = {0, 0};
    /* GJK's face where it names one (two passes over the points, not six), else both
     * bodies' faces at their supports along n */
    if (!(face[0] = gjk_face(P, pa, pb, q->n, &e[0])))
        for (int k = 0; k < 2; ++k)
            if (face_of(k ? pb : pa, k ? imp_neg(q->n) : q->n, &e[k]))
                face[k] = k + 1, e[k] = k ? imp_neg(e[k]) : e[k];
    for (int k = 0; k < 2; ++k) {
        if (!face[k]) continue;
        double sep = imp_dot(e[k], imp_sub(q->qb, q->qa)) - imp_dot(e[k], farthest(pa, e[k])) +
                     imp_dot(e[k], farthest(pb, imp_neg(e[k])));
        if (sep > q->sep) {
            q->lo = imp_fmax(q->lo, sep - q->err);
            q->sep = sep;
            q->n = q->fn = e[k];
            q->face = face[k];
        }
    }
}

/* q's frame k (spinning at wf) from both bodies' second-order bounds in it. */
static void set_frame(probe *q, int k, imp_vec3 wf, const plane_bound *ba, const plane_bound *bb) {
    q->fon[k] = 1;
    q->fw[k] = wf;
    q->frise1[k] = ba->rise1 + bb->rise1;
    q->frise2[k] = ba->rise2 + bb->rise2;
    q->funtil2[k] = imp_fmin(ba->until2, bb->until2);
}

static probe place(pair *P, double t, const imp_vec3 *hint) {
    /* not a memset of the 400 bytes: what measure() does not set, and the bounds' (0: none
     * formed); the frames' own fields are read only where fon is set */
    probe q;
    q.t = t;
    q.near = 0;
    q.rate = q.until = q.rise1 = q.rise2 = q.until2 = 0.0;
    q.fon[0] = q.fon[1] = 0;
    imp_shape sa, sb;
    shape_pts pa, pb;
    pose_both(P, t, &sa, &sb, &pa, &pb);
    frame(P, t, &q.qa, &q.qb);
    q.err = margin(P, t);
    int fast = P->dim == 2 && !P->a.plane && !P->b.plane;
    double d = measure(P, &sa, &sb, &pa, &pb, &q, fast, hint);
    /* the faces' normals where the query's may be blurred: a placement measured along a hint,
     * or a gap along the query's normal short of its distance (within a millionth of it
     * leaves the faces nothing to prove) */
    if (fast && (q.near || (q.state == IMP_OVERLAP_APART && q.sep < d * (1.0 - 1e-6))))
        face_normal(P, &pa, &pb, &q);
    else if (fast && q.state == IMP_OVERLAP_APART)
        q.face = q.face ? q.face : gjk_face(P, &pa, &pb, q.n, &q.fn);
    /* the exact query where the fast one's plane gap proves little: a contact is confirmed,
     * and a normal that leaves less than half the distance replaced, by the exact one */
    if (fast && q.state == IMP_OVERLAP_APART && (q.lo + P->eta <= 0.0 || q.sep < 0.5 * d)) {
        (void)measure(P, &sa, &sb, &pa, &pb, &q, 0, NULL);
        if (q.state == IMP_OVERLAP_APART) face_normal(P, &pa, &pb, &q);
    }
    /* failed, or in contact (touches): no step is taken from here, so no bounds; nor within
     * GJK's tolerance of contact (near), where the steps they could prove are all but always
     * shorter than the refinement's width: the Lipschitz bound alone (until and until2 0)
     * decides, and a refinement that finds no contact places the pair exactly, with them */
    if (q.state == IMP_OVERLAP_FAILED || q.lo + P->eta <= 0.0 || q.near) return q;
    double slack = q.sep - q.err + P->eta;
    int two = about_z(&P->a, P->dim) && about_z(&P->b, P->dim);
    /* 3D frames: both bodies of at most RB_KEPT points, one spinning */
    int three = P->dim == 3 && !P->a.plane && !P->b.plane && pa.n <= RB_KEPT && pb.n <= RB_KEPT &&
                (P->a.wlen > 0.0 || P->b.wlen > 0.0);
    /* the spin about each body's spin_axis: z's component, else |w| */
    double spa = about_z(&P->a, P->dim) ? P->a.w.z : P->a.wlen;
    double spb = about_z(&P->b, P->dim) ? P->b.w.z : P->b.wlen;
    /* both 2D bodies turning, closest at a known face: the face's body's frame alone, whose
     * first order is the distance's exact rate there (on bench_rotating's slow 8-gons its step
     * is within 5% of the best at 96.5% of such placements), so the face's body's view, which
     * only the other frame reads, is not formed */
    int face_only = two && spa != 0.0 && spb != 0.0 && q.face != 0;
    plane_view va, vb;
    if (!P->a.plane && (two || three || P->a.wlen > 0.0) && !(face_only && q.face == 1))
        plane_view_of(&P->a, &pa, q.n, slack, &va);
    if (!P->b.plane && (two || three || P->b.wlen > 0.0) && !(face_only && q.face == 2))
        plane_view_of(&P->b, &pb, imp_neg(q.n), slack, &vb);
    /* the normal held fixed: not where both 2D bodies turn, whose two turning frames' bounds
     * it all but never beats (on bench_rotating's 8-gons, by more than 5% at 2% of the slow
     * spins' placements and 23% of the fast ones', which then take a step more) */
    plane_bound ba, bb;
    if (!(two && spa != 0.0 && spb != 0.0)) {
        plane_rate(&P->a, &va, spa, 1, &ba);
        plane_rate(&P->b, &vb, spb, 1, &bb);
        q.rate = ba.rate + bb.rate;
        q.until = imp_fmin(ba.until, bb.until);
        q.rise1 = ba.rise1 + bb.rise1;
        q.rise2 = ba.rise2 + bb.rise2;
        q.until2 = imp_fmin(ba.until2, bb.until2);
    }
    if (two && !P->a.plane && !P->b.plane)
        for (int k = 0; k < 2; ++k) {
            double wf = k ? spb : spa;
            if (wf == 0.0 || (face_only && k != q.face - 1)) continue;
            plane_rate(&P->a, &va, spa - wf, 0, &ba);
            plane_rate(&P->b, &vb, spb - wf, 0, &bb);
            set_frame(&q, k, imp_v3(0.0, 0.0, wf), &ba, &bb);
        }
    if (three)
        for (int k = 0; k < 2; ++k) {
            imp_vec3 wf = k ? P->b.w : P->a.w;
            if (imp_len(wf) == 0.0) continue;
            frame_rate3(&va, imp_sub(P->a.w, wf), wf, P->a.reach, &ba);
            frame_rate3(&vb, imp_sub(P->b.w, wf), wf, P->b.reach, &bb);
            set_frame(&q, k, wf, &ba, &bb);
        }
    return q;
}

/* Contact at the placement: the shapes cannot be proven apart by more than the rounding
 * (imp_overlap says they touch or overlap and the plane gap along its normal agrees, or
 * they are apart by no more than the margin); in a standing contact, they cannot be proven
 * shallower than eta. */
static int touches(const pair *P, const probe *q) {
    return q->state != IMP_OVERLAP_FAILED && q->lo + P->eta <= 0.0;
}

/* Smallest s > 0 with c + b s + h s^2 = 0 for c > 0; INFINITY when none. */
static double first_root(double c, double b, double h) {
    if (h == 0.0) return b < 0.0 ? c / -b : INFINITY;
    double disc = b * b - 4.0 * h * c;
    if (disc < 0.0) return INFINITY;
    double qq = -0.5 * (b + copysign(sqrt(disc), b));
    double r1 = qq / h, r2 = qq != 0.0 ? c / qq : INFINITY, best = INFINITY;
    if (r1 > 0.0) best = r1;
    if (r2 > 0.0 && r2 < best) best = r2;
    return best;
}

/* Largest s with g - B s - A s^2 / 2 > 0 (g > 0, B, A >= 0). */
static double motion_step(double g, double B, double A) {
    double den = B + sqrt(B * B + 2.0 * A * g);
    return den > 0.0 ? 2.0 * g / den : INFINITY;
}

/* A lower bound of the gap along a fixed direction, g + g1 s + g2 s^2 for all s >= 0 (the
 * rounding already taken off): the step it keeps positive, with *never set when it never
 * closes. */
static double line_step(double g, double g1, double g2, int *never) {
    if (!(g > 0.0)) return 0.0;
    if (g1 >= 0.0 && g2 >= 0.0) *never = 1;
    return first_root(g, g1, g2);
}

/* The gap between the slab that body x sweeps turning about its own axis (its extent along
 * the axis does not change) and the bounding sphere of body y, at frame positions qx and
 * qy, with y's velocity V and acceleration A relative to x. */
static double slab_step(const rbody *x, const rbody *y, imp_vec3 qx, imp_vec3 qy, imp_vec3 V,
                        imp_vec3 A, double err, int *never) {
    if (!x->slab || y->plane) return 0.0;
    const double eps = 8.0 * UNIT_ROUNDOFF;
    double h = imp_dot(x->axis, imp_sub(qy, qx)), up = h - x->axhi, down = x->axlo - h;
    double sg = up >= down ? 1.0 : -1.0;
    double g = imp_fmax(up, down) - y->full - err - eps * (fabs(h) + x->full);
    return line_step(g, sg * imp_dot(x->axis, V) - eps * imp_len(V),
                     0.5 * sg * imp_dot(x->axis, A) - eps * imp_len(A), never);
}

/*
 * Bounding spheres of radii summing to R whose centres are D apart and part at the constant
 * V (no relative acceleration): the first time the gap's square |D + V s|^2 - R^2 can reach
 * zero, in closed form instead of by steps of the gap over the speed (which approach a
 * glancing pass geometrically). The quadratic's coefficients are taken low by their rounding
 * (a lower polynomial), its discriminant high, and the root 2 c / (-b + sqrt(disc)) low, so
 * the step is at most the true first touch; no real root proves the spheres never meet.
 */
static double sphere_step(imp_vec3 D, imp_vec3 V, double R, double dl, double vl, int *never) {
    const double u = UNIT_ROUNDOFF;
    double c = imp_dot(D, D) - R * R - 8.0 * u * (dl * dl + R * R);
    double b = 2.0 * imp_dot(D, V) - 8.0 * u * dl * vl;
    double h = imp_dot(V, V) * (1.0 - 8.0 * u);
    if (!(c > 0.0) || !(h > 0.0)) return 0.0;
    if (b >= 0.0) { /* the gap grows from now on */
        *never = 1;
        return INFINITY;
    }
    double disc = (b * b - 4.0 * h * c) * (1.0 + 8.0 * u) + 8.0 * u * (b * b + 4.0 * h * c);
    if (disc < 0.0) { /* the least of the gap's square stays above zero */
        *never = 1;
        return INFINITY;
    }
    return 2.0 * c / (-b + sqrt(disc)) * (1.0 - 8.0 * u);
}

/*
 * The longest step from t that bounds which turning cannot move prove free: the bounding
 * spheres' gap, or against a halfspace the other body's bounding sphere above its plane,
 * and for a spinning body the slab it sweeps against the other's bounding sphere. `never`
 * set when one of them provably stays positive for all later times.
 */
static double free_step(const pair *P, double t, double err, int *never) {
    imp_vec3 qa, qb;
    frame(P, t, &qa, &qb);
    imp_vec3 V = imp_path_vel(P->dv0, P->da, t), A = P->da;
    const double eps = 8.0 * UNIT_ROUNDOFF;
    *never = 0;
    if (P->a.plane || P->b.plane) {
        const rbody *h = P->a.plane ? &P->a : &P->b, *o = P->a.plane ? &P->b : &P->a;
        /* o's lowest point above the plane: n.(q_o) - offset - reach, moving with n.v_rel */
        double sg = P->a.plane ? 1.0 : -1.0; /* v_rel is b's relative to a */
        imp_vec3 n = h->s->normal;
        imp_vec3 qo = P->a.plane ? qb : qa;
        double g = imp_dot(n, qo) - h->s->offset - o->full - err;
        return line_step(g, sg * imp_dot(n, V) - eps * imp_len(V),
                         0.5 * sg * imp_dot(n, A) - eps * imp_len(A), never);
    }
    double best = imp_fmax(slab_step(&P->a, &P->b, qa, qb, V, A, err, never),
                           slab_step(&P->b, &P->a, qb, qa, imp_neg(V), imp_neg(A), err, never));
    imp_vec3 D = imp_sub(qb, qa);
    double R = (P->a.full + P->b.full) * (1.0 + eps) + err;
    double dl = imp_len(D), vl = imp_len(V), al = imp_len(A);
    double g = dl * (1.0 - eps) - R;
    if (!(g > 0.0)) return best;
    /* |D + V s + A s^2/2|^2 - R^2: coefficients D.D - R^2, 2 D.V, V.V + D.A, V.A, A.A / 4 */
    double c1 = 2.0 * imp_dot(D, V), c2 = imp_dot(V, V) + imp_dot(D, A), c3 = imp_dot(V, A);
    if (c1 >= 2.0 * eps * dl * vl && c2 >= eps * (vl * vl + dl * al) && c3 >= eps * vl * al)
        *never = 1;
    if (al == 0.0) return imp_fmax(best, sphere_step(D, V, R, dl, vl, never));
    return imp_fmax(best, motion_step(g, vl, al));
}

/*
 * The second-order bound along q's normal held in the frame of a turning body (k = 0:
 * a's, 1: b's) instead of fixed: the gap along any unit direction is a lower bound of the
 * distance, so also along R(s) n, R(s) the frame's turn over the step (Box2D's separation
 * function along a face of one body, b2TimeOfImpact, takes its axis so; here it gives a
 * bound, not an estimate). In that frame each body turns at its spin less the frame's (the
 * frame's body not at all), which plane_rate (3D: frame_rate3) bounds, and the relative
 * position D turns
 * back: n.(R^T D)(s) = n.D + n.(V - w x D) s + r(s), |r(s)| <= M s^2 / 2 with M bounding
 * |(R^T D)''| = |A - 2 w x V + w x (w x D)| over the step, |A| + 2|w||V(s)| + w^2|D(s)|.
 * Near a contact whose feature on the frame's body is an edge (the one the other body's
 * corner meets) the frame's first-order term is the distance's exact rate, so the steps
 * converge as Newton's method does where the fixed normal's converge linearly (its edge
 * tips, raising one of its ends at the turn's rate along the whole edge).
 */
/* (the motion's magnitudes, which safe_step forms once for both frames) */
typedef struct motion_now {
    imp_vec3 v, D;     /* b's velocity and position relative to a at the placement */
    double vl, al, dl; /* |v|, |a_rel|, |D| */
} motion_now;

static double frame_step(const probe *q, int k, double ps, const motion_now *m) {
    const double eps = 16.0 * UNIT_ROUNDOFF;
    imp_vec3 w = q->fw[k], v = m->v, D = m->D;
    double wl = imp_len(w), vl = m->vl, al = m->al, dl = m->dl;
    double g1 =
        imp_dot(q->n, v) - imp_dot(q->n, imp_cross(w, D)) - eps * (vl + wl * dl) - q->frise1[k];
    /* steps up to S (finite: within a radian of the frame's turn; not the horizon, on which
     * no step before it depends: world_cast.c), M over them; then once more over twice the
     * step found, where M is smaller */
    double S = imp_fmin(q->funtil2[k], 1.0 / wl), best = 0.0;
    for (int pass = 0; pass < 2 && S > 0.0; ++pass) {
        double M = (al + 2.0 * wl * (vl + al * S) + wl * wl * (dl + (vl + 0.5 * al * S) * S)) *
                   (1.0 + eps);
        double step = imp_fmin(first_root(ps, g1, -0.5 * (M + q->frise2[k])), S);
        best = imp_fmax(best, step);
        if (!(2.0 * step < S)) break; /* the same S again: the same step */
        S = 2.0 * step;
    }
    return best;
}

/* The step that keeps d + eta > 0 from the placement q with lo + eta > 0: the larger of the
 * Lipschitz bound's and the plane bound's along q's normal (its translation part exact,
 * the turns rising at most q->rate for steps up to q->until). */
static double safe_step(const pair *P, const probe *q) {
    motion_now m;
    m.v = imp_path_vel(P->dv0, P->da, q->t);
    m.D = imp_sub(q->qb, q->qa);
    m.vl = imp_len(m.v), m.al = imp_len(P->da), m.dl = imp_len(m.D);
    double step = motion_step(q->lo + P->eta, m.vl + P->spin, m.al);
    double ps = q->sep - q->err + P->eta;
    if (ps > 0.0) {
        /* (a bound not formed, until or until2 0, proves no step) */
        double na = imp_dot(q->n, P->da);
        if (q->until > 0.0) {
            double plane = first_root(ps, imp_dot(q->n, m.v) - q->rate, 0.5 * na);
            step = imp_fmax(step, imp_fmin(plane, q->until));
        }
        if (q->until2 > 0.0) {
            double taylor = first_root(ps, imp_dot(q->n, m.v) - q->rise1, 0.5 * (na - q->rise2));
            step = imp_fmax(step, imp_fmin(taylor, q->until2));
        }
        for (int k = 0; k < 2; ++k)
            if (q->fon[k]) step = imp_fmax(step, frame_step(q, k, ps, &m));
    }
    return step * (1.0 - IMP_ROT_ROUND_ULPS * UNIT_ROUNDOFF);
}

/* The refinement width at t: the time tolerance, and no more than delta of travel; t + w
 * is a double (so the width is exactly what the refinement spans), at least one ulp past t. */
static double width(const pair *P, double t) {
    double limit = IMP_ROT_TIME_REL * imp_fmax(1.0, t), w = limit;
    double L = imp_len(imp_path_vel(P->dv0, P->da, t)) + imp_len(P->da) * w + P->spin;
    if (L * w > P->delta) w = P->delta / L;
    double t1 = t + w;
    while (t1 - t > limit && nextafter(t1, t) > t) /* t + w rounded up past the bound */
        t1 = nextafter(t1, t);
    if (!(t1 > t)) t1 = nextafter(t, INFINITY);
    return t1 - t;
}

/* The points of a placed shape within tol of its support along n: how many (the fewer, the
 * sharper the support), the first two into e (or NULL). */
static int support_feature(const shape_pts *o, imp_vec3 n, double tol, imp_vec3 *e) {
    double top = -INFINITY;
    for (size_t i = 0; i < o->n; ++i)
        top = imp_fmax_run(top, imp_dot(n, o->pts[i]));
    int c = 0;
    for (size_t i = 0; i < o->n; ++i)
        if (top - imp_dot(n, o->pts[i]) <= tol) {
            if (e && c < 2) e[c] = o->pts[i];
            ++c;
        }
    return c;
}

/* The contact point of a placement without closest points (touching within rounding, or
 * overlapping at 0), in the frame, for the normal n. 3D: the centre of the touching region
 * where the two support features share one with extent (imp_contact_region), or where two
 * edges cross the middle of their closest points. Else (and in 2D) halfway into the overlap
 * from the deepest point of the body whose support along the normal is the sharper one (a
 * vertex rather than an edge or face: the fewer points within delta of it; b on a tie) by half
 * the depth; a's when b is a halfspace, b's when a is (a halfspace has no points). So a
 * corner touching a face gives the corner, not one of the face's. */
static imp_vec3 deepest(const pair *P, const probe *q, imp_vec3 n) {
    if (P->dim == 2 && q->face && q->depth == 0.0) {
        /* 2D, touching at a face (lands): the other body alone, when its support along n is
         * one point; the face's body has two at its support, so this is the sharper one */
        const rbody *o = q->face == 1 ? &P->b : &P->a;
        imp_vec3 side = q->face == 1 ? imp_neg(n) : n, e[2];
        imp_shape so;
        body_pose(o, q->t, &so);
        shape_pts po;
        points_of(&so, 2, &po);
        if (!o->plane && support_feature(&po, side, P->delta, e) == 1)
            return imp_add(q->face == 1 ? q->qb : q->qa, farthest(&po, side));
    }
    imp_shape sa, sb;
    shape_pts pa, pb;
    pose_both(P, q->t, &sa, &sb, &pa, &pb);
    if (P->dim == 3 && sa.type != IMP_SHAPE_HALFSPACE && sb.type != IMP_SHAPE_HALFSPACE) {
        imp_vec3 c, ea[2], eb[2];
        if (imp_contact_region(&sa, q->qa, &sb, q->qb, 3, n, &c) == IMP_REGION_FOUND) return c;
        if (support_feature(&pa, n, P->delta, ea) == 2 &&
            support_feature(&pb, imp_neg(n), P->delta, eb) == 2) {
            imp_vec3 cp, cq;
            imp_closest_segments(imp_add(q->qa, ea[0]), imp_add(q->qa, ea[1]),
                                 imp_add(q->qb, eb[0]), imp_add(q->qb, eb[1]), &cp, &cq);
            return imp_scale(imp_add(imp_madd(cp, n, pa.rad), imp_madd(cq, n, -pb.rad)), 0.5);
        }
    }
    if (sb.type == IMP_SHAPE_HALFSPACE ||
        (sa.type != IMP_SHAPE_HALFSPACE && support_feature(&pa, n, P->delta, NULL) <
                                               support_feature(&pb, imp_neg(n), P->delta, NULL)))
        return imp_madd(imp_add(q->qa, farthest(&pa, n)), n, -0.5 * q->depth);
    return imp_madd(imp_add(q->qb, farthest(&pb, imp_neg(n))), n, 0.5 * q->depth);
}

/* n when it is a unit vector; else (a degenerate placement: shapes far beyond their own
 * size from the origin, whose closest features rounding has merged) the unit direction
 * of `centres` (from a to b), else of the relative velocity `rel` turned to approach
 * (-rel), else the first axis: the contract's normal is always unit length. */
static imp_vec3 unit_normal_or(imp_vec3 n, imp_vec3 centres, imp_vec3 rel) {
    double l = imp_len(n);
    if (l > 0.5 && l < 2.0) return n;
    imp_vec3 u;
    if (imp_unit_scaled(centres, &u, NULL) == 0) return u;
    if (imp_unit_scaled(imp_neg(rel), &u, NULL) == 0) return u;
    return imp_v3(1.0, 0.0, 0.0);
}

static imp_toi_result finish(const pair *P, imp_toi_state st, const probe *at, double t1) {
    imp_toi_result r = imp_toi_none(); /* (not a memset: see imp_toi_none) */
    if (st == IMP_TOI_NONE) return r;
    r.state = st;
    double t = at->t;
    r.time = t;
    r.pa = imp_path_at(P->a.m.p, P->a.m.v, P->a.m.a, t);
    r.pb = imp_path_at(P->b.m.p, P->b.m.v, P->b.m.a, t);
    /* the normal and point of the shapes at `time`: midway between the closest points, or
     * (touching within rounding, or overlapping at 0) halfway into the overlap from b's
     * deepest point; back from the frame to the world */
    r.normal = unit_normal_or(at->n, imp_sub(r.pb, r.pa), imp_sub(P->b.m.v, P->a.m.v));
    /* 3D: a box's or polyhedron's contact normal by the separating axes (the closest points'
     * direction this close to contact is GJK's tolerance's) */
    if (st == IMP_TOI_HIT && P->dim == 3 && !P->b_triangle && !P->a.plane && !P->b.plane) {
        imp_shape sa, sb;
        body_pose(&P->a, t, &sa);
        body_pose(&P->b, t, &sb);
        (void)imp_overlap_contact_normal_3d(&sa, at->qa, &sb, at->qb, &r.normal);
    }
    r.point = at->has_pts ? imp_scale(imp_add(at->ca, at->cb), 0.5) : deepest(P, at, r.normal);
    if (P->a.plane) r.point = imp_add(r.point, disp(&P->a, t));
    if (P->b.plane) r.point = imp_add(r.point, disp(&P->b, t));
    if (st == IMP_TOI_OVERLAPPING) r.depth = at->depth;
    if (st == IMP_TOI_HIT) {
        r.tolerance = t1 - t;
        r.depth = P->eta; /* in a standing contact: how deep it may be */
    }
    return r;
}

static imp_toi_result failed(imp_failure why) { return imp_toi_failed(why); }

/* A standing contact is over once a placement proves the pair apart by half its eta: a
 * gap of the rounding's size, which the next refinement may close again, does not end it
 * (else a pair parting along a touch would end it and meet it again at every width). */
static void parted(pair *P, const probe *q) {
    if (q->lo > 0.5 * P->eta) P->eta = 0.0;
}

/* 2D: the pair placed at t proven overlapping by GJK (imp_overlap_proven_2d), a contact by
 * touches()'s rule (a placement that overlaps is not apart by any margin). */
static int proven_at(pair *P, double t) {
    imp_shape sa, sb;
    shape_pts pa, pb;
    imp_vec3 qa, qb;
    pose_both(P, t, &sa, &sb, &pa, &pb);
    frame(P, t, &qa, &qb);
    imp_core2 ca = core2_of(&pa, qa), cb = core2_of(&pb, qb);
    return imp_overlap_proven_core2(&ca, &cb, core2_scale(P, qa, qb), &P->gjk);
}

/* The pair placed at t, its bodies' points read first (body_points); `last` (or NULL) the
 * pair's last placement, whose normal serves a placement within GJK's tolerance of contact
 * (measure) outside a standing contact and before the horizon. Only where its contact
 * claims nothing: a placement's touches() then only asks for a refinement, which decides
 * exactly (the refinement's own placement and one at the horizon take no hint). */
static probe ready_place(pair *P, double t, const probe *last) {
    if (!P->ready) {
        body_points(&P->a, P->dim);
        body_points(&P->b, P->dim);
        P->ready = 1;
    }
    int hint = last && last->state != IMP_OVERLAP_FAILED && P->eta == 0.0 && t < P->horizon &&
               fabs(imp_len(last->n) - 1.0) < 1e-6;
    return place(P, t, hint ? &last->n : NULL);
}

/*
 * 2D: a step from placement q to t = q->t + step that the bounds' curvature says closes the
 * gap to within the refinement's travel (a Newton-like last step: the gap's second derivative
 * bounded by K, K step^2 below L w) most likely ends at contact: when GJK proves the pair
 * overlapping at t1 = t + width(t), that is a HIT at t ([q->t, t) is the step's, contact by t1
 * GJK's proof) without a placement at t. Its normal is q's face normal (face_normal) turned
 * with the face's body to t, the face's normal there to within rounding, as a placement at t
 * would take it. 1 with *h (the hit's probe: positions, normal, no closest points) and *t1.
 */
static int lands(pair *P, const probe *q, double step, probe *h, double *t1) {
    if (P->dim != 2 || P->eta != 0.0 || P->a.plane || P->b.plane || q->face == 0 ||
        !about_z(&P->a, 2) || !about_z(&P->b, 2))
        return 0;
    double t = q->t + step, w = width(P, t);
    double wsum = fabs(P->a.w.z) + fabs(P->b.w.z), vl = imp_len(imp_path_vel(P->dv0, P->da, t));
    double L = vl + P->spin,
           K = imp_len(P->da) + 2.0 * wsum * vl + wsum * wsum * (P->a.reach + P->b.reach);
    *t1 = imp_fmin(t + w, P->horizon);
    if (!(K * step * step < L * w) || !(*t1 > t) || P->wmax * *t1 > IMP_ROT_MAX_ANGLE ||
        !proven_at(P, *t1))
        return 0;
    /* (what finish and deepest read: not a memset of the 400 bytes) */
    h->t = t;
    frame(P, t, &h->qa, &h->qb);
    double th = (q->face == 1 ? P->a.w.z : P->b.w.z) * (t - q->t);
    h->n = h->fn = turn_z(q->fn, cos(th), sin(th));
    h->face = q->face;
    h->state = IMP_OVERLAP_OVERLAPPING;
    h->has_pts = 0;
    h->depth = 0.0;
    return 1;
}

static imp_toi_result run(pair *P, const imp_stop *stop, int *stopped) {
    double t = 0.0;
    probe q; /* read only once placed (or seen): most misses never are, nor clear its 400 bytes */
    int placed = 0; /* q is the placement at t */
    int seen = 0;   /* q is a placement (at t or before) */
    /* bounding spheres (or slabs) apart at 0 leave nothing to measure there: the loop below
     * places the pair when it must (a pair that never meets, most misses, is never placed);
     * outside a standing contact its first round takes this free step (fs, never) */
    int never = 0, have_fs = P->eta == 0.0;
    double fs = have_fs ? free_step(P, 0.0, margin(P, 0.0), &never) : 0.0;
    if (!(fs > 0.0)) {
        q = ready_place(P, 0.0, NULL);
        if (q.state == IMP_OVERLAP_FAILED) return failed(q.failure);
        if (P->eta == 0.0 && q.state == IMP_OVERLAP_OVERLAPPING && q.depth > q.err &&
            q.sep <= -q.err)
            return finish(P, IMP_TOI_OVERLAPPING, &q, 0.0);
        parted(P, &q);
        placed = seen = 1;
    }
    for (unsigned long it = 1;; ++it) {
        if (it % IMP_ROT_POLL_STEPS == 0 && (*stopped = imp_stop_now(stop)) != 0)
            return failed(IMP_FAILURE_UNDECIDED);
        /* the bounding spheres (or plane), which turning does not move */
        if (!have_fs) {
            never = 0;
            fs = free_step(P, t, margin(P, t) - P->eta, &never);
        }
        have_fs = 0;
        if (never) return finish(P, IMP_TOI_NONE, &q, t);
        double w = width(P, t);
        if (fs > w) {
            if (isinf(fs) || !(fs <= P->horizon - t)) return finish(P, IMP_TOI_NONE, &q, t);
            t += fs * (1.0 - IMP_ROT_ROUND_ULPS * UNIT_ROUNDOFF);
            placed = 0;
            continue;
        }
        if (!placed) {
            if (P->wmax * t > IMP_ROT_MAX_ANGLE) return failed(IMP_FAILURE_UNDECIDED);
            q = ready_place(P, t, seen ? &q : NULL);
            if (q.state == IMP_OVERLAP_FAILED) return failed(q.failure);
            parted(P, &q);
            placed = seen = 1;
        }
        double step = q.lo + P->eta > 0.0 ? safe_step(P, &q) : 0.0;
        if (step >= w) {
            /* a bound that never reaches zero proves the rest of time free */
            if (isinf(step) || !(step <= P->horizon - t)) return finish(P, IMP_TOI_NONE, &q, t);
            probe h;
            double t1;
            if (lands(P, &q, step, &h, &t1)) return finish(P, IMP_TOI_HIT, &h, t1);
            t += step;
            placed = 0;
            continue;
        }
        /* refine: is there contact by t + w? */
        double t1 = imp_fmin(t + w, P->horizon);
        if (!(t1 > t)) { /* t is the horizon: a touch exactly there */
            return finish(P, touches(P, &q) ? IMP_TOI_HIT : IMP_TOI_NONE, &q, t);
        }
        if (P->wmax * t1 > IMP_ROT_MAX_ANGLE) return failed(IMP_FAILURE_UNDECIDED);
        /* the cheap sufficient test first: GJK's proof that the 2D pair overlaps at t1 */
        if (P->eta == 0.0 && P->dim == 2 && !P->a.plane && !P->b.plane && proven_at(P, t1))
            return finish(P, IMP_TOI_HIT, &q, t1);
        probe q1 = ready_place(P, t1, NULL); /* exact: its contact is a claim */
        if (q1.state == IMP_OVERLAP_FAILED) return failed(q1.failure);
        if (touches(P, &q1)) return finish(P, IMP_TOI_HIT, &q, t1);
        parted(P, &q1);
        t = t1;
        q = q1;
    }
}

/* The pair's length scale: positions and the shapes' reach (and a plane's offset). */
static double pair_scale(const pair *P) {
    const rbody *bs[2] = {&P->a, &P->b};
    double s = 0.0;
    for (int k = 0; k < 2; ++k)
        s = imp_fmax(s,
                     bs[k]->plane ? fabs(bs[k]->s->offset) : imp_max_abs(bs[k]->m.p) + bs[k]->full);
    return s > 0.0 ? s : 1.0;
}

imp_toi_result imp_toi_rotating_standing(const imp_toi_rotating_input *in, double standing,
                                         int *stopped) {
    assert(in && in->a && in->b && stopped);
    assert(in->dim == 2 || in->dim == 3);
    assert(in->horizon > 0.0);
    assert(!(in->a->type == IMP_SHAPE_HALFSPACE && in->b->type == IMP_SHAPE_HALFSPACE));
    *stopped = 0;
    pair P; /* every field set below (the bodies' by body_init) */
    if (body_init(&P.a, in->a, &in->ma, in->wa, in->dim) ||
        body_init(&P.b, in->b, &in->mb, in->wb, in->dim)) {
        body_free(&P.a);
        return failed(IMP_FAILURE_NOMEM);
    }
    assert(!(P.a.plane && P.a.wlen > 0.0) && !(P.b.plane && P.b.wlen > 0.0));
    assert(!in->b_triangle || (in->dim == 3 && in->b->type == IMP_SHAPE_POLYHEDRON &&
                               in->b->n_verts == 3 && P.b.wlen == 0.0 && !P.a.plane));
    P.b_triangle = in->b_triangle;
    P.ready = 0;
    P.gjk.n = 0;
    P.dim = in->dim;
    P.horizon = in->horizon;
    P.dv0 = imp_sub(in->mb.v, in->ma.v);
    P.da = imp_sub(in->mb.a, in->ma.a);
    P.spin = P.a.wlen * P.a.reach + P.b.wlen * P.b.reach;
    P.wmax = imp_fmax(P.a.wlen, P.b.wlen);
    P.delta = IMP_ROT_DEPTH_REL * pair_scale(&P);
    P.eta = standing > 0.0 ? standing : 0.0;
    margin_init(&P);
    imp_toi_result r = run(&P, in->stop, stopped);
    body_free(&P.a);
    body_free(&P.b);
    return r;
}

imp_toi_result imp_toi_rotating(const imp_toi_rotating_input *in, int *stopped) {
    return imp_toi_rotating_standing(in, 0.0, stopped);
}

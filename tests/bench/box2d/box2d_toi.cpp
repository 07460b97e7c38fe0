// box2d_toi.cpp - Box2D 2.4.1's b2TimeOfImpact behind the C interface of
// box2d_toi.h, for bench_box2d.c (make bench-box2d) and
// tests/bench/rotating/bench_rotating_peers.c (make bench-rotating-peers);
// never part of make test.
//
// What Box2D computes. b2TimeOfImpact(output, input) runs conservative
// advancement on the swept separating axis of two b2DistanceProxy shapes
// whose motion is a b2Sweep: a centre that moves linearly from c0 to c and
// an angle from a0 to a, parametrised by a fraction in [0, tMax] (tMax <= 1)
// of the step. It never aims at contact. In b2_time_of_impact.cpp:
//
//   totalRadius = proxyA.m_radius + proxyB.m_radius
//   target      = max(b2_linearSlop, totalRadius - 3 * b2_linearSlop)
//   tolerance   = 0.25 * b2_linearSlop
//
// with b2_linearSlop = 0.005 * b2_lengthUnitsPerMeter (0.005 length units in
// Debian's build, which keeps b2_lengthUnitsPerMeter = 1). Distances are the
// cores' distances (b2Distance with useRadii = false). It answers
//   e_touching  at the first t it finds with core distance within
//               target +- tolerance (also at t = 0 when the shapes start
//               within target + tolerance),
//   e_separated when the swept axis proves the cores stay farther than
//               target + tolerance up to tMax (t = tMax),
//   e_overlapped when the cores overlap at t = 0 (t = 0),
//   e_failed    when its root finder or its 20 outer iterations run out
//               (t = the last time it had advanced to safely).
// So a Box2D hit lies 0.00375 .. 0.00625 units before contact along the
// closing direction, whatever the shapes' size: at 1 unit (Box2D's metre)
// that is 0.5% of the shapes; the comparison in bench_box2d.c runs at
// several scales and reports the gaps in units of this tolerance.
//
// Radius. A b2PolygonShape carries a skin b2_polygonRadius = 2 *
// b2_linearSlop, so two Box2D polygons have totalRadius = 4 * slop and
// target = max(slop, slop) = slop: the same target as two proxies of
// radius 0, which is what this file builds. With radius 0 the core *is*
// the polygon the benchmark gives our solver, so "distance" means the same
// thing on both sides and Box2D's answer should leave a gap of
// target +- tolerance between exactly the polygons impactd sees.
//
// Motion. localCenter 0, c0 the position at t = 0 and c the position at the
// horizon, tMax = 1; box2d_toi: both angles 0 (translation only);
// box2d_toi_rotating: a0 = 0 and a = w horizon, which b2Sweep interpolates
// linearly, so the body turns about its position at the constant rate w:
// exactly impactd's motion of a turning body (core/toi_rotating.h). Box2D works in
// float: the vertices, positions and displacements are rounded to float
// here (relative 6e-8, far below the tolerance at the scales benchmarked).
#include <box2d/b2_common.h>
#include <box2d/b2_distance.h>
#include <box2d/b2_math.h>
#include <box2d/b2_settings.h>
#include <box2d/b2_time_of_impact.h>

#include "box2d_toi.h"

static bool to_proxy_vertices(const double *xy, int n, b2Vec2 out[b2_maxPolygonVertices]) {
    if (n < 1 || n > b2_maxPolygonVertices) return false;
    for (int i = 0; i < n; ++i)
        out[i].Set(static_cast<float>(xy[2 * i]), static_cast<float>(xy[2 * i + 1]));
    return true;
}

// A centre moving from p to p + v horizon while the body turns from angle 0
// to w horizon about it (b2Sweep interpolates the angle linearly: a constant
// angular velocity, any number of turns).
static b2Sweep sweep(const double p[2], const double v[2], double w, double horizon) {
    b2Sweep s;
    s.localCenter.SetZero();
    s.c0.Set(static_cast<float>(p[0]), static_cast<float>(p[1]));
    s.c.Set(static_cast<float>(p[0] + v[0] * horizon), static_cast<float>(p[1] + v[1] * horizon));
    s.a0 = 0.0f;
    s.a = static_cast<float>(w * horizon);
    s.alpha0 = 0.0f;
    return s;
}

// The b2TOIInput of the pair, as box2d_toi_rotating describes it; false when
// a vertex count is outside 1..8. The proxies point into a and b.
static bool toi_input(const double *va, int na, const double pa[2], const double vela[2],
                      double wa, const double *vb, int nb, const double pb[2],
                      const double velb[2], double wb, double horizon,
                      b2Vec2 a[b2_maxPolygonVertices], b2Vec2 b[b2_maxPolygonVertices],
                      b2TOIInput *in) {
    if (!to_proxy_vertices(va, na, a) || !to_proxy_vertices(vb, nb, b)) return false;
    in->proxyA.Set(a, na, 0.0f);
    in->proxyB.Set(b, nb, 0.0f);
    in->sweepA = sweep(pa, vela, wa, horizon);
    in->sweepB = sweep(pb, velb, wb, horizon);
    in->tMax = 1.0f;
    return true;
}

extern "C" box2d_toi_state box2d_toi_rotating(const double *va, int na, const double pa[2],
                                              const double vela[2], double wa, const double *vb,
                                              int nb, const double pb[2], const double velb[2],
                                              double wb, double horizon, double *t) {
    b2Vec2 a[b2_maxPolygonVertices], b[b2_maxPolygonVertices];
    b2TOIInput in;
    if (!toi_input(va, na, pa, vela, wa, vb, nb, pb, velb, wb, horizon, a, b, &in)) {
        *t = 0.0;
        return BOX2D_TOI_BAD_INPUT;
    }
    b2TOIOutput out;
    b2TimeOfImpact(&out, &in);
    *t = static_cast<double>(out.t) * horizon;
    switch (out.state) {
    case b2TOIOutput::e_failed: return BOX2D_TOI_FAILED;
    case b2TOIOutput::e_overlapped: return BOX2D_TOI_OVERLAPPED;
    case b2TOIOutput::e_touching: return BOX2D_TOI_TOUCHING;
    case b2TOIOutput::e_separated: return BOX2D_TOI_SEPARATED;
    case b2TOIOutput::e_unknown: break;
    }
    return BOX2D_TOI_UNKNOWN;
}

extern "C" double box2d_distance_at(const double *va, int na, const double pa[2],
                                    const double vela[2], double wa, const double *vb, int nb,
                                    const double pb[2], const double velb[2], double wb,
                                    double horizon, double t) {
    b2Vec2 a[b2_maxPolygonVertices], b[b2_maxPolygonVertices];
    b2TOIInput in;
    if (!toi_input(va, na, pa, vela, wa, vb, nb, pb, velb, wb, horizon, a, b, &in)) return -1.0;
    b2DistanceInput d;
    d.proxyA = in.proxyA;
    d.proxyB = in.proxyB;
    in.sweepA.GetTransform(&d.transformA, static_cast<float>(t / horizon));
    in.sweepB.GetTransform(&d.transformB, static_cast<float>(t / horizon));
    d.useRadii = false;
    b2SimplexCache cache;
    cache.count = 0;
    b2DistanceOutput out;
    b2Distance(&out, &cache, &d);
    return static_cast<double>(out.distance);
}

extern "C" box2d_toi_state box2d_toi(const double *va, int na, const double pa[2],
                                     const double vela[2], const double *vb, int nb,
                                     const double pb[2], const double velb[2], double horizon,
                                     double *t) {
    return box2d_toi_rotating(va, na, pa, vela, 0.0, vb, nb, pb, velb, 0.0, horizon, t);
}

extern "C" void box2d_toi_constants(double *linear_slop, double *target, double *tolerance,
                                    int *max_vertices) {
    // the formulas of b2_time_of_impact.cpp for totalRadius = 0 (see above)
    const float total_radius = 0.0f;
    *linear_slop = static_cast<double>(b2_linearSlop);
    *target = static_cast<double>(b2Max(b2_linearSlop, total_radius - 3.0f * b2_linearSlop));
    *tolerance = static_cast<double>(0.25f * b2_linearSlop);
    *max_vertices = b2_maxPolygonVertices;
}

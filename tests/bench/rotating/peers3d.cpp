// peers3d.cpp - Bullet's and FCL's continuous collision of two turning boxes
// behind the C interface of peers3d.h (make bench-rotating-peers only).
#include "peers3d.h"

#include <btBulletCollisionCommon.h>
#include <BulletCollision/NarrowPhaseCollision/btContinuousConvexCollision.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkEpaPenetrationDepthSolver.h>
#include <BulletCollision/NarrowPhaseCollision/btVoronoiSimplexSolver.h>

#include <fcl/geometry/shape/box.h>
#include <fcl/math/motion/interp_motion.h>
#include <fcl/narrowphase/continuous_collision.h>

namespace {

btTransform bt_pose(const peer_pose *p) {
    btQuaternion q(static_cast<btScalar>(p->q[1]), static_cast<btScalar>(p->q[2]),
                   static_cast<btScalar>(p->q[3]), static_cast<btScalar>(p->q[0]));
    btVector3 o(static_cast<btScalar>(p->p[0]), static_cast<btScalar>(p->p[1]),
                static_cast<btScalar>(p->p[2]));
    return btTransform(q, o);
}

// Bullet's cast result, remembering whether Bullet reported a failure.
struct CastResult : btConvexCast::CastResult {
    bool failed = false;
    void reportFailure(int, int) override { failed = true; }
};

// FCL's InterpMotion with the velocities of the step set directly: its
// constructors derive them from two transforms (at most half a turn),
// the members are protected and the motion reads nothing else.
class SpinMotion : public fcl::InterpMotion<double> {
  public:
    SpinMotion(const fcl::Transform3d &start, const double d[3], const double r[3])
        : fcl::InterpMotion<double>(start, start, fcl::Vector3d::Zero()) {
        linear_vel = fcl::Vector3d(d[0], d[1], d[2]);
        fcl::Vector3d w(r[0], r[1], r[2]);
        double s = w.norm();
        angular_vel = s;
        angular_axis = s > 0 ? fcl::Vector3d(w / s) : fcl::Vector3d::UnitX();
    }
};

fcl::Transform3d fcl_pose(const peer_pose *p) {
    fcl::Transform3d tf = fcl::Transform3d::Identity();
    tf.linear() = fcl::Quaterniond(p->q[0], p->q[1], p->q[2], p->q[3]).toRotationMatrix();
    tf.translation() = fcl::Vector3d(p->p[0], p->p[1], p->p[2]);
    return tf;
}

} // namespace

extern "C" peer_state bullet_box_toi(const double ha[3], const peer_pose *a0,
                                     const peer_pose *a1, const double hb[3],
                                     const peer_pose *b0, const peer_pose *b1,
                                     double *fraction) {
    btBoxShape a(btVector3(static_cast<btScalar>(ha[0]), static_cast<btScalar>(ha[1]),
                           static_cast<btScalar>(ha[2])));
    btBoxShape b(btVector3(static_cast<btScalar>(hb[0]), static_cast<btScalar>(hb[1]),
                           static_cast<btScalar>(hb[2])));
    a.setMargin(0);
    b.setMargin(0);
    btVoronoiSimplexSolver simplex;
    btGjkEpaPenetrationDepthSolver epa;
    btContinuousConvexCollision cast(&a, &b, &simplex, &epa);
    CastResult r;
    bool hit = cast.calcTimeOfImpact(bt_pose(a0), bt_pose(a1), bt_pose(b0), bt_pose(b1), r);
    *fraction = hit ? static_cast<double>(r.m_fraction) : 1.0;
    if (hit) return PEER_HIT;
    return r.failed ? PEER_FAILED : PEER_NONE;
}

extern "C" peer_state fcl_box_toi(const double ha[3], const peer_pose *a, const double da[3],
                                  const double ra[3], const double hb[3], const peer_pose *b,
                                  const double db[3], const double rb[3], int naive,
                                  double *fraction) {
    fcl::Box<double> ba(2 * ha[0], 2 * ha[1], 2 * ha[2]); // FCL boxes take full side lengths
    fcl::Box<double> bb(2 * hb[0], 2 * hb[1], 2 * hb[2]);
    SpinMotion ma(fcl_pose(a), da, ra), mb(fcl_pose(b), db, rb);
    fcl::ContinuousCollisionRequestd req;
    if (!naive) req.ccd_solver_type = fcl::CCDC_CONSERVATIVE_ADVANCEMENT;
    fcl::ContinuousCollisionResultd res;
    double t = fcl::continuousCollide(&ba, &ma, &bb, &mb, req, res);
    if (t < 0) {
        *fraction = 0;
        return PEER_FAILED;
    }
    *fraction = res.is_collide ? res.time_of_contact : 1.0;
    return res.is_collide ? PEER_HIT : PEER_NONE;
}

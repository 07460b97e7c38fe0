/*
 * peers3d.h - a C interface to the continuous collision of two turning
 * boxes in Bullet (btContinuousConvexCollision) and FCL (continuousCollide),
 * for bench_rotating_peers.c (tests/bench/rotating/peers3d.cpp, built only
 * by `make bench-rotating-peers`; both are benchmark-only dependencies).
 *
 * A box is given by its half extents and a pose: its centre and its
 * orientation as a unit quaternion (w, x, y, z), world from body.
 */
#ifndef IMP_BENCH_PEERS3D_H
#define IMP_BENCH_PEERS3D_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct peer_pose {
    double p[3];
    double q[4]; /* w, x, y, z */
} peer_pose;

typedef enum peer_state {
    PEER_NONE = 0, /* the peer says the boxes do not meet in the step */
    PEER_HIT,      /* ... that they meet at *fraction of the step */
    PEER_FAILED    /* the peer gave up (Bullet: reportFailure, e.g. out of iterations) */
} peer_state;

/* Bullet: btContinuousConvexCollision::calcTimeOfImpact of box a (half
 * extents ha) from pose a0 to a1 and box b from b0 to b1, boxes with
 * collision margin 0 (the exact box; Bullet's default margin rounds the
 * corners), GJK with btVoronoiSimplexSolver and btGjkEpaPenetrationDepthSolver.
 * Bullet derives each body's constant linear and angular velocity from the
 * two poses (the turn between the orientations, at most half a turn), so a
 * step must turn each body by less than half a turn to mean the motion the
 * caller has in mind. *fraction in [0, 1] on a hit. Bullet computes in
 * float (Debian's build): the poses are rounded to float. */
peer_state bullet_box_toi(const double ha[3], const peer_pose *a0, const peer_pose *a1,
                          const double hb[3], const peer_pose *b0, const peer_pose *b1,
                          double *fraction);

/* FCL: fcl::continuousCollide of fcl::Box a and b with an InterpMotion
 * each whose velocities are set directly: over the step [0, 1] the centre
 * moves from pose.p by da (linear) while the body turns about its centre by
 * the rotation vector ra (angle |ra|, any number of turns), i.e. constant
 * linear and angular velocity. naive = 0: ccd_solver_type
 * CCDC_CONSERVATIVE_ADVANCEMENT (libccd GJK); naive = 1: FCL's default
 * request, CCDC_NAIVE (num_max_iterations 10: the static test at 10 evenly
 * spaced times). Double precision. *fraction in [0, 1] on a hit. */
peer_state fcl_box_toi(const double ha[3], const peer_pose *a, const double da[3],
                       const double ra[3], const double hb[3], const peer_pose *b,
                       const double db[3], const double rb[3], int naive, double *fraction);

#ifdef __cplusplus
}
#endif

#endif

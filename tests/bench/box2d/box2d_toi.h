/*
 * box2d_toi.h - a C interface to Box2D 2.4.1's b2TimeOfImpact for two
 * convex polygons, translating or also turning (tests/bench/box2d/box2d_toi.cpp,
 * built only by `make bench-box2d` and `make bench-rotating-peers`; Box2D is a
 * benchmark-only dependency).
 *
 * Box2D's time of impact answers "when do the polygons come within its
 * target separation" (see box2d_toi.cpp), not "when do they touch": its
 * times are early by about target / closing speed, by design.
 */
#ifndef IMP_BENCH_BOX2D_TOI_H
#define IMP_BENCH_BOX2D_TOI_H

#ifdef __cplusplus
extern "C" {
#endif

/* b2TOIOutput::State, in its order */
typedef enum box2d_toi_state {
    BOX2D_TOI_UNKNOWN = 0,
    BOX2D_TOI_FAILED,     /* root finder out of iterations; t is the last safe time */
    BOX2D_TOI_OVERLAPPED, /* cores overlap at t = 0 */
    BOX2D_TOI_TOUCHING,   /* within target +- tolerance at t: Box2D's hit */
    BOX2D_TOI_SEPARATED,  /* no hit in the window; t = horizon */
    BOX2D_TOI_BAD_INPUT   /* not Box2D's: a vertex count outside 1..8 */
} box2d_toi_state;

/* One pair: polygon a with na vertices xy[2 * na] (relative to its
 * position), at position pa[2] moving with velocity vela[2]; the same for
 * b. No rotation, no acceleration. Vertex counts 1..8
 * (b2_maxPolygonVertices). Returns the state and *t in [0, horizon]
 * (Box2D's sweep fraction times the horizon). Inputs are rounded to float,
 * which Box2D computes in. */
box2d_toi_state box2d_toi(const double *va, int na, const double pa[2], const double vela[2],
                          const double *vb, int nb, const double pb[2], const double velb[2],
                          double horizon, double *t);

/* The same for polygons that also turn about their positions at the
 * constant angular velocities wa and wb (rad per time unit, counter-clockwise
 * positive; any number of turns within the horizon): b2Sweep from angle 0
 * to w horizon. */
box2d_toi_state box2d_toi_rotating(const double *va, int na, const double pa[2],
                                   const double vela[2], double wa, const double *vb, int nb,
                                   const double pb[2], const double velb[2], double wb,
                                   double horizon, double *t);

/* Box2D's own distance (b2Distance, no radii) between the two polygons
 * placed as their b2Sweeps of box2d_toi_rotating place them at time t:
 * 0 when Box2D finds them overlapping. -1 on a bad vertex count. */
double box2d_distance_at(const double *va, int na, const double pa[2], const double vela[2],
                         double wa, const double *vb, int nb, const double pb[2],
                         const double velb[2], double wb, double horizon, double t);

/* Box2D's constants for this pair type (both proxies of radius 0):
 * b2_linearSlop, the separation b2TimeOfImpact aims at, its tolerance
 * about that target, and b2_maxPolygonVertices. */
void box2d_toi_constants(double *linear_slop, double *target, double *tolerance, int *max_vertices);

#ifdef __cplusplus
}
#endif

#endif

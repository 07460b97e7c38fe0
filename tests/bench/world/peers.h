/*
 * peers.h - Embree 3 and Bullet on a triangle mesh, behind a C interface,
 * for bench_world_peers.c (benchmark only; make bench-world-peers).
 */
#ifndef IMP_BENCH_WORLD_PEERS_H
#define IMP_BENCH_WORLD_PEERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct peer_hit {
    int hit;
    double t; /* along the ray's unit direction, or the cast's fraction of its sweep */
} peer_hit;

/* Embree: a scene of one triangle mesh (float vertices, as Embree stores them). */
void *embree_build(const double *verts, size_t n_verts, const uint32_t *tris, size_t n_tris);
/* The closest hit of a ray (unit direction) within max_t (rtcIntersect1). */
peer_hit embree_ray(void *scene, const double o[3], const double d[3], double max_t);
void embree_free(void *scene);

/* Bullet: a btBvhTriangleMeshShape in a collision world. */
void *bullet_build(const double *verts, size_t n_verts, const uint32_t *tris, size_t n_tris);
/* The closest hit of the segment o + t d, t in [0, max_t] (rayTest, ClosestRayResultCallback). */
peer_hit bullet_ray(void *world, const double o[3], const double d[3], double max_t);
/* A sphere of `radius` swept from `from` to `to` (convexSweepTest): hit and fraction. */
peer_hit bullet_sphere_sweep(void *world, double radius, const double from[3], const double to[3]);
/* A capsule along y (segment from -half_height to +half_height, rounded by
 * radius) swept the same way, without turning. */
peer_hit bullet_capsule_sweep(void *world, double radius, double half_height, const double from[3],
                              const double to[3]);
void bullet_free(void *world);

#ifdef __cplusplus
}
#endif

#endif

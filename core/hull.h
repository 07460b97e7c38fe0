/*
 * hull.h - the convex hull of a set of 3D points (a polyhedron's shape).
 *
 * The hull is returned as polygonal faces (coplanar triangles merged),
 * their outward unit normals, the edges with the two faces that meet at
 * each, and the unique edge directions (parallel edges once): what the
 * separating axis test of core/overlap_sat.c needs.
 *
 * Memory: imp_hull_build allocates the hull (malloc), imp_hull_build_in in
 * the caller's buffer first; the caller frees it with imp_hull_destroy,
 * which accepts NULL. Nothing is kept between calls.
 * Thread-safety: no global state; concurrent calls on different outputs
 * are safe.
 */
#ifndef IMP_CORE_HULL_H
#define IMP_CORE_HULL_H

#include <stddef.h>

#include "failure.h"
#include "vec.h"

/* "no face" in imp_hull_edge.face[1] (an edge the merge left with one face) */
#define IMP_HULL_NONE ((size_t)-1)

typedef struct imp_hull_edge {
    size_t v[2];    /* hull vertex indices; v[0] -> v[1] runs counter-clockwise in face[0] */
    size_t face[2]; /* the two faces meeting at the edge (face[1] is the other side) */
} imp_hull_edge;

typedef struct imp_hull {
    size_t n_verts;
    imp_vec3 *verts; /* hull vertices: copies of input points */
    size_t *input;   /* input[i]: index of verts[i] in the input array */
    size_t n_faces;
    size_t *face_start; /* face f's vertex loop is face_verts[face_start[f] .. face_start[f+1]) */
    size_t *face_verts; /* hull vertex indices, counter-clockwise seen from outside */
    imp_vec3 *normals;  /* outward unit normal of each face */
    double *offsets;    /* normals[f] . x <= offsets[f] for every point of the hull */
    size_t n_edges;
    imp_hull_edge *edges;
    size_t n_dirs;
    imp_vec3 *dirs; /* unit edge directions, parallel (or antiparallel) ones once */
    const void *arena_lo, *arena_hi; /* imp_hull_build_in's buffer, which nothing frees */
} imp_hull;

typedef enum imp_hull_status {
    IMP_HULL_OK = 0,
    IMP_HULL_NOMEM,     /* an allocation failed; *out is NULL */
    IMP_HULL_DEGENERATE /* fewer than 4 points off one plane (within IMP_HULL_PLANE_REL) */
} imp_hull_status;

/*
 * The convex hull of p[0..n) (n <= IMP_SHAPE_MAX_VERTICES is what the
 * service passes; any n works). On IMP_HULL_OK *out holds a hull with
 * V - E + F = 2, every input point within IMP_HULL_PLANE_REL of the scale
 * of being inside every face plane, every vertex an input point, and no
 * vertex where only two faces meet (points in the middle of an edge or a
 * face are not vertices). On failure *out is NULL and *err (when err is
 * not NULL) holds the status and a message.
 */
imp_hull_status imp_hull_build(const imp_vec3 *p, size_t n, imp_hull **out, imp_error *err);

/* The same, with the working memory and the hull itself taken from buf[0..bytes) (aligned
 * for any type) as long as it lasts, then from malloc: the hull of a few dozen points needs
 * no allocation in a buffer of IMP_HULL_SCRATCH_BYTES. The hull lies (partly) in buf:
 * imp_hull_destroy it before buf goes (it frees only what came from malloc). */
#define IMP_HULL_SCRATCH_BYTES 98304
imp_hull_status imp_hull_build_in(const imp_vec3 *p, size_t n, void *buf, size_t bytes,
                                  imp_hull **out, imp_error *err);

/* Frees a hull from imp_hull_build; accepts NULL. */
void imp_hull_destroy(imp_hull *h);

/* The memory a hull holds (bytes; 0 for NULL). */
size_t imp_hull_bytes(const imp_hull *h);

/*
 * Whether points p[0..n) make a polyhedron the solvers accept: they span
 * 3D (imp_polyhedron_check) and have a hull (imp_hull_build), the hull the
 * solvers build being the judge (the flatness check alone measures from
 * other planes). IMP_HULL_OK, or the status of the first test that fails
 * with *err (when not NULL) filled. keep: NULL, or where the judged hull goes
 * on IMP_HULL_OK (the caller's to destroy; NULL otherwise).
 */
imp_hull_status imp_polyhedron_validate(const imp_vec3 *p, size_t n, imp_hull **keep,
                                        imp_error *err);

#endif

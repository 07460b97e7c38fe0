/*
 * shape.h - the shapes of the contract, in body-local coordinates, and
 * their validation.
 *
 * A shape is a tagged value: only the fields of its type are meaningful.
 * Every shape but the halfspace is a convex core (a point, a segment, a
 * polygon, a box or a polyhedron) rounded by a radius (spheres and
 * capsules; 0 for the rest), which is how the solvers treat them.
 *
 * Memory: a polygon's or polyhedron's vertices are malloc'd by whoever
 * fills the shape (api/ decoding) and freed by imp_shape_free, which
 * accepts a shape without vertices; so are a polyhedron's prepared hull
 * and a polygon's prepared edge normals (imp_shape_prepare). Everything
 * else is by value: a copy of a shape shares its vertices, hull and
 * normals with the original.
 * Thread-safety: plain data and pure functions.
 */
#ifndef IMP_CORE_SHAPE_H
#define IMP_CORE_SHAPE_H

#include <stddef.h>

#include "vec.h"

/* Most vertices of one polygon or polyhedron (count). The solvers look at
 * every vertex pair in the worst case; 4096 keeps one request in the
 * milliseconds, far above any game collision shape (Box2D caps polygons
 * at 8 vertices). */
#define IMP_SHAPE_MAX_VERTICES 4096

typedef enum imp_shape_type {
    IMP_SHAPE_SPHERE = 0,
    IMP_SHAPE_BOX,
    IMP_SHAPE_POLYGON,    /* 2D only */
    IMP_SHAPE_POLYHEDRON, /* 3D only */
    IMP_SHAPE_CAPSULE,
    IMP_SHAPE_SEGMENT,
    IMP_SHAPE_HALFSPACE /* static bodies only */
} imp_shape_type;

/* A rotation as a unit quaternion w + xi + yj + zk. */
typedef struct imp_quat {
    double w, x, y, z;
} imp_quat;

struct imp_hull;

typedef struct imp_shape {
    imp_shape_type type;
    double radius;   /* sphere, capsule (>= 0); 0 otherwise */
    imp_vec3 half;   /* box: half extents, each > 0 (z 0 in 2D) */
    imp_quat rot;    /* box: unit rotation; identity when none; 2D: about z */
    imp_vec3 a, b;   /* capsule, segment: end points */
    imp_vec3 normal; /* halfspace: unit normal */
    double offset;   /* halfspace: the solid is {x : normal . x <= offset} */
    imp_vec3 *verts; /* polygon: counter-clockwise, convex; polyhedron: the points */
    size_t n_verts;
    /* polyhedron: the hull of verts (imp_shape_prepare), or NULL: each query that needs it
     * builds its own (an allocation per query). imp_shape_rotate drops it from the shape it
     * turns (a copy's hull is its original's, and no longer fits). */
    struct imp_hull *hull;
    /* polygon: the outward unit normal of each edge k -> k+1 (imp_shape_prepare: computed
     * once, as Box2D's polygons keep theirs), for the points at normals_of; the solvers use
     * them only while verts is normals_of (imp_shape_polygon_normals), and imp_shape_rotate
     * drops them. Each is imp_normalize_or(v[k+1].y - v[k].y, v[k].x - v[k+1].x), (0, 0)
     * for an edge of no length. With them, reach: the largest |v[k]| (imp_points_reach), so a
     * pair whose bounds never meet is a miss without a look at the points. */
    imp_vec3 *normals;
    const imp_vec3 *normals_of;
    double reach;
} imp_shape;

/* Frees the vertices, the hull and the normals (those it has) and clears them; accepts
 * NULL. */
void imp_shape_free(imp_shape *s);

/* Frees what imp_shape_prepare made (a hull, normals) and clears it, the vertices left as
 * they are (a shape whose points are the caller's); accepts NULL. */
void imp_shape_unprepare(imp_shape *s);

/* Gives a polyhedron its hull, built once for every query on the shape (a hull the shape
 * already has is kept), and a polygon its edge normals (likewise); nothing for other types.
 * 0, or -1 when memory ran out. A polyhedron whose points have no hull keeps none: its
 * queries fail as they would. */
int imp_shape_prepare(imp_shape *s);

/* The largest distance of n points from the origin (0 for none): a shape's reach about its
 * reference point. */
double imp_points_reach(const imp_vec3 *v, size_t n);

/* A polygon's prepared edge normals for its points as they are, or NULL (not prepared, or
 * prepared for other points). In line, as imp_shape_polygon_vertices: both are asked on
 * every polygon pair (make bench-box2d: two calls to another file each, 3% of a pair). */
static inline const imp_vec3 *imp_shape_polygon_normals(const imp_shape *s) {
    return s->type == IMP_SHAPE_POLYGON && s->normals && s->normals_of == s->verts ? s->normals
                                                                                   : NULL;
}

/* The type's contract name ("sphere", "box", ...). */
const char *imp_shape_type_name(imp_shape_type t);

/* Rotation by `angle` radians about z (the 2D box rotation). */
imp_quat imp_quat_from_angle(double angle);

/* q / |q|; returns 0, or -1 when q has zero (or non-finite) length. */
int imp_quat_normalize(imp_quat q, imp_quat *out);

/* v rotated by the unit quaternion q. */
imp_vec3 imp_quat_rotate(imp_quat q, imp_vec3 v);

/* The rotation p after q (p q, Hamilton product). */
imp_quat imp_quat_mul(imp_quat p, imp_quat q);

/* The rotation by the rotation vector w (axis w / |w|, angle |w| radians). */
imp_quat imp_quat_from_rotvec(imp_vec3 w);

/* Turns shape s about its body's position by the unit quaternion q (2D: a
 * rotation about z): a box's rotation becomes q after it, vertices and a
 * capsule's or segment's ends are rotated, a halfspace's normal too (its
 * offset stays: a halfspace has no position to turn about). A sphere is
 * unchanged. Vertices are rotated in place. */
void imp_shape_rotate(imp_shape *s, imp_quat q);

/* A 2D box's four corners about its position, counter-clockwise (imp_shape_polygon_vertices'
 * box). */
void imp_shape_box_corners(const imp_shape *s, imp_vec3 out[4]);

/* A 2D box's or polygon's counter-clockwise vertices, relative to the
 * body: a box's four are written to box_buf, a polygon's are its own
 * array. Returns the count (*out set), or 0 for other types. */
static inline size_t imp_shape_polygon_vertices(const imp_shape *s, imp_vec3 box_buf[4],
                                                const imp_vec3 **out) {
    if (s->type == IMP_SHAPE_POLYGON) {
        *out = s->verts;
        return s->n_verts;
    }
    if (s->type != IMP_SHAPE_BOX) return 0;
    imp_shape_box_corners(s, box_buf);
    *out = box_buf;
    return 4;
}

/* The convex core of a sphere, capsule, segment, 2D box or polygon and its
 * radius: 1 vertex (sphere, or a segment of zero length), 2 (segment ends)
 * or the polygon's counter-clockwise vertices; small cores go to buf.
 * Returns the count (*out, *radius set), or 0 for a halfspace, polyhedron
 * or 3D box. */
size_t imp_shape_core(const imp_shape *s, int dim, imp_vec3 buf[4], const imp_vec3 **out,
                      double *radius);

/* Points whose convex hull, rounded by *radius, is the shape: its core in
 * 2D (as imp_shape_core), a 3D box's 8 corners (into buf) or a
 * polyhedron's points. Returns the count, 0 for a halfspace. */
size_t imp_shape_points(const imp_shape *s, int dim, imp_vec3 buf[8], const imp_vec3 **out,
                        double *radius);

/* The shape's extent about its body's position: the largest distance of its points
 * (imp_shape_points) from the position plus its radius; 0 for a point and a halfspace. */
double imp_shape_extent(const imp_shape *s, int dim);

/* Whether turning at w moves some point of the shape: w is not zero and s is neither a
 * sphere (its turn moves nothing) nor a halfspace; 0 for NULL (a scene's sphere). */
int imp_shape_turns(const imp_shape *s, imp_vec3 w);

/* The shape's own bounds about its position (not a halfspace's): the hull of its points
 * grown by its radius, exact for every shape (a rotated box's corners, a polygon's or
 * polyhedron's vertices, a capsule's ends); 2D: z 0. */
void imp_shape_bounds(const imp_shape *s, int dim, imp_vec3 *lo, imp_vec3 *hi);

/* The box about the position that holds the shape (not a halfspace) in every orientation
 * it takes turning about its position at angular velocity w (world axes; 2D: about z) over
 * [0, horizon] (finite): the tightest per axis of three conservative ones (shape.c).
 * w = 0, or a sphere: imp_shape_bounds. */
void imp_shape_turning_bounds(const imp_shape *s, imp_vec3 w, double horizon, int dim, imp_vec3 *lo,
                              imp_vec3 *hi);

typedef enum imp_polygon_status {
    IMP_POLYGON_OK = 0,
    IMP_POLYGON_REPEATED, /* a vertex equals the one before it */
    IMP_POLYGON_FLAT,     /* all vertices on one line: no area */
    IMP_POLYGON_NONCONVEX /* the turn flips, or the boundary winds more than once */
} imp_polygon_status;

/*
 * Checks that v[0..n) (n >= 3, z ignored) is a convex polygon in either
 * winding and reorders it counter-clockwise in place. Convexity is read
 * from the sign of the cross products of consecutive edges: all turns must
 * share the sign of the polygon's area (collinear vertices, turns within
 * IMP_POLYGON_TURN_REL of zero, are accepted), and the edge directions
 * must make exactly one full turn, which rules out star polygons. On
 * failure *bad is the index (in the input order) of the offending vertex:
 * the repeated one, or the vertex where the turn flips.
 */
imp_polygon_status imp_polygon_normalize(imp_vec3 *v, size_t n, size_t *bad);

/*
 * Checks that points p[0..n) span 3D: at least 4 of them not coplanar
 * (within IMP_POLYHEDRON_FLAT_REL of the points' extent). Returns 0, or -1
 * when they are fewer than 4 distinct points or all lie in one plane.
 */
int imp_polyhedron_check(const imp_vec3 *p, size_t n);

#endif

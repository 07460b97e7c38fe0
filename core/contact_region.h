/*
 * contact_region.h - where two placed shapes touch along their contact
 * normal: the centre of the contact region (the contact point of POST
 * /v1/respond when the request gives none).
 *
 * Thread-safety: pure function. Shapes with many points at the touching
 * face (polygons, polyhedra) make it allocate a working set for the call,
 * freed before it returns; small shapes (boxes, capsules) need none.
 */
#ifndef IMP_CORE_CONTACT_REGION_H
#define IMP_CORE_CONTACT_REGION_H

#include "shape.h"
#include "vec.h"

/* Support points within this fraction of a shape's extent (the largest distance of its
 * points from its position, plus its radius) of the farthest along the normal make up its
 * touching feature: a face turned 1e-9 radians from the normal's plane is still flat. */
#define IMP_REGION_FLAT_REL 1e-9

typedef enum imp_region_status {
    IMP_REGION_POINT = 0, /* the features meet at a vertex or a crossing of edges */
    IMP_REGION_FOUND,     /* a region with extent: *centre written */
    IMP_REGION_NOMEM      /* allocating the working set failed */
} imp_region_status;

/*
 * Shapes a and b placed at pa and pb (a halfspace ignores its position; not
 * both halfspaces) in `dim` (2 or 3) dimensions, touching or overlapping
 * along the unit normal n from a towards b (imp_overlap's normal; for a
 * halfspace, parallel to its own normal, else POINT). Each shape's
 * touching feature is its set of support points along n (for a) or -n
 * (for b), within IMP_REGION_FLAT_REL: a vertex, an edge (2D: a side; a
 * capsule's or segment's axis) or a face (3D), and all of a halfspace's
 * plane. When the two features, projected on the plane across n, share a
 * segment (2D) or a polygon or segment (3D) longer than
 * IMP_REGION_FLAT_REL of the shapes' extents, *centre is its centre (2D:
 * the middle of the segment; 3D: the area centroid of the polygon, or the
 * middle of a segment) on the mid-plane halfway between the two features.
 * Otherwise POINT (*centre not written): the caller keeps the closest
 * points' midpoint.
 */
imp_region_status imp_contact_region(const imp_shape *a, imp_vec3 pa, const imp_shape *b,
                                     imp_vec3 pb, int dim, imp_vec3 n, imp_vec3 *centre);

#endif

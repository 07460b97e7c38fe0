/*
 * inertia.h - mass properties of the contract's shapes: the inertia tensor
 * of a uniform solid about the body's position, and 3x3 helpers.
 *
 * Thread-safety: pure functions; imp_inertia_shape allocates only for a
 * polyhedron (its hull) and frees before returning.
 */
#ifndef IMP_CORE_INERTIA_H
#define IMP_CORE_INERTIA_H

#include "shape.h"

/* A 3x3 matrix, row-major: m[3 * row + col]. */
typedef struct imp_mat3 {
    double m[9];
} imp_mat3;

typedef enum imp_inertia_status {
    IMP_INERTIA_OK = 0,
    IMP_INERTIA_NO_VOLUME, /* a point, or a 3D segment: some moment is 0, give `inertia` */
    IMP_INERTIA_NOMEM,
    IMP_INERTIA_UNSUPPORTED /* a halfspace: no finite solid */
} imp_inertia_status;

/*
 * The inertia tensor about the body's position (the shape's origin) of a
 * uniform solid of the shape s as given (already turned by the body's
 * orientation, so the tensor is in the world frame) and total mass `mass`.
 * 2D: only out->m[8] (Izz, the polar moment) is non-zero. The tensor is
 * full (not diagonal) for turned shapes and shapes not centred on the
 * position.
 */
imp_inertia_status imp_inertia_shape(const imp_shape *s, int dim, double mass, imp_mat3 *out);

/* R diag(moments) R^T for the unit rotation q (principal moments in the body frame). */
imp_mat3 imp_mat3_principal(imp_quat q, imp_vec3 moments);

/* The inverse of the symmetric positive definite m (adjugate over the determinant);
 * returns -1 when m is not positive definite (or not finite). 2D (dim 2): only m[8]. */
int imp_mat3_inverse_spd(const imp_mat3 *m, int dim, imp_mat3 *out);

/* m v */
imp_vec3 imp_mat3_apply(const imp_mat3 *m, imp_vec3 v);

#endif

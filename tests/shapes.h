/*
 * shapes.h - shape and motion constructors for the unit tests (header-only;
 * unused ones cost nothing).
 */
#ifndef IMP_TEST_SHAPES_H
#define IMP_TEST_SHAPES_H

#include <math.h>
#include <stddef.h>

#include "core/shape.h"
#include "core/toi.h"

static inline imp_shape sphere(double r) {
    imp_shape s = {.type = IMP_SHAPE_SPHERE, .radius = r};
    return s;
}

/* a 2D box turned by `angle` radians */
static inline imp_shape box2(double hx, double hy, double angle) {
    imp_shape s = {
        .type = IMP_SHAPE_BOX, .half = imp_v3(hx, hy, 0), .rot = imp_quat_from_angle(angle)};
    return s;
}

static inline imp_shape box3(double hx, double hy, double hz, imp_quat rot) {
    imp_shape s = {.type = IMP_SHAPE_BOX, .half = imp_v3(hx, hy, hz), .rot = rot};
    return s;
}

/* a capsule, or a segment when r is 0 */
static inline imp_shape capsule(imp_vec3 a, imp_vec3 b, double r) {
    imp_shape s = {
        .type = r > 0 ? IMP_SHAPE_CAPSULE : IMP_SHAPE_SEGMENT, .a = a, .b = b, .radius = r};
    return s;
}

static inline imp_shape halfspace(imp_vec3 n, double offset) {
    imp_shape s = {.type = IMP_SHAPE_HALFSPACE, .normal = n, .offset = offset};
    return s;
}

static inline imp_motion motion3(imp_vec3 p, imp_vec3 v, imp_vec3 a) {
    imp_motion m = {p, v, a};
    return m;
}

static inline imp_motion motion2(double px, double py, double vx, double vy, double ax, double ay) {
    return motion3(imp_v3(px, py, 0), imp_v3(vx, vy, 0), imp_v3(ax, ay, 0));
}

/* The largest distance of a shape's points from its body's position (a
 * halfspace: 0): the radius of the circle or sphere about the position
 * that holds it, however it turns. */
static inline double shape_reach(const imp_shape *s, int dim) { return imp_shape_extent(s, dim); }

#endif

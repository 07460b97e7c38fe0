/*
 * filter.h - which bodies may touch: collision filtering by category, mask
 * and group (Box2D's rule, b2ShouldCollide).
 *
 * Two bodies can touch iff (a.category & b.mask) != 0 and
 * (b.category & a.mask) != 0, except that two bodies with the same non-zero
 * group always touch when the group is positive and never when it is
 * negative. Core inputs hold a filter by pointer, NULL meaning the default
 * (category 1, every mask bit, group 0), so that a zeroed input makes every
 * pair touch as before filters existed.
 *
 * Thread-safety: pure functions.
 */
#ifndef IMP_CORE_FILTER_H
#define IMP_CORE_FILTER_H

#include <stdint.h>

typedef struct imp_filter {
    uint32_t category; /* the bits this body is */
    uint32_t mask;     /* the bits it touches */
    int32_t group;     /* 0: none; > 0: always touch the group; < 0: never */
} imp_filter;

/* The contract's default: category 1, mask all bits, group 0. */
#define IMP_FILTER_DEFAULT ((imp_filter){1u, 0xffffffffu, 0})

/* 1 when bodies with filters a and b (NULL: the default) may touch. */
static inline int imp_filter_touch(const imp_filter *a, const imp_filter *b) {
    imp_filter fa = a ? *a : IMP_FILTER_DEFAULT, fb = b ? *b : IMP_FILTER_DEFAULT;
    if (fa.group != 0 && fa.group == fb.group) return fa.group > 0;
    return (fa.category & fb.mask) != 0 && (fb.category & fa.mask) != 0;
}

/* 1 when f (NULL: the default) touches exactly what the default does. */
static inline int imp_filter_is_default(const imp_filter *f) {
    return !f || (f->category == 1u && f->mask == 0xffffffffu && f->group == 0);
}

#endif

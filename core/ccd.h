/*
 * ccd.h - exact continuous collision of moving triangles: vertex-face and
 * edge-edge queries with linear motion over t in [0, 1].
 *
 * A query holds four points at t = 0 (`start`) and t = 1 (`end`); every point
 * moves linearly between them. Vertex-face: [vertex, face0, face1, face2];
 * edge-edge: [a0, a1, b0, b1]. `hit` is exact for the doubles given: true iff
 * at some t in [0, 1] the vertex lies on the closed triangle (or the two
 * closed segments share a point), degenerate cases included (coplanar
 * motion, parallel or collinear edges, zero-area faces, points that
 * coincide). `time` is the earliest such t to IMP_CCD_TIME_ACCURACY absolute.
 *
 * Thread-safety: pure and reentrant (no global state). The exact path uses
 * GMP rationals, which allocate; GMP aborts the process when out of memory.
 * Preconditions (asserted): every coordinate finite.
 */
#ifndef IMP_CCD_H
#define IMP_CCD_H

/* Absolute accuracy of a reported contact time (unit: the query's time, [0, 1]). */
#define IMP_CCD_TIME_ACCURACY 1e-12

typedef enum imp_ccd_kind { IMP_CCD_VERTEX_FACE, IMP_CCD_EDGE_EDGE } imp_ccd_kind;

typedef struct imp_ccd_query {
    imp_ccd_kind kind;
    double start[4][3]; /* the four points at t = 0 */
    double end[4][3];   /* the same points at t = 1 */
} imp_ccd_query;

typedef struct imp_ccd_result {
    int hit;     /* 1: the primitives meet at some t in [0, 1] */
    double time; /* earliest contact time when hit, else 0 */
    int exact;   /* 1: the floating-point filter could not decide alone; GMP took part */
} imp_ccd_result;

/* The answer: the filtered fast path first, the exact path when it cannot decide. */
imp_ccd_result imp_ccd(const imp_ccd_query *q);

/* The exact path alone (GMP rationals throughout); the same answer, slower. */
imp_ccd_result imp_ccd_exact(const imp_ccd_query *q);

#endif

/*
 * hull.c - convex hull of 3D points by Quickhull.
 *
 * DESIGN
 * What: imp_hull_build, the convex hull of a polyhedron's points as
 * polygonal faces with outward normals, edges with their two faces, and
 * the unique edge directions: the axes of the 3D separating axis test.
 * How: Quickhull (Barber, Dobkin, Huhdanpaa, "The Quickhull algorithm for
 * convex hulls", ACM TOMS 22(4), 1996) on triangles. The points are
 * centred on their bounding box, and one tolerance eps = IMP_HULL_PLANE_REL
 * times their largest coordinate magnitude decides every orientation:
 *   1. a starting tetrahedron from extreme points (the farthest pair of the
 *      axis extremes, the point farthest from their line, the point
 *      farthest from that plane; none beyond eps: degenerate input);
 *   2. every point is put in the outside set of the face it is farthest
 *      above, if more than eps above; points within eps of a face (on it,
 *      duplicated, on an edge) are never outside, so they never become
 *      vertices that a later point would have to remove;
 *   3. repeatedly the farthest point of some outside set (the eye) is
 *      added: the faces it sees by more than eps, grown from its face
 *      across neighbours, are removed, their boundary (the horizon, which
 *      must be one simple loop) is coned to the eye, and their outside
 *      points are shared out among the new faces. If rounding ever makes
 *      the horizon not a simple loop (possible only for points within a
 *      few eps of several faces) the eye is dropped as if it were inside:
 *      it lies within a few eps of the hull;
 *   4. adjacent triangles are merged into one polygonal face by region
 *      growing from the largest triangle left: a neighbour joins when its
 *      vertices are within eps of the seed's plane (the seed's plane, not
 *      its neighbour's, so merging cannot drift around a gently curved
 *      surface). Each face's boundary is traced into a counter-clockwise
 *      loop; vertices where only two faces meet (points on an edge that
 *      became vertices early) are dropped from the loops;
 *   5. edges are paired from the loops (sorting their vertex pairs) and
 *      their directions deduplicated up to IMP_EDGE_PARALLEL_SIN, sorted by
 *      one component so that only a narrow window is compared.
 * Why: Quickhull only ever adds extreme points, and with one scale-relative
 * tolerance applied the same way everywhere, grids, repeated points and
 * points on faces or edges cost nothing and leave no sliver faces; merging
 * after the fact (rather than during construction as qhull does) is
 * simpler and enough because every non-convexity the construction can
 * leave is below eps. Expected O(n log n); O(n^2) at worst (n at most
 * IMP_SHAPE_MAX_VERTICES in the service).
 */
#include "hull.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape.h"
#include "tolerance.h"

#define NONE ((size_t)-1)

/* Where a build's memory comes from: the caller's buffer first (imp_hull_build_in), then
 * malloc. Blocks in the buffer are never freed one by one: the buffer goes with its
 * caller. */
typedef struct arena {
    char *buf; /* NULL: malloc only */
    size_t cap, used;
} arena;

#define ARENA_ALIGN _Alignof(max_align_t)

/* p within [lo, hi), compared as addresses (the objects are unrelated) */
static int within(const void *p, const void *lo, const void *hi) {
    return (uintptr_t)p >= (uintptr_t)lo && (uintptr_t)p < (uintptr_t)hi;
}

static int in_arena(const arena *m, const void *p) {
    return m && m->buf && within(p, m->buf, m->buf + m->cap);
}

static void *a_alloc(arena *m, size_t bytes) {
    if (m && m->buf && bytes <= m->cap) {
        size_t r = bytes < ARENA_ALIGN ? ARENA_ALIGN
                                       : (bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
        if (r <= m->cap - m->used) {
            void *p = m->buf + m->used;
            m->used += r;
            return p;
        }
    }
    return malloc(bytes ? bytes : 1);
}

static void *a_calloc(arena *m, size_t k, size_t size) {
    if (size && k > SIZE_MAX / size) return NULL;
    void *p = a_alloc(m, k * size);
    if (p) memset(p, 0, k * size);
    return p;
}

/* p (old bytes, or NULL) grown to bytes; NULL when out of memory, p then unchanged */
static void *a_realloc(arena *m, void *p, size_t old, size_t bytes) {
    if (p && !in_arena(m, p)) return realloc(p, bytes);
    void *q = a_alloc(m, bytes);
    if (q && p) memcpy(q, p, old < bytes ? old : bytes);
    return q;
}

static void a_free(const arena *m, void *p) {
    if (!in_arena(m, p)) free(p);
}

/* Sorts base[0..n) (elements of size bytes) by cmp, stably: the order glibc's qsort (a
 * merge sort) gives, so every hull is the one it was, without the buffer glibc mallocs
 * inside qsort for arrays over 1 KiB. Insertion for a few, else a bottom-up merge through
 * a buffer from m (insertion when there is none). */
#define SORT_INSERTION_MAX 16

static void insertion_sort(char *base, size_t n, size_t size,
                           int (*cmp)(const void *, const void *), char *tmp) {
    for (size_t i = 1; i < n; ++i) {
        size_t j = i;
        memcpy(tmp, base + i * size, size);
        for (; j > 0 && cmp(base + (j - 1) * size, tmp) > 0; --j)
            memcpy(base + j * size, base + (j - 1) * size, size);
        memcpy(base + j * size, tmp, size);
    }
}

static void stable_sort(arena *m, void *base_, size_t n, size_t size,
                        int (*cmp)(const void *, const void *)) {
    char *base = base_, one[64];
    if (n < 2 || size > sizeof one) return;
    char *buf = n > SORT_INSERTION_MAX ? a_alloc(m, n * size) : NULL;
    if (!buf) {
        insertion_sort(base, n, size, cmp, one);
        return;
    }
    char *from = base, *to = buf;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) { /* the left one first on a tie: stable */
                if (cmp(from + i * size, from + j * size) <= 0)
                    memcpy(to + k++ * size, from + i++ * size, size);
                else
                    memcpy(to + k++ * size, from + j++ * size, size);
            }
            if (i < mid) memcpy(to + k * size, from + i * size, (mid - i) * size);
            if (j < hi) memcpy(to + (k + mid - i) * size, from + j * size, (hi - j) * size);
        }
        char *t = from;
        from = to;
        to = t;
    }
    if (from != base) memcpy(base, from, n * size);
    a_free(m, buf);
}

typedef struct tri {
    size_t v[3];
    size_t nb[3]; /* the face across edge v[i] -> v[i+1] */
    imp_vec3 n;   /* outward unit normal */
    double d;     /* plane offset: n . x = d */
    size_t out;   /* head of the outside point list (through builder.next) */
    size_t far;   /* farthest outside point */
    double far_d;
    unsigned seen, vis; /* stamps of the current eye's visibility search */
    int alive;
} tri;

typedef struct szvec {
    size_t *a;
    size_t n, cap;
    arena *mem;
} szvec;

typedef struct builder {
    const imp_vec3 *p;
    size_t n;
    imp_vec3 *q;  /* the points, centred */
    size_t *next; /* outside lists */
    size_t *slot; /* per point: horizon or boundary edge starting there */
    tri *t;
    size_t nt, cap;
    double eps;
    unsigned stamp;
    szvec pending, stack, vis, hz_a, hz_b, hz_out, order, fresh;
    arena *mem;
} builder;

static int push(szvec *v, size_t x) {
    if (v->n == v->cap) {
        size_t c = v->cap ? 2 * v->cap : 16;
        size_t *a = a_realloc(v->mem, v->a, v->cap * sizeof *a, c * sizeof *a);
        if (!a) return -1;
        v->a = a;
        v->cap = c;
    }
    v->a[v->n++] = x;
    return 0;
}

static double dist(const builder *b, size_t f, size_t i) {
    return imp_dot(b->t[f].n, b->q[i]) - b->t[f].d;
}

/* Appends triangle (v0, v1, v2); NONE when out of memory. */
static size_t new_tri(builder *b, size_t v0, size_t v1, size_t v2) {
    if (b->nt == b->cap) {
        size_t c = b->cap ? 2 * b->cap : 8 * b->n + 16; /* about what a build makes */
        tri *t = a_realloc(b->mem, b->t, b->cap * sizeof *t, c * sizeof *t);
        if (!t) return NONE;
        b->t = t;
        b->cap = c;
    }
    tri *t = &b->t[b->nt];
    memset(t, 0, sizeof *t);
    t->v[0] = v0, t->v[1] = v1, t->v[2] = v2;
    t->nb[0] = t->nb[1] = t->nb[2] = NONE;
    imp_vec3 a = b->q[v0], c = b->q[v1], e = b->q[v2];
    t->n = imp_normalize_or(imp_cross(imp_sub(c, a), imp_sub(e, a)), imp_v3(0, 0, 0));
    t->d = imp_dot(t->n, imp_scale(imp_add(imp_add(a, c), e), 1.0 / 3.0));
    t->out = t->far = NONE;
    t->far_d = 0.0;
    t->alive = 1;
    return b->nt++;
}

/* Puts point i in the outside set of whichever of faces[0..nf) it is
 * farthest above by more than eps; 0, or -1 when out of memory. */
static int assign(builder *b, size_t i, const size_t *faces, size_t nf) {
    size_t best = NONE;
    double bd = b->eps;
    for (size_t k = 0; k < nf; ++k) {
        double d = dist(b, faces[k], i);
        if (d > bd) {
            bd = d;
            best = faces[k];
        }
    }
    if (best == NONE) return 0;
    tri *t = &b->t[best];
    if (t->out == NONE && push(&b->pending, best) != 0) return -1;
    b->next[i] = t->out;
    t->out = i;
    if (t->far == NONE || bd > t->far_d) {
        t->far = i;
        t->far_d = bd;
    }
    return 0;
}

/* Index of the edge v[i] -> v[i+1] of face f that runs from x to y. */
static size_t edge_index(const tri *t, size_t x, size_t y) {
    for (size_t i = 0; i < 3; ++i)
        if (t->v[i] == x && t->v[(i + 1) % 3] == y) return i;
    return NONE;
}

/* Starting tetrahedron; 0, 1 when the points do not span 3D, -1 on memory. */
static int start(builder *b) {
    const imp_vec3 *q = b->q;
    size_t ext[6];
    for (int k = 0; k < 6; ++k)
        ext[k] = 0;
    for (size_t i = 1; i < b->n; ++i) {
        const double *c = &q[i].x, *lo0 = &q[ext[0]].x, *lo1 = &q[ext[1]].x, *lo2 = &q[ext[2]].x;
        const double *hi0 = &q[ext[3]].x, *hi1 = &q[ext[4]].x, *hi2 = &q[ext[5]].x;
        if (c[0] < lo0[0]) ext[0] = i;
        if (c[1] < lo1[1]) ext[1] = i;
        if (c[2] < lo2[2]) ext[2] = i;
        if (c[0] > hi0[0]) ext[3] = i;
        if (c[1] > hi1[1]) ext[4] = i;
        if (c[2] > hi2[2]) ext[5] = i;
    }
    size_t i0 = 0, i1 = 0;
    double best = 0.0;
    for (int x = 0; x < 6; ++x)
        for (int y = x + 1; y < 6; ++y) {
            double d = imp_len(imp_sub(q[ext[x]], q[ext[y]]));
            if (d > best) {
                best = d;
                i0 = ext[x];
                i1 = ext[y];
            }
        }
    if (!(best > b->eps)) return 1;
    imp_vec3 u = imp_scale(imp_sub(q[i1], q[i0]), 1.0 / best);
    size_t i2 = 0;
    best = 0.0;
    for (size_t i = 0; i < b->n; ++i) {
        double d = imp_len(imp_cross(imp_sub(q[i], q[i0]), u));
        if (d > best) {
            best = d;
            i2 = i;
        }
    }
    if (!(best > b->eps)) return 1;
    imp_vec3 nrm =
        imp_normalize_or(imp_cross(imp_sub(q[i1], q[i0]), imp_sub(q[i2], q[i0])), imp_v3(0, 0, 0));
    size_t i3 = 0;
    best = 0.0;
    for (size_t i = 0; i < b->n; ++i) {
        double d = fabs(imp_dot(nrm, imp_sub(q[i], q[i0])));
        if (d > best) {
            best = d;
            i3 = i;
        }
    }
    if (!(best > b->eps)) return 1;
    size_t v[4] = {i0, i1, i2, i3};
    size_t f[4];
    for (int k = 0; k < 4; ++k) {
        /* the face without vertex k, oriented away from it */
        size_t a = v[(k + 1) % 4], c = v[(k + 2) % 4], e = v[(k + 3) % 4];
        imp_vec3 n = imp_cross(imp_sub(q[c], q[a]), imp_sub(q[e], q[a]));
        if (imp_dot(n, imp_sub(q[v[k]], q[a])) > 0) {
            size_t s = c;
            c = e;
            e = s;
        }
        f[k] = new_tri(b, a, c, e);
        if (f[k] == NONE) return -1;
    }
    for (int x = 0; x < 4; ++x)
        for (size_t i = 0; i < 3; ++i) {
            tri *t = &b->t[f[x]];
            for (int y = 0; y < 4; ++y) {
                size_t j = edge_index(&b->t[f[y]], t->v[(i + 1) % 3], t->v[i]);
                if (y != x && j != NONE) t->nb[i] = f[y];
            }
        }
    for (size_t i = 0; i < b->n; ++i)
        if (i != i0 && i != i1 && i != i2 && i != i3 && assign(b, i, f, 4) != 0) return -1;
    return 0;
}

/* Removes point x from face f's outside set and refreshes its farthest. */
static void drop_point(builder *b, size_t f, size_t x) {
    tri *t = &b->t[f];
    size_t *link = &t->out;
    while (*link != NONE && *link != x)
        link = &b->next[*link];
    if (*link == x) *link = b->next[x];
    t->far = NONE;
    t->far_d = 0.0;
    for (size_t i = t->out; i != NONE; i = b->next[i]) {
        double d = dist(b, f, i);
        if (t->far == NONE || d > t->far_d) {
            t->far = i;
            t->far_d = d;
        }
    }
}

/* Adds the farthest point of face f's outside set. 0, 1 when the horizon
 * is not a simple loop (nothing changed), -1 when out of memory. */
static int add_eye(builder *b, size_t f) {
    size_t eye = b->t[f].far;
    unsigned s = ++b->stamp;
    b->vis.n = b->stack.n = b->hz_a.n = b->hz_b.n = b->hz_out.n = 0;
    b->t[f].seen = b->t[f].vis = s;
    if (push(&b->vis, f) || push(&b->stack, f)) return -1;
    while (b->stack.n > 0) {
        size_t g = b->stack.a[--b->stack.n];
        for (int i = 0; i < 3; ++i) {
            size_t h = b->t[g].nb[i];
            if (b->t[h].seen == s) continue;
            b->t[h].seen = s;
            if (dist(b, h, eye) > b->eps) {
                b->t[h].vis = s;
                if (push(&b->vis, h) || push(&b->stack, h)) return -1;
            }
        }
    }
    for (size_t k = 0; k < b->vis.n; ++k) {
        const tri *g = &b->t[b->vis.a[k]];
        for (int i = 0; i < 3; ++i)
            if (b->t[g->nb[i]].vis != s &&
                (push(&b->hz_a, g->v[i]) || push(&b->hz_b, g->v[(i + 1) % 3]) ||
                 push(&b->hz_out, g->nb[i])))
                return -1;
    }
    size_t H = b->hz_a.n;
    int simple = H >= 3;
    for (size_t k = 0; k < H; ++k) {
        if (b->slot[b->hz_a.a[k]] != NONE)
            simple = 0;
        else
            b->slot[b->hz_a.a[k]] = k;
    }
    b->order.n = 0;
    if (simple) {
        size_t k = 0;
        do {
            if (push(&b->order, k)) return -1;
            k = b->slot[b->hz_b.a[k]];
        } while (k != NONE && k != 0 && b->order.n <= H);
        simple = k == 0 && b->order.n == H;
    }
    for (size_t k = 0; k < H; ++k)
        if (b->slot[b->hz_a.a[k]] == k) b->slot[b->hz_a.a[k]] = NONE;
    if (!simple) return 1;
    b->fresh.n = 0;
    for (size_t j = 0; j < H; ++j) {
        size_t k = b->order.a[j];
        size_t nf = new_tri(b, b->hz_a.a[k], b->hz_b.a[k], eye);
        if (nf == NONE || push(&b->fresh, nf)) return -1;
        tri *o = &b->t[b->hz_out.a[k]];
        b->t[nf].nb[0] = b->hz_out.a[k];
        o->nb[edge_index(o, b->hz_b.a[k], b->hz_a.a[k])] = nf;
    }
    for (size_t j = 0; j < H; ++j) {
        tri *t = &b->t[b->fresh.a[j]];
        t->nb[1] = b->fresh.a[(j + 1) % H];
        t->nb[2] = b->fresh.a[(j + H - 1) % H];
    }
    for (size_t k = 0; k < b->vis.n; ++k) {
        size_t g = b->vis.a[k];
        size_t i = b->t[g].out;
        b->t[g].out = NONE;
        b->t[g].alive = 0;
        while (i != NONE) {
            size_t nx = b->next[i];
            if (i != eye && assign(b, i, b->fresh.a, H) != 0) return -1;
            i = nx;
        }
    }
    return 0;
}

/* Quickhull proper: 0, 1 for degenerate input, -1 when out of memory. */
static int run(builder *b) {
    imp_vec3 lo = b->p[0], hi = b->p[0];
    for (size_t i = 1; i < b->n; ++i) {
        lo =
            imp_v3(imp_fmin(lo.x, b->p[i].x), imp_fmin(lo.y, b->p[i].y), imp_fmin(lo.z, b->p[i].z));
        hi =
            imp_v3(imp_fmax(hi.x, b->p[i].x), imp_fmax(hi.y, b->p[i].y), imp_fmax(hi.z, b->p[i].z));
    }
    imp_vec3 c = imp_scale(imp_add(lo, hi), 0.5);
    double scale = 0.0;
    for (size_t i = 0; i < b->n; ++i) {
        b->q[i] = imp_sub(b->p[i], c);
        b->next[i] = b->slot[i] = NONE;
        scale = imp_fmax(scale, imp_max_abs(b->q[i]));
    }
    if (!(scale > 0.0) || !isfinite(scale)) return 1;
    b->eps = IMP_HULL_PLANE_REL * scale;
    int rc = start(b);
    if (rc != 0) return rc;
    while (b->pending.n > 0) {
        size_t f = b->pending.a[b->pending.n - 1];
        if (!b->t[f].alive || b->t[f].out == NONE) {
            --b->pending.n;
            continue;
        }
        rc = add_eye(b, f);
        if (rc < 0) return -1;
        if (rc == 1) drop_point(b, f, b->t[f].far);
    }
    return 0;
}

/* ---- from triangles to the polygonal hull --------------------------------------------- */

typedef struct edge_rec {
    size_t lo, hi, from, face;
} edge_rec;

static int cmp_edge(const void *x, const void *y) {
    const edge_rec *a = x, *b = y;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
    return a->face < b->face ? -1 : a->face > b->face;
}

typedef struct area_rec {
    double area;
    size_t f;
} area_rec;

static int cmp_area(const void *x, const void *y) {
    const area_rec *a = x, *b = y;
    if (a->area != b->area) return a->area > b->area ? -1 : 1;
    return a->f < b->f ? -1 : a->f > b->f;
}

static int cmp_dir_x(const void *x, const void *y) {
    const imp_vec3 *a = x, *b = y;
    return a->x < b->x ? -1 : a->x > b->x;
}

/* Unit direction with a canonical sign: the first component of magnitude
 * above 1/2 (there always is one) positive. */
static imp_vec3 canonical(imp_vec3 d) {
    double c = fabs(d.x) > 0.5 ? d.x : fabs(d.y) > 0.5 ? d.y : d.z;
    return c < 0 ? imp_neg(d) : d;
}

typedef struct loops {
    szvec start, verts; /* loop k is verts[start[k] .. start[k+1]) */
} loops;

/* Traces the boundary of the triangles whose group is g (members listed)
 * into one loop appended to L; 0, 1 when it is not one simple loop, -1 on
 * memory. */
static int trace_group(builder *b, const size_t *group, const szvec *members, size_t g, loops *L) {
    szvec ea = {.mem = b->mem}, eb = {.mem = b->mem};
    int rc = 0;
    for (size_t k = 0; k < members->n && rc == 0; ++k) {
        const tri *t = &b->t[members->a[k]];
        for (int i = 0; i < 3; ++i)
            if (group[t->nb[i]] != g && (push(&ea, t->v[i]) || push(&eb, t->v[(i + 1) % 3])))
                rc = -1;
    }
    size_t E = ea.n;
    if (rc == 0) {
        for (size_t k = 0; k < E; ++k) {
            if (b->slot[ea.a[k]] != NONE)
                rc = 1;
            else
                b->slot[ea.a[k]] = k;
        }
    }
    size_t before = L->verts.n;
    if (rc == 0 && E >= 3) {
        size_t k = 0, cnt = 0;
        do {
            if (push(&L->verts, ea.a[k])) {
                rc = -1;
                break;
            }
            ++cnt;
            k = b->slot[eb.a[k]];
        } while (k != NONE && k != 0 && cnt <= E);
        if (rc == 0 && !(k == 0 && cnt == E)) rc = 1;
    } else if (rc == 0) {
        rc = 1;
    }
    for (size_t k = 0; k < E; ++k)
        if (b->slot[ea.a[k]] == k) b->slot[ea.a[k]] = NONE;
    if (rc == 0 && push(&L->start, L->verts.n)) rc = -1;
    if (rc != 0) L->verts.n = before;
    a_free(b->mem, ea.a);
    a_free(b->mem, eb.a);
    return rc;
}

imp_hull_status imp_polyhedron_validate(const imp_vec3 *p, size_t n, imp_hull **keep,
                                        imp_error *err) {
    if (keep) *keep = NULL;
    if (imp_polyhedron_check(p, n) != 0)
        return (imp_hull_status)imp_error_set(err, IMP_HULL_DEGENERATE,
                                              "fewer than 4 points off one plane");
    imp_hull *hull = NULL;
    imp_hull_status st = imp_hull_build(p, n, &hull, err);
    if (keep)
        *keep = hull;
    else
        imp_hull_destroy(hull);
    return st;
}

size_t imp_hull_bytes(const imp_hull *h) {
    if (!h) return 0;
    size_t nfv = h->face_start[h->n_faces];
    return sizeof *h + h->n_verts * (sizeof *h->verts + sizeof *h->input) +
           (h->n_faces + 1 + nfv) * sizeof(size_t) +
           h->n_faces * (sizeof *h->normals + sizeof *h->offsets) + h->n_edges * sizeof *h->edges +
           h->n_dirs * sizeof *h->dirs;
}

/* Frees p unless it lies in the buffer the hull was built in. */
static void hull_free(const imp_hull *h, void *p) {
    if (!within(p, h->arena_lo, h->arena_hi)) free(p);
}

void imp_hull_destroy(imp_hull *h) {
    if (!h) return;
    hull_free(h, h->verts);
    hull_free(h, h->input);
    hull_free(h, h->face_start);
    hull_free(h, h->face_verts);
    hull_free(h, h->normals);
    hull_free(h, h->offsets);
    hull_free(h, h->edges);
    hull_free(h, h->dirs);
    hull_free(h, h);
}

/* Phase 1 of extract (step 4 of the DESIGN): adjacent triangles whose
 * vertices are within eps of one plane are merged into a polygonal face by
 * region growing from the largest triangle left (the seed's plane decides,
 * so merging cannot drift around a gently curved surface), and each face's
 * boundary is traced into a counter-clockwise loop appended to L; a group
 * whose boundary is not one simple loop stays as its triangles. 0, or -1
 * when out of memory. */
static int merge_faces(builder *b, loops *L) {
    int rc = -1;
    size_t nt = b->nt;
    size_t *group = a_alloc(b->mem, nt * sizeof *group);
    area_rec *ar = a_alloc(b->mem, nt * sizeof *ar);
    szvec members = {.mem = b->mem}, queue = {.mem = b->mem};
    if (!group || !ar || push(&L->start, 0)) goto done;
    size_t na = 0;
    for (size_t f = 0; f < nt; ++f) {
        group[f] = NONE;
        if (!b->t[f].alive) continue;
        const tri *t = &b->t[f];
        ar[na].area = imp_len(imp_cross(imp_sub(b->q[t->v[1]], b->q[t->v[0]]),
                                        imp_sub(b->q[t->v[2]], b->q[t->v[0]])));
        ar[na++].f = f;
    }
    stable_sort(b->mem, ar, na, sizeof *ar, cmp_area);
    size_t ng = 0;
    for (size_t k = 0; k < na; ++k) {
        size_t seed = ar[k].f;
        if (group[seed] != NONE) continue;
        size_t g = ng++;
        const tri *s = &b->t[seed];
        members.n = queue.n = 0;
        group[seed] = g;
        if (push(&members, seed) || push(&queue, seed)) goto done;
        for (size_t qi = 0; qi < queue.n; ++qi) {
            const tri *t = &b->t[queue.a[qi]];
            for (int i = 0; i < 3; ++i) {
                size_t x = t->nb[i];
                const tri *u = &b->t[x];
                if (group[x] != NONE || imp_dot(u->n, s->n) <= 0.0) continue;
                int flat = 1;
                for (int j = 0; j < 3; ++j)
                    if (fabs(imp_dot(s->n, b->q[u->v[j]]) - s->d) > b->eps) flat = 0;
                if (!flat) continue;
                group[x] = g;
                if (push(&members, x) || push(&queue, x)) goto done;
            }
        }
        int tr = trace_group(b, group, &members, g, L);
        if (tr < 0) goto done;
        if (tr == 1) {
            /* not one simple loop: keep this group's triangles as faces */
            for (size_t m = 0; m < members.n; ++m)
                group[members.a[m]] = NONE;
            for (size_t m = 0; m < members.n; ++m) {
                size_t f = members.a[m];
                group[f] = ng++;
                const tri *t = &b->t[f];
                for (int i = 0; i < 3; ++i)
                    if (push(&L->verts, t->v[i])) goto done;
                if (push(&L->start, L->verts.n)) goto done;
            }
        }
    }
    rc = 0;
done:
    a_free(b->mem, group);
    a_free(b->mem, ar);
    a_free(b->mem, members.a);
    a_free(b->mem, queue.a);
    return rc;
}

/* Phase 2: the loops of L into *fin without the vertices where only two
 * faces meet (points on an edge that became vertices early), unless a loop
 * would fall below 3 vertices. 0, or -1 when out of memory. */
static int drop_two_face_vertices(const builder *b, const loops *L, loops *fin) {
    size_t *deg = a_calloc(b->mem, b->n, sizeof *deg);
    int rc = -1;
    if (!deg || push(&fin->start, 0)) goto done;
    size_t nf = L->start.n - 1;
    for (size_t k = 0; k < L->verts.n; ++k)
        ++deg[L->verts.a[k]];
    for (size_t f = 0; f < nf; ++f) {
        size_t s0 = L->start.a[f], s1 = L->start.a[f + 1], keep = 0;
        for (size_t k = s0; k < s1; ++k)
            keep += deg[L->verts.a[k]] > 2;
        for (size_t k = s0; k < s1; ++k)
            if ((keep < 3 || deg[L->verts.a[k]] > 2) && push(&fin->verts, L->verts.a[k])) goto done;
        if (push(&fin->start, fin->verts.n)) goto done;
    }
    rc = 0;
done:
    a_free(b->mem, deg);
    return rc;
}

/* Phase 3: the hull's vertices (the loops' points, numbered in order of
 * first appearance: vmap[input index], NONE for the rest) and faces (the
 * loops, each with its outward Newell normal and offset), with one record
 * per loop edge in er (fin->verts.n of them) for phase 4. The hull, or NULL
 * when out of memory. */
static imp_hull *pack_faces(const builder *b, const loops *fin, size_t *vmap, edge_rec *er) {
    const szvec *fs = &fin->start, *fv = &fin->verts;
    size_t nf = fs->n - 1;
    for (size_t i = 0; i < b->n; ++i)
        vmap[i] = NONE;
    size_t nv = 0;
    for (size_t k = 0; k < fv->n; ++k)
        if (vmap[fv->a[k]] == NONE) vmap[fv->a[k]] = nv++;
    size_t nfv = fv->n;
    imp_hull *h = a_calloc(b->mem, 1, sizeof *h);
    if (!h) return NULL;
    if (b->mem && b->mem->buf) {
        h->arena_lo = b->mem->buf;
        h->arena_hi = b->mem->buf + b->mem->cap;
    }
    h->n_verts = nv;
    h->n_faces = nf;
    h->verts = a_alloc(b->mem, nv * sizeof *h->verts);
    h->input = a_alloc(b->mem, nv * sizeof *h->input);
    h->face_start = a_alloc(b->mem, (nf + 1) * sizeof *h->face_start);
    h->face_verts = a_alloc(b->mem, nfv * sizeof *h->face_verts);
    h->normals = a_alloc(b->mem, nf * sizeof *h->normals);
    h->offsets = a_alloc(b->mem, nf * sizeof *h->offsets);
    if (!h->verts || !h->input || !h->face_start || !h->face_verts || !h->normals || !h->offsets) {
        imp_hull_destroy(h);
        return NULL;
    }
    for (size_t i = 0; i < b->n; ++i)
        if (vmap[i] != NONE) {
            h->verts[vmap[i]] = b->p[i];
            h->input[vmap[i]] = i;
        }
    for (size_t f = 0; f <= nf; ++f)
        h->face_start[f] = fs->a[f];
    for (size_t f = 0; f < nf; ++f) {
        size_t s0 = fs->a[f], s1 = fs->a[f + 1];
        imp_vec3 nw = imp_v3(0, 0, 0); /* Newell's normal of the loop */
        for (size_t k = s0; k < s1; ++k) {
            imp_vec3 u = b->q[fv->a[k]], w = b->q[fv->a[k + 1 < s1 ? k + 1 : s0]];
            nw = imp_add(nw, imp_v3((u.y - w.y) * (u.z + w.z), (u.z - w.z) * (u.x + w.x),
                                    (u.x - w.x) * (u.y + w.y)));
        }
        imp_vec3 n = imp_normalize_or(nw, imp_v3(0, 0, 1));
        double off = -INFINITY;
        for (size_t k = s0; k < s1; ++k) {
            size_t v = fv->a[k], nx = fv->a[k + 1 < s1 ? k + 1 : s0];
            h->face_verts[k] = vmap[v];
            off = imp_fmax(off, imp_dot(n, b->p[v]));
            er[k].lo = v < nx ? v : nx;
            er[k].hi = v < nx ? nx : v;
            er[k].from = v;
            er[k].face = f;
        }
        h->normals[f] = n;
        h->offsets[f] = off;
    }
    return h;
}

/* Phase 4 (step 5 of the DESIGN): the loop edges er[0..nfv) paired into the
 * hull's edges, each with the face on either side (sorting their vertex
 * pairs brings the two records of an edge together). 0, or -1 when out of
 * memory. */
static int pair_edges(arena *mem, imp_hull *h, const size_t *vmap, edge_rec *er, size_t nfv) {
    stable_sort(mem, er, nfv, sizeof *er, cmp_edge);
    h->edges = a_alloc(mem, (nfv ? nfv : 1) * sizeof *h->edges);
    if (!h->edges) return -1;
    size_t ne = 0;
    for (size_t k = 0; k < nfv;) {
        imp_hull_edge e;
        size_t to = er[k].from == er[k].lo ? er[k].hi : er[k].lo;
        e.v[0] = vmap[er[k].from];
        e.v[1] = vmap[to];
        e.face[0] = er[k].face;
        e.face[1] = IMP_HULL_NONE;
        if (k + 1 < nfv && er[k + 1].lo == er[k].lo && er[k + 1].hi == er[k].hi) {
            e.face[1] = er[k + 1].face;
            k += 2;
        } else {
            k += 1;
        }
        h->edges[ne++] = e;
    }
    h->n_edges = ne;
    return 0;
}

/* Phase 5: the unique edge directions (parallel or antiparallel ones once,
 * up to IMP_EDGE_PARALLEL_SIN), sorted by one component so that only a
 * narrow window of them is compared. 0, or -1 when out of memory. */
static int unique_dirs(const builder *b, imp_hull *h) {
    size_t ne = h->n_edges;
    imp_vec3 *dirs = a_alloc(b->mem, (ne ? ne : 1) * sizeof *dirs);
    h->dirs = a_alloc(b->mem, (ne ? ne : 1) * sizeof *h->dirs);
    if (!dirs || !h->dirs) {
        a_free(b->mem, dirs);
        return -1;
    }
    for (size_t k = 0; k < ne; ++k)
        dirs[k] = canonical(imp_normalize_or(
            imp_sub(b->q[h->input[h->edges[k].v[1]]], b->q[h->input[h->edges[k].v[0]]]),
            imp_v3(1, 0, 0)));
    stable_sort(b->mem, dirs, ne, sizeof *dirs, cmp_dir_x);
    size_t nd = 0;
    for (size_t k = 0; k < ne; ++k) {
        int dup = 0;
        for (size_t j = nd; j-- > 0 && h->dirs[j].x >= dirs[k].x - IMP_HULL_DIR_WINDOW;)
            if (imp_len(imp_cross(h->dirs[j], dirs[k])) <= IMP_EDGE_PARALLEL_SIN) {
                dup = 1;
                break;
            }
        if (!dup) h->dirs[nd++] = dirs[k];
    }
    h->n_dirs = nd;
    a_free(b->mem, dirs);
    return 0;
}

/* The polygonal hull of b's triangles into *out, in the phases above; 0, or
 * -1 when out of memory. */
static int extract(builder *b, imp_hull **out) {
    loops L = {{.mem = b->mem}, {.mem = b->mem}}, fin = {{.mem = b->mem}, {.mem = b->mem}};
    size_t *vmap = a_alloc(b->mem, b->n * sizeof *vmap);
    edge_rec *er = NULL;
    imp_hull *h = NULL;
    int rc = -1;
    if (!vmap || merge_faces(b, &L) != 0 || drop_two_face_vertices(b, &L, &fin) != 0) goto done;
    size_t nfv = fin.verts.n;
    er = a_alloc(b->mem, (nfv ? nfv : 1) * sizeof *er);
    if (!er || !(h = pack_faces(b, &fin, vmap, er)) || pair_edges(b->mem, h, vmap, er, nfv) != 0 ||
        unique_dirs(b, h) != 0)
        goto done;
    *out = h;
    h = NULL;
    rc = 0;
done:
    imp_hull_destroy(h);
    a_free(b->mem, vmap);
    a_free(b->mem, er);
    a_free(b->mem, L.start.a);
    a_free(b->mem, L.verts.a);
    a_free(b->mem, fin.start.a);
    a_free(b->mem, fin.verts.a);
    return rc;
}

static imp_hull_status fail(imp_error *err, imp_hull_status st) {
    return (imp_hull_status)imp_error_set(
        err, st, st == IMP_HULL_NOMEM ? "out of memory" : "fewer than 4 points off one plane");
}

imp_hull_status imp_hull_build(const imp_vec3 *p, size_t n, imp_hull **out, imp_error *err) {
    return imp_hull_build_in(p, n, NULL, 0, out, err);
}

imp_hull_status imp_hull_build_in(const imp_vec3 *p, size_t n, void *buf, size_t bytes,
                                  imp_hull **out, imp_error *err) {
    *out = NULL;
    if (n < 4) return fail(err, IMP_HULL_DEGENERATE);
    arena mem = {buf, buf ? bytes : 0, 0};
    builder b;
    memset(&b, 0, sizeof b);
    b.mem = &mem;
    szvec *vs[] = {&b.pending, &b.stack, &b.vis, &b.hz_a, &b.hz_b, &b.hz_out, &b.order, &b.fresh};
    for (size_t k = 0; k < sizeof vs / sizeof vs[0]; ++k)
        vs[k]->mem = &mem;
    b.p = p;
    b.n = n;
    b.q = a_alloc(&mem, n * sizeof *b.q);
    b.next = a_alloc(&mem, n * sizeof *b.next);
    b.slot = a_alloc(&mem, n * sizeof *b.slot);
    int rc = -1;
    if (b.q && b.next && b.slot) {
        rc = run(&b);
        if (rc == 0) rc = extract(&b, out);
    }
    a_free(&mem, b.q);
    a_free(&mem, b.next);
    a_free(&mem, b.slot);
    a_free(&mem, b.t);
    for (size_t k = 0; k < sizeof vs / sizeof vs[0]; ++k)
        a_free(&mem, vs[k]->a);
    return rc == 0 ? IMP_HULL_OK : fail(err, rc == 1 ? IMP_HULL_DEGENERATE : IMP_HULL_NOMEM);
}

/*
 * simulate.c - event-driven (collision-driven) simulation of bodies on
 * exact parabolic paths.
 *
 * DESIGN
 * What: bodies move on p + v t + a t^2/2 from contact to contact; every
 * contact is resolved by imp_respond_resolve; nothing is time-stepped.
 *
 * How (Lubachevsky 1991, "How to simulate billiards and similar systems",
 * J. Comput. Phys. 94: one pending event per body, bodies advanced lazily;
 * Donev, Torquato, Stillinger 2005, "Neighbor-list collision-driven
 * molecular dynamics simulation for nonspherical hard particles",
 * J. Comput. Phys. 202: cell-crossing events, lazy invalidation):
 *  - Each body keeps its own reference time t_ref and its state there; its
 *    position at any later time is its path evaluated at t - t_ref. Only
 *    the bodies of an event are moved to the event's time.
 *  - Prediction of body i at time `now` asks imp_toi_shapes for the first
 *    contact of i with each body near it (window [now, min(best, horizon)],
 *    best the earliest contact found so far: not cut at the cell crossing),
 *    and, for a body in the grid, for the time it leaves its cell; the
 *    earlier of the two is i's one pending event, kept in a queue ordered
 *    by (time, owner): a 4-ary heap for the current bucket of time and a
 *    calendar of buckets for the later events (see "event calendar"). At a
 *    crossing the pair event stands and only the bodies of the cells
 *    entered are searched (predict_entered): 3 of the 9 cells in 2D, 9 of
 *    the 27 in 3D, and no globals. With the pair windows uncut the solver
 *    is asked 2.5 to 4 times as often, and the contacts per second are
 *    still 1.1 to 1.2 times what they were (bench_simulate --case, 1k and
 *    100k bodies). Its partner, contact point and normal are
 *    kept with the body, so a heap entry is 16 bytes (time, owner, seq) and
 *    an entry's four children share a cache line or two. The heap is
 *    indexed (each body knows its slot): a new prediction replaces the
 *    owner's entry in place, so the heap holds at most one entry per body
 *    and no stale ones (with lazy deletion it held up to four stale entries
 *    per live one, and popping them was a sixth of the time per contact).
 *  - Invalidation: body i has two counters: seq (bumped at every
 *    prediction of i) and traj (bumped whenever i's path changes). An
 *    event holds its partner's traj (with the owner); popped with a stale
 *    partner it is dropped and its owner predicted again at
 *    that time. This is enough: a partner whose path changed was predicted
 *    against everything near it, so any earlier contact with the owner is
 *    in the queue as the partner's own event or found before it happens.
 *  - Sphere pairs are first culled (spheres_apart): when the closest approach of the
 *    linear part of their relative path within the window, less the most the relative
 *    acceleration can close (|da| w^2 / 2), exceeds the sum of radii by a margin far
 *    above rounding, the solver would find no root and is not asked. In a gas most
 *    neighbours within a window as short as a cell crossing are such pairs, so this
 *    halves the time per contact at 10k spheres (bench_simulate). A sphere and a
 *    still halfspace are culled likewise (gap to the surface less the most the
 *    normal velocity and acceleration close in the window): solver calls per
 *    contact went from 54 (2D) and 97 (3D) to about 4.
 *  - After a contact only the two bodies whose paths changed are predicted
 *    again (a static partner's path does not change).
 *  - Grid: a uniform grid of cubic cells of edge L >= the largest diameter
 *    of the bodies in it (plus IMP_SIM_CELL_SLACK), hashed into a table of
 *    about 2n buckets (unbounded space, no allocation per cell); the cells of
 *    the box the bodies start in have their own slots instead, in row order
 *    (bucket_of), so the cells around a body are adjacent in memory. Two
 *    touching bodies are then in the same or adjacent cells, so a body is
 *    predicted against the 3^dim cells around its own, and a cell-crossing
 *    event moves it when its path reaches a cell face (per axis, the root of
 *    x(t) = face with the velocity pointing out of the cell: a quadratic
 *    under acceleration, whose root at the face just entered is excluded by
 *    that sign). Cell indices are clamped to OUTER_CELLS cells beyond the box
 *    the bodies start in (and to +-2^30): the outermost cells reach to
 *    infinity, so far-flung bodies share them (correct, slower when many
 *    do), and a body thrown away at 1e60 m/s crosses a few thousand cells
 *    on its way out, not 2^30 (which took seconds of crossings).
 *  - Cell size: L = 2 r_cut (1 + slack), where r_cut is the bounding radius
 *    of the (K+1)-th largest body, K = min(IMP_SIM_MAX_GLOBAL, n/100); the K
 *    or fewer larger bodies and all halfspaces are "global": kept out of
 *    the grid, every grid body is predicted against them and a moving
 *    global body against every body. A sparse scene gets larger cells, up
 *    to 0.7 of the bodies' spacing (0.7 extent / n^(1/dim), at most 4 times
 *    the minimum; SPARSE_EDGE_PER_SPACING), which cuts crossings without
 *    crowding cells. Per event the
 *    work is then the bodies of 3^dim cells plus at most 64 globals (plus
 *    the halfspaces), independent of n.
 *  - Kinematic static bodies live in the grid like the rest (with crossing
 *    events) and predict against non-static neighbours; still static bodies
 *    never own events; halfspaces never do (static, and everyone predicts
 *    against them). A moving halfspace is evaluated by shifting its offset
 *    along its normal.
 *  - Guards (Mirtich 2000, "Timewarp rigid body simulation", SIGGRAPH, on
 *    why resting and persistent contact must leave the pure event loop):
 *    (1) collapse: a contact approaching slower than IMP_SIM_SLOW_REL V is
 *    resolved with e = 0, so a chain of ever slower contacts (inelastic
 *    collapse, zero-time chains between equal pairs) ends with the pair
 *    sliding, which imp_toi_shapes does not report as a contact;
 *    (2) resting: a non-static body leaving a still static halfspace whose
 *    next hop would be lower than IMP_SIM_REST_REL S rests on it: its normal
 *    velocity and the normal part of its acceleration are removed (the
 *    halfspace's normal force) and the pair is not predicted while it rests;
 *    a later contact lifts it off when it leaves faster than that, else it
 *    keeps resting. Resting on anything but a still halfspace (stacks,
 *    static boxes) is not modelled: such a body is pushed back at each
 *    zero-time contact, bounded by (3);
 *    (4) resting contacts (settle): a contact after which the body is too
 *    slow, relative to the other, to rise IMP_SIM_REST_REL S, or a slow one
 *    that follows the body's last contact within t_c (the TC criterion of
 *    Luding and McNamara 1998, "How to handle the inelastic collapse of a
 *    dissipative hard-sphere gas with the TC model", Granular Matter 1:
 *    there, restitution 1 inside t_c; here, a lasting contact) is a resting
 *    one. On a body that holds still (static and still, asleep, or
 *    motionless on a still halfspace) the body falls asleep: velocity and
 *    acceleration 0, never predicted against other still bodies; met
 *    slower than the wake speed (IMP_SIM_WAKE_REL S, 100 times the rest
 *    speed) it acts as a still static body, met faster (or by a moving
 *    static body, which nothing stops) it wakes, and so
 *    does what rests on it (sleep_on, found in the cells around it). The
 *    gap between the two speeds is a hysteresis against the jitter that
 *    keeps bodies from staying asleep (Lengyel 2011, "A jitter-tolerant
 *    rigid body sleep condition", Game Engine Gems 2, ch. 23): in a pile,
 *    zero-time chains of contacts pass down a column speeds that shrink
 *    geometrically through the rest speed, and with one threshold for
 *    both, a contact woke what the one before had put to sleep (a
 *    1,000-ball pile in 2D took about 10 million contacts to reach 10 s,
 *    with a sleep and a wake at two of every three; with the gap, 2.9
 *    million). On a moving body the two clusters merge in a perfectly
 *    inelastic collision and move on the root's path (the root is the
 *    body resting on a halfspace when there is one: its acceleration has
 *    the floor's force in it); a rider met faster leaves, and every rider
 *    leaves when the root's path changes. A cluster (a rider, or a root
 *    that carries some) met slowly merges without an impulse, and a merge
 *    onto a root resting on a halfspace leaves it no normal speed that the
 *    rest rule (2) would remove: each of these changed the root's path by
 *    a rounding error, which released the cluster just formed, whose
 *    bodies then met again at the same instant, a loop in which time never
 *    advanced (the same pile stopped at t = 0.62 s after 20 million
 *    contacts). A body that leaves a cluster to fall asleep is predicted
 *    again: its cluster's members were not predicted against it. This ends
 *    inelastic collapse and the zero-time contacts of a body pressed on
 *    another by gravity; energy
 *    only goes down (speeds below the threshold removed, inelastic merges).
 *    A body asleep on a curved support stays where it fell asleep, as if
 *    held by friction. A cluster costs its size per merge or release.
 *    (3) max_events bounds the contacts processed and nothing else: the run
 *    stops before the contact that would exceed it. Other queue entries (cell
 *    crossings, re-predictions of stale events) are real work that is not a
 *    contact, so they do not count against it: a body that slides a long way
 *    crosses many cells without touching anything. Such a run is bounded by
 *    the caller's stop check (the server's time budget), which reports it as
 *    what it is.
 *  - Pairs found interpenetrating (by more than the solvers' contact
 *    tolerance) are resolved at once when approaching along the overlap
 *    normal and otherwise left to separate.
  - Memory: what a prediction reads of a body (path, cell, list link,
 *    counters, flags, a sphere's radius) is one 128-byte record (sbody); the
 *    records are in the Morton order of the bodies' starting cells (reorder;
 *    the caller's numbering is kept for everything it sees), and the
 *    neighbours are gathered before the pairs are solved, so a neighbour
 *    costs about one cache miss, not one per field: at 100k bodies the
 *    records outgrow the cache, and the separate arrays this replaced made
 *    the time per event 2.5-3x that at 1k (then 1.6-2x; with the culls,
 *    which make the work per contact small, about 2.2x; see bench_simulate).
 *  - Rotation (imp_sim_input.turns; simulate.h): a body's turn since its shape as
 *    given is kept at tref with its angular velocity and evaluated lazily like its
 *    path (turn_at, move_to). Pairs in which a shape other than a sphere turns go to
 *    imp_toi_rotating (predict_turning: a contact whose point does not approach is a
 *    standing contact, passed over by imp_toi_rotating_standing until the pair is
 *    proven apart or may be a quarter of the graze bound deeper; windows split at half of
 *    IMP_ROT_MAX_ANGLE into AGAIN events) and contacts to
 *    imp_respond_resolve_turning (contact_turning, at contact_point's point). Under
 *    gravity such a scene settles by sleep alone (rest_turning: guard 2 and clusters
 *    are off): a body falls asleep on what holds still once it is slow and stands on
 *    it, and slow contacts pressed by gravity are microcollisions (see there).
 * Why: the per-event cost stays flat in n (grid + lazy invalidation), the
 * times are the exact roots the pairwise solvers give (no step error), and
 * the heap stays at one entry per body with an event.
 */
#include "simulate.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "overlap.h"
#include "respond.h"
#include "toi_rotating.h"
#include "toi_shapes.h"
#include "tolerance.h"

#define NONE UINT32_MAX
#define CROSS (UINT32_MAX - 1)
#define WORLD (UINT32_MAX - 2)
#define AGAIN (UINT32_MAX - 3) /* no contact within a turning pair's shortened window */
#define CELL_CLAMP ((int32_t)1 << 30)
/* Cells per axis beyond the starting box before the outermost cell (see the header). */
#define OUTER_CELLS 4096

/* Neighbours gathered at a time by a prediction (count): more than the 3^dim cells
 * around a body hold at the densities the cell size allows, so a prediction usually
 * gathers once; a crowded neighbourhood is predicted in batches of this many. */
#define GATHER 64

/* Largest dense box of grid cells, in cells per grid body (see bucket_of). */
#define DENSE_MAX_PER_BODY 4

/* A sparse scene's cells: a cell's edge is this fraction of the spacing of the bodies
 * (1: about one body per cell). Measured (bench_simulate --case, phi 0.1, 10k and 100k
 * spheres): 0.7 (about 0.5 bodies per cell in 2D, 0.35 in 3D) beats 1 by 1.1-1.45x: a
 * prediction gathers fewer bodies from its 3^dim cells (each costs a record's cache
 * lines and a cull), for about 1.4x the cell crossings; 0.5 and 0.8 are slower, and
 * edges of 1.4 and 2 times the spacing are 1.3x to 3.7x slower than 1. */
#define SPARSE_EDGE_PER_SPACING 0.7

/* How much larger than the minimum a sparse scene's cells may grow. */
#define SPARSE_CELL_MAX_FACTOR 4.0

typedef struct qev {
    double t;
    uint32_t owner, seq; /* the owner's pending event while seq is the owner's seq */
} qev;

/* A body's event in the calendar's lists: time, seq, and the partner whose records its
 * handling reads (NONE: none; its bucket is in hpos, its links in the list in qnext and
 * qprev). */
typedef struct qlink {
    double t;
    uint32_t seq, partner;
} qlink;

enum {
    F_STATIC = 1,
    F_HALFSPACE = 2,
    F_STILL = 4,
    F_GLOBAL = 8,
    F_OWNER = 16,
    F_SPHERE = 32,
    F_ASLEEP = 64, /* resting (guard 4): velocity and acceleration 0 until woken */
    F_RIDER = 128  /* carried (guard 4): on the path of the root of its cluster */
};

/* What a prediction reads of a body and of each of its neighbours, in one record of two
 * cache lines: with the fields in separate arrays a neighbour cost a cache miss per
 * field, which made the time per event grow with n once the bodies outgrew the cache
 * (the work per event does not). A sphere's radius is here too, so a sphere pair never
 * reads the caller's shapes. */
typedef struct sbody {
    _Alignas(64) imp_vec3 p; /* path at tref: p + v (t - tref) + a (t - tref)^2 / 2 */
    imp_vec3 v, a;
    double tref;
    double radius;   /* F_SPHERE: the shape's radius */
    int32_t cell[3]; /* grid cell (z 0 in 2D); unused for globals */
    uint32_t seq, traj, support;
    uint8_t flags;
    uint8_t default_filter; /* the caller's filter touches what the default does */
    uint8_t cross_axis;     /* the next cell crossing: the axis, the direction (+-1) */
    int8_t cross_dir;
    double t_cross; /* and the time (INFINITY: none; globals never cross) */
} sbody;
_Static_assert(sizeof(sbody) == 128, "a body's record is two cache lines");

/* A body's earliest pair event as predicted (its partner: a body, WORLD, AGAIN or NONE),
 * apart from its next cell crossing (in its sbody): what an event's handling reads of its
 * owner, in one cache line. */
typedef struct sevent {
    _Alignas(64) imp_vec3 point;
    imp_vec3 normal;
    double t; /* INFINITY: none */
    uint32_t partner;
    uint32_t traj; /* a body partner's traj when predicted */
} sevent;
_Static_assert(sizeof(sevent) == 64, "a body's pair event is one cache line");

/* What a contact reads of each of its bodies beyond its record, in one cache line: in
 * separate arrays (and the caller's bodies, through orig[]) they were a cache miss each. */
typedef struct scontact {
    _Alignas(64) imp_vec3 a_full;         /* its acceleration with gravity, while awake and free */
    double mass, restitution, tangential; /* the caller's */
    double last_t;                        /* the time of its last contact (-INFINITY: none) */
    uint32_t root;                        /* F_RIDER: the root of its cluster; else NONE */
    uint32_t rhead;                       /* a root: its first rider; else NONE */
} scontact;
_Static_assert(sizeof(scontact) == 64, "what a contact reads of a body is one cache line");

struct imp_sim {
    const imp_sim_body *b;
    size_t n;
    int dim;
    double horizon, now;
    size_t max_events;
    imp_stop stop;  /* the caller's stop check */
    int stopped_by; /* its reason, once it said stop */
    int record, failed;
    /* per body: what every prediction reads, together (see sbody); the rest, which only
     * the body's own events read, in arrays */
    sbody *sb;
    uint32_t *orig, *slot; /* internal index -> the caller's, and back (see reorder) */
    scontact *sc;          /* per body: what a contact reads of it, together (see scontact) */
    double *br;
    sevent *ev;                       /* per body: its earliest pair event */
    uint32_t *ev_collider, *ev_index; /* WORLD: the collider and primitive met */
    uint8_t *ev_kind;                 /* WORLD: imp_world_prim_kind */
    const imp_world *world;           /* static obstacles beside the bodies, or NULL */
    /* resting contacts (guard 4) */
    uint32_t *sleep_on;      /* an asleep body: the body it came to rest on (NONE: a static one) */
    uint32_t *wake_stack;    /* bodies being woken */
    uint32_t *rnext, *rprev; /* a root's riders, a doubly linked list from its rhead */
    double *cmass;           /* a root: the mass of its cluster (its own and its riders') */
    /* grid */
    double L;
    /* a cell's bodies: a list from head[bucket_of(cell)] through next[] (back through
     * prev[]), apart from the records: walking it touches 4 bytes a body, not a record's
     * line, so the records of a prediction's neighbours are asked for all at once */
    uint32_t *next, *prev, *head;
    size_t mask;              /* hash buckets - 1 */
    int64_t dlo[3];           /* dense box: first cell */
    int32_t cmin[3], cmax[3]; /* the outermost cells: each reaches to infinity */
    uint64_t dn[3];           /* cells per axis (0: no dense box) */
    size_t n_dense;           /* dn[0] dn[1] dn[2] slots, then mask + 1 hash buckets */
    /* the 3^dim cells around a cell (near_cell's order): each one's step from it per axis,
     * and its slot's offset from the cell's own in the dense box */
    int8_t near_d[27][3];
    int64_t near_off[27];
    uint32_t *globals;
    size_t n_globals;
    /* queue: an indexed heap, at most one entry per body */
    qev *heap;
    size_t hn;
    uint32_t *hpos; /* a body's slot in the heap, LISTED | bucket, or NONE: no pending event */
    /* the calendar of the later events (see "event calendar") */
    qlink *ql;                          /* per body: its listed event */
    uint32_t *qnext, *qprev;            /* per body: its neighbours in its bucket's list */
    uint32_t *cal_head;                 /* cal_nb buckets, then the overflow */
    size_t cal_nb, cal_cur, cal_listed; /* buckets, the heap's bucket, events listed in them */
    double cal_base, cal_width;
    /* record */
    imp_sim_event *rec;
    size_t nrec, rcap;
    imp_sim_stats st;
    double S, V, u_slow, h_rest;
    /* rotation (the input's turns; see the header) */
    int rot;
    imp_quat *rq;         /* the turn since t = 0 at tref (relative to the shape as given) */
    imp_quat *q0;         /* the orientation the shape was given in */
    double *ang;          /* 2D: the turn about z since t = 0 at tref, summed as w.z dt */
    imp_vec3 *w;          /* angular velocity */
    imp_mat3 *I0, *I0inv; /* inertia of the shape as given, and its inverse (0: never turns) */
    imp_vec3 *vbuf[4];    /* turned vertices: predict's body, its partner, a later search's two */
    int halted;           /* a turning pair's search was stopped by the stop check */
    /* the owner of the event being handled: its entry stays in the queue until it is
     * predicted again (a replacement in place, not a removal and an insertion) */
    uint32_t handling;
};

/* ---- heap ------------------------------------------------------------------------------- */

/* Body i's record, both lines (the path; flags, radius, cell and the rest), asked for without
 * waiting: by the calendar ahead of an event's handling, and by a prediction's gathering. */
static void ask_record(const imp_sim *s, uint32_t i) {
    __builtin_prefetch(&s->sb[i].p);
    __builtin_prefetch(&s->sb[i].seq);
}

/* What body i's pending event is: CROSS when its next cell crossing comes first (or at the
 * same time), else its pair event's partner (a body, WORLD, AGAIN or NONE). */
static uint32_t event_partner(const imp_sim *s, uint32_t i) {
    return s->sb[i].t_cross <= s->ev[i].t ? CROSS : s->ev[i].partner;
}

/* ---- lists of bodies ---------------------------------------------------------------------
 *
 * A cell's bodies, a calendar bucket's events and a root's riders are doubly linked lists
 * through arrays of their own (next, prev; NONE at the ends) from a head. */

/* Body i becomes the first of the list from *head. */
static void link_push(uint32_t *head, uint32_t *next, uint32_t *prev, uint32_t i) {
    uint32_t h = *head;
    prev[i] = NONE;
    next[i] = h;
    if (h != NONE) prev[h] = i;
    *head = i;
}

/* Body i leaves its list: its neighbours are joined; 1 when it was the first, whose head
 * the caller then sets to next[i] (the head is found only then: a grid cell's takes a
 * lookup). */
static int link_cut(uint32_t *next, uint32_t *prev, uint32_t i) {
    uint32_t n = next[i], p = prev[i];
    if (n != NONE) prev[n] = p;
    if (p == NONE) return 1;
    next[p] = n;
    return 0;
}

static int qless(const qev *x, const qev *y) {
    return x->t < y->t || (x->t == y->t && x->owner < y->owner);
}

/* A 4-ary heap: half the levels of a binary one, and the four children of an entry are
 * adjacent, so a sift-down misses the cache about half as often once the queue outgrows it. */
#define HEAP_ARITY 4

/* Moves entry e to slot i, keeping its owner's slot. */
static void heap_place(imp_sim *s, size_t i, qev e) {
    s->heap[i] = e;
    s->hpos[e.owner] = (uint32_t)i;
}

static void sift_up(imp_sim *s, size_t i) {
    qev e = s->heap[i];
    while (i > 0) {
        size_t up = (i - 1) / HEAP_ARITY;
        if (!qless(&e, &s->heap[up])) break;
        heap_place(s, i, s->heap[up]);
        i = up;
    }
    heap_place(s, i, e);
}

static void sift_down(imp_sim *s, size_t i) {
    qev e = s->heap[i];
    for (;;) {
        size_t first = HEAP_ARITY * i + 1, m = first;
        if (first >= s->hn) break;
        for (size_t c = first + 1; c < first + HEAP_ARITY && c < s->hn; ++c)
            if (qless(&s->heap[c], &s->heap[m])) m = c;
        if (!qless(&s->heap[m], &e)) break;
        heap_place(s, i, s->heap[m]);
        i = m;
    }
    heap_place(s, i, e);
}

/* Entry at slot i replaced by e: up or down to its place. */
static void heap_replace(imp_sim *s, size_t i, qev e) {
    qev old = s->heap[i];
    s->heap[i] = e;
    if (qless(&e, &old))
        sift_up(s, i);
    else
        sift_down(s, i);
}

/* ---- event calendar ----------------------------------------------------------------------
 *
 * The queue is the heap above for the events of the current bucket of time and, for the later
 * ones, a calendar (Paul 2007, "A complexity O(1) priority queue for event driven molecular
 * dynamics simulations", J. Comput. Phys. 221; as Smallenburg 2022 keeps it): buckets of
 * `width` from `base`, each a doubly linked list of the bodies whose event falls in it, and
 * an overflow list past the last. An event goes to the heap when its bucket index
 * (t - base) / width, computed the same way everywhere, is at most the current bucket's:
 * that index never decreases with t, so every event in the heap precedes (or ties with, in
 * the same bucket) every listed one, and events come out in the heap's exact (time, owner)
 * order. When the heap empties the next bucket's list moves into it; past the last bucket
 * the overflow is spread over a new set of buckets (rebase), whose width is set from the
 * pending events' mean distance in time from the earliest, so that a bucket holds about
 * CAL_PER_BUCKET of them near the front. The heap then holds a handful of entries, not
 * every body's: an insertion or removal touches a bucket head and a neighbour's links
 * instead of a path through a heap of n entries (13% of the time per contact at 100k
 * bodies with the heap alone), and when a bucket's events move into the heap, their owners'
 * records, and a contact's partner's (kept with the listed event, so that the partner's record
 * does not wait until the event is handled: 1.04x in 2D, 1.08x in 3D at 100k bodies), are
 * asked for ahead of their handling. bench_simulate --case 2 0.1 100000: 1.1x
 * to 1.15x the contacts per second of the heap alone (1k bodies, and 3D: the same within
 * the noise). Each body is in the heap, in one list, or queued nowhere. A list's links are
 * arrays of their own (qnext, qprev: 4 bytes a body, 0.8 MB at 100k bodies, which the cache
 * holds), apart from the events' times (qlink): moving a bucket into the heap walks its list
 * one link after another, and with the links in the 24-byte records each step was a miss
 * that waited for the one before (2D, 100k bodies: 1.04x the contacts per second without). */

/* hpos[i] of a body whose event is in a bucket's list (LISTED | the bucket; the overflow's is
 * cal_nb): a heap slot is below it (at most n entries), NONE above any bucket (n < LISTED - 1,
 * and cal_nb <= n or 16). */
#define LISTED 0x80000000u

static int is_listed(uint32_t at) { return at != NONE && (at & LISTED); }

/* About this many events per bucket near the front of the queue (tuned on bench_simulate). */
#define CAL_PER_BUCKET 8.0

/* The bucket index of time t: the heap's bucket (cur) or earlier means the heap. */
static double cal_index(const imp_sim *s, double t) { return (t - s->cal_base) / s->cal_width; }

static int in_heap_span(const imp_sim *s, double t) {
    return cal_index(s, t) < (double)s->cal_cur + 1.0;
}

static void heap_insert(imp_sim *s, qev e) {
    s->heap[s->hn] = e;
    sift_up(s, s->hn++);
}

static void heap_remove(imp_sim *s, uint32_t at) {
    qev last = s->heap[--s->hn];
    if (at < s->hn) heap_replace(s, at, last);
}

static void list_insert(imp_sim *s, qev e, uint32_t partner) {
    double k = cal_index(s, e.t);
    uint32_t b = k < (double)s->cal_nb ? (uint32_t)k : (uint32_t)s->cal_nb; /* nb: overflow */
    s->ql[e.owner] = (qlink){e.t, e.seq, partner};
    link_push(&s->cal_head[b], s->qnext, s->qprev, e.owner);
    s->hpos[e.owner] = LISTED | b;
    if (b < s->cal_nb) s->cal_listed++;
}

/* Body i's listed event (hpos[i] was at) out of its list. */
static void list_remove(imp_sim *s, uint32_t i, uint32_t at) {
    uint32_t b = at & ~LISTED;
    if (link_cut(s->qnext, s->qprev, i)) s->cal_head[b] = s->qnext[i];
    if (b < s->cal_nb) s->cal_listed--;
}

/* The owner's pending event becomes e (with a body partner whose records its handling reads,
 * or NONE): the one it had (now invalid) is replaced, so the queue holds at most one entry per
 * body and never a stale one. */
static void push(imp_sim *s, qev e, uint32_t partner) {
    uint32_t at = s->hpos[e.owner];
    if (at != NONE && e.owner != s->handling) s->st.stale++;
    int heap = in_heap_span(s, e.t);
    if (is_listed(at)) {
        list_remove(s, e.owner, at);
        at = NONE;
    }
    if (at == NONE) {
        if (heap) {
            heap_insert(s, e);
        } else {
            list_insert(s, e, partner);
        }
    } else if (heap) {
        heap_replace(s, at, e);
    } else {
        heap_remove(s, at);
        list_insert(s, e, partner);
    }
}

/* Body i has no pending event (any it had is dropped). */
static void unqueue(imp_sim *s, uint32_t i) {
    uint32_t at = s->hpos[i];
    if (at == NONE) return;
    s->hpos[i] = NONE;
    if (is_listed(at))
        list_remove(s, i, at);
    else
        heap_remove(s, at);
}

/* Every bucket is used up and the heap is empty: the overflow's events are spread over new
 * buckets from the earliest of them (those of the first go to the heap). */
static void rebase(imp_sim *s) {
    uint32_t h = s->cal_head[s->cal_nb];
    s->cal_head[s->cal_nb] = NONE;
    double tmin = INFINITY, sum = 0;
    size_t n = 0;
    for (uint32_t i = h; i != NONE; i = s->qnext[i])
        tmin = imp_fmin(tmin, s->ql[i].t);
    for (uint32_t i = h; i != NONE; i = s->qnext[i])
        sum += s->ql[i].t - tmin, ++n;
    assert(n > 0 && tmin < INFINITY); /* events are within the (finite) horizon */
    double width = CAL_PER_BUCKET * (sum / (double)n) / (double)n;
    /* any width keeps the order; a degenerate one (events all at one time) is set from the
     * time's own scale, and the next rebase sets it from what follows */
    if (!(width > 0) || !isfinite(width)) width = imp_fmax(fabs(tmin), 1.0) * 0x1p-30;
    s->cal_base = tmin;
    s->cal_width = width;
    s->cal_cur = 0;
    for (uint32_t i = h, next; i != NONE; i = next) {
        next = s->qnext[i];
        qev e = {s->ql[i].t, i, s->ql[i].seq};
        if (in_heap_span(s, e.t))
            heap_insert(s, e);
        else
            list_insert(s, e, s->ql[i].partner);
    }
}

/* The heap's top is the queue's first event: 0 when the queue is empty. */
static int queue_top(imp_sim *s) {
    while (s->hn == 0) {
        if (s->cal_listed == 0) {
            if (s->cal_head[s->cal_nb] == NONE) return 0;
            s->cal_cur = s->cal_nb; /* the buckets left are empty */
        }
        if (++s->cal_cur >= s->cal_nb) {
            rebase(s);
            continue;
        }
        uint32_t h = s->cal_head[s->cal_cur];
        s->cal_head[s->cal_cur] = NONE;
        /* the next bucket's first entry, and what handling these events reads of their
         * owners, are asked for now: the calendar knows them ahead of time */
        if (s->cal_cur + 1 < s->cal_nb && s->cal_head[s->cal_cur + 1] != NONE)
            __builtin_prefetch(&s->ql[s->cal_head[s->cal_cur + 1]]);
        for (uint32_t i = h, next; i != NONE; i = next) {
            next = s->qnext[i];
            if (next != NONE) __builtin_prefetch(&s->ql[next]);
            ask_record(s, i);
            __builtin_prefetch(&s->ev[i]);
            /* its slot (the event's replacement reads it) and its links in its cell's list
             * (a crossing's move to the next cell's list starts there): 1.03x in 2D and
             * 1.04x in 3D at 100k bodies */
            __builtin_prefetch(&s->hpos[i]);
            __builtin_prefetch(&s->next[i]);
            __builtin_prefetch(&s->prev[i]);
            /* a contact's partner: its record (whose traj says whether the event stands) and
             * what the response reads of both */
            uint32_t j = s->ql[i].partner;
            if (j != NONE) {
                ask_record(s, j);
                __builtin_prefetch(&s->sc[j]);
                __builtin_prefetch(&s->sc[i]);
            }
            s->cal_listed--;
            heap_insert(s, (qev){s->ql[i].t, i, s->ql[i].seq});
        }
    }
    return 1;
}

/* ---- grid ------------------------------------------------------------------------------- */

/* Slot of cell c in head[]: a cell inside the dense box (the starting cells of the grid
 * bodies, one cell of margin around them) has its own slot, in row order, so the 3^dim cells
 * around a body are 3^(dim-1) runs of three adjacent slots rather than 3^dim random ones (a
 * cache miss each once the table outgrows the cache); a cell outside hashes into one of the
 * buckets after them, so bodies may roam anywhere. */
static size_t bucket_of(const imp_sim *s, const int32_t c[3]) {
    uint64_t x = (uint64_t)((int64_t)c[0] - s->dlo[0]), y = (uint64_t)((int64_t)c[1] - s->dlo[1]),
             z = (uint64_t)((int64_t)c[2] - s->dlo[2]);
    if (x < s->dn[0] && y < s->dn[1] && z < s->dn[2])
        return (size_t)((z * s->dn[1] + y) * s->dn[0] + x);
    /* multiplicative hashing by odd 64-bit constants (2^64 / golden ratio, and xxHash64's
     * PRIME64_2 and PRIME64_5), folded so the mask's low bits see the high ones */
    uint64_t h = (uint64_t)c[0] * 0x9E3779B97F4A7C15ull ^ (uint64_t)c[1] * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)c[2] * 0x165667B19E3779F9ull;
    h ^= h >> 29;
    return s->n_dense + (size_t)(h & s->mask);
}

static void grid_insert(imp_sim *s, uint32_t i) {
    link_push(&s->head[bucket_of(s, s->sb[i].cell)], s->next, s->prev, i);
}

static void grid_remove(imp_sim *s, uint32_t i) {
    if (link_cut(s->next, s->prev, i)) s->head[bucket_of(s, s->sb[i].cell)] = s->next[i];
}

static int32_t cell_index(double x, double L) {
    double c = floor(x / L);
    if (!(c > -(double)CELL_CLAMP)) return -CELL_CLAMP;
    if (c > (double)CELL_CLAMP) return CELL_CLAMP;
    return (int32_t)c;
}

/* ---- paths ------------------------------------------------------------------------------ */

static imp_motion motion_at(const imp_sim *s, uint32_t i, double t) {
    double dt = t - s->sb[i].tref;
    imp_motion m = {imp_path_at(s->sb[i].p, s->sb[i].v, s->sb[i].a, dt),
                    imp_path_vel(s->sb[i].v, s->sb[i].a, dt), s->sb[i].a};
    return m;
}

/* A halfspace's shape and motion referenced at time t (its offset moves along its normal). */
static void halfspace_at(const imp_sim *s, uint32_t h, double t, imp_shape *sh, imp_motion *m) {
    *sh = *s->b[s->orig[h]].shape;
    *m = s->b[s->orig[h]].m;
    if (!(s->sb[h].flags & F_STILL)) {
        imp_vec3 d = imp_path_at(imp_v3(0, 0, 0), m->v, m->a, t);
        sh->offset += imp_dot(sh->normal, d);
        m->v = imp_path_vel(m->v, m->a, t);
    }
}

static int is_identity(imp_quat q) { return q.w == 1.0 && q.x == 0.0 && q.y == 0.0 && q.z == 0.0; }

static int spins(imp_vec3 w) { return !(w.x == 0.0 && w.y == 0.0 && w.z == 0.0); }

/* Body i's turn at time t since the shape as given (rotation only). */
static imp_quat turn_at(const imp_sim *s, uint32_t i, double t) {
    if (!spins(s->w[i])) return s->rq[i];
    imp_quat q = imp_spin_at(s->rq[i], s->w[i], t - s->sb[i].tref), u;
    return imp_quat_normalize(q, &u) == 0 ? u : q;
}

/* A shape other than a sphere or halfspace turns now (rotation only). */
static int turning(const imp_sim *s, uint32_t i) {
    return s->rot && !(s->sb[i].flags & (F_SPHERE | F_HALFSPACE)) && spins(s->w[i]);
}

/* Body i's shape and motion at time t; a turned shape's vertices go to vbuf[slot]. */
static void body_at_slot(const imp_sim *s, uint32_t i, double t, imp_shape *tmp,
                         const imp_shape **sh, imp_motion *m, int slot) {
    if (s->sb[i].flags & F_HALFSPACE) {
        halfspace_at(s, i, t, tmp, m);
        *sh = tmp;
    } else if (s->sb[i].flags & F_SPHERE) {
        /* from the record: the caller's shape would be one more cache miss */
        *m = motion_at(s, i, t);
        *tmp = (imp_shape){.type = IMP_SHAPE_SPHERE, .radius = s->sb[i].radius};
        *sh = tmp;
    } else {
        *m = motion_at(s, i, t);
        *sh = s->b[s->orig[i]].shape;
        if (!s->rot) return;
        imp_quat q = turn_at(s, i, t);
        if (is_identity(q)) return;
        *tmp = **sh;
        if (tmp->verts) {
            memcpy(s->vbuf[slot], tmp->verts, tmp->n_verts * sizeof *tmp->verts);
            tmp->verts = s->vbuf[slot];
        }
        imp_shape_rotate(tmp, q);
        *sh = tmp;
    }
}

static void body_at(const imp_sim *s, uint32_t i, double t, imp_shape *tmp, const imp_shape **sh,
                    imp_motion *m) {
    body_at_slot(s, i, t, tmp, sh, m, 0);
}

/* ---- prediction ------------------------------------------------------------------------- */

/* Neither moves: a still static body or an asleep one. */
static int frozen(uint8_t f) {
    return (f & F_ASLEEP) || (f & (F_STATIC | F_STILL)) == (F_STATIC | F_STILL);
}

/* The k-th of the 3^dim cells around cell c (k < 9 in 2D, < 27 in 3D; the last axis
 * fastest). */
static void near_cell(int dim, const int32_t c[3], int k, int32_t nc[3]) {
    if (dim == 3) {
        nc[0] = c[0] + k / 9 - 1;
        nc[1] = c[1] + k / 3 % 3 - 1;
        nc[2] = c[2] + k % 3 - 1;
    } else {
        nc[0] = c[0] + k / 3 - 1;
        nc[1] = c[1] + k % 3 - 1;
        nc[2] = c[2];
    }
}

typedef struct best_ev {
    double t;
    uint32_t partner;
    imp_vec3 point, normal;
    uint32_t collider, index, kind; /* partner WORLD */
} best_ev;

/* Earliest tau >= 0 at which x + v tau + a tau^2/2 reaches `face` moving outward (dir +1:
 * increasing through it, -1: decreasing); INFINITY when never. */
static double face_time(double x, double v, double a, double face, int dir) {
    double c = x - face;
    /* already beyond the face and moving out: cross now */
    if (dir * c >= 0 && (dir * v > 0 || (v == 0 && dir * a > 0))) return 0.0;
    double A = 0.5 * a, B = v, best = INFINITY;
    double r[2];
    int nr = 0;
    if (A == 0) {
        if (B != 0) r[nr++] = -c / B;
    } else {
        double disc = B * B - 4 * A * c;
        if (disc < 0) return INFINITY;
        double q = -0.5 * (B + copysign(sqrt(disc), B));
        r[nr++] = q / A;
        if (q != 0) r[nr++] = c / q;
    }
    for (int k = 0; k < nr; ++k) {
        double tau = r[k];
        if (!(tau >= 0) || tau >= best) continue;
        if (dir * (v + a * tau) > 0) best = tau;
    }
    return best;
}

/* Body i's next cell crossing from `now` (into its record), from its motion m at `now`. */
static void predict_crossing(imp_sim *s, uint32_t i, const imp_motion *m) {
    sbody *r = &s->sb[i];
    const int32_t *c = r->cell;
    const double *x = &m->p.x, *v = &m->v.x, *a = &m->a.x;
    double best = INFINITY;
    for (int k = 0; k < s->dim; ++k) {
        if (c[k] < s->cmax[k]) {
            double tau = face_time(x[k], v[k], a[k], (double)(c[k] + 1) * s->L, 1);
            if (tau < best) {
                best = tau;
                r->cross_axis = (uint8_t)k;
                r->cross_dir = 1;
            }
        }
        if (c[k] > s->cmin[k]) {
            double tau = face_time(x[k], v[k], a[k], (double)c[k] * s->L, -1);
            if (tau < best) {
                best = tau;
                r->cross_axis = (uint8_t)k;
                r->cross_dir = -1;
            }
        }
    }
    r->t_cross = s->now + best;
}

/* Relative margin of the cull below: far above rounding, so a pair it drops is one whose
 * gap polynomial has no root near the window (the solver finds none either). */
#define CULL_REL 1e-6

/* 1 when two spheres (sum of radii R) certainly stay apart during [0, window]: the
 * closest approach of the linear part of their relative path, less the most the
 * relative acceleration can bring them closer (|da| window^2 / 2), exceeds R by a
 * margin. A cheap test that drops most neighbour pairs of a gas before the exact
 * solver (imp_toi_spheres) is asked; any doubt (non-finite values, near misses)
 * answers 0 and the solver decides, so the contacts found are the same. */
static int spheres_apart(const imp_motion *a, const imp_motion *b, double R, double window) {
    imp_vec3 d = imp_sub(b->p, a->p), w = imp_sub(b->v, a->v), da = imp_sub(b->a, a->a);
    double ww = imp_dot(w, w), dw = imp_dot(d, w);
    double t = ww > 0 && dw < 0 ? imp_fmin(-dw / ww, window) : 0.0;
    double m = imp_len(imp_madd(d, w, t));
    double pull = 0.5 * imp_len(da) * window * window;
    /* the margin scales with what the approach was computed from: d + w t at the t used,
     * not at the window's end (a prediction's first window is the horizon's, and a margin
     * of 1e-6 of |w| times that let every approaching pair through to the solver until a
     * contact shortened it) */
    double scale =
        imp_fmax(imp_max_abs(a->p), imp_max_abs(b->p)) + R + imp_len(d) + sqrt(ww) * t + pull;
    return m - pull > R + CULL_REL * scale;
}

/* The same for a sphere (radius r) and a still halfspace h: the sphere's gap to the
 * surface, less the most its velocity and acceleration along the normal can close in the
 * window, exceeds the margin (which, as above, scales with the terms summed: a motion away
 * from the surface adds none). */
static int halfspace_apart(const imp_motion *a, double r, const imp_shape *h, double window) {
    double vn = imp_dot(h->normal, a->v), an = imp_dot(h->normal, a->a);
    double cv = imp_fmin(0.0, vn * window), ca = imp_fmin(0.0, 0.5 * an * window * window);
    double gap = imp_dot(h->normal, a->p) - h->offset - r;
    double scale = imp_max_abs(a->p) + fabs(h->offset) + r + fabs(cv) + fabs(ca);
    return gap + (cv + ca) > CULL_REL * scale;
}

/* Velocity at world point x of a body on motion m turning at w about its position. */
static imp_vec3 point_vel(const imp_motion *m, imp_vec3 w, imp_vec3 x) {
    return imp_add(m->v, imp_cross(w, imp_sub(x, m->p)));
}

/* How near to touching (relative to the pair's scale) a vertex of one shape must be to the
 * other to count as a point of a contact that the closest points alone would not show. */
#define CONTACT_REL 1e-7

/* Relative normal velocity (b's less a's, along n) at world point x. */
static double normal_speed(const imp_motion *ma, imp_vec3 wa, const imp_motion *mb, imp_vec3 wb,
                           imp_vec3 n, imp_vec3 x) {
    return imp_dot(imp_sub(point_vel(mb, wb, x), point_vel(ma, wa, x)), n);
}

/*
 * The contact point of two turning shapes found touching (within the solver's tolerance)
 * with normal n (a towards b): the closest points' midpoint *x, unless a vertex of one shape
 * that also lies within CONTACT_REL of the pair's scale of the other (a near face-to-face
 * contact, where the closest points may be anywhere on the faces) approaches faster; then
 * that vertex (on the surface, its rounding included). Returns the relative normal velocity
 * at the point (< 0: approaching). Motions at the contact's time.
 */
static double contact_point(const imp_sim *s, const imp_shape *sa, const imp_motion *ma,
                            imp_vec3 wa, const imp_shape *sb, const imp_motion *mb, imp_vec3 wb,
                            imp_vec3 n, imp_vec3 *x) {
    double best = normal_speed(ma, wa, mb, wb, n, *x);
    const imp_shape *sh[2] = {sa, sb};
    const imp_motion *m[2] = {ma, mb};
    double scale = imp_fmax(imp_max_abs(ma->p), imp_max_abs(mb->p));
    for (int k = 0; k < 2; ++k) {
        const imp_shape *me = sh[k], *other = sh[1 - k];
        if (me->type == IMP_SHAPE_HALFSPACE) continue;
        imp_vec3 dir = k == 0 ? n : imp_neg(n), buf[8];
        const imp_vec3 *pts;
        double rad, h = -INFINITY, reach = 0;
        size_t np = imp_shape_points(me, s->dim, buf, &pts, &rad);
        for (size_t q = 0; q < np; ++q) {
            h = imp_fmax(h, imp_dot(dir, pts[q]));
            reach = imp_fmax(reach, imp_len(pts[q]));
        }
        double eps = CONTACT_REL * (scale + reach + rad);
        imp_shape dot = {.type = IMP_SHAPE_SPHERE};
        for (size_t q = 0; q < np; ++q) {
            if (imp_dot(dir, pts[q]) < h - eps) continue;
            imp_vec3 at = imp_madd(imp_add(m[k]->p, pts[q]), dir, rad);
            imp_overlap_result o = imp_overlap(&dot, at, other, m[1 - k]->p, s->dim);
            if (o.state == IMP_OVERLAP_APART && o.distance > eps) continue;
            double u = normal_speed(ma, wa, mb, wb, n, at);
            if (u < best) {
                best = u;
                *x = at;
            }
        }
    }
    return best;
}

/* Solver calls between polls of the stop check by a turning pair's search. */
#define GRAZE_POLL 64

/* How much deeper than it starts (in IMP_ROT_DEPTH_REL of the pair's scale) a standing
 * contact may get before the search stops there: small enough that a contact within one is
 * resolved well within the contract's 1e-9 of the scale (the tumbling rooms of
 * test_simulate_turning.c meet none deeper than 1e-13 of the room), large against the
 * rounding margin, so that the steps through it stay long. */
#define STANDING_SLACK 0.25

/* A body's part of a turning pair's length scale: a halfspace's offset (its bounding radius
 * is infinite), else its position's largest coordinate and bounding radius. */
static double scale_part(const imp_sim *s, uint32_t i, const imp_shape *sh, const imp_motion *m) {
    if (s->sb[i].flags & F_HALFSPACE) return fabs(sh->offset);
    return imp_max_abs(m->p) + s->br[i];
}

/*
 * A pair in which a shape other than a sphere turns (rotation): imp_toi_rotating from `now`
 * over the window, shortened so that neither body turns more than IMP_ROT_MAX_ANGLE / 2 in
 * it (when that shortens it and no contact is found, the owner is predicted again at its
 * end: an AGAIN event). A contact whose point approaches (the relative velocity of the two
 * bodies at the contact point along the normal is < 0) is the pair's event. One that does
 * not (a graze; a pair just resolved and parting; a pair that starts interpenetrating, or
 * slides or spins in contact) is a standing contact: the search goes on (from the end of a
 * touch's tolerance, or from an overlap's time) by imp_toi_rotating_standing with
 * standing = eta = depth + STANDING_SLACK delta (delta = IMP_ROT_DEPTH_REL of the pair's
 * scale), which advances by certified steps of (lo + eta) / L (L = |v_rel| + |a_rel| s +
 * |w_a| r_a + |w_b| r_b, the solver's motion bound, or the plane gap along the normal,
 * which a turn about the normal does not move) until a placement proves the pair apart by
 * eta / 2, and from there searches as usual: so the next contact after the pair has parted
 * is found exactly as any contact, and one within the standing contact once it may be eta
 * deep (then resolved if it approaches). No fixed step walks through the contact: a pair
 * sliding in contact costs steps of about (eta - depth) / L, not of the time tolerance.
 * When the solver finds the pair possibly eta deep without approaching, eta doubles.
 * Solver calls per prediction of the pair: each call but the last ends at a contact that
 * does not approach; a call in normal search reaches one only at a touch after a placement
 * proved the pair apart by eta / 2, and a call in a standing contact ends only where eta
 * doubles, at most log2(4 S / delta) + 3 = 36 times in a row (S the pair's scale: no
 * overlap is deeper than the shapes' extent, past which nothing is found). So the calls
 * are at most 37 (G + 1), G the touches of the pair within the window that follow a gap
 * of at least STANDING_SLACK delta / 2 (each a relative travel of that much: G <= T L /
 * (STANDING_SLACK delta / 2) over a window T, the order of imp_toi_rotating's own bound),
 * and the distance queries of all of them together within imp_toi_rotating's bound for
 * the window (each advances by at least its width or proves the rest free); polled every
 * IMP_ROT_POLL_STEPS queries by the solver and every GRAZE_POLL calls here.
 */
static void predict_turning(imp_sim *s, uint32_t i, uint32_t j, const imp_shape *shi,
                            const imp_motion *mi, best_ev *be) {
    double from = s->now, eta = 0.0;
    imp_vec3 wi = s->w[i], wj = s->w[j];
    double wmax = imp_fmax(imp_len(wi), imp_len(wj)), cap = 0.5 * IMP_ROT_MAX_ANGLE / wmax;
    for (unsigned k = 1;; ++k) {
        if (k % GRAZE_POLL == 0 && (s->stopped_by = imp_stop_now(&s->stop)) != 0) {
            s->halted = 1;
            return;
        }
        double end = imp_fmin(be->t, s->horizon), window = end - from;
        if (!(window > 0)) return;
        int capped = window > cap;
        if (capped) window = cap;
        imp_shape ti, tj;
        const imp_shape *si = shi, *sj;
        imp_motion ma = *mi, mb;
        if (from == s->now) {
            body_at_slot(s, j, from, &tj, &sj, &mb, 1);
        } else {
            body_at_slot(s, i, from, &ti, &si, &ma, 2);
            body_at_slot(s, j, from, &tj, &sj, &mb, 3);
        }
        imp_toi_rotating_input in = {si, sj, ma, mb, wi, wj, s->dim, window, &s->stop, 0};
        int stopped = 0;
        s->st.predictions++;
        imp_toi_result r = imp_toi_rotating_standing(&in, eta, &stopped);
        if (stopped) {
            s->stopped_by = stopped;
            s->halted = 1;
            return;
        }
        if (r.state == IMP_TOI_FAILED) { /* NOMEM (the turn is kept within the bound) */
            s->failed = 1;
            return;
        }
        if (r.state == IMP_TOI_NONE) {
            if (capped && from + window < be->t) {
                be->t = from + window;
                be->partner = AGAIN;
            }
            return;
        }
        imp_motion pa = {imp_path_at(ma.p, ma.v, ma.a, r.time), imp_path_vel(ma.v, ma.a, r.time),
                         ma.a};
        imp_motion pb = {imp_path_at(mb.p, mb.v, mb.a, r.time), imp_path_vel(mb.v, mb.a, r.time),
                         mb.a};
        imp_shape ci, cj;
        const imp_shape *pi = si, *pj = sj;
        if (r.time > 0) { /* the shapes at the contact's time */
            imp_motion tmp;
            body_at_slot(s, i, from + r.time, &ci, &pi, &tmp, 2);
            body_at_slot(s, j, from + r.time, &cj, &pj, &tmp, 3);
        }
        double vn = contact_point(s, pi, &pa, wi, pj, &pb, wj, r.normal, &r.point);
        if (vn < 0) {
            double t = from + r.time;
            if (t < be->t) {
                be->t = t;
                be->partner = j;
                be->point = r.point;
                be->normal = r.normal;
            }
            return;
        }
        /* a standing contact: OVERLAPPING's depth, a graze's 0, or (found within a standing
         * contact) the depth it may have reached */
        double delta = IMP_ROT_DEPTH_REL * (scale_part(s, i, si, &ma) + scale_part(s, j, sj, &mb));
        if (r.state == IMP_TOI_HIT && r.depth > 0) { /* eta reached without approach */
            eta = 2.0 * r.depth;
        } else { /* a touch (depth 0) or an overlap at `from` */
            eta = r.depth + STANDING_SLACK * delta;
        }
        /* on from the end of a touch's tolerance (contact by then; progress), or from the
         * overlap's time */
        from += r.state == IMP_TOI_HIT ? r.time + r.tolerance : r.time;
    }
}

static void predict_pair(imp_sim *s, uint32_t i, uint32_t j, const imp_shape *shi,
                         const imp_motion *mi, best_ev *be) {
    if (i == j) return;
    uint8_t fi = s->sb[i].flags, fj = s->sb[j].flags;
    if ((fi & F_STATIC) && (fj & F_STATIC)) return;
    if (frozen(fi) && frozen(fj)) return;
    if ((fi | fj) & F_RIDER) { /* one cluster moves as one */
        uint32_t ri = s->sc[i].root == NONE ? i : s->sc[i].root,
                 rj = s->sc[j].root == NONE ? j : s->sc[j].root;
        if (ri == rj) return;
    }
    if (s->sb[i].support == j || s->sb[j].support == i) return;
    /* two default filters touch: no load of the caller's bodies */
    if (!(s->sb[i].default_filter & s->sb[j].default_filter) &&
        !imp_filter_touch(s->b[s->orig[i]].filter, s->b[s->orig[j]].filter))
        return;
    double window = imp_fmin(be->t, s->horizon) - s->now;
    if (!(window > 0)) return;
    if (turning(s, i) || turning(s, j)) {
        predict_turning(s, i, j, shi, mi, be);
        return;
    }
    imp_motion mj;
    imp_toi_result r;
    if (fi & fj & F_SPHERE) {
        /* what imp_toi_shapes does for two spheres, without reading the shapes */
        mj = motion_at(s, j, s->now);
        if (spheres_apart(mi, &mj, s->sb[i].radius + s->sb[j].radius, window)) return;
        s->st.predictions++;
        imp_toi_spheres_input in = {*mi, mj, s->sb[i].radius, s->sb[j].radius, window};
        r = imp_toi_spheres_impact(&in);
    } else {
        if ((fi & F_SPHERE) && (fj & F_HALFSPACE) && (fj & F_STILL) &&
            halfspace_apart(mi, s->sb[i].radius, s->b[s->orig[j]].shape, window))
            return;
        imp_shape tmp;
        const imp_shape *shj;
        body_at_slot(s, j, s->now, &tmp, &shj, &mj, 1);
        s->st.predictions++;
        r = imp_toi_shapes(shi, mi, shj, &mj, s->dim, window);
    }
    double t;
    if (r.state == IMP_TOI_FAILED) { /* NOMEM: the supported pairs are a precondition */
        s->failed = 1;
        return;
    }
    if (r.state == IMP_TOI_HIT) {
        t = s->now + r.time;
    } else if (r.state == IMP_TOI_OVERLAPPING) {
        /* approaching: now; separating but accelerating together (a body pressed on
         * another): when the separation stops */
        double vn = imp_dot(imp_sub(mj.v, mi->v), r.normal);
        double an = imp_dot(imp_sub(mj.a, mi->a), r.normal);
        if (vn < 0 || (vn == 0 && an < 0))
            t = s->now;
        else if (vn > 0 && an < 0)
            t = s->now + vn / -an;
        else
            return;
    } else {
        return;
    }
    if (t < be->t) {
        be->t = t;
        be->partner = j;
        be->point = r.point;
        be->normal = r.normal;
    }
}

/* Body i against the world (static, infinite mass): its first contact in the window, as a
 * pair's (the normal from i towards the collider). Touching or overlapping at `now`
 * counts when i moves into the surface, or stays and accelerates into it: a body resting
 * on world geometry under gravity is not settled (it meets it again at once, each time an
 * event, until max_events). */
static void predict_world(imp_sim *s, uint32_t i, const imp_shape *shi, const imp_motion *mi,
                          best_ev *be) {
    double window = imp_fmin(be->t, s->horizon) - s->now;
    if (!(window > 0)) return;
    s->st.predictions++;
    imp_world_cast c = {shi, *mi, window, s->b[s->orig[i]].filter, {0, 0, 0}, NULL};
    imp_world_cast_result r = imp_world_shapecast(s->world, &c, NULL);
    if (r.state == IMP_WORLD_FAILED) { /* NOMEM: the supported shapes are a precondition */
        s->failed = 1;
        return;
    }
    if (r.state != IMP_WORLD_HIT && r.state != IMP_WORLD_OVERLAPPING) return;
    imp_vec3 n = imp_neg(r.normal); /* from i towards the collider */
    double t = s->now + r.time;
    if (r.state == IMP_WORLD_OVERLAPPING) {
        double vn = imp_dot(mi->v, n), an = imp_dot(mi->a, n);
        if (!(vn > 0 || (vn == 0 && an > 0))) return;
        t = s->now;
    }
    if (t < be->t) {
        be->t = t;
        be->partner = WORLD;
        be->point = r.point;
        be->normal = n;
        be->collider = r.collider;
        be->index = r.index;
        be->kind = r.kind;
    }
}

/* Body i (a grid body) against the bodies of the 3^dim cells around its own; only those of
 * the cells it has just entered when axis >= 0 (it crossed into its cell along that axis in
 * direction dir: the cells at dir beyond its own along it). Also predicts i's next cell
 * crossing (predict_crossing). */
static void predict_cells(imp_sim *s, uint32_t i, const imp_shape *shi, const imp_motion *mi,
                          best_ev *be, int axis, int dir) {
    /* The neighbours are gathered first and predicted against after: the gathering loads
     * (slots, then records) are independent from cell to cell and overlap, where a time of
     * impact between them would make each wait for the last. Same order. */
    uint32_t near[GATHER];
    size_t nn = 0;
    int ncells = s->dim == 3 ? 27 : 9;
    const int32_t *c = s->sb[i].cell;
    /* every cell's first body first: independent loads, whose misses overlap. Around a cell
     * inside the dense box the slots are the body's own plus fixed offsets; elsewhere each
     * cell is looked up (and a hash bucket's bodies checked for their cell) */
    uint32_t first[27];
    int inside = s->n_dense > 0, hashed = 0;
    for (int k = 0; k < s->dim; ++k) {
        int64_t x = (int64_t)c[k] - s->dlo[k];
        inside &= x >= 1 && (uint64_t)x + 1 < s->dn[k];
    }
    size_t at = inside ? bucket_of(s, c) : 0;
    for (int q = 0; q < ncells; ++q) {
        if (axis >= 0 && s->near_d[q][axis] != dir) {
            first[q] = NONE;
        } else if (inside) {
            first[q] = s->head[(size_t)((int64_t)at + s->near_off[q])];
        } else {
            int32_t nc[3];
            near_cell(s->dim, c, q, nc);
            size_t b = bucket_of(s, nc);
            hashed |= b >= s->n_dense;
            first[q] = s->head[b];
        }
    }
    for (int q = 0; q < ncells; ++q) {
        for (uint32_t j = first[q]; j != NONE; j = s->next[j]) {
            /* a slot of the dense box holds its cell's bodies only; a hash bucket may hold
             * other cells' too (their record's cell says) */
            if (hashed) {
                int32_t nc[3];
                near_cell(s->dim, c, q, nc);
                const int32_t *cj = s->sb[j].cell;
                if (cj[0] != nc[0] || cj[1] != nc[1] || cj[2] != nc[2]) continue;
            }
            /* the record asked for now, so that it arrives while the rest are gathered */
            ask_record(s, j);
            near[nn++] = j;
            if (nn < GATHER) continue;
            for (size_t k = 0; k < nn; ++k)
                predict_pair(s, i, near[k], shi, mi, be);
            nn = 0;
        }
    }
    /* the body's next crossing (which schedule reads) needs its own motion alone: computed
     * here, between asking for the neighbours' records and reading them, it covers part of
     * the wait (bench_simulate --case, 100k spheres: 1.05x to 1.1x the contacts per second
     * of computing it after the pairs; a crowd of more than GATHER has had its first
     * batches predicted by now, which changes nothing but the wait) */
    predict_crossing(s, i, mi);
    for (size_t k = 0; k < nn; ++k)
        predict_pair(s, i, near[k], shi, mi, be);
}

/* Partner of a best_ev that keeps the body's pair event as it is (predict_entered). */
#define KEEP (UINT32_MAX - 4)

/* Body i's pair event becomes be's (unless KEEP), and the earlier of it and its next crossing
 * (predict_cells predicted it; a global body never crosses) is its pending event (none past
 * the horizon). */
static void schedule(imp_sim *s, uint32_t i, const best_ev *be) {
    sevent *ev = &s->ev[i];
    if (be->partner != KEEP) {
        if (be->partner == WORLD) {
            s->ev_collider[i] = be->collider;
            s->ev_index[i] = be->index;
            s->ev_kind[i] = (uint8_t)be->kind;
        }
        ev->t = be->partner == NONE ? INFINITY : be->t;
        ev->point = be->point;
        ev->normal = be->normal;
        ev->partner = be->partner;
        ev->traj = be->partner < AGAIN ? s->sb[be->partner].traj : 0;
    }
    if (s->sb[i].flags & F_GLOBAL) s->sb[i].t_cross = INFINITY;
    double t = imp_fmin(ev->t, s->sb[i].t_cross);
    if (!(t <= s->horizon)) {
        unqueue(s, i);
        return;
    }
    qev e = {t, i, s->sb[i].seq};
    uint32_t partner = event_partner(s, i);
    push(s, e, partner < AGAIN ? partner : NONE); /* CROSS, WORLD and AGAIN are above bodies */
}

/*
 * Body i's pending event from `now`: its earliest contact with a body near it (the cells
 * around it, the globals; every body for a global), with the world, or an AGAIN, in
 * [now, horizon], and its next cell crossing, apart. The pairs' window is not cut at the
 * crossing (each found contact shortens it): so at a crossing the body's pair event still
 * covers the bodies it was predicted against, and only those of the cells it enters are
 * new (predict_entered; Donev, Torquato, Stillinger 2005, sec. IV; Bannerman et al. 2011,
 * DynamO, keep pair events across cell transitions the same way).
 */
static void predict(imp_sim *s, uint32_t i) {
    s->sb[i].seq++;
    best_ev be = {.t = INFINITY, .partner = NONE};
    uint8_t fi = s->sb[i].flags;
    imp_shape tmp;
    const imp_shape *shi;
    imp_motion mi;
    body_at(s, i, s->now, &tmp, &shi, &mi);
    if (fi & F_GLOBAL) {
        for (uint32_t j = 0; j < (uint32_t)s->n; ++j)
            predict_pair(s, i, j, shi, &mi, &be);
    } else {
        predict_cells(s, i, shi, &mi, &be, -1, 0);
        for (size_t g = 0; g < s->n_globals; ++g)
            predict_pair(s, i, s->globals[g], shi, &mi, &be);
    }
    if (s->world && !(fi & (F_STATIC | F_HALFSPACE | F_ASLEEP))) predict_world(s, i, shi, &mi, &be);
    schedule(s, i, &be);
}

/*
 * Body i has just crossed into its cell along `axis` in direction dir, on the path it was
 * predicted on: its pair event stands (the pairs it was predicted against were searched to
 * its time, not to the crossing; a partner whose path changed since makes it stale, found
 * when it comes up), so only the bodies of the cells it enters are new to it; they are
 * searched up to that event's time. The globals and the world were searched with the rest.
 */
static void predict_entered(imp_sim *s, uint32_t i, int axis, int dir) {
    s->sb[i].seq++;
    best_ev be = {.t = s->ev[i].t, .partner = KEEP};
    imp_shape tmp;
    const imp_shape *shi;
    imp_motion mi;
    body_at(s, i, s->now, &tmp, &shi, &mi);
    predict_cells(s, i, shi, &mi, &be, axis, dir);
    schedule(s, i, &be);
}

/* ---- events ----------------------------------------------------------------------------- */

static void move_to(imp_sim *s, uint32_t i, double t) {
    if (s->rot) {
        s->rq[i] = turn_at(s, i, t);
        s->ang[i] += s->w[i].z * (t - s->sb[i].tref);
    }
    imp_motion m = motion_at(s, i, t);
    s->sb[i].p = m.p;
    s->sb[i].v = m.v;
    s->sb[i].tref = t;
}

/* Squared normal speed below which body i, leaving halfspace normal n, rests on it. */
static double rest_speed2(const imp_sim *s, uint32_t i, imp_vec3 n) {
    double an = imp_dot(s->sc[i].a_full, n);
    return an < 0 ? -2.0 * an * s->h_rest : -1.0;
}

/* Body i's acceleration while awake: the full one, less its normal part while it rests on a
 * halfspace (that halfspace's normal force). */
static imp_vec3 awake_accel(const imp_sim *s, uint32_t i) {
    uint32_t h = s->sb[i].support;
    if (h == NONE) return s->sc[i].a_full;
    imp_vec3 n = s->b[s->orig[h]].shape->normal;
    return imp_madd(s->sc[i].a_full, n, -imp_dot(s->sc[i].a_full, n));
}

/* After a contact of non-static body i with `other` (normals unit, out of the halfspace when
 * other is one): rest, keep resting, or lift off. Returns 1 when i's path changed. */
static int update_support(imp_sim *s, uint32_t i, uint32_t other) {
    uint32_t h = s->sb[i].support;
    if (h == NONE) {
        if ((s->sb[other].flags & (F_HALFSPACE | F_STILL)) != (F_HALFSPACE | F_STILL)) return 0;
        imp_vec3 n = s->b[s->orig[other]].shape->normal;
        double w = imp_dot(s->sb[i].v, n), w2 = rest_speed2(s, i, n);
        if (!(w2 >= 0) || w * w > w2) return 0;
        s->sb[i].support = other;
        s->sb[i].v = imp_madd(s->sb[i].v, n, -w);
        s->sb[i].a = awake_accel(s, i);
        s->st.rests++;
        return 1;
    }
    imp_vec3 n = s->b[s->orig[h]].shape->normal;
    double w = imp_dot(s->sb[i].v, n), w2 = rest_speed2(s, i, n);
    if (w * w <= w2) {
        s->sb[i].v = imp_madd(s->sb[i].v, n, -w);
        return w != 0;
    }
    s->sb[i].support = NONE;
    s->sb[i].a = s->sc[i].a_full;
    return 1;
}

/* ---- resting contacts (guard 4) ---------------------------------------------------------- */

/* Squared speed below which non-static body i is at rest: too slow to rise IMP_SIM_REST_REL S
 * against its acceleration (0 without one, and for static bodies). */
static double still_speed2(const imp_sim *s, uint32_t i) {
    if (s->sb[i].flags & F_STATIC) return 0;
    return 2.0 * imp_len(s->sc[i].a_full) * s->h_rest;
}

/* Every rider of root r leaves its cluster at time t: each keeps its position and velocity
 * there, takes its awake acceleration back and is predicted again. */
static void release_cluster(imp_sim *s, uint32_t r, double t) {
    for (uint32_t m = s->sc[r].rhead, next; m != NONE; m = next) {
        next = s->rnext[m];
        move_to(s, m, t);
        s->sb[m].flags &= (uint8_t)~F_RIDER;
        s->sc[m].root = NONE;
        s->sb[m].a = awake_accel(s, m);
        s->sb[m].traj++;
        s->st.wakes++;
        predict(s, m);
    }
    s->sc[r].rhead = NONE;
    s->cmass[r] = s->sc[r].mass;
}

/* Body i's path changes at time t (the caller predicts it): what its cluster carried is
 * released. */
static void path_changed(imp_sim *s, uint32_t i, double t) {
    s->sb[i].traj++;
    if (s->sc[i].rhead != NONE) release_cluster(s, i, t);
}

/* Rider i leaves its cluster at time t (it is met by another body): its path there goes on
 * with its awake acceleration. */
static void leave_cluster(imp_sim *s, uint32_t i, double t) {
    uint32_t r = s->sc[i].root;
    move_to(s, i, t);
    if (link_cut(s->rnext, s->rprev, i)) s->sc[r].rhead = s->rnext[i];
    s->cmass[r] -= s->sc[i].mass;
    s->sc[i].root = NONE;
    s->sb[i].flags &= (uint8_t)~F_RIDER;
    s->sb[i].a = awake_accel(s, i);
    s->st.wakes++;
}

/* Body i falls asleep at the current time (its path is referenced there), resting on `on`. */
static void fall_asleep(imp_sim *s, uint32_t i, uint32_t on, double t) {
    path_changed(s, i, t);
    s->sb[i].v = imp_v3(0, 0, 0);
    s->sb[i].a = imp_v3(0, 0, 0);
    s->sb[i].flags |= F_ASLEEP;
    s->sleep_on[i] = on;
    s->st.sleeps++;
}

/* Whether y (a body or WORLD) holds still for a body that comes to rest on it: static and
 * still, asleep, or a body resting motionless on a still halfspace (which then falls asleep
 * on it, so that it does not slide away from under what rests on it). */
static int grounded(imp_sim *s, uint32_t y, double t) {
    if (y == WORLD || frozen(s->sb[y].flags)) return 1;
    if ((s->sb[y].flags & (F_STATIC | F_RIDER)) || s->sb[y].support == NONE) return 0;
    if (imp_max_abs(s->sb[y].a) != 0 || imp_dot(s->sb[y].v, s->sb[y].v) > still_speed2(s, y))
        return 0;
    move_to(s, y, t);
    fall_asleep(s, y, s->sb[y].support, t);
    predict(s, y);
    return 1;
}

/* Awake root x and its riders join the cluster of root r at time t: all take the velocity
 * of a perfectly inelastic collision of the two clusters (momentum kept, kinetic energy
 * lost; when r rests on a halfspace, less the part into it, which the halfspace takes) and
 * r's acceleration, and are predicted again (x too). */
static void join_cluster(imp_sim *s, uint32_t x, uint32_t r, double t) {
    double mx = s->cmass[x], mr = s->cmass[r];
    imp_vec3 vr = motion_at(s, r, t).v, vx = motion_at(s, x, t).v;
    imp_vec3 v = imp_scale(imp_add(imp_scale(vx, mx), imp_scale(vr, mr)), 1.0 / (mx + mr));
    if (s->sb[r].support != NONE) {
        /* the halfspace r rests on takes what would push into it, and r keeps resting when
         * the rest would not lift it off (guard 2): a normal speed of the size of rounding
         * left here was removed by the contact's update_support as a change of r's path,
         * which released the cluster just formed */
        imp_vec3 n = s->b[s->orig[s->sb[r].support]].shape->normal;
        double vn = imp_dot(v, n);
        if (vn < 0 || vn * vn <= rest_speed2(s, r, n)) v = imp_madd(v, n, -vn);
    }
    /* x's riders, then x, move to r's list */
    uint32_t m = s->sc[x].rhead;
    s->sc[x].rhead = NONE;
    s->cmass[x] = s->sc[x].mass;
    for (uint32_t next; m != NONE; m = next) {
        next = s->rnext[m];
        s->sc[m].root = r;
        link_push(&s->sc[r].rhead, s->rnext, s->rprev, m);
    }
    s->sc[x].root = r;
    s->sb[x].flags |= F_RIDER;
    link_push(&s->sc[r].rhead, s->rnext, s->rprev, x);
    s->cmass[r] = mx + mr;
    imp_vec3 a = s->sb[r].a;
    for (uint32_t k = r; k != NONE; k = k == r ? s->sc[r].rhead : s->rnext[k]) {
        move_to(s, k, t);
        s->sb[k].v = v;
        if (k != r) s->sb[k].a = a;
        s->sb[k].traj++;
        predict(s, k);
    }
    s->st.sleeps++;
}

/* After a contact at time t of awake non-static body x with y (a body or WORLD), x
 * approaching at normal speed u before it. The contact is a resting one when x is now too
 * slow relative to y to rise IMP_SIM_REST_REL S against its acceleration (still_speed2), or
 * when it is slow and follows x's previous contact (with anything) within t_c, the time x
 * takes to fall that height from rest: the TC criterion of Luding and McNamara 1998 ("How to
 * handle the inelastic collapse of a dissipative hard-sphere gas with the TC model",
 * Granular Matter 1), under which a contact that follows a particle's last one within t_c
 * is part of a lasting contact, not a collision. A resting contact ends the chain of ever faster
 * contacts (inelastic collapse, or zero-time contacts of a body pressed on another):
 *  - on y that holds still (grounded), x falls asleep (velocity and acceleration 0) until
 *    it is met faster than that, or y wakes;
 *  - on a moving body, x (with what it carries) joins y's cluster: a perfectly inelastic
 *    collision, after which the cluster moves on its root's path (the root is what rests on
 *    a halfspace, when one of them does) until the root's path changes.
 * Returns 1 when x's path changed. */
static int settle(imp_sim *s, uint32_t x, uint32_t y, double u, double t) {
    double v2 = still_speed2(s, x);
    double since = t - s->sc[x].last_t;
    int repeat = since * since * imp_len(s->sc[x].a_full) <= 2.0 * s->h_rest;
    s->sc[x].last_t = t;
    if (!(v2 > 0) || (s->sb[x].flags & F_ASLEEP)) return 0;
    /* resting on a tilted halfspace it slides, exactly (guard 2) */
    if (s->sb[x].support == y && imp_max_abs(s->sb[x].a) != 0) return 0;
    imp_vec3 vy = imp_v3(0, 0, 0);
    if (y != WORLD && !(s->sb[y].flags & F_HALFSPACE)) vy = motion_at(s, y, t).v;
    imp_vec3 w = imp_sub(s->sb[x].v, vy);
    if (!(imp_dot(w, w) <= v2 || (repeat && u * u <= v2))) return 0;
    if (grounded(s, y, t)) {
        if (s->sb[x].flags & F_RIDER) leave_cluster(s, x, t);
        fall_asleep(s, x, y == WORLD || (s->sb[y].flags & F_STATIC) ? NONE : y, t);
        return 1;
    }
    if (s->sb[y].flags & (F_STATIC | F_ASLEEP)) return 0;
    uint32_t X = s->sc[x].root == NONE ? x : s->sc[x].root,
             r = s->sc[y].root == NONE ? y : s->sc[y].root;
    if (r == X) return 0;
    uint32_t sx = s->sb[X].support, sr = s->sb[r].support;
    if (sx != NONE && sx != sr) {
        if (sr != NONE) return 0;
        /* x's cluster rests on a halfspace, y's is free: y's joins x's */
        join_cluster(s, r, X, t);
        return 1;
    }
    join_cluster(s, X, r, t);
    return 1;
}

/* Pushes m on the wake stack when it is asleep on k. */
static void wake_if_on(imp_sim *s, uint32_t m, uint32_t k, size_t *top) {
    if ((s->sb[m].flags & F_ASLEEP) && s->sleep_on[m] == k) {
        s->sb[m].flags &= (uint8_t)~F_ASLEEP;
        s->wake_stack[(*top)++] = m;
    }
}

/* Wakes asleep body j at time t and, transitively, every asleep body resting on it (sleep_on;
 * they are in the cells around it, or global): each takes its awake acceleration back with
 * zero velocity. Those resting on j are predicted here; j is its caller's. */
static void wake(imp_sim *s, uint32_t j, double t) {
    size_t top = 0;
    s->wake_stack[top++] = j;
    s->sb[j].flags &= (uint8_t)~F_ASLEEP;
    while (top > 0) {
        uint32_t k = s->wake_stack[--top];
        s->sb[k].tref = t; /* its path is constant: p is its position at t */
        s->sb[k].a = awake_accel(s, k);
        s->st.wakes++;
        if (s->sb[k].flags & F_GLOBAL) {
            for (uint32_t m = 0; m < (uint32_t)s->n; ++m)
                wake_if_on(s, m, k, &top);
        } else {
            int ncells = s->dim == 3 ? 27 : 9;
            for (int q = 0; q < ncells; ++q) {
                int32_t nc[3];
                near_cell(s->dim, s->sb[k].cell, q, nc);
                for (uint32_t m = s->head[bucket_of(s, nc)]; m != NONE; m = s->next[m])
                    wake_if_on(s, m, k, &top);
            }
            for (size_t g = 0; g < s->n_globals; ++g)
                wake_if_on(s, s->globals[g], k, &top);
        }
        if (k != j) {
            s->sb[k].traj++;
            predict(s, k);
        }
    }
}

/* The next recorded event's slot (the record grows by doubling); NULL out of memory (the
 * simulation is then failed). */
static imp_sim_event *record_slot(imp_sim *s) {
    if (s->nrec == s->rcap) {
        size_t cap = s->rcap ? 2 * s->rcap : 256;
        imp_sim_event *e = realloc(s->rec, cap * sizeof *e);
        if (!e) {
            s->failed = 1;
            return NULL;
        }
        s->rec = e;
        s->rcap = cap;
    }
    return &s->rec[s->nrec++];
}

/* Counts the contact of i with body j at time t, and records it (by the caller's indices,
 * a < b) with its point and normal (i's event as predicted, kept by the caller before
 * anything predicts i again) and the impulse on j. */
static void record_contact(imp_sim *s, uint32_t i, uint32_t j, double t, imp_vec3 point,
                           imp_vec3 normal, imp_vec3 impulse) {
    s->st.events++;
    if (!s->record) return;
    imp_sim_event *e = record_slot(s);
    if (!e) return;
    memset(e, 0, sizeof *e);
    e->time = t;
    e->point = point;
    uint32_t oi = s->orig[i], oj = s->orig[j];
    int keep = oi < oj;
    e->a = keep ? oi : oj;
    e->b = keep ? oj : oi;
    e->normal = keep ? normal : imp_neg(normal);
    e->impulse = keep ? impulse : imp_neg(impulse);
}

/* R m R^T for the rotation q (a tensor of the shape as given, turned with it; 2D: m[8] is
 * kept by a turn about z). */
static imp_mat3 turn_tensor(imp_quat q, const imp_mat3 *m, int dim) {
    if (dim == 2 || is_identity(q)) return *m;
    imp_vec3 col[3];
    for (int c = 0; c < 3; ++c) /* R m: each column turned */
        col[c] = imp_quat_rotate(q, imp_v3(m->m[c], m->m[3 + c], m->m[6 + c]));
    imp_mat3 r;
    for (int row = 0; row < 3; ++row) { /* (R (R m)^T)^T: each row of R m turned */
        imp_vec3 x =
            imp_quat_rotate(q, imp_v3((&col[0].x)[row], (&col[1].x)[row], (&col[2].x)[row]));
        r.m[3 * row] = x.x;
        r.m[3 * row + 1] = x.y;
        r.m[3 * row + 2] = x.z;
    }
    return r;
}

/* Body i's rotation at time t for the response (a static body: infinite inertia). */
static imp_respond_turn turn_of(const imp_sim *s, uint32_t i, double t, const imp_motion *m) {
    imp_respond_turn r;
    memset(&r, 0, sizeof r);
    r.position = m->p;
    r.omega = s->w[i];
    if (s->sb[i].flags & F_STATIC) return r;
    imp_quat q = turn_at(s, i, t);
    r.inertia = turn_tensor(q, &s->I0[i], s->dim);
    r.inv_inertia = turn_tensor(q, &s->I0inv[i], s->dim);
    return r;
}

/* Guard 4 at a contact of i and j approaching at u: whether an asleep one of them is met
 * gently (slower than the wake speed, and not pushed by a moving static body, which nothing
 * stops), and the squared rest speed of the pair in *rest2. */
static int gentle_meeting(const imp_sim *s, uint32_t i, uint32_t j, double u, double *rest2) {
    *rest2 = imp_fmax(still_speed2(s, i), still_speed2(s, j));
    int pushed = ((s->sb[i].flags | s->sb[j].flags) & (F_STATIC | F_STILL)) == F_STATIC;
    return !(u > 0) || (u * u <= IMP_SIM_WAKE_REL / IMP_SIM_REST_REL * *rest2 && !pushed);
}

/* Body k of a contact at time t, when asleep: met gently it holds still for the contact
 * (*held = 1), else it wakes with what rests on it. Returns 1 when it woke. */
static int meet_asleep(imp_sim *s, uint32_t k, int gentle, double t, int *held) {
    if (!(s->sb[k].flags & F_ASLEEP)) return 0;
    if (gentle) {
        *held = 1;
        return 0;
    }
    wake(s, k, t);
    return 1;
}

/* Whether point q (world) lies inside, by more than margin, the hull of a shape's feature
 * along dir (its points x + pts[k] within margin of the farthest along dir), as seen along
 * dir: in 2D between the feature's two ends across dir; in 3D inside the polygon its points
 * span (a feature of one point, or of points in a line, holds nothing inside). */
static int over_feature(int dim, imp_vec3 x, const imp_vec3 *pts, size_t np, imp_vec3 dir,
                        double margin, imp_vec3 q) {
    double h = -INFINITY;
    for (size_t k = 0; k < np; ++k)
        h = imp_fmax(h, imp_dot(dir, pts[k]));
    imp_vec3 e1, e2;
    if (dim == 2) {
        e1 = imp_v3(-dir.y, dir.x, 0);
        e2 = imp_v3(0, 0, 0);
    } else {
        imp_vec3 t = fabs(dir.x) < 0.6 ? imp_v3(1, 0, 0) : imp_v3(0, 1, 0);
        e1 = imp_normalize_or(imp_cross(dir, t), imp_v3(1, 0, 0));
        e2 = imp_cross(dir, e1);
    }
    /* the feature's points and q in the plane across dir, q at the origin */
    double u[64], v[64];
    size_t m = 0;
    imp_vec3 d = imp_sub(x, q);
    for (size_t k = 0; k < np; ++k) {
        if (imp_dot(dir, pts[k]) < h - margin) continue;
        if (m == 64) return 0; /* a feature of that many points: not judged, not stable */
        imp_vec3 w = imp_add(d, pts[k]);
        u[m] = imp_dot(e1, w);
        v[m] = imp_dot(e2, w);
        ++m;
    }
    if (dim == 2) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t k = 0; k < m; ++k) {
            lo = imp_fmin(lo, u[k]);
            hi = imp_fmax(hi, u[k]);
        }
        return lo < -margin && hi > margin;
    }
    /* every edge of the hull (a pair with all the points on its left, or on it) has the
     * origin on its left by more than the margin; at least three edges */
    int edges = 0;
    for (size_t a = 0; a < m; ++a)
        for (size_t b = 0; b < m; ++b) {
            if (a == b) continue;
            double ex = u[b] - u[a], ey = v[b] - v[a], len = sqrt(ex * ex + ey * ey);
            if (!(len > margin)) continue;
            int hull = 1;
            for (size_t c = 0; c < m && hull; ++c)
                hull = ex * (v[c] - v[a]) - ey * (u[c] - u[a]) >= -margin * len;
            if (!hull) continue;
            if (!(ex * (0 - v[a]) - ey * (0 - u[a]) > margin * len)) return 0;
            ++edges;
        }
    return edges >= 3;
}

/*
 * Guard 4 for a body x of a turning scene after its contact with y, nx the contact normal
 * from x towards y: x falls asleep (velocity, spin and acceleration 0) when y holds still
 * (static and still, or asleep), y is below x (nx within 1e-9 of x's acceleration's
 * direction), no point of x moves faster relative to y than the rest speed (|v| + |w| r_x,
 * r_x its bounding radius, at most sqrt(still_speed2)), and x stands on y: its centre
 * (the point its inertia is about), seen along its acceleration, is inside its touching
 * feature (its points within CONTACT_REL of the scale of its lowest) and inside y's (unless
 * y is a halfspace) by that margin. A sphere stands on anything it meets from above, as it
 * rests on a curved support without rotation (held as if by friction). A box on a face
 * sleeps; one on an edge or a corner goes on rocking, each contact slower than the one
 * before once slow ones are resolved with e = 0 (guard 1), until its face is within the
 * margin of flat. Returns 1 when x fell asleep.
 */
static int rest_turning(imp_sim *s, uint32_t x, uint32_t y, imp_vec3 nx, double t) {
    if (s->sb[x].flags & (F_STATIC | F_ASLEEP)) return 0;
    double v2 = still_speed2(s, x);
    if (!(v2 > 0) || !frozen(s->sb[y].flags)) return 0;
    double sp = imp_len(s->sb[x].v) + imp_len(s->w[x]) * s->br[x];
    if (!(sp * sp <= v2)) return 0;
    imp_vec3 dir = imp_normalize_or(s->sc[x].a_full, imp_v3(0, 0, 0));
    if (!(imp_dot(nx, dir) >= 1.0 - 1e-9)) return 0;
    if (!(s->sb[x].flags & F_SPHERE)) {
        imp_shape tx, ty;
        const imp_shape *shx, *shy;
        imp_motion mx, my;
        body_at_slot(s, x, t, &tx, &shx, &mx, 2);
        body_at_slot(s, y, t, &ty, &shy, &my, 3);
        imp_vec3 buf[8];
        const imp_vec3 *pts;
        double rad;
        size_t np = imp_shape_points(shx, s->dim, buf, &pts, &rad);
        double margin = CONTACT_REL * (imp_max_abs(mx.p) + s->br[x]);
        if (!over_feature(s->dim, mx.p, pts, np, dir, margin, mx.p)) return 0;
        if (!(s->sb[y].flags & F_HALFSPACE)) {
            if (s->sb[y].flags & F_SPHERE) return 0;
            np = imp_shape_points(shy, s->dim, buf, &pts, &rad);
            if (!over_feature(s->dim, my.p, pts, np, imp_neg(dir), margin, mx.p)) return 0;
        }
    }
    fall_asleep(s, x, s->sb[y].flags & F_STATIC ? NONE : y, t);
    s->w[x] = imp_v3(0, 0, 0);
    return 1;
}

/* A contact with rotation: the impulse at the contact point through both inertias
 * (imp_respond_resolve_turning), guard 1 on the approach speed at the point, guard 4's
 * sleep for each body (rest_turning; no resting on a halfspace, no clusters), and slow
 * contacts pressed by gravity as microcollisions. */
static void contact_turning(imp_sim *s, uint32_t i, uint32_t j, double t) {
    int si = (s->sb[i].flags & F_STATIC) != 0, sj = (s->sb[j].flags & F_STATIC) != 0;
    if (!si) move_to(s, i, t);
    if (!sj) move_to(s, j, t);
    imp_shape tmp[2];
    const imp_shape *sh;
    imp_motion mi, mj;
    body_at_slot(s, i, t, &tmp[0], &sh, &mi, 0);
    body_at_slot(s, j, t, &tmp[1], &sh, &mj, 1);
    imp_vec3 x = s->ev[i].point, n = s->ev[i].normal;
    double u = -imp_dot(imp_sub(point_vel(&mj, s->w[j], x), point_vel(&mi, s->w[i], x)), n);
    /* guard 4 as in contact: an asleep body met gently holds still for this contact, met
     * faster it wakes (with what rests on it) */
    double rest2;
    int gentle = gentle_meeting(s, i, j, u, &rest2);
    int changed_i = meet_asleep(s, i, gentle, t, &si),
        changed_j = meet_asleep(s, j, gentle, t, &sj);
    const scontact *bi = &s->sc[i], *bj = &s->sc[j];
    imp_respond_input in = {
        {mi.v, bi->mass, si, bi->restitution, bi->tangential},
        {mj.v, bj->mass, sj, bj->restitution, bj->tangential},
        n,
    };
    if (u < s->u_slow && in.a.restitution * in.b.restitution > 0) {
        in.a.restitution = 0;
        s->st.slow_contacts++;
    }
    /* a microcollision (Mirtich and Canny 1995, "Impulse-based simulation of rigid
     * bodies", Symposium on Interactive 3D Graphics): a contact pressed by gravity that
     * approaches slower than the rest speed (a box standing on a corner, or pivoting on
     * it) is resolved with e = 0 on i's velocity raised by the rest speed towards j, which
     * is then taken back: the impulse leaves the point parting at exactly the rest speed,
     * so the body topples by hops of the rest height, instead of meeting the floor again at
     * the same instant (a loop in which time never advanced) */
    double hop = sqrt(rest2);
    int micro = !si + !sj > 0 && hop > 0 && u < hop;
    if (micro) {
        in.a.restitution = 0;
        in.a.v = imp_madd(in.a.v, n, hop);
    }
    imp_respond_turn ti = turn_of(s, i, t, &mi), tj = turn_of(s, j, t, &mj);
    imp_respond_result r = imp_respond_resolve_turning(&in, &ti, &tj, x);
    if (micro && r.state == IMP_RESPOND_RESOLVED) r.va = imp_madd(r.va, n, -hop);
    if (r.state == IMP_RESPOND_RESOLVED) {
        if (!si) {
            s->sb[i].v = r.va;
            s->w[i] = r.wa;
            changed_i = 1;
        }
        if (!sj) {
            s->sb[j].v = r.vb;
            s->w[j] = r.wb;
            changed_j = 1;
        }
    }
    if (changed_i) s->sb[i].traj++;
    if (changed_j) s->sb[j].traj++;
    if (!si && rest_turning(s, i, j, n, t)) changed_i = 1;
    if (!sj && rest_turning(s, j, i, imp_neg(n), t)) changed_j = 1;
    record_contact(s, i, j, t, x, n, r.impulse);
    predict(s, i);
    if (changed_j && (s->sb[j].flags & F_OWNER)) predict(s, j);
}

static void contact(imp_sim *s, uint32_t i, uint32_t j, double t) {
    if (s->rot) {
        contact_turning(s, i, j, t);
        return;
    }
    /* what the response reads of the two bodies (gentle_meeting's first), asked for now,
     * while their paths are brought to t (a listed event's were asked for by its bucket
     * already; one that went straight into the heap's were not) */
    __builtin_prefetch(&s->sc[i]);
    __builtin_prefetch(&s->sc[j]);
    int si = (s->sb[i].flags & F_STATIC) != 0, sj = (s->sb[j].flags & F_STATIC) != 0;
    if (!si) move_to(s, i, t);
    if (!sj && !(s->sb[j].flags & F_HALFSPACE)) move_to(s, j, t);
    imp_shape tmp;
    const imp_shape *sh;
    imp_motion mi, mj;
    body_at(s, i, t, &tmp, &sh, &mi);
    body_at(s, j, t, &tmp, &sh, &mj);
    /* the event's normal and point, kept: settling and the paths' changes below predict
     * i again, which overwrites its event record */
    const imp_vec3 ev_normal = s->ev[i].normal, ev_point = s->ev[i].point;
    double u = -imp_dot(imp_sub(mj.v, mi.v), ev_normal);
    /* guard 4: an asleep body met slower than the wake speed by a body that is not static
     * holds still (a still static body for this contact); met faster, or pushed by a
     * moving static body (which nothing stops), it wakes, with what rests on it; a carried
     * one leaves its cluster */
    double rest2;
    int gentle = gentle_meeting(s, i, j, u, &rest2);
    int slow = !(u > 0) || u * u <= rest2;
    int woke_i = 0, woke_j = 0;
    /* met slowly, a cluster (a carried body, or a root that carries some) takes no impulse
     * when the two clusters merge (settle): an impulse of the size of rounding would change
     * the root's path and release its riders, which meet again at once (a loop at one
     * instant); otherwise a carried body leaves its cluster and the contact is resolved as
     * any other */
    int merged = 0, tried = slow && (((s->sb[i].flags | s->sb[j].flags) & F_RIDER) ||
                                     s->sc[i].rhead != NONE || s->sc[j].rhead != NONE);
    /* a body that settles here may have left a cluster whose members it was not predicted
     * against (one cluster moves as one): it is predicted again below */
    int settled_j = 0;
    if (tried) merged = settle(s, i, j, u, t) || (settled_j = settle(s, j, i, u, t));
    if (!merged && (s->sb[i].flags & F_RIDER)) woke_i = 1, leave_cluster(s, i, t);
    if (!merged && (s->sb[j].flags & F_RIDER)) woke_j = 1, leave_cluster(s, j, t);
    woke_i |= meet_asleep(s, i, gentle, t, &si);
    woke_j |= meet_asleep(s, j, gentle, t, &sj);
    const scontact *bi = &s->sc[i], *bj = &s->sc[j];
    imp_respond_input in = {
        {mi.v, bi->mass, si, bi->restitution, bi->tangential},
        {mj.v, bj->mass, sj, bj->restitution, bj->tangential},
        ev_normal,
    };
    if (u < s->u_slow && in.a.restitution * in.b.restitution > 0) {
        in.a.restitution = 0;
        s->st.slow_contacts++;
    }
    imp_respond_result r = {.state = IMP_RESPOND_SEPARATING};
    if (!merged) r = imp_respond_resolve(&in);
    int changed_i = woke_i, changed_j = woke_j;
    if (r.state == IMP_RESPOND_RESOLVED) {
        if (!si) {
            s->sb[i].v = r.va;
            changed_i = 1;
        }
        if (!sj) {
            s->sb[j].v = r.vb;
            changed_j = 1;
        }
    }
    if (!si && !(s->sb[i].flags & (F_ASLEEP | F_RIDER))) changed_i |= update_support(s, i, j);
    if (!sj && !(s->sb[j].flags & (F_ASLEEP | F_RIDER))) changed_j |= update_support(s, j, i);
    if (changed_i) path_changed(s, i, t);
    if (changed_j) path_changed(s, j, t);
    if (!tried && !si && settle(s, i, j, u, t)) changed_i = 1;
    if (!tried && !sj && settle(s, j, i, u, t)) changed_j = 1;
    record_contact(s, i, j, t, ev_point, ev_normal, r.impulse);
    predict(s, i);
    if ((changed_j || settled_j) && (s->sb[j].flags & F_OWNER)) predict(s, j);
}

/* Body i meets the world's collider of its pending event at time t: a contact with a
 * static body of infinite mass, efficiencies 1 on the world's side. */
static void contact_world(imp_sim *s, uint32_t i, double t) {
    /* the event as predicted, kept: leaving a cluster, the path's change and settling
     * predict i again, which overwrites its event record */
    const imp_vec3 ev_normal = s->ev[i].normal, ev_point = s->ev[i].point;
    const uint32_t ev_collider = s->ev_collider[i], ev_index = s->ev_index[i];
    const uint32_t ev_kind = s->ev_kind[i];
    if (s->sb[i].flags & F_RIDER) leave_cluster(s, i, t);
    move_to(s, i, t);
    const scontact *bi = &s->sc[i];
    imp_respond_input in = {
        {s->sb[i].v, bi->mass, 0, bi->restitution, bi->tangential},
        {imp_v3(0, 0, 0), 1.0, 1, 1.0, 1.0},
        ev_normal,
    };
    double u = imp_dot(s->sb[i].v, ev_normal);
    if (u < s->u_slow && in.a.restitution > 0) {
        in.a.restitution = 0;
        s->st.slow_contacts++;
    }
    imp_respond_result r = imp_respond_resolve(&in);
    if (r.state == IMP_RESPOND_RESOLVED) s->sb[i].v = r.va;
    path_changed(s, i, t);
    settle(s, i, WORLD, u, t);
    s->st.events++;
    if (s->record) {
        imp_sim_event *e = record_slot(s);
        if (!e) return;
        *e = (imp_sim_event){.time = t,
                             .a = s->orig[i],
                             .b = ev_collider,
                             .point = ev_point,
                             .normal = ev_normal,
                             .impulse = r.impulse,
                             .world = 1,
                             .index = ev_index,
                             .kind = ev_kind};
    }
    predict(s, i);
}

static void crossing(imp_sim *s, uint32_t i) {
    int k = s->sb[i].cross_axis, dir = s->sb[i].cross_dir;
    int32_t *c = s->sb[i].cell;
    grid_remove(s, i);
    c[k] += dir;
    grid_insert(s, i);
    s->st.crossings++;
    predict_entered(s, i, k, dir);
}

imp_sim_stop imp_sim_advance(imp_sim *s, double until) {
    assert(s);
    if (s->failed) return IMP_SIM_STOP_FAILED;
    until = imp_fmin(until, s->horizon);
    unsigned poll = 0;
    if (s->halted) return IMP_SIM_STOP_STOPPED;
    while (queue_top(s) && s->heap[0].t <= until) {
        if (++poll == IMP_STOP_POLL_EVENTS) {
            poll = 0;
            if ((s->stopped_by = imp_stop_now(&s->stop)) != 0) return IMP_SIM_STOP_STOPPED;
        }
        qev e = s->heap[0];
        assert(e.seq == s->sb[e.owner].seq);
        /* every kind of event ends with its owner predicted again, which replaces the
         * entry (or drops it) */
        s->handling = e.owner;
        uint32_t partner = event_partner(s, e.owner);
        if (partner == WORLD) {
            if (s->st.events >= s->max_events) {
                if (e.t > s->now) s->now = e.t;
                return IMP_SIM_STOP_MAX_EVENTS;
            }
            if (e.t > s->now) s->now = e.t;
            contact_world(s, e.owner, s->now);
        } else if (partner == AGAIN) {
            if (e.t > s->now) s->now = e.t;
            s->st.stale++;
            predict(s, e.owner); /* replaces the entry */
        } else if (partner != CROSS && s->ev[e.owner].traj != s->sb[partner].traj) {
            if (e.t > s->now) s->now = e.t;
            predict(s, e.owner); /* replaces the entry (counted stale there) */
        } else if (partner == CROSS) {
            if (e.t > s->now) s->now = e.t;
            crossing(s, e.owner);
        } else {
            if (s->st.events >= s->max_events) {
                if (e.t > s->now) s->now = e.t;
                return IMP_SIM_STOP_MAX_EVENTS;
            }
            if (e.t > s->now) s->now = e.t;
            contact(s, e.owner, partner, s->now);
        }
        s->handling = NONE;
        if (s->failed) return IMP_SIM_STOP_FAILED;
        if (s->halted) return IMP_SIM_STOP_STOPPED;
    }
    if (until > s->now) s->now = until;
    return IMP_SIM_STOP_HORIZON;
}

/* ---- setup ------------------------------------------------------------------------------ */

static double bounding_radius(const imp_shape *sh, int dim) {
    if (sh->type == IMP_SHAPE_HALFSPACE) return INFINITY;
    if (sh->type == IMP_SHAPE_SPHERE) return sh->radius;
    imp_vec3 buf[8];
    const imp_vec3 *pts;
    double r = 0;
    size_t k = imp_shape_points(sh, dim, buf, &pts, &r);
    double m = 0;
    for (size_t q = 0; q < k; ++q)
        m = imp_fmax(m, imp_len(pts[q]));
    return m + r;
}

static int cmp_desc(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a < b) - (a > b);
}

/* Morton key of a cell (its offset from the dense box's first cell, each axis clipped to
 * the key's bits): cells near each other get near keys. */
static uint64_t morton(const imp_sim *s, const int32_t c[3]) {
    int bits = s->dim == 3 ? 21 : 32; /* per axis, so that dim of them fit in 64 */
    uint64_t key = 0, top = ((uint64_t)1 << bits) - 1;
    uint64_t u[3];
    for (int k = 0; k < s->dim; ++k) {
        int64_t d = (int64_t)c[k] - s->dlo[k];
        u[k] = d < 0 ? 0 : (uint64_t)d > top ? top : (uint64_t)d;
    }
    for (int b = bits - 1; b >= 0; --b)
        for (int k = 0; k < s->dim; ++k)
            key = key << 1 | ((u[k] >> b) & 1);
    return key;
}

typedef struct keyed {
    uint64_t key;
    uint32_t index;
} keyed;

static int by_key(const void *x, const void *y) {
    const keyed *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Internal order: the grid bodies by the Morton key of their starting cell, the global ones
 * after them, so that the records a prediction reads (a body and its neighbours) sit close
 * together in memory, a few pages rather than one page each. Before anything refers to an
 * internal index (grid lists, globals, events). Returns 0, -1 out of memory. */
static int reorder(imp_sim *s) {
    size_t n = s->n;
    keyed *k = malloc((n > 0 ? n : 1) * sizeof *k);
    sbody *sb = aligned_alloc(_Alignof(sbody), (n > 0 ? n : 1) * sizeof *sb);
    scontact *sc = aligned_alloc(_Alignof(scontact), (n > 0 ? n : 1) * sizeof *sc);
    double *br = malloc((n > 0 ? n : 1) * sizeof *br);
    if (!k || !sb || !sc || !br) {
        free(k);
        free(sb);
        free(sc);
        free(br);
        return -1;
    }
    for (size_t i = 0; i < n; ++i)
        k[i] = (keyed){(s->sb[i].flags & F_GLOBAL) ? UINT64_MAX : morton(s, s->sb[i].cell),
                       (uint32_t)i};
    qsort(k, n, sizeof *k, by_key);
    for (size_t i = 0; i < n; ++i) {
        uint32_t from = k[i].index;
        sb[i] = s->sb[from];
        sc[i] = s->sc[from];
        br[i] = s->br[from];
        s->orig[i] = from;
        s->slot[from] = (uint32_t)i;
    }
    free(k);
    free(s->sb);
    free(s->sc);
    free(s->br);
    s->sb = sb;
    s->sc = sc;
    s->br = br;
    return 0;
}

#define ALLOC(ptr, count)                                                                          \
    do {                                                                                           \
        (ptr) = calloc((count) > 0 ? (count) : 1, sizeof *(ptr));                                  \
        if (!(ptr)) return -1;                                                                     \
    } while (0)

/* Phase 1 of imp_sim_create: the per-body arrays, zeroed. 0, or -1 when
 * out of memory (what was allocated is the simulation's: destroy frees it). */
static int alloc_bodies(imp_sim *s) {
    size_t n = s->n;
    /* cache-line aligned: each record is exactly two lines */
    s->sb = aligned_alloc(_Alignof(sbody), (n > 0 ? n : 1) * sizeof *s->sb);
    if (!s->sb) return -1;
    memset(s->sb, 0, (n > 0 ? n : 1) * sizeof *s->sb);
    ALLOC(s->orig, n);
    ALLOC(s->slot, n);
    s->sc = aligned_alloc(_Alignof(scontact), (n > 0 ? n : 1) * sizeof *s->sc);
    if (!s->sc) return -1;
    memset(s->sc, 0, (n > 0 ? n : 1) * sizeof *s->sc);
    ALLOC(s->br, n);
    s->ev = aligned_alloc(_Alignof(sevent), (n > 0 ? n : 1) * sizeof *s->ev);
    if (!s->ev) return -1;
    memset(s->ev, 0, (n > 0 ? n : 1) * sizeof *s->ev);
    ALLOC(s->ev_collider, n);
    ALLOC(s->ev_index, n);
    ALLOC(s->ev_kind, n);
    ALLOC(s->prev, n);
    ALLOC(s->next, n);
    ALLOC(s->globals, n);
    ALLOC(s->sleep_on, n);
    ALLOC(s->wake_stack, n);
    ALLOC(s->rnext, n);
    ALLOC(s->rprev, n);
    ALLOC(s->cmass, n);
    ALLOC(s->heap, n);
    ALLOC(s->hpos, n);
    ALLOC(s->ql, n);
    ALLOC(s->qnext, n);
    ALLOC(s->qprev, n);
    /* about a bucket a body, at least 16, and the overflow; the first event's rebase sets
     * the width (until then every event is in the overflow) */
    s->cal_nb = n > 16 ? n : 16;
    ALLOC(s->cal_head, s->cal_nb + 1);
    for (size_t b = 0; b <= s->cal_nb; ++b)
        s->cal_head[b] = NONE;
    s->cal_cur = s->cal_nb;
    s->cal_base = -INFINITY;
    s->cal_width = 1.0;
    for (size_t i = 0; i < n; ++i) {
        s->sc[i].root = s->sc[i].rhead = s->hpos[i] = NONE;
        s->sc[i].last_t = -INFINITY;
    }
    return 0;
}

/* Phase 2: every body's record (path, acceleration with gravity, flags,
 * bounding radius) and the scene's scales (S, V and the guards' thresholds
 * derived from them). The bounding radii of the bodies that are not
 * halfspaces go to radii; returns how many. */
static size_t load_bodies(imp_sim *s, const imp_sim_input *in, double *radii) {
    size_t n_local = 0;
    double S = 0, amax = 0, vmax = 0;
    for (size_t i = 0; i < s->n; ++i) {
        const imp_sim_body *b = &in->bodies[i];
        assert(b->shape);
        int hs = b->shape->type == IMP_SHAPE_HALFSPACE;
        assert(!hs || b->is_static);
        s->sb[i].p = b->m.p;
        s->sb[i].v = b->m.v;
        s->sc[i].a_full = b->is_static ? b->m.a : imp_add(b->m.a, in->gravity);
        s->sc[i].mass = b->mass;
        s->sc[i].restitution = b->restitution;
        s->sc[i].tangential = b->tangential;
        s->sb[i].a = s->sc[i].a_full;
        s->sb[i].support = NONE;
        s->br[i] = bounding_radius(b->shape, in->dim);
        uint8_t f = 0;
        if (b->is_static) f |= F_STATIC;
        if (hs) f |= F_HALFSPACE;
        int still = imp_max_abs(b->m.v) == 0 && imp_max_abs(b->m.a) == 0 &&
                    (!in->turns || b->shape->type == IMP_SHAPE_SPHERE || !spins(in->turns[i].w));
        if (b->is_static && still) f |= F_STILL;
        if (!hs && !(b->is_static && still)) f |= F_OWNER;
        if (b->shape->type == IMP_SHAPE_SPHERE) {
            f |= F_SPHERE;
            s->sb[i].radius = b->shape->radius;
        }
        s->sb[i].flags = f;
        s->sb[i].default_filter = (uint8_t)imp_filter_is_default(b->filter);
        if (hs) {
            S = imp_fmax(S, fabs(b->shape->offset));
        } else {
            radii[n_local++] = s->br[i];
            S = imp_fmax(S, imp_max_abs(b->m.p) + s->br[i]);
        }
        vmax = imp_fmax(vmax, imp_len(b->m.v));
        amax = imp_fmax(amax, imp_len(s->sc[i].a_full));
    }
    S = imp_fmax(S, IMP_SIM_MIN_SCALE);
    s->S = S;
    s->V = imp_fmax(vmax, sqrt(amax * S));
    s->u_slow = IMP_SIM_SLOW_REL * s->V;
    s->h_rest = IMP_SIM_REST_REL * S;
    return n_local;
}

/* After reorder, with rotation: every body's turn (identity), angular velocity (0 for a
 * halfspace), inertia and its inverse (zero when the body never turns: static, or a tensor
 * that does not invert), given orientation, and the vertex buffers; the speed scale V takes
 * the bodies' spin in (|w| times the bounding radius). 0, or -1 when out of memory. */
static int load_turns(imp_sim *s, const imp_sim_input *in) {
    size_t n = s->n, nv = 1;
    ALLOC(s->rq, n);
    ALLOC(s->q0, n);
    ALLOC(s->ang, n);
    ALLOC(s->w, n);
    ALLOC(s->I0, n);
    ALLOC(s->I0inv, n);
    double vmax = s->V;
    for (size_t i = 0; i < n; ++i) {
        const imp_sim_body *b = &in->bodies[s->orig[i]];
        s->rq[i] = s->q0[i] = (imp_quat){1.0, 0.0, 0.0, 0.0};
        if (!in->turns) continue;
        const imp_sim_turn *tu = &in->turns[s->orig[i]];
        if (imp_quat_normalize(tu->orientation, &s->q0[i]) != 0) s->q0[i] = s->rq[i];
        if (s->sb[i].flags & F_HALFSPACE) continue;
        s->w[i] = tu->w;
        if (b->shape->verts && b->shape->n_verts > nv) nv = b->shape->n_verts;
        vmax = imp_fmax(vmax, imp_len(b->m.v) + imp_len(tu->w) * s->br[i]);
        if (b->is_static) continue;
        s->I0[i] = tu->inertia;
        if (imp_mat3_inverse_spd(&tu->inertia, s->dim, &s->I0inv[i]) != 0)
            memset(&s->I0inv[i], 0, sizeof s->I0inv[i]);
    }
    s->rot = in->turns != NULL;
    if (s->rot) {
        s->V = vmax;
        s->u_slow = IMP_SIM_SLOW_REL * s->V;
        for (int k = 0; k < 4; ++k)
            ALLOC(s->vbuf[k], nv);
    }
    return 0;
}

/* Phase 3: the cut radius r_cut, the bounding radius of the (K+1)-th
 * largest body of radii[0..n_local) (sorted here), K = min(IMP_SIM_MAX_GLOBAL,
 * n_local / 100); larger bodies become global. 0 without the grid. */
static double cut_radius(const imp_sim_input *in, double *radii, size_t n_local) {
    if (in->no_grid || n_local == 0) return 0;
    size_t K = n_local / 100;
    if (K > IMP_SIM_MAX_GLOBAL) K = IMP_SIM_MAX_GLOBAL;
    qsort(radii, n_local, sizeof *radii, cmp_desc);
    return radii[K < n_local ? K : n_local - 1];
}

/* Phase 4: the global bodies (halfspaces, bodies larger than r_cut, every
 * body without the grid) flagged, and the box [*lo, *hi] of the others'
 * positions. Returns how many bodies are in the grid. */
static size_t mark_globals(imp_sim *s, int no_grid, double r_cut, imp_vec3 *lo, imp_vec3 *hi) {
    *lo = imp_v3(INFINITY, INFINITY, INFINITY);
    *hi = imp_neg(*lo);
    size_t n_grid = 0;
    for (size_t i = 0; i < s->n; ++i) {
        if ((s->sb[i].flags & F_HALFSPACE) || no_grid || s->br[i] > r_cut) {
            s->sb[i].flags |= F_GLOBAL;
            s->n_globals++;
            continue;
        }
        ++n_grid;
        imp_vec3 p = s->sb[i].p;
        *lo = imp_v3(imp_fmin(lo->x, p.x), imp_fmin(lo->y, p.y), imp_fmin(lo->z, p.z));
        *hi = imp_v3(imp_fmax(hi->x, p.x), imp_fmax(hi->y, p.y), imp_fmax(hi->z, p.z));
    }
    s->st.global = s->n_globals;
    return n_grid;
}

/* Phase 5: the grid for n_grid bodies whose positions span [lo, hi]: the
 * cell size, the hash buckets, the dense box, and every grid body's cell.
 * 0, or -1 when out of memory. */
static int build_grid(imp_sim *s, size_t n_grid, double r_cut, imp_vec3 lo, imp_vec3 hi) {
    if (n_grid == 0) {
        ALLOC(s->head, 1);
        s->head[0] = NONE;
        return 0;
    }
    int dim = s->dim;
    double L = 2.0 * r_cut * (1.0 + IMP_SIM_CELL_SLACK);
    double ext = imp_fmax(hi.x - lo.x, imp_fmax(hi.y - lo.y, dim == 3 ? hi.z - lo.z : 0.0));
    double per_side = dim == 3 ? cbrt((double)n_grid) : sqrt((double)n_grid);
    double sparse = ext / ceil(per_side / SPARSE_EDGE_PER_SPACING);
    if (sparse > L) L = L > 0 ? imp_fmin(sparse, SPARSE_CELL_MAX_FACTOR * L) : sparse;
    if (!(L > 0) || !isfinite(L)) L = L > 0 ? L : 1.0;
    s->L = L;
    s->st.cell_size = L;
    size_t nb = 16;
    while (nb < 2 * n_grid)
        nb *= 2;
    s->mask = nb - 1;
    /* the dense box, unless it would hold more than DENSE_MAX_PER_BODY cells per body
     * (a sparse scene with outliers): then every cell hashes */
    int32_t clo[3], chi[3];
    imp_vec3 corner[2] = {lo, hi};
    uint64_t limit = DENSE_MAX_PER_BODY * (uint64_t)n_grid + 64, cells = 1;
    for (int k = 0; k < 3; ++k) {
        clo[k] = k < dim ? cell_index((&corner[0].x)[k], L) : 0;
        chi[k] = k < dim ? cell_index((&corner[1].x)[k], L) : 0;
        int margin = k < dim;
        s->dlo[k] = (int64_t)clo[k] - margin;
        s->cmin[k] =
            (int32_t)((int64_t)clo[k] - OUTER_CELLS > -CELL_CLAMP ? (int64_t)clo[k] - OUTER_CELLS
                                                                  : -CELL_CLAMP);
        s->cmax[k] =
            (int32_t)((int64_t)chi[k] + OUTER_CELLS < CELL_CLAMP ? (int64_t)chi[k] + OUTER_CELLS
                                                                 : CELL_CLAMP);
        s->dn[k] = (uint64_t)((int64_t)chi[k] - clo[k] + 1 + 2 * margin);
        cells = cells && s->dn[k] <= limit / cells ? cells * s->dn[k] : 0;
    }
    if (cells == 0) s->dn[0] = s->dn[1] = s->dn[2] = 0;
    s->n_dense = (size_t)(s->dn[0] * s->dn[1] * s->dn[2]);
    const int32_t zero[3] = {0, 0, 0};
    for (int q = 0; q < (dim == 3 ? 27 : 9); ++q) {
        int32_t d[3];
        near_cell(dim, zero, q, d);
        for (int k = 0; k < 3; ++k)
            s->near_d[q][k] = (int8_t)d[k];
        s->near_off[q] = ((int64_t)d[2] * (int64_t)s->dn[1] + d[1]) * (int64_t)s->dn[0] + d[0];
    }
    ALLOC(s->head, s->n_dense + nb);
    for (size_t k = 0; k < s->n_dense + nb; ++k)
        s->head[k] = NONE;
    for (size_t i = 0; i < s->n; ++i) {
        if (s->sb[i].flags & F_GLOBAL) continue;
        int32_t *c = s->sb[i].cell;
        c[0] = cell_index(s->sb[i].p.x, L);
        c[1] = cell_index(s->sb[i].p.y, L);
        c[2] = dim == 3 ? cell_index(s->sb[i].p.z, L) : 0;
    }
    return 0;
}

/* Phase 6, after reorder: the global bodies listed and the others put in
 * their cells' lists, in the internal numbering. */
static void fill_grid(imp_sim *s) {
    s->n_globals = 0;
    for (size_t i = 0; i < s->n; ++i) {
        if (s->sb[i].flags & F_GLOBAL)
            s->globals[s->n_globals++] = (uint32_t)i;
        else
            grid_insert(s, (uint32_t)i);
    }
}

imp_sim_status imp_sim_create(const imp_sim_input *in, imp_sim **out, imp_error *err) {
    assert(in && (in->dim == 2 || in->dim == 3) && in->horizon > 0 && isfinite(in->horizon));
    assert(in->n < LISTED - 1);        /* so that hpos tells heap slots and buckets from NONE */
    assert(!(in->turns && in->world)); /* turning against a world: not built yet */
    *out = NULL;
    imp_sim *s = calloc(1, sizeof *s);
    if (!s) return (imp_sim_status)imp_error_set(err, IMP_SIM_NOMEM, "out of memory");
    s->b = in->bodies;
    s->n = in->n;
    s->handling = NONE;
    s->dim = in->dim;
    s->horizon = in->horizon;
    s->max_events = in->max_events;
    s->stop = in->stop;
    s->world = in->world;
    s->record = in->record;
    double *radii = calloc(in->n > 0 ? in->n : 1, sizeof *radii);
    if (!radii || alloc_bodies(s) != 0) goto nomem;
    size_t n_local = load_bodies(s, in, radii);
    double r_cut = cut_radius(in, radii, n_local);
    free(radii);
    radii = NULL;
    imp_vec3 lo, hi;
    size_t n_grid = mark_globals(s, in->no_grid, r_cut, &lo, &hi);
    if (build_grid(s, n_grid, r_cut, lo, hi) != 0 || reorder(s) != 0) goto nomem;
    fill_grid(s);
    for (size_t i = 0; i < s->n; ++i)
        s->cmass[i] = s->sc[i].mass;
    if (load_turns(s, in) != 0) goto nomem;
    for (size_t i = 0; i < s->n; ++i) /* every body's first event */
        if (s->sb[i].flags & F_OWNER) predict(s, (uint32_t)i);
    if (s->failed) goto nomem;
    *out = s;
    return IMP_SIM_OK;
nomem:
    free(radii);
    imp_sim_destroy(s);
    return (imp_sim_status)imp_error_set(err, IMP_SIM_NOMEM, "out of memory");
}

void imp_sim_destroy(imp_sim *s) {
    if (!s) return;
    free(s->sb);
    free(s->orig);
    free(s->slot);
    free(s->sc);
    free(s->br);
    free(s->ev);
    free(s->ev_collider);
    free(s->ev_index);
    free(s->ev_kind);
    free(s->prev);
    free(s->next);
    free(s->head);
    free(s->globals);
    free(s->sleep_on);
    free(s->wake_stack);
    free(s->rnext);
    free(s->rprev);
    free(s->cmass);
    free(s->heap);
    free(s->hpos);
    free(s->ql);
    free(s->qnext);
    free(s->qprev);
    free(s->cal_head);
    free(s->rec);
    free(s->rq);
    free(s->q0);
    free(s->ang);
    free(s->w);
    free(s->I0);
    free(s->I0inv);
    for (int k = 0; k < 4; ++k)
        free(s->vbuf[k]);
    free(s);
}

double imp_sim_time(const imp_sim *s) { return s->now; }

void imp_sim_body_state(const imp_sim *s, size_t caller_index, double t, imp_vec3 *p, imp_vec3 *v) {
    assert(s && caller_index < s->n);
    uint32_t i = s->slot[caller_index];
    if (s->sb[i].flags & F_HALFSPACE) {
        const imp_motion *m = &s->b[caller_index].m;
        *p = imp_path_at(m->p, m->v, m->a, t);
        *v = imp_path_vel(m->v, m->a, t);
        return;
    }
    imp_motion m = motion_at(s, i, t);
    *p = m.p;
    *v = m.v;
}

void imp_sim_body_turn(const imp_sim *s, size_t caller_index, double t, imp_quat *q, imp_vec3 *w) {
    assert(s && caller_index < s->n);
    uint32_t i = s->slot[caller_index];
    imp_quat r = imp_quat_mul(turn_at(s, i, t), s->q0[i]), u;
    *q = imp_quat_normalize(r, &u) == 0 ? u : r;
    *w = s->w[i];
}

double imp_sim_body_angle(const imp_sim *s, size_t caller_index, double t) {
    assert(s && caller_index < s->n);
    uint32_t i = s->slot[caller_index];
    double dt = t - s->sb[i].tref;
    return dt == 0 || s->w[i].z == 0 ? s->ang[i] : s->ang[i] + s->w[i].z * dt;
}

void imp_sim_set_max_events(imp_sim *s, size_t max_events) { s->max_events = max_events; }

const imp_sim_stats *imp_sim_get_stats(const imp_sim *s) { return &s->st; }

const imp_sim_event *imp_sim_events(const imp_sim *s, size_t *n) {
    *n = s->nrec;
    return s->rec;
}

int imp_sim_stopped_by(const imp_sim *s) { return s->stopped_by; }

imp_sim_status imp_sim_run(const imp_sim_input *in, imp_sim_output *out, imp_error *err) {
    memset(out, 0, sizeof *out);
    imp_sim *s;
    if (imp_sim_create(in, &s, err) != IMP_SIM_OK) return IMP_SIM_NOMEM;
    imp_sim_stop st = imp_sim_advance(s, in->horizon);
    imp_sim_state *bodies =
        st == IMP_SIM_STOP_FAILED ? NULL : malloc((in->n ? in->n : 1) * sizeof *bodies);
    if (!bodies) {
        imp_sim_destroy(s);
        return (imp_sim_status)imp_error_set(err, IMP_SIM_NOMEM, "out of memory");
    }
    out->time = s->now;
    out->stopped = st;
    out->stopped_by = s->stopped_by;
    for (size_t i = 0; i < in->n; ++i) {
        imp_sim_body_state(s, i, s->now, &bodies[i].p, &bodies[i].v);
        imp_sim_body_turn(s, i, s->now, &bodies[i].q, &bodies[i].w);
        bodies[i].angle = imp_sim_body_angle(s, i, s->now);
    }
    out->bodies = bodies;
    out->events = s->rec;
    out->n_events = s->nrec;
    s->rec = NULL;
    out->stats = s->st;
    imp_sim_destroy(s);
    return IMP_SIM_OK;
}

void imp_sim_output_free(imp_sim_output *out) {
    if (!out) return;
    free(out->bodies);
    free(out->events);
    out->bodies = NULL;
    out->events = NULL;
    out->n_events = 0;
}

/*
 * ep_scenes_predict.c - POST /v1/scenes/predict: every pair's first
 * contact in a scene.
 *
 * DESIGN
 * What: decodes the bodies (at most ctx->max_bodies), the horizon, the
 * broadphase, max_results and report; runs imp_scene_predict on the
 * caller's parallel runner; encodes collisions, overlapping pairs and
 * stats. report "first_per_body" keeps in collisions each body's earliest
 * contact only (imp_scene_first_per_body: a contact that is the first of
 * both its bodies is listed once; still sorted by time), before
 * max_results; overlapping is the same for both reports.
 * How: bodies are decoded into one array (their ids stay borrowed from the
 * request JSON until the response is built). max_results keeps the first
 * max_results collisions (earliest first) and the first max_results
 * overlapping pairs; stats says how many there were in all and whether
 * anything was cut. elapsed_ms is the solve (bounds, broadphase,
 * narrowphase, sorting), measured on the monotonic clock. The reply is
 * written as text (imp_api_out.text), the contact lists in chunks on the
 * caller's threads: a jansson tree (an allocation per number, a hash table
 * per contact) took longer than the solve for 10,000 bodies.
 * Rotating bodies: any shape may turn (angular_velocity); a body that would
 * turn more than IMP_ROT_MAX_ANGLE radians within the horizon is a 422 at
 * its angular_velocity (imp_dec_turn_within: the same answer whatever the
 * broadphase, which a failure inside one pair's solve would not give); a
 * stored world's casts turn the body too (core/world_cast.c). A collision of
 * a pair in which either body has a non-zero angular_velocity carries
 * a_orientation and b_orientation at its time (a world contact:
 * a_orientation), and `tolerance` where the time is certified rather than
 * exact (a turning shape other than a sphere: imp_toi_rotating).
 * Why: the candidate-pair bound protects memory and time: the broadphase
 * lists every candidate and the narrowphase examines each, so a scene
 * whose boxes all overlap (n^2/2 candidates) is answered 422 rather than
 * exhausting the machine.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/bodies.h"
#include "api/encode.h"
#include "api/endpoints.h"
#include "core/scene.h"
#include "core/toi_rotating.h"

/* Most candidate pairs one request may examine (8 bytes each in the broadphase's list,
 * plus its working memory, and a pairwise solve each). */
#define MAX_CANDIDATE_PAIRS ((size_t)8000000)

static const struct {
    const char *name;
    imp_broadphase_kind kind;
} KINDS[] = {
    {"auto", IMP_BROAD_AUTO}, {"grid", IMP_BROAD_GRID},   {"sap", IMP_BROAD_SAP},
    {"bvh", IMP_BROAD_BVH},   {"brute", IMP_BROAD_BRUTE},
};

static int dec_kind(imp_dec *d, const json_t *req, imp_broadphase_kind *out) {
    const json_t *v = json_object_get(req, "broadphase");
    *out = IMP_BROAD_AUTO;
    if (!v) return 0;
    size_t saved = imp_dec_push_key(d, "broadphase");
    int rc = -1;
    if (!json_is_string(v)) {
        imp_dec_fail(d, IMP_E_TYPE, "must be a string");
    } else {
        for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; ++i) {
            if (strcmp(json_string_value(v), KINDS[i].name) == 0) {
                *out = KINDS[i].kind;
                rc = 0;
            }
        }
        if (rc != 0) imp_dec_fail(d, IMP_E_VALUE, "must be one of: auto, grid, sap, bvh, brute");
    }
    imp_dec_pop(d, saved);
    return rc;
}

/* report: "pairs" (0, the default) or "first_per_body" (1). */
static int dec_report(imp_dec *d, const json_t *req, int *first_per_body) {
    const json_t *v = json_object_get(req, "report");
    *first_per_body = 0;
    if (!v) return 0;
    if (!json_is_string(v)) return imp_dec_fail_at(d, "report", IMP_E_TYPE, "must be a string");
    if (strcmp(json_string_value(v), "first_per_body") == 0)
        *first_per_body = 1;
    else if (strcmp(json_string_value(v), "pairs") != 0)
        return imp_dec_fail_at(d, "report", IMP_E_VALUE, "must be one of: pairs, first_per_body");
    return 0;
}

/* Optional non-negative integer member; absent leaves *out alone. */
static int dec_count(imp_dec *d, const json_t *req, const char *key, size_t *out) {
    const json_t *v = json_object_get(req, key);
    if (!v) return 0;
    double x = 0;
    if (imp_dec_number(d, req, key, 1, 0.0, 0, 9007199254740992.0, "must be an integer >= 0", &x))
        return -1;
    if (x != floor(x)) {
        size_t saved = imp_dec_push_key(d, key);
        imp_dec_fail(d, IMP_E_TYPE, "must be an integer >= 0");
        imp_dec_pop(d, saved);
        return -1;
    }
    *out = x >= (double)SIZE_MAX ? SIZE_MAX : (size_t)x;
    return 0;
}

/* Contacts written per chunk of the text encoding (one chunk per worker task). */
#define CONTACTS_PER_CHUNK 512

typedef struct list_text {
    const imp_scene_contact *cs;
    size_t n;
    const imp_body *bodies;
    const imp_world_entry *world; /* the stored world, or NULL */
    int dim, overlapping;
    imp_jbuf *parts; /* one per chunk of CONTACTS_PER_CHUNK contacts */
} list_text;

/* A stored world's collider c: its id as uploaded, else its index; then its primitive. */
static void put_collider(imp_jbuf *w, const imp_world_entry *e, const imp_scene_contact *c) {
    uint32_t k = c->b;
    if (e->collider_ids[k])
        imp_jbuf_string(w, e->collider_ids[k], strlen(e->collider_ids[k]));
    else
        imp_jbuf_int(w,
                     e->collider_is_number[k] ? (long long)e->collider_numbers[k] : (long long)k);
    if (c->kind == IMP_WORLD_PRIM_TRIANGLE) IMP_JBUF_LIT(w, ",\"triangle\":");
    if (c->kind == IMP_WORLD_PRIM_SEGMENT) IMP_JBUF_LIT(w, ",\"segment\":");
    if (c->kind != IMP_WORLD_PRIM_SHAPE) imp_jbuf_int(w, (long long)c->index);
}

static int spins(const imp_body *b) {
    return !(b->omega.x == 0.0 && b->omega.y == 0.0 && b->omega.z == 0.0);
}

/* ,"key":<the body's orientation at time t> (an angle in 2D, a quaternion in 3D). */
static void put_turn(imp_jbuf *w, const char *key, const imp_body *b, double t, int dim) {
    json_t *v = imp_enc_turn(imp_spin_at(b->orientation, b->omega, t), dim);
    if (!v) {
        w->failed = 1;
        return;
    }
    IMP_JBUF_LIT(w, ",\"");
    imp_jbuf_raw(w, key, strlen(key));
    IMP_JBUF_LIT(w, "\":");
    imp_jbuf_value(w, v);
    json_decref(v);
}

static void put_contact(imp_jbuf *w, const imp_scene_contact *c, const imp_body *bodies,
                        const imp_world_entry *world, int dim, int overlapping) {
    IMP_JBUF_LIT(w, "{\"a\":");
    imp_jbuf_id(w, &bodies[c->a]);
    IMP_JBUF_LIT(w, ",\"b\":");
    if (c->world)
        put_collider(w, world, c);
    else
        imp_jbuf_id(w, &bodies[c->b]);
    if (overlapping) {
        IMP_JBUF_LIT(w, ",\"depth\":");
        imp_jbuf_real(w, c->depth);
    } else {
        IMP_JBUF_LIT(w, ",\"time\":");
        imp_jbuf_real(w, c->time);
        IMP_JBUF_LIT(w, ",\"point\":");
        imp_jbuf_vec(w, c->point, dim);
    }
    IMP_JBUF_LIT(w, ",\"normal\":");
    imp_jbuf_vec(w, c->normal, dim);
    if (!overlapping) {
        const imp_body *a = &bodies[c->a], *b = c->world ? NULL : &bodies[c->b];
        if (spins(a) || (b && spins(b))) {
            put_turn(w, "a_orientation", a, c->time, dim);
            if (b) put_turn(w, "b_orientation", b, c->time, dim);
        }
        if (c->tolerance > 0.0) {
            IMP_JBUF_LIT(w, ",\"tolerance\":");
            imp_jbuf_real(w, c->tolerance);
        }
    }
    IMP_JBUF_LIT(w, "}");
}

static void list_chunks(void *ctx, size_t begin, size_t end) {
    const list_text *l = ctx;
    for (size_t k = begin; k < end; ++k) {
        size_t lo = k * CONTACTS_PER_CHUNK,
               hi = lo + CONTACTS_PER_CHUNK < l->n ? lo + CONTACTS_PER_CHUNK : l->n;
        /* a contact is typically 100-200 bytes of text: one allocation, seldom grown */
        imp_jbuf_reserve(&l->parts[k], (hi - lo) * (l->dim == 3 ? 200 : 150));
        for (size_t i = lo; i < hi; ++i) {
            if (i > lo) IMP_JBUF_LIT(&l->parts[k], ",");
            put_contact(&l->parts[k], &l->cs[i], l->bodies, l->world, l->dim, l->overlapping);
        }
    }
}

/* The contacts as a JSON array, chunks written in parallel and joined in order. */
static void put_list(imp_jbuf *w, const imp_scene_contact *cs, size_t n, const imp_body *bodies,
                     const imp_world_entry *world, int dim, int overlapping,
                     const imp_parallel *par) {
    size_t chunks = (n + CONTACTS_PER_CHUNK - 1) / CONTACTS_PER_CHUNK;
    list_text l = {
        cs, n, bodies, world, dim, overlapping, calloc(chunks ? chunks : 1, sizeof(imp_jbuf))};
    if (!l.parts) {
        w->failed = 1;
        return;
    }
    imp_parallel_for(par, chunks, 1, list_chunks, &l);
    size_t total = 2 + chunks;
    for (size_t k = 0; k < chunks; ++k)
        total += l.parts[k].len;
    imp_jbuf_reserve(w, total);
    IMP_JBUF_LIT(w, "[");
    for (size_t k = 0; k < chunks; ++k) {
        if (l.parts[k].failed) w->failed = 1;
        if (k) IMP_JBUF_LIT(w, ",");
        imp_jbuf_raw(w, l.parts[k].p, l.parts[k].len);
        free(l.parts[k].p);
    }
    IMP_JBUF_LIT(w, "]");
    free(l.parts);
}

int imp_ep_scenes_predict(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    d->spin = IMP_DEC_SPIN_SERVED; /* core/scene.c turns them, and so do a world's casts */
    static const char *const MEMBERS[] = {"bodies", "broadphase", "horizon", "max_results",
                                          "report", "world",      NULL};
    imp_scene_in s;
    const imp_world_entry *world = NULL;
    imp_scene_body *scene = NULL;
    size_t max_results = SIZE_MAX;
    double horizon = 0;
    imp_broadphase_kind kind;
    int first_per_body = 0;
    int rc = imp_dec_scene(d, in, &s) || imp_dec_request(d, s.req, MEMBERS, NULL) ||
             imp_dec_number(d, s.req, "horizon", 1, 0.0, 1, INFINITY, "must be a finite number > 0",
                            &horizon) ||
             dec_kind(d, s.req, &kind) || dec_count(d, s.req, "max_results", &max_results) ||
             dec_report(d, s.req, &first_per_body) || imp_scene_bodies(d, &s, &scene) ||
             imp_dec_scene_world(d, s.req, &world) ||
             imp_dec_turn_within(d, s.bodies, s.n, "bodies", horizon, "the horizon");
    if (rc) {
        imp_scene_in_free(&s);
        free(scene);
        if (world) imp_world_store_release(d->ctx->worlds, world);
        return -1;
    }
    const imp_body *bodies = s.bodies;
    size_t n = s.n;
    int dim = d->dim ? d->dim : 2; /* no vector at all: an empty scene */

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    imp_scene_input sin = {scene,
                           n,
                           dim,
                           horizon,
                           kind,
                           MAX_CANDIDATE_PAIRS,
                           &d->ctx->parallel,
                           world ? world->world : NULL};
    imp_scene_output sout;
    imp_scene_status st = imp_scene_predict(&sin, &sout, NULL);
    if (st == IMP_SCENE_OK && first_per_body && imp_scene_first_per_body(&sout, n) != 0) {
        imp_scene_output_free(&sout);
        st = IMP_SCENE_NOMEM;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    free(scene);
    if (st != IMP_SCENE_OK) {
        imp_scene_in_free(&s);
        if (world) imp_world_store_release(d->ctx->worlds, world);
        if (st == IMP_SCENE_NOMEM) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
        if (st == IMP_SCENE_UNDECIDED) /* imp_dec_turn_within has answered what causes it */
            return imp_dec_fail_at(d, "bodies", IMP_E_GEOMETRY,
                                   "turn too far within the horizon to be placed");
        if (st == IMP_SCENE_STOPPED) {
            char progress[96];
            snprintf(progress, sizeof progress, "%zu of %zu candidate pairs solved",
                     sout.pairs_solved, sout.candidate_pairs);
            return imp_dec_stopped(d, sout.stopped_by, progress);
        }
        imp_dec_pop(d, 0);
        imp_dec_push_key(d, "bodies");
        snprintf(d->detail, sizeof d->detail,
                 "more than %zu candidate pairs (brute: every pair; otherwise pairs of "
                 "overlapping swept bounds); split the scene or shorten the horizon",
                 MAX_CANDIDATE_PAIRS);
        return imp_dec_fail(d, IMP_E_LIMIT, "overlap too much for one request");
    }

    size_t nc = sout.n_collisions < max_results ? sout.n_collisions : max_results;
    size_t no = sout.n_overlapping < max_results ? sout.n_overlapping : max_results;
    /* written as text: a tree of a value per number cost several times the solve */
    imp_jbuf w = {0};
    IMP_JBUF_LIT(&w, "{\"collisions\":");
    put_list(&w, sout.collisions, nc, bodies, world, dim, 0, &d->ctx->parallel);
    IMP_JBUF_LIT(&w, ",\"overlapping\":");
    put_list(&w, sout.overlapping, no, bodies, world, dim, 1, &d->ctx->parallel);
    IMP_JBUF_LIT(&w, ",\"stats\":{\"bodies\":");
    imp_jbuf_int(&w, (long long)n);
    IMP_JBUF_LIT(&w, ",\"candidate_pairs\":");
    imp_jbuf_int(&w, (long long)sout.candidate_pairs);
    IMP_JBUF_LIT(&w, ",\"broadphase\":");
    const char *kind_name = imp_broadphase_name(sout.kind);
    imp_jbuf_string(&w, kind_name, strlen(kind_name));
    IMP_JBUF_LIT(&w, ",\"elapsed_ms\":");
    imp_jbuf_real(&w, imp_enc_elapsed_ms(&t0, &t1));
    IMP_JBUF_LIT(&w, ",\"collisions_total\":");
    imp_jbuf_int(&w, (long long)sout.n_collisions);
    IMP_JBUF_LIT(&w, ",\"overlapping_total\":");
    imp_jbuf_int(&w, (long long)sout.n_overlapping);
    IMP_JBUF_LIT(&w, ",\"truncated\":");
    int truncated = nc < sout.n_collisions || no < sout.n_overlapping;
    if (truncated)
        IMP_JBUF_LIT(&w, "true}}");
    else
        IMP_JBUF_LIT(&w, "false}}");
    imp_jbuf_raw(&w, "", 1); /* the NUL */
    imp_scene_output_free(&sout);
    imp_scene_in_free(&s);
    if (world) imp_world_store_release(d->ctx->worlds, world);
    if (w.failed) {
        free(w.p);
        return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    }
    out->text = w.p;
    out->len = w.len - 1;
    return 0;
}

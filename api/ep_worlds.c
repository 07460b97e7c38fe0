/*
 * ep_worlds.c - the worlds endpoints: POST /v1/worlds, GET/HEAD/DELETE
 * /v1/worlds/{id}, and the queries POST /v1/worlds/{id}/raycast,
 * /shapecast and /overlap (../shared/spec/API.md, "Worlds").
 *
 * DESIGN
 * What: decode a World, build it in core (imp_world_build), keep it in the
 * request context's store (api/world_store.h) under the SHA-256 of the
 * request body; answer queries against a stored world.
 * How: the id is the lowercase hex SHA-256 (OpenSSL's EVP_Digest) of the
 * bytes the api receives, which is the body after any gzip decoding; a
 * body whose id is stored already is answered from the store without being
 * decoded again (200). Colliders are Bodies, decoded with d->world set so
 * that mesh, heightfield and chain shapes are taken (api/decode_world.c);
 * a collider that moves is 422. A query holds its world (a reference in
 * the store) for its whole run, so a DELETE or an eviction meanwhile frees
 * the world only when the query is done. A query's vectors must have the
 * world's dimension (400 mixed-dimensions otherwise).
 * Why: hashing the body (not a canonical form) lets a client compute the id
 * before it uploads and skip the upload when HEAD says the world is there.
 * Filters: a collider's `filter` is kept in the world; a ray's, a cast
 * body's and an overlap body's are applied per primitive (core/world.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/decode_world.h"
#include "api/encode.h"
#include "api/endpoints.h"
#include "api/world_store.h"
#include "core/toi_rotating.h"

static int nomem(imp_dec *d) { return imp_dec_fail(d, IMP_E_NOMEM, "out of memory"); }

/* 404 unknown-world as the reply (a success of the run: out->status carries it). */
static int unknown_world(const char *id, imp_api_out *out) {
    char detail[160];
    if (imp_world_id_valid(id))
        snprintf(detail, sizeof detail, "no world is stored under id %s", id);
    else
        snprintf(detail, sizeof detail,
                 "a world id is 64 lowercase hexadecimal digits (the SHA-256 of the World)");
    out->doc = imp_problem_doc(IMP_E_UNKNOWN_WORLD, detail, NULL);
    out->status = imp_problem_status(IMP_E_UNKNOWN_WORLD);
    return 0;
}

/* The store; NULL with the reply set (501: a caller that keeps no worlds) or the error. */
static imp_world_store *store(imp_dec *d, imp_api_out *out) {
    if (d->ctx->worlds) return d->ctx->worlds;
    out->doc = imp_problem_doc(IMP_E_NOT_IMPLEMENTED, "this process keeps no worlds", NULL);
    out->status = imp_problem_status(IMP_E_NOT_IMPLEMENTED);
    if (!out->doc) nomem(d);
    return NULL;
}

static json_t *meta_doc(const imp_world_meta *m) {
    int ok = 1;
    json_t *o = json_object();
    if (!o) return NULL;
    imp_put(o, "id", json_string(m->id), &ok);
    imp_put(o, "dimension", json_integer(m->dim), &ok);
    imp_put(o, "colliders", json_integer((json_int_t)m->colliders), &ok);
    imp_put(o, "triangles", json_integer((json_int_t)m->triangles), &ok);
    imp_put(o, "degenerate_triangles", json_integer((json_int_t)m->degenerate_triangles), &ok);
    if (m->dim == 2) {
        imp_put(o, "segments", json_integer((json_int_t)m->segments), &ok);
        imp_put(o, "degenerate_segments", json_integer((json_int_t)m->degenerate_segments), &ok);
    }
    if (m->has_bounds) {
        json_t *b = json_object();
        if (b) {
            imp_put(b, "min", imp_enc_vec(m->lo, m->dim), &ok);
            imp_put(b, "max", imp_enc_vec(m->hi, m->dim), &ok);
        }
        imp_put(o, "bounds", b, &ok);
    }
    imp_put(o, "bytes", json_integer((json_int_t)m->bytes), &ok);
    imp_put_real(o, "build_ms", m->build_ms, &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The reply to an upload or a GET: the metadata, Location, `status`. */
static int reply_meta(imp_dec *d, const imp_world_meta *m, int status, imp_api_out *out) {
    if (!(out->doc = meta_doc(m))) return nomem(d);
    out->status = status;
    snprintf(out->location, sizeof out->location, "/v1/worlds/%s", m->id);
    return 0;
}

/* ---- upload ------------------------------------------------------------------------------ */

typedef struct upload {
    size_t n;
    imp_body *bodies;
    imp_dec_world_shape *shapes;
    imp_world_collider *colliders;
} upload;

static void upload_free(upload *u) {
    for (size_t i = 0; i < u->n; ++i) {
        imp_body_free(&u->bodies[i]);
        imp_dec_world_shape_free(&u->shapes[i]);
    }
    free(u->bodies);
    free(u->shapes);
    free(u->colliders);
}

static int is_zero(imp_vec3 v) { return v.x == 0.0 && v.y == 0.0 && v.z == 0.0; }

static int dec_collider(imp_dec *d, const json_t *item, size_t i, upload *u, size_t *triangles) {
    size_t saved = imp_dec_push_index(d, i);
    d->world = &u->shapes[i];
    int rc = imp_dec_body_value(d, item, i, &u->bodies[i]);
    d->world = NULL;
    if (rc == 0) u->n = i + 1; /* owned from here on */
    /* a body that failed after its shape decoded (a bad position, say): its arrays too */
    if (rc != 0) imp_dec_world_shape_free(&u->shapes[i]);
    const imp_body *b = &u->bodies[i];
    if (rc == 0 && !is_zero(b->m.v))
        rc = imp_dec_fail_at(d, "velocity", IMP_E_GEOMETRY,
                             "must be absent or zero: a world collider does not move");
    if (rc == 0 && !is_zero(b->m.a))
        rc = imp_dec_fail_at(d, "acceleration", IMP_E_GEOMETRY,
                             "must be absent or zero: a world collider does not move");
    if (rc == 0) {
        *triangles += u->shapes[i].triangles;
        if (*triangles > d->ctx->max_world_triangles) {
            snprintf(d->detail, sizeof d->detail,
                     "%zu triangles so far, the limit is %zu (--max-world-triangles)", *triangles,
                     d->ctx->max_world_triangles);
            rc = imp_dec_fail(d, IMP_E_LIMIT, "brings the world over its triangle limit");
        }
    }
    if (rc == 0) {
        const imp_dec_world_shape *w = &u->shapes[i];
        imp_world_collider *c = &u->colliders[i];
        memset(c, 0, sizeof *c);
        c->kind = w->kind;
        c->position = b->m.p;
        c->one_sided = w->one_sided;
        c->filter = &b->filter;
        c->shape = &b->shape;
        c->mesh = (imp_world_mesh){w->verts, w->n_verts, w->tris, w->n_tris};
        c->heightfield = (imp_world_heightfield){w->rows, w->cols, w->dx, w->dz, w->heights};
        c->chain = (imp_world_chain){w->verts, w->n_verts, w->loop};
    }
    imp_dec_pop(d, saved);
    return rc;
}

static int dec_world(imp_dec *d, const json_t *req, upload *u) {
    static const char *const MEMBERS[] = {"colliders", NULL};
    if (imp_dec_request(d, req, MEMBERS, NULL)) return -1;
    const json_t *cs = json_object_get(req, "colliders");
    if (!cs) return imp_dec_fail_at(d, "colliders", IMP_E_MISSING, "is required");
    if (!json_is_array(cs))
        return imp_dec_fail_at(d, "colliders", IMP_E_TYPE, "must be an array of Bodies");
    size_t n = json_array_size(cs);
    if (n == 0)
        return imp_dec_fail_at(d, "colliders", IMP_E_GEOMETRY,
                               "must hold at least one collider: an empty world answers nothing");
    if (n > d->ctx->max_bodies) {
        snprintf(d->detail, sizeof d->detail, "%zu colliders, the limit is %zu", n,
                 d->ctx->max_bodies);
        return imp_dec_fail_at(d, "colliders", IMP_E_LIMIT,
                               "has more colliders than this server accepts");
    }
    u->bodies = calloc(n, sizeof *u->bodies);
    u->shapes = calloc(n, sizeof *u->shapes);
    u->colliders = calloc(n, sizeof *u->colliders);
    if (!u->bodies || !u->shapes || !u->colliders) return nomem(d);
    size_t saved = imp_dec_push_key(d, "colliders"), triangles = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; ++i)
        rc = dec_collider(d, json_array_get(cs, i), i, u, &triangles);
    imp_dec_pop(d, saved);
    return rc ? -1 : imp_dec_unique_ids(d, u->bodies, u->n, "colliders");
}

/* Copies the colliders' ids into the entry; the bytes they take, or 0 out of memory. */
static size_t keep_ids(imp_world_entry *e, const upload *u) {
    size_t bytes = u->n * (sizeof *e->collider_ids + sizeof *e->collider_numbers + 1);
    for (size_t i = 0; i < u->n; ++i) {
        const json_t *id = u->bodies[i].id;
        if (!id) continue;
        if (json_is_string(id)) {
            size_t len = json_string_length(id);
            if (!(e->collider_ids[i] = malloc(len + 1))) return 0;
            memcpy(e->collider_ids[i], json_string_value(id), len + 1);
            bytes += len + 1;
        } else {
            e->collider_is_number[i] = 1;
            e->collider_numbers[i] = json_number_value(id);
        }
    }
    return bytes;
}

static int build_failed(imp_dec *d, imp_world_status st) {
    if (st == IMP_WORLD_TOO_LARGE)
        return imp_dec_fail_at(d, "colliders", IMP_E_LIMIT,
                               "make a world of more primitives than one world can index");
    if (st == IMP_WORLD_BUILD_STOPPED) {
        const imp_stop *stop = &d->ctx->parallel.stop;
        int why = stop->check ? stop->check(stop->cls) : 0;
        return imp_dec_stopped(d, why ? why : IMP_STOP_TIME_BUDGET, "the world was not built");
    }
    return nomem(d);
}

/* Decodes and builds the World of `len` bytes at `text` into *out with its metadata (id
 * `id`); 0, or -1 with the error recorded. */
static int build_entry(imp_dec *d, const char *id, const char *text, size_t len,
                       imp_world_entry **out) {
    *out = NULL;
    json_t *req = imp_dec_parse(d, text, len);
    if (!req) return -1;
    upload u = {0, NULL, NULL, NULL};
    int rc = dec_world(d, req, &u);
    imp_world *w = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (rc == 0) {
        imp_world_input wi = {d->dim, u.colliders, u.n, d->ctx->parallel.stop};
        imp_world_status st = imp_world_build(&wi, &w, NULL);
        if (st != IMP_WORLD_OK) rc = build_failed(d, st);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    imp_world_entry *e = rc == 0 ? imp_world_entry_create(w, u.n) : NULL;
    size_t id_bytes = e ? keep_ids(e, &u) : 0;
    upload_free(&u);
    json_decref(req);
    if (rc) return -1;
    if (!e || !id_bytes) {
        imp_world_entry_free(e);
        return nomem(d);
    }
    imp_world_info info = imp_world_describe(e->world);
    imp_world_meta *m = &e->meta;
    memcpy(m->id, id, sizeof m->id);
    m->dim = info.dim;
    m->colliders = info.colliders;
    m->triangles = info.triangles;
    m->degenerate_triangles = info.degenerate_triangles;
    m->segments = info.segments;
    m->degenerate_segments = info.degenerate_segments;
    m->has_bounds = info.has_bounds;
    m->lo = info.lo;
    m->hi = info.hi;
    m->bytes = info.bytes + id_bytes;
    m->build_ms = imp_enc_elapsed_ms(&t0, &t1);
    *out = e;
    return 0;
}

imp_world_entry *imp_ep_worlds_build(const char *id, const char *bytes, size_t len, void *arg) {
    imp_api_ctx ctx = *(const imp_api_ctx *)arg;
    ctx.parallel.stop = (imp_stop){NULL, NULL}; /* shared by every caller waiting for it */
    imp_dec d;
    imp_dec_init(&d, &ctx);
    imp_world_entry *e = NULL;
    return build_entry(&d, id, bytes, len, &e) == 0 ? e : NULL;
}

/* 503 world-store-unavailable as the reply. */
static int store_unavailable(imp_dec *d, const char *what, imp_api_out *out) {
    char detail[160];
    snprintf(detail, sizeof detail, "the world store cannot be reached (%s); retry later", what);
    out->doc = imp_problem_doc(IMP_E_STORE_UNAVAILABLE, detail, NULL);
    out->status = imp_problem_status(IMP_E_STORE_UNAVAILABLE);
    return out->doc ? 0 : nomem(d);
}

int imp_ep_worlds_put(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    imp_world_store *s = store(d, out);
    if (!s) return out->doc ? 0 : -1;
    int shared = imp_world_store_shared(s);
    char id[IMP_WORLD_ID_LEN + 1];
    imp_world_id_of(in->text, in->len, id);
    if (!id[0]) return nomem(d);
    const imp_world_entry *held = imp_world_store_cached(s, id);
    if (held) {
        /* built here already; a shared store still gets the bytes (it may have lost them) */
        imp_world_meta meta = held->meta;
        imp_world_store_release(s, held);
        imp_world_io io = imp_world_store_write(s, id, in->text, in->len);
        if (io == IMP_WORLD_IO_UNAVAILABLE) return store_unavailable(d, "storing the world", out);
        return reply_meta(d, &meta, shared && io == IMP_WORLD_IO_OK ? 201 : 200, out);
    }
    imp_world_entry *e = NULL;
    if (build_entry(d, id, in->text, in->len, &e)) return -1;
    imp_world_store_count_build(s, e->meta.build_ms / 1000.0);
    imp_world_meta meta = e->meta; /* put may free the entry */
    if (shared) {
        /* written through before it is cached: what the others can fetch is what we built */
        imp_world_io io = imp_world_store_write(s, id, in->text, in->len);
        if (io == IMP_WORLD_IO_UNAVAILABLE) {
            imp_world_entry_free(e);
            return store_unavailable(d, "storing the world", out);
        }
        imp_world_store_put(s, e); /* a world larger than the cache is fetched when queried */
        return reply_meta(d, &meta, io == IMP_WORLD_IO_OK ? 201 : 200, out);
    }
    switch (imp_world_store_put(s, e)) {
    case IMP_WORLD_PUT_NEW: return reply_meta(d, &meta, 201, out);
    case IMP_WORLD_PUT_EXISTS: return reply_meta(d, &meta, 200, out); /* a concurrent upload */
    case IMP_WORLD_PUT_TOO_BIG:
        snprintf(d->detail, sizeof d->detail,
                 "the world takes %zu bytes; raise --world-cache-bytes to store it", meta.bytes);
        return imp_dec_fail_at(d, "colliders", IMP_E_LIMIT,
                               "make a world larger than this server's world cache");
    case IMP_WORLD_PUT_NOMEM: break;
    }
    return nomem(d);
}

/* ---- metadata and delete ------------------------------------------------------------------ */

int imp_ep_worlds_get(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    imp_world_store *s = store(d, out);
    if (!s) return out->doc ? 0 : -1;
    const imp_world_entry *e = NULL;
    imp_world_get_status st = IMP_WORLD_GET_UNKNOWN;
    /* a shared store is asked first: a client uploads again when this says 404, so it must
     * say what the store holds, not what this process has cached; when the store cannot be
     * reached the cache answers */
    imp_world_io io =
        imp_world_store_shared(s) ? imp_world_store_exists(s, in->id) : IMP_WORLD_IO_OK;
    if (io == IMP_WORLD_IO_MISSING) return unknown_world(in->id, out);
    if (io == IMP_WORLD_IO_UNAVAILABLE) {
        if (!(e = imp_world_store_cached(s, in->id)))
            return store_unavailable(d, "looking the world up", out);
    } else {
        e = imp_world_store_get_ex(s, in->id, &st);
    }
    if (!e && st == IMP_WORLD_GET_UNAVAILABLE)
        return store_unavailable(d, "fetching the world", out);
    if (!e) return unknown_world(in->id, out);
    int rc = reply_meta(d, &e->meta, 200, out);
    out->location[0] = '\0';
    imp_world_store_release(s, e);
    return rc;
}

int imp_ep_worlds_delete(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    imp_world_store *s = store(d, out);
    if (!s) return out->doc ? 0 : -1;
    imp_world_io io = imp_world_store_remove(s, in->id);
    if (io == IMP_WORLD_IO_UNAVAILABLE) return store_unavailable(d, "deleting the world", out);
    if (io != IMP_WORLD_IO_OK) return unknown_world(in->id, out);
    if (!(out->text = calloc(1, 1))) return nomem(d);
    out->status = 204;
    return 0;
}

/* ---- queries ----------------------------------------------------------------------------- */

const imp_world_entry *imp_ep_world_take(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    imp_world_store *s = store(d, out);
    if (!s) return NULL;
    imp_world_get_status st;
    const imp_world_entry *e = imp_world_store_get_ex(s, in->id, &st);
    if (!e) {
        if (st == IMP_WORLD_GET_UNAVAILABLE)
            store_unavailable(d, "fetching the world", out);
        else
            unknown_world(in->id, out);
        if (!out->doc) nomem(d);
        return NULL;
    }
    d->dim = e->meta.dim; /* every vector of the query must have the world's dimension */
    return e;
}

static json_t *collider_id(const imp_world_entry *e, uint32_t c) {
    if (e->collider_ids[c]) return json_string(e->collider_ids[c]);
    if (e->collider_is_number[c]) return json_integer((json_int_t)e->collider_numbers[c]);
    return json_integer((json_int_t)c);
}

void imp_ep_world_put_prim(json_t *o, const imp_world_entry *e, const char *key, uint32_t collider,
                           uint32_t index, uint32_t kind, int *ok) {
    imp_put(o, key, collider_id(e, collider), ok);
    if (kind == IMP_WORLD_PRIM_TRIANGLE) imp_put(o, "triangle", json_integer(index), ok);
    if (kind == IMP_WORLD_PRIM_SEGMENT) imp_put(o, "segment", json_integer(index), ok);
}

/* A request array member of at most max_bodies items; NULL with the error set. */
static const json_t *items(imp_dec *d, const json_t *req, const char *key, const char *what) {
    const json_t *a = json_object_get(req, key);
    if (!a) return imp_dec_fail_at(d, key, IMP_E_MISSING, "is required"), NULL;
    if (!json_is_array(a)) return imp_dec_fail_at(d, key, IMP_E_TYPE, what), NULL;
    if (json_array_size(a) > d->ctx->max_bodies) {
        snprintf(d->detail, sizeof d->detail, "%zu items, the limit is %zu", json_array_size(a),
                 d->ctx->max_bodies);
        return imp_dec_fail_at(d, key, IMP_E_LIMIT, "has more items than this server accepts"),
               NULL;
    }
    return a;
}

/* A query item whose solver failed: out of memory is ours (500); anything else is the
 * item's geometry (a body too thin for its size to have a volume, a pair the solvers do not
 * decide): 422 at the item. */
static int undecided(imp_dec *d, imp_failure why) {
    if (why == IMP_FAILURE_NOMEM) return nomem(d);
    return imp_dec_fail(d, IMP_E_GEOMETRY,
                        why == IMP_FAILURE_UNDECIDED
                            ? "could not be decided against this world"
                            : "has no volume at its scale (too thin for its size) or cannot "
                              "be solved against this world's triangles");
}

static int stopped(imp_dec *d, int why, size_t done, size_t n, const char *what) {
    char progress[96];
    snprintf(progress, sizeof progress, "%zu of %zu %s done", done, n, what);
    return imp_dec_stopped(d, why, progress);
}

/* A ray's or body's id: a string or an integer of magnitude <= 2^53; echoed (or the index). */
static int dec_item_id(imp_dec *d, const json_t *item, size_t i, json_t **out) {
    const json_t *id = json_object_get(item, "id");
    if (!id) return (*out = json_integer((json_int_t)i)) ? 0 : nomem(d);
    if (json_is_string(id)) return (*out = json_deep_copy(id)) ? 0 : nomem(d);
    if (!json_is_number(id) || !imp_dec_id_number_ok(json_number_value(id)))
        return imp_dec_fail_at(d, "id", IMP_E_TYPE,
                               "must be a string or an integer of magnitude <= 2^53");
    return (*out = json_integer((json_int_t)json_number_value(id))) ? 0 : nomem(d);
}

/* A query over many items (rays, bodies): the held world, what answers one item (0; -1 with
 * the error recorded; 1 + the stop reason when stopped), the request's array member, the
 * reply's, and the item function's options. */
typedef struct query {
    const imp_world_entry *world;
    int (*one)(imp_dec *d, const imp_world_entry *e, const json_t *item, size_t i, const void *opts,
               json_t *list);
    const char *key, *reply_key;
    const void *opts;
} query;

/* Runs q->one on every item of `list` (NULL: the request failed to decode, the error is
 * recorded) and answers {reply_key: [...]}; releases the world. */
static int each_item(imp_dec *d, const query *q, const json_t *list, imp_api_out *out) {
    int rc = list ? 0 : -1;
    json_t *answers = rc == 0 ? json_array() : NULL;
    if (rc == 0 && !answers) rc = nomem(d);
    size_t n = json_array_size(list), saved = imp_dec_push_key(d, q->key);
    for (size_t i = 0; i < n && rc == 0; ++i) {
        size_t s2 = imp_dec_push_index(d, i);
        rc = q->one(d, q->world, json_array_get(list, i), i, q->opts, answers);
        imp_dec_pop(d, s2);
        if (rc > 0) rc = stopped(d, rc - 1, i, n, q->key);
    }
    imp_dec_pop(d, saved);
    imp_world_store_release(d->ctx->worlds, q->world);
    if (rc) {
        json_decref(answers);
        return -1;
    }
    int ok = 1;
    out->doc = json_object();
    if (out->doc)
        imp_put(out->doc, q->reply_key, answers, &ok);
    else
        json_decref(answers);
    return out->doc && ok ? 0 : nomem(d);
}

static json_t *hit_doc(const imp_world_entry *e, const imp_world_hit *h, const imp_world_ray *r,
                       int dim, int *ok) {
    json_t *o = json_object();
    if (!o) return *ok = 0, NULL;
    imp_put(o, "hit", json_true(), ok);
    imp_put_real(o, "t", h->t, ok);
    imp_put_real(o, "distance", h->t * imp_len(r->dir), ok);
    imp_put(o, "point", imp_enc_vec(h->point, dim), ok);
    imp_put(o, "normal", imp_enc_vec(h->normal, dim), ok);
    imp_ep_world_put_prim(o, e, "collider", h->collider, h->index, h->kind, ok);
    imp_put(o, "back_face", json_boolean(h->back_face), ok);
    return o;
}

static int ray_one(imp_dec *d, const imp_world_entry *e, const json_t *item, size_t i,
                   const void *opts, json_t *hits) {
    imp_world_ray_mode mode = *(const imp_world_ray_mode *)opts;
    static const char *const MEMBERS[] = {"origin", "direction", "max_t", "filter", "id", NULL};
    imp_filter filter;
    imp_world_ray ray = {{0, 0, 0}, {0, 0, 0}, INFINITY, &filter};
    json_t *id = NULL, *o = NULL;
    if (imp_dec_strict_object(d, item, MEMBERS, NULL) || dec_item_id(d, item, i, &id) ||
        imp_dec_filter(d, item, &filter) || imp_dec_vec(d, item, "origin", 1, &ray.origin) ||
        imp_dec_vec(d, item, "direction", 1, &ray.dir) ||
        imp_dec_number(d, item, "max_t", 0, 0.0, 1, INFINITY, "must be a number > 0", &ray.max_t)) {
        json_decref(id);
        return -1;
    }
    if (is_zero(ray.dir)) {
        json_decref(id);
        return imp_dec_fail_at(d, "direction", IMP_E_GEOMETRY, "must not be zero");
    }
    imp_world_ray_result r = imp_world_raycast(e->world, &ray, mode, &d->ctx->parallel.stop);
    int ok = 1;
    if (r.state == IMP_WORLD_STOPPED || r.state == IMP_WORLD_FAILED) {
        json_decref(id);
        free(r.hits);
        return r.state == IMP_WORLD_STOPPED ? 1 + r.stopped_by : undecided(d, r.failure);
    }
    int hit = r.state == IMP_WORLD_HIT;
    if (hit && mode == IMP_WORLD_RAY_CLOSEST) {
        o = hit_doc(e, &r.hit, &ray, d->dim, &ok);
    } else if (hit && mode == IMP_WORLD_RAY_ALL && r.n_hits) {
        o = hit_doc(e, &r.hits[0], &ray, d->dim, &ok);
        json_t *all = json_array();
        for (size_t k = 0; all && k < r.n_hits; ++k)
            if (json_array_append_new(all, hit_doc(e, &r.hits[k], &ray, d->dim, &ok))) ok = 0;
        if (o)
            imp_put(o, "all", all, &ok);
        else
            json_decref(all);
    } else {
        o = json_object();
        if (o) imp_put(o, "hit", json_boolean(hit), &ok);
        if (o && mode == IMP_WORLD_RAY_ALL) imp_put(o, "all", json_array(), &ok);
    }
    free(r.hits);
    if (o) {
        imp_put(o, "id", id, &ok);
        id = NULL;
    }
    json_decref(id);
    if (!o || json_array_append_new(hits, o) || !ok) return nomem(d);
    return 0;
}

int imp_ep_worlds_raycast(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    static const char *const MEMBERS[] = {"rays", "mode", NULL};
    const imp_world_entry *e = imp_ep_world_take(in, d, out);
    if (!e) return out->doc ? 0 : -1;
    const json_t *req = in->json, *rays = NULL, *mode = NULL;
    imp_world_ray_mode m = IMP_WORLD_RAY_CLOSEST;
    int rc = imp_dec_request(d, req, MEMBERS, NULL) ||
                     !(rays = items(d, req, "rays", "must be an array of rays"))
                 ? -1
                 : 0;
    if (rc == 0 && (mode = json_object_get(req, "mode"))) {
        const char *v = json_string_value(mode);
        if (!v)
            rc = imp_dec_fail_at(d, "mode", IMP_E_TYPE, "must be a string");
        else if (strcmp(v, "closest") == 0)
            m = IMP_WORLD_RAY_CLOSEST;
        else if (strcmp(v, "any") == 0)
            m = IMP_WORLD_RAY_ANY;
        else if (strcmp(v, "all") == 0)
            m = IMP_WORLD_RAY_ALL;
        else
            rc = imp_dec_fail_at(d, "mode", IMP_E_VALUE, "must be \"closest\", \"any\" or \"all\"");
    }
    query q = {e, ray_one, "rays", "hits", &m};
    return each_item(d, &q, rc ? NULL : rays, out);
}

/* A body of a query: any shape but a halfspace. */
static int dec_query_body(imp_dec *d, const json_t *v, size_t i, imp_body *b) {
    if (imp_dec_body_value(d, v, i, b)) return -1;
    if (b->shape.type != IMP_SHAPE_HALFSPACE) return 0;
    imp_body_free(b);
    size_t saved = imp_dec_push_key(d, "shape");
    imp_dec_fail_at(d, "type", IMP_E_VALUE, "must not be a halfspace against a world");
    imp_dec_pop(d, saved);
    return -1;
}

static const char *cast_state(imp_world_state s) {
    return s == IMP_WORLD_HIT ? "hit" : s == IMP_WORLD_OVERLAPPING ? "overlapping" : "none";
}

static int cast_one(imp_dec *d, const imp_world_entry *e, const json_t *item, size_t i,
                    const void *opts, json_t *results) {
    double horizon = *(const double *)opts;
    imp_body b;
    if (dec_query_body(d, item, i, &b)) return -1;
    /* a turning body needs a horizon within which it turns at most IMP_ROT_MAX_ANGLE */
    if (imp_dec_turn_ok(d, &b, horizon,
                        isfinite(horizon) ? "the horizon" : "an unbounded horizon (give one)")) {
        imp_body_free(&b);
        return -1;
    }
    imp_world_cast cast = {&b.shape, b.m, horizon, &b.filter, b.omega, &d->ctx->parallel.stop};
    imp_world_cast_result r = imp_world_shapecast(e->world, &cast, &d->ctx->parallel.stop);
    json_t *id = imp_enc_id(&b);
    int turned = b.orientation.w != 1.0 || imp_max_abs(b.omega) > 0.0;
    imp_quat at = imp_spin_at(b.orientation, b.omega, r.time);
    imp_body_free(&b);
    if (r.state == IMP_WORLD_STOPPED || r.state == IMP_WORLD_FAILED) {
        json_decref(id);
        return r.state == IMP_WORLD_STOPPED ? 1 + r.stopped_by : undecided(d, r.failure);
    }
    int ok = 1, dim = d->dim;
    json_t *o = json_object();
    if (!o) {
        json_decref(id);
        return nomem(d);
    }
    imp_put(o, "id", id, &ok);
    imp_put(o, "status", json_string(cast_state(r.state)), &ok);
    if (r.state == IMP_WORLD_HIT || r.state == IMP_WORLD_OVERLAPPING) {
        imp_put_real(o, "time", r.time, &ok);
        imp_put(o, "point", imp_enc_vec(r.point, dim), &ok);
        imp_put(o, "normal", imp_enc_vec(r.normal, dim), &ok);
        imp_put(o, "position", imp_enc_vec(r.position, dim), &ok);
        imp_ep_world_put_prim(o, e, "collider", r.collider, r.index, r.kind, &ok);
        if (r.state == IMP_WORLD_OVERLAPPING) imp_put_real(o, "depth", r.depth, &ok);
        if (r.tolerance > 0.0) imp_put_real(o, "tolerance", r.tolerance, &ok);
        if (turned) imp_put(o, "orientation", imp_enc_turn(at, dim), &ok);
    }
    if (json_array_append_new(results, o) || !ok) return nomem(d);
    return 0;
}

int imp_ep_worlds_shapecast(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    d->spin = IMP_DEC_SPIN_SERVED; /* core/world_cast.c turns them */
    static const char *const MEMBERS[] = {"bodies", "horizon", NULL};
    const imp_world_entry *e = imp_ep_world_take(in, d, out);
    if (!e) return out->doc ? 0 : -1;
    const json_t *req = in->json, *bodies = NULL;
    double horizon = INFINITY;
    int rc = imp_dec_request(d, req, MEMBERS, NULL) ||
                     !(bodies = items(d, req, "bodies", "must be an array of Bodies")) ||
                     imp_dec_number(d, req, "horizon", 0, 0.0, 1, INFINITY,
                                    "must be a finite number > 0", &horizon)
                 ? -1
                 : 0;
    query q = {e, cast_one, "bodies", "results", &horizon};
    return each_item(d, &q, rc ? NULL : bodies, out);
}

int imp_ep_worlds_overlap(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    d->spin = IMP_DEC_SPIN_SERVED; /* a static test: velocities are ignored */
    static const char *const MEMBERS[] = {"body", NULL};
    const imp_world_entry *e = imp_ep_world_take(in, d, out);
    if (!e) return out->doc ? 0 : -1;
    imp_body b;
    int rc = imp_dec_request(d, in->json, MEMBERS, NULL);
    if (rc == 0) {
        size_t saved = imp_dec_push_key(d, "body");
        rc = dec_query_body(d, json_object_get(in->json, "body"), 0, &b);
        imp_dec_pop(d, saved);
    }
    imp_world_overlap_result r = {0};
    if (rc == 0) {
        r = imp_world_overlap(e->world, &b.shape, b.m.p, &b.filter, &d->ctx->parallel.stop);
        imp_body_free(&b);
        if (r.state == IMP_WORLD_STOPPED)
            rc = imp_dec_stopped(d, r.stopped_by, "the overlap");
        else if (r.state == IMP_WORLD_FAILED)
            rc = undecided(d, r.failure);
    }
    json_t *list = rc == 0 ? json_array() : NULL;
    int ok = list != NULL;
    for (size_t k = 0; list && k < r.n_contacts; ++k) {
        const imp_world_contact *c = &r.contacts[k];
        json_t *o = json_object();
        if (!o) {
            ok = 0;
            break;
        }
        imp_ep_world_put_prim(o, e, "collider", c->collider, c->index, c->kind, &ok);
        imp_put_real(o, "depth", c->depth, &ok);
        imp_put(o, "normal", imp_enc_vec(c->normal, d->dim), &ok);
        if (json_array_append_new(list, o)) ok = 0;
    }
    free(r.contacts);
    imp_world_store_release(d->ctx->worlds, e);
    if (rc) return -1;
    out->doc = json_object();
    if (out->doc)
        imp_put(out->doc, "overlaps", list, &ok);
    else
        json_decref(list);
    return out->doc && ok ? 0 : nomem(d);
}

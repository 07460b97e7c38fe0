/*
 * world_store.h - the embedded store of built worlds (issue 16's `memory`
 * store): worlds by id, with their metadata, under a cap on the bytes they
 * hold, least recently used evicted first.
 *
 * Thread-safety: every function may be called from any thread at once. A
 * world taken with imp_world_store_get stays alive until released, even if
 * it is deleted or evicted meanwhile (reference counts), so queries run
 * while other requests upload and delete.
 */
#ifndef IMP_API_WORLD_STORE_H
#define IMP_API_WORLD_STORE_H

#include <stddef.h>

#include "core/world.h"

/* A world id: 64 lowercase hex digits (SHA-256) and a NUL. */
#define IMP_WORLD_ID_LEN 64

/* What GET /v1/worlds/<id> answers of a world. */
typedef struct imp_world_meta {
    char id[IMP_WORLD_ID_LEN + 1];
    int dim;
    size_t colliders, triangles, degenerate_triangles, segments, degenerate_segments;
    int has_bounds;
    imp_vec3 lo, hi;
    size_t bytes; /* the world's own and its colliders' ids */
    double build_ms;
} imp_world_meta;

/* One stored world, as imp_world_store_get hands it out: read only. */
typedef struct imp_world_entry {
    imp_world_meta meta;
    const imp_world *world;
    /* collider i's id as the upload gave it (a string, or a number when is_number); NULL:
     * its index */
    char **collider_ids;
    double *collider_numbers;
    unsigned char *collider_is_number;
} imp_world_entry;

typedef struct imp_world_store imp_world_store;

/* A store holding at most cap_bytes of worlds (meta.bytes); NULL on allocation failure. */
imp_world_store *imp_world_store_create(size_t cap_bytes);
/* Frees the store and every world nobody holds; accepts NULL. No entry may be held. */
void imp_world_store_destroy(imp_world_store *s);

/* The id of a World: the lowercase hex SHA-256 of its `len` bytes (OpenSSL's EVP_Digest);
 * "" when the library could not allocate. */
void imp_world_id_of(const char *body, size_t len, char id[IMP_WORLD_ID_LEN + 1]);

/* 1 when `id` is 64 lowercase hex digits. */
int imp_world_id_valid(const char *id);

typedef enum imp_world_put_status {
    IMP_WORLD_PUT_NEW = 0, /* stored; the store owns the entry now */
    IMP_WORLD_PUT_EXISTS,  /* the id was stored already; the entry was freed */
    IMP_WORLD_PUT_TOO_BIG, /* larger than the whole cap; the entry was freed */
    IMP_WORLD_PUT_NOMEM    /* the entry was freed */
} imp_world_put_status;

/* A new entry owning `world` (and nothing else yet); NULL on allocation failure, when
 * the world is destroyed. The caller fills meta and the ids (malloc'd) before put. */
imp_world_entry *imp_world_entry_create(imp_world *world, size_t n_colliders);
/* Frees an entry that was never put. */
void imp_world_entry_free(imp_world_entry *e);

/* Stores entry e under e->meta.id, evicting least recently used worlds nobody holds
 * until the total fits the cap. */
imp_world_put_status imp_world_store_put(imp_world_store *s, imp_world_entry *e);

/* The world of `id`, held until imp_world_store_release; NULL when not stored. Counts as a
 * use for the eviction order. */
const imp_world_entry *imp_world_store_get(imp_world_store *s, const char *id);
void imp_world_store_release(imp_world_store *s, const imp_world_entry *e);

/* Forgets `id` (the world is freed when its last holder releases it): 1, or 0 when it
 * was not stored. */
int imp_world_store_delete(imp_world_store *s, const char *id);

/* Worlds stored and the bytes they hold. */
void imp_world_store_stats(imp_world_store *s, size_t *count, size_t *bytes);

#endif

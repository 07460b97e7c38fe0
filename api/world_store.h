/*
 * world_store.h - the store of worlds: a per-process cache of built worlds
 * (their metadata, under a cap on the bytes they hold, least recently used
 * evicted first) in front of an optional backend that keeps the World bytes
 * themselves (`dir:` on disk, `redis://` shared by replicas;
 * server/world_backend.c). Without a backend (`memory`) the cache is the
 * store.
 *
 * Thread-safety: every function may be called from any thread at once. A
 * world taken with imp_world_store_get stays alive until released, even if
 * it is deleted or evicted meanwhile (reference counts), so queries run
 * while other requests upload and delete. Concurrent gets of one uncached
 * world wait for a single fetch and build (single flight).
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

/* What a backend call came to. */
typedef enum imp_world_io {
    IMP_WORLD_IO_OK = 0,     /* done (store: written now) */
    IMP_WORLD_IO_MISSING,    /* no world under that id */
    IMP_WORLD_IO_EXISTS,     /* store: the id was there already (nothing written) */
    IMP_WORLD_IO_UNAVAILABLE /* the backend could not be reached or failed; *err says how */
} imp_world_io;

/* Kinds of store errors, counted for the metrics. */
typedef enum imp_world_err {
    IMP_WORLD_ERR_CONNECT = 0, /* no connection (refused, backing off after failures) */
    IMP_WORLD_ERR_TIMEOUT,     /* a call took longer than its timeout */
    IMP_WORLD_ERR_IO,          /* a failed call or file operation, an unexpected reply */
    IMP_WORLD_ERR_CORRUPT,     /* stored bytes whose SHA-256 is not their id (ignored) */
    IMP_WORLD_ERR_BUILD,       /* stored bytes that do not build here (other limits) */
    IMP_WORLD_ERR_COUNT
} imp_world_err;

/* Label of an error kind ("connect", "timeout", ...). */
const char *imp_world_err_name(imp_world_err kind);

/* Where the World bytes live beyond this process. Every function is called from any thread
 * at once and returns within its timeout; `err` is set on IMP_WORLD_IO_UNAVAILABLE (and to
 * IMP_WORLD_ERR_CORRUPT with MISSING for bytes that do not match their id). */
typedef struct imp_world_backend {
    const char *name; /* "dir", "redis" */
    /* the bytes stored under id (malloc'd into *bytes, caller frees): OK or MISSING */
    imp_world_io (*fetch)(void *self, const char *id, char **bytes, size_t *len,
                          imp_world_err *err);
    /* stores bytes under id unless it is there: OK (written now) or EXISTS */
    imp_world_io (*store)(void *self, const char *id, const char *bytes, size_t len,
                          imp_world_err *err);
    /* OK (it was there) or MISSING */
    imp_world_io (*exists)(void *self, const char *id, imp_world_err *err);
    imp_world_io (*remove)(void *self, const char *id, imp_world_err *err);
    void (*destroy)(void *self);
    void *self;
} imp_world_backend;

/* Builds the entry of a World's bytes as fetched from a backend (id already checked);
 * NULL when they do not build (logged by the builder's owner). */
typedef imp_world_entry *(*imp_world_build_fn)(const char *id, const char *bytes, size_t len,
                                               void *arg);

typedef struct imp_world_store_config {
    size_t cache_bytes; /* built worlds kept (meta.bytes), least recently used first */
    const imp_world_backend *backend; /* NULL: memory only; else copied, and the store owns
                                         what it holds (destroy) */
    imp_world_build_fn build;         /* required with a backend */
    void *build_arg;
} imp_world_store_config;

/* A memory store holding at most cap_bytes of worlds (meta.bytes); NULL on allocation
 * failure. */
imp_world_store *imp_world_store_create(size_t cap_bytes);
/* A store as configured; NULL on allocation failure (the backend is then destroyed). */
imp_world_store *imp_world_store_open(const imp_world_store_config *c);
/* 1 when the store has a backend (uploads are written through, misses fetched). */
int imp_world_store_shared(const imp_world_store *s);
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

/* What imp_world_store_get_ex found. */
typedef enum imp_world_get_status {
    IMP_WORLD_GET_OK = 0,
    IMP_WORLD_GET_UNKNOWN,    /* no world under that id (or not an id) */
    IMP_WORLD_GET_UNAVAILABLE /* not cached, and the backend could not be reached */
} imp_world_get_status;

/* The world of `id`, held until imp_world_store_release; NULL when not stored. Counts as a
 * use for the eviction order. On a cache miss with a backend: fetches the bytes and builds
 * them once for every concurrent caller; a world larger than the cache is handed to the
 * callers and freed at the last release. `st` (may be NULL) says why on NULL. */
const imp_world_entry *imp_world_store_get_ex(imp_world_store *s, const char *id,
                                              imp_world_get_status *st);
const imp_world_entry *imp_world_store_get(imp_world_store *s, const char *id);
/* Only the cache: the world of `id` when this process holds it built, else NULL. */
const imp_world_entry *imp_world_store_cached(imp_world_store *s, const char *id);

/* Writes a World's bytes to the backend unless stored (set if absent): OK (written now),
 * EXISTS, UNAVAILABLE; OK without a backend. */
imp_world_io imp_world_store_write(imp_world_store *s, const char *id, const char *bytes,
                                   size_t len);
/* Whether the backend holds `id`: OK, MISSING, UNAVAILABLE; without a backend, whether the
 * cache does. */
imp_world_io imp_world_store_exists(imp_world_store *s, const char *id);
void imp_world_store_release(imp_world_store *s, const imp_world_entry *e);

/* Forgets `id` (the world is freed when its last holder releases it): 1, or 0 when it
 * was not stored. Only the cache: see imp_world_store_remove. */
int imp_world_store_delete(imp_world_store *s, const char *id);
/* Forgets `id` in the backend and the cache: OK (it was stored), MISSING, or UNAVAILABLE
 * (the backend failed; the cache keeps it). Other processes' caches keep their copy until
 * they evict it. */
imp_world_io imp_world_store_remove(imp_world_store *s, const char *id);

/* Worlds cached and the bytes they hold. */
void imp_world_store_stats(imp_world_store *s, size_t *count, size_t *bytes);

/* Upper bounds (seconds) of the build-time histogram's buckets; one more bucket: +Inf. */
#define IMP_WORLD_BUILD_BUCKETS 10
extern const double imp_world_build_bounds[IMP_WORLD_BUILD_BUCKETS];

/* The store's counters since it was opened (for the metrics). */
typedef struct imp_world_store_counters {
    size_t count, bytes, cap; /* cached worlds, their bytes, the cap */
    unsigned long long hits, misses, evictions;
    unsigned long long errors[IMP_WORLD_ERR_COUNT];
    unsigned long long builds[IMP_WORLD_BUILD_BUCKETS + 1]; /* per bucket, not cumulative */
    unsigned long long build_count;
    double build_seconds; /* sum */
} imp_world_store_counters;
void imp_world_store_counters_get(imp_world_store *s, imp_world_store_counters *out);

/* Counts one build that took `seconds` (uploads and fetches). */
void imp_world_store_count_build(imp_world_store *s, double seconds);

/* The builder of fetched bytes the daemon uses (api/ep_worlds.c): decodes the World with
 * the limits of `arg`, a const imp_api_ctx *, and builds it without a stop check. */
imp_world_entry *imp_ep_worlds_build(const char *id, const char *bytes, size_t len, void *arg);

#endif

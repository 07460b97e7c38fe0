/*
 * world_backend.h - where the daemon keeps World bytes beyond its cache
 * (api/world_store.h's imp_world_backend): `dir:/path` on disk, and
 * `redis://host:port[/db]` shared by every replica.
 *
 * Thread-safety: a backend's functions may be called from any thread at
 * once (see imp_world_backend).
 */
#ifndef IMP_SERVER_WORLD_BACKEND_H
#define IMP_SERVER_WORLD_BACKEND_H

#include "api/world_store.h"
#include "log.h"

/* Every Redis call (connect, command) gives up after this long. */
#define IMP_REDIS_TIMEOUT_MS 500
/* After a failed connect, the next is tried after a delay that doubles from the first to
 * the last (milliseconds); calls in between fail at once. */
#define IMP_REDIS_BACKOFF_FIRST_MS 50
#define IMP_REDIS_BACKOFF_MAX_MS 1000
/* Idle connections kept for reuse (one per worker thread is enough). */
#define IMP_REDIS_POOL_MAX 64

/* The backend a --world-store value names into *out: all zero (no functions) for
 * "memory"; else a backend the caller owns (hand it to imp_world_store_open, which takes
 * it over). 0, or -1 with `why` (cap bytes) filled for a value that names no backend or a
 * directory that cannot be used. `log` (copied, may be NULL) gets a line for each file
 * ignored and each lost connection. */
int imp_world_backend_open(const char *spec, const imp_logger *log, imp_world_backend *out,
                           char *why, size_t cap);

#endif

/*
 * world_store.c - the store of worlds (see world_store.h).
 *
 * DESIGN
 * What: id -> built world and metadata, shared by every request of a
 * process, under a cap on the bytes held; in front of an optional backend
 * that keeps the World bytes (whose SHA-256 is the id) for every replica.
 * How: a doubly linked list in order of use (most recent first) under one
 * mutex; lookups scan it (a store holds tens of worlds: the cap is bytes,
 * and a world of interest is megabytes). Each node counts its holders: a
 * delete or an eviction unlinks the node, and whoever releases it last
 * frees it, so a query never sees its world freed under it. The lock is
 * held only to link, unlink and count, never during a fetch, a build or a
 * query. A miss with a backend becomes a pending fetch in a second list:
 * the first caller fetches and builds, later callers of the same id wait
 * on the pending fetch's condition variable and share its result (single
 * flight), each with its own hold. A world larger than the whole cache is
 * never linked: its callers hold it and the last release frees it.
 * Why here: the store is the one piece of state api/ keeps across
 * requests; the daemon, the CLI and the fuzz target each create one and
 * hand it over in imp_api_ctx, so what the fuzz target exercises is what
 * the daemon serves. It is also api/'s one use of a lock (pthread), which
 * DESIGN.md's layer rules note. The backends themselves (files, Redis)
 * live in server/world_backend.c, so api/ links no client library.
 */
#include "api/world_store.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct node {
    imp_world_entry entry; /* first: a held entry is its node */
    size_t n_colliders;
    unsigned holders; /* requests holding it, plus 1 while it is linked */
    int linked;
    struct node *prev, *next;
} node;

/* A fetch in progress: its callers wait on `done`. */
typedef struct pending {
    char id[IMP_WORLD_ID_LEN + 1];
    pthread_cond_t done_cv;
    int done;
    node *result; /* NULL: see status */
    imp_world_get_status status;
    unsigned refs; /* the fetching caller and every waiter */
    struct pending *next;
} pending;

struct imp_world_store {
    pthread_mutex_t lock;
    node *head, *tail; /* most recently used first */
    size_t count, bytes, cap;
    pending *pending;
    imp_world_backend backend_copy;
    imp_world_backend *backend; /* &backend_copy, or NULL */
    imp_world_build_fn build;
    void *build_arg;
    imp_world_store_counters c; /* count, bytes and cap filled when read */
};

const double imp_world_build_bounds[IMP_WORLD_BUILD_BUCKETS] = {0.001, 0.005, 0.01, 0.05, 0.1,
                                                                0.25,  0.5,   1,    2.5,  5};

static const char *const ERR_NAMES[IMP_WORLD_ERR_COUNT] = {"connect", "timeout", "io", "corrupt",
                                                           "build"};

const char *imp_world_err_name(imp_world_err kind) {
    return kind >= 0 && kind < IMP_WORLD_ERR_COUNT ? ERR_NAMES[kind] : "io";
}

int imp_world_id_valid(const char *id) {
    if (!id) return 0;
    size_t n = 0;
    for (; id[n]; ++n)
        if (!((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f'))) return 0;
    return n == IMP_WORLD_ID_LEN;
}

void imp_world_id_of(const char *body, size_t len, char id[IMP_WORLD_ID_LEN + 1]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    static const char HEX[] = "0123456789abcdef";
    /* EVP_Digest fails only when the library cannot allocate its context */
    if (EVP_Digest(body, len, md, &n, EVP_sha256(), NULL) != 1 || n != 32) {
        id[0] = '\0';
        return;
    }
    for (unsigned i = 0; i < 32; ++i) {
        id[2 * i] = HEX[md[i] >> 4];
        id[2 * i + 1] = HEX[md[i] & 15];
    }
    id[IMP_WORLD_ID_LEN] = '\0';
}

imp_world_store *imp_world_store_open(const imp_world_store_config *c) {
    imp_world_store *s = calloc(1, sizeof *s);
    if (s && pthread_mutex_init(&s->lock, NULL) != 0) {
        free(s);
        s = NULL;
    }
    if (!s) {
        if (c->backend) c->backend->destroy(c->backend->self);
        return NULL;
    }
    s->cap = c->cache_bytes;
    if (c->backend) {
        s->backend_copy = *c->backend;
        s->backend = &s->backend_copy;
    }
    s->build = c->build;
    s->build_arg = c->build_arg;
    return s;
}

imp_world_store *imp_world_store_create(size_t cap_bytes) {
    imp_world_store_config c = {cap_bytes, NULL, NULL, NULL};
    return imp_world_store_open(&c);
}

int imp_world_store_shared(const imp_world_store *s) { return s && s->backend; }

imp_world_entry *imp_world_entry_create(imp_world *world, size_t n_colliders) {
    node *n = calloc(1, sizeof *n);
    imp_world_entry *e = n ? &n->entry : NULL;
    if (e && n_colliders) {
        e->collider_ids = calloc(n_colliders, sizeof *e->collider_ids);
        e->collider_numbers = calloc(n_colliders, sizeof *e->collider_numbers);
        e->collider_is_number = calloc(n_colliders, 1);
        if (!e->collider_ids || !e->collider_numbers || !e->collider_is_number) {
            free(e->collider_ids);
            free(e->collider_numbers);
            free(e->collider_is_number);
            free(n);
            e = NULL;
        }
    }
    if (!e) {
        imp_world_destroy(world);
        return NULL;
    }
    n->n_colliders = n_colliders;
    e->world = world;
    return e;
}

void imp_world_entry_free(imp_world_entry *e) {
    if (!e) return;
    node *n = (node *)e;
    for (size_t i = 0; e->collider_ids && i < n->n_colliders; ++i)
        free(e->collider_ids[i]);
    free(e->collider_ids);
    free(e->collider_numbers);
    free(e->collider_is_number);
    imp_world_destroy((imp_world *)e->world);
    free(n);
}

void imp_world_store_destroy(imp_world_store *s) {
    if (!s) return;
    for (node *n = s->head, *next; n; n = next) {
        next = n->next;
        imp_world_entry_free(&n->entry);
    }
    if (s->backend) s->backend->destroy(s->backend->self);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static void unlink_node(imp_world_store *s, node *n) {
    if (n->prev)
        n->prev->next = n->next;
    else
        s->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        s->tail = n->prev;
    n->prev = n->next = NULL;
    n->linked = 0;
    s->count--;
    s->bytes -= n->entry.meta.bytes;
}

static void push_front(imp_world_store *s, node *n) {
    n->prev = NULL;
    n->next = s->head;
    if (s->head)
        s->head->prev = n;
    else
        s->tail = n;
    s->head = n;
    n->linked = 1;
    s->count++;
    s->bytes += n->entry.meta.bytes;
}

static node *find(imp_world_store *s, const char *id) {
    for (node *n = s->head; n; n = n->next)
        if (strcmp(n->entry.meta.id, id) == 0) return n;
    return NULL;
}

/* Drops the store's own hold of an unlinked node; returns it when nobody holds it any
 * more (the caller frees it outside the lock). */
static node *drop(node *n) { return --n->holders == 0 ? n : NULL; }

/* Links n (holders already counted but the store's own), evicting least recently used
 * worlds until it fits; the evicted nodes nobody holds are chained on *evicted for the
 * caller to free outside the lock. Under the lock; n fits the cap. */
static void link_fitting(imp_world_store *s, node *n, node **evicted) {
    /* a world some request holds is unlinked all the same (its holder frees it), so the cap
     * bounds what the store keeps */
    while (s->tail && s->bytes + n->entry.meta.bytes > s->cap) {
        node *old = s->tail;
        unlink_node(s, old);
        s->c.evictions++;
        if (drop(old)) {
            old->next = *evicted;
            *evicted = old;
        }
    }
    n->holders++;
    push_front(s, n);
}

static void free_chain(node *evicted) {
    while (evicted) {
        node *next = evicted->next;
        imp_world_entry_free(&evicted->entry);
        evicted = next;
    }
}

imp_world_put_status imp_world_store_put(imp_world_store *s, imp_world_entry *e) {
    node *n = (node *)e;
    if (e->meta.bytes > s->cap) {
        imp_world_entry_free(e);
        return IMP_WORLD_PUT_TOO_BIG;
    }
    node *evicted = NULL; /* unlinked nodes nobody holds, chained by next */
    pthread_mutex_lock(&s->lock);
    if (find(s, e->meta.id)) {
        pthread_mutex_unlock(&s->lock);
        imp_world_entry_free(e);
        return IMP_WORLD_PUT_EXISTS;
    }
    n->holders = 0;
    link_fitting(s, n, &evicted);
    pthread_mutex_unlock(&s->lock);
    free_chain(evicted);
    return IMP_WORLD_PUT_NEW;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A cache hit under the lock: held and moved to the front; NULL on a miss. */
static node *hit(imp_world_store *s, const char *id) {
    node *n = find(s, id);
    if (n) {
        n->holders++;
        unlink_node(s, n);
        push_front(s, n);
    }
    return n;
}

static pending *find_pending(imp_world_store *s, const char *id) {
    for (pending *p = s->pending; p; p = p->next)
        if (strcmp(p->id, id) == 0) return p;
    return NULL;
}

/* Drops one reference of a finished pending fetch under the lock; frees it with the last. */
static void pending_put(pending *p) {
    if (--p->refs) return;
    pthread_cond_destroy(&p->done_cv);
    free(p);
}

/* Fetches and builds `id` outside the lock: the node (holders 0, unlinked) or NULL. */
static node *fetch_build(imp_world_store *s, const char *id, imp_world_get_status *st) {
    char *bytes = NULL;
    size_t len = 0;
    imp_world_err err = IMP_WORLD_ERR_IO;
    imp_world_io io = s->backend->fetch(s->backend->self, id, &bytes, &len, &err);
    node *n = NULL;
    if (io == IMP_WORLD_IO_OK) {
        double t0 = now_s();
        imp_world_entry *e = s->build ? s->build(id, bytes, len, s->build_arg) : NULL;
        if (e) {
            imp_world_store_count_build(s, now_s() - t0);
            n = (node *)e;
            n->holders = 0;
        } else {
            err = IMP_WORLD_ERR_BUILD;
        }
    }
    free(bytes);
    *st = n                                                         ? IMP_WORLD_GET_OK
          : io == IMP_WORLD_IO_MISSING || io == IMP_WORLD_IO_EXISTS ? IMP_WORLD_GET_UNKNOWN
                                                                    : IMP_WORLD_GET_UNAVAILABLE;
    if (!n && (io != IMP_WORLD_IO_MISSING || err == IMP_WORLD_ERR_CORRUPT)) {
        pthread_mutex_lock(&s->lock);
        s->c.errors[err < IMP_WORLD_ERR_COUNT ? err : IMP_WORLD_ERR_IO]++;
        pthread_mutex_unlock(&s->lock);
    }
    return n;
}

const imp_world_entry *imp_world_store_get_ex(imp_world_store *s, const char *id,
                                              imp_world_get_status *st) {
    imp_world_get_status dummy;
    if (!st) st = &dummy;
    *st = IMP_WORLD_GET_UNKNOWN;
    if (!imp_world_id_valid(id)) return NULL;
    pthread_mutex_lock(&s->lock);
    node *n = hit(s, id);
    if (n || !s->backend) {
        if (n)
            s->c.hits++;
        else
            s->c.misses++;
        pthread_mutex_unlock(&s->lock);
        if (n) *st = IMP_WORLD_GET_OK;
        return n ? &n->entry : NULL;
    }
    s->c.misses++;
    pending *p = find_pending(s, id);
    if (p) { /* another caller fetches it: wait for its result */
        p->refs++;
        while (!p->done)
            pthread_cond_wait(&p->done_cv, &s->lock);
        n = p->result; /* the fetching caller counted our hold */
        *st = p->status;
        pending_put(p);
        pthread_mutex_unlock(&s->lock);
        return n ? &n->entry : NULL;
    }
    p = calloc(1, sizeof *p);
    if (!p || pthread_cond_init(&p->done_cv, NULL) != 0) {
        pthread_mutex_unlock(&s->lock);
        free(p);
        *st = IMP_WORLD_GET_UNAVAILABLE;
        return NULL;
    }
    memcpy(p->id, id, sizeof p->id);
    p->refs = 1;
    p->next = s->pending;
    s->pending = p;
    pthread_mutex_unlock(&s->lock);

    n = fetch_build(s, id, st);

    node *evicted = NULL, *spare = NULL;
    pthread_mutex_lock(&s->lock);
    for (pending **pp = &s->pending; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    if (n) {
        node *cached = find(s, id); /* an upload meanwhile */
        if (cached) {
            spare = n;
            n = cached;
        } else if (n->entry.meta.bytes <= s->cap) {
            link_fitting(s, n, &evicted);
        }
        n->holders += p->refs; /* this caller and every waiter */
    }
    p->result = n;
    p->status = *st;
    p->done = 1;
    pthread_cond_broadcast(&p->done_cv);
    pending_put(p);
    pthread_mutex_unlock(&s->lock);
    free_chain(evicted);
    if (spare) imp_world_entry_free(&spare->entry);
    return n ? &n->entry : NULL;
}

const imp_world_entry *imp_world_store_get(imp_world_store *s, const char *id) {
    return imp_world_store_get_ex(s, id, NULL);
}

const imp_world_entry *imp_world_store_cached(imp_world_store *s, const char *id) {
    if (!imp_world_id_valid(id)) return NULL;
    pthread_mutex_lock(&s->lock);
    node *n = hit(s, id);
    pthread_mutex_unlock(&s->lock);
    return n ? &n->entry : NULL;
}

static void count_error(imp_world_store *s, imp_world_io io, imp_world_err err) {
    if (io != IMP_WORLD_IO_UNAVAILABLE) return;
    pthread_mutex_lock(&s->lock);
    s->c.errors[err < IMP_WORLD_ERR_COUNT ? err : IMP_WORLD_ERR_IO]++;
    pthread_mutex_unlock(&s->lock);
}

imp_world_io imp_world_store_write(imp_world_store *s, const char *id, const char *bytes,
                                   size_t len) {
    if (!s->backend) return IMP_WORLD_IO_OK;
    imp_world_err err = IMP_WORLD_ERR_IO;
    imp_world_io io = s->backend->store(s->backend->self, id, bytes, len, &err);
    count_error(s, io, err);
    return io;
}

imp_world_io imp_world_store_exists(imp_world_store *s, const char *id) {
    if (!imp_world_id_valid(id)) return IMP_WORLD_IO_MISSING;
    if (!s->backend) {
        pthread_mutex_lock(&s->lock);
        int there = find(s, id) != NULL;
        pthread_mutex_unlock(&s->lock);
        return there ? IMP_WORLD_IO_OK : IMP_WORLD_IO_MISSING;
    }
    imp_world_err err = IMP_WORLD_ERR_IO;
    imp_world_io io = s->backend->exists(s->backend->self, id, &err);
    count_error(s, io, err);
    return io;
}

imp_world_io imp_world_store_remove(imp_world_store *s, const char *id) {
    if (!imp_world_id_valid(id)) return IMP_WORLD_IO_MISSING;
    imp_world_io io = IMP_WORLD_IO_MISSING;
    if (s->backend) {
        imp_world_err err = IMP_WORLD_ERR_IO;
        io = s->backend->remove(s->backend->self, id, &err);
        count_error(s, io, err);
        if (io == IMP_WORLD_IO_UNAVAILABLE) return io;
    }
    return imp_world_store_delete(s, id) ? IMP_WORLD_IO_OK : io;
}

void imp_world_store_release(imp_world_store *s, const imp_world_entry *e) {
    if (!e) return;
    node *n = (node *)e;
    pthread_mutex_lock(&s->lock);
    node *gone = drop(n);
    pthread_mutex_unlock(&s->lock);
    if (gone) imp_world_entry_free(&gone->entry);
}

int imp_world_store_delete(imp_world_store *s, const char *id) {
    if (!imp_world_id_valid(id)) return 0;
    pthread_mutex_lock(&s->lock);
    node *n = find(s, id), *gone = NULL;
    if (n) {
        unlink_node(s, n);
        gone = drop(n);
    }
    pthread_mutex_unlock(&s->lock);
    if (gone) imp_world_entry_free(&gone->entry);
    return n != NULL;
}

void imp_world_store_stats(imp_world_store *s, size_t *count, size_t *bytes) {
    pthread_mutex_lock(&s->lock);
    *count = s->count;
    *bytes = s->bytes;
    pthread_mutex_unlock(&s->lock);
}

void imp_world_store_counters_get(imp_world_store *s, imp_world_store_counters *out) {
    pthread_mutex_lock(&s->lock);
    *out = s->c;
    out->count = s->count;
    out->bytes = s->bytes;
    out->cap = s->cap;
    pthread_mutex_unlock(&s->lock);
}

void imp_world_store_count_build(imp_world_store *s, double seconds) {
    size_t b = 0;
    while (b < IMP_WORLD_BUILD_BUCKETS && seconds > imp_world_build_bounds[b])
        ++b;
    pthread_mutex_lock(&s->lock);
    s->c.builds[b]++;
    s->c.build_count++;
    s->c.build_seconds += seconds;
    pthread_mutex_unlock(&s->lock);
}

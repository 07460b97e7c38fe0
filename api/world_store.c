/*
 * world_store.c - the embedded store of built worlds (see world_store.h).
 *
 * DESIGN
 * What: id -> built world and metadata, shared by every request of a
 * process, under a cap on the bytes held.
 * How: a doubly linked list in order of use (most recent first) under one
 * mutex; lookups scan it (a store holds tens of worlds: the cap is bytes,
 * and a world of interest is megabytes). Each node counts its holders: a
 * delete or an eviction unlinks the node, and whoever releases it last
 * frees it, so a query never sees its world freed under it. The lock is
 * held only to link, unlink and count, never during a build or a query.
 * Why here: the store is the one piece of state api/ keeps across
 * requests; the daemon, the CLI and the fuzz target each create one and
 * hand it over in imp_api_ctx, so what the fuzz target exercises is what
 * the daemon serves. It is also api/'s one use of a lock (pthread), which
 * DESIGN.md's layer rules note.
 */
#include "api/world_store.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
    imp_world_entry entry; /* first: a held entry is its node */
    size_t n_colliders;
    unsigned holders; /* requests holding it, plus 1 while it is linked */
    struct node *prev, *next;
} node;

struct imp_world_store {
    pthread_mutex_t lock;
    node *head, *tail; /* most recently used first */
    size_t count, bytes, cap;
};

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

imp_world_store *imp_world_store_create(size_t cap_bytes) {
    imp_world_store *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (pthread_mutex_init(&s->lock, NULL) != 0) {
        free(s);
        return NULL;
    }
    s->cap = cap_bytes;
    return s;
}

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
    /* least recently used first; a world some request holds is unlinked all the same
     * (its holder frees it), so the cap bounds what the store keeps */
    while (s->tail && s->bytes + e->meta.bytes > s->cap) {
        node *old = s->tail;
        unlink_node(s, old);
        if (drop(old)) {
            old->next = evicted;
            evicted = old;
        }
    }
    n->holders = 1;
    push_front(s, n);
    pthread_mutex_unlock(&s->lock);
    while (evicted) {
        node *next = evicted->next;
        imp_world_entry_free(&evicted->entry);
        evicted = next;
    }
    return IMP_WORLD_PUT_NEW;
}

const imp_world_entry *imp_world_store_get(imp_world_store *s, const char *id) {
    if (!imp_world_id_valid(id)) return NULL;
    pthread_mutex_lock(&s->lock);
    node *n = find(s, id);
    if (n) {
        n->holders++;
        unlink_node(s, n);
        push_front(s, n);
    }
    pthread_mutex_unlock(&s->lock);
    return n ? &n->entry : NULL;
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

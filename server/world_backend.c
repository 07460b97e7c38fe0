/*
 * world_backend.c - the world store's backends (see world_backend.h).
 *
 * DESIGN
 * What: the bytes of each World (the decoded upload body, whose SHA-256 is
 * its id), kept beyond one process: `dir:` in files, `redis://` in Redis,
 * where every replica fetches them and builds its own copy.
 * How, dir: one file <id>.json per world. A write goes to a temporary
 * file in the same directory, is flushed (fsync) and then linked to its
 * name: link(2) fails when the name exists, which makes it set-if-absent,
 * and a crash at any point leaves at worst a temporary file (removed at the
 * next start), never a partial world under a world's name. A file whose
 * SHA-256 is not its name is renamed aside (.corrupt-<id>) with a log line
 * and counts as missing.
 * How, redis: the bytes under "impactd:world:<id>", written with SET NX
 * (set if absent: concurrent uploads from several replicas leave one copy,
 * and Redis runs a command whole or not at all, so a replica that dies
 * mid-upload leaves nothing), read with GET (checked against the id like
 * a file). hiredis contexts are not thread-safe, so each call borrows one
 * from a small pool. Every connect and command has a 500 ms timeout
 * (IMP_REDIS_TIMEOUT_MS); a failed connect starts a backoff (50 ms
 * doubling to 1 s) during which calls fail at once, so a request never
 * waits for a dead Redis longer than one timeout, and the first call
 * after the backoff reconnects: no restart is needed when Redis returns. A
 * command that times out (a Redis that is stopped or swamped) starts the
 * same backoff, so it costs one timeout per period, not one per request. A
 * pooled connection that turns out closed (Redis restarted) is retried
 * once on a fresh one.
 * Why: files for a single machine that restarts; Redis because every
 * replica must see an upload at once and it is the store operators already
 * run (hiredis: its own C client, in Debian).
 */
#include "world_backend.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KEY_PREFIX "impactd:world:"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* 1 when bytes hash to id. */
static int matches(const char *id, const char *bytes, size_t len) {
    char got[IMP_WORLD_ID_LEN + 1];
    imp_world_id_of(bytes, len, got);
    return strcmp(got, id) == 0;
}

/* ---- dir: ---------------------------------------------------------------------------------- */

typedef struct dir_backend {
    char path[PATH_MAX];
    imp_logger log;
    atomic_uint seq; /* temporary file names */
} dir_backend;

static void dir_name(const dir_backend *b, const char *id, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s.json", b->path, id);
}

static int write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static imp_world_io dir_fetch(void *self, const char *id, char **bytes, size_t *len,
                              imp_world_err *err) {
    dir_backend *b = self;
    char name[PATH_MAX + 80];
    dir_name(b, id, name, sizeof name);
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return IMP_WORLD_IO_MISSING;
        *err = IMP_WORLD_ERR_IO;
        return IMP_WORLD_IO_UNAVAILABLE;
    }
    struct stat st;
    char *buf = NULL;
    size_t got = 0;
    int ok = fstat(fd, &st) == 0 && (buf = malloc((size_t)st.st_size + 1)) != NULL;
    while (ok && got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) ok = 0;
        got += r > 0 ? (size_t)r : 0;
    }
    close(fd);
    if (!ok) {
        free(buf);
        *err = IMP_WORLD_ERR_IO;
        return IMP_WORLD_IO_UNAVAILABLE;
    }
    buf[got] = '\0';
    if (!matches(id, buf, got)) {
        char aside[PATH_MAX + 80];
        snprintf(aside, sizeof aside, "%s/.corrupt-%s", b->path, id);
        IMP_LOG(&b->log, IMP_LOG_WARN,
                "world store: %s does not hash to its name; ignored (moved to %s)", name, aside);
        rename(name, aside);
        free(buf);
        *err = IMP_WORLD_ERR_CORRUPT;
        return IMP_WORLD_IO_MISSING;
    }
    *bytes = buf;
    *len = got;
    return IMP_WORLD_IO_OK;
}

static imp_world_io dir_store(void *self, const char *id, const char *bytes, size_t len,
                              imp_world_err *err) {
    dir_backend *b = self;
    char name[PATH_MAX + 80], tmp[PATH_MAX + 120];
    dir_name(b, id, name, sizeof name);
    if (access(name, F_OK) == 0) return IMP_WORLD_IO_EXISTS;
    snprintf(tmp, sizeof tmp, "%s/.tmp-%s-%ld-%u", b->path, id, (long)getpid(),
             atomic_fetch_add(&b->seq, 1));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        *err = IMP_WORLD_ERR_IO;
        return IMP_WORLD_IO_UNAVAILABLE;
    }
    int ok = write_all(fd, bytes, len) == 0 && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    imp_world_io io = IMP_WORLD_IO_OK;
    if (!ok) {
        io = IMP_WORLD_IO_UNAVAILABLE;
    } else if (link(tmp, name) != 0) {
        io = errno == EEXIST ? IMP_WORLD_IO_EXISTS : IMP_WORLD_IO_UNAVAILABLE;
    } else {
        int dfd = open(b->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd); /* the new name survives a crash too */
            close(dfd);
        }
    }
    unlink(tmp);
    if (io == IMP_WORLD_IO_UNAVAILABLE) *err = IMP_WORLD_ERR_IO;
    return io;
}

static imp_world_io dir_exists(void *self, const char *id, imp_world_err *err) {
    (void)err;
    char name[PATH_MAX + 80];
    dir_name(self, id, name, sizeof name);
    return access(name, F_OK) == 0 ? IMP_WORLD_IO_OK : IMP_WORLD_IO_MISSING;
}

static imp_world_io dir_remove(void *self, const char *id, imp_world_err *err) {
    char name[PATH_MAX + 80];
    dir_name(self, id, name, sizeof name);
    if (unlink(name) == 0) return IMP_WORLD_IO_OK;
    if (errno == ENOENT) return IMP_WORLD_IO_MISSING;
    *err = IMP_WORLD_ERR_IO;
    return IMP_WORLD_IO_UNAVAILABLE;
}

static void dir_destroy(void *self) { free(self); }

/* Removes the temporary files of writes a crash interrupted. */
static void dir_sweep(dir_backend *b) {
    DIR *d = opendir(b->path);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, ".tmp-", 5) != 0) continue;
        char name[PATH_MAX + 300];
        snprintf(name, sizeof name, "%s/%s", b->path, e->d_name);
        if (unlink(name) == 0)
            IMP_LOG(&b->log, IMP_LOG_WARN, "world store: removed %s (an interrupted write)", name);
    }
    closedir(d);
}

static int dir_open(const char *path, const imp_logger *log, imp_world_backend *be, char *why,
                    size_t cap) {
    struct stat st;
    if (!*path || strlen(path) >= PATH_MAX) {
        snprintf(why, cap, "dir: needs a directory path");
        return -1;
    }
    if (stat(path, &st) != 0 && mkdir(path, 0755) != 0) {
        snprintf(why, cap, "cannot create directory %.200s: %s", path, strerror(errno));
        return -1;
    }
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || access(path, W_OK | X_OK) != 0) {
        snprintf(why, cap, "%.200s is not a writable directory", path);
        return -1;
    }
    dir_backend *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    memcpy(b->path, path, strlen(path) + 1);
    if (log) b->log = *log;
    atomic_init(&b->seq, 0);
    dir_sweep(b);
    *be = (imp_world_backend){"dir", dir_fetch, dir_store, dir_exists, dir_remove, dir_destroy, b};
    return 0;
}

/* ---- redis:// ---------------------------------------------------------------------------- */

typedef struct redis_backend {
    char host[256];
    int port, db;
    imp_logger log;
    pthread_mutex_t lock;
    redisContext *idle[IMP_REDIS_POOL_MAX];
    int n_idle;
    double next_try; /* no connect before this (monotonic seconds) */
    long backoff_ms;
    int down; /* the last connect failed (logged once until one succeeds) */
} redis_backend;

static struct timeval ms_tv(long ms) { return (struct timeval){ms / 1000, (ms % 1000) * 1000}; }

/* What a context's error was: timeout, or other I/O. */
static imp_world_err classify(const redisContext *c) {
    if (c->err == REDIS_ERR_IO &&
        (strstr(c->errstr, "temporarily unavailable") || strstr(c->errstr, "timed out")))
        return IMP_WORLD_ERR_TIMEOUT;
    return IMP_WORLD_ERR_IO;
}

/* Starts (or lengthens) the backoff after a failure; under the lock. */
static void back_off(redis_backend *b) {
    b->next_try = now_s() + (double)b->backoff_ms / 1000.0;
    b->backoff_ms =
        b->backoff_ms * 2 > IMP_REDIS_BACKOFF_MAX_MS ? IMP_REDIS_BACKOFF_MAX_MS : b->backoff_ms * 2;
}

static redisContext *redis_connect(redis_backend *b, imp_world_err *err) {
    pthread_mutex_lock(&b->lock);
    int wait = now_s() < b->next_try;
    pthread_mutex_unlock(&b->lock);
    if (wait) {
        *err = IMP_WORLD_ERR_CONNECT;
        return NULL;
    }
    redisContext *c = redisConnectWithTimeout(b->host, b->port, ms_tv(IMP_REDIS_TIMEOUT_MS));
    int ok = c && !c->err && redisSetTimeout(c, ms_tv(IMP_REDIS_TIMEOUT_MS)) == REDIS_OK;
    if (ok && b->db) {
        redisReply *r = redisCommand(c, "SELECT %d", b->db);
        ok = r && r->type == REDIS_REPLY_STATUS;
        freeReplyObject(r);
    }
    pthread_mutex_lock(&b->lock);
    if (ok) {
        if (b->down)
            IMP_LOG(&b->log, IMP_LOG_WARN, "world store: connected to redis at %s:%d again",
                    b->host, b->port);
        b->down = 0;
        b->backoff_ms = IMP_REDIS_BACKOFF_FIRST_MS;
        b->next_try = 0;
    } else {
        if (!b->down)
            IMP_LOG(&b->log, IMP_LOG_WARN,
                    "world store: cannot connect to redis at %s:%d (%s); retrying with backoff",
                    b->host, b->port, c ? c->errstr : "out of memory");
        b->down = 1;
        back_off(b);
    }
    pthread_mutex_unlock(&b->lock);
    if (!ok) {
        *err = c && c->err ? (classify(c) == IMP_WORLD_ERR_TIMEOUT ? IMP_WORLD_ERR_TIMEOUT
                                                                   : IMP_WORLD_ERR_CONNECT)
                           : IMP_WORLD_ERR_CONNECT;
        if (c) redisFree(c);
        return NULL;
    }
    return c;
}

/* A connection from the pool, or a new one; *pooled says which. NULL during a backoff: a
 * Redis that does not answer (stopped, swamped) costs one timeout per backoff period, not
 * one per request. */
static redisContext *redis_take(redis_backend *b, int *pooled, imp_world_err *err) {
    pthread_mutex_lock(&b->lock);
    int wait = now_s() < b->next_try;
    redisContext *c = !wait && b->n_idle ? b->idle[--b->n_idle] : NULL;
    pthread_mutex_unlock(&b->lock);
    *pooled = c != NULL;
    if (wait) {
        *err = IMP_WORLD_ERR_CONNECT;
        return NULL;
    }
    return c ? c : redis_connect(b, err);
}

/* Returns a connection that just answered to the pool; ends a backoff in force. */
static void redis_give(redis_backend *b, redisContext *c) {
    pthread_mutex_lock(&b->lock);
    if (b->down) {
        IMP_LOG(&b->log, IMP_LOG_WARN, "world store: redis at %s:%d answers again", b->host,
                b->port);
        b->down = 0;
        b->backoff_ms = IMP_REDIS_BACKOFF_FIRST_MS;
        b->next_try = 0;
    }
    if (b->n_idle < IMP_REDIS_POOL_MAX) {
        b->idle[b->n_idle++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&b->lock);
    if (c) redisFree(c);
}

/* One command (argv form: binary-safe); the reply (caller frees), or NULL with *err set. */
static redisReply *redis_call(redis_backend *b, int argc, const char **argv, const size_t *lens,
                              imp_world_err *err) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        int pooled = 0;
        redisContext *c = redis_take(b, &pooled, err);
        if (!c) return NULL;
        redisReply *r = redisCommandArgv(c, argc, argv, lens);
        if (r) {
            redis_give(b, c);
            if (r->type == REDIS_REPLY_ERROR) {
                IMP_LOG(&b->log, IMP_LOG_WARN, "world store: redis answered %.200s", r->str);
                freeReplyObject(r);
                *err = IMP_WORLD_ERR_IO;
                return NULL;
            }
            return r;
        }
        *err = classify(c);
        /* a pooled connection Redis closed meanwhile (a restart): once more on a new one;
         * a timeout is not retried, so no call waits more than one timeout for a reply, and
         * it starts a backoff like a failed connect */
        int retry = pooled && *err != IMP_WORLD_ERR_TIMEOUT;
        redisFree(c);
        if (*err == IMP_WORLD_ERR_TIMEOUT) {
            pthread_mutex_lock(&b->lock);
            if (!b->down)
                IMP_LOG(&b->log, IMP_LOG_WARN,
                        "world store: redis at %s:%d did not answer within %d ms; backing off",
                        b->host, b->port, IMP_REDIS_TIMEOUT_MS);
            b->down = 1;
            back_off(b);
            pthread_mutex_unlock(&b->lock);
        }
        if (!retry) return NULL;
    }
    return NULL;
}

static imp_world_io redis_key_call(redis_backend *b, const char *cmd, const char *id,
                                   const char *bytes, size_t len, const char *opt, redisReply **out,
                                   imp_world_err *err) {
    char key[sizeof KEY_PREFIX + IMP_WORLD_ID_LEN];
    snprintf(key, sizeof key, "%s%s", KEY_PREFIX, id);
    const char *argv[4] = {cmd, key, bytes, opt};
    size_t lens[4] = {strlen(cmd), strlen(key), len, opt ? strlen(opt) : 0};
    int argc = bytes ? (opt ? 4 : 3) : 2;
    *out = redis_call(b, argc, argv, lens, err);
    return *out ? IMP_WORLD_IO_OK : IMP_WORLD_IO_UNAVAILABLE;
}

static imp_world_io redis_fetch(void *self, const char *id, char **bytes, size_t *len,
                                imp_world_err *err) {
    redis_backend *b = self;
    redisReply *r;
    if (redis_key_call(b, "GET", id, NULL, 0, NULL, &r, err)) return IMP_WORLD_IO_UNAVAILABLE;
    imp_world_io io = IMP_WORLD_IO_UNAVAILABLE;
    if (r->type == REDIS_REPLY_NIL) {
        io = IMP_WORLD_IO_MISSING;
    } else if (r->type != REDIS_REPLY_STRING) {
        *err = IMP_WORLD_ERR_IO;
    } else if (!matches(id, r->str, r->len)) {
        IMP_LOG(&b->log, IMP_LOG_WARN,
                "world store: redis key %s%s does not hash to its id; ignored", KEY_PREFIX, id);
        *err = IMP_WORLD_ERR_CORRUPT;
        io = IMP_WORLD_IO_MISSING;
    } else if ((*bytes = malloc(r->len + 1))) {
        memcpy(*bytes, r->str, r->len);
        (*bytes)[r->len] = '\0';
        *len = r->len;
        io = IMP_WORLD_IO_OK;
    } else {
        *err = IMP_WORLD_ERR_IO;
    }
    freeReplyObject(r);
    return io;
}

static imp_world_io redis_store(void *self, const char *id, const char *bytes, size_t len,
                                imp_world_err *err) {
    redisReply *r;
    if (redis_key_call(self, "SET", id, bytes, len, "NX", &r, err)) return IMP_WORLD_IO_UNAVAILABLE;
    imp_world_io io = r->type == REDIS_REPLY_STATUS ? IMP_WORLD_IO_OK
                      : r->type == REDIS_REPLY_NIL  ? IMP_WORLD_IO_EXISTS
                                                    : IMP_WORLD_IO_UNAVAILABLE;
    if (io == IMP_WORLD_IO_UNAVAILABLE) *err = IMP_WORLD_ERR_IO;
    freeReplyObject(r);
    return io;
}

/* EXISTS and DEL: an integer, 1 when the key was there. */
static imp_world_io redis_int(void *self, const char *cmd, const char *id, imp_world_err *err) {
    redisReply *r;
    if (redis_key_call(self, cmd, id, NULL, 0, NULL, &r, err)) return IMP_WORLD_IO_UNAVAILABLE;
    imp_world_io io = r->type != REDIS_REPLY_INTEGER ? IMP_WORLD_IO_UNAVAILABLE
                      : r->integer > 0               ? IMP_WORLD_IO_OK
                                                     : IMP_WORLD_IO_MISSING;
    if (io == IMP_WORLD_IO_UNAVAILABLE) *err = IMP_WORLD_ERR_IO;
    freeReplyObject(r);
    return io;
}

static imp_world_io redis_exists(void *self, const char *id, imp_world_err *err) {
    return redis_int(self, "EXISTS", id, err);
}

static imp_world_io redis_remove(void *self, const char *id, imp_world_err *err) {
    return redis_int(self, "DEL", id, err);
}

static void redis_destroy(void *self) {
    redis_backend *b = self;
    for (int i = 0; i < b->n_idle; ++i)
        redisFree(b->idle[i]);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

/* "host:port[/db]" after redis:// */
static int redis_open(const char *rest, const imp_logger *log, imp_world_backend *be, char *why,
                      size_t cap) {
    redis_backend *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    const char *colon = strrchr(rest, ':');
    size_t hlen = colon ? (size_t)(colon - rest) : 0;
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : 0;
    long db = 0;
    if (end && *end == '/') db = strtol(end + 1, &end, 10);
    if (!colon || hlen == 0 || hlen >= sizeof b->host || !end || *end || port < 1 || port > 65535 ||
        db < 0 || db > 1000000 || end == colon + 1) {
        free(b);
        snprintf(why, cap, "redis://host:port[/db] expected");
        return -1;
    }
    memcpy(b->host, rest, hlen);
    b->host[hlen] = '\0';
    b->port = (int)port;
    b->db = (int)db;
    if (log) b->log = *log;
    pthread_mutex_init(&b->lock, NULL);
    b->backoff_ms = IMP_REDIS_BACKOFF_FIRST_MS;
    *be = (imp_world_backend){
        "redis", redis_fetch, redis_store, redis_exists, redis_remove, redis_destroy, b};
    return 0;
}

int imp_world_backend_open(const char *spec, const imp_logger *log, imp_world_backend *out,
                           char *why, size_t cap) {
    memset(out, 0, sizeof *out);
    if (strcmp(spec, "memory") == 0) return 0;
    if (strncmp(spec, "dir:", 4) == 0) return dir_open(spec + 4, log, out, why, cap);
    if (strncmp(spec, "redis://", 8) == 0) return redis_open(spec + 8, log, out, why, cap);
    snprintf(why, cap, "\"%.64s\" is not memory, dir:/path or redis://host:port[/db]", spec);
    return -1;
}

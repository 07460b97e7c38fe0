/*
 * redis.h - integration-test helpers: a real redis-server on a loopback
 * port, started and stopped by pid, and the few commands the tests send it
 * (over a plain socket: the tests link no Redis client).
 *
 * The server keeps its data in a temporary directory, with the append-only
 * file flushed at every write, so a SIGKILL loses nothing and a restart on
 * the same directory comes back with the same worlds; imp_test_redis_wipe
 * removes the data for a restart that comes back empty.
 */
#ifndef IMP_TEST_REDIS_H
#define IMP_TEST_REDIS_H

#include <sys/types.h>

typedef struct imp_test_redis {
    pid_t pid; /* 0 while stopped */
    unsigned port;
    char dir[64]; /* its data directory (removed by imp_test_redis_cleanup) */
    char url[64]; /* "redis://127.0.0.1:<port>" */
} imp_test_redis;

/* 1 when redis-server is installed (make deps-test installs it). */
int imp_test_redis_available(void);

/* Starts redis-server on a free port of 127.0.0.1 with a new data directory; waits until
 * it answers PING. 0, or -1 with a message on stderr. */
int imp_test_redis_start(imp_test_redis *r);
/* Starts it again on the same port and directory (after a stop). */
int imp_test_redis_restart(imp_test_redis *r);
/* Sends `sig` (SIGKILL: it dies at once) and reaps it. */
void imp_test_redis_stop(imp_test_redis *r, int sig);
/* Removes the data files (while stopped): the next restart comes back empty. */
void imp_test_redis_wipe(imp_test_redis *r);
/* Stops it if running and removes its directory. */
void imp_test_redis_cleanup(imp_test_redis *r);

/* The number of keys (DBSIZE), or -1 when the server does not answer. */
long imp_test_redis_dbsize(const imp_test_redis *r);

/* A free TCP port on 127.0.0.1 (the kernel's choice, released at once). */
unsigned imp_test_free_port(void);

#endif

/*
 * redis.c - a real redis-server for the integration tests (see redis.h).
 */
#include "redis.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"

#define REDIS_BIN "/usr/bin/redis-server"
#define REDIS_START_TIMEOUT_S 10

int imp_test_redis_available(void) { return access(REDIS_BIN, X_OK) == 0; }

unsigned imp_test_free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    unsigned port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

/* One command in the inline protocol; the first line of the reply into out. 0 or -1. */
static int command(unsigned port, const char *cmd, char *out, size_t cap) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct timeval tv = {1, 0};
    int ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
             connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    size_t n = strlen(cmd), got = 0;
    ok = ok && write(fd, cmd, n) == (ssize_t)n && write(fd, "\r\n", 2) == 2;
    while (ok && got + 1 < cap) {
        ssize_t r = read(fd, out + got, 1);
        if (r <= 0) {
            ok = 0;
            break;
        }
        if (out[got] == '\n') break;
        got++;
    }
    if (fd >= 0) close(fd);
    if (!ok) return -1;
    out[got] = '\0';
    if (got && out[got - 1] == '\r') out[got - 1] = '\0';
    return 0;
}

long imp_test_redis_dbsize(const imp_test_redis *r) {
    char line[64];
    if (command(r->port, "DBSIZE", line, sizeof line) || line[0] != ':') return -1;
    return atol(line + 1);
}

static int launch(imp_test_redis *r) {
    char port[16];
    snprintf(port, sizeof port, "%u", r->port);
    r->pid = fork();
    if (r->pid == 0) {
        int null = open("/dev/null", 1);
        if (null >= 0) dup2(null, 1);
        execl(REDIS_BIN, REDIS_BIN, "--port", port, "--bind", "127.0.0.1", "--dir", r->dir,
              "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--daemonize", "no",
              "--protected-mode", "yes", (char *)NULL);
        _exit(127);
    }
    if (r->pid < 0) {
        r->pid = 0;
        return -1;
    }
    double t0 = imp_test_now_s();
    char line[64];
    while (imp_test_now_s() - t0 < REDIS_START_TIMEOUT_S) {
        if (command(r->port, "PING", line, sizeof line) == 0 && strcmp(line, "+PONG") == 0)
            return 0;
        if (waitpid(r->pid, NULL, WNOHANG) == r->pid) {
            r->pid = 0;
            fprintf(stderr, "redis-server exited at start (port %u)\n", r->port);
            return -1;
        }
        imp_test_sleep_ms(20);
    }
    fprintf(stderr, "redis-server did not answer within %d s\n", REDIS_START_TIMEOUT_S);
    imp_test_redis_stop(r, SIGKILL);
    return -1;
}

int imp_test_redis_start(imp_test_redis *r) {
    memset(r, 0, sizeof *r);
    if (!imp_test_redis_available()) {
        fprintf(stderr, "redis-server is not installed: `make deps-test` installs it\n");
        return -1;
    }
    snprintf(r->dir, sizeof r->dir, "/tmp/impactd-redis.XXXXXX");
    if (!mkdtemp(r->dir)) return -1;
    for (int attempt = 0; attempt < 3; ++attempt) {
        r->port = imp_test_free_port();
        snprintf(r->url, sizeof r->url, "redis://127.0.0.1:%u", r->port);
        if (launch(r) == 0) return 0;
    }
    return -1;
}

int imp_test_redis_restart(imp_test_redis *r) { return r->pid ? 0 : launch(r); }

void imp_test_redis_stop(imp_test_redis *r, int sig) {
    if (!r->pid) return;
    kill(r->pid, sig);
    waitpid(r->pid, NULL, 0);
    r->pid = 0;
}

void imp_test_redis_wipe(imp_test_redis *r) {
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'/* '%s'/appendonlydir", r->dir, r->dir);
    if (system(cmd) != 0) fprintf(stderr, "could not empty %s\n", r->dir);
}

void imp_test_redis_cleanup(imp_test_redis *r) {
    imp_test_redis_stop(r, SIGTERM);
    if (!r->dir[0]) return;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", r->dir);
    r->dir[0] = '\0';
}

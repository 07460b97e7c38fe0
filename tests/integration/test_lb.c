/*
 * test_lb.c - three replicas behind a real nginx configured from
 * docker/nginx.conf, under load, while one replica is killed and another
 * drains, all sharing one real Redis for worlds.
 *
 * DESIGN
 * What: the deployment of docker/compose.yaml without a Docker engine.
 * Three daemons on loopback ports, nginx (the Debian package; `make test`
 * installs it) running docker/nginx.conf with only the upstream addresses
 * and the listen port substituted. Client threads post /v1/toi and small
 * /v1/scenes/predict requests through nginx without pause; during the load
 * one replica gets SIGKILL and another SIGTERM (it drains: grace, listener
 * closed, in-flight work finished, exit 0). Every client request must come
 * back 200 with the right answer: nginx's retries (error, timeout, 502,
 * 503, non_idempotent) and passive health checks are what the test proves.
 * The replicas share a redis-server started here on a loopback port
 * (--world-store redis://): a world uploaded through nginx is queried on
 * each replica directly, world raycasts are part of the load, and after the
 * kill and the drain Redis is killed too while the load goes on: the
 * surviving replica answers from its cache, so no query fails.
 * How: nginx runs in the foreground (daemon off) from a temporary prefix
 * with its pid and error log there; everything started is stopped and
 * reaped at the end, also when an assertion fails (teardown).
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/integration/daemon.h"
#include "tests/integration/redis.h"

#define REPLICAS 3
#define CLIENTS 4
/* Timeline of the load (seconds from its start). */
#define KILL_AT_S 1.5
#define TERM_AT_S 3.0
#define LOAD_S 7.0
/* After the drain: Redis is killed, and the load goes on this long (s). */
#define NO_REDIS_LOAD_S 1.5
/* The draining replica's grace period (s): it keeps serving this long. */
#define DRAIN_GRACE "1"
#define NGINX_CONF "docker/nginx.conf"
#define NGINX_START_TIMEOUT_S 10

#define TOI_BODY                                                                                   \
    "{\"a\":{\"radius\":0.5,\"position\":[0,0],\"velocity\":[1,0]},"                               \
    "\"b\":{\"radius\":0.5,\"position\":[3,0],\"velocity\":[-1,0]}}"
#define SCENE_BODY                                                                                 \
    "{\"horizon\":10,\"bodies\":[{\"radius\":0.5,\"position\":[0,0],\"velocity\":[1,0]},"          \
    "{\"radius\":0.5,\"position\":[3,0],\"velocity\":[-1,0]},{\"radius\":1,\"position\":[50,0]}]}"

/* A floor whose top is at y = 1: a ray down from y = 50 hits it at t = 49. */
#define WORLD_BODY                                                                                 \
    "{\"colliders\":[{\"id\":\"floor\",\"shape\":{\"type\":\"box\",\"half_extents\":[20,1,20]},"   \
    "\"position\":[0,0,0]}]}"
#define RAY_BODY "{\"rays\":[{\"origin\":[0,50,0],\"direction\":[0,-1,0]}]}"

typedef struct client {
    pthread_t thread;
    const char *base; /* http://127.0.0.1:<nginx port> */
    _Atomic int *stop;
    int worlds_only;
    long ok, bad;
    char first_bad[200];
} client;

static struct {
    imp_test_daemon d[REPLICAS];
    int running[REPLICAS];
    pid_t nginx;
    char prefix[64];
    unsigned port;
    imp_test_redis redis;
    char world_id[65];
} lb;

static const char *nginx_bin(void) {
    static const char *const paths[] = {"/usr/sbin/nginx", "/usr/bin/nginx"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; ++i)
        if (access(paths[i], X_OK) == 0) return paths[i];
    return NULL;
}

/* docker/nginx.conf with `server impactd-N:8080` -> the replicas' loopback
 * addresses and `listen 8080;` -> 127.0.0.1:port; nothing else changes.
 * Returns the number of substitutions, or -1. */
static int write_conf(const char *path, unsigned port) {
    FILE *in = fopen(NGINX_CONF, "r"), *out = fopen(path, "w");
    if (!in || !out) {
        if (in) fclose(in);
        if (out) fclose(out);
        return -1;
    }
    char line[512];
    int subs = 0;
    while (fgets(line, sizeof line, in)) {
        char *srv = strstr(line, "server impactd-");
        char *lis = strstr(line, "listen 8080;");
        if (srv) {
            int k = atoi(srv + strlen("server impactd-")) - 1;
            char *rest = strstr(srv, ":8080");
            if (k < 0 || k >= REPLICAS || !rest) break;
            fprintf(out, "%.*sserver 127.0.0.1:%u%s", (int)(srv - line), line, lb.d[k].port,
                    rest + strlen(":8080"));
            ++subs;
        } else if (lis) {
            fprintf(out, "%.*slisten 127.0.0.1:%u;%s", (int)(lis - line), line, port,
                    lis + strlen("listen 8080;"));
            ++subs;
        } else {
            fputs(line, out);
        }
    }
    fclose(in);
    return fclose(out) == 0 ? subs : -1;
}

/* 1 when something accepts connections on 127.0.0.1:port. */
static int port_open(unsigned port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int open = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0) close(fd);
    return open;
}

static int get_status(const char *url) {
    imp_http_result r;
    int status = imp_http(NULL, "GET", url, NULL, NULL, 0, &r) == 0 ? (int)r.status : 0;
    imp_http_result_free(&r);
    return status;
}

static int start_nginx(void) {
    const char *bin = nginx_bin();
    if (!bin) {
        print_error("nginx is not installed: `make test` (or `make deps-test`) installs it\n");
        return -1;
    }
    snprintf(lb.prefix, sizeof lb.prefix, "/tmp/impactd-lb.XXXXXX");
    if (!mkdtemp(lb.prefix)) return -1;
    lb.port = imp_test_free_port();
    char conf[128], globals[512];
    snprintf(conf, sizeof conf, "%s/nginx.conf", lb.prefix);
    if (write_conf(conf, lb.port) != REPLICAS + 1) {
        print_error("%s: expected %d upstream servers and one listen 8080\n", NGINX_CONF, REPLICAS);
        return -1;
    }
    snprintf(globals, sizeof globals, "daemon off; pid %s/nginx.pid; error_log %s/error.log;",
             lb.prefix, lb.prefix);
    char prefix_arg[80];
    snprintf(prefix_arg, sizeof prefix_arg, "%s/", lb.prefix);
    lb.nginx = fork();
    if (lb.nginx == 0) {
        execl(bin, bin, "-p", prefix_arg, "-c", conf, "-g", globals, (char *)NULL);
        _exit(127);
    }
    if (lb.nginx < 0) return -1;
    char url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/healthz", lb.port);
    double t0 = imp_test_now_s();
    while (imp_test_now_s() - t0 < NGINX_START_TIMEOUT_S) {
        if (port_open(lb.port) && get_status(url) == 200) return 0;
        if (waitpid(lb.nginx, NULL, WNOHANG) == lb.nginx) {
            lb.nginx = 0;
            print_error("nginx exited at start; see %s/error.log\n", lb.prefix);
            return -1;
        }
        imp_test_sleep_ms(20);
    }
    print_error("nginx did not answer within %d s\n", NGINX_START_TIMEOUT_S);
    return -1;
}

static void remove_prefix(void) {
    if (!lb.prefix[0]) return;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", lb.prefix);
    if (system(cmd) != 0) print_error("could not remove %s\n", lb.prefix);
    lb.prefix[0] = '\0';
}

static int setup(void **state) {
    (void)state;
    memset(&lb, 0, sizeof lb);
    if (imp_test_redis_start(&lb.redis)) return -1;
    const char *const args[] = {
        "--threads",  "2", "--io-threads", "1", "--drain-grace-s", DRAIN_GRACE, "--world-store",
        lb.redis.url, NULL};
    for (int k = 0; k < REPLICAS; ++k) {
        if (imp_test_daemon_start(&lb.d[k], args, NULL, 0) != 0) return -1;
        lb.running[k] = 1;
    }
    return start_nginx();
}

static int teardown(void **state) {
    (void)state;
    if (lb.nginx > 0) {
        kill(lb.nginx, SIGTERM); /* fast shutdown; the master stops its workers */
        waitpid(lb.nginx, NULL, 0);
        lb.nginx = 0;
    }
    for (int k = 0; k < REPLICAS; ++k)
        if (lb.running[k]) (void)imp_test_daemon_stop(&lb.d[k], SIGINT); /* drains without grace */
    imp_test_redis_cleanup(&lb.redis);
    remove_prefix();
    return 0;
}

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static size_t on_data(char *d, size_t size, size_t n, void *ud) {
    buf *b = ud;
    return imp_test_buf_append(&b->p, &b->len, &b->cap, d, size * n) == 0 ? size * n : 0;
}

static void note_bad(client *c, const char *fmt, ...) {
    c->bad++;
    if (c->first_bad[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->first_bad, sizeof c->first_bad, fmt, ap);
    va_end(ap);
}

typedef enum kind { KIND_TOI, KIND_SCENE, KIND_WORLD } kind;

/* One request through nginx; the answer must be exactly right. */
static void one_request(client *c, CURL *h, kind k) {
    char url[192];
    if (k == KIND_WORLD)
        snprintf(url, sizeof url, "%s/v1/worlds/%s/raycast", c->base, lb.world_id);
    else
        snprintf(url, sizeof url, "%s%s", c->base,
                 k == KIND_SCENE ? "/v1/scenes/predict" : "/v1/toi");
    const char *body = k == KIND_WORLD ? RAY_BODY : k == KIND_SCENE ? SCENE_BODY : TOI_BODY;
    buf b = {0};
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    CURLcode rc = curl_easy_perform(h);
    curl_slist_free_all(hdr);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    const char *text = b.p ? b.p : "";
    /* the head-on pair touches at exactly t = 1 in both requests; the ray at t = 49 */
    const char *expect = k == KIND_WORLD   ? "\"hit\":true,\"t\":49.0,"
                         : k == KIND_SCENE ? "\"collisions\":[{\"a\":0,\"b\":1,\"time\":1.0,"
                                           : "\"time\":1.0,";
    if (rc != CURLE_OK)
        note_bad(c, "transport error: %s", curl_easy_strerror(rc));
    else if (status != 200 || !strstr(text, expect))
        note_bad(c, "status %ld body %.120s", status, text);
    else
        c->ok++;
    free(b.p);
}

static void *client_main(void *arg) {
    client *c = arg;
    CURL *h = curl_easy_init();
    for (long i = 0; h && !*c->stop; ++i)
        one_request(c, h,
                    c->worlds_only ? KIND_WORLD
                    : i % 8 == 7   ? KIND_SCENE
                    : i % 8 == 3   ? KIND_WORLD
                                   : KIND_TOI);
    if (h)
        curl_easy_cleanup(h);
    else
        note_bad(c, "curl_easy_init failed");
    return NULL;
}

/* /v1/toi requests one replica has answered (all codes), from its /metrics:
 * lines `impactd_http_requests_total{route="/v1/toi",code="200"} 123`. */
static long served_by(const imp_test_daemon *d) {
    char url[128];
    snprintf(url, sizeof url, "%s/metrics", d->url);
    imp_http_result r;
    long total = 0;
    if (imp_http(NULL, "GET", url, NULL, NULL, 0, &r) == 0 && r.body) {
        for (char *line = strtok(r.body, "\n"); line; line = strtok(NULL, "\n")) {
            char *value = strrchr(line, ' ');
            if (strncmp(line, "impactd_http_requests_total{", 28) == 0 &&
                strstr(line, "route=\"/v1/toi\"") && value)
                total += atol(value + 1);
        }
    }
    imp_http_result_free(&r);
    return total;
}

static void test_kill_and_drain_behind_nginx(void **state) {
    (void)state;
    if (imp_test_under_valgrind()) {
        print_message("skipped under valgrind: its verdict depends on timing\n");
        skip();
    }
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%u", lb.port);

    /* a world uploaded through nginx is answered by every replica */
    char url[192];
    snprintf(url, sizeof url, "%s/v1/worlds", base);
    imp_http_result r;
    assert_int_equal(
        imp_http(NULL, "POST", url, "application/json", WORLD_BODY, strlen(WORLD_BODY), &r), 0);
    assert_int_equal(r.status, 201);
    const char *id = strstr(r.body, "\"id\":\"");
    assert_non_null(id);
    snprintf(lb.world_id, sizeof lb.world_id, "%.64s", id + 6);
    imp_http_result_free(&r);
    for (int k = 0; k < REPLICAS; ++k) {
        snprintf(url, sizeof url, "%s/v1/worlds/%s/raycast", lb.d[k].url, lb.world_id);
        assert_int_equal(
            imp_http(NULL, "POST", url, "application/json", RAY_BODY, strlen(RAY_BODY), &r), 0);
        assert_int_equal(r.status, 200);
        assert_non_null(strstr(r.body, "\"hit\":true,\"t\":49.0,"));
        imp_http_result_free(&r);
    }
    _Atomic int stop = 0;
    client clients[CLIENTS];
    for (int i = 0; i < CLIENTS; ++i) {
        clients[i] = (client){.base = base, .stop = &stop};
        assert_int_equal(pthread_create(&clients[i].thread, NULL, client_main, &clients[i]), 0);
    }
    double t0 = imp_test_now_s();
    while (imp_test_now_s() - t0 < KILL_AT_S)
        imp_test_sleep_ms(10);
    long before_kill = 0;
    for (int k = 0; k < REPLICAS; ++k)
        before_kill += served_by(&lb.d[k]) > 0;
    kill(lb.d[0].pid, SIGKILL); /* replica 1 dies mid-load */

    while (imp_test_now_s() - t0 < TERM_AT_S)
        imp_test_sleep_ms(10);
    kill(lb.d[1].pid, SIGTERM); /* replica 2 drains mid-load */
    long served_c_at_term = served_by(&lb.d[2]);

    while (imp_test_now_s() - t0 < LOAD_S)
        imp_test_sleep_ms(10);
    stop = 1;
    for (int i = 0; i < CLIENTS; ++i)
        pthread_join(clients[i].thread, NULL);
    long served_c_end = served_by(&lb.d[2]);

    /* the killed replica is reaped; the drained one exited by itself, with 0 */
    int killed_status = imp_test_daemon_stop(&lb.d[0], SIGKILL);
    lb.running[0] = 0;
    int drained_status = imp_test_daemon_stop(&lb.d[1], SIGTERM);
    lb.running[1] = 0;

    long ok = 0, bad = 0;
    for (int i = 0; i < CLIENTS; ++i) {
        ok += clients[i].ok;
        bad += clients[i].bad;
        if (clients[i].bad)
            print_error("client %d: %ld bad, first: %s\n", i, clients[i].bad, clients[i].first_bad);
    }

    print_message("through nginx: %ld ok, %ld failed; replicas serving before the kill: %ld; "
                  "the survivor served %ld after the drain began\n",
                  ok, bad, before_kill, served_c_end - served_c_at_term);
    assert_int_equal(bad, 0);
    assert_true(ok > 100);
    assert_int_equal(before_kill, REPLICAS);      /* nginx spread the load */
    assert_true(served_c_end > served_c_at_term); /* and the survivor took it over */
    assert_int_equal(killed_status, -1);          /* died of the signal */
    assert_int_equal(drained_status, 0);          /* drained cleanly */

    /* Redis dies: the survivor answers world queries from its cache, none fails */
    imp_test_redis_stop(&lb.redis, SIGKILL);
    stop = 0;
    for (int i = 0; i < CLIENTS; ++i) {
        clients[i] = (client){.base = base, .stop = &stop, .worlds_only = 1};
        assert_int_equal(pthread_create(&clients[i].thread, NULL, client_main, &clients[i]), 0);
    }
    t0 = imp_test_now_s();
    while (imp_test_now_s() - t0 < NO_REDIS_LOAD_S)
        imp_test_sleep_ms(10);
    stop = 1;
    long ok_no_redis = 0, bad_no_redis = 0;
    for (int i = 0; i < CLIENTS; ++i) {
        pthread_join(clients[i].thread, NULL);
        ok_no_redis += clients[i].ok;
        bad_no_redis += clients[i].bad;
        if (clients[i].bad)
            print_error("client %d without Redis: %ld bad, first: %s\n", i, clients[i].bad,
                        clients[i].first_bad);
    }
    print_message("world queries with Redis killed: %ld ok, %ld failed\n", ok_no_redis,
                  bad_no_redis);
    assert_int_equal(bad_no_redis, 0);
    assert_true(ok_no_redis > 50);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_and_drain_behind_nginx),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}

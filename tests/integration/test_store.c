/*
 * test_store.c - the shared world store over HTTP: replicas sharing a real
 * redis-server (started here on a loopback port and stopped by pid), and
 * the dir: store across a restart.
 *
 * Redis: an upload on one replica is queried on another; the write token
 * (401 with WWW-Authenticate: Bearer without it or with a wrong one; queries
 * need none); uploads of one world from two replicas at once leave one key;
 * with Redis killed, worlds a replica has cached keep answering, an
 * uncached world is 503 world-store-unavailable with Retry-After within a
 * second, /healthz stays 200; when Redis returns the replicas recover
 * without a restart; Redis restarted empty gives 404 until the world is
 * uploaded again; a replica killed in the middle of an upload leaves no
 * partial world. dir: the world survives a restart, a file whose hash is
 * not its name is ignored with a log line, a temporary file of an
 * interrupted write is removed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "redis.h"
#include "tests/sha256sum.h"

#define TOKEN "s3cret-token-for-tests"
#define REPLICAS 2

static imp_test_redis redis_;
static imp_test_daemon d_[REPLICAS];
static int running_[REPLICAS];
/* A daemon one test starts beside the replicas; teardown stops it if an assertion left it
 * running. */
static imp_test_daemon extra_;
static int extra_running_;

static int start_extra(const char *const *args, int capture_stderr) {
    int rc = imp_test_daemon_start(&extra_, args, NULL, capture_stderr);
    extra_running_ = rc == 0;
    return rc;
}

static int stop_extra(void) {
    extra_running_ = 0;
    return imp_test_daemon_stop(&extra_, SIGTERM);
}
static char token_file_[96];

static const char *const *replica_args(void) {
    static char store[80];
    static const char *args[] = {"--world-store", store,       "--world-write-token-file",
                                 token_file_,     "--threads", "2",
                                 "--io-threads",  "1",         NULL};
    snprintf(store, sizeof store, "%s", redis_.url);
    return args;
}

static int start_replica(imp_test_daemon *d) {
    return imp_test_daemon_start(d, replica_args(), NULL, 0);
}

static int setup(void **state) {
    (void)state;
    if (imp_test_redis_start(&redis_)) return -1;
    snprintf(token_file_, sizeof token_file_, "/tmp/impactd-token.%ld", (long)getpid());
    FILE *f = fopen(token_file_, "w");
    if (!f) return -1;
    fputs(TOKEN "\n", f);
    fclose(f);
    for (int k = 0; k < REPLICAS; ++k) {
        if (start_replica(&d_[k])) return -1;
        running_[k] = 1;
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    int status = 0;
    if (extra_running_) {
        (void)stop_extra();
        free(imp_test_daemon_read_stderr(&extra_));
    }
    for (int k = 0; k < REPLICAS; ++k)
        if (running_[k] && imp_test_daemon_stop(&d_[k], SIGTERM) != 0) status = -1;
    imp_test_redis_cleanup(&redis_);
    unlink(token_file_);
    return status;
}

/* A floor box whose top is at y = k + 1: a ray down from y = 50 hits it at t = 49 - k. */
static char *floor_world(int k) {
    char *w = malloc(160);
    snprintf(w, 160,
             "{\"colliders\": [{\"id\": \"floor-%d\", \"shape\": {\"type\": \"box\", "
             "\"half_extents\": [10, 1, 10]}, \"position\": [0, %d, 0]}]}",
             k, k);
    return w;
}

static void id_of(const char *w, char id[65]) {
    assert_int_equal(imp_test_sha256sum(w, strlen(w), id), 0);
}

static void request(const imp_test_daemon *d, const char *method, const char *path,
                    const char *token, const char *body, imp_http_result *r) {
    char url[256], auth[128];
    snprintf(url, sizeof url, "%s%s", d->url, path);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token ? token : "");
    const char *headers[] = {auth, NULL};
    assert_int_equal(
        imp_http_with(method, url, token ? headers : NULL, body, body ? strlen(body) : 0, 0, r), 0);
}

static long upload(const imp_test_daemon *d, const char *w, const char *token, char id[65]) {
    imp_http_result r;
    request(d, "POST", "/v1/worlds", token, w, &r);
    long status = r.status;
    if (status == 200 || status == 201) {
        json_t *doc = json_loads(r.body, 0, NULL);
        assert_non_null(doc);
        snprintf(id, 65, "%s", json_string_value(json_object_get(doc, "id")));
        json_decref(doc);
    }
    imp_http_result_free(&r);
    return status;
}

/* A ray down from (0, 50, 0) at world `id`: the status, and t when it hit (else -1). */
static long ray_down(const imp_test_daemon *d, const char *id, double *t, imp_http_result *keep) {
    char path[128];
    snprintf(path, sizeof path, "/v1/worlds/%s/raycast", id);
    imp_http_result r;
    request(d, "POST", path, NULL,
            "{\"rays\": [{\"origin\": [0, 50, 0], \"direction\": [0, -1, 0]}]}", &r);
    *t = -1;
    if (r.status == 200) {
        json_t *doc = json_loads(r.body, 0, NULL);
        assert_non_null(doc);
        json_t *hit = json_array_get(json_object_get(doc, "hits"), 0);
        if (json_is_true(json_object_get(hit, "hit")))
            *t = json_number_value(json_object_get(hit, "t"));
        json_decref(doc);
    }
    long status = r.status;
    if (keep)
        *keep = r;
    else
        imp_http_result_free(&r);
    return status;
}

static long head(const imp_test_daemon *d, const char *id) {
    char path[128];
    snprintf(path, sizeof path, "/v1/worlds/%s", id);
    imp_http_result r;
    request(d, "HEAD", path, NULL, NULL, &r);
    long status = r.status;
    imp_http_result_free(&r);
    return status;
}

static void expect_type(const imp_http_result *r, const char *type) {
    json_t *doc = json_loads(r->body, 0, NULL);
    if (!doc) fail_msg("not JSON: %s", r->body);
    assert_string_equal(json_string_value(json_object_get(doc, "type")), type);
    json_decref(doc);
    assert_string_equal(r->content_type, "application/problem+json");
}

/* The value of an unlabelled or fully labelled series in /metrics, or -1. */
static double metric(const imp_test_daemon *d, const char *series) {
    imp_http_result r;
    request(d, "GET", "/metrics", NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    double v = -1;
    size_t n = strlen(series);
    for (const char *p = r.body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, series, n) == 0 && p[n] == ' ') {
            v = atof(p + n + 1);
            break;
        }
    imp_http_result_free(&r);
    return v;
}

/* ---- one world, two replicas, the token ----------------------------------------------- */

static void test_upload_on_one_query_on_another(void **state) {
    (void)state;
    char *w = floor_world(0);
    char want[65], id[65] = "";
    id_of(w, want);
    long keys = imp_test_redis_dbsize(&redis_);

    /* writes need the token; the reply never carries it */
    imp_http_result r;
    request(&d_[0], "POST", "/v1/worlds", NULL, w, &r);
    assert_int_equal(r.status, 401);
    assert_string_equal(r.www_authenticate, "Bearer");
    expect_type(&r, "unauthorized");
    imp_http_result_free(&r);
    request(&d_[0], "POST", "/v1/worlds", "s3cret-token-for-test", w, &r);
    assert_int_equal(r.status, 401);
    assert_non_null(strstr(r.www_authenticate, "Bearer"));
    assert_null(strstr(r.body, "s3cret"));
    imp_http_result_free(&r);
    assert_int_equal(imp_test_redis_dbsize(&redis_), keys);

    assert_int_equal(upload(&d_[0], w, TOKEN, id), 201);
    assert_string_equal(id, want);
    assert_int_equal(imp_test_redis_dbsize(&redis_), keys + 1);
    /* the same world uploaded on the other replica: 200, the same id, still one key */
    assert_int_equal(upload(&d_[1], w, TOKEN, id), 200);
    assert_string_equal(id, want);
    assert_int_equal(imp_test_redis_dbsize(&redis_), keys + 1);

    /* queries need no token; replica 2 fetched nothing yet for queries, replica 1 built it */
    double t;
    assert_int_equal(ray_down(&d_[1], want, &t, NULL), 200);
    assert_true(t == 49.0);
    assert_int_equal(ray_down(&d_[0], want, &t, NULL), 200);
    assert_true(t == 49.0);
    assert_int_equal(head(&d_[1], want), 200);
    /* replica 2 built it for its upload (one build, cached), then answered from its cache */
    assert_true(metric(&d_[1], "impactd_world_build_seconds_count") == 1);
    assert_true(metric(&d_[1], "impactd_world_cache_hits_total") >= 2);
    assert_true(metric(&d_[1], "impactd_world_cache_worlds") == 1);
    assert_true(metric(&d_[1], "impactd_world_cache_bytes") > 0);

    /* delete: token required; then gone from the store for every replica */
    char path[128];
    snprintf(path, sizeof path, "/v1/worlds/%s", want);
    request(&d_[1], "DELETE", path, NULL, NULL, &r);
    assert_int_equal(r.status, 401);
    imp_http_result_free(&r);
    request(&d_[1], "DELETE", path, TOKEN, NULL, &r);
    assert_int_equal(r.status, 204);
    imp_http_result_free(&r);
    assert_int_equal(head(&d_[0], want), 404);
    assert_int_equal(imp_test_redis_dbsize(&redis_), keys);
    free(w);
}

typedef struct uploader {
    const imp_test_daemon *d;
    const char *w;
    long status;
    char id[65];
} uploader;

static void *upload_thread(void *arg) {
    uploader *u = arg;
    char url[128], auth[64];
    snprintf(url, sizeof url, "%s/v1/worlds", u->d->url);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", TOKEN);
    const char *headers[] = {auth, NULL};
    imp_http_result r;
    u->status = imp_http_with("POST", url, headers, u->w, strlen(u->w), 0, &r) == 0 ? r.status : 0;
    imp_http_result_free(&r);
    return NULL;
}

/* Six uploads of one new world at once through both replicas: one 201, the rest 200, one
 * key in Redis. */
static void test_concurrent_uploads_leave_one_copy(void **state) {
    (void)state;
    char *w = floor_world(1);
    long keys = imp_test_redis_dbsize(&redis_);
    enum { N = 6 };
    uploader u[N];
    pthread_t t[N];
    for (int i = 0; i < N; ++i) {
        u[i] = (uploader){&d_[i % REPLICAS], w, 0, ""};
        assert_int_equal(pthread_create(&t[i], NULL, upload_thread, &u[i]), 0);
    }
    int created = 0, ok = 0;
    for (int i = 0; i < N; ++i) {
        pthread_join(t[i], NULL);
        created += u[i].status == 201;
        ok += u[i].status == 200;
    }
    assert_int_equal(created, 1);
    assert_int_equal(ok, N - 1);
    assert_int_equal(imp_test_redis_dbsize(&redis_), keys + 1);
    free(w);
}

/* ---- Redis down, back, and back empty ------------------------------------------------- */

/* A ray at world `id` on d must be 503 world-store-unavailable with Retry-After: 1; the
 * seconds it took. */
static double unavailable(const imp_test_daemon *d, const char *id) {
    imp_http_result r;
    double t, t0 = imp_test_now_s();
    assert_int_equal(ray_down(d, id, &t, &r), 503);
    double took = imp_test_now_s() - t0;
    expect_type(&r, "world-store-unavailable");
    assert_string_equal(r.retry_after, "1");
    imp_http_result_free(&r);
    return took;
}

/* A request on d naming an uncached world in its "world": 503 world-store-unavailable at
 * /world with Retry-After: 1. */
static void unavailable_at_world(const imp_test_daemon *d, const char *path, const char *body) {
    imp_http_result r;
    request(d, "POST", path, NULL, body, &r);
    assert_int_equal(r.status, 503);
    expect_type(&r, "world-store-unavailable");
    assert_string_equal(r.retry_after, "1");
    assert_non_null(strstr(r.body, "\"pointer\":\"/world\""));
    imp_http_result_free(&r);
}

static void test_redis_outage(void **state) {
    (void)state;
    char *cached = floor_world(2), *uncached = floor_world(3);
    char cid[65], uid[65];
    assert_int_equal(upload(&d_[0], cached, TOKEN, cid), 201);
    assert_int_equal(upload(&d_[0], uncached, TOKEN, uid), 201);
    double t;
    assert_int_equal(ray_down(&d_[1], cid, &t, NULL), 200); /* replica 2 caches it */
    double errors_before = metric(&d_[1], "impactd_world_store_errors_total{kind=\"connect\"}");

    imp_test_redis_stop(&redis_, SIGKILL);
    for (int i = 0; i < 20; ++i) {
        assert_int_equal(ray_down(&d_[1], cid, &t, NULL), 200);
        assert_true(t == 47.0);
    }
    double worst = 0;
    for (int i = 0; i < 6; ++i) {
        double took = unavailable(&d_[1], uid);
        worst = took > worst ? took : worst;
        imp_test_sleep_ms(150); /* through the reconnect backoff's steps */
    }
    print_message("Redis down: uncached world 503 in %.1f ms at worst\n", worst * 1e3);
    assert_true(worst < 1.0 || imp_test_under_valgrind());
    assert_int_equal(head(&d_[1], uid), 503);
    assert_int_equal(head(&d_[1], cid), 200); /* cached: answered from the cache */
    /* a scene naming an uncached world: 503 too, at /world; a cached one answers */
    char scene[256];
    imp_http_result sr;
    snprintf(scene, sizeof scene,
             "{\"bodies\": [{\"radius\": 1, \"position\": [0, 10, 0], \"velocity\": [0, -1, "
             "0]}], \"horizon\": 20, \"world\": \"%s\"}",
             uid);
    unavailable_at_world(&d_[1], "/v1/scenes/predict", scene);
    memcpy(strstr(scene, uid), cid, 64);
    request(&d_[1], "POST", "/v1/scenes/predict", NULL, scene, &sr);
    assert_int_equal(sr.status, 200);
    /* the ball of radius 1 falls from y = 10 onto the floor's top at y = 3: t = 6 */
    assert_non_null(strstr(sr.body, "\"time\":6.0,"));
    imp_http_result_free(&sr);
    /* a move validated against an uncached world: 503 at /world as well */
    char move[256];
    snprintf(move, sizeof move,
             "{\"body\": {\"radius\": 1, \"position\": [0, 10, 0]}, \"to\": [0, 0, 0], "
             "\"dt\": 1, \"world\": \"%s\"}",
             uid);
    unavailable_at_world(&d_[1], "/v1/validate", move);
    for (int k = 0; k < REPLICAS; ++k) {
        imp_http_result r;
        request(&d_[k], "GET", "/healthz", NULL, NULL, &r);
        assert_int_equal(r.status, 200);
        imp_http_result_free(&r);
    }
    /* an upload cannot be stored: 503, not a world only this replica knows */
    char *fresh = floor_world(4), fid[65];
    assert_int_equal(upload(&d_[0], fresh, TOKEN, fid), 503);
    assert_true(metric(&d_[1], "impactd_world_store_errors_total{kind=\"connect\"}") >
                errors_before);

    /* Redis stopped (SIGSTOP: connections open, nothing answers): still no hang */
    assert_int_equal(imp_test_redis_restart(&redis_), 0);
    imp_test_sleep_ms(1100); /* past the longest backoff */
    kill(redis_.pid, SIGSTOP);
    worst = 0;
    for (int i = 0; i < 4; ++i) {
        assert_int_equal(ray_down(&d_[0], cid, &t, NULL), 200); /* replica 1 built it */
        assert_int_equal(ray_down(&d_[1], cid, &t, NULL), 200);
        double took = unavailable(&d_[1], uid);
        worst = took > worst ? took : worst;
    }
    print_message("Redis stopped: cached worlds 200, uncached 503, %.0f ms at worst\n",
                  worst * 1e3);
    assert_true(worst < 1.0 || imp_test_under_valgrind());
    kill(redis_.pid, SIGCONT);
    imp_test_redis_stop(&redis_, SIGKILL);

    /* Redis back with its data: the replicas reconnect by themselves */
    assert_int_equal(imp_test_redis_restart(&redis_), 0);
    double t0 = imp_test_now_s(), recovered = -1;
    while (imp_test_now_s() - t0 < 5) {
        if (ray_down(&d_[1], uid, &t, NULL) == 200) {
            recovered = imp_test_now_s() - t0;
            break;
        }
        imp_test_sleep_ms(50);
    }
    print_message("Redis back: queries recovered after %.0f ms\n", recovered * 1e3);
    assert_true(recovered >= 0 && (recovered < 2.0 || imp_test_under_valgrind()));
    assert_true(t == 46.0);

    /* Redis back empty: 404 until the client uploads again */
    imp_test_redis_stop(&redis_, SIGKILL);
    imp_test_redis_wipe(&redis_);
    assert_int_equal(imp_test_redis_restart(&redis_), 0);
    assert_int_equal(imp_test_redis_dbsize(&redis_), 0);
    imp_test_daemon *c = &extra_;
    assert_int_equal(start_extra(replica_args(), 0), 0);
    t0 = imp_test_now_s();
    while (head(&d_[0], uid) != 404 && imp_test_now_s() - t0 < 3)
        imp_test_sleep_ms(50);
    assert_int_equal(head(&d_[0], uid), 404);
    imp_http_result r;
    assert_int_equal(ray_down(c, uid, &t, &r), 404);
    expect_type(&r, "unknown-world");
    imp_http_result_free(&r);
    char again[65];
    assert_int_equal(upload(&d_[0], uncached, TOKEN, again), 201);
    assert_string_equal(again, uid);
    assert_int_equal(ray_down(c, uid, &t, NULL), 200);
    assert_true(t == 46.0);
    assert_int_equal(stop_extra(), 0);
    free(cached);
    free(uncached);
    free(fresh);
}

/* A heightfield of n x n points (2 (n-1)^2 triangles), a few hundred kilobytes of text. */
static char *terrain(int n, double *triangles) {
    imp_test_text t = {0};
    imp_test_printf(&t,
                    "{\"colliders\": [{\"id\": \"terrain\", \"shape\": {\"type\": "
                    "\"heightfield\", \"rows\": %d, \"cols\": %d, \"spacing\": [1, 1], "
                    "\"heights\": [",
                    n, n);
    for (int i = 0; i < n * n; ++i)
        imp_test_printf(&t, "%s%.3f", i ? "," : "", (double)((i * 7919) % 1000) / 1000.0);
    imp_test_printf(&t, "]}, \"position\": [0, 0, 0]}]}");
    *triangles = 2.0 * (n - 1) * (n - 1);
    return t.p;
}

/* ---- the cache of built worlds ------------------------------------------------------------ */

typedef struct querier {
    const imp_test_daemon *d;
    const char *id;
    long status;
    double t;
} querier;

static void *query_thread(void *arg) {
    querier *q = arg;
    q->status = ray_down(q->d, q->id, &q->t, NULL);
    return NULL;
}

/* A replica whose cache holds one small world: the least recently used goes, a world larger
 * than the cache is built for each request; queries for an uncached world at once share one
 * fetch and build. */
static void test_cache_on_a_small_replica(void **state) {
    (void)state;
    char *a = floor_world(7), *b = floor_world(8), ida[65], idb[65];
    assert_int_equal(upload(&d_[0], a, TOKEN, ida), 201);
    assert_int_equal(upload(&d_[0], b, TOKEN, idb), 201);
    double triangles;
    char *big = terrain(120, &triangles), idbig[65];
    assert_int_equal(upload(&d_[0], big, TOKEN, idbig), 201);

    static char store[80];
    snprintf(store, sizeof store, "%s", redis_.url);
    const char *const args[] = {"--world-store", store, "--world-cache-bytes", "1000", NULL};
    imp_test_daemon *c = &extra_;
    assert_int_equal(start_extra(args, 0), 0);

    /* six queries at once for a world it has not built: one fetch, one build */
    enum { N = 6 };
    querier q[N];
    pthread_t th[N];
    for (int i = 0; i < N; ++i) {
        q[i] = (querier){c, ida, 0, 0};
        assert_int_equal(pthread_create(&th[i], NULL, query_thread, &q[i]), 0);
    }
    for (int i = 0; i < N; ++i) {
        pthread_join(th[i], NULL);
        assert_int_equal(q[i].status, 200);
        assert_true(q[i].t == 42.0);
    }
    assert_true(metric(c, "impactd_world_build_seconds_count") == 1);
    assert_true(metric(c, "impactd_world_cache_misses_total") +
                    metric(c, "impactd_world_cache_hits_total") ==
                N);

    /* b evicts a (the cache holds one of them), a evicts b */
    double t;
    assert_int_equal(ray_down(c, idb, &t, NULL), 200);
    assert_true(t == 41.0);
    assert_int_equal(ray_down(c, ida, &t, NULL), 200);
    assert_true(t == 42.0);
    assert_true(metric(c, "impactd_world_cache_evictions_total") == 2);
    assert_true(metric(c, "impactd_world_cache_worlds") == 1);
    assert_true(metric(c, "impactd_world_cache_bytes") <= 1000);
    assert_true(metric(c, "impactd_world_build_seconds_count") == 3);

    /* larger than the whole cache: built for each query, never kept */
    for (int i = 0; i < 2; ++i) {
        char path[128];
        snprintf(path, sizeof path, "/v1/worlds/%s", idbig);
        imp_http_result r;
        request(c, "GET", path, NULL, NULL, &r);
        assert_int_equal(r.status, 200);
        json_t *doc = json_loads(r.body, 0, NULL);
        assert_true(json_number_value(json_object_get(doc, "triangles")) == triangles);
        assert_true(json_number_value(json_object_get(doc, "bytes")) > 1000);
        json_decref(doc);
        imp_http_result_free(&r);
    }
    assert_true(metric(c, "impactd_world_build_seconds_count") == 5);
    assert_true(metric(c, "impactd_world_cache_worlds") == 1); /* still a */
    assert_int_equal(stop_extra(), 0);
    free(a);
    free(b);
    free(big);
}

/* ---- a replica killed mid-upload -------------------------------------------------------- */

static int connect_to(unsigned port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static void test_replica_killed_mid_upload(void **state) {
    (void)state;
    if (imp_test_under_valgrind()) skip();
    double triangles;
    char *w = terrain(300, &triangles), id[65];
    size_t len = strlen(w);
    id_of(w, id);
    long keys = imp_test_redis_dbsize(&redis_);

    /* killed with half the body received */
    int fd = connect_to(d_[0].port);
    char head_text[256];
    int hn = snprintf(head_text, sizeof head_text,
                      "POST /v1/worlds HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                      "application/json\r\nAuthorization: Bearer %s\r\nContent-Length: %zu\r\n\r\n",
                      TOKEN, len);
    assert_int_equal(write(fd, head_text, (size_t)hn), hn);
    assert_int_equal(write(fd, w, len / 2), (ssize_t)(len / 2));
    imp_test_sleep_ms(100);
    assert_int_equal(imp_test_daemon_stop(&d_[0], SIGKILL), -1);
    running_[0] = 0;
    close(fd);
    assert_int_equal(head(&d_[1], id), 404);
    assert_int_equal(imp_test_redis_dbsize(&redis_), keys);

    /* killed with the whole body sent, while it decodes, builds or stores: afterwards the
     * world is either absent or whole, never partial */
    static const long delays_ms[] = {5, 60, 800};
    int absent = 0, whole = 0;
    for (size_t i = 0; i < sizeof delays_ms / sizeof delays_ms[0]; ++i) {
        assert_int_equal(start_replica(&d_[0]), 0);
        running_[0] = 1;
        fd = connect_to(d_[0].port);
        assert_int_equal(write(fd, head_text, (size_t)hn), hn);
        size_t sent = 0;
        while (sent < len) {
            ssize_t n = write(fd, w + sent, len - sent);
            assert_true(n > 0);
            sent += (size_t)n;
        }
        imp_test_sleep_ms(delays_ms[i]);
        assert_int_equal(imp_test_daemon_stop(&d_[0], SIGKILL), -1);
        running_[0] = 0;
        close(fd);
        long h = head(&d_[1], id);
        if (h == 404) {
            absent++;
            assert_int_equal(imp_test_redis_dbsize(&redis_), keys);
            continue;
        }
        assert_int_equal(h, 200);
        whole++;
        char path[128];
        snprintf(path, sizeof path, "/v1/worlds/%s", id);
        imp_http_result r;
        request(&d_[1], "GET", path, NULL, NULL, &r);
        assert_int_equal(r.status, 200);
        json_t *doc = json_loads(r.body, 0, NULL);
        assert_true(json_number_value(json_object_get(doc, "triangles")) == triangles);
        json_decref(doc);
        imp_http_result_free(&r);
        assert_int_equal(imp_test_redis_dbsize(&redis_), keys + 1);
        /* gone again for the next round */
        request(&d_[1], "DELETE", path, TOKEN, NULL, &r);
        assert_int_equal(r.status, 204);
        imp_http_result_free(&r);
    }
    print_message("killed mid-upload: %d rounds left no world, %d a whole one\n", absent, whole);
    assert_int_equal(start_replica(&d_[0]), 0);
    running_[0] = 1;
    free(w);
}

/* ---- dir: ------------------------------------------------------------------------------- */

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void test_dir_store_across_restart(void **state) {
    (void)state;
    char dir[64], store[80];
    snprintf(dir, sizeof dir, "/tmp/impactd-worlds.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(store, sizeof store, "dir:%s", dir);
    const char *const args[] = {"--world-store", store, "--log", "text", NULL};
    imp_test_daemon *d = &extra_;
    assert_int_equal(start_extra(args, 0), 0);
    char *w = floor_world(5), id[65];
    assert_int_equal(upload(d, w, NULL, id), 201);
    assert_int_equal(upload(d, w, NULL, id), 200);
    assert_int_equal(stop_extra(), 0);

    /* the file holds the World's bytes under its id */
    char path[256], bad_path[256], tmp_path[256], bad_id[65];
    snprintf(path, sizeof path, "%s/%s.json", dir, id);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char got[256] = "";
    size_t n = fread(got, 1, sizeof got - 1, f);
    fclose(f);
    assert_int_equal(n, strlen(w));
    assert_memory_equal(got, w, n);
    /* a file whose bytes are not what its name says, and a write a crash interrupted */
    char *other = floor_world(6);
    id_of(other, bad_id);
    snprintf(bad_path, sizeof bad_path, "%s/%s.json", dir, bad_id);
    write_file(bad_path, w);
    snprintf(tmp_path, sizeof tmp_path, "%s/.tmp-%s-1-0", dir, bad_id);
    write_file(tmp_path, "{\"colliders\": [");

    assert_int_equal(start_extra(args, 1), 0);
    double t;
    assert_int_equal(ray_down(d, id, &t, NULL), 200); /* kept across the restart */
    assert_true(t == 44.0);
    /* the name is there, but not that world: ignored (and moved aside) */
    assert_int_equal(head(d, bad_id), 404);
    assert_int_equal(ray_down(d, bad_id, &t, NULL), 404);
    assert_int_equal(upload(d, other, NULL, id), 201); /* and can be uploaded properly */
    assert_int_equal(ray_down(d, bad_id, &t, NULL), 200);
    assert_true(t == 43.0);
    assert_int_equal(metric(d, "impactd_world_store_errors_total{kind=\"corrupt\"}"), 1);
    assert_int_equal(stop_extra(), 0);
    char *err = imp_test_daemon_read_stderr(d);
    assert_non_null(strstr(err, "does not hash to its name"));
    assert_non_null(strstr(err, "an interrupted write"));
    free(err);
    struct stat st;
    assert_int_not_equal(stat(tmp_path, &st), 0);

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(w);
    free(other);
}

/* A store or token the daemon cannot use stops it at start (exit 1) with a message. */
static void expect_no_start(const char *flag, const char *value, const char *needle) {
    const char *const args[] = {"--port", "0", "--bind", "127.0.0.1", flag, value, NULL};
    char *out = NULL, *err = NULL;
    int status = imp_test_run(args, NULL, &out, &err);
    if (status != 1 || !err || !strstr(err, needle))
        fail_msg("%s %s: exit %d, stderr: %s", flag, value, status, err ? err : "");
    free(out);
    free(err);
}

static void test_unusable_store_or_token_stops_the_start(void **state) {
    (void)state;
    expect_no_start("--world-store", "postgres://127.0.0.1:5432", "--world-store");
    expect_no_start("--world-store", "redis://127.0.0.1", "redis://host:port[/db] expected");
    expect_no_start("--world-store", "redis://:6379", "redis://host:port[/db] expected");
    expect_no_start("--world-store", "redis://127.0.0.1:70000", "redis://host:port[/db]");
    expect_no_start("--world-store", "dir:", "dir: needs a directory path");
    expect_no_start("--world-store", "dir:/proc/impactd-worlds", "cannot create directory");
    expect_no_start("--world-write-token-file", "/nonexistent/token", "cannot be read");
    char empty[64];
    snprintf(empty, sizeof empty, "/tmp/impactd-empty-token.%ld", (long)getpid());
    FILE *f = fopen(empty, "w");
    assert_non_null(f);
    fputs("  \n", f);
    fclose(f);
    expect_no_start("--world-write-token-file", empty, "holds no token");
    unlink(empty);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upload_on_one_query_on_another),
        cmocka_unit_test(test_concurrent_uploads_leave_one_copy),
        cmocka_unit_test(test_redis_outage),
        cmocka_unit_test(test_cache_on_a_small_replica),
        cmocka_unit_test(test_replica_killed_mid_upload),
        cmocka_unit_test(test_dir_store_across_restart),
        cmocka_unit_test(test_unusable_store_or_token_stops_the_start),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

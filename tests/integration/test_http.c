/*
 * test_http.c - the daemon over real HTTP: known answers of POST /v1/toi,
 * the error contract (status, problem+json, pointer), body delivery in
 * pieces, the body-size limit, keep-alive, and clean exit on signals.
 *
 * DESIGN
 * Three groups, each with its own daemon(s) on a kernel-chosen port:
 * "main" (default limits) runs the answers and the error table and ends by
 * checking the daemon is still healthy; "limits" runs a second daemon
 * with --max-body-bytes 1024; "signals" starts one daemon per test. Every
 * daemon is stopped with a signal and must exit 0, so a crash or a
 * sanitizer report in the daemon fails the run. The error cases are one
 * table, each row its own named cmocka test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

/* The daemon of the "main" and "limits" groups; tests reach it through
 * these because cmocka hands table rows, not the group state, to a test. */
static imp_test_daemon main_daemon;
static imp_test_daemon small_daemon;
/* Group teardowns that saw a bad exit; counted in main's result whatever
 * cmocka makes of a failing teardown. */
static int teardown_failures;

/* Body limit of the "limits" daemon (bytes). */
#define SMALL_LIMIT 1024

/* Two circles of radius 0.5 on the x axis, 3 apart, closing at speed 2:
 * they touch at t = 1, at x = 1.5. */
#define HEAD_ON_2D                                                                                 \
    "{\"a\": {\"radius\": 0.5, \"position\": [0, 0], \"velocity\": [1, 0]},"                       \
    " \"b\": {\"shape\": {\"type\": \"sphere\", \"radius\": 0.5}, \"position\": [3, 0],"           \
    " \"velocity\": [-1, 0]}}"

/* ---- helpers ------------------------------------------------------------------------------- */

static void url_of(const imp_test_daemon *d, const char *path, char *out, size_t cap) {
    snprintf(out, cap, "%s%s", d->url, path);
}

static void post_json(const imp_test_daemon *d, const char *path, const char *body,
                      imp_http_result *r) {
    char url[256];
    url_of(d, path, url, sizeof url);
    assert_int_equal(imp_http(NULL, "POST", url, "application/json", body, strlen(body), r), 0);
}

static json_t *parse_body(const imp_http_result *r) {
    json_error_t e;
    json_t *j = json_loadb(r->body, r->len, 0, &e);
    if (!j) print_error("response is not JSON (%s): %s\n", e.text, r->body);
    assert_non_null(j);
    return j;
}

/* "application/json; charset=utf-8" -> compares only "application/json". */
static void assert_media_type(const char *content_type, const char *expected) {
    size_t n = strcspn(content_type, ";");
    while (n > 0 && content_type[n - 1] == ' ')
        --n;
    if (n != strlen(expected) || strncmp(content_type, expected, n) != 0) {
        print_error("Content-Type is \"%s\", expected %s\n", content_type, expected);
        fail();
    }
}

static void assert_near(double got, double want, double tol, const char *what) {
    if (!(fabs(got - want) <= tol)) {
        print_error("%s = %.17g, expected %.17g (tolerance %g)\n", what, got, want, tol);
        fail();
    }
}

static double num(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) {
        print_error("\"%s\" is missing or not a number\n", key);
        fail();
    }
    return json_number_value(v);
}

/* o[key] must be an array of exactly dim numbers, each within tol of want. */
static void assert_vec(const json_t *o, const char *key, size_t dim, const double *want,
                       double tol) {
    const json_t *v = json_object_get(o, key);
    if (!json_is_array(v) || json_array_size(v) != dim) {
        print_error("\"%s\" is not an array of %zu numbers\n", key, dim);
        fail();
    }
    for (size_t i = 0; i < dim; ++i) {
        const json_t *e = json_array_get(v, i);
        assert_true(json_is_number(e));
        char what[64];
        snprintf(what, sizeof what, "%s[%zu]", key, i);
        assert_near(json_number_value(e), want[i], tol, what);
    }
}

static void assert_status(const imp_http_result *r, long status) {
    if (r->status != status) {
        print_error("HTTP status %ld, expected %ld; body: %s\n", r->status, status, r->body);
        fail();
    }
}

/* The error contract: status, problem+json, and a body with type, title,
 * status equal to the HTTP status, and `pointer` when one is expected. */
static void assert_problem(const imp_http_result *r, long status, const char *pointer) {
    assert_status(r, status);
    assert_media_type(r->content_type, "application/problem+json");
    json_t *j = parse_body(r);
    assert_true(json_is_object(j));
    assert_true(json_is_string(json_object_get(j, "type")));
    assert_true(json_string_length(json_object_get(j, "type")) > 0);
    assert_true(json_is_string(json_object_get(j, "title")));
    const json_t *st = json_object_get(j, "status");
    if (!json_is_integer(st) || json_integer_value(st) != status) {
        print_error("problem \"status\" does not equal %ld: %s\n", status, r->body);
        fail();
    }
    if (pointer) {
        const json_t *p = json_object_get(j, "pointer");
        if (!json_is_string(p) || strcmp(json_string_value(p), pointer) != 0) {
            print_error("problem \"pointer\" is not \"%s\": %s\n", pointer, r->body);
            fail();
        }
    }
    json_decref(j);
}

static void assert_healthy(const imp_test_daemon *d) {
    char url[256];
    imp_http_result r;
    url_of(d, "/healthz", url, sizeof url);
    assert_int_equal(imp_http(NULL, "GET", url, NULL, NULL, 0, &r), 0);
    assert_status(&r, 200);
    assert_media_type(r.content_type, "application/json");
    json_t *j = parse_body(&r);
    assert_true(json_is_object(j));
    assert_int_equal(json_object_size(j), 1);
    assert_string_equal(json_string_value(json_object_get(j, "status")), "ok");
    json_decref(j);
    imp_http_result_free(&r);
}

/* ---- group fixtures ------------------------------------------------------------------------ */

static int start_main(void **state) {
    (void)state;
    return imp_test_daemon_start(&main_daemon, NULL, NULL, 0);
}

static int stop_main(void **state) {
    (void)state;
    int status = imp_test_daemon_stop(&main_daemon, SIGTERM);
    if (status != 0) {
        fprintf(stderr, "main daemon exited with %d after SIGTERM\n", status);
        ++teardown_failures;
    }
    return status == 0 ? 0 : -1;
}

static int start_small(void **state) {
    (void)state;
    static const char *const args[] = {"--max-body-bytes", "1024", NULL};
    return imp_test_daemon_start(&small_daemon, args, NULL, 0);
}

static int stop_small(void **state) {
    (void)state;
    int status = imp_test_daemon_stop(&small_daemon, SIGTERM);
    if (status != 0) {
        fprintf(stderr, "small daemon exited with %d after SIGTERM\n", status);
        ++teardown_failures;
    }
    return status == 0 ? 0 : -1;
}

/* ---- main group: answers ------------------------------------------------------------------- */

static void test_healthz(void **state) {
    (void)state;
    assert_healthy(&main_daemon);
}

static void test_toi_head_on_2d(void **state) {
    (void)state;
    imp_http_result r;
    post_json(&main_daemon, "/v1/toi", HEAD_ON_2D, &r);
    assert_status(&r, 200);
    assert_media_type(r.content_type, "application/json");
    json_t *j = parse_body(&r);
    assert_string_equal(json_string_value(json_object_get(j, "status")), "hit");
    assert_true(json_is_true(json_object_get(j, "hit")));
    assert_true(num(j, "time") == 1.0); /* exact: the gap polynomial's root is 1 */
    const double normal[] = {1, 0}, point[] = {1.5, 0}, pa[] = {1, 0}, pb[] = {2, 0};
    assert_vec(j, "normal", 2, normal, 0.0);
    assert_vec(j, "point", 2, point, 0.0);
    assert_vec(j, "a_position", 2, pa, 0.0);
    assert_vec(j, "b_position", 2, pb, 0.0);
    assert_null(json_object_get(j, "depth"));
    /* spheres always report closest approach: centres meet at t = 1.5 */
    const json_t *ca = json_object_get(j, "closest_approach");
    assert_true(json_is_object(ca));
    assert_near(num(ca, "time"), 1.5, 1e-12, "closest_approach.time");
    assert_near(num(ca, "distance"), -1.0, 1e-12, "closest_approach.distance");
    json_decref(j);
    imp_http_result_free(&r);
}

static void test_toi_miss_3d(void **state) {
    (void)state;
    /* b passes a at a centre distance of sqrt(10) (offset [0, 3, 1]), nearest at t = 2.5 */
    static const char body[] =
        "{\"a\": {\"radius\": 0.5, \"position\": [0, 0, 0], \"velocity\": [1, 0, 0]},"
        " \"b\": {\"radius\": 0.5, \"position\": [5, 3, 1], \"velocity\": [-1, 0, 0]}}";
    imp_http_result r;
    post_json(&main_daemon, "/v1/toi", body, &r);
    assert_status(&r, 200);
    json_t *j = parse_body(&r);
    assert_string_equal(json_string_value(json_object_get(j, "status")), "none");
    assert_true(json_is_false(json_object_get(j, "hit")));
    /* a quantity that does not exist is absent, never NaN or null */
    assert_null(json_object_get(j, "time"));
    assert_null(json_object_get(j, "point"));
    assert_null(json_object_get(j, "normal"));
    const json_t *ca = json_object_get(j, "closest_approach");
    assert_true(json_is_object(ca));
    assert_near(num(ca, "time"), 2.5, 1e-12, "closest_approach.time");
    assert_near(num(ca, "distance"), sqrt(10.0) - 1.0, 1e-12, "closest_approach.distance");
    json_decref(j);
    imp_http_result_free(&r);
}

static void test_toi_accelerated(void **state) {
    (void)state;
    /* a point falling from height 10 under g = 10 reaches the origin at t = sqrt(2) */
    static const char body[] =
        "{\"a\": {\"radius\": 0, \"position\": [0, 10], \"acceleration\": [0, -10]},"
        " \"b\": {\"radius\": 0, \"position\": [0, 0], \"static\": true}}";
    imp_http_result r;
    post_json(&main_daemon, "/v1/toi", body, &r);
    assert_status(&r, 200);
    json_t *j = parse_body(&r);
    assert_string_equal(json_string_value(json_object_get(j, "status")), "hit");
    const double t = num(j, "time");
    assert_near(t, sqrt(2.0), 1e-12 * sqrt(2.0), "time");
    const double origin[] = {0, 0};
    assert_vec(j, "a_position", 2, origin, 1e-9);
    assert_vec(j, "b_position", 2, origin, 0.0);
    /* the normal is unit length and points from a (above) down to b */
    const json_t *n = json_object_get(j, "normal");
    assert_true(json_is_array(n) && json_array_size(n) == 2);
    double nx = json_number_value(json_array_get(n, 0)),
           ny = json_number_value(json_array_get(n, 1));
    assert_near(hypot(nx, ny), 1.0, 1e-12, "|normal|");
    assert_true(ny < 0);
    json_decref(j);
    imp_http_result_free(&r);
}

static void test_toi_overlapping(void **state) {
    (void)state;
    static const char body[] = "{\"a\": {\"radius\": 1, \"position\": [0, 0]},"
                               " \"b\": {\"radius\": 1, \"position\": [1.5, 0]}}";
    imp_http_result r;
    post_json(&main_daemon, "/v1/toi", body, &r);
    assert_status(&r, 200);
    json_t *j = parse_body(&r);
    assert_string_equal(json_string_value(json_object_get(j, "status")), "overlapping");
    assert_true(json_is_true(json_object_get(j, "hit")));
    assert_true(num(j, "time") == 0.0);
    assert_near(num(j, "depth"), 0.5, 1e-15, "depth");
    const double normal[] = {1, 0};
    assert_vec(j, "normal", 2, normal, 1e-15);
    json_decref(j);
    imp_http_result_free(&r);
}

static void test_toi_horizon_before_contact(void **state) {
    (void)state;
    static const char body[] =
        "{\"a\": {\"radius\": 0.5, \"position\": [0, 0], \"velocity\": [1, 0]},"
        " \"b\": {\"radius\": 0.5, \"position\": [3, 0], \"velocity\": [-1, 0]}, \"horizon\": 0.5}";
    imp_http_result r;
    post_json(&main_daemon, "/v1/toi", body, &r);
    assert_status(&r, 200);
    json_t *j = parse_body(&r);
    assert_string_equal(json_string_value(json_object_get(j, "status")), "none");
    assert_null(json_object_get(j, "time"));
    json_decref(j);
    imp_http_result_free(&r);
}

/* JSON media types other than the bare one are accepted, and so is no Content-Type. */
static void test_json_media_types(void **state) {
    (void)state;
    static const char *const types[] = {"application/json; charset=utf-8", "APPLICATION/JSON",
                                        "application/vnd.impactd+json", "application/json ;q=1",
                                        NULL};
    char url[256];
    url_of(&main_daemon, "/v1/toi", url, sizeof url);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
        imp_http_result r;
        assert_int_equal(imp_http(NULL, "POST", url, types[i], HEAD_ON_2D, strlen(HEAD_ON_2D), &r),
                         0);
        if (r.status != 200) print_error("Content-Type \"%s\"\n", types[i] ? types[i] : "(none)");
        assert_status(&r, 200);
        imp_http_result_free(&r);
    }
}

/* Successive requests reuse one connection, including after an early reply (404). */
static void test_keep_alive(void **state) {
    (void)state;
    CURL *c = curl_easy_init();
    assert_non_null(c);
    char health[256], toi[256], nope[256];
    url_of(&main_daemon, "/healthz", health, sizeof health);
    url_of(&main_daemon, "/v1/toi", toi, sizeof toi);
    url_of(&main_daemon, "/nope", nope, sizeof nope);
    struct {
        const char *method, *url, *body;
        long status;
    } seq[] = {{"GET", health, NULL, 200},     {"GET", health, NULL, 200},
               {"POST", toi, HEAD_ON_2D, 200}, {"GET", nope, NULL, 404},
               {"POST", toi, "{", 400},        {"GET", health, NULL, 200}};
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; ++i) {
        imp_http_result r;
        const char *b = seq[i].body;
        assert_int_equal(imp_http(c, seq[i].method, seq[i].url, b ? "application/json" : NULL, b,
                                  b ? strlen(b) : 0, &r),
                         0);
        assert_status(&r, seq[i].status);
        if (i > 0 && r.new_connections != 0) {
            print_error("request %zu (%s %s) opened a new connection\n", i, seq[i].method,
                        seq[i].url);
            fail();
        }
        imp_http_result_free(&r);
    }
    curl_easy_cleanup(c);
}

/* ---- main group: bodies in pieces ---------------------------------------------------------- */

/* A valid request padded with spaces to exactly `size` bytes (caller frees). */
static char *padded_request(size_t size) {
    size_t n = strlen(HEAD_ON_2D);
    assert_true(size >= n);
    char *p = malloc(size + 1);
    assert_non_null(p);
    memcpy(p, HEAD_ON_2D, n);
    memset(p + n, ' ', size - n);
    p[size] = '\0';
    return p;
}

static char *one_piece_answer(void) {
    imp_http_result r;
    post_json(&main_daemon, "/v1/toi", HEAD_ON_2D, &r);
    assert_status(&r, 200);
    return r.body; /* caller frees */
}

static void test_pieces_content_length(void **state) {
    (void)state;
    char *want = one_piece_answer();
    char url[256];
    url_of(&main_daemon, "/v1/toi", url, sizeof url);
    imp_http_result r;
    assert_int_equal(imp_http_post_pieces(url, HEAD_ON_2D, strlen(HEAD_ON_2D), 3, 0, &r), 0);
    assert_status(&r, 200);
    assert_string_equal(r.body, want);
    imp_http_result_free(&r);
    free(want);
}

static void test_pieces_chunked(void **state) {
    (void)state;
    char *want = one_piece_answer();
    char url[256];
    url_of(&main_daemon, "/v1/toi", url, sizeof url);
    imp_http_result r;
    assert_int_equal(imp_http_post_pieces(url, HEAD_ON_2D, strlen(HEAD_ON_2D), 5, 1, &r), 0);
    assert_status(&r, 200);
    assert_string_equal(r.body, want);
    imp_http_result_free(&r);
    free(want);
}

static int connect_local(unsigned port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    return fd;
}

static void send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        assert_true(k > 0);
        p += k;
        n -= (size_t)k;
    }
}

/* Reads until the server closes; returns the malloc'd response. */
static char *recv_all(int fd) {
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        if (cap - len < 1024) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        ssize_t k = recv(fd, buf + len, cap - len - 1, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        len += (size_t)k;
    }
    buf[len] = '\0';
    return buf;
}

/* Raw TCP with pauses, so the server's reads really see the body in many
 * pieces (curl may coalesce its callback's output into one segment). */
static void test_pieces_slow_socket(void **state) {
    (void)state;
    char *want = one_piece_answer();
    int fd = connect_local(main_daemon.port);
    char head[256];
    snprintf(head, sizeof head,
             "POST /v1/toi HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\nConnection: close\r\n\r\n",
             strlen(HEAD_ON_2D));
    send_all(fd, head, strlen(head));
    const struct timespec pause = {0, 2 * 1000 * 1000};
    for (size_t i = 0, n = strlen(HEAD_ON_2D); i < n; i += 7) {
        send_all(fd, HEAD_ON_2D + i, n - i < 7 ? n - i : 7);
        nanosleep(&pause, NULL);
    }
    char *resp = recv_all(fd);
    close(fd);
    assert_true(strncmp(resp, "HTTP/1.1 200", 12) == 0);
    const char *body = strstr(resp, "\r\n\r\n");
    assert_non_null(body);
    assert_string_equal(body + 4, want);
    free(resp);
    free(want);
}

/* A body far past the server's initial buffer (and its 1 MiB preallocation
 * cap) grows correctly, declared or chunked. */
static void test_large_body(void **state) {
    (void)state;
    char *want = one_piece_answer();
    const size_t size = 3u << 20;
    char *body = padded_request(size);
    char url[256];
    url_of(&main_daemon, "/v1/toi", url, sizeof url);
    for (int chunked = 0; chunked <= 1; ++chunked) {
        imp_http_result r;
        assert_int_equal(imp_http_post_pieces(url, body, size, 64 * 1024, chunked, &r), 0);
        assert_status(&r, 200);
        assert_string_equal(r.body, want);
        imp_http_result_free(&r);
    }
    free(body);
    free(want);
}

/* ---- main group: the error table ----------------------------------------------------------- */

typedef struct bad_case {
    const char *method, *path;
    const char *content_type; /* NULL: no header */
    const char *body;         /* NULL: no body */
    long status;
    const char *pointer; /* required "pointer", or NULL */
    const char *allow;   /* method the Allow header must list (405) */
} bad_case;

#define JSON "application/json"
#define B_OK "\"b\": {\"radius\": 0.5, \"position\": [3, 0]}"

static bad_case bad_cases[] = {
    /* 0 */ {"POST", "/v1/toi", JSON, "{\"a\": {radius: 0.5}}", 400, NULL, NULL},
    /* 1 */
    {"POST", "/v1/toi", JSON, "{\"a\": {\"radius\": 0.5, \"position\": [0, 0], \"vel", 400, NULL,
     NULL},
    /* 2 */
    {"POST", "/v1/toi", JSON, "{\"a\": {\"radius\": NaN, \"position\": [0, 0]}, " B_OK "}", 400,
     NULL, NULL},
    /* 3 */
    {"POST", "/v1/toi", JSON, "{\"a\": {\"radius\": 1e400, \"position\": [0, 0]}, " B_OK "}", 400,
     NULL, NULL},
    /* 4 */
    {"POST", "/v1/toi", JSON,
     "{\"a\": {\"radius\": 0.5, \"position\": [0, 0], \"velocity\": [1, 0]},"
     " \"b\": {\"radius\": 0.5, \"position\": [3, 0, 0]}}",
     400, "/b/position", NULL},
    /* 5 */
    {"POST", "/v1/toi", JSON,
     "{\"a\": {\"shape\": {\"type\": \"sphere\", \"radius\": -1}, \"position\": [0, 0]}, " B_OK "}",
     422, "/a/shape/radius", NULL},
    /* 6 */
    {"POST", "/v1/toi", JSON, "{\"a\": {\"radius\": -0.5, \"position\": [0, 0]}, " B_OK "}", 422,
     "/a/radius", NULL},
    /* 7 */
    {"POST", "/v1/toi", JSON,
     "{\"a\": {\"radius\": 0.5, \"position\": [0, 0]}, \"b\": {\"radius\": 0.5}}", 400,
     "/b/position", NULL},
    /* 8 */
    {"POST", "/v1/toi", JSON, "{\"a\": {\"radius\": \"big\", \"position\": [0, 0]}, " B_OK "}", 400,
     "/a/radius", NULL},
    /* 9 */
    {"POST", "/v1/toi", JSON, "{\"a\": {\"radius\": 0.5, \"position\": [0, 0, 0, 0]}, " B_OK "}",
     400, "/a/position", NULL},
    /* 10 */
    {"POST", "/v1/toi", JSON, "{\"a\": {\"radius\": 0.5, \"position\": [0, 0]}}", 400, "/b", NULL},
    /* 11 */ {"POST", "/v1/toi", JSON, "[1, 2]", 400, NULL, NULL},
    /* 12 */ {"POST", "/v1/toi", JSON, "", 400, NULL, NULL},
    /* 13 */
    {"POST", "/v1/toi", JSON,
     "{\"a\": {\"id\": \"\xff\", \"radius\": 0.5, \"position\": [0, 0]}, " B_OK "}", 400, NULL,
     NULL},
    /* 14 */
    {"POST", "/v1/toi", JSON,
     "{\"a\": {\"radius\": 0.5, \"radius\": 1, \"position\": [0, 0]}, " B_OK "}", 400, NULL, NULL},
    /* 15 */
    {"POST", "/v1/toi", JSON,
     "{\"a\": {\"radius\": 0.5, \"position\": [0, 0]}, " B_OK ", \"horizon\": \"soon\"}", 400,
     "/horizon", NULL},
    /* 16 */ {"POST", "/v1/nope", JSON, "{}", 404, NULL, NULL},
    /* 17 */ {"GET", "/nope", NULL, NULL, 404, NULL, NULL},
    /* 18 */ {"GET", "/v1/toi", NULL, NULL, 405, NULL, "POST"},
    /* 19 */ {"DELETE", "/v1/toi", NULL, NULL, 405, NULL, "POST"},
    /* 20 */ {"POST", "/healthz", JSON, "{}", 405, NULL, "GET"},
    /* 21 */ {"POST", "/v1/toi", "text/plain", HEAD_ON_2D, 415, NULL, NULL},
    /* 22 */ {"POST", "/v1/toi", "application/jsonx", HEAD_ON_2D, 415, NULL, NULL},
    /* 23 */ {"POST", "/v1/toi", "application/x-www-form-urlencoded", HEAD_ON_2D, 415, NULL, NULL},
};

static void test_bad_request(void **state) {
    const bad_case *c = *state;
    char url[256];
    imp_http_result r;
    url_of(&main_daemon, c->path, url, sizeof url);
    assert_int_equal(
        imp_http(NULL, c->method, url, c->content_type, c->body, c->body ? strlen(c->body) : 0, &r),
        0);
    assert_problem(&r, c->status, c->pointer);
    if (c->allow && !strstr(r.allow, c->allow)) {
        print_error("Allow header \"%s\" does not list %s\n", r.allow, c->allow);
        fail();
    }
    imp_http_result_free(&r);
}

#define BAD(i, name)                                                                               \
    { "bad request: " name, test_bad_request, NULL, NULL, &bad_cases[i] }

/* Runs last in its group: none of the above may have hurt the daemon. */
static void test_still_healthy(void **state) {
    (void)state;
    assert_healthy(&main_daemon);
}

/* ---- limits group: 413 --------------------------------------------------------------------- */

static void test_body_at_limit(void **state) {
    (void)state;
    char *body = padded_request(SMALL_LIMIT);
    imp_http_result r;
    post_json(&small_daemon, "/v1/toi", body, &r);
    assert_status(&r, 200);
    imp_http_result_free(&r);
    free(body);
}

static void test_413_content_length(void **state) {
    (void)state;
    char *body = padded_request(SMALL_LIMIT + 1);
    imp_http_result r;
    post_json(&small_daemon, "/v1/toi", body, &r);
    assert_problem(&r, 413, NULL);
    imp_http_result_free(&r);
    free(body);
}

static void test_413_chunked(void **state) {
    (void)state;
    char *body = padded_request(4 * SMALL_LIMIT);
    char url[256];
    url_of(&small_daemon, "/v1/toi", url, sizeof url);
    imp_http_result r;
    assert_int_equal(imp_http_post_pieces(url, body, strlen(body), 100, 1, &r), 0);
    assert_problem(&r, 413, NULL);
    imp_http_result_free(&r);
    free(body);
}

static void test_413_then_healthy(void **state) {
    (void)state;
    assert_healthy(&small_daemon);
}

/* ---- signals group ------------------------------------------------------------------------- */

static void test_exit_0_on_sigint(void **state) {
    (void)state;
    imp_test_daemon d;
    assert_int_equal(imp_test_daemon_start(&d, NULL, NULL, 0), 0);
    assert_healthy(&d);
    assert_int_equal(imp_test_daemon_stop(&d, SIGINT), 0);
}

/* An idle keep-alive connection must not hold up shutdown. */
static void test_exit_0_on_sigterm_with_open_connection(void **state) {
    (void)state;
    imp_test_daemon d;
    assert_int_equal(imp_test_daemon_start(&d, NULL, NULL, 0), 0);
    int fd = connect_local(d.port);
    static const char req[] = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    send_all(fd, req, sizeof req - 1);
    char buf[512];
    assert_true(recv(fd, buf, sizeof buf, 0) > 0); /* answered; connection stays open */
    assert_int_equal(imp_test_daemon_stop(&d, SIGTERM), 0);
    close(fd);
}

int main(void) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) return 1;
    const struct CMUnitTest main_tests[] = {
        cmocka_unit_test(test_healthz),
        cmocka_unit_test(test_toi_head_on_2d),
        cmocka_unit_test(test_toi_miss_3d),
        cmocka_unit_test(test_toi_accelerated),
        cmocka_unit_test(test_toi_overlapping),
        cmocka_unit_test(test_toi_horizon_before_contact),
        cmocka_unit_test(test_json_media_types),
        cmocka_unit_test(test_keep_alive),
        cmocka_unit_test(test_pieces_content_length),
        cmocka_unit_test(test_pieces_chunked),
        cmocka_unit_test(test_pieces_slow_socket),
        cmocka_unit_test(test_large_body),
        BAD(0, "malformed JSON -> 400"),
        BAD(1, "truncated body -> 400"),
        BAD(2, "NaN token -> 400"),
        BAD(3, "1e400 -> 400"),
        BAD(4, "mixed 2D/3D vectors -> 400 /b/position"),
        BAD(5, "negative shape radius -> 422 /a/shape/radius"),
        BAD(6, "negative bare radius -> 422 /a/radius"),
        BAD(7, "missing position -> 400 /b/position"),
        BAD(8, "string for a number -> 400 /a/radius"),
        BAD(9, "4-component vector -> 400 /a/position"),
        BAD(10, "missing body b -> 400 /b"),
        BAD(11, "top-level array -> 400"),
        BAD(12, "empty body -> 400"),
        BAD(13, "invalid UTF-8 -> 400"),
        BAD(14, "duplicate key -> 400"),
        BAD(15, "string horizon -> 400 /horizon"),
        BAD(16, "unknown operation -> 404"),
        BAD(17, "unknown path -> 404"),
        BAD(18, "GET /v1/toi -> 405 Allow: POST"),
        BAD(19, "DELETE /v1/toi -> 405 Allow: POST"),
        BAD(20, "POST /healthz -> 405 Allow: GET"),
        BAD(21, "text/plain -> 415"),
        BAD(22, "application/jsonx -> 415"),
        BAD(23, "form-urlencoded -> 415"),
        cmocka_unit_test(test_still_healthy),
    };
    const struct CMUnitTest limit_tests[] = {
        cmocka_unit_test(test_body_at_limit),
        cmocka_unit_test(test_413_content_length),
        cmocka_unit_test(test_413_chunked),
        cmocka_unit_test(test_413_then_healthy),
    };
    const struct CMUnitTest signal_tests[] = {
        cmocka_unit_test(test_exit_0_on_sigint),
        cmocka_unit_test(test_exit_0_on_sigterm_with_open_connection),
    };
    int failed = 0;
    failed += cmocka_run_group_tests_name("main", main_tests, start_main, stop_main);
    failed += cmocka_run_group_tests_name("limits", limit_tests, start_small, stop_small);
    failed += cmocka_run_group_tests_name("signals", signal_tests, NULL, NULL);
    curl_global_cleanup();
    return failed == 0 && teardown_failures == 0 ? 0 : 1;
}

/*
 * test_paths.c - POST /v1/paths/intersect through HTTP.
 *
 * DESIGN
 * One daemon for the file. Known answers on small dyadic geometries (so
 * every number is asserted exactly: the response's numbers round-trip),
 * 2D and 3D, every kind, parallel, collinear and zero-length paths; the
 * same request as a /v1/batch item; the `impact` CLI ($IMPACT_BIN)
 * printing exactly the daemon's bytes for an answer and for a problem;
 * and every 4xx of the endpoint with its status, problem+json content
 * type, type and JSON Pointer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"

static imp_test_daemon daemon_;

static int setup(void **state) {
    (void)state;
    return imp_test_daemon_start(&daemon_, NULL, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    return imp_test_daemon_stop(&daemon_, SIGTERM) == 0 ? 0 : -1;
}

/* POSTs `body` to /v1/<op>; returns the parsed reply (caller decrefs),
 * the raw exchange in *raw when not NULL (caller frees). */
static json_t *post_raw(const char *op, const char *body, imp_http_result *raw) {
    char url[160];
    snprintf(url, sizeof url, "%s/v1/%s", daemon_.url, op);
    imp_http_result r;
    assert_int_equal(imp_http(NULL, "POST", url, "application/json", body, strlen(body), &r), 0);
    json_error_t err;
    json_t *reply = json_loads(r.body, 0, &err);
    if (!reply) fail_msg("reply is not JSON: %.200s", r.body);
    if (raw)
        *raw = r;
    else
        imp_http_result_free(&r);
    return reply;
}

static json_t *intersect(const char *body) {
    imp_http_result raw;
    json_t *r = post_raw("paths/intersect", body, &raw);
    if (raw.status != 200) fail_msg("%s: status %ld: %s", body, raw.status, raw.body);
    assert_string_equal(raw.content_type, "application/json");
    imp_http_result_free(&raw);
    return r;
}

static double num(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) fail_msg("%s is not a number", key);
    return json_number_value(v);
}

static int flag(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    if (!json_is_boolean(v)) fail_msg("%s is not a boolean", key);
    return json_is_true(v);
}

/* v is exactly the Vec (x, y[, z]) of dimension dim */
static void expect_vec(const json_t *v, int dim, double x, double y, double z, const char *what) {
    double want[3] = {x, y, z};
    if (!json_is_array(v) || json_array_size(v) != (size_t)dim)
        fail_msg("%s is not a Vec of %d", what, dim);
    for (int i = 0; i < dim; ++i) {
        double g = json_number_value(json_array_get(v, (size_t)i));
        if (g != want[i]) fail_msg("%s[%d] = %.17g, want %.17g", what, i, g, want[i]);
    }
}

typedef struct expect {
    double t, s, distance;
    double cp[3], cq[3];
    int intersects, parallel, same_time;
} expect;

static void check_answer(const char *body, int dim, const expect *e) {
    json_t *r = intersect(body);
    if (num(r, "t") != e->t || num(r, "s") != e->s || num(r, "distance") != e->distance)
        fail_msg("%s: t %.17g s %.17g distance %.17g, want %.17g %.17g %.17g", body, num(r, "t"),
                 num(r, "s"), num(r, "distance"), e->t, e->s, e->distance);
    if (flag(r, "intersects") != e->intersects || flag(r, "parallel") != e->parallel ||
        flag(r, "same_time") != e->same_time)
        fail_msg("%s: intersects %d parallel %d same_time %d", body, flag(r, "intersects"),
                 flag(r, "parallel"), flag(r, "same_time"));
    const json_t *closest = json_object_get(r, "closest");
    expect_vec(json_object_get(closest, "p"), dim, e->cp[0], e->cp[1], e->cp[2], "closest.p");
    expect_vec(json_object_get(closest, "q"), dim, e->cq[0], e->cq[1], e->cq[2], "closest.q");
    expect_vec(json_object_get(r, "point"), dim, 0.5 * (e->cp[0] + e->cq[0]),
               0.5 * (e->cp[1] + e->cq[1]), 0.5 * (e->cp[2] + e->cq[2]), "point");
    assert_int_equal(json_object_size(r), 8); /* the contract's fields, nothing else */
    json_decref(r);
}

static void test_known_answers(void **state) {
    (void)state;
    /* crossing segments: p along x, q up through x = 1 */
    expect cross = {0.25, 0.75, 0.0, {1, 0, 0}, {1, 0, 0}, 1, 0, 0};
    check_answer("{\"p\": [[0, 0], [4, 0]], \"q\": [[1, -3], [1, 1]]}", 2, &cross);
    /* the same with kind and tolerance spelled out */
    check_answer("{\"p\": [[0, 0], [4, 0]], \"q\": [[1, -3], [1, 1]], \"kind\": \"segment\","
                 " \"tolerance\": 0}",
                 2, &cross);
    /* skew in 3D, 1 apart along z */
    expect skew = {0.5, 0.25, 1.0, {1, 0, 0}, {1, 0, 1}, 0, 0, 0};
    check_answer("{\"p\": [[0, 0, 0], [2, 0, 0]], \"q\": [[1, -1, 1], [1, 3, 1]]}", 3, &skew);
    /* an explicit tolerance of 1 bounds both: now they intersect, and
     * |t - s| = 0.25 counts as the same time */
    skew.intersects = 1;
    skew.same_time = 1;
    check_answer(
        "{\"p\": [[0, 0, 0], [2, 0, 0]], \"q\": [[1, -1, 1], [1, 3, 1]], \"tolerance\": 1}", 3,
        &skew);
    /* one geometry, three kinds, three answers */
    const char *geom = "\"p\": [[0, 0], [1, 0]], \"q\": [[-3, -2], [-3, -1]]";
    char body[256];
    snprintf(body, sizeof body, "{%s, \"kind\": \"ray\"}", geom);
    expect ray = {0.0, 2.0, 3.0, {0, 0, 0}, {-3, 0, 0}, 0, 0, 0};
    check_answer(body, 2, &ray);
    snprintf(body, sizeof body, "{%s, \"kind\": \"line\"}", geom);
    expect line = {-3.0, 2.0, 0.0, {-3, 0, 0}, {-3, 0, 0}, 1, 0, 0};
    check_answer(body, 2, &line);
    snprintf(body, sizeof body, "{%s}", geom);
    json_t *r = intersect(body);
    assert_true(num(r, "t") == 0.0 && num(r, "s") == 1.0);
    assert_true(fabs(num(r, "distance") - sqrt(10.0)) <= 0x1p-51);
    json_decref(r);
    /* head-on on one line: they meet at x = 3 */
    expect head_on = {0.75, 0.75, 0.0, {3, 0, 0}, {3, 0, 0}, 1, 1, 1};
    check_answer("{\"p\": [[0, 0], [4, 0]], \"q\": [[6, 0], [2, 0]]}", 2, &head_on);
    /* parallel, equal velocities: the start of the overlap on p */
    expect par = {0.5, 0.0, 1.0, {1, 0, 0}, {1, 1, 0}, 0, 1, 0};
    check_answer("{\"p\": [[0, 0], [2, 0]], \"q\": [[1, 1], [3, 1]]}", 2, &par);
    /* collinear and disjoint */
    expect apart = {1.0, 0.0, 2.0, {1, 0, 0}, {3, 0, 0}, 0, 1, 0};
    check_answer("{\"p\": [[0, 0], [1, 0]], \"q\": [[3, 0], [5, 0]]}", 2, &apart);
    /* touching at an endpoint, 3D */
    expect touch = {1.0, 0.0, 0.0, {1, 1, 1}, {1, 1, 1}, 1, 0, 0};
    check_answer("{\"p\": [[0, 0, 0], [1, 1, 1]], \"q\": [[1, 1, 1], [2, 0, 5]]}", 3, &touch);
    /* zero-length p above q: a particle at rest, met at s = 0.25 */
    expect point = {0.25, 0.25, 1.0, {1, 1, 0}, {1, 0, 0}, 0, 0, 1};
    check_answer("{\"p\": [[1, 1], [1, 1]], \"q\": [[0, 0], [4, 0]]}", 2, &point);
    /* two points */
    expect points = {0.0, 0.0, 5.0, {1, 2, 3}, {4, 6, 3}, 0, 0, 1};
    check_answer("{\"p\": [[1, 2, 3], [1, 2, 3]], \"q\": [[4, 6, 3], [4, 6, 3]]}", 3, &points);
    /* a huge scene: the default tolerance is 1e-9 of it */
    r = intersect("{\"p\": [[0, 0], [1e20, 0]], \"q\": [[5e19, 5e10], [5e19, 1e20]]}");
    assert_true(num(r, "t") == 0.5 && num(r, "s") == 0.0);
    assert_true(fabs(num(r, "distance") - 5e10) <= 5e10 * 0x1p-50);
    assert_true(flag(r, "intersects"));
    json_decref(r);
}

static void test_batch_item(void **state) {
    (void)state;
    json_t *r = post_raw("batch",
                         "{\"requests\": [{\"op\": \"paths/intersect\", \"body\":"
                         " {\"p\": [[0, 0], [4, 0]], \"q\": [[6, 0], [2, 0]]}},"
                         " {\"op\": \"paths/intersect\", \"body\": {\"p\": [[0, 0], [4, 0]]}}]}",
                         NULL);
    const json_t *res = json_object_get(r, "results");
    assert_int_equal(json_array_size(res), 2);
    const json_t *a = json_array_get(res, 0), *b = json_array_get(res, 1);
    assert_int_equal(json_integer_value(json_object_get(a, "status")), 200);
    assert_true(num(json_object_get(a, "body"), "t") == 0.75);
    assert_true(flag(json_object_get(a, "body"), "same_time"));
    assert_int_equal(json_integer_value(json_object_get(b, "status")), 400);
    assert_string_equal(json_string_value(json_object_get(json_object_get(b, "body"), "pointer")),
                        "/q");
    json_decref(r);
}

/* Runs $IMPACT_BIN paths/intersect --file <body in a temp file>; returns
 * the exit status and stdout (malloc'd) in *out. */
static int run_cli(const char *body, char **out) {
    const char *bin = getenv("IMPACT_BIN");
    if (!bin || !*bin) bin = "build/impact";
    char path[] = "/tmp/impact-paths-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(body);
    assert_int_equal(write(fd, body, len), (ssize_t)len);
    close(fd);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(pipefd[1], 1);
        close(pipefd[0]);
        close(pipefd[1]);
        execl(bin, bin, "paths/intersect", "--file", path, (char *)NULL);
        _exit(127);
    }
    close(pipefd[1]);
    char *buf = NULL;
    size_t n = 0, cap = 0;
    char chunk[4096];
    for (;;) {
        ssize_t k = read(pipefd[0], chunk, sizeof chunk);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        assert_int_equal(imp_test_buf_append(&buf, &n, &cap, chunk, (size_t)k), 0);
    }
    close(pipefd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    unlink(path);
    if (!buf) assert_int_equal(imp_test_buf_append(&buf, &n, &cap, "", 0), 0);
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_cli_equivalent(void **state) {
    (void)state;
    static const struct {
        const char *body;
        int exit_code;
    } cases[] = {
        {"{\"p\": [[0, 0], [4, 0]], \"q\": [[1, -3], [1, 1]]}", 0},
        {"{\"p\": [[0.1, 0.2, 0.3], [0.7, -0.9, 0.5]], \"q\": [[0.6, 0.1, -0.2], [-0.2, 0.8, 0.4]],"
         " \"kind\": \"line\"}",
         0},
        {"{\"p\": [[0, 0], [4, 0]], \"q\": [[1, -3], [1, 1]], \"kind\": \"curve\"}", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        imp_http_result raw;
        json_t *r = post_raw("paths/intersect", cases[i].body, &raw);
        json_decref(r);
        char *out;
        int code = run_cli(cases[i].body, &out);
        if (code != cases[i].exit_code) fail_msg("%s: impact exited %d", cases[i].body, code);
        /* the CLI prints the daemon's body and a newline */
        if (strlen(out) != raw.len + 1 || strncmp(out, raw.body, raw.len) != 0 ||
            out[raw.len] != '\n')
            fail_msg("CLI printed\n%s\ndaemon sent\n%s", out, raw.body);
        free(out);
        imp_http_result_free(&raw);
    }
}

static void expect_problem(const char *body, long want_status, const char *want_type,
                           const char *want_pointer) {
    imp_http_result raw;
    json_t *r = post_raw("paths/intersect", body, &raw);
    const char *pointer = json_string_value(json_object_get(r, "pointer"));
    const char *type = json_string_value(json_object_get(r, "type"));
    int pointer_ok = want_pointer ? pointer && strcmp(pointer, want_pointer) == 0 : !pointer;
    if (raw.status != want_status || !pointer_ok || !type || strcmp(type, want_type) != 0 ||
        strcmp(raw.content_type, "application/problem+json") != 0 ||
        json_integer_value(json_object_get(r, "status")) != want_status)
        fail_msg("%s: got %ld %s %s (%s), want %ld %s %s", body, raw.status, type ? type : "-",
                 pointer ? pointer : "(no pointer)", raw.content_type, want_status, want_type,
                 want_pointer ? want_pointer : "(no pointer)");
    json_decref(r);
    imp_http_result_free(&raw);
}

#define Q2 "\"q\": [[0, 0], [1, 1]]"
#define P2 "\"p\": [[0, 0], [1, 1]]"

static void test_errors(void **state) {
    (void)state;
    /* 400: malformed, wrong type, missing, mixed dimensions */
    expect_problem("{\"p\": [[0, 0], [1, 1]], ", 400, "malformed-json", NULL);
    expect_problem("[]", 400, "wrong-type", "");
    expect_problem("{" Q2 "}", 400, "missing-field", "/p");
    expect_problem("{" P2 "}", 400, "missing-field", "/q");
    expect_problem("{\"p\": 3, " Q2 "}", 400, "wrong-type", "/p");
    expect_problem("{\"p\": {\"start\": [0, 0]}, " Q2 "}", 400, "wrong-type", "/p");
    expect_problem("{\"p\": [[0, 0]], " Q2 "}", 400, "wrong-type", "/p");
    expect_problem("{\"p\": [[0, 0], [1, 1], [2, 2]], " Q2 "}", 400, "wrong-type", "/p");
    expect_problem("{\"p\": [], " Q2 "}", 400, "wrong-type", "/p");
    expect_problem("{\"p\": [[0, 0], \"x\"], " Q2 "}", 400, "wrong-type", "/p/1");
    expect_problem("{\"p\": [[0, 0], [1]], " Q2 "}", 400, "wrong-type", "/p/1");
    expect_problem("{\"p\": [[0, 0], [1, 2, 3, 4]], " Q2 "}", 400, "wrong-type", "/p/1");
    expect_problem("{\"p\": [[0, 0], [1, \"a\"]], " Q2 "}", 400, "wrong-type", "/p/1/1");
    expect_problem("{\"p\": [[0, 0], [1, null]], " Q2 "}", 400, "wrong-type", "/p/1/1");
    expect_problem("{" P2 ", \"q\": [[0, 0], 5]}", 400, "wrong-type", "/q/1");
    expect_problem("{\"p\": [[0, 0], [1, 1, 1]], " Q2 "}", 400, "mixed-dimensions", "/p/1");
    expect_problem("{" P2 ", \"q\": [[0, 0, 0], [1, 1, 1]]}", 400, "mixed-dimensions", "/q/0");
    expect_problem("{" P2 ", " Q2 ", \"kind\": 3}", 400, "wrong-type", "/kind");
    expect_problem("{" P2 ", " Q2 ", \"tolerance\": \"small\"}", 400, "wrong-type", "/tolerance");
    expect_problem("{" P2 ", " Q2 ", \"tolerance\": Infinity}", 400, "malformed-json", NULL);
    /* 422: values out of range */
    expect_problem("{" P2 ", " Q2 ", \"kind\": \"curve\"}", 422, "invalid-field", "/kind");
    expect_problem("{" P2 ", " Q2 ", \"kind\": \"Segment\"}", 422, "invalid-field", "/kind");
    expect_problem("{" P2 ", " Q2 ", \"tolerance\": -1}", 422, "invalid-field", "/tolerance");
    expect_problem("{" P2 ", " Q2 ", \"tolerance\": 1e61}", 422, "invalid-field", "/tolerance");
    expect_problem("{\"p\": [[1e61, 0], [1, 1]], " Q2 "}", 422, "invalid-field", "/p/0/0");
    expect_problem("{" P2 ", \"q\": [[0, 0], [1, -2e300]]}", 422, "invalid-field", "/q/1/1");
    /* the first error wins: p before q, q before kind, kind before tolerance */
    expect_problem("{\"p\": 1, \"q\": 2}", 400, "wrong-type", "/p");
    expect_problem("{" P2 ", \"q\": 2, \"kind\": \"curve\"}", 400, "wrong-type", "/q");
    expect_problem("{" P2 ", " Q2 ", \"kind\": \"curve\", \"tolerance\": -1}", 422, "invalid-field",
                   "/kind");
    /* at the edges of the ranges: fine */
    json_t *r = intersect("{\"p\": [[1e60, 0], [0, 0]], \"q\": [[0, -1e60], [0, 1e60]],"
                          " \"tolerance\": 1e60}");
    assert_true(num(r, "t") == 1.0 && num(r, "s") == 0.5 && num(r, "distance") == 0.0);
    json_decref(r);

    /* a wrong method is 405 with Allow */
    char url[160];
    snprintf(url, sizeof url, "%s/v1/paths/intersect", daemon_.url);
    imp_http_result h;
    assert_int_equal(imp_http(NULL, "GET", url, NULL, NULL, 0, &h), 0);
    assert_int_equal(h.status, 405);
    assert_non_null(strstr(h.allow, "POST"));
    assert_string_equal(h.content_type, "application/problem+json");
    imp_http_result_free(&h);
    /* a non-JSON content type is 415 */
    assert_int_equal(imp_http(NULL, "POST", url, "text/plain", "{}", 2, &h), 0);
    assert_int_equal(h.status, 415);
    imp_http_result_free(&h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_batch_item),
        cmocka_unit_test(test_cli_equivalent),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

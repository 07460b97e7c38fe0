/*
 * test_ccd.c - POST /v1/ccd through HTTP.
 *
 * DESIGN
 * One daemon for the file, started with --max-bodies 1000. The example of
 * docs/API.md with its exact times; the same queries as a /v1/batch item;
 * every handcrafted query of the public CCD benchmark (../shared/data/ccd)
 * sent in requests of 1000, its coordinates written with 17 significant
 * digits (exact: the daemon's reader rounds correctly), every answer as
 * the ground truth says; one query past --max-bodies, 422 at /queries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "replies.h"
#include "tests/ccd_data.h"

#define MAX_QUERIES 1000

static imp_test_daemon daemon_;

static int setup(void **state) {
    (void)state;
    static const char *const ARGS[] = {"--max-bodies", "1000", NULL};
    return imp_test_daemon_start(&daemon_, ARGS, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    return imp_test_daemon_stop(&daemon_, SIGTERM) == 0 ? 0 : -1;
}

#define EXAMPLE                                                                                    \
    "{\"queries\": ["                                                                              \
    "{\"kind\": \"vertex-face\", \"start\": [[0.25, 0.25, 1], [0, 0, 0], [1, 0, 0], [0, 1, 0]],"   \
    " \"end\": [[0.25, 0.25, -3], [0, 0, 0], [1, 0, 0], [0, 1, 0]]},"                              \
    "{\"kind\": \"edge-edge\", \"start\": [[0, 0, 0], [1, 0, 0], [0, 1, 1], [1, 1, 1]],"           \
    " \"end\": [[0, 0, 0], [1, 0, 0], [5, 1, 1], [6, 1, 1]]},"                                     \
    "{\"kind\": \"edge-edge\", \"start\": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]],"           \
    " \"end\": [[0, 0, 0], [1, 0, 0], [-2, 0, 0], [-1, 0, 0]]}]}"

static void expect_example(const json_t *r) {
    assert_int_equal(json_array_size(imp_test_member(r, "results")), 3);
    assert_true(json_is_true(imp_test_member(r, "results.0.hit")));
    imp_test_expect_real(r, "results.0.time", 0.25, 0.0);
    assert_true(json_is_false(imp_test_member(r, "results.1.hit")));
    assert_null(imp_test_member(r, "results.1.time"));
    assert_true(json_is_true(imp_test_member(r, "results.2.hit")));
    imp_test_expect_real(r, "results.2.time", 0.25, 0.0);
}

static void test_example(void **state) {
    (void)state;
    json_t *r = imp_test_post_ok(&daemon_, "/v1/ccd", EXAMPLE);
    expect_example(r);
    json_decref(r);
}

static void test_batch_item(void **state) {
    (void)state;
    json_t *r = imp_test_post_ok(&daemon_, "/v1/batch",
                                 "{\"requests\": [{\"op\": \"ccd\", \"body\": " EXAMPLE "}]}");
    assert_int_equal(json_integer_value(imp_test_member(r, "results.0.status")), 200);
    expect_example(imp_test_member(r, "results.0.body"));
    json_decref(r);
}

static void put_points(imp_test_text *t, const double p[4][3]) {
    for (int k = 0; k < 4; k++)
        imp_test_printf(t, "%s[%.17g,%.17g,%.17g]", k ? "," : "[", p[k][0], p[k][1], p[k][2]);
    imp_test_printf(t, "]");
}

static void put_query(imp_test_text *t, const imp_ccd_query *q) {
    imp_test_printf(t, "{\"kind\":\"%s\",\"start\":",
                    q->kind == IMP_CCD_VERTEX_FACE ? "vertex-face" : "edge-edge");
    put_points(t, q->start);
    imp_test_printf(t, ",\"end\":");
    put_points(t, q->end);
    imp_test_printf(t, "}");
}

static void test_handcrafted_benchmark(void **state) {
    (void)state;
    ccd_set set = {0};
    if (!ccd_data_present()) {
        print_message("note: %s is absent (a clone without shared/); skipped\n", ccd_data_dir());
        skip();
    }
    if (ccd_load_handcrafted(&set))
        fail_msg("cannot read %s/handcrafted (set IMPACT_CCD_DATA)", ccd_data_dir());
    size_t fp = 0, fn = 0, hits = 0;
    for (size_t from = 0; from < set.n; from += MAX_QUERIES) {
        size_t to = from + MAX_QUERIES < set.n ? from + MAX_QUERIES : set.n;
        imp_test_text t = {0};
        imp_test_printf(&t, "{\"queries\":[");
        for (size_t i = from; i < to; i++) {
            if (i > from) imp_test_printf(&t, ",");
            put_query(&t, &set.q[i]);
        }
        imp_test_printf(&t, "]}");
        json_t *r = imp_test_post_ok(&daemon_, "/v1/ccd", t.p);
        free(t.p);
        const json_t *results = json_object_get(r, "results");
        assert_int_equal(json_array_size(results), to - from);
        for (size_t i = from; i < to; i++) {
            const json_t *o = json_array_get(results, i - from);
            int hit = json_is_true(json_object_get(o, "hit"));
            hits += (size_t)hit;
            fp += (size_t)(hit && !set.truth[i]);
            fn += (size_t)(!hit && set.truth[i]);
            if (hit) {
                double time = json_number_value(json_object_get(o, "time"));
                assert_true(time >= 0.0 && time <= 1.0);
            }
        }
        json_decref(r);
    }
    print_message("handcrafted over HTTP: %zu queries, %zu hits, %zu false positives, "
                  "%zu false negatives\n",
                  set.n, hits, fp, fn);
    assert_int_equal(set.n, 7279);
    assert_int_equal(hits, 435);
    assert_int_equal(fp, 0);
    assert_int_equal(fn, 0);
    ccd_set_free(&set);
}

static void test_query_limit(void **state) {
    (void)state;
    imp_test_text t = {0};
    imp_test_printf(&t, "{\"queries\":[");
    for (int i = 0; i <= MAX_QUERIES; i++)
        imp_test_printf(&t,
                        "%s{\"kind\":\"edge-edge\",\"start\":[[0,0,0],[1,0,0],[0,1,0],[0,0,1]],"
                        "\"end\":[[0,0,0],[1,0,0],[0,1,0],[0,0,1]]}",
                        i ? "," : "");
    imp_test_printf(&t, "]}");
    imp_test_expect_problem(&daemon_, "/v1/ccd", t.p, 422, "limit-exceeded", "/queries",
                            "1001 queries, the limit is 1000");
    free(t.p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example),
        cmocka_unit_test(test_batch_item),
        cmocka_unit_test(test_handcrafted_benchmark),
        cmocka_unit_test(test_query_limit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

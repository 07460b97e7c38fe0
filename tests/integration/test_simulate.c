/*
 * test_simulate.c - POST /v1/scenes/simulate through HTTP.
 *
 * DESIGN
 * A known answer (two equal balls head-on with e = 1 swap velocities at the
 * exact contact time), a bounce under request gravity, record "none",
 * max_events against the server's --max-events, ids echoed, and the error
 * contract: status, problem+json and the JSON Pointer of each bad field.
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

static imp_test_daemon daemon_;

static int setup(void **state) {
    (void)state;
    static const char *const args[] = {"--max-events", "1000", NULL};
    return imp_test_daemon_start(&daemon_, args, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    return imp_test_daemon_stop(&daemon_, SIGTERM) == 0 ? 0 : -1;
}

/* POSTs `json` to /v1/scenes/simulate; returns the parsed reply (caller decrefs), its status
 * and content type. */
static json_t *post(const char *json, long *status, char *ctype, size_t ctype_len) {
    return imp_test_post_json(&daemon_, "/v1/scenes/simulate", "application/json", json, status,
                              ctype, ctype_len);
}

static double num(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static double comp(const json_t *o, const char *key, size_t i) {
    const json_t *v = json_array_get(json_object_get(o, key), i);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static void test_head_on_swap(void **state) {
    (void)state;
    long status;
    char ct[128];
    json_t *r = post("{\"bodies\": [{\"id\": \"left\", \"radius\": 0.5, \"position\": [0, 0],"
                     " \"velocity\": [1, 0]},"
                     " {\"radius\": 0.5, \"position\": [3, 0], \"velocity\": [-1, 0]}],"
                     " \"horizon\": 3}",
                     &status, ct, sizeof ct);
    assert_int_equal(status, 200);
    assert_non_null(strstr(ct, "application/json"));
    assert_true(num(r, "time") == 3.0);
    json_t *events = json_object_get(r, "events");
    assert_int_equal(json_array_size(events), 1);
    json_t *e = json_array_get(events, 0);
    assert_true(num(e, "time") == 1.0);
    assert_string_equal(json_string_value(json_object_get(e, "a")), "left");
    assert_int_equal(json_integer_value(json_object_get(e, "b")), 1);
    assert_true(comp(e, "point", 0) == 1.5 && comp(e, "normal", 0) == 1.0);
    assert_true(comp(e, "impulse", 0) == 2.0);
    json_t *bodies = json_object_get(r, "bodies");
    assert_int_equal(json_array_size(bodies), 2);
    json_t *b0 = json_array_get(bodies, 0), *b1 = json_array_get(bodies, 1);
    assert_string_equal(json_string_value(json_object_get(b0, "id")), "left");
    assert_true(comp(b0, "velocity", 0) == -1.0 && comp(b1, "velocity", 0) == 1.0);
    assert_true(fabs(comp(b0, "position", 0) + 1) < 1e-15);
    assert_true(fabs(comp(b1, "position", 0) - 4) < 1e-15);
    json_t *stats = json_object_get(r, "stats");
    assert_int_equal(json_integer_value(json_object_get(stats, "events")), 1);
    assert_string_equal(json_string_value(json_object_get(stats, "stopped")), "horizon");
    assert_true(num(stats, "elapsed_ms") >= 0);
    json_decref(r);
}

static void test_record_none_and_gravity(void **state) {
    (void)state;
    long status;
    /* a ball dropped 4.905 onto a floor under g = 9.81 lands at t = 1 and, with e = 1, is back
     * at the top at t = 2 */
    json_t *r = post("{\"bodies\": [{\"radius\": 0.5, \"position\": [0, 5.405]},"
                     " {\"shape\": {\"type\": \"halfspace\", \"normal\": [0, 1], \"offset\": 0},"
                     " \"position\": [0, 0], \"static\": true}],"
                     " \"horizon\": 2, \"gravity\": [0, -9.81], \"record\": \"none\"}",
                     &status, NULL, 0);
    assert_int_equal(status, 200);
    assert_null(json_object_get(r, "events"));
    json_t *stats = json_object_get(r, "stats");
    assert_int_equal(json_integer_value(json_object_get(stats, "events")), 1);
    json_t *b0 = json_array_get(json_object_get(r, "bodies"), 0);
    assert_true(fabs(comp(b0, "position", 1) - 5.405) < 1e-12);
    assert_true(fabs(comp(b0, "velocity", 1)) < 1e-12);
    json_decref(r);
}

static void test_max_events_stop(void **state) {
    (void)state;
    long status;
    /* a ball between two walls 2 apart at speed 1: one contact per unit of time */
    const char *json =
        "{\"bodies\": [{\"radius\": 0.5, \"position\": [0, 0], \"velocity\": [1, 0]},"
        " {\"shape\": {\"type\": \"halfspace\", \"normal\": [-1, 0], \"offset\": -1.5},"
        " \"position\": [0, 0], \"static\": true},"
        " {\"shape\": {\"type\": \"halfspace\", \"normal\": [1, 0], \"offset\": -1.5},"
        " \"position\": [0, 0], \"static\": true}],"
        " \"horizon\": 100000, \"max_events\": 1000}";
    json_t *r = post(json, &status, NULL, 0);
    assert_int_equal(status, 200);
    json_t *stats = json_object_get(r, "stats");
    assert_string_equal(json_string_value(json_object_get(stats, "stopped")), "max_events");
    assert_int_equal(json_integer_value(json_object_get(stats, "events")), 1000);
    assert_int_equal(json_array_size(json_object_get(r, "events")), 1000);
    /* contacts at 1, 3, 5, ...: the 1001st, not processed, at 2001 */
    assert_true(fabs(num(r, "time") - 2001) < 1e-9);
    json_decref(r);
}

static void expect_problem(const char *json, long want_status, const char *want_pointer) {
    imp_test_expect_problem(&daemon_, "/v1/scenes/simulate", json, want_status, NULL, want_pointer,
                            NULL);
}

static void test_errors(void **state) {
    (void)state;
    expect_problem("{\"horizon\": 1}", 400, "/bodies");
    expect_problem("{\"bodies\": {}, \"horizon\": 1}", 400, "/bodies");
    expect_problem("{\"bodies\": []}", 400, "/horizon");
    expect_problem("{\"bodies\": [], \"horizon\": 0}", 422, "/horizon");
    expect_problem("{\"bodies\": [], \"horizon\": \"1\"}", 400, "/horizon");
    expect_problem("{\"bodies\": [{\"radius\": 1, \"position\": [0, 0]}], \"horizon\": 1,"
                   " \"gravity\": [0, 0, -9.81]}",
                   400, "/gravity");
    expect_problem("{\"bodies\": [], \"horizon\": 1, \"gravity\": [0, \"down\"]}", 400,
                   "/gravity/1");
    expect_problem("{\"bodies\": [], \"horizon\": 1, \"max_events\": 1.5}", 400, "/max_events");
    expect_problem("{\"bodies\": [], \"horizon\": 1, \"max_events\": -1}", 422, "/max_events");
    expect_problem("{\"bodies\": [], \"horizon\": 1, \"max_events\": 1001}", 422, "/max_events");
    expect_problem("{\"bodies\": [], \"horizon\": 1, \"record\": \"all\"}", 422, "/record");
    expect_problem("{\"bodies\": [], \"horizon\": 1, \"record\": 0}", 400, "/record");
    expect_problem("{\"bodies\": [{\"radius\": 1, \"position\": [0, 0]},"
                   " {\"radius\": -1, \"position\": [3, 0]}], \"horizon\": 1}",
                   422, "/bodies/1/radius");
    expect_problem("{\"bodies\": [{\"shape\": {\"type\": \"segment\", \"a\": [0, 0, -1],"
                   " \"b\": [0, 0, 1]}, \"position\": [0, 0, 0]}], \"horizon\": 1}",
                   422, "/bodies/0/shape/type");
    expect_problem("{\"bodies\": [{\"shape\": {\"type\": \"halfspace\", \"normal\": [0, 1],"
                   " \"offset\": 0}, \"position\": [0, 0]}], \"horizon\": 1}",
                   422, "/bodies/0/static");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head_on_swap),
        cmocka_unit_test(test_record_none_and_gravity),
        cmocka_unit_test(test_max_events_stop),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

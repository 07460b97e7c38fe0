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

/* Bodies spinning alone end at orientation = given + spin * horizon (2D an angle, 3D a
 * quaternion [w, x, y, z]) with the spin they had; a body that names no rotation reports its
 * orientation and zero spin. */
static void test_spinning_alone(void **state) {
    (void)state;
    long status;
    char ct[128];
    json_t *r =
        post("{\"horizon\": 2, \"bodies\": ["
             "{\"shape\": {\"type\": \"polygon\", \"vertices\": [[-1,-1],[1,-1],[1,1],[-1,1]]},"
             " \"position\": [0, 0], \"velocity\": [0.5, 0], \"angular_velocity\": 0.75},"
             "{\"shape\": {\"type\": \"box\", \"half_extents\": [1, 0.5]}, \"position\": [10, 0],"
             " \"orientation\": 0.25, \"angular_velocity\": -0.5},"
             "{\"radius\": 1, \"position\": [-10, 0], \"orientation\": 0.5},"
             "{\"shape\": {\"type\": \"box\", \"half_extents\": [1, 0.5]}, \"position\": [0, 10],"
             " \"angular_velocity\": 2}]}",
             &status, ct, sizeof ct);
    assert_int_equal(status, 200);
    json_t *bodies = json_object_get(r, "bodies");
    json_t *b0 = json_array_get(bodies, 0), *b1 = json_array_get(bodies, 1),
           *b2 = json_array_get(bodies, 2);
    printf("2D: orientations %.17g %.17g %.17g\n", num(b0, "orientation"), num(b1, "orientation"),
           num(b2, "orientation"));
    assert_true(num(b0, "orientation") == 1.5); /* 0.75 rad/s for 2 s, exactly */
    assert_true(num(b0, "angular_velocity") == 0.75);
    assert_true(comp(b0, "position", 0) == 1.0);
    assert_true(fabs(num(b1, "orientation") - (0.25 - 1.0)) <= 1e-15);
    assert_true(num(b1, "angular_velocity") == -0.5);
    assert_true(fabs(num(b2, "orientation") - 0.5) <= 1e-15);
    assert_true(num(b2, "angular_velocity") == 0);
    /* 4 rad is reported in (-pi, pi] */
    double wrapped = num(json_array_get(bodies, 3), "orientation");
    assert_true(fabs(wrapped - (4 - 2 * 3.14159265358979323846)) <= 1e-15);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "stats"), "events")), 0);
    json_decref(r);

    r = post("{\"horizon\": 0.5, \"bodies\": [{\"shape\": {\"type\": \"box\", \"half_extents\":"
             " [1, 0.5, 0.25]}, \"position\": [0, 0, 0], \"angular_velocity\": [0, 0, 2]}]}",
             &status, ct, sizeof ct);
    assert_int_equal(status, 200);
    json_t *b = json_array_get(json_object_get(r, "bodies"), 0);
    printf("3D: orientation [%.17g, %.17g, %.17g, %.17g]\n", comp(b, "orientation", 0),
           comp(b, "orientation", 1), comp(b, "orientation", 2), comp(b, "orientation", 3));
    assert_true(fabs(comp(b, "orientation", 0) - cos(0.5)) <= 1e-15);
    assert_true(comp(b, "orientation", 1) == 0 && comp(b, "orientation", 2) == 0);
    assert_true(fabs(comp(b, "orientation", 3) - sin(0.5)) <= 1e-15);
    assert_true(comp(b, "angular_velocity", 2) == 2.0);
    json_decref(r);
}

/* A bar spinning in place next to a wall strikes it: one contact, after which the bar moves
 * off the wall and spins slower (e = k = 1: energy kept, linear plus rotational). */
static void test_spinning_bar_wall(void **state) {
    (void)state;
    long status;
    char ct[128];
    json_t *r = post("{\"horizon\": 1, \"bodies\": ["
                     "{\"id\": \"bar\", \"shape\": {\"type\": \"box\", \"half_extents\": [1, 0.2]},"
                     " \"position\": [0, 0], \"orientation\": 1.5707963267948966,"
                     " \"angular_velocity\": 2},"
                     "{\"id\": \"wall\", \"shape\": {\"type\": \"halfspace\", \"normal\": [-1, 0],"
                     " \"offset\": -0.9}, \"position\": [0, 0], \"static\": true}]}",
                     &status, ct, sizeof ct);
    assert_int_equal(status, 200);
    json_t *events = json_object_get(r, "events");
    assert_int_equal(json_array_size(events), 1);
    json_t *e = json_array_get(events, 0);
    printf("bar meets the wall at %.17g, point (%.17g, %.17g)\n", num(e, "time"),
           comp(e, "point", 0), comp(e, "point", 1));
    assert_true(fabs(num(e, "time") - 0.44190205232663421) <= 1e-9);
    assert_true(fabs(comp(e, "point", 0) - 0.9) <= 1e-9);
    json_t *bar = json_array_get(json_object_get(r, "bodies"), 0);
    double vx = comp(bar, "velocity", 0), vy = comp(bar, "velocity", 1),
           w = num(bar, "angular_velocity");
    double I = (1.0 + 0.04) / 3.0; /* a unit-mass box: (w^2 + h^2) / 3 of its half extents */
    double e0 = 0.5 * I * 4, e1 = 0.5 * (vx * vx + vy * vy) + 0.5 * I * w * w;
    assert_true(vx < 0 && w < 2);
    assert_true(fabs(e1 - e0) <= 1e-12 * e0);
    json_decref(r);
}

/* 125 tumbling boxes for a long horizon under a 100 ms budget: 200 with the state reached,
 * stopped "time_budget", every body with a unit quaternion. */
static void test_tumbling_time_budget(void **state) {
    (void)state;
    size_t cap = 64 * 1024, len = 0;
    char *req = malloc(cap);
    assert_non_null(req);
    len += (size_t)snprintf(req + len, cap - len,
                            "{\"horizon\": 1e5, \"time_budget_ms\": 100, \"record\": \"none\", "
                            "\"bodies\": [");
    uint32_t x = 12345;
    for (int i = 0; i < 125; ++i) {
        double r[6];
        for (int k = 0; k < 6; ++k) {
            x = x * 1664525u + 1013904223u; /* a fixed sequence in [-1, 1) */
            r[k] = (double)(x >> 8) / 8388608.0 - 1.0;
        }
        len += (size_t)snprintf(
            req + len, cap - len,
            "%s{\"shape\": {\"type\": \"box\", \"half_extents\": [0.3, 0.2, 0.25]},"
            " \"position\": [%d, %d, %d], \"velocity\": [%g, %g, %g],"
            " \"angular_velocity\": [%g, %g, %g]}",
            i ? ", " : "", i % 5, i / 5 % 5, i / 25, r[0], r[1], r[2], 3 * r[3], 3 * r[4],
            3 * r[5]);
    }
    len += (size_t)snprintf(req + len, cap - len, "]}");
    assert_true(len < cap);
    long status;
    char ct[128];
    json_t *reply = post(req, &status, ct, sizeof ct);
    free(req);
    assert_int_equal(status, 200);
    json_t *stats = json_object_get(reply, "stats");
    printf("tumbling boxes: %lld contacts by t = %.6g in %.3g ms, stopped %s\n",
           (long long)json_integer_value(json_object_get(stats, "events")), num(reply, "time"),
           num(stats, "elapsed_ms"), json_string_value(json_object_get(stats, "stopped")));
    assert_string_equal(json_string_value(json_object_get(stats, "stopped")), "time_budget");
    assert_true(num(reply, "time") < 1e5);
    json_t *bodies = json_object_get(reply, "bodies");
    assert_int_equal(json_array_size(bodies), 125);
    for (size_t i = 0; i < 125; ++i) {
        json_t *b = json_array_get(bodies, i);
        double n = 0;
        for (size_t k = 0; k < 4; ++k)
            n += comp(b, "orientation", k) * comp(b, "orientation", k);
        assert_true(fabs(n - 1) <= 1e-12);
    }
    json_decref(reply);
}

/* One body (its JSON) dropped on the floor y = 0 under g = 9.81 until the horizon, no
 * contacts recorded. */
static json_t *post_on_floor(const char *body, double horizon, long *status) {
    char req[1024];
    int n =
        snprintf(req, sizeof req,
                 "{\"bodies\": [%s, {\"shape\": {\"type\": \"halfspace\", \"normal\": [0, 1],"
                 " \"offset\": 0}, \"position\": [0, 0], \"static\": true}], \"horizon\": %.17g,"
                 " \"gravity\": [0, -9.81], \"record\": \"none\"}",
                 body, horizon);
    assert_true(n > 0 && (size_t)n < sizeof req);
    return post(req, status, NULL, 0);
}

static void test_record_none_and_gravity(void **state) {
    (void)state;
    long status;
    /* a ball dropped 4.905 onto a floor under g = 9.81 lands at t = 1 and, with e = 1, is back
     * at the top at t = 2 */
    json_t *r = post_on_floor("{\"radius\": 0.5, \"position\": [0, 5.405]}", 2, &status);
    assert_int_equal(status, 200);
    assert_null(json_object_get(r, "events"));
    json_t *stats = json_object_get(r, "stats");
    assert_int_equal(json_integer_value(json_object_get(stats, "events")), 1);
    json_t *b0 = json_array_get(json_object_get(r, "bodies"), 0);
    assert_true(fabs(comp(b0, "position", 1) - 5.405) < 1e-12);
    assert_true(fabs(comp(b0, "velocity", 1)) < 1e-12);
    json_decref(r);
}

/* A box dropped tilted and spinning onto a floor under gravity, with rotation: it tumbles
 * and comes to rest on a face (asleep), and the run reaches the horizon, not max_events. */
static void test_turning_box_settles(void **state) {
    (void)state;
    long status;
    json_t *r = post_on_floor("{\"shape\": {\"type\": \"box\", \"half_extents\": [0.5, 0.5]},"
                              " \"position\": [0, 2], \"orientation\": 0.3,"
                              " \"angular_velocity\": 2, \"restitution\": 0.5}",
                              10, &status);
    assert_int_equal(status, 200);
    json_t *stats = json_object_get(r, "stats");
    assert_string_equal(json_string_value(json_object_get(stats, "stopped")), "horizon");
    assert_true(json_integer_value(json_object_get(stats, "sleeps")) >= 1);
    json_t *b0 = json_array_get(json_object_get(r, "bodies"), 0);
    /* on a face: the centre 0.5 above the floor, the orientation a multiple of pi/2 */
    double y = comp(b0, "position", 1), a = num(b0, "orientation");
    double q = a / (0.5 * 3.14159265358979323846);
    printf("box at rest: y %.17g, orientation %.17g, %lld contacts\n", y, a,
           (long long)json_integer_value(json_object_get(stats, "events")));
    assert_true(fabs(y - 0.5) <= 1e-7 && fabs(q - round(q)) <= 1e-6);
    assert_true(comp(b0, "velocity", 0) == 0 && comp(b0, "velocity", 1) == 0);
    assert_true(num(b0, "angular_velocity") == 0);
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
        cmocka_unit_test(test_head_on_swap),        cmocka_unit_test(test_record_none_and_gravity),
        cmocka_unit_test(test_turning_box_settles), cmocka_unit_test(test_spinning_alone),
        cmocka_unit_test(test_spinning_bar_wall),   cmocka_unit_test(test_tumbling_time_budget),
        cmocka_unit_test(test_max_events_stop),     cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * test_validate.c - POST /v1/validate through HTTP.
 *
 * DESIGN
 * Known answers (a bullet through a thin wall, a valid move returned bit
 * for bit, a corner slide, a moving door, a 3D floor, a speed clamp,
 * max_iterations 0, ids echoed as given or as the index), the same move as
 * a /v1/batch item, and every 4xx case with its status, content type,
 * problem type and JSON Pointer; the world limit against a daemon started
 * with --max-bodies 10.
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

/* The skin of core/tolerance.h (IMP_MOVE_SKIN_REL, relative to the move's scale); the corrected
 * positions below are the contact backed off by it. */
#define SKIN_REL 1e-10

static imp_test_daemon daemon_;

static int setup(void **state) {
    (void)state;
    static const char *const args[] = {"--max-bodies", "10", NULL};
    return imp_test_daemon_start(&daemon_, args, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    return imp_test_daemon_stop(&daemon_, SIGTERM) == 0 ? 0 : -1;
}

static json_t *post_text(const char *path, const char *ct, const char *body, long *status,
                         char *content_type, size_t ct_cap) {
    return imp_test_post_json(&daemon_, path, ct, body, status, content_type, ct_cap);
}

static json_t *validate_ok(const char *body) {
    return imp_test_post_ok(&daemon_, "/v1/validate", body);
}

static json_t *member(const json_t *o, const char *path) { return imp_test_member(o, path); }

static void expect_vec(const json_t *r, const char *path, const double *want, size_t n,
                       double tol) {
    imp_test_expect_vec(r, path, want, n, tol);
}

static void expect_real(const json_t *r, const char *path, double want, double tol) {
    imp_test_expect_real(r, path, want, tol);
}

static void expect_str(const json_t *r, const char *path, const char *want) {
    const char *got = json_string_value(member(r, path));
    if (!got || strcmp(got, want) != 0) fail_msg("%s = %s, want %s", path, got ? got : "-", want);
}

#define VEC2(path, x, y, tol)                                                                      \
    do {                                                                                           \
        const double w_[2] = {(x), (y)};                                                           \
        expect_vec(r, (path), w_, 2, (tol));                                                       \
    } while (0)
#define VEC3(path, x, y, z, tol)                                                                   \
    do {                                                                                           \
        const double w_[3] = {(x), (y), (z)};                                                      \
        expect_vec(r, (path), w_, 3, (tol));                                                       \
    } while (0)

/* ---- known answers ----------------------------------------------------------------------- */

static const char BULLET[] =
    "{\"body\": {\"id\": \"bullet\", \"radius\": 0.05, \"position\": [0, 0]},"
    " \"to\": [10, 0], \"dt\": 0.1,"
    " \"world\": [{\"id\": \"wall-2\", \"shape\": {\"type\": \"segment\", \"a\": [0, -1],"
    " \"b\": [0, 1]}, \"position\": [5, 0], \"static\": true},"
    " {\"shape\": {\"type\": \"box\", \"half_extents\": [1, 1]}, \"position\": [50, 50]}]}";

static void test_bullet_through_wall(void **state) {
    (void)state;
    json_t *r = validate_ok(BULLET);
    assert_true(json_is_false(member(r, "valid")));
    assert_int_equal(json_array_size(member(r, "violations")), 1);
    expect_str(r, "violations.0.kind", "tunneling");
    expect_str(r, "violations.0.obstacle", "wall-2");
    expect_real(r, "violations.0.time", 0.0495, 1e-17);
    VEC2("violations.0.point", 5, 0, 1e-15);
    VEC2("violations.0.normal", 1, 0, 0);
    VEC2("position", 4.95 - SKIN_REL * 10, 0, 1e-14);
    VEC2("velocity", 0, 0, 0);
    expect_real(r, "iterations", 1, 0);
    assert_true(json_is_false(member(r, "blocked")));
    json_decref(r);

    /* max_iterations 0: blocked, back to the start */
    char body[1024];
    snprintf(body, sizeof body, "%.*s, \"max_iterations\": 0}", (int)(sizeof BULLET - 2), BULLET);
    r = validate_ok(body);
    assert_true(json_is_false(member(r, "valid")));
    VEC2("position", 0, 0, 0);
    VEC2("velocity", 0, 0, 0);
    assert_true(json_is_true(member(r, "blocked")));
    json_decref(r);
}

static void test_valid_move_unchanged(void **state) {
    (void)state;
    /* grazing along a floor, a far obstacle, an id that is an integer */
    json_t *r =
        validate_ok("{\"body\": {\"shape\": {\"type\": \"box\", \"half_extents\": [0.5, 0.5]},"
                    " \"position\": [0.1, 0.5], \"velocity\": [99, 99]},"
                    " \"to\": [3.3, 0.5], \"dt\": 0.25, \"max_speed\": 12.8,"
                    " \"world\": [{\"id\": 7, \"shape\": {\"type\": \"segment\", \"a\": [-5, 0], "
                    "\"b\": [5, 0]},"
                    " \"position\": [0, 0]},"
                    " {\"shape\": {\"type\": \"halfspace\", \"normal\": [0, 2], \"offset\": 0},"
                    " \"position\": [0, 0], \"static\": true}]}");
    assert_true(json_is_true(member(r, "valid")));
    assert_int_equal(json_array_size(member(r, "violations")), 0);
    VEC2("position", 3.3, 0.5, 0);
    VEC2("velocity", (3.3 - 0.1) / 0.25, 0, 0);
    json_decref(r);
}

static void test_corner_slide(void **state) {
    (void)state;
    json_t *r = validate_ok(
        "{\"body\": {\"radius\": 0.5, \"position\": [0, 0]}, \"to\": [3, 2], \"dt\": 1,"
        " \"world\": [{\"shape\": {\"type\": \"segment\", \"a\": [0, -5], \"b\": [0, 5]},"
        " \"position\": [2, 0]},"
        " {\"shape\": {\"type\": \"capsule\", \"a\": [-5, 0], \"b\": [5, 0], \"radius\": 0},"
        " \"position\": [0, 2]}]}");
    assert_int_equal(json_array_size(member(r, "violations")), 3);
    expect_str(r, "violations.0.kind", "tunneling");
    expect_real(r, "violations.0.obstacle", 0, 0);
    expect_real(r, "violations.0.time", 0.5, 1e-15);
    expect_str(r, "violations.1.kind", "tunneling");
    expect_real(r, "violations.1.obstacle", 1, 0);
    expect_real(r, "violations.1.time", 0.75, 1e-15);
    expect_str(r, "violations.2.kind", "penetration");
    expect_real(r, "violations.2.obstacle", 1, 0);
    expect_real(r, "violations.2.time", 1, 0);
    expect_real(r, "violations.2.depth", 0.5, 1e-15);
    double s13 = sqrt(13.0), skin = SKIN_REL * s13;
    VEC2("position", 1.5 - 3 * skin / s13, 1.5 - skin, 1e-14);
    VEC2("velocity", 0, 0, 0);
    expect_real(r, "iterations", 2, 0);
    json_decref(r);
}

static void test_moving_door(void **state) {
    (void)state;
    json_t *r =
        validate_ok("{\"body\": {\"radius\": 0.5, \"position\": [0, 0]}, \"to\": [4, 0], \"dt\": 1,"
                    " \"world\": [{\"id\": \"door\", \"shape\": {\"type\": \"box\","
                    " \"half_extents\": [0.1, 0.5]}, \"position\": [3, 2], \"velocity\": [0, -4],"
                    " \"static\": true}]}");
    assert_int_equal(json_array_size(member(r, "violations")), 1);
    expect_str(r, "violations.0.kind", "tunneling");
    expect_str(r, "violations.0.obstacle", "door");
    expect_real(r, "violations.0.time", 0.6, 1e-15);
    VEC2("violations.0.point", 2.9, 0, 1e-15);
    VEC2("position", 2.4 - SKIN_REL * 4, 0, 1e-14);
    VEC2("velocity", 0, 0, 0);
    json_decref(r);
}

static void test_floor_3d_and_speed(void **state) {
    (void)state;
    json_t *r = validate_ok(
        "{\"body\": {\"radius\": 1, \"position\": [0, 5, 0]}, \"to\": [4, -3, 0], \"dt\": 2,"
        " \"world\": [{\"id\": \"floor\", \"shape\": {\"type\": \"halfspace\","
        " \"normal\": [0, 1, 0], \"offset\": 0}, \"position\": [0, 0, 0], \"static\": true}]}");
    assert_int_equal(json_array_size(member(r, "violations")), 2);
    expect_str(r, "violations.0.kind", "tunneling");
    expect_real(r, "violations.0.time", 1, 1e-15);
    VEC3("violations.0.point", 2, 0, 0, 1e-15);
    VEC3("violations.0.normal", 0, -1, 0, 1e-15);
    expect_str(r, "violations.1.kind", "penetration");
    expect_str(r, "violations.1.obstacle", "floor");
    expect_real(r, "violations.1.depth", 4, 1e-15);
    double skin = SKIN_REL * sqrt(80.0), s5 = sqrt(5.0);
    VEC3("position", 4 - skin / s5, 1 + 2 * skin / s5, 0, 1e-14);
    VEC3("velocity", 2, 0, 0, 1e-15);
    json_decref(r);

    /* speed: clamped to max_speed along the same direction */
    r = validate_ok("{\"body\": {\"radius\": 0.5, \"position\": [0, 0]}, \"to\": [6, 8],"
                    " \"dt\": 1, \"world\": [], \"max_speed\": 5}");
    assert_true(json_is_false(member(r, "valid")));
    assert_int_equal(json_array_size(member(r, "violations")), 1);
    expect_str(r, "violations.0.kind", "speed");
    expect_real(r, "violations.0.speed", 10, 0);
    VEC2("position", 3, 4, 1e-15);
    VEC2("velocity", 3, 4, 1e-15);
    json_decref(r);
}

static void test_in_batch(void **state) {
    (void)state;
    char body[2048];
    snprintf(body, sizeof body,
             "{\"requests\": [{\"op\": \"validate\", \"body\": %s},"
             " {\"op\": \"validate\", \"body\": {\"body\": {\"radius\": 1, \"position\": [0, 0]},"
             " \"to\": [1, 0], \"dt\": 0, \"world\": []}}]}",
             BULLET);
    long status;
    json_t *r = post_text("/v1/batch", "application/json", body, &status, NULL, 0);
    assert_int_equal(status, 200);
    json_t *direct = validate_ok(BULLET);
    assert_int_equal(json_integer_value(member(r, "results.0.status")), 200);
    assert_true(json_equal(member(r, "results.0.body"), direct));
    assert_int_equal(json_integer_value(member(r, "results.1.status")), 422);
    assert_string_equal(json_string_value(member(r, "results.1.body.pointer")), "/dt");
    json_decref(direct);
    json_decref(r);
}

/* ---- errors ------------------------------------------------------------------------------ */

#define BODY2 "\"body\": {\"radius\": 0.5, \"position\": [0, 0]}"
#define REST2 "\"to\": [1, 0], \"dt\": 1"
#define WALL2                                                                                      \
    "{\"shape\": {\"type\": \"segment\", \"a\": [0, -1], \"b\": [0, 1]}, \"position\": [5, 0]}"

static void expect_problem(const char *json, long want_status, const char *want_type,
                           const char *want_pointer, const char *want_detail) {
    imp_test_expect_problem(&daemon_, "/v1/validate", json, want_status, want_type, want_pointer,
                            want_detail);
}

static void test_errors_400(void **state) {
    (void)state;
    expect_problem("{}", 400, "missing-field", "/body", "body is required");
    expect_problem("[1]", 400, "wrong-type", "", NULL);
    expect_problem("{" BODY2 ", \"dt\": 1, \"world\": []}", 400, "missing-field", "/to", NULL);
    expect_problem("{" BODY2 ", \"to\": [1, 0], \"world\": []}", 400, "missing-field", "/dt", NULL);
    expect_problem("{" BODY2 ", " REST2 "}", 400, "missing-field", "/world", NULL);
    expect_problem("{" BODY2 ", " REST2 ", \"world\": {}}", 400, "wrong-type", "/world", NULL);
    expect_problem("{" BODY2 ", " REST2 ", \"world\": [3]}", 400, "wrong-type", "/world/0", NULL);
    expect_problem("{" BODY2 ", " REST2 ", \"world\": [" WALL2 ", {\"radius\": 1}]}", 400,
                   "missing-field", "/world/1/position", NULL);
    expect_problem("{" BODY2 ", \"to\": \"there\", \"dt\": 1, \"world\": []}", 400, "wrong-type",
                   "/to", NULL);
    expect_problem("{" BODY2 ", " REST2 ", \"world\": [], \"max_iterations\": 2.5}", 400,
                   "wrong-type", "/max_iterations", NULL);
    expect_problem("{" BODY2 ", " REST2 ", \"world\": [], \"max_iterations\": \"5\"}", 400,
                   "wrong-type", "/max_iterations", NULL);
    expect_problem("{" BODY2 ", " REST2 ", \"world\": [], \"max_speed\": null}", 400, "wrong-type",
                   "/max_speed", NULL);
    expect_problem("{" BODY2 ", \"to\": [1, 0], \"dt\": \"1\", \"world\": []}", 400, "wrong-type",
                   "/dt", NULL);
    /* mixed dimensions: to, an obstacle's position, a shape vector */
    expect_problem("{" BODY2 ", \"to\": [1, 0, 0], \"dt\": 1, \"world\": []}", 400,
                   "mixed-dimensions", "/to", NULL);
    expect_problem("{" BODY2 ", " REST2 ", \"world\": [" WALL2
                   ", {\"radius\": 1, \"position\": [0, 0, 9]}]}",
                   400, "mixed-dimensions", "/world/1/position", NULL);
    expect_problem("{" BODY2 ", " REST2 ", \"world\": [{\"shape\": {\"type\": \"segment\","
                   " \"a\": [0, -1, 0], \"b\": [0, 1, 0]}, \"position\": [5, 0]}]}",
                   400, "mixed-dimensions", "/world/0/shape/a", NULL);
    expect_problem("{" BODY2 ", " REST2 ", \"world\": [],}", 400, "malformed-json", NULL, NULL);
}

static void test_errors_422(void **state) {
    (void)state;
    expect_problem("{" BODY2 ", \"to\": [1, 0], \"dt\": 0, \"world\": []}", 422, "invalid-field",
                   "/dt", "> 0");
    expect_problem("{" BODY2 ", \"to\": [1, 0], \"dt\": -1, \"world\": []}", 422, "invalid-field",
                   "/dt", NULL);
    expect_problem("{" BODY2 ", \"to\": [1e60, 0], \"dt\": 1e-10, \"world\": []}", 422,
                   "invalid-field", "/dt", "1e60");
    expect_problem("{" BODY2 ", \"to\": [1e61, 0], \"dt\": 1, \"world\": []}", 422, "invalid-field",
                   "/to/0", NULL);
    expect_problem("{" BODY2 ", " REST2 ", \"world\": [], \"max_speed\": -1}", 422, "invalid-field",
                   "/max_speed", ">= 0");
    expect_problem("{" BODY2 ", " REST2 ", \"world\": [], \"max_iterations\": -1}", 422,
                   "invalid-field", "/max_iterations", "[0, 64]");
    expect_problem("{" BODY2 ", " REST2 ", \"world\": [], \"max_iterations\": 65}", 422,
                   "invalid-field", "/max_iterations", "[0, 64]");
    expect_problem("{\"body\": {\"radius\": -0.5, \"position\": [0, 0]}, " REST2 ", \"world\": []}",
                   422, "invalid-field", "/body/radius", NULL);
    expect_problem("{" BODY2 ", " REST2 ", \"world\": [" WALL2 ", {\"shape\": {\"type\": "
                   "\"polygon\", \"vertices\": [[0, 0], [2, 0], [1, 0.2], [1, 2]]},"
                   " \"position\": [0, 9]}]}",
                   422, "invalid-geometry", "/world/1/shape/vertices/2", NULL);
    /* more than --max-bodies 10 */
    char body[4096];
    int n = snprintf(body, sizeof body, "{" BODY2 ", " REST2 ", \"world\": [");
    for (int i = 0; i < 11; ++i)
        n += snprintf(body + n, sizeof body - (size_t)n, "%s" WALL2, i ? ", " : "");
    snprintf(body + n, sizeof body - (size_t)n, "]}");
    expect_problem(body, 422, "limit-exceeded", "/world", "limit is 10");
    /* exactly 10 is fine */
    n = snprintf(body, sizeof body, "{" BODY2 ", " REST2 ", \"world\": [");
    for (int i = 0; i < 10; ++i)
        n += snprintf(body + n, sizeof body - (size_t)n, "%s" WALL2, i ? ", " : "");
    snprintf(body + n, sizeof body - (size_t)n, "]}");
    json_t *r = validate_ok(body);
    json_decref(r);
    /* unsupported pairs (3D, neither volume nor radius): an obstacle's shape against a
     * point, or the body's own (a segment, which cannot pair even with a point) */
    expect_problem("{\"body\": {\"radius\": 0, \"position\": [0, 0, 0]}, \"to\": [1, 0, 0],"
                   " \"dt\": 1, \"world\": [{\"radius\": 1, \"position\": [5, 0, 0]},"
                   " {\"shape\": {\"type\": \"segment\", \"a\": [0, -1, 0], \"b\": [0, 1, 0]},"
                   " \"position\": [9, 0, 0]}]}",
                   422, "invalid-field", "/world/1/shape/type", "not supported");
    expect_problem("{\"body\": {\"shape\": {\"type\": \"segment\", \"a\": [0, -1, 0],"
                   " \"b\": [0, 1, 0]}, \"position\": [0, 0, 0]}, \"to\": [1, 0, 0], \"dt\": 1,"
                   " \"world\": [{\"radius\": 0, \"position\": [5, 0, 0]}]}",
                   422, "invalid-field", "/body/shape/type", "not supported");
    /* a ball against a 3D box: exact, the bullet is caught at the face */
    r = validate_ok("{\"body\": {\"radius\": 0.5, \"position\": [0, 0, 0]}, \"to\": [20, 0, 0],"
                    " \"dt\": 0.1, \"world\": [{\"shape\": {\"type\": \"box\", \"half_extents\":"
                    " [0.01, 1, 1]}, \"position\": [9, 0, 0], \"static\": true}]}");
    assert_true(json_is_false(member(r, "valid")));
    json_decref(r);
    expect_problem("{\"body\": {\"shape\": {\"type\": \"halfspace\", \"normal\": [0, 1],"
                   " \"offset\": 0}, \"position\": [0, 0], \"static\": true}, " REST2
                   ", \"world\": []}",
                   422, "invalid-field", "/body/shape/type", "halfspace");
    /* a 3D box over a halfspace floor is supported */
    r = validate_ok("{\"body\": {\"shape\": {\"type\": \"box\", \"half_extents\": [1, 1, 1]},"
                    " \"position\": [0, 1, 0]}, \"to\": [1, 1, 0], \"dt\": 1,"
                    " \"world\": [{\"shape\": {\"type\": \"halfspace\", \"normal\": [0, 1, 0],"
                    " \"offset\": 0}, \"position\": [0, 0, 0], \"static\": true}]}");
    assert_true(json_is_true(member(r, "valid")));
    json_decref(r);
}

static void test_http_errors(void **state) {
    (void)state;
    char url[160];
    snprintf(url, sizeof url, "%s/v1/validate", daemon_.url);
    imp_http_result r;
    assert_int_equal(imp_http(NULL, "GET", url, NULL, NULL, 0, &r), 0);
    assert_int_equal(r.status, 405);
    assert_non_null(strstr(r.allow, "POST"));
    assert_string_equal(r.content_type, "application/problem+json");
    imp_http_result_free(&r);
    assert_int_equal(imp_http(NULL, "POST", url, "text/plain", BULLET, sizeof BULLET - 1, &r), 0);
    assert_int_equal(r.status, 415);
    assert_string_equal(r.content_type, "application/problem+json");
    imp_http_result_free(&r);
}

/* A blade (box 4 x 0.1 spinning about its centre at 1 rad/s from horizontal) and a ball of
 * radius 0.1 at (0, 1) walking along the blade's direction at t* = acos(0.15): the blade's
 * face reaches it at t*, certified to 1e-9 (core/move_check.c's unit test derives it). The
 * same blade set a quarter turn less 0.5 rad ahead lets a ball cross its disc at x = 1.5:
 * the move is valid, `to` exactly. */
static void test_spinning_blade(void **state) {
    (void)state;
    const double ts = acos(0.15);
    char req[512];
    snprintf(req, sizeof req,
             "{\"body\": {\"radius\": 0.1, \"position\": [0, 1]}, \"to\": [%.17g, %.17g],"
             " \"dt\": 2, \"world\": [{\"id\": \"blade\", \"shape\": {\"type\": \"box\","
             " \"half_extents\": [2, 0.05]}, \"position\": [0, 0], \"angular_velocity\": 1}]}",
             cos(ts), 1 + sin(ts));
    json_t *r = validate_ok(req);
    assert_true(json_is_false(member(r, "valid")));
    expect_str(r, "violations.0.kind", "tunneling");
    expect_str(r, "violations.0.obstacle", "blade");
    double t = json_real_value(member(r, "violations.0.time"));
    if (!(t <= ts + 4e-16 && ts <= t + 1e-9)) fail_msg("time %.17g, exact %.17g", t, ts);
    VEC2("violations.0.normal", sin(ts), -cos(ts), 1e-7);
    json_decref(r);
    r = validate_ok("{\"body\": {\"radius\": 0.1, \"position\": [1.5, 2]}, \"to\": [1.5, -2],"
                    " \"dt\": 1, \"obstacles\": [{\"shape\": {\"type\": \"box\", \"half_extents\":"
                    " [2, 0.05]}, \"position\": [0, 0], \"orientation\": 1.0707963267948966,"
                    " \"angular_velocity\": 1}], \"world\": []}");
    assert_true(json_is_true(member(r, "valid")));
    VEC2("position", 1.5, -2, 0);
    json_decref(r);
    /* the blade is the mover now (moving along -d* while it spins), the ball stands still:
     * the same relative motion, the same t* */
    snprintf(req, sizeof req,
             "{\"body\": {\"shape\": {\"type\": \"box\", \"half_extents\": [2, 0.05]},"
             " \"position\": [0, 0], \"angular_velocity\": 1}, \"to\": [%.17g, %.17g],"
             " \"dt\": 2, \"world\": [{\"id\": \"ball\", \"radius\": 0.1, \"position\": [0, 1]}]}",
             -cos(ts), -sin(ts));
    r = validate_ok(req);
    expect_str(r, "violations.0.obstacle", "ball");
    t = json_real_value(member(r, "violations.0.time"));
    if (!(t <= ts + 4e-16 && ts <= t + 1e-9)) fail_msg("mover: time %.17g, exact %.17g", t, ts);
    json_decref(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bullet_through_wall), cmocka_unit_test(test_valid_move_unchanged),
        cmocka_unit_test(test_corner_slide),        cmocka_unit_test(test_moving_door),
        cmocka_unit_test(test_floor_3d_and_speed),  cmocka_unit_test(test_in_batch),
        cmocka_unit_test(test_errors_400),          cmocka_unit_test(test_errors_422),
        cmocka_unit_test(test_http_errors),         cmocka_unit_test(test_spinning_blade),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

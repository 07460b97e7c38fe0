/*
 * test_shapes.c - the shapes of the contract through HTTP: every
 * geometric rejection is a 422 problem with the pointer of the value at
 * fault (the vertex where a polygon's turn flips, the zero half extent,
 * the all-zero quaternion, ...), and endpoints that take spheres only say
 * so at the shape's type.
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

static imp_test_daemon daemon_;

static int setup(void **state) {
    (void)state;
    return imp_test_daemon_start(&daemon_, NULL, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    return imp_test_daemon_stop(&daemon_, SIGTERM) == 0 ? 0 : -1;
}

#define SPHERE_B "\"b\":{\"radius\":1,\"position\":[5,0]}"
#define SPHERE_B3 "\"b\":{\"radius\":1,\"position\":[5,0,0]}"

typedef struct bad_case {
    const char *name, *path, *body;
    long status;
    const char *pointer;
} bad_case;

static void expect(const bad_case *c) {
    char url[160];
    snprintf(url, sizeof url, "%s%s", daemon_.url, c->path);
    imp_http_result r;
    assert_int_equal(imp_http(NULL, "POST", url, "application/json", c->body, strlen(c->body), &r),
                     0);
    char want[160];
    snprintf(want, sizeof want, "\"pointer\":\"%s\"", c->pointer);
    if (r.status != c->status || strcmp(r.content_type, "application/problem+json") != 0 ||
        !strstr(r.body, want))
        fail_msg("%s: status %ld (want %ld), %s: %s", c->name, r.status, c->status, r.content_type,
                 r.body);
    imp_http_result_free(&r);
}

/* POST `body` to `path`: 200 with exactly `want`. */
static void expect_reply(const char *name, const char *path, const char *body, const char *want) {
    char url[160];
    snprintf(url, sizeof url, "%s%s", daemon_.url, path);
    imp_http_result r;
    assert_int_equal(imp_http(NULL, "POST", url, "application/json", body, strlen(body), &r), 0);
    if (r.status != 200 || strcmp(r.body, want) != 0)
        fail_msg("%s: %ld %s", name, r.status, r.body);
    imp_http_result_free(&r);
}

static void test_geometry_errors(void **state) {
    (void)state;
    static const bad_case cases[] = {
        {"non-convex polygon", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"polygon\",\"vertices\":[[0,0],[2,0],[2,2],[1,0.5],[0,2]]},"
         "\"position\":[0,0]}," SPHERE_B "}",
         422, "/a/shape/vertices/3"},
        {"repeated vertex", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"polygon\",\"vertices\":[[0,0],[1,0],[1,0],[0,1]]},"
         "\"position\":[0,0]}," SPHERE_B "}",
         422, "/a/shape/vertices/2"},
        {"flat polygon", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"polygon\",\"vertices\":[[0,0],[1,1],[2,2]]},"
         "\"position\":[0,0]}," SPHERE_B "}",
         422, "/a/shape/vertices"},
        {"two vertices", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"polygon\",\"vertices\":[[0,0],[1,1]]},"
         "\"position\":[0,0]}," SPHERE_B "}",
         422, "/a/shape/vertices"},
        {"3D polygon", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"polygon\",\"vertices\":[[0,0,0],[1,0,0],[0,1,0]]},"
         "\"position\":[0,0,0]}," SPHERE_B3 "}",
         422, "/a/shape/type"},
        {"2D polygon in a 3D request", "/v1/toi",
         "{\"a\":{\"position\":[0,0,0],\"shape\":{\"type\":\"polygon\",\"vertices\":[[0,0],[1,0],"
         "[0,1]]}}," SPHERE_B3 "}",
         400, "/a/position"},
        {"vertex not a Vec", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"polygon\",\"vertices\":[[0,0],[1,0],\"x\"]},"
         "\"position\":[0,0]}," SPHERE_B "}",
         400, "/a/shape/vertices/2"},
        {"zero half extent", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,0]},\"position\":[0,0]}," SPHERE_B
         "}",
         422, "/a/shape/half_extents/1"},
        {"negative half extent", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1,-2]},\"position\":[0,0,0]}"
         "," SPHERE_B3 "}",
         422, "/a/shape/half_extents/2"},
        {"all-zero quaternion", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1,1],\"rotation\":[0,0,0,0]},"
         "\"position\":[0,0,0]}," SPHERE_B3 "}",
         422, "/a/shape/rotation"},
        {"3D rotation as an angle", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1,1],\"rotation\":0.5},"
         "\"position\":[0,0,0]}," SPHERE_B3 "}",
         400, "/a/shape/rotation"},
        {"2D rotation as a quaternion", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1],\"rotation\":[1,0,0,0]},"
         "\"position\":[0,0]}," SPHERE_B "}",
         400, "/a/shape/rotation"},
        {"NaN-like quaternion part", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1,1],\"rotation\":[1,0,\"0\",0]},"
         "\"position\":[0,0,0]}," SPHERE_B3 "}",
         400, "/a/shape/rotation/2"},
        {"coplanar polyhedron", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"polyhedron\",\"vertices\":[[0,0,0],[1,0,0],[0,1,0],[1,1,"
         "0]]},\"position\":[0,0,0]}," SPHERE_B3 "}",
         422, "/a/shape/vertices"},
        {"three points", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"polyhedron\",\"vertices\":[[0,0,0],[1,0,0],[0,1,0]]},"
         "\"position\":[0,0,0]}," SPHERE_B3 "}",
         422, "/a/shape/vertices"},
        {"2D polyhedron", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"polyhedron\",\"vertices\":[[0,0],[1,0],[0,1],[1,1]]},"
         "\"position\":[0,0]}," SPHERE_B "}",
         422, "/a/shape/type"},
        {"moving halfspace", "/v1/toi",
         "{\"a\":{\"radius\":1,\"position\":[0,0]},"
         "\"b\":{\"shape\":{\"type\":\"halfspace\",\"normal\":[0,1],\"offset\":0},\"position\":[0,"
         "0]}}",
         422, "/b/static"},
        {"zero normal", "/v1/toi",
         "{\"a\":{\"radius\":1,\"position\":[0,0]},"
         "\"b\":{\"shape\":{\"type\":\"halfspace\",\"normal\":[0,0],\"offset\":0},\"position\":[0,"
         "0],\"static\":true}}",
         422, "/b/shape/normal"},
        {"capsule without b", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"capsule\",\"a\":[0,0],\"radius\":1},\"position\":[0,0]}"
         "," SPHERE_B "}",
         400, "/a/shape/b"},
        {"capsule negative radius", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"capsule\",\"a\":[0,0],\"b\":[1,0],\"radius\":-1},"
         "\"position\":[0,0]}," SPHERE_B "}",
         422, "/a/shape/radius"},
        {"unknown type", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"torus\"},\"position\":[0,0]}," SPHERE_B "}", 422,
         "/a/shape/type"},
        {"type not a string", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":3},\"position\":[0,0]}," SPHERE_B "}", 400, "/a/shape/type"},
        /* valid shapes that the endpoint does not take yet */
        {"two halfspaces in toi", "/v1/toi",
         "{\"a\":{\"shape\":{\"type\":\"halfspace\",\"normal\":[0,1],\"offset\":0},\"position\":[0,"
         "0],\"static\":true},"
         "\"b\":{\"shape\":{\"type\":\"halfspace\",\"normal\":[0,-1],\"offset\":0},\"position\":[0,"
         "0],\"static\":true}}",
         422, "/a/shape/type"},
        {"3D segment in a scene", "/v1/scenes/predict",
         "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0,0]},{\"shape\":{\"type\":"
         "\"segment\",\"a\":[-1,0,0],\"b\":[1,0,0]},\"position\":[3,0,0]}]}",
         422, "/bodies/1/shape/type"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        expect(&cases[i]);
}

/* /v1/overlap through HTTP: exact answers and the unsupported pairs. */
static void test_overlap_endpoint(void **state) {
    (void)state;
    static const struct {
        const char *body, *want;
    } ok[] = {
        {"{\"a\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1]},\"position\":[0,0]},"
         "\"b\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1]},\"position\":[1.5,0.2]}}",
         "{\"overlap\":true,\"depth\":0.5,\"normal\":[1.0,0.0],\"mtv\":[0.5,0.0]}"},
        {"{\"a\":{\"radius\":1,\"position\":[0,0]},\"b\":{\"radius\":1,\"position\":[0,3],"
         "\"velocity\":[0,-100]}}",
         "{\"overlap\":false,\"depth\":0.0,\"distance\":1.0,\"normal\":[0.0,1.0]}"},
        {"{\"a\":{\"radius\":1,\"position\":[0,0,0.75]},\"b\":{\"shape\":{\"type\":"
         "\"halfspace\",\"normal\":[0,0,2],\"offset\":0},\"position\":[9,9,9],\"static\":true}}",
         "{\"overlap\":true,\"depth\":0.25,\"normal\":[0.0,0.0,-1.0],\"mtv\":[0.0,0.0,-0.25]}"},
        /* "3D box": a sphere at a 3D box's centre (a 422 before the 3D SAT) leaves
         * through the first face, depth half extent plus radius */
        {"{\"a\":{\"radius\":1,\"position\":[0,0,0]},\"b\":{\"shape\":{\"type\":\"box\","
         "\"half_extents\":[1,1,1]},\"position\":[0,0,0]}}",
         "{\"overlap\":true,\"depth\":2.0,\"normal\":[1.0,0.0,0.0],\"mtv\":[2.0,0.0,0.0]}"},
        /* 3D boxes overlapping on x, and apart corner to corner */
        {"{\"a\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1,1]},\"position\":[0,0,0]},"
         "\"b\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1,1]},\"position\":[1.5,0.25,0]}}",
         "{\"overlap\":true,\"depth\":0.5,\"normal\":[1.0,0.0,0.0],\"mtv\":[0.5,0.0,0.0]}"},
        {"{\"a\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1,1]},\"position\":[0,0,0]},"
         "\"b\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1,1]},\"position\":[3,3,3]}}",
         "{\"overlap\":false,\"depth\":0.0,\"distance\":1.7320508075688772,\"normal\":["
         "0.5773502691896258,0.5773502691896258,0.5773502691896258]}"},
        /* a tetrahedron (with a repeated and an inner point) and a sphere off its face
         * x = 0, apart and then overlapping */
        {"{\"a\":{\"shape\":{\"type\":\"polyhedron\",\"vertices\":[[0,0,0],[1,0,0],[0,1,0],"
         "[0,0,1],[1,0,0],[0.1,0.1,0.1]]},\"position\":[0,0,0]},\"b\":{\"radius\":0.5,"
         "\"position\":[-1,0.25,0.25]}}",
         "{\"overlap\":false,\"depth\":0.0,\"distance\":0.5,\"normal\":[-1.0,0.0,0.0]}"},
        {"{\"a\":{\"shape\":{\"type\":\"polyhedron\",\"vertices\":[[0,0,0],[1,0,0],[0,1,0],"
         "[0,0,1]]},\"position\":[0,0,0]},\"b\":{\"radius\":0.5,\"position\":[-0.25,0.25,0.25]}}",
         "{\"overlap\":true,\"depth\":0.25,\"normal\":[-1.0,0.0,0.0],\"mtv\":[-0.25,0.0,0.0]}"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i) {
        char name[32];
        snprintf(name, sizeof name, "overlap %zu", i);
        expect_reply(name, "/v1/overlap", ok[i].body, ok[i].want);
    }
    /* swept SAT through /v1/toi: a box and a triangle closing at 2 */
    {
        static const char body[] =
            "{\"a\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1]},\"position\":[0,0],"
            "\"velocity\":[2,0]},\"b\":{\"shape\":{\"type\":\"polygon\",\"vertices\":[[0,-1],"
            "[0,1],[2,0]]},\"position\":[4,0]}}";
        char url[160];
        snprintf(url, sizeof url, "%s/v1/toi", daemon_.url);
        imp_http_result r;
        static const char want[] =
            "{\"status\":\"hit\",\"hit\":true,\"time\":1.5,\"point\":[4.0,0.0],\"normal\":[1.0,"
            "0.0],\"a_position\":[3.0,0.0],\"b_position\":[4.0,0.0]}";
        expect_reply("toi box/triangle", "/v1/toi", body, want);
        /* a ball dropped on a lying capsule touches at t = 2 */
        static const char drop[] =
            "{\"a\":{\"shape\":{\"type\":\"capsule\",\"a\":[-1,0],\"b\":[1,0],\"radius\":0.5},"
            "\"position\":[0,0]},\"b\":{\"radius\":0.5,\"position\":[0.25,5],\"acceleration\":[0,"
            "-2]}}";
        static const char want_drop[] =
            "{\"status\":\"hit\",\"hit\":true,\"time\":2.0,\"point\":[0.25,0.5],\"normal\":[0.0,"
            "1.0],\"a_position\":[0.0,0.0],\"b_position\":[0.25,1.0]}";
        expect_reply("toi capsule/ball", "/v1/toi", drop, want_drop);
        /* a ball dropped on a floor (a static halfspace) in 3D */
        static const char floor_[] =
            "{\"a\":{\"radius\":1,\"position\":[0,0,5],\"acceleration\":[0,0,-2]},\"b\":{"
            "\"shape\":{\"type\":\"halfspace\",\"normal\":[0,0,1],\"offset\":0},\"position\":[0,0,"
            "0],"
            "\"static\":true}}";
        static const char want_floor[] =
            "{\"status\":\"hit\",\"hit\":true,\"time\":2.0,\"point\":[0.0,0.0,0.0],\"normal\":[0.0,"
            "0.0,-1.0],\"a_position\":[0.0,0.0,1.0],\"b_position\":[0.0,0.0,0.0]}";
        expect_reply("toi ball/floor", "/v1/toi", floor_, want_floor);
        /* two 3D boxes head-on: faces 3 apart closing at 1 */
        static const char boxes[] =
            "{\"a\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1,1]},\"position\":[0,0,0],"
            "\"velocity\":[1,0,0]},\"b\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1,1]},"
            "\"position\":[5,0,0]}}";
        assert_int_equal(imp_http(NULL, "POST", url, "application/json", boxes, strlen(boxes), &r),
                         0);
        if (r.status != 200 || !strstr(r.body, "\"time\":3.0,") ||
            !strstr(r.body, "\"normal\":[1.0,0.0,0.0]"))
            fail_msg("toi 3D boxes: %ld %s", r.status, r.body);
        imp_http_result_free(&r);
        /* a sphere against a 3D box: exact (the rounded Minkowski difference), no tolerance */
        static const char exact[] =
            "{\"a\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1,1]},\"position\":[0,0,0]},"
            "\"b\":{\"radius\":1,\"position\":[5,0.5,0],\"velocity\":[-1,0,0]}}";
        static const char want_exact[] =
            "{\"status\":\"hit\",\"hit\":true,\"time\":3.0,\"point\":[1.0,0.5,0.0],\"normal\":["
            "1.0,0.0,0.0],\"a_position\":[0.0,0.0,0.0],\"b_position\":[2.0,0.5,0.0]}";
        expect_reply("toi sphere/3D box", "/v1/toi", exact, want_exact);
        /* a 3D scene with a static box: the ball touches its face at t = 3 */
        static const char scene3[] =
            "{\"horizon\":10,\"bodies\":[{\"id\":\"crate\",\"shape\":{\"type\":\"box\","
            "\"half_extents\":[1,1,1],\"rotation\":[1,0,0,0]},\"position\":[0,0,0],\"static\":true}"
            ","
            "{\"id\":\"ball\",\"radius\":1,\"position\":[5,0.5,0],\"velocity\":[-1,0,0]}]}";
        char surl[160];
        snprintf(surl, sizeof surl, "%s/v1/scenes/predict", daemon_.url);
        assert_int_equal(
            imp_http(NULL, "POST", surl, "application/json", scene3, strlen(scene3), &r), 0);
        if (r.status != 200 || !strstr(r.body, "\"a\":\"crate\",\"b\":\"ball\",\"time\":3.0,") ||
            !strstr(r.body, "\"collisions_total\":1,"))
            fail_msg("3D scene with a box: %ld %s", r.status, r.body);
        imp_http_result_free(&r);
        /* two 3D segments (no volume, no radius): conservative advancement to 1e-9 of the
         * pair's scale (5), reported as `tolerance` */
        static const char adv[] =
            "{\"a\":{\"shape\":{\"type\":\"segment\",\"a\":[0,-1,0],\"b\":[0,1,0]},\"position\":"
            "[0,0,0]},\"b\":{\"shape\":{\"type\":\"segment\",\"a\":[0,0,-1],\"b\":[0,0,1]},"
            "\"position\":[5,0.5,0],\"velocity\":[-1,0,0]}}";
        assert_int_equal(imp_http(NULL, "POST", url, "application/json", adv, strlen(adv), &r), 0);
        json_error_t jerr;
        json_t *j = json_loads(r.body, 0, &jerr);
        assert_non_null(j);
        double t = json_real_value(json_object_get(j, "time"));
        double tol = json_real_value(json_object_get(j, "tolerance"));
        if (r.status != 200 ||
            strcmp(json_string_value(json_object_get(j, "status")), "hit") != 0 ||
            !(tol > 0 && tol <= 5e-9) || !(t <= 5 && t >= 5 - 2 * tol))
            fail_msg("toi 3D segments: %ld %s", r.status, r.body);
        json_decref(j);
        imp_http_result_free(&r);
    }
    static const bad_case bad[] = {
        {"two halfspaces", "/v1/overlap",
         "{\"a\":{\"shape\":{\"type\":\"halfspace\",\"normal\":[0,1],\"offset\":0},"
         "\"position\":[0,0],\"static\":true},\"b\":{\"shape\":{\"type\":\"halfspace\","
         "\"normal\":[0,-1],\"offset\":0},\"position\":[0,0],\"static\":true}}",
         422, "/b/shape/type"},
        {"missing b", "/v1/overlap", "{\"a\":{\"radius\":1,\"position\":[0,0]}}", 400, "/b"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        expect(&bad[i]);
}

/* More vertices than the server takes: 422 at the vertex list, and no hang. */
static void test_vertex_limit(void **state) {
    (void)state;
    const size_t n = 5000;
    size_t cap = 64 + n * 48;
    char *body = malloc(cap);
    assert_non_null(body);
    size_t k = (size_t)snprintf(body, cap,
                                "{\"a\":{\"position\":[0,0],\"shape\":{\"type\":"
                                "\"polygon\",\"vertices\":[");
    for (size_t i = 0; i < n; ++i)
        k += (size_t)snprintf(body + k, cap - k, "%s[%.17g,%.17g]", i ? "," : "",
                              cos(6.283185307179586 * (double)i / (double)n),
                              sin(6.283185307179586 * (double)i / (double)n));
    snprintf(body + k, cap - k, "]}}," SPHERE_B "}");
    bad_case c = {"5000 vertices", "/v1/toi", body, 422, "/a/shape/vertices"};
    expect(&c);
    free(body);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry_errors),
        cmocka_unit_test(test_vertex_limit),
        cmocka_unit_test(test_overlap_endpoint),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

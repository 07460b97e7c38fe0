/*
 * test_scenetext.c - the scene endpoints' text path (api/scenetext.c)
 * against the jansson path: whenever the text path takes a request, its
 * status and response must be the ones json_loadb + the endpoint give
 * (byte for byte, stats.elapsed_ms aside); it must take the valid sphere
 * scenes it is meant for; and on thousands of mutated requests (truncated,
 * bytes flipped, values out of range, other shapes, duplicates, escapes)
 * it either declines or agrees.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/pool.h"
#include "tests/rng.h"
#include "tests/scenetext_check.h"

typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    assert_true(k >= 0);
    if (t->len + (size_t)k + 1 > t->cap) {
        t->cap = 2 * (t->len + (size_t)k + 1);
        t->p = realloc(t->p, t->cap);
        assert_non_null(t->p);
    }
    va_start(ap, fmt);
    vsnprintf(t->p + t->len, (size_t)k + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)k;
}

/* Whitespace of a random kind (often none). */
static void space(text *t, uint64_t *rng) {
    static const char *const ws[] = {"", "", "", " ", "\n  ", "\t", "\r\n"};
    put(t, "%s", ws[imp_rng_next(rng) % 7]);
}

/* A number in one of the ways clients print them. */
static void num(text *t, uint64_t *rng, double x) {
    switch (imp_rng_next(rng) % 6) {
    case 0: put(t, "%.17g", x); break;
    case 1: put(t, "%.6f", x); break;
    case 2: put(t, "%g", x); break;
    case 3: put(t, "%.10e", x); break;
    case 4: put(t, "%.0f", x); break; /* an integer, maybe -0 */
    default: put(t, "%.3E", x); break;
    }
}

static void vec(text *t, uint64_t *rng, int dim, double lo, double hi) {
    put(t, "[");
    for (int k = 0; k < dim; ++k) {
        if (k) put(t, ",");
        space(t, rng);
        num(t, rng, imp_rng_uniform(rng, lo, hi));
        space(t, rng);
    }
    put(t, "]");
}

/* One valid sphere body with its members in random order. */
static void body(text *t, uint64_t *rng, int dim, size_t i) {
    int order[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    for (int k = 8; k > 0; --k) {
        int j = (int)(imp_rng_next(rng) % (uint64_t)(k + 1)), tmp = order[k];
        order[k] = order[j];
        order[j] = tmp;
    }
    put(t, "{");
    int first = 1;
    for (int q = 0; q < 9; ++q) {
        int f = order[q];
        /* position and the radius always; the others sometimes */
        if (f != 1 && f != 2 && imp_rng_next(rng) % 3 == 0) continue;
        if (!first) put(t, ",");
        first = 0;
        space(t, rng);
        switch (f) {
        case 0:
            if (imp_rng_next(rng) % 2)
                put(t, "\"id\":%s%zu", imp_rng_next(rng) % 2 ? "" : "-", i);
            else
                put(t, "\"id\": \"body-%zu\"", i);
            break;
        case 1:
            if (imp_rng_next(rng) % 2) {
                put(t, "\"radius\":");
                num(t, rng, imp_rng_uniform(rng, 0.05, 1));
            } else {
                put(t, "\"shape\":{\"radius\":");
                num(t, rng, imp_rng_uniform(rng, 0.05, 1));
                put(t, ",\"type\":\"sphere\"}");
            }
            break;
        case 2:
            put(t, "\"position\":");
            vec(t, rng, dim, 0, 12);
            break;
        case 3:
            put(t, "\"velocity\" :");
            vec(t, rng, dim, -2, 2);
            break;
        case 4:
            put(t, "\"acceleration\":");
            vec(t, rng, dim, -1, 1);
            break;
        case 5:
            put(t, "\"mass\":");
            num(t, rng, imp_rng_uniform(rng, 1, 10));
            break;
        case 6: put(t, "\"static\":%s", imp_rng_next(rng) % 4 ? "false" : "true"); break;
        case 7:
            put(t, "\"restitution\":");
            num(t, rng, imp_rng_uniform(rng, 0, 1));
            break;
        default:
            put(t, "\"tangential\":");
            num(t, rng, imp_rng_uniform(rng, 0, 1));
            break;
        }
        space(t, rng);
    }
    put(t, "}");
}

/* A valid request of the endpoint (simulate: 1) with n bodies. */
static text request(uint64_t *rng, int simulate, int dim, size_t n) {
    text t = {0};
    put(&t, "{");
    space(&t, rng);
    put(&t, "\"horizon\": 4,");
    if (simulate) {
        put(&t, "\"max_events\": 200, \"gravity\":");
        vec(&t, rng, dim, -1, 0);
        put(&t, ",");
    } else {
        put(&t, "\"broadphase\":\"%s\", \"max_results\": 50,",
            imp_rng_next(rng) % 2 ? "auto" : "brute");
        if (imp_rng_next(rng) % 3 == 0)
            put(&t, "\"report\":\"%s\",", imp_rng_next(rng) % 2 ? "first_per_body" : "pairs");
    }
    space(&t, rng);
    put(&t, "\"bodies\":");
    space(&t, rng);
    put(&t, "[");
    for (size_t i = 0; i < n; ++i) {
        if (i) put(&t, ",");
        space(&t, rng);
        body(&t, rng, dim, i);
    }
    space(&t, rng);
    put(&t, "]");
    if (imp_rng_next(rng) % 2) put(&t, ",\"extra\":{\"note\":[1,\"a\\\"]b\",{}]}");
    space(&t, rng);
    put(&t, "}");
    return t;
}

typedef struct tally {
    size_t taken, declined;
} tally;

/* When the text path takes `t`, it answers as the jansson path does. */
static void agree(const char *op, const char *t, size_t len, uint64_t seed, tally *c,
                  const imp_api_ctx *ctx) {
    int status[2];
    char *fast, *slow;
    imp_scenetext_verdict v = imp_scenetext_compare(op, t, len, ctx, status, &fast, &slow);
    if (v == IMP_ST_DECLINED) {
        c->declined++;
        return;
    }
    c->taken++;
    if (v == IMP_ST_DIFFERENT)
        fail_msg("seed %#llx %s: text path %d %s\njansson path %d %s\nrequest %.*s",
                 (unsigned long long)seed, op, status[0], fast ? fast : "(not JSON)", status[1],
                 slow ? slow : "(jansson rejects the request)", (int)len, t);
}

/* Valid sphere scenes of both endpoints, 2D and 3D: always taken, same answer. */
static void test_valid_scenes_taken_and_equal(void **state) {
    (void)state;
    imp_api_ctx ctx;
    imp_api_ctx_init(&ctx);
    tally c = {0};
    size_t collisions = 0;
    for (uint64_t k = 0; k < 400; ++k) {
        uint64_t seed = 0x5ce7e + k, rng = seed;
        int simulate = (int)(k % 2), dim = 2 + (int)(k / 2 % 2);
        text t = request(&rng, simulate, dim, (size_t)(imp_rng_next(&rng) % 40));
        size_t before = c.taken;
        agree(simulate ? "scenes/simulate" : "scenes/predict", t.p, t.len, seed, &c, &ctx);
        if (c.taken == before)
            fail_msg("seed %#llx: a valid sphere scene was declined: %s", (unsigned long long)seed,
                     t.p);
        if (!simulate) {
            imp_api_response r;
            imp_api_handle("scenes/predict", t.p, t.len, &ctx, &r);
            /* an "extra" member exercises skipping nested values; strict members make it a
             * 400 unknown-field on both paths */
            int extra = strstr(t.p, "\"extra\"") != NULL;
            assert_int_equal(r.status, extra ? 400 : 200);
            if (extra) assert_non_null(strstr(r.body, "\"pointer\":\"/extra\""));
            collisions += strstr(r.body, "\"time\"") != NULL;
            imp_api_response_free(&r);
        }
        free(t.p);
    }
    assert_int_equal(c.taken, 400);
    /* the scenes are not all empty of contacts */
    assert_true(collisions > 50);
    print_message("400 valid scenes taken; %zu predict replies with a collision\n", collisions);
}

/* Scenes long enough to be parsed in chunks on several threads (api/scenetext.c guesses
 * where each chunk starts); with ids that put "},{" inside strings, so that some guesses
 * fall inside a string and the array must be parsed again in one piece. */
static void test_long_scenes_in_chunks(void **state) {
    (void)state;
    imp_pool *pool = imp_pool_create(2, 64);
    imp_api_ctx ctx;
    imp_api_ctx_init(&ctx);
    ctx.parallel = imp_pool_parallel(pool);
    tally c = {0};
    for (uint64_t k = 0; k < 8; ++k) {
        uint64_t seed = 0x10c4 + k, rng = seed;
        int dim = 2 + (int)(k % 2), traps = (int)(k / 2 % 2);
        size_t n = 6000 + (size_t)(imp_rng_next(&rng) % 4000);
        text t = {0};
        put(&t, "{\"horizon\": 2, \"bodies\": [");
        double side = dim == 2 ? sqrt((double)n) * 3 : cbrt((double)n) * 3;
        for (size_t i = 0; i < n; ++i) {
            put(&t, "%s{", i ? (i % 3 ? "," : ", ") : "");
            if (traps)
                put(&t, "\"id\":\"b},{%zu}, {\",", i);
            else if (i % 5 == 0)
                put(&t, "\"id\":%zu,", 10 * i);
            put(&t, "\"radius\":0.5,\"position\":");
            vec(&t, &rng, dim, 0, side);
            put(&t, ",\"velocity\":");
            vec(&t, &rng, dim, -1, 1);
            put(&t, "}");
        }
        put(&t, "], \"tail\": [{}, {}, {\"a\": \"}, {\"}]}");
        agree("scenes/predict", t.p, t.len, seed, &c, &ctx);
        assert_int_equal(c.taken, k + 1);
        /* a body out of range far into the array is still found */
        char *far = strstr(t.p + t.len * 3 / 4, "\"radius\":0.5");
        assert_non_null(far);
        memcpy(far, "\"radius\":-.5", 13);
        agree("scenes/predict", t.p, t.len, seed, &c, &ctx);
        assert_int_equal(c.declined, k + 1);
        free(t.p);
    }
    imp_pool_destroy(pool);
}

/* A 600 KB id of "},},..." where chunk starts are guessed: no guess inside it is a body's
 * start, and the bodies after it are still decoded in chunks, the same as jansson's. */
static void test_giant_id_across_chunks(void **state) {
    (void)state;
    imp_pool *pool = imp_pool_create(2, 64);
    imp_api_ctx ctx;
    imp_api_ctx_init(&ctx);
    ctx.parallel = imp_pool_parallel(pool);
    uint64_t seed = 0x61a7, rng = seed;
    text t = {0};
    put(&t, "{\"horizon\": 2, \"bodies\": [{\"radius\":1,\"position\":[0,0]},{\"id\":\"");
    for (int i = 0; i < 200000; ++i)
        put(&t, "},{");
    put(&t, "\",\"radius\":1,\"position\":[1.5,0.5]}");
    for (size_t i = 0; i < 4000; ++i) {
        put(&t, ",{\"radius\":0.5,\"position\":");
        vec(&t, &rng, 2, 0, 150);
        put(&t, ",\"velocity\":");
        vec(&t, &rng, 2, -1, 1);
        put(&t, "}");
    }
    put(&t, "]}");
    tally c = {0};
    agree("scenes/predict", t.p, t.len, seed, &c, &ctx);
    assert_int_equal(c.taken, 1);
    free(t.p);
    imp_pool_destroy(pool);
}

/* Requests the text path must leave to jansson, each answered there with its problem. */
static void test_declines(void **state) {
    (void)state;
    static const char *const cases[] = {
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0],\"color\":1}]}",
        /* a filter is left to the tree path, valid or not */
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0],\"filter\":{\"mask\":2}}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0],\"filter\":{\"mask\":-2}}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"radius\":2,\"position\":[0,0]}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"shape\":{\"type\":\"sphere\",\"radius\":1},"
        "\"position\":[0,0]}]}",
        "{\"horizon\":1,\"bodies\":[{\"shape\":{\"type\":\"box\",\"half\":[1,1]},\"position\":[0,0]"
        "}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":-1,\"position\":[0,0]}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[1e61,0]}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[1e400,0]}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0,0,0]}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0],\"velocity\":[1,1,1]}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0],\"id\":1.5}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0],\"id\":\"caf\\u00e9\"}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0],\"id\":\"caf\xc3\xa9\"}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0],\"static\":null}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0],\"mass\":0}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0],\"restitution\":1.5}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[+1,0]}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[01,0]}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[1.,0]}]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0]},]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0]}],}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0]}]} x",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0]}]",
        "{\"horizon\":1,\"bodies\":{}}",
        "{\"horizon\":1}",
        "[{\"bodies\":[]}]",
        "{\"horizon\":1,\"bodies\":[],\"bodies\":[]}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0]}],\"x\":[1,2}",
        "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0]}],\"x\":\"\\q\"}",
        "{\"horizon\":1,\"bo\\u0064ies\":[{\"radius\":1,\"position\":[0,0]}]}",
    };
    imp_api_ctx ctx;
    imp_api_ctx_init(&ctx);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        imp_body *bodies = (imp_body *)0x1;
        size_t n = 7;
        int dim = -7;
        json_t *rest = (json_t *)0x1;
        if (imp_scenetext_decode(cases[i], strlen(cases[i]), &ctx, &bodies, &n, &dim, &rest))
            fail_msg("case %zu taken: %s", i, cases[i]);
        /* nothing written when declined */
        assert_ptr_equal(bodies, (imp_body *)0x1);
        assert_ptr_equal(rest, (json_t *)0x1);
        assert_int_equal(n, 7);
        assert_int_equal(dim, -7);
    }
    /* more bodies than the server takes: declined, so the 422 comes from the jansson path */
    ctx.max_bodies = 1;
    const char *two = "{\"horizon\":1,\"bodies\":[{\"radius\":1,\"position\":[0,0]},"
                      "{\"radius\":1,\"position\":[5,0]}]}";
    assert_false(imp_scenetext_takes(two, strlen(two), &ctx));
    /* while an error outside the bodies is the endpoint's own, on the text path too */
    ctx.max_bodies = 10;
    const char *bad = "{\"horizon\":-1,\"bodies\":[{\"radius\":1,\"position\":[0,0]}]}";
    assert_true(imp_scenetext_takes(bad, strlen(bad), &ctx));
    imp_dec d;
    imp_dec_init(&d, &ctx);
    imp_api_in in = {NULL, bad, strlen(bad), NULL};
    imp_api_out o;
    int status = imp_api_run(imp_endpoint_by_op("scenes/predict"), &in, &d, &o);
    assert_null(o.text);
    assert_int_equal(status, 422);
    assert_string_equal(json_string_value(json_object_get(o.doc, "pointer")), "/horizon");
    json_decref(o.doc);
}

/* Mutated requests: declined, or the same answer as jansson's. */
static void test_mutations_agree(void **state) {
    (void)state;
    static const char *const tokens[] = {
        "1e400",
        "1e61",
        "-0",
        "\"\\u0041\"",
        "\"\xff\"",
        "null",
        "true",
        "[]",
        "{}",
        ",",
        ":",
        "]",
        "}",
        "\"id\"",
        "\"radius\"",
        "0.5",
        " ",
        "\x00",
        "\"shape\":{\"type\":\"box\"}",
        "01",
        "-",
        "1e",
    };
    imp_api_ctx ctx;
    imp_api_ctx_init(&ctx);
    tally c = {0};
    for (uint64_t k = 0; k < 4000; ++k) {
        uint64_t seed = 0x307a7e + k, rng = seed;
        int simulate = (int)(k % 2), dim = 2 + (int)(k / 2 % 2);
        text t = request(&rng, simulate, dim, 1 + (size_t)(imp_rng_next(&rng) % 6));
        size_t at = (size_t)(imp_rng_next(&rng) % t.len);
        switch (imp_rng_next(&rng) % 3) {
        case 0: t.len = at; break; /* truncated */
        case 1: t.p[at] = "{}[],:\"\\0e.-x \x80"[imp_rng_next(&rng) % 15]; break;
        default: {
            const char *tok = tokens[imp_rng_next(&rng) % (sizeof tokens / sizeof tokens[0])];
            size_t tl = tok[0] ? strlen(tok) : 1;
            text u = {0};
            put(&u, "%.*s", (int)at, t.p);
            if (u.len + tl + (t.len - at) + 1 > u.cap) {
                u.cap = u.len + tl + (t.len - at) + 1;
                u.p = realloc(u.p, u.cap);
            }
            memcpy(u.p + u.len, tok, tl);
            memcpy(u.p + u.len + tl, t.p + at, t.len - at);
            u.len += tl + (t.len - at);
            free(t.p);
            t = u;
        }
        }
        agree(simulate ? "scenes/simulate" : "scenes/predict", t.p, t.len, seed, &c, &ctx);
        free(t.p);
    }
    /* both outcomes are exercised */
    assert_true(c.taken > 200 && c.declined > 2000);
    print_message("4000 mutated requests: %zu taken (same answer), %zu declined\n", c.taken,
                  c.declined);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_scenes_taken_and_equal),
        cmocka_unit_test(test_long_scenes_in_chunks),
        cmocka_unit_test(test_giant_id_across_chunks),
        cmocka_unit_test(test_declines),
        cmocka_unit_test(test_mutations_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

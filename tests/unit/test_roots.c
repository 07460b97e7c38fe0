/*
 * test_roots.c - polynomial roots: closed-form edge cases, the hard quartic
 * set (tests/data/hard_quartics.json, a copy of shared/data), and random
 * quartics with known roots.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>

#include "core/eft.h"
#include "core/roots.h"
#include "tests/rng.h"

static double rel_err(double got, double want) {
    return want == 0.0 ? fabs(got) : fabs(got - want) / fabs(want);
}

static void test_linear_and_degenerate(void **state) {
    (void)state;
    double r[4];
    double c1[2] = {-3.0, 2.0};
    assert_int_equal(imp_poly_roots(c1, 1, -INFINITY, INFINITY, r), 1);
    assert_true(r[0] == 1.5);
    /* leading zeros lower the degree */
    double c2[5] = {-3.0, 2.0, 0.0, 0.0, 0.0};
    assert_int_equal(imp_poly_roots(c2, 4, -INFINITY, INFINITY, r), 1);
    assert_true(r[0] == 1.5);
    /* constants and the zero polynomial have no isolated roots */
    double c3[3] = {1.0, 0.0, 0.0}, c4[3] = {0.0, 0.0, 0.0};
    assert_int_equal(imp_poly_roots(c3, 2, -INFINITY, INFINITY, r), 0);
    assert_int_equal(imp_poly_roots(c4, 2, -INFINITY, INFINITY, r), 0);
    /* t^4: a quadruple root at 0 */
    assert_int_equal(imp_quartic_roots(1, 0, 0, 0, 0, -INFINITY, INFINITY, r), 4);
    for (int i = 0; i < 4; ++i)
        assert_true(r[i] == 0.0);
}

static void test_quadratic_cancellation(void **state) {
    (void)state;
    double r[2];
    /* x^2 - 1e8 x + 1 = 0: the small root 1e-8 is lost by the textbook
     * formula (-b - sqrt(b^2 - 4ac)) / 2a, which gives about 7.45e-9. */
    assert_int_equal(imp_quadratic_roots(1.0, -1e8, 1.0, -INFINITY, INFINITY, r), 2);
    assert_true(rel_err(r[0], 1.0000000000000000e-8) < 1e-15);
    assert_true(rel_err(r[1], 1e8) < 1e-15);
    /* Discriminant that cancels: roots 1 + 2^-30 and 1 + 2^-14 with exact
     * coefficients. b^2 needs 63 bits, so plain b*b - 4ac is off by 2^-60
     * and the roots by ~1e-14; with the FMA-exact discriminant both roots
     * come out exactly. */
    double lo = 1.0 + 0x1p-30, hi = 1.0 + 0x1p-14;
    assert_int_equal(imp_quadratic_roots(1.0, -(lo + hi), lo * hi, -INFINITY, INFINITY, r), 2);
    assert_true(r[0] == lo);
    assert_true(r[1] == hi);
    /* exact double root, and no real roots */
    assert_int_equal(imp_quadratic_roots(1.0, -2.0, 1.0, -INFINITY, INFINITY, r), 2);
    assert_true(r[0] == 1.0 && r[1] == 1.0);
    assert_int_equal(imp_quadratic_roots(1.0, 0.0, 1.0, -INFINITY, INFINITY, r), 0);
}

static void test_interval_filter(void **state) {
    (void)state;
    double r[4];
    /* (x+2)(x+1)(x-1)(x-2) = x^4 - 5x^2 + 4 */
    assert_int_equal(imp_quartic_roots(1, 0, -5, 0, 4, 0.0, INFINITY, r), 2);
    assert_true(r[0] == 1.0 && r[1] == 2.0);
    assert_int_equal(imp_quartic_roots(1, 0, -5, 0, 4, -1.5, 1.5, r), 2);
    assert_true(r[0] == -1.0 && r[1] == 1.0);
    assert_int_equal(imp_quartic_roots(1, 0, -5, 0, 4, 1.0, 1.0, r), 1);
    assert_true(r[0] == 1.0);
    assert_int_equal(imp_quartic_roots(1, 0, -5, 0, 4, 2.5, 3.0, r), 0);
}

static void test_cubic(void **state) {
    (void)state;
    double r[3];
    /* (x - 1)(x - 2)(x - 3) */
    assert_int_equal(imp_cubic_roots(1, -6, 11, -6, -INFINITY, INFINITY, r), 3);
    assert_true(rel_err(r[0], 1) < 1e-15 && rel_err(r[1], 2) < 1e-15 && rel_err(r[2], 3) < 1e-15);
    /* (x - 1)^3 */
    assert_int_equal(imp_cubic_roots(1, -3, 3, -1, -INFINITY, INFINITY, r), 3);
    for (int i = 0; i < 3; ++i)
        assert_true(r[i] == 1.0);
    /* x^3 + x + 1: one real root -0.6823278038280193 */
    assert_int_equal(imp_cubic_roots(1, 0, 1, 1, -INFINITY, INFINITY, r), 1);
    assert_true(rel_err(r[0], -0.68232780382801932737) < 2e-16);
    /* roots across 1e-10 .. 1e10 */
    double a = 1e-10, b = 1.0, c = 1e10;
    assert_int_equal(
        imp_cubic_roots(1, -(a + b + c), a * b + a * c + b * c, -a * b * c, -INFINITY, INFINITY, r),
        3);
    assert_true(rel_err(r[0], a) < 1e-15 && rel_err(r[1], b) < 1e-15 && rel_err(r[2], c) < 1e-15);
}

static double parse_root(const char *s) {
    const char *slash = strchr(s, '/');
    if (slash) return strtod(s, NULL) / strtod(slash + 1, NULL);
    return strtod(s, NULL);
}

static json_t *load_hard_set(void) {
    const char *dir = getenv("IMP_TEST_DATA");
    char path[512];
    snprintf(path, sizeof path, "%s/hard_quartics.json", dir ? dir : "tests/data");
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    if (!doc) fprintf(stderr, "cannot load %s: %s\n", path, err.text);
    return doc;
}

static void test_hard_quartics(void **state) {
    (void)state;
    json_t *doc = load_hard_set();
    assert_non_null(doc);
    json_t *cases = json_object_get(doc, "cases");
    assert_true(json_array_size(cases) >= 30);
    size_t i;
    json_t *c;
    int failures = 0;
    json_array_foreach(cases, i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        json_t *hex = json_object_get(c, "coefficients_high_to_low");
        double co[5];
        for (int k = 0; k < 5; ++k)
            co[4 - k] = strtod(json_string_value(json_array_get(hex, k)), NULL);
        json_t *rr = json_object_get(c, "real_roots");
        size_t ne = json_array_size(rr);
        double want[4];
        for (size_t k = 0; k < ne; ++k)
            want[k] = parse_root(json_string_value(json_array_get(rr, k)));
        double got[4];
        int n = imp_poly_roots(co, 4, -INFINITY, INFINITY, got);
        if ((size_t)n != ne) {
            fprintf(stderr, "%s: %d real roots, expected %zu\n", name, n, ne);
            ++failures;
            continue;
        }
        double worst = 0.0;
        for (size_t k = 0; k < ne; ++k)
            worst = fmax(worst, rel_err(got[k], want[k]));
        /* Published figure: within 10x, or 1e-15 where it is 0. */
        json_t *pub = json_object_get(c, "best_published_max_rel_error");
        if (json_is_number(pub)) {
            double p = json_number_value(pub);
            double limit = p == 0.0 ? 1e-15 : 10.0 * p;
            if (worst > limit) {
                fprintf(stderr, "%s: worst rel error %.3g > %.3g\n", name, worst, limit);
                ++failures;
            }
        }
        /* Simple roots more than 1e-3 (relative) apart: 1e-12. */
        int well_separated = 1;
        for (size_t k = 1; k < ne; ++k)
            if (fabs(want[k] - want[k - 1]) <= 1e-3 * fmax(fabs(want[k]), fabs(want[k - 1])))
                well_separated = 0;
        if (well_separated && worst > 1e-12) {
            fprintf(stderr, "%s: separated roots, worst rel error %.3g > 1e-12\n", name, worst);
            ++failures;
        }
    }
    json_decref(doc);
    assert_int_equal(failures, 0);
}

/* Monic coefficients of prod (x - r_i), accumulated in double-double and
 * rounded once, as the hard set was made. Ascending order. */
static void expand_roots(const double r[4], double co[5]) {
    double hi[5] = {1, 0, 0, 0, 0}, lo[5] = {0, 0, 0, 0, 0};
    for (int i = 0; i < 4; ++i) {
        for (int j = i + 1; j >= 0; --j) {
            /* new[j] = old[j-1] - r * old[j] */
            double h = 0, l = 0;
            if (j >= 1) {
                h = hi[j - 1];
                l = lo[j - 1];
            }
            if (j <= i) {
                double pe;
                double p = imp_two_prod(hi[j], -r[i], &pe);
                pe += lo[j] * -r[i];
                double se;
                double s = imp_two_sum(h, p, &se);
                se += l + pe;
                h = s + se;
                l = se - (h - s);
            }
            hi[j] = h;
            lo[j] = l;
        }
    }
    for (int j = 0; j < 5; ++j)
        co[j] = hi[j] + lo[j];
}

static void test_random_quartics(void **state) {
    (void)state;
    const uint64_t seed = 0x5eed1234abcdULL;
    uint64_t s = seed;
    const int N = 100000;
    long bad = 0, lost = 0;
    for (int k = 0; k < N; ++k) {
        double r[4];
        for (int i = 0; i < 4; ++i)
            r[i] = imp_rng_unit(&s) - 0.5;
        for (int i = 0; i < 4; ++i)
            for (int j = i + 1; j < 4; ++j)
                if (r[j] < r[i]) {
                    double t = r[i];
                    r[i] = r[j];
                    r[j] = t;
                }
        double co[5], x[4];
        expand_roots(r, co);
        int n = imp_poly_roots(co, 4, -INFINITY, INFINITY, x);
        if (n != 4) {
            ++lost;
            bad += 4;
            continue;
        }
        for (int i = 0; i < 4; ++i)
            if (fabs(x[i] - r[i]) > 1e-12 * fabs(r[i])) ++bad;
    }
    double frac = (double)bad / (4.0 * N);
    printf("random quartics: %ld of %d roots (%.4f%%) off by more than 1e-12 relative, %ld with a "
           "wrong count\n",
           bad, 4 * N, 100.0 * frac, lost);
    if (frac > 0.0021 || lost > 0) fprintf(stderr, "seed %#llx\n", (unsigned long long)seed);
    assert_int_equal(lost, 0);
    assert_true(frac <= 0.0021);
}

/* imp_quartic_roots takes the common quartic straight to the certified fast path and
 * anything else through imp_poly_roots: both ways must give imp_poly_roots' roots bit for
 * bit. Random quartics with four real roots, two, or none, scaled from 2^-1000 to 2^1000 (the
 * shortcut balances them first), with a zero constant term (a root at 0) or a zero leading
 * one (a cubic), in windows that cut some roots off. Dropping the shortcut's test of the
 * constant term makes 2,308 of them differ. */
static void test_quartic_entry_equals_general(void **state) {
    (void)state;
    const uint64_t seed = 0x5eed0a11e47ULL;
    uint64_t s = seed;
    print_message("seed %#llx\n", (unsigned long long)seed);
    int differ = 0, cases = 0;
    for (int k = 0; k < 200000; ++k) {
        double r[4], co[5];
        for (int i = 0; i < 4; ++i)
            r[i] = imp_rng_unit(&s) * 4.0 - 2.0;
        expand_roots(r, co);
        if (k % 3 == 1) co[2] += 3.0; /* lift: two or no real roots */
        if (k % 3 == 2) co[2] += 0.01;
        double scale = ldexp(1.0, (int)(imp_rng_unit(&s) * 2000.0) - 1000);
        if (k % 4 == 0) scale = 1.0;
        for (int i = 0; i < 5; ++i)
            co[i] *= scale;
        if (k % 50 == 3) co[0] = 0.0;
        if (k % 50 == 7) co[4] = 0.0;
        double lo = k % 5 == 0 ? r[1] : -INFINITY, hi = k % 7 == 0 ? r[2] : INFINITY;
        if (lo > hi) lo = -INFINITY;
        double a[4], b[4];
        int na = imp_quartic_roots(co[4], co[3], co[2], co[1], co[0], lo, hi, a);
        int nb = imp_poly_roots(co, 4, lo, hi, b);
        int same = na == nb;
        for (int i = 0; same && i < na; ++i)
            same = memcmp(&a[i], &b[i], sizeof a[i]) == 0;
        differ += !same;
        ++cases;
    }
    print_message("%d quartics, %d answered differently by the two entries\n", cases, differ);
    assert_int_equal(differ, 0);
}

/* Arbitrary finite coefficients: every reported root has a tiny backward
 * error, and every sign change seen on a fine grid is matched by a root. */
static void test_random_coefficients_verify(void **state) {
    (void)state;
    const uint64_t seed = 0xc0ffee17ULL;
    uint64_t s = seed;
    for (int k = 0; k < 20000; ++k) {
        double co[5];
        for (int i = 0; i < 5; ++i)
            co[i] = (imp_rng_unit(&s) - 0.5) * pow(10.0, floor(imp_rng_unit(&s) * 8.0) - 4.0);
        double x[4];
        int n = imp_poly_roots(co, 4, -10.0, 10.0, x);
        for (int i = 0; i < n; ++i) {
            double v = 0, m = 0;
            for (int j = 4; j >= 0; --j) {
                v = v * x[i] + co[j];
                m = m * fabs(x[i]) + fabs(co[j]);
            }
            if (!(fabs(v) <= 64 * 1.1e-16 * m)) {
                fprintf(stderr, "seed %#llx case %d root %.17g residual %.3g of %.3g\n",
                        (unsigned long long)seed, k, x[i], v, m);
                fail();
            }
            if (i > 0 && x[i] < x[i - 1])
                fail_msg("not ascending (seed %#llx)", (unsigned long long)seed);
        }
        /* sign changes on a grid over [-10, 10] need a root between */
        double prev = imp_poly_eval(co, 4, -10.0);
        for (int g = 1; g <= 400; ++g) {
            double t0 = -10.0 + 0.05 * (g - 1), t1 = -10.0 + 0.05 * g;
            double cur = imp_poly_eval(co, 4, t1);
            if ((prev < 0 && cur > 0) || (prev > 0 && cur < 0)) {
                int found = 0;
                for (int i = 0; i < n; ++i)
                    if (x[i] >= t0 - 1e-9 && x[i] <= t1 + 1e-9) found = 1;
                if (!found) {
                    fprintf(stderr, "seed %#llx case %d: sign change in [%g, %g] without a root\n",
                            (unsigned long long)seed, k, t0, t1);
                    fail();
                }
            }
            prev = cur;
        }
    }
}

/* Found by tests/fuzz/fuzz_roots.c: balancing a polynomial whose coefficients
 * span 1400 binades scaled the constant term to an exact zero, which made
 * t = 0 a root. It has none: c1^2 (1e-298) is far below 4 c2 c0 (4e-115),
 * so c0 + c1 t + c2 t^2 > 0 for every t. */
static void test_wide_range_keeps_its_roots(void **state) {
    (void)state;
    const double c[4] = {3.7857700696544211e-270, 9.7758043008301964e-150, 2.8485815580330132e+154,
                         0};
    double r[3];
    assert_int_equal(imp_poly_roots(c, 3, 0.0, 0.0, r), 0);
    assert_int_equal(imp_poly_roots(c, 3, -1.0, 1.0, r), 0);
    /* Also found by the fuzzer: two tiny coefficients, 4ac underflowed to zero, and
     * c0 + c2 t^2 (both > 0, no real root) got a double root at 0. */
    const double d[3] = {4.1862174856080807e-149, 0, 3.7857669957887692e-270};
    assert_int_equal(imp_poly_roots(d, 2, -INFINITY, INFINITY, r), 0);
    const double e[3] = {-4.1862174856080807e-149, 0, 3.7857669957887692e-270};
    assert_int_equal(imp_poly_roots(e, 2, 0.0, INFINITY, r), 1);
    double want = sqrt(4.1862174856080807e-149 / 3.7857669957887692e-270);
    assert_true(fabs(r[0] - want) <= 1e-15 * want);
    /* and with the largest coefficient far above 2^-480: 4ac = 1e-354 underflowed too */
    const double f[3] = {-4.8206546752115956e-224, 0, 4.9309425514107658e-132};
    assert_int_equal(imp_poly_roots(f, 2, 0.0, 0.0, r), 0);
    assert_int_equal(imp_poly_roots(f, 2, -INFINITY, INFINITY, r), 2);
    want = sqrt(4.8206546752115956e-224 / 4.9309425514107658e-132);
    assert_true(fabs(r[1] - want) <= 1e-15 * want && r[0] == -r[1]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear_and_degenerate),
        cmocka_unit_test(test_quadratic_cancellation),
        cmocka_unit_test(test_interval_filter),
        cmocka_unit_test(test_cubic),
        cmocka_unit_test(test_hard_quartics),
        cmocka_unit_test(test_random_quartics),
        cmocka_unit_test(test_quartic_entry_equals_general),
        cmocka_unit_test(test_random_coefficients_verify),
        cmocka_unit_test(test_wide_range_keeps_its_roots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_numtext.c - api/numtext: JSON number text <-> double.
 *
 * Parsing is compared bit for bit with glibc's strtod (the reference the
 * module promises to equal) on known hard cases and on over two million
 * random inputs: random doubles printed with %g and %e at many precisions,
 * random digit strings, and near-halfway strings built from the exact
 * decimal expansion of midpoints between adjacent doubles (a base-10^9
 * bignum here). Formatting is checked by reading back with strtod and, for
 * shortness, against snprintf("%.{p-1}e"): the digit count we print must be
 * the smallest p that round-trips, and our digits must be snprintf's at that
 * p. The one principled exception, counted and printed, is a power of two
 * whose closest p-digit decimal falls outside the narrower half-interval
 * below it while the next one above is inside (see check_format). Every
 * entry of the generated api/numtext_table.h, and the fixed-point
 * logarithms, are recomputed with a binary bignum here, so a typo in the
 * table cannot pass.
 *
 * The parser always sees its input followed by more digits past `end`, so
 * reading past the end would change the value. Random cases use fixed
 * seeds; a failure prints the seed, the case number and the input.
 * The module is also compiled a second time into this test with
 * IMP_NUM_PORTABLE (no __int128, no builtins, no 8-byte digit tricks) and
 * checked against strtod and against the first build.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <float.h>
#include <math.h>

#include "api/numtext.h"
#include "api/numtext_table.h"
#include "tests/rng.h"

/* ---- the portable build of the module, under other names ------------------------------------ */

int imp_num_parse_portable(const char *s, const char *end, double *out, const char **stop);
size_t imp_num_format_portable(double x, char *buf);
#define imp_num_parse imp_num_parse_portable
#define imp_num_format imp_num_format_portable
#define IMP_NUM_PORTABLE 1
#include "api/numtext.c"
#undef imp_num_parse
#undef imp_num_format
#undef IMP_NUM_PORTABLE

/* ---- helpers ----------------------------------------------------------------------------------
 */

static uint64_t bits_of(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static double from_u64(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static double random_finite(uint64_t *rng) {
    for (;;) {
        uint64_t b = imp_rng_next(rng);
        if (((b >> 52) & 0x7ff) != 0x7ff) return from_u64(b);
    }
}

/* Random case counts; make check-valgrind (IMP_TEST_UNDER_VALGRIND set) runs a
 * twentieth of them, enough for memcheck to see every path. */
static long cases(long n) { return getenv("IMP_TEST_UNDER_VALGRIND") ? n / 20 : n; }

#define MAX_TEXT 2048
#define MAX_REPORTS 10

/* Failures of one random run: the first few are printed, the count is asserted. */
typedef struct tally {
    const char *what;
    uint64_t seed;
    long cases, fails;
    long below_pow2; /* format: shorter than snprintf can be, see check_format */
} tally;

static void report(tally *t, const char *fmt, ...) {
    va_list ap;
    if (++t->fails > MAX_REPORTS) return;
    char msg[MAX_TEXT + 256];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    print_error("%s, seed 0x%llx, case %ld: %s\n", t->what, (unsigned long long)t->seed, t->cases,
                msg);
}

static void finish(tally *t) {
    print_message("%s: %ld cases\n", t->what, t->cases);
    if (t->below_pow2)
        print_message("%s: %ld powers of two printed with one digit fewer than snprintf's "
                      "shortest round-tripping %%.{p-1}e (expected; see check_format)\n",
                      t->what, t->below_pow2);
    if (t->fails) print_error("%s: %ld of %ld cases failed\n", t->what, t->fails, t->cases);
    assert_int_equal(t->fails, 0);
}

typedef int (*parse_fn)(const char *, const char *, double *, const char **);

/* text[0..len) (NUL at len) through fn, followed by junk digits, against strtod. */
static void check_parse_with(tally *t, parse_fn fn, const char *text, size_t len) {
    char buf[MAX_TEXT + 8];
    assert_true(len < MAX_TEXT);
    memcpy(buf, text, len);
    memcpy(buf + len, "98e7", 5); /* would change the number if read */
    double got = 777.0;
    const char *stop = NULL;
    int rc = fn(buf, buf + len, &got, &stop);
    char *wend;
    double want = strtod(text, &wend);
    int want_rc = isinf(want) ? 1 : 0;
    ++t->cases;
    if (wend != text + len) {
        report(t, "test bug: strtod stopped early in \"%s\"", text);
    } else if (rc != want_rc || bits_of(got) != bits_of(want) || stop != buf + len) {
        report(t, "\"%s\": rc %d, bits %016llx (%.17g), stop +%td; strtod %016llx (%.17g)", text,
               rc, (unsigned long long)bits_of(got), got, stop ? stop - buf : -1,
               (unsigned long long)bits_of(want), want);
    }
}

static void check_parse(tally *t, const char *text, size_t len) {
    check_parse_with(t, imp_num_parse, text, len);
}

/* ---- parse: known cases -----------------------------------------------------------------------
 */

typedef struct parse_case {
    const char *text;
    int rc;
    uint64_t bits;
} parse_case;

static void expect_parse(const char *text, size_t len, int want_rc, uint64_t want_bits) {
    char buf[MAX_TEXT + 8];
    assert_true(len < MAX_TEXT);
    memcpy(buf, text, len);
    memcpy(buf + len, "12e3", 5);
    double got = 777.0;
    const char *stop = NULL;
    int rc = imp_num_parse(buf, buf + len, &got, &stop);
    if (rc != want_rc || bits_of(got) != want_bits || stop != buf + len) {
        print_error(
            "\"%.80s\" (%zu bytes): rc %d bits %016llx stop +%td, want rc %d bits %016llx\n", text,
            len, rc, (unsigned long long)bits_of(got), stop ? stop - buf : -1, want_rc,
            (unsigned long long)want_bits);
        fail();
    }
}

static void test_parse_known(void **state) {
    (void)state;
    static const parse_case cases[] = {
        {"0", 0, 0x0000000000000000u},
        {"-0", 0, 0x8000000000000000u},
        {"-0.0e-5", 0, 0x8000000000000000u},
        {"1", 0, 0x3ff0000000000000u},
        {"0.1", 0, 0x3fb999999999999au},
        {"1e23", 0, 0x44b52d02c7e14af6u},
        {"-12.345678901234567", 0, 0xc028b0fcd32f707au},
        {"0.000001", 0, 0x3eb0c6f7a0b5ed8du},
        {"1E16", 0, 0x4341c37937e08000u},
        {"12.5", 0, 0x4029000000000000u},
        {"0.001", 0, 0x3f50624dd2f1a9fcu},
        {"1e+2", 0, 0x4059000000000000u},
        {"123456789012345678901234567890", 0, 0x45f8ee90ff6c373eu},
        /* halfway cases around 2^53 = 9007199254740992: ties to even */
        {"9007199254740993", 0, 0x4340000000000000u},
        {"9007199254740995", 0, 0x4340000000000002u},
        {"9007199254740995.0", 0, 0x4340000000000002u},
        {"9007199254740993.0000000000000000001", 0, 0x4340000000000001u},
        {"9007199254740992.9999999999999", 0, 0x4340000000000000u},
        {"9007199254740991.5", 0, 0x4340000000000000u},
        {"9007199254740990.5", 0, 0x433ffffffffffffeu},
        {"4503599627370496.5", 0, 0x4330000000000000u},
        {"4503599627370497.5", 0, 0x4330000000000002u},
        {"18014398509481986", 0, 0x4350000000000000u},
        {"18014398509481990", 0, 0x4350000000000002u},
        /* subnormals and the normal/subnormal boundary */
        {"5e-324", 0, 0x0000000000000001u},
        {"4.9406564584124654e-324", 0, 0x0000000000000001u},
        {"2.4703282292062327e-324", 0, 0x0000000000000000u},
        {"2.4703282292062328e-324", 0, 0x0000000000000001u},
        {"-2.4703282292062328e-324", 0, 0x8000000000000001u},
        {"2.2250738585072011e-308", 0, 0x000fffffffffffffu},
        {"2.2250738585072012e-308", 0, 0x0010000000000000u},
        {"1e-400", 0, 0x0000000000000000u},
        {"-1e-400", 0, 0x8000000000000000u},
        /* the top */
        {"1.7976931348623157e308", 0, 0x7fefffffffffffffu},
        {"1.7976931348623158e308", 0, 0x7fefffffffffffffu},
        {"1.7976931348623159e308", 1, 0x7ff0000000000000u},
        {"-1.7976931348623159e308", 1, 0xfff0000000000000u},
        {"1e309", 1, 0x7ff0000000000000u},
        {"179769313486231580793728971405301e276", 0, 0x7fefffffffffffffu},
        /* exponents of many digits: saturate, never wrap */
        {"1e-99999999999", 0, 0x0000000000000000u},
        {"0e99999999999", 0, 0x0000000000000000u},
        {"1e99999999999", 1, 0x7ff0000000000000u},
        {"1e-99999999999999999999", 0, 0x0000000000000000u},
        {"-1e-99999999999999999999", 0, 0x8000000000000000u},
        {"0e99999999999999999999", 0, 0x0000000000000000u},
        {"-0.0e99999999999999999999", 0, 0x8000000000000000u},
        {"1e99999999999999999999", 1, 0x7ff0000000000000u},
        {"1e+00000000000000000001", 0, 0x4024000000000000u},
        {"1E-00000000000000000001", 0, 0x3fb999999999999au},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        expect_parse(cases[i].text, strlen(cases[i].text), cases[i].rc, cases[i].bits);

    /* Long mantissas. M is the exact midpoint between 1 and 1 + 2^-52. */
    static const char mid[] = "1.00000000000000011102230246251565404236316680908203125";
    static char buf[MAX_TEXT];
    size_t n = strlen(mid);
    memcpy(buf, mid, n);
    memset(buf + n, '0', 800 - (n - 1)); /* 800 significant digits, a tie: even (down) */
    size_t len = 801;
    expect_parse(buf, len, 0, 0x3ff0000000000000u);
    buf[len - 1] = '1'; /* just above in the 800th digit: up */
    expect_parse(buf, len, 0, 0x3ff0000000000001u);
    memset(buf + n, '0', 1200 - n);
    buf[1199] = '1'; /* above only in digit 1199: past the slow path's 800-digit copy */
    expect_parse(buf, 1200, 0, 0x3ff0000000000001u);
    buf[1199] = '0';
    expect_parse(buf, 1200, 0, 0x3ff0000000000000u);
    memcpy(buf, mid, n);
    buf[n - 1] = '4'; /* ...203124 then 745 nines: just below */
    memset(buf + n, '9', 800 - n);
    expect_parse(buf, 800, 0, 0x3ff0000000000000u);
    /* the same tie written with 400 leading zeros and an exponent */
    memcpy(buf, "0.", 2);
    memset(buf + 2, '0', 399);
    memcpy(buf + 401, "100000000000000011102230246251565404236316680908203125e400", 58);
    expect_parse(buf, 459, 0, 0x3ff0000000000000u);
    memcpy(buf + 401, "100000000000000011102230246251565404236316680908203126e400", 58);
    expect_parse(buf, 459, 0, 0x3ff0000000000001u);
    /* 1 followed by 400 zeros, then e-400 */
    buf[0] = '1';
    memset(buf + 1, '0', 400);
    memcpy(buf + 401, "e-400", 5);
    expect_parse(buf, 406, 0, 0x3ff0000000000000u);
    /* the overflow boundary DBL_MAX + ulp/2 = 2^1024 - 2^970 (309 digits): a tie that
     * rounds to even, i.e. to 2^1024 = infinity; one less stays DBL_MAX */
    static const char top[] = "17976931348623158079372897140530341507993413271003782693617377898044"
                              "496829276475094664901797"
                              "75872070963302864166928879109465555478519404026306574886715058206819"
                              "089020007083836762738548"
                              "45817711531764475730270069855571366959622842914819860834936475292719"
                              "074168444365510704342711"
                              "559699508093042880177904174497792";
    expect_parse(top, strlen(top), 1, 0x7ff0000000000000u);
    memcpy(buf, top, sizeof top);
    buf[strlen(top) - 1] = '1';
    expect_parse(buf, strlen(top), 0, 0x7fefffffffffffffu);
}

static void test_parse_grammar(void **state) {
    (void)state;
    /* text, offset of the first byte that does not fit */
    static const struct {
        const char *text;
        int at;
    } bad[] = {
        {"", 0},         {"+1", 0},        {"01", 1},   {"-01", 2}, {"00", 1},  {"1.", 2},
        {".5", 0},       {"-.5", 1},       {"1.e5", 2}, {"1e", 2},  {"1E+", 3}, {"1e-", 3},
        {"1e+-1", 3},    {"-", 1},         {"--1", 1},  {"- 1", 1}, {"NaN", 0}, {"nan", 0},
        {"Infinity", 0}, {"-Infinity", 1}, {"inf", 0},  {" 1", 0},  {"1.x", 2}, {"0.e1", 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        const char *s = bad[i].text;
        double out = 123.5; /* poison: must stay */
        const char *stop = (const char *)&out;
        int rc = imp_num_parse(s, s + strlen(s), &out, &stop);
        if (rc != -1 || out != 123.5 || stop != s + bad[i].at) {
            print_error("\"%s\": rc %d out %g stop %td, want -1, untouched, %d\n", s, rc, out,
                        stop - s, bad[i].at);
            fail();
        }
        /* stop is optional */
        assert_int_equal(imp_num_parse(s, s + strlen(s), &out, NULL), -1);
    }
    /* s >= end */
    double out = 1.0;
    const char *one = "1";
    assert_int_equal(imp_num_parse(one, one, &out, NULL), -1);

    /* A complete number followed by anything: success, stop at the rest. */
    static const struct {
        const char *text;
        int stop;
        double value;
    } ok[] = {
        {"1,2", 1, 1.0},   {"1.5.3", 3, 1.5},  {"12]", 2, 12.0},     {"-0.0e-0x", 7, -0.0},
        {"0x10", 1, 0.0},  {"1e5e5", 3, 1e5},  {"2E-1 ", 4, 0.2},    {"-7}", 2, -7.0},
        {"0.5\"", 3, 0.5}, {"1e+0 1", 4, 1.0}, {"3.25e1x", 6, 32.5},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i) {
        const char *s = ok[i].text;
        double v = 123.5;
        const char *stop = NULL;
        int rc = imp_num_parse(s, s + strlen(s), &v, &stop);
        if (rc != 0 || bits_of(v) != bits_of(ok[i].value) || stop != s + ok[i].stop) {
            print_error("\"%s\": rc %d value %g stop %td\n", s, rc, v, stop ? stop - s : -1);
            fail();
        }
        assert_int_equal(imp_num_parse(s, s + strlen(s), &v, NULL), 0);
    }
    /* `end` bounds the number even when digits follow in memory */
    const char *digits = "123456e7";
    double v = 0;
    const char *stop = NULL;
    assert_int_equal(imp_num_parse(digits, digits + 3, &v, &stop), 0);
    assert_true(v == 123.0 && stop == digits + 3);
    assert_int_equal(imp_num_parse(digits, digits + 7, &v, &stop), -1); /* "123456e" */
    assert_true(stop == digits + 7);
    const char *frac = "1.5";
    assert_int_equal(imp_num_parse(frac, frac + 2, &v, &stop), -1); /* "1." */
    assert_true(stop == frac + 2);
    const char *neg = "-5";
    assert_int_equal(imp_num_parse(neg, neg + 1, &v, &stop), -1); /* "-" */
    assert_true(stop == neg + 1);
    /* an overflow still reports where the number ended */
    const char *big = "1e400,";
    v = 0;
    assert_int_equal(imp_num_parse(big, big + 6, &v, &stop), 1);
    assert_true(isinf(v) && v > 0 && stop == big + 5);

    /* An exact-size heap copy: under ASan any read past `end` faults. */
    static const char *const texts[] = {"1",
                                        "-0",
                                        "12.5",
                                        "1e5",
                                        "0.000123",
                                        "123456789012345678901234567890",
                                        "2.2250738585072011e-308"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; ++i) {
        size_t len = strlen(texts[i]);
        char *h = malloc(len);
        assert_non_null(h);
        memcpy(h, texts[i], len);
        assert_int_equal(imp_num_parse(h, h + len, &v, &stop), 0);
        assert_true(stop == h + len && v == strtod(texts[i], NULL));
        free(h);
    }
}

/* ---- parse: random ----------------------------------------------------------------------------
 */

#define N_RANDOM_DOUBLES 1000000
#define N_RANDOM_DIGITS 900000
#define N_MIDPOINTS 40000

/* Random doubles (bit patterns, scene-like values, log-uniform magnitudes)
 * printed the ways clients print them. */
static void test_parse_random_doubles(void **state) {
    (void)state;
    tally t = {"random doubles via printf", 0x5eed0001u, 0, 0, 0};
    uint64_t rng = t.seed;
    char text[128];
    for (long i = 0, n_cases = cases(N_RANDOM_DOUBLES); i < n_cases; ++i) {
        double x;
        uint64_t kind = imp_rng_next(&rng) % 10;
        if (kind < 6) {
            x = random_finite(&rng);
        } else if (kind < 8) {
            x = imp_rng_uniform(&rng, -1000.0, 1000.0);
        } else {
            x = pow(10.0, imp_rng_uniform(&rng, -30.0, 30.0));
        }
        uint64_t f = imp_rng_next(&rng) % 52;
        int n;
        if (f == 0) {
            n = snprintf(text, sizeof text, "%.17g", x);
        } else if (f == 1) {
            n = snprintf(text, sizeof text, "%.15g", x);
        } else if (f < 22) {
            n = snprintf(text, sizeof text, "%.*g", (int)f - 1, x); /* 1..20 */
        } else {
            n = snprintf(text, sizeof text, "%.*e", (int)f - 21, x); /* 1..30 */
        }
        check_parse(&t, text, (size_t)n);
    }
    finish(&t);
}

/* A random JSON number: 1-40 digits, a random point, leading zeros, sparse
 * digits (mostly zeros), exponents in +-350 with optional sign and padding. */
static size_t random_digit_text(uint64_t *rng, char *out) {
    char *p = out;
    uint64_t r = imp_rng_next(rng);
    if (r & 1) *p++ = '-';
    int nd = 1 + (int)((r >> 1) % 40);
    int ni = (int)((r >> 8) % (uint64_t)(nd + 1)); /* integer digits; 0 means "0." */
    int sparse = (r >> 16) % 4 == 0;
    for (int i = 0; i < nd; ++i) {
        if (i == ni) {
            if (ni == 0) *p++ = '0';
            *p++ = '.';
            if (ni == 0 && (r >> 20) % 3 == 0) { /* leading zeros */
                int z = (int)((r >> 24) % 30);
                for (int j = 0; j < z; ++j)
                    *p++ = '0';
            }
        }
        unsigned d = (unsigned)(imp_rng_next(rng) % 10);
        if (sparse && imp_rng_next(rng) % 10 != 0) d = 0;
        if (i == 0 && ni > 0 && d == 0) d = 1 + (unsigned)(imp_rng_next(rng) % 9);
        *p++ = (char)('0' + d);
    }
    if ((r >> 32) % 4 != 0) {
        *p++ = (r >> 34) & 1 ? 'e' : 'E';
        int e = (int)((r >> 36) % 701) - 350;
        if (e < 0) {
            *p++ = '-';
        } else if ((r >> 48) & 1) {
            *p++ = '+';
        }
        if ((r >> 50) % 8 == 0) *p++ = '0';
        p += sprintf(p, "%d", e < 0 ? -e : e);
    }
    *p = '\0';
    return (size_t)(p - out);
}

static void test_parse_random_digits(void **state) {
    (void)state;
    tally t = {"random digit strings", 0x5eed0002u, 0, 0, 0};
    uint64_t rng = t.seed;
    char text[256];
    for (long i = 0, n_cases = cases(N_RANDOM_DIGITS); i < n_cases; ++i) {
        size_t n = random_digit_text(&rng, text);
        check_parse(&t, text, n);
    }
    finish(&t);
}

/* Base-10^9 bignum for exact decimal expansions of midpoints. */
#define DB_WORDS 100 /* 900 digits; a midpoint needs at most 768 */
typedef struct decbig {
    uint32_t w[DB_WORDS]; /* little-endian */
    int n;
} decbig;

static void db_set(decbig *b, uint64_t v) {
    b->n = 0;
    do {
        b->w[b->n++] = (uint32_t)(v % 1000000000u);
        v /= 1000000000u;
    } while (v);
}

static void db_mul(decbig *b, uint32_t m) { /* m <= 2^30 */
    uint64_t carry = 0;
    for (int i = 0; i < b->n; ++i) {
        uint64_t x = (uint64_t)b->w[i] * m + carry;
        b->w[i] = (uint32_t)(x % 1000000000u);
        carry = x / 1000000000u;
    }
    while (carry) {
        assert_true(b->n < DB_WORDS);
        b->w[b->n++] = (uint32_t)(carry % 1000000000u);
        carry /= 1000000000u;
    }
}

static size_t db_digits(const decbig *b, char *out) {
    size_t n = 0;
    char tmp[16];
    uint32_t top = b->w[b->n - 1];
    int k = 0;
    do {
        tmp[k++] = (char)('0' + top % 10);
        top /= 10;
    } while (top);
    while (k)
        out[n++] = tmp[--k];
    for (int i = b->n - 2; i >= 0; --i) {
        uint32_t v = b->w[i];
        for (int j = 8; j >= 0; --j) {
            out[n + (size_t)j] = (char)('0' + v % 10);
            v /= 10;
        }
        n += 9;
    }
    out[n] = '\0';
    return n;
}

/* Exact decimal digits D and exponent E10 of the midpoint above x > 0:
 * (2c + 1) * 2^(q-1) = D * 10^E10. */
static size_t midpoint_digits(double x, char *digits, int *e10) {
    uint64_t b = bits_of(x);
    int be = (int)(b >> 52) & 0x7ff;
    uint64_t c = b & ((UINT64_C(1) << 52) - 1);
    int q = -1074;
    if (be) {
        c |= UINT64_C(1) << 52;
        q = be - 1075;
    }
    decbig d;
    db_set(&d, 2 * c + 1);
    int e = q - 1;
    if (e >= 0) {
        for (; e >= 29; e -= 29)
            db_mul(&d, UINT32_C(1) << 29);
        if (e) db_mul(&d, UINT32_C(1) << e);
        *e10 = 0;
    } else {
        *e10 = e;
        int k = -e;
        for (; k >= 12; k -= 12)
            db_mul(&d, 244140625u); /* 5^12 */
        uint32_t p = 1;
        while (k--)
            p *= 5;
        db_mul(&d, p);
    }
    return db_digits(&d, digits);
}

/* "d.ddd" + "e<exp>" for digits D * 10^E10, with a random sign. */
static size_t sci_text(char *out, const char *d, size_t n, long e10, int neg) {
    char *p = out;
    if (neg) *p++ = '-';
    *p++ = d[0];
    if (n > 1) {
        *p++ = '.';
        memcpy(p, d + 1, n - 1);
        p += n - 1;
    }
    p += sprintf(p, "e%ld", e10 + (long)n - 1);
    return (size_t)(p - out);
}

static void digits_inc(char *d, size_t n) { /* +1 in the last digit (carry never overflows here) */
    for (size_t i = n; i-- > 0;) {
        if (d[i] != '9') {
            ++d[i];
            return;
        }
        d[i] = '0';
    }
}

static void digits_dec(char *d, size_t n) {
    for (size_t i = n; i-- > 0;) {
        if (d[i] != '0') {
            --d[i];
            return;
        }
        d[i] = '9';
    }
}

static void test_parse_near_halfway(void **state) {
    (void)state;
    tally t = {"near-halfway strings", 0x5eed0003u, 0, 0, 0};
    uint64_t rng = t.seed;
    static char digits[1024], work[1024], text[MAX_TEXT];
    for (long i = 0, n_cases = cases(N_MIDPOINTS); i < n_cases; ++i) {
        double x;
        uint64_t kind = imp_rng_next(&rng) % 8;
        if (kind < 5) {
            x = fabs(random_finite(&rng));
        } else if (kind < 7) {
            x = fabs(imp_rng_uniform(&rng, -1000.0, 1000.0));
        } else { /* tiny subnormals and the very top */
            x = (imp_rng_next(&rng) & 1) ? from_u64(imp_rng_next(&rng) % 4096)
                                         : from_u64(0x7fefffffffffffffu - imp_rng_next(&rng) % 64);
        }
        int neg = (int)(imp_rng_next(&rng) & 1);
        int e10;
        size_t n = midpoint_digits(x, digits, &e10);
        /* 1. the exact midpoint: ties to even */
        check_parse(&t, text, sci_text(text, digits, n, e10, neg));
        /* 2, 3. one unit in the last of its (up to 768) digits above and below */
        memcpy(work, digits, n + 1);
        digits_inc(work, n);
        check_parse(&t, text, sci_text(text, work, n, e10, neg));
        memcpy(work, digits, n + 1);
        digits_dec(work, n);
        check_parse(&t, text, sci_text(text, work, n, e10, neg));
        /* 4. the midpoint, then zeros, then a 1: above by a hair */
        size_t z = 1 + imp_rng_next(&rng) % 40;
        memcpy(work, digits, n);
        memset(work + n, '0', z);
        work[n + z] = '1';
        check_parse(&t, text, sci_text(text, work, n + z + 1, e10 - (long)z - 1, neg));
        /* 5, 6. truncated to 17-25 digits (below), and that +1 (above) */
        size_t keep = 17 + imp_rng_next(&rng) % 9;
        if (keep < n) {
            memcpy(work, digits, keep);
            work[keep] = '\0';
            long ek = e10 + (long)(n - keep);
            check_parse(&t, text, sci_text(text, work, keep, ek, neg));
            digits_inc(work, keep);
            check_parse(&t, text, sci_text(text, work, keep, ek, neg));
        }
    }
    finish(&t);
}

/* ---- format -----------------------------------------------------------------------------------
 */

static void expect_format(double x, const char *want) {
    char buf[IMP_NUM_FORMAT_MAX];
    memset(buf, 'x', sizeof buf);
    size_t n = imp_num_format(x, buf);
    if (n != strlen(want) || strcmp(buf, want) != 0) {
        print_error("format(%.17g): \"%s\" (%zu), want \"%s\"\n", x, buf, n, want);
        fail();
    }
}

static void test_format_known(void **state) {
    (void)state;
    expect_format(0.0, "0.0");
    expect_format(-0.0, "-0.0");
    expect_format(3.0, "3.0");
    expect_format(-3.0, "-3.0");
    expect_format(100.0, "100.0");
    expect_format(0.1, "0.1");
    expect_format(1.0 / 3.0, "0.3333333333333333");
    expect_format(2.0 / 3.0, "0.6666666666666666");
    expect_format(1e20, "1e20");
    expect_format(1e-5, "1e-5");
    expect_format(1.5e-5, "1.5e-5");
    expect_format(0.0001, "0.0001");
    expect_format(0.00012, "0.00012");
    expect_format(5e-324, "5e-324");
    expect_format(1e-323, "1e-323");
    expect_format(-5e-324, "-5e-324");
    expect_format(DBL_MAX, "1.7976931348623157e308");
    expect_format(-DBL_MAX, "-1.7976931348623157e308");
    expect_format(DBL_MIN, "2.2250738585072014e-308");
    expect_format(2.225073858507201e-308, "2.225073858507201e-308"); /* largest subnormal */
    expect_format(123456789012345680.0, "1.2345678901234568e17");
    expect_format(1e16, "10000000000000000.0");
    expect_format(1e17, "1e17");
    expect_format(12345678901234567.0, "12345678901234568.0");
    expect_format(9007199254740993.0, "9007199254740992.0");
    expect_format(12.345678901234567, "12.345678901234567");
    expect_format(-1234.5, "-1234.5");
    expect_format(1e23, "1e23");
    expect_format(1e22, "1e22");
    expect_format(5e-5, "5e-5");
    expect_format(0.3, "0.3");
    expect_format(0.1 + 0.2, "0.30000000000000004");
    expect_format(1.0000076293945312, "1.0000076293945312");     /* 1 + 2^-17: a tie, even digit */
    expect_format(1.079561871099814e17, "1.079561871099814e17"); /* on a closed interval end */
    expect_format(ldexp(1.0, -1074 + 52), "2.2250738585072014e-308");
    expect_format(4.35, "4.35");
    expect_format(2.5, "2.5");
    expect_format(1e-7, "1e-7");
    expect_format(123e-20, "1.23e-18");
    expect_format(1e100, "1e100");
    expect_format(9.999999999999999e22, "1e23"); /* the same double */
    expect_format(9.999999999999997e22, "9.999999999999997e22");

    /* the longest outputs fit */
    char buf[IMP_NUM_FORMAT_MAX];
    assert_int_equal(imp_num_format(-2.2250738585072014e-308, buf), 24);
    assert_true(imp_num_format(-0.00012345678901234567, buf) < IMP_NUM_FORMAT_MAX);
    assert_true(imp_num_format(-12345678901234567.0, buf) < IMP_NUM_FORMAT_MAX);
}

/* Significant digits of our output (leading and trailing zeros dropped). */
static int sig_digits(const char *s, char *digits) {
    int n = 0, lead = 1;
    for (const char *p = s + (*s == '-'); *p && *p != 'e'; ++p) {
        if (*p == '.' || (lead && *p == '0')) continue;
        lead = 0;
        digits[n++] = *p;
    }
    while (n > 0 && digits[n - 1] == '0')
        --n;
    digits[n] = '\0';
    return n;
}

/* The layout the module promises, built from snprintf's "%.{n-1}e" text. */
static void expected_layout(const char *e_text, char *out) {
    const char *p = e_text;
    char *o = out;
    if (*p == '-') *o++ = *p++;
    char d[40];
    int n = 0;
    for (; *p != 'e'; ++p)
        if (*p != '.') d[n++] = *p;
    while (n > 1 && d[n - 1] == '0')
        --n;
    int X = atoi(p + 1);
    if (X >= -4 && X < 17) {
        if (X < 0) { /* 0.000ddd */
            *o++ = '0';
            *o++ = '.';
            for (int i = 0; i < -X - 1; ++i)
                *o++ = '0';
            for (int i = 0; i < n; ++i)
                *o++ = d[i];
        } else { /* integer part padded with zeros, then the rest or 0 */
            for (int i = 0; i <= X; ++i)
                *o++ = i < n ? d[i] : '0';
            *o++ = '.';
            if (n > X + 1) {
                for (int i = X + 1; i < n; ++i)
                    *o++ = d[i];
            } else {
                *o++ = '0';
            }
        }
        *o = '\0';
    } else {
        *o++ = d[0];
        if (n > 1) *o++ = '.';
        for (int i = 1; i < n; ++i)
            *o++ = d[i];
        sprintf(o, "e%d", X);
    }
}

/* "%e" text -> the same number of digits one unit higher in the last place
 * (in magnitude), as "%e" text. */
static void next_decimal_up(const char *e_text, char *out) {
    const char *p = e_text;
    char *o = out;
    if (*p == '-') *o++ = *p++;
    char d[40];
    int n = 0;
    for (; *p != 'e'; ++p)
        if (*p != '.') d[n++] = *p;
    int X = atoi(p + 1);
    int i = n - 1;
    while (i >= 0 && d[i] == '9')
        d[i--] = '0';
    if (i >= 0) {
        ++d[i];
    } else { /* 9.99e5 -> 1.00e6 */
        d[0] = '1';
        ++X;
    }
    *o++ = d[0];
    *o++ = '.';
    for (int j = 1; j < n; ++j)
        *o++ = d[j];
    sprintf(o, "e%d", X);
}

/* ref = "%.{n-1}e" of x (n digits, correctly rounded). Writes x correctly
 * rounded to n - 1 digits without another snprintf: rounding ref again
 * gives the same digits unless ref's last digit is 5 (x and ref can then be
 * on either side of the halfway point), in which case it returns 0. */
static int drop_last_digit(const char *ref, int n, char *out) {
    const char *p = ref;
    char *o = out;
    if (*p == '-') *o++ = *p++;
    char d[40];
    int m = 0;
    for (; *p != 'e'; ++p)
        if (*p != '.') d[m++] = *p;
    if (m != n || n < 2 || d[n - 1] == '5') return 0;
    int X = atoi(p + 1);
    if (d[n - 1] > '5') {
        int i = n - 2;
        while (i >= 0 && d[i] == '9')
            d[i--] = '0';
        if (i >= 0) {
            ++d[i];
        } else {
            d[0] = '1';
            ++X;
        }
    }
    *o++ = d[0];
    if (n > 2) *o++ = '.';
    for (int j = 1; j < n - 1; ++j)
        *o++ = d[j];
    sprintf(o, "e%d", X);
    return 1;
}

static int round_trips(const char *s, double x) { return bits_of(strtod(s, NULL)) == bits_of(x); }

/* One formatted value: read back, layout, and the shortest-digits check. */
static void check_format(tally *t, double x, int full_scan) {
    char buf[IMP_NUM_FORMAT_MAX + 8], ref[64], want[64], d[40];
    memset(buf, 'x', sizeof buf);
    size_t len = imp_num_format(x, buf);
    ++t->cases;
    if (len >= IMP_NUM_FORMAT_MAX || buf[len] != '\0' || strlen(buf) != len) {
        report(t, "%016llx: bad length %zu", (unsigned long long)bits_of(x), len);
        return;
    }
    if (!round_trips(buf, x)) {
        report(t, "%016llx (%.17g): \"%s\" reads back as %.17g", (unsigned long long)bits_of(x), x,
               buf, strtod(buf, NULL));
        return;
    }
    if (!strchr(buf, '.') && !strchr(buf, 'e')) report(t, "\"%s\": neither '.' nor 'e'", buf);
    int n = sig_digits(buf, d);
    if (x == 0.0) return;
    /* n digits: snprintf's correctly rounded n digits must be ours, laid out as promised */
    snprintf(ref, sizeof ref, "%.*e", n - 1, x);
    expected_layout(ref, want);
    if (strcmp(want, buf) != 0) {
        /* The one exception: x a power of two (significand 2^52, not the
         * smallest normal), where the gap below x is half the gap above.
         * The closest n-digit decimal can then lie below x, outside the
         * narrower lower half-interval, while the next n-digit decimal above
         * x is inside: n digits suffice, but not snprintf's. We must print
         * exactly that next one, and snprintf's own n digits must not
         * round-trip. */
        uint64_t b = bits_of(x) & ~(UINT64_C(1) << 63);
        int pow2 = (b & 0xfffffffffffffu) == 0 && (b >> 52) > 1;
        if (pow2 && !round_trips(ref, x)) {
            char up[64];
            next_decimal_up(ref, up);
            expected_layout(up, want);
            if (strcmp(want, buf) == 0) {
                ++t->below_pow2;
            } else {
                report(t, "%016llx: \"%s\", want \"%s\" (power of two)",
                       (unsigned long long)bits_of(x), buf, want);
                return;
            }
        } else {
            report(t, "%016llx: \"%s\", but %%.%de gives \"%s\" -> \"%s\"",
                   (unsigned long long)bits_of(x), buf, n - 1, ref, want);
            return;
        }
    }
    /* Fewer digits must not round-trip. For p = n - 1 that is the whole
     * story except at powers of two: rounding to p + 1 digits is at least as
     * close as rounding to p, and the interval is symmetric, so once p fails
     * every smaller p fails too. full_scan tries every p < n regardless. */
    char shorter[64];
    for (int p = n - 1; p >= 1; --p) {
        if (p < n - 1 || !drop_last_digit(ref, n, shorter))
            snprintf(shorter, sizeof shorter, "%.*e", p - 1, x);
        if (round_trips(shorter, x)) {
            report(t, "%016llx: \"%s\" has %d digits, but \"%s\" round-trips",
                   (unsigned long long)bits_of(x), buf, n, shorter);
            return;
        }
        if (!full_scan) break;
    }
}

#define N_FORMAT_BITS 2000000
#define N_FORMAT_NICE 300000
#define FULL_SCAN_EVERY 256

static void test_format_random(void **state) {
    (void)state;
    tally t = {"format random bit patterns", 0x5eed0004u, 0, 0, 0};
    uint64_t rng = t.seed;
    for (long i = 0, n_cases = cases(N_FORMAT_BITS); i < n_cases; ++i)
        check_format(&t, random_finite(&rng), i % FULL_SCAN_EVERY == 0);
    finish(&t);

    tally u = {"format nice values", 0x5eed0005u, 0, 0, 0};
    rng = u.seed;
    for (long i = 0, n_cases = cases(N_FORMAT_NICE); i < n_cases; ++i) {
        uint64_t r = imp_rng_next(&rng);
        double k = (double)(imp_rng_next(&rng) % 100000000u);
        double x;
        switch (r % 8) {
        case 0: x = k / 1000.0; break;
        case 1: x = k / 100.0; break;
        case 2: x = k / 8.0; break;
        case 3: x = k; break;
        case 4: x = k * 1e-6; break;
        case 5: x = k * 1e10; break;
        case 6: x = (double)(imp_rng_next(&rng) % 100000u) / 1e3 + 0.5; break;
        default: x = k / 3.0; break;
        }
        if ((r >> 8) & 1) x = -x;
        check_format(&u, x, i % FULL_SCAN_EVERY == 0);
    }
    finish(&u);
}

/* Awkward places: every power of two and its neighbours (the interval below a
 * power of two is half as wide), the smallest subnormals, integers around
 * 2^53, and interval ends that are exactly a multiple of 10^k (closed when
 * the significand is even). */
static void test_format_edges(void **state) {
    (void)state;
    tally t = {"format edges", 0x5eed0006u, 0, 0, 0};
    uint64_t rng = t.seed;
    for (uint64_t e = 0; e < 2047; ++e) {
        check_format(&t, from_u64(e << 52), 1);
        check_format(&t, from_u64((e << 52) | 1), 1);
        check_format(&t, from_u64((e << 52) | 0xfffffffffffffu), 1);
    }
    for (uint64_t c = 1; c < 20000; ++c)
        check_format(&t, from_u64(c), c < 2000);
    for (int64_t i = -5000; i <= 5000; ++i)
        check_format(&t, 9007199254740992.0 + (double)i, 0);
    for (int q = 1; q < 80; ++q) {
        int k = (int)floor(q * 0.30102999566398120);
        for (int j = k < 1 ? 1 : k; j <= k + 2 && j <= 27 && j <= q - 1; ++j) {
            uint64_t p5 = imp_num_pow5_u64[j];
            for (int s = -1; s <= 1; s += 2) {
                /* 2c + s = 5^j * o, o odd, c even in [2^52, 2^53) */
                uint64_t lo = ((UINT64_C(1) << 53) + (uint64_t)(int64_t)s) / p5 + 1;
                uint64_t hi = ((UINT64_C(1) << 54) + (uint64_t)(int64_t)s) / p5 - 1;
                if (lo > hi) continue;
                for (int tries = 0; tries < 40; ++tries) {
                    uint64_t o = (lo + imp_rng_next(&rng) % (hi - lo + 1)) | 1;
                    if (o > hi) continue;
                    uint64_t two_c = p5 * o - (uint64_t)(int64_t)s;
                    uint64_t c = two_c / 2;
                    if (c & 1 || c < (UINT64_C(1) << 52) || c >= (UINT64_C(1) << 53)) continue;
                    uint64_t b = ((uint64_t)(q + 1075) << 52) | (c - (UINT64_C(1) << 52));
                    check_format(&t, from_u64(b), 1);
                }
            }
        }
    }
    finish(&t);
}

/* ---- the portable build -----------------------------------------------------------------------
 */

static void test_portable_build(void **state) {
    (void)state;
    tally t = {"IMP_NUM_PORTABLE build vs strtod", 0x5eed0007u, 0, 0, 0};
    uint64_t rng = t.seed;
    char text[256];
    for (long i = 0, n_cases = cases(100000); i < n_cases; ++i) {
        size_t n;
        if (i & 1) {
            n = random_digit_text(&rng, text);
        } else {
            n = (size_t)snprintf(text, sizeof text, "%.17g", random_finite(&rng));
        }
        check_parse_with(&t, imp_num_parse_portable, text, n);
    }
    finish(&t);
    tally u = {"IMP_NUM_PORTABLE build vs the default build, format", 0x5eed0008u, 0, 0, 0};
    rng = u.seed;
    for (long i = 0, n_cases = cases(100000); i < n_cases; ++i) {
        double x = random_finite(&rng);
        char a[IMP_NUM_FORMAT_MAX], b[IMP_NUM_FORMAT_MAX];
        imp_num_format(x, a);
        imp_num_format_portable(x, b);
        ++u.cases;
        if (strcmp(a, b) != 0)
            report(&u, "%016llx: \"%s\" vs \"%s\"", (unsigned long long)bits_of(x), a, b);
    }
    finish(&u);
}

/* ---- tables, recomputed ------------------------------------------------------------------------
 */

/* Binary bignum, little-endian 32-bit words. */
#define BN_WORDS 100 /* 3200 bits: 5^1100 has 2554 */
typedef struct bn {
    uint32_t w[BN_WORDS];
    int n;
} bn;

static void bn_set(bn *a, uint64_t v) {
    memset(a, 0, sizeof *a);
    a->w[0] = (uint32_t)v;
    a->w[1] = (uint32_t)(v >> 32);
    a->n = a->w[1] ? 2 : 1;
}

static void bn_mul_small(bn *a, uint32_t m) {
    uint64_t carry = 0;
    for (int i = 0; i < a->n; ++i) {
        uint64_t x = (uint64_t)a->w[i] * m + carry;
        a->w[i] = (uint32_t)x;
        carry = x >> 32;
    }
    if (carry) {
        assert_true(a->n < BN_WORDS);
        a->w[a->n++] = (uint32_t)carry;
    }
}

static int bn_bitlen(const bn *a) {
    int i = a->n - 1;
    while (i > 0 && a->w[i] == 0)
        --i;
    int b = 0;
    for (uint32_t top = a->w[i]; top; top >>= 1)
        ++b;
    return 32 * i + b;
}

static int bn_bit(const bn *a, int i) {
    if (i < 0 || i >= 32 * a->n) return 0;
    return (int)((a->w[i / 32] >> (i % 32)) & 1);
}

/* out = a * (hi:lo) */
static void bn_mul_u128(const bn *a, uint64_t hi, uint64_t lo, bn *out) {
    uint32_t m[4] = {(uint32_t)lo, (uint32_t)(lo >> 32), (uint32_t)hi, (uint32_t)(hi >> 32)};
    memset(out, 0, sizeof *out);
    assert_true(a->n + 4 <= BN_WORDS);
    for (int j = 0; j < 4; ++j) {
        uint64_t carry = 0;
        for (int i = 0; i < a->n; ++i) {
            uint64_t x = (uint64_t)a->w[i] * m[j] + out->w[i + j] + carry;
            out->w[i + j] = (uint32_t)x;
            carry = x >> 32;
        }
        out->w[a->n + j] = (uint32_t)carry;
    }
    out->n = a->n + 4;
}

static void bn_add(bn *a, const bn *b) {
    uint64_t carry = 0;
    int n = a->n > b->n ? a->n : b->n;
    for (int i = 0; i < n; ++i) {
        uint64_t x = (uint64_t)(i < a->n ? a->w[i] : 0) + (i < b->n ? b->w[i] : 0) + carry;
        a->w[i] = (uint32_t)x;
        carry = x >> 32;
    }
    a->n = n;
    if (carry) a->w[a->n++] = (uint32_t)carry;
}

/* sign of a - 2^s */
static int bn_cmp_pow2(const bn *a, int s) {
    int bl = bn_bitlen(a);
    if (bl != s + 1) return bl < s + 1 ? -1 : 1;
    for (int i = 0; i < s; ++i)
        if (bn_bit(a, i)) return 1;
    return 0;
}

#define LOG_N 1100
static int bl5[LOG_N + 1];  /* bit length of 5^n */
static int sec5[LOG_N + 1]; /* second-highest bit of 5^n */
static int bl35[LOG_N + 1]; /* bit length of 3 * 5^n */

/* floor(x / 2^s) for any sign, by division (not the module's biased shift) */
static int64_t floor_div_pow2(int64_t x, int s) {
    int64_t d = (int64_t)1 << s;
    int64_t qt = x / d;
    if (x % d != 0 && x < 0) --qt;
    return qt;
}

/* 10^k <= 2^q ? */
static int pow10_le_pow2(int k, int q) {
    if (k >= 0) return q - k >= 0 && (k == 0 || bl5[k] <= q - k);
    int n = -k; /* 2^(-q-n) <= 5^n */
    return -q - n <= bl5[n] - 1;
}

/* 10^k <= 3 * 2^m ? */
static int pow10_le_3pow2(int k, int m) {
    if (k >= 0) { /* 5^k <= 3 * 2^(m-k); 3 * 2^j has bit length j + 2 and top bits 11 */
        int j = m - k;
        if (k == 0) return j >= 0 || j == -1; /* 1 <= 3 * 2^j */
        if (bl5[k] != j + 2) return bl5[k] < j + 2;
        return sec5[k] == 0; /* equal top bit; 5^k is odd, never equal */
    }
    int n = -k; /* 1 <= 3 * 5^n * 2^(m+n)  <=>  2^-(m+n) <= 3 * 5^n */
    return -(m + n) <= bl35[n] - 1;
}

static void test_tables(void **state) {
    (void)state;
    /* powers of five by repeated multiplication */
    bn p, p3;
    bn_set(&p, 1);
    bn_set(&p3, 3);
    for (int n = 0; n <= LOG_N; ++n) {
        bl5[n] = bn_bitlen(&p);
        sec5[n] = bn_bit(&p, bl5[n] - 2);
        bl35[n] = bn_bitlen(&p3);
        bn_mul_small(&p, 5);
        bn_mul_small(&p3, 5);
    }

    /* T(q) for q >= 0: the top 128 bits of 5^q (zero-filled below when shorter) */
    bn_set(&p, 1);
    for (int q = 0; q <= IMP_NUM_POW5_MAX; ++q) {
        int b = bn_bitlen(&p);
        uint64_t hi = 0, lo = 0;
        for (int i = 0; i < 64; ++i) {
            hi = (hi << 1) | (uint64_t)bn_bit(&p, b - 1 - i);
            lo = (lo << 1) | (uint64_t)bn_bit(&p, b - 65 - i);
        }
        const uint64_t *t = &imp_num_pow5[2 * (q - IMP_NUM_POW5_MIN)];
        if (t[0] != hi || t[1] != lo) {
            print_error("T(%d) = %016llx %016llx, want %016llx %016llx\n", q,
                        (unsigned long long)t[0], (unsigned long long)t[1], (unsigned long long)hi,
                        (unsigned long long)lo);
            fail();
        }
        /* exact (all of 5^q kept) exactly for q <= 55, as the parser assumes */
        assert_int_equal(b <= 128, q <= 55);
        /* the formatter takes g = T >> 2 as exact when the low word and the two
         * bits shifted out are zero: that must mean 5^q has at most 62 bits */
        assert_int_equal(t[1] == 0 && (t[0] & 3) == 0, b <= 62);
        bn_mul_small(&p, 5);
    }
    /* T(-n) = floor(2^s / 5^n), s = 127 + bitlen(5^n): T * 5^n <= 2^s < (T + 1) * 5^n */
    bn_set(&p, 1);
    for (int n = 1; n <= -IMP_NUM_POW5_MIN; ++n) {
        bn_mul_small(&p, 5);
        int s = 127 + bn_bitlen(&p);
        const uint64_t *t = &imp_num_pow5[2 * (-n - IMP_NUM_POW5_MIN)];
        assert_true(t[0] >> 63);                    /* normalised: 2^127 <= T < 2^128 */
        assert_false(t[1] == 0 && (t[0] & 3) == 0); /* never taken for exact */
        bn prod;
        bn_mul_u128(&p, t[0], t[1], &prod);
        int below = bn_cmp_pow2(&prod, s) <= 0;
        bn_add(&prod, &p);
        int above = bn_cmp_pow2(&prod, s) > 0;
        if (!below || !above) {
            print_error("T(%d) = %016llx %016llx is not floor(2^%d / 5^%d)\n", -n,
                        (unsigned long long)t[0], (unsigned long long)t[1], s, n);
            fail();
        }
    }

    /* the fixed-point logarithms, over their documented ranges */
    for (int q = -IMP_NUM_LOG2_POW10_RANGE; q <= IMP_NUM_LOG2_POW10_RANGE; ++q) {
        int64_t got = floor_div_pow2((int64_t)q * IMP_NUM_LOG2_POW10_MUL + IMP_NUM_LOG2_POW10_ADD,
                                     IMP_NUM_LOG2_POW10_SHIFT);
        int64_t want = q > 0 ? q + bl5[q] - 1 : q < 0 ? q - bl5[-q] : 0; /* floor(q log2 10) */
        if (got != want) {
            print_error("floor(%d log2 10): %lld, want %lld\n", q, (long long)got, (long long)want);
            fail();
        }
        /* and the table's binary exponent follows from it: floor(log2 5^q) = that - q */
        if (q >= IMP_NUM_POW5_MIN && q <= IMP_NUM_POW5_MAX)
            assert_int_equal(want - q, q >= 0 ? bl5[q] - 1 : -bl5[-q]);
    }
    for (int q = -IMP_NUM_LOG10_POW2_RANGE; q <= IMP_NUM_LOG10_POW2_RANGE; ++q) {
        int k = (int)floor_div_pow2((int64_t)q * IMP_NUM_LOG10_POW2_MUL + IMP_NUM_LOG10_POW2_ADD,
                                    IMP_NUM_LOG10_POW2_SHIFT);
        if (!pow10_le_pow2(k, q) || pow10_le_pow2(k + 1, q)) {
            print_error("floor(%d log10 2) is not %d\n", q, k);
            fail();
        }
        k = (int)floor_div_pow2((int64_t)q * IMP_NUM_LOG10_3Q_POW2_MUL + IMP_NUM_LOG10_3Q_POW2_ADD,
                                IMP_NUM_LOG10_3Q_POW2_SHIFT);
        if (!pow10_le_3pow2(k, q - 2) || pow10_le_3pow2(k + 1, q - 2)) {
            print_error("floor(log10(3 * 2^%d)) is not %d\n", q - 2, k);
            fail();
        }
    }
    /* The ranges cover what the module evaluates: q of every double (-1074..971,
     * and -k up to 324) and the parser's decimal exponents. */
    assert_true(IMP_NUM_LOG10_POW2_RANGE >= 1076 && IMP_NUM_LOG10_3Q_POW2_RANGE >= 1076);
    assert_true(IMP_NUM_LOG2_POW10_RANGE >= 342 && IMP_NUM_POW5_MIN <= -342 &&
                IMP_NUM_POW5_MAX >= 324);

    /* small powers */
    uint64_t ten = 1, five = 1;
    for (int i = 0; i < 28; ++i) {
        assert_true(imp_num_pow5_u64[i] == five);
        if (i < 20) assert_true(imp_num_pow10_u64[i] == ten);
        if (i < 23) assert_true(imp_num_pow10_dbl[i] == ldexp((double)five, i)); /* 5^i < 2^53 */
        if (i < 19) ten *= 10;
        five *= 5;
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_parse_known),
        cmocka_unit_test(test_parse_grammar),
        cmocka_unit_test(test_parse_random_doubles),
        cmocka_unit_test(test_parse_random_digits),
        cmocka_unit_test(test_parse_near_halfway),
        cmocka_unit_test(test_format_known),
        cmocka_unit_test(test_format_random),
        cmocka_unit_test(test_format_edges),
        cmocka_unit_test(test_portable_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * numtext.c - JSON number text to double and back, correctly rounded.
 *
 * DESIGN
 * What: imp_num_parse turns one RFC 8259 number into the double strtod
 * would give (round to nearest, ties to even); imp_num_format writes the
 * shortest decimal that reads back to the same double, in jansson's "%.17g"
 * layout. They replace jansson's strtod/snprintf on the scene hot path,
 * where a request carries tens of thousands of 17-digit numbers.
 *
 * How (parse): one pass over the text checks the grammar and gathers up to
 * 19 significant digits into a 64-bit w and a decimal exponent q (value
 * w * 10^q, plus "inexact" when a nonzero digit was dropped). Then, first
 * to answer wins:
 *   1. Clinger's fast path (Clinger, "How to read floating point numbers
 *      accurately", 1990): w <= 2^53 and |q| <= 22 are both exact doubles,
 *      so one IEEE multiply or divide rounds correctly. Extended to q up to
 *      22 + 15 when w * 10^(q-22) is still an exact integer below 2^53.
 *   2. Eisel-Lemire (Lemire, "Number parsing at a gigabyte per second",
 *      2021): w, shifted to fill 64 bits, times T(q), the 128-bit
 *      truncation of 5^q. Because T(q) <= 5^q * 2^-e < T(q) + 1, the exact
 *      192-bit product lies in [w*T, w*T + w]. We round both ends of the
 *      interval (a monotone map) and accept when they agree; that is the
 *      paper's "the bits below the mantissa are not all ones" test, stated
 *      so that it also covers ties, subnormals and overflow without special
 *      cases. Usually w times T's high word decides: that product's 128
 *      bits are then within 2^64 of the truth, which can change the result
 *      only if the 9 or 10 bits under the round bit are all zeros or all
 *      ones; otherwise the second 64x64 product narrows the interval to w
 *      (the one-product, normal-result case is inlined in imp_num_parse,
 *      the rest is el_bounds). For q in [0, 55]
 *      T(q) is exact, so halfway cases such as 9007199254740993 round
 *      exactly. With more than 19 digits the value lies in [w, w+1) * 10^q
 *      and the same test runs on that wider interval (the paper's w+1).
 *   3. A halfway case needs an exact dyadic value, which for q < 0 means
 *      5^-q divides w; then w / 5^-q * 2^q is rounded exactly instead.
 *   4. Otherwise (the interval straddles a rounding boundary: none of
 *      20 million random %.17g texts here; typically more than 19 digits
 *      very near a halfway point) strtod on a NUL-terminated local copy.
 *      The copy keeps the first 800 significant digits and, if anything
 *      nonzero follows, one extra '1': a rounding boundary between doubles
 *      has at most 768 significant digits, so the copy rounds the same as
 *      the original, and its size is bounded whatever the input length.
 *      The copy has no decimal point (digits then e<exp>), so the locale's
 *      radix character cannot matter.
 * Digits are read eight at a time where the bytes are there (SWAR below).
 *
 * How (format): Schubfach (R. Giulietti, "The Schubfach way to render
 * doubles", 2020). For v = c * 2^q the rounding interval is
 * [v - half gap below, v + half gap above] (closed when c is even). With
 * k = floor(log10 of its width) it holds one or two multiples of 10^k and
 * at most one of 10^(k+1). v and both interval ends are scaled by 10^-k
 * through g, a 126-bit over-approximation of 10^-k, each product rounded
 * to odd so that comparisons with the candidates (multiples of 4) stay
 * exact. A multiple of 10^(k+1) in the interval wins (it is the shortest),
 * else the one of s = floor(v 10^-k), s + 1 inside, else the closer (ties
 * to even). Two places where an interval end or v itself is exactly such
 * a multiple need exact values instead of the rounded-up g: small -k
 * (g exact) and k in [1, 23] (the ends computed by division); see
 * schubfach(). Integers below 2^53 skip all this: they are their own
 * shortest form. g(-k) comes from the parser's table ((T >> 2) + 1), so
 * there is one table. The 17 digits are made in registers, 8 at a time.
 * Checked against snprintf and strtod on millions of values (and, while
 * writing, against Python's repr on a million more, all powers of two and
 * all subnormals below 200000 ulp included).
 *
 * Why this way: strtod and snprintf("%.17g") cost about 127 and 450 ns per
 * number here; both algorithms above need no bignum on their fast paths and
 * are proved correct in their papers. Fallbacks go to strtod rather than to
 * a home-grown bignum comparison: they are rare and strtod is the reference
 * the result must equal anyway. Shortest output (not %.17g) keeps responses
 * small and still round-trips exactly.
 *
 * The 64x64 -> 128-bit product uses unsigned __int128 where the compiler
 * has it, else four 32-bit products (define IMP_NUM_PORTABLE to force that;
 * the unit test builds a copy this way).
 */
#include "api/numtext.h"

#include <assert.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/numtext_table.h"

/* ---- 64-bit helpers -------------------------------------------------------------------------- */

#if defined(__SIZEOF_INT128__) && !defined(IMP_NUM_PORTABLE)
__extension__ typedef unsigned __int128 u128;
/* Low word of a * b; the high word goes to *hi. */
static inline uint64_t mul64(uint64_t a, uint64_t b, uint64_t *hi) {
    u128 p = (u128)a * b;
    *hi = (uint64_t)(p >> 64);
    return (uint64_t)p;
}
#else
static inline uint64_t mul64(uint64_t a, uint64_t b, uint64_t *hi) {
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    /* at most 3 * (2^32 - 1) < 2^34: no overflow */
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    return (mid << 32) | (uint32_t)p00;
}
#endif

#if (defined(__GNUC__) || defined(__clang__)) && !defined(IMP_NUM_PORTABLE)
static inline int clz64(uint64_t x) { return __builtin_clzll(x); }
#else
static inline int clz64(uint64_t x) {
    int n = 0;
    while (!(x >> 63)) {
        x <<= 1;
        ++n;
    }
    return n;
}
#endif

/* floor((q * mul + add) / 2^shift) without right-shifting a negative number
 * (implementation-defined in C): shift a value made positive, then undo. */
static inline int floor_fixed(int q, int64_t mul, int64_t add, int shift) {
    const int64_t bias = 4096; /* > |q * mul + add| / 2^shift for the tables' ranges */
    return (int)(((int64_t)q * mul + add + (bias << shift)) >> shift) - (int)bias;
}

/* floor(q log2 10), |q| <= 400 */
static inline int flog2_pow10(int q) {
    return floor_fixed(q, IMP_NUM_LOG2_POW10_MUL, IMP_NUM_LOG2_POW10_ADD, IMP_NUM_LOG2_POW10_SHIFT);
}
/* floor(q log10 2), |q| <= 1100 */
static inline int flog10_pow2(int q) {
    return floor_fixed(q, IMP_NUM_LOG10_POW2_MUL, IMP_NUM_LOG10_POW2_ADD, IMP_NUM_LOG10_POW2_SHIFT);
}
/* floor(q log10 2 + log10 3/4), |q| <= 1100 */
static inline int flog10_3q_pow2(int q) {
    return floor_fixed(q, IMP_NUM_LOG10_3Q_POW2_MUL, IMP_NUM_LOG10_3Q_POW2_ADD,
                       IMP_NUM_LOG10_3Q_POW2_SHIFT);
}

static inline double from_bits(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* ---- parse ------------------------------------------------------------------------------------
 */

#define EXP_INF UINT64_C(0x7ff0000000000000)
#define MANT_DIGITS 19     /* decimal digits that always fit in 64 bits */
#define SLOW_DIGITS 800    /* > 768, the most significant digits of a rounding boundary */
#define EXP_CAP 1000000000 /* explicit exponents saturate here: 10^9 is far past 0 and inf */

static inline unsigned digit(char c) { return (unsigned)(unsigned char)c - (unsigned)'0'; }

/*
 * Eight digits at a time (SWAR): a 17-digit number is two or three 8-byte
 * loads instead of 17 trips through a byte loop, and the formatter builds
 * 8 digit characters in one register. Needs the first character in the
 * lowest byte (little-endian) and ctz/clz builtins; elsewhere byte loops
 * do all the work (IMP_NUM_PORTABLE forces that, so the test covers both).
 */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) &&                        \
    defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ &&               \
    !defined(IMP_NUM_PORTABLE)
#define NUM_SWAR 1
#else
#define NUM_SWAR 0
#endif

#if NUM_SWAR
#define BYTES(x) (UINT64_C(0x0101010101010101) * (x))

static inline uint64_t load8(const char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* How many of v's bytes, from the first, are ASCII digits (0..8). A byte
 * b is a digit iff b < 0x80, b + 0x46 < 0x80 (b <= '9') and b - 0x30 does
 * not wrap (b >= '0'). Carries and borrows only start at a non-digit and
 * only move towards later bytes, so the first flagged byte is exact. */
static inline int swar_count(uint64_t v) {
    uint64_t bad = (v | (v + BYTES(0x46)) | (v - BYTES(0x30))) & BYTES(0x80);
    return bad ? __builtin_ctzll(bad) >> 3 : 8;
}

/* The value of the first k (1..8) digit bytes of v. */
static inline uint64_t swar_value(uint64_t v, int k) {
    /* byte i = digit i; shifting left puts the k digits last, zeros first */
    uint64_t d = (v - BYTES(0x30)) << (8 * (8 - k));
    d = d * 10 + (d >> 8); /* byte 2j: the pair 10 d_2j + d_2j+1 */
    d = (d & UINT64_C(0x00ff00ff00ff00ff)) * 100 + ((d >> 16) & UINT64_C(0x00ff00ff00ff00ff));
    d = (d & UINT64_C(0x0000ffff0000ffff)) * 10000 + ((d >> 32) & UINT64_C(0x0000ffff0000ffff));
    return d & 0xffffffffu;
}
#endif

/*
 * Consumes [0-9]* from p. Digits join w while it holds fewer than 19 of
 * them (*nd counts them); later ones are only counted in *dropped and
 * noted in *inexact when nonzero. Returns the first byte after the run.
 */
static inline const char *scan_digits(const char *p, const char *end, uint64_t *w, int *nd,
                                      int64_t *dropped, int *inexact) {
#if NUM_SWAR
    /* only with 8 readable bytes: near `end` the byte loop finishes */
    while (*nd <= MANT_DIGITS - 8 && end - p >= 8) {
        uint64_t v = load8(p);
        int k = swar_count(v);
        if (k == 0) return p;
        *w = *w * imp_num_pow10_u64[k] + swar_value(v, k);
        *nd += k;
        p += k;
        if (k < 8) return p;
    }
#endif
    for (; p < end; ++p) {
        unsigned d = digit(*p);
        if (d > 9) break;
        if (*nd < MANT_DIGITS) {
            *w = *w * 10 + d;
            ++*nd;
        } else {
            ++*dropped;
            *inexact |= d != 0;
        }
    }
    return p;
}

/*
 * Correctly rounded bits of V * 2^E, V = hi * 2^64 + lo (+ something in
 * (0, 1) when sticky), 2^126 <= V < 2^128. Handles subnormals (the
 * significand shrinks below 53 bits) and overflow (EXP_INF).
 */
static uint64_t round_bits(uint64_t hi, uint64_t lo, int sticky, int64_t E) {
    int ub = (int)(hi >> 63);
    int64_t e2 = E + 126 + ub; /* V * 2^E is in [2^e2, 2^(e2+1)) */
    if (e2 > 1023) return EXP_INF;
    int64_t sh = 74 + ub; /* bits of V under a 53-bit significand */
    uint64_t base = 0;
    if (e2 >= -1022) {
        /* + the significand's leading 1 (2^52) makes the biased exponent e2 + 1023;
         * a carry out of the significand by rounding lands in the exponent too. */
        base = (uint64_t)(e2 + 1022) << 52;
    } else {
        sh += -1022 - e2;
        if (sh > 130) return 0; /* below half the smallest subnormal */
    }
    /* m = V >> (sh - 1): the kept bits and the round bit; sh - 1 >= 73 */
    int r = (int)(sh - 1 - 64);
    uint64_t m = r < 64 ? hi >> r : 0;
    uint64_t below = r < 64 ? hi & ((UINT64_C(1) << r) - 1) : hi;
    sticky |= (below | lo) != 0;
    uint64_t bits = base + (m >> 1) + ((m & 1) & ((uint64_t)sticky | (m >> 1)));
    return bits >= EXP_INF ? EXP_INF : bits;
}

/*
 * The bits to which the lower and the upper end of the interval holding
 * w * 10^q * 2^badj round (w != 0, q in the table's range). They are equal
 * when that decides the result.
 */
static void el_bounds(uint64_t w, int q, int badj, uint64_t *lo_bits, uint64_t *hi_bits) {
    int l = clz64(w);
    uint64_t wn = w << l;
    const uint64_t *t = &imp_num_pow5[2 * (q - IMP_NUM_POW5_MIN)];
    /* value = (wn * T / 2^64) * 2^E */
    int64_t E = (int64_t)flog2_pow10(q) - 63 - l + badj;
    uint64_t y_hi, y_lo = mul64(wn, t[0], &y_hi);
    /* The exact product / 2^64 is in [y_hi:y_lo, y_hi:y_lo + 2^64): adding
     * under 2^64 moves y_hi by at most one, which changes nothing unless
     * the bits under the round bit are all ones (a carry) or all zeros
     * (an exact-looking tie, or the sticky bit appearing). */
    uint64_t mask = (UINT64_C(1) << (9 + (y_hi >> 63))) - 1;
    uint64_t under = y_hi & mask;
    if (under != 0 && under != mask) {
        *lo_bits = *hi_bits = round_bits(y_hi, y_lo, 1, E);
        return;
    }
    /* The full 192-bit wn * T = hi:mid:x_lo. */
    uint64_t x_hi, x_lo = mul64(wn, t[1], &x_hi);
    uint64_t mid = y_lo + x_hi;
    uint64_t hi = y_hi + (mid < y_lo);
    *lo_bits = round_bits(hi, mid, x_lo != 0, E);
    if (q >= 0 && q <= 55) { /* 5^q < 2^128: T exact, so is the product */
        *hi_bits = *lo_bits;
        return;
    }
    /* upper end: wn * (T + 1) = product + wn */
    uint64_t u_lo = x_lo + wn;
    uint64_t u_mid = mid + (u_lo < wn);
    uint64_t u_hi = hi + (u_mid < mid);
    *hi_bits = round_bits(u_hi, u_mid, u_lo != 0, E);
}

/*
 * strtod on a bounded, locale-free copy of the number: the first
 * SLOW_DIGITS significant digits, a sticky '1' if a nonzero digit follows,
 * "e" and the exponent of the last digit kept. p..end spans the number
 * without its sign (already validated).
 */
static double slow_parse(const char *p, const char *end, int neg) {
    char buf[SLOW_DIGITS + 64];
    size_t n = 0;
    int64_t exp10 = 0; /* value = kept digits * 10^exp10 (+ sticky) */
    int frac = 0, dropped_nonzero = 0;
    if (neg) buf[n++] = '-';
    size_t first = n;
    for (; p < end; ++p) {
        char ch = *p;
        if (ch == '.') {
            frac = 1;
            continue;
        }
        if (ch == 'e' || ch == 'E') break;
        if (frac) --exp10;
        if (n == first && ch == '0') continue; /* leading zero */
        if (n - first < SLOW_DIGITS) {
            buf[n++] = ch;
        } else {
            ++exp10;
            dropped_nonzero |= ch != '0';
        }
    }
    if (n == first) return neg ? -0.0 : 0.0; /* not reached: callers handle zero */
    if (dropped_nonzero) {
        buf[n++] = '1';
        --exp10;
    }
    if (p < end) { /* explicit exponent, saturated as in the main parser */
        ++p;
        int eneg = 0;
        if (*p == '+' || *p == '-') eneg = *p++ == '-';
        int64_t ev = 0;
        for (; p < end; ++p)
            if (ev < EXP_CAP) ev = ev * 10 + digit(*p);
        exp10 += eneg ? -ev : ev;
    }
    buf[n++] = 'e';
    if (exp10 < 0) buf[n++] = '-';
    uint64_t ue = exp10 < 0 ? (uint64_t)0 - (uint64_t)exp10 : (uint64_t)exp10;
    char tmp[24];
    int nt = 0;
    do {
        tmp[nt++] = (char)('0' + ue % 10);
        ue /= 10;
    } while (ue);
    while (nt)
        buf[n++] = tmp[--nt];
    buf[n] = '\0';
    int saved = errno; /* strtod reports ERANGE; this module reports by return value */
    double d = strtod(buf, NULL);
    errno = saved;
    return d;
}

static inline int parse_fail(const char **stop, const char *at) {
    if (stop) *stop = at;
    return -1;
}

int imp_num_parse(const char *s, const char *end, double *out, const char **stop) {
    const char *p = s;
    if (p >= end) return parse_fail(stop, p);
    int neg = *p == '-';
    p += neg;
    const char *mant = p;
    if (p >= end || digit(*p) > 9) return parse_fail(stop, p);

    uint64_t w = 0;
    int nd = 0;      /* significant digits in w */
    int64_t q = 0;   /* value = w * 10^q */
    int inexact = 0; /* a nonzero digit did not fit in w */
    if (*p == '0') {
        ++p;
        if (p < end && digit(*p) <= 9) return parse_fail(stop, p);
    } else {
        /* The first 19 digits always fit; the rest only scale. */
        int64_t dropped = 0;
        p = scan_digits(p, end, &w, &nd, &dropped, &inexact);
        q += dropped;
    }
    if (p < end && *p == '.') {
        ++p;
        const char *fs = p;
        if (nd == 0) { /* "0.000ddd": leading zeros only move the point */
            while (p < end && *p == '0')
                ++p;
            q -= p - fs;
        }
        int before = nd;
        int64_t dropped = 0; /* past the point they do not scale */
        p = scan_digits(p, end, &w, &nd, &dropped, &inexact);
        q -= nd - before;
        if (p == fs) return parse_fail(stop, p);
    }
    if (p < end && (*p | 0x20) == 'e') {
        ++p;
        int eneg = 0;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (p >= end || digit(*p) > 9) return parse_fail(stop, p);
        int64_t ev = 0;
        for (; p < end; ++p) {
            unsigned d = digit(*p);
            if (d > 9) break;
            if (ev < EXP_CAP) ev = ev * 10 + d;
        }
        q += eneg ? -ev : ev;
    }
    if (stop) *stop = p;

    uint64_t sign = (uint64_t)neg << 63;
    if (w == 0) { /* every digit zero, whatever the exponent */
        *out = from_bits(sign);
        return 0;
    }
#if FLT_EVAL_METHOD == 0
    /* Clinger: both operands exact, so the one rounding is the right one. */
    if (!inexact && w <= (UINT64_C(1) << 53) && q >= -22 && q <= 22 + 15) {
        double d = (double)w;
        if (q < 0) {
            d /= imp_num_pow10_dbl[-q];
        } else if (q <= 22) {
            d *= imp_num_pow10_dbl[q];
        } else if (w <= (UINT64_C(1) << 53) / imp_num_pow10_u64[q - 22]) {
            d = (double)(w * imp_num_pow10_u64[q - 22]) * imp_num_pow10_dbl[22];
        } else {
            goto eisel_lemire;
        }
        *out = neg ? -d : d;
        return 0;
    }
eisel_lemire:
#endif
    if (q < IMP_NUM_POW5_MIN) { /* < 10^19 * 10^-343: under half the smallest subnormal */
        *out = from_bits(sign);
        return 0;
    }
    if (q > 308) { /* >= 10^309 */
        *out = from_bits(sign | EXP_INF);
        return 1;
    }
    if (!inexact) {
        /* el_bounds' one-product case, inline: a normal result, and the
         * bits under the round bit neither all zeros nor all ones, so the
         * sticky bit is set and rounding is just "round half up". */
        int l = clz64(w);
        uint64_t y_hi;
        mul64(w << l, imp_num_pow5[2 * (q - IMP_NUM_POW5_MIN)], &y_hi);
        int ub = (int)(y_hi >> 63);
        uint64_t mask = (UINT64_C(1) << (9 + ub)) - 1, under = y_hi & mask;
        int e2 = flog2_pow10((int)q) - 63 - l + 126 + ub;
        if (under != 0 && under != mask && e2 >= -1022 && e2 < 1023) {
            uint64_t m = y_hi >> (9 + ub);
            *out = from_bits(sign | (((uint64_t)(e2 + 1022) << 52) + ((m + 1) >> 1)));
            return 0;
        }
    }
    uint64_t lo, hi;
    el_bounds(w, (int)q, 0, &lo, &hi);
    if (inexact) { /* the value is in [w, w + 1) * 10^q; w + 1 <= 10^19 still fits */
        uint64_t unused;
        el_bounds(w + 1, (int)q, 0, &unused, &hi);
    }
    if (lo != hi && !inexact && q < 0 && q >= -27) {
        /* Maybe exactly halfway: that needs w * 10^q = (w / 5^-q) * 2^q. */
        uint64_t p5 = imp_num_pow5_u64[-q];
        if (w % p5 == 0) el_bounds(w / p5, 0, (int)q, &lo, &hi);
    }
    if (lo == hi) {
        *out = from_bits(sign | lo);
        return lo == EXP_INF;
    }
    double d = slow_parse(mant, p, neg);
    *out = d;
    return isinf(d) ? 1 : 0;
}

/* ---- format -----------------------------------------------------------------------------------
 */

#define C_MIN (UINT64_C(1) << 52) /* smallest normal significand */
#define Q_MIN (-1074)             /* exponent of subnormals */

/*
 * Round to odd: floor(g * cp / 2^127), with bit 0 set if anything was cut
 * off. Keeps every comparison with an even integer exact.
 */
static inline uint64_t rop(uint64_t g_hi, uint64_t g_lo, uint64_t cp) {
    uint64_t a1, a0 = mul64(g_lo, cp, &a1);
    uint64_t b1, b0 = mul64(g_hi, cp, &b1);
    uint64_t mid = b0 + a1;
    uint64_t top = b1 + (mid < b0);
    return (top << 1) | (mid >> 63) | ((((mid << 1) | a0) != 0));
}

/* v = c * 2^q (c >= 1) -> the shortest f * 10^e in v's rounding interval,
 * the closest to v of those (Schubfach). */
static void schubfach(uint64_t c, int q, uint64_t *f, int *e) {
    uint64_t out = c & 1; /* odd significand: interval ends excluded */
    uint64_t cb = c << 2, cbr = cb + 2, cbl;
    int k;
    if (c != C_MIN || q == Q_MIN) {
        cbl = cb - 2;
        k = flog10_pow2(q);
    } else { /* at a power of two the gap below is half the gap above */
        cbl = cb - 1;
        k = flog10_3q_pow2(q);
    }
    int h = q + flog2_pow10(-k) + 2; /* in [2, 5] for every q: cb << h < 2^60 */
    /* g = floor(10^-k * 2^-r) + 1, 2^125 <= g < 2^126: the table's T(-k)
     * (128 bits, truncated) shifted down by two, plus one. When 10^-k * 2^-r
     * has at most 62 bits (0 <= -k <= 26), g is that integer instead:
     * exact products are what the comparisons emulate, and v can sit
     * exactly halfway between s and s + 1 only for -k <= 24
     * (1 + 2^-17 = 1.00000762939453125 must give ...312, the even one). */
    const uint64_t *t = &imp_num_pow5[2 * (-k - IMP_NUM_POW5_MIN)];
    uint64_t g_lo = (t[0] << 62) | (t[1] >> 2), g_hi = t[0] >> 2;
    if (t[1] != 0 || (t[0] & 3) != 0) {
        g_lo += 1;
        g_hi += g_lo == 0;
    }
    uint64_t vb = rop(g_hi, g_lo, cb << h);
    uint64_t vbl = rop(g_hi, g_lo, cbl << h);
    uint64_t vbr = rop(g_hi, g_lo, cbr << h);
    if (k >= 1 && k <= 23) {
        /* For k >= 1 g cannot be exact, yet an interval end can be exactly a
         * multiple of 10^k: 4 v_l 10^-k = cbl 2^q / 10^k is an integer when
         * 5^k divides cbl (so k <= 23, as cbl < 2^55; 2^k divides 2^q). The
         * rounded-up g would then make it look a little larger and lose a
         * candidate that sits exactly on a closed end (1.079561871099814e17
         * came out with 17 digits). Exact values there; the end of an open
         * interval compares the same either way. */
        uint64_t p5 = imp_num_pow5_u64[k];
        if (cbl % p5 == 0) vbl = (cbl / p5) << (q - k);
        if (cbr % p5 == 0) vbr = (cbr / p5) << (q - k);
    }
    /* vb ~ 4 v 10^-k; s = floor(v 10^-k) */
    uint64_t s = vb >> 2;
    *e = k;
    /* The multiples of 10^(k+1) around v: the interval, narrower than
     * 10^(k+1), holds at most one, and if it does that is the shortest. */
    uint64_t sp10 = 10 * (s / 10), tp10 = sp10 + 10;
    int upin = vbl + out <= sp10 << 2;
    int wpin = (tp10 << 2) + out <= vbr;
    if (upin != wpin) {
        *f = upin ? sp10 : tp10;
        return;
    }
    uint64_t tt = s + 1;
    int uin = vbl + out <= s << 2;
    int win = (tt << 2) + out <= vbr;
    if (uin != win) {
        *f = uin ? s : tt;
        return;
    }
    /* both inside: the closer one, ties to even (vb is exact when it is a tie) */
    uint64_t mid4 = (s + tt) << 1;
    *f = (vb < mid4 || (vb == mid4 && (s & 1) == 0)) ? s : tt;
}

#if NUM_SWAR
/* v < 10^8 as 8 ASCII digits in one word, first digit in the lowest byte,
 * computed in registers: the halves v / 10^4 and v % 10^4 in two 32-bit
 * lanes, each split by 100 in 16-bit lanes, each of those by 10 in bytes.
 * Lane-wise division by multiplication: floor(x * 5243 / 2^19) = x / 100
 * for x < 10^4, floor(x * 103 / 2^10) = x / 10 for x < 100 (both checked
 * for every x by the unit test's format checks, and exhaustively when the
 * constants were chosen); no lane's product reaches the next lane. */
static inline uint64_t ascii8(uint32_t v) {
    uint64_t x = (uint64_t)(v / 10000u) | ((uint64_t)(v % 10000u) << 32);
    uint64_t h = ((x * 5243) >> 19) & UINT64_C(0x0000007f0000007f);
    uint64_t y = h | ((x - h * 100) << 16);
    uint64_t t = ((y * 103) >> 10) & UINT64_C(0x000f000f000f000f);
    uint64_t z = t | ((y - t * 10) << 8);
    return z + BYTES('0');
}
#endif

/* f < 10^17 as exactly 17 digits with leading zeros into dig[0..17), and
 * the positions of the first and last digit that is not 0 (f >= 1). */
static inline void put17(uint64_t f, char *dig, int *first, int *last) {
    uint32_t hi = (uint32_t)(f / 100000000u), lo = (uint32_t)(f % 100000000u);
    dig[0] = (char)('0' + hi / 100000000u);
#if NUM_SWAR
    uint64_t a = ascii8(hi % 100000000u), b = ascii8(lo);
    memcpy(dig + 1, &a, 8);
    memcpy(dig + 9, &b, 8);
    /* zero bytes where the digit is '0': the ends without a loop */
    a ^= BYTES('0');
    b ^= BYTES('0');
    *first = dig[0] != '0' ? 0 : a ? 1 + (__builtin_ctzll(a) >> 3) : 9 + (__builtin_ctzll(b) >> 3);
    *last = b ? 16 - (__builtin_clzll(b) >> 3) : a ? 8 - (__builtin_clzll(a) >> 3) : 0;
#else
    uint32_t v[2] = {hi % 100000000u, lo};
    for (int h = 0; h < 2; ++h)
        for (int i = 8; i >= 1; --i) {
            dig[8 * h + i] = (char)('0' + v[h] % 10u);
            v[h] /= 10u;
        }
    int i = 0, j = 16;
    while (dig[i] == '0')
        ++i;
    while (dig[j] == '0')
        --j;
    *first = i;
    *last = j;
#endif
}

size_t imp_num_format(double x, char *buf) {
    assert(isfinite(x));
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    char *p = buf;
    if (bits >> 63) *p++ = '-';
    uint64_t frac = bits & (C_MIN - 1);
    int be = (int)(bits >> 52) & 0x7ff;
    if (be == 0 && frac == 0) {
        memcpy(p, "0.0", 4);
        return (size_t)(p - buf) + 3;
    }
    uint64_t c = be ? frac | C_MIN : frac;
    int q = be ? be - 1075 : Q_MIN;

    uint64_t f;
    int e;
    if (q <= 0 && q >= -52 && (c & ((UINT64_C(1) << -q) - 1)) == 0) {
        /* an integer below 2^53: no shorter decimal lies within half an ulp <= 1/2 */
        f = c >> -q;
        e = 0;
    } else {
        schubfach(c, q, &f, &e);
    }
    /* f < 10^17 (s <= c 2^q 10^-k < 2^53 * 10, and t = s + 1): all of it as
     * 17 digits with leading zeros, in two independent 32-bit halves, then
     * the zeros at either end are skipped rather than divided away. */
    char dig[20];
    int first, last;
    put17(f, dig, &first, &last);
    int n = last - first + 1;
    e += 16 - last;
    const char *d = dig + first;

    int X = e + n - 1; /* decimal exponent of the first digit */
    if (X >= -4 && X < 17) {
        if (X < 0) { /* 0.000ddd */
            *p++ = '0';
            *p++ = '.';
            for (int i = 0; i < -X - 1; ++i)
                *p++ = '0';
            memcpy(p, d, (size_t)n);
            p += n;
        } else if (X >= n - 1) { /* integer: ddd000.0 */
            memcpy(p, d, (size_t)n);
            p += n;
            for (int i = 0; i < X - (n - 1); ++i)
                *p++ = '0';
            *p++ = '.';
            *p++ = '0';
        } else { /* ddd.ddd */
            memcpy(p, d, (size_t)X + 1);
            p += X + 1;
            *p++ = '.';
            memcpy(p, d + X + 1, (size_t)(n - X - 1));
            p += n - X - 1;
        }
    } else {
        *p++ = d[0];
        if (n > 1) {
            *p++ = '.';
            memcpy(p, d + 1, (size_t)n - 1);
            p += n - 1;
        }
        *p++ = 'e';
        unsigned ux = (unsigned)X;
        if (X < 0) {
            *p++ = '-';
            ux = (unsigned)-X;
        }
        if (ux >= 100) *p++ = (char)('0' + ux / 100);
        if (ux >= 10) *p++ = (char)('0' + ux / 10 % 10);
        *p++ = (char)('0' + ux % 10);
    }
    *p = '\0';
    return (size_t)(p - buf);
}

/*
 * numtext.h - JSON numbers to doubles and back, exactly and fast.
 *
 * imp_num_parse reads one RFC 8259 number and gives the double glibc's
 * strtod gives (round to nearest, ties to even) for the same text;
 * imp_num_format writes the fewest significant digits that read back to the
 * same double, laid out like jansson's "%.17g" output. Both are pure
 * functions of their arguments over constant tables: reentrant and
 * thread-safe, no locale, no errno (the rare parse fallback calls strtod
 * and restores errno afterwards), no allocation.
 */
#ifndef IMP_API_NUMTEXT_H
#define IMP_API_NUMTEXT_H

#include <stddef.h>

/* Bytes imp_num_format may write, NUL included (the longest output,
 * "-2.2250738585072014e-308", takes 25). */
#define IMP_NUM_FORMAT_MAX 32

/*
 * Parses one JSON number, -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?,
 * from s, reading no byte at or past end (the text need not be
 * NUL-terminated). The grammar is applied greedily: "01", "1.", "1e",
 * "1e+" and "-" are errors, not a shorter number followed by garbage;
 * whatever follows a complete number ("1,", "1x", "1.5.3") is left to the
 * caller, which finds it at *stop.
 *
 * Returns
 *    0  a number: *out is the correctly rounded double (bit-identical to
 *       strtod's: -0.0 for "-0", subnormals, 0 for underflow such as
 *       1e-400), *stop the first byte after it;
 *    1  a number whose magnitude rounds to infinity (1e400, 2e308): *out is
 *       +-HUGE_VAL and *stop is after the number; callers treat it as an
 *       error, as jansson does;
 *   -1  no number by the grammar at s (also when s >= end): *out is not
 *       written, *stop is the first byte that does not fit (s for "+1" or
 *       "NaN", s + 1 for "-" or "01", s + 2 for "1." or "1e").
 * stop may be NULL. out must not be NULL.
 * Needs the default rounding mode (round to nearest), like strtod's result.
 */
int imp_num_parse(const char *s, const char *end, double *out, const char **stop);

/*
 * Writes finite x as a JSON number into buf (room for IMP_NUM_FORMAT_MAX
 * bytes), NUL-terminated, and returns its length (without the NUL); no byte
 * past that NUL is touched, so appending into a larger buffer is safe.
 * The digits are the shortest that strtod reads back to exactly x (of
 * several such, the one closest to x); the layout is printf's %g with
 * precision 17: fixed notation when the decimal exponent X of the first
 * digit has -4 <= X < 17, else d.ddde<X> (no '+', no leading zeros in the
 * exponent); ".0" is appended when there is neither '.' nor 'e':
 *   3 -> "3.0", -0.0 -> "-0.0", 0.1 -> "0.1", 1e20 -> "1e20",
 *   0.0001 -> "0.0001", 0.00001 -> "1e-5", 1e16 -> "10000000000000000.0",
 *   123456789012345680 -> "1.2345678901234568e17".
 * x must be finite (asserted): JSON has no NaN or infinity.
 */
size_t imp_num_format(double x, char *buf);

#endif

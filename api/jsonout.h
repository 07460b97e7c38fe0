/*
 * jsonout.h - response text: a jansson tree written as compact JSON, with
 * each real in the fewest digits that read back to the same double.
 *
 * Thread-safety: reentrant; a buffer belongs to one caller.
 */
#ifndef IMP_API_JSONOUT_H
#define IMP_API_JSONOUT_H

#include <jansson.h>
#include <stddef.h>

/* A growing text buffer. After an allocation failure `failed` is set and
 * further writes do nothing. */
typedef struct imp_jbuf {
    char *p;
    size_t len, cap;
    int failed;
} imp_jbuf;

/* Room for `extra` more bytes ahead of writes whose size is known (0, or -1 after an
 * allocation failure). */
int imp_jbuf_reserve(imp_jbuf *b, size_t extra);
void imp_jbuf_raw(imp_jbuf *b, const char *s, size_t n);
/* A string literal's bytes. */
#define IMP_JBUF_LIT(b, lit) imp_jbuf_raw((b), "" lit, sizeof(lit) - 1)
/* A finite double (imp_num_format: shortest round trip, "3.0" for 3). */
void imp_jbuf_real(imp_jbuf *b, double x);
/* An integer. */
void imp_jbuf_int(imp_jbuf *b, long long v);
/* A string as a JSON string literal (the escapes json_dumps writes). */
void imp_jbuf_string(imp_jbuf *b, const char *s, size_t n);
/* Any jansson value, compact, object members in insertion order. */
void imp_jbuf_value(imp_jbuf *b, const json_t *v);

/*
 * The text json_dumps(doc, JSON_COMPACT) writes, except for reals: jansson
 * prints 17 significant digits ("0.10000000000000001") through snprintf,
 * which costs half a microsecond per number; here each real is the
 * shortest text that reads back to it ("0.1"), several times faster (see
 * tests/bench/bench_numtext). Returns the NUL-terminated text (malloc'd,
 * the caller frees; *len its length), or NULL when out of memory.
 */
char *imp_json_dump(const json_t *doc, size_t *len);

#endif

/*
 * jsonout.c - compact JSON text of a jansson tree (see jsonout.h).
 *
 * DESIGN
 * What: every response body the api writes (the endpoints build jansson
 * trees; this turns them into bytes).
 * How: a recursive walk appending to one growing buffer (doubling); reals
 * through imp_num_format, integers through a digit loop, strings with the
 * escapes json_dumps uses by default (quote, backslash, \b \f \n \r \t,
 * \u00XX for the other controls; '/' and non-ASCII UTF-8 as they are).
 * Object members come in insertion order, as json_dumps writes them.
 * Why: json_dumps prints each real with snprintf("%.17g"), half a
 * microsecond a number: a 10,000-body scene's reply took longer to print
 * than to solve. The walk is otherwise what json_dumps does, so the text
 * differs only in the digits of reals, which read back to the same doubles.
 */
#include "api/jsonout.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/numtext.h"

int imp_jbuf_reserve(imp_jbuf *b, size_t extra) {
    if (b->failed) return -1;
    if (b->cap - b->len > extra) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len <= extra) {
        if (cap > SIZE_MAX / 2) {
            b->failed = 1;
            return -1;
        }
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void imp_jbuf_raw(imp_jbuf *b, const char *s, size_t n) {
    if (imp_jbuf_reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

void imp_jbuf_real(imp_jbuf *b, double x) {
    if (imp_jbuf_reserve(b, IMP_NUM_FORMAT_MAX)) return;
    /* no negative zero in any reply: "-0.0" is a different string for the same quantity,
     * and clients that compare or hash replies would see two answers */
    if (x == 0.0) x = 0.0;
    b->len += imp_num_format(x, b->p + b->len);
}

void imp_jbuf_int(imp_jbuf *b, long long v) {
    char tmp[24];
    size_t k = sizeof tmp;
    /* magnitude as unsigned: -LLONG_MIN does not fit */
    uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--k] = (char)('0' + m % 10);
        m /= 10;
    } while (m);
    if (v < 0) tmp[--k] = '-';
    imp_jbuf_raw(b, tmp + k, sizeof tmp - k);
}

void imp_jbuf_string(imp_jbuf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789ABCDEF";
    imp_jbuf_raw(b, "\"", 1);
    size_t run = 0; /* start of the bytes not yet copied */
    for (size_t i = 0; i < n; ++i) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        imp_jbuf_raw(b, s + run, i - run);
        run = i + 1;
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        size_t k = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            k = 6;
        }
        imp_jbuf_raw(b, esc, k);
    }
    imp_jbuf_raw(b, s + run, n - run);
    imp_jbuf_raw(b, "\"", 1);
}

void imp_jbuf_value(imp_jbuf *b, const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        imp_jbuf_raw(b, "{", 1);
        int first = 1;
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it)) {
            if (!first) imp_jbuf_raw(b, ",", 1);
            first = 0;
            imp_jbuf_string(b, json_object_iter_key(it), json_object_iter_key_len(it));
            imp_jbuf_raw(b, ":", 1);
            imp_jbuf_value(b, json_object_iter_value(it));
        }
        imp_jbuf_raw(b, "}", 1);
        break;
    }
    case JSON_ARRAY: {
        imp_jbuf_raw(b, "[", 1);
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; ++i) {
            if (i) imp_jbuf_raw(b, ",", 1);
            imp_jbuf_value(b, json_array_get(v, i));
        }
        imp_jbuf_raw(b, "]", 1);
        break;
    }
    case JSON_STRING: imp_jbuf_string(b, json_string_value(v), json_string_length(v)); break;
    case JSON_INTEGER: imp_jbuf_int(b, (long long)json_integer_value(v)); break;
    case JSON_REAL: imp_jbuf_real(b, json_real_value(v)); break;
    case JSON_TRUE: imp_jbuf_raw(b, "true", 4); break;
    case JSON_FALSE: imp_jbuf_raw(b, "false", 5); break;
    case JSON_NULL: imp_jbuf_raw(b, "null", 4); break;
    }
}

char *imp_json_dump(const json_t *doc, size_t *len) {
    imp_jbuf b = {0};
    imp_jbuf_value(&b, doc);
    imp_jbuf_raw(&b, "", 1); /* the NUL */
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    *len = b.len - 1;
    return b.p;
}

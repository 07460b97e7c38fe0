/*
 * log.c - formatting of log lines.
 *
 * DESIGN
 * What: error/info messages and one access line per request, on stderr, as
 * JSON objects (one per line) or plain text.
 * How: each line is assembled in a fixed stack buffer and written with one
 * fwrite. Strings that come from clients (paths, methods) are escaped for
 * JSON, with invalid UTF-8 replaced by U+FFFD, and cut to a bounded length,
 * so a hostile request can neither break the line format nor grow it.
 * Why: a fixed buffer needs no allocation on the request path and a single
 * write keeps lines from concurrent threads whole; stderr is unbuffered, so
 * a line is out as soon as the request is done.
 */
#include "log.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* One log line at most (bytes, including the newline); longer lines are cut. */
#define LOG_LINE_MAX 2048
/* Client-supplied strings are cut to this many input bytes before escaping. */
#define LOG_FIELD_MAX 512

typedef struct line {
    char buf[LOG_LINE_MAX];
    size_t len;
} line;

static void put_mem(line *l, const char *s, size_t n) {
    size_t room = sizeof l->buf - 1 - l->len; /* keep one byte for '\n' */
    if (n > room) n = room;
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void put_str(line *l, const char *s) { put_mem(l, s, strlen(s)); }

static void put_fmt(line *l, const char *fmt, ...) IMP_PRINTF_LIKE(2, 3);
static void put_vfmt(line *l, const char *fmt, va_list ap) IMP_PRINTF_LIKE(2, 0);

static void put_vfmt(line *l, const char *fmt, va_list ap) {
    size_t room = sizeof l->buf - 1 - l->len;
    int n = vsnprintf(l->buf + l->len, room + 1, fmt, ap);
    if (n < 0) return;
    l->len += (size_t)n < room ? (size_t)n : room;
}

static void put_fmt(line *l, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    put_vfmt(l, fmt, ap);
    va_end(ap);
}

/* Length of the valid UTF-8 sequence at s (n >= 1 bytes available), or 0. */
static size_t utf8_seq_len(const unsigned char *s, size_t n) {
    size_t len;
    unsigned cp;
    unsigned min; /* smallest code point that needs `len` bytes: smaller is overlong */
    if (s[0] < 0x80) return 1;
    if ((s[0] & 0xE0) == 0xC0) {
        len = 2;
        cp = s[0] & 0x1Fu;
        min = 0x80;
    } else if ((s[0] & 0xF0) == 0xE0) {
        len = 3;
        cp = s[0] & 0x0Fu;
        min = 0x800;
    } else if ((s[0] & 0xF8) == 0xF0) {
        len = 4;
        cp = s[0] & 0x07u;
        min = 0x10000;
    } else {
        return 0;
    }
    if (len > n) return 0;
    for (size_t i = 1; i < len; ++i) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
    return len;
}

/* Appends s as the inside of a JSON string (no quotes). */
static void put_json_escaped(line *l, const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    int cut = n > LOG_FIELD_MAX;
    if (cut) n = LOG_FIELD_MAX;
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            put_mem(l, esc, 2);
            ++i;
        } else if (c < 0x20 || c == 0x7F) {
            put_fmt(l, "\\u%04x", c);
            ++i;
        } else {
            size_t k = utf8_seq_len(p + i, n - i);
            if (k == 0) {
                put_str(l, "\\ufffd");
                ++i;
            } else {
                put_mem(l, (const char *)p + i, k);
                i += k;
            }
        }
    }
    if (cut) put_str(l, "...");
}

/* Appends s for a text line: printable ASCII kept, anything else as \xNN. */
static void put_text_escaped(line *l, const char *s) {
    size_t n = strlen(s);
    int cut = n > LOG_FIELD_MAX;
    if (cut) n = LOG_FIELD_MAX;
    for (size_t i = 0; i < n; ++i) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x7F || c == '\\')
            put_fmt(l, "\\x%02x", c);
        else
            put_mem(l, s + i, 1);
    }
    if (cut) put_str(l, "...");
}

static const char *level_name(imp_log_level lvl) {
    switch (lvl) {
    case IMP_LOG_ERROR: return "error";
    case IMP_LOG_WARN: return "warn";
    case IMP_LOG_INFO: return "info";
    }
    return "info";
}

/* UTC wall-clock time, RFC 3339 with milliseconds. */
static void put_timestamp(line *l) {
    struct timespec ts;
    struct tm tm;
    char date[32];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    put_fmt(l, "%s.%03ldZ", date, ts.tv_nsec / 1000000L);
}

static void line_begin(line *l, const imp_logger *lg, imp_log_level lvl) {
    l->len = 0;
    if (lg->format == IMP_LOG_JSON) {
        put_str(l, "{\"ts\":\"");
        put_timestamp(l);
        put_fmt(l, "\",\"level\":\"%s\",", level_name(lvl));
    } else {
        put_timestamp(l);
        put_fmt(l, " %s ", level_name(lvl));
    }
}

static void line_end(line *l, const imp_logger *lg) {
    if (lg->format == IMP_LOG_JSON) {
        /* A line cut by the buffer is not valid JSON; keep the closing brace. */
        if (l->len > sizeof l->buf - 3) l->len = sizeof l->buf - 3;
        put_str(l, "}");
    }
    l->buf[l->len++] = '\n';
    fwrite(l->buf, 1, l->len, stderr);
}

int imp_log_parse_format(const char *s, imp_log_format *out) {
    if (strcmp(s, "json") == 0)
        *out = IMP_LOG_JSON;
    else if (strcmp(s, "text") == 0)
        *out = IMP_LOG_TEXT;
    else if (strcmp(s, "off") == 0)
        *out = IMP_LOG_OFF;
    else
        return 0;
    return 1;
}

const char *imp_log_format_name(imp_log_format format) {
    switch (format) {
    case IMP_LOG_JSON: return "json";
    case IMP_LOG_TEXT: return "text";
    case IMP_LOG_OFF: return "off";
    }
    return "off";
}

void imp_log_vwrite(const imp_logger *lg, imp_log_level lvl, const char *fmt, va_list ap) {
    line l;
    line_begin(&l, lg, lvl);
    if (lg->format == IMP_LOG_JSON) {
        /* The message may carry anything (libmicrohttpd's own text included). */
        char msg[LOG_FIELD_MAX + 1];
        vsnprintf(msg, sizeof msg, fmt, ap);
        size_t n = strlen(msg);
        while (n > 0 && msg[n - 1] == '\n')
            msg[--n] = '\0';
        put_str(&l, "\"msg\":\"");
        put_json_escaped(&l, msg);
        put_str(&l, "\"");
    } else {
        put_vfmt(&l, fmt, ap);
        while (l.len > 0 && l.buf[l.len - 1] == '\n')
            --l.len;
    }
    line_end(&l, lg);
}

void imp_log_write(const imp_logger *lg, imp_log_level lvl, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    imp_log_vwrite(lg, lvl, fmt, ap);
    va_end(ap);
}

void imp_log_access(const imp_logger *lg, const char *method, const char *path, int status,
                    size_t bytes_in, size_t bytes_out, double duration_ms) {
    line l;
    line_begin(&l, lg, IMP_LOG_INFO);
    if (lg->format == IMP_LOG_JSON) {
        put_str(&l, "\"msg\":\"request\",\"method\":\"");
        put_json_escaped(&l, method);
        put_str(&l, "\",\"path\":\"");
        put_json_escaped(&l, path);
        put_fmt(&l, "\",\"status\":%d,\"bytes\":%zu,\"request_bytes\":%zu,\"duration_ms\":%.3f",
                status, bytes_out, bytes_in, duration_ms);
    } else {
        put_text_escaped(&l, method);
        put_str(&l, " ");
        put_text_escaped(&l, path);
        put_fmt(&l, " %d in=%zuB out=%zuB %.3fms", status, bytes_in, bytes_out, duration_ms);
    }
    line_end(&l, lg);
}

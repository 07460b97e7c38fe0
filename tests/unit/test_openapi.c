/*
 * test_openapi.c - docs/API.md, api/openapi.yaml and the product contract
 * against each other.
 *
 * DESIGN
 * What: docs/API.md is the contract as this version serves it; everything
 * before its final section "## Not served yet" is served. Its endpoints are
 * the headings "### METHOD /path — title". Checks:
 * - openapi.yaml and the served part of docs/API.md name the same set of
 *   (method, path) pairs; every JSON member name of the served part
 *   ("time":, "horizon"?:) is a YAML key of openapi.yaml and every IMPACTD_*
 *   variable occurs in it; openapi.yaml has the header, the problem types,
 *   headers and media types the server uses, no tabs, a 200 and a 404 on
 *   every operation and the error statuses every POST can answer.
 * - every served endpoint heading is followed by an example (a fenced code
 *   block; two for a POST: the request and the reply), and the "Not served
 *   yet" section has no endpoint heading.
 * - docs/API.md is a superset of the product contract
 *   (../shared/spec/API.md, outside the repository): every (method, path)
 *   of its headings and "- `METHOD /path`" bullets occurs in docs/API.md as
 *   "METHOD /path", every JSON member name and every `backticked`
 *   lower-case name occurs as `name` or "name", and every IMPACTD_*
 *   variable occurs; the "Not served yet" section counts. When the
 *   contract is absent (a clone without shared/) that test says so and is
 *   skipped.
 * IMP_OPENAPI_PATH, IMP_API_MD_PATH and IMP_CONTRACT_PATH point the test at
 * other copies (to see it fail on a damaged file).
 * How: no YAML or Markdown library. A line scanner records every mapping
 * key with its indentation and value, skipping comments and the content of
 * block scalars (`description: |`), so prose that happens to contain
 * "word:" never counts as a key. `paths` are the keys at indent 2 under the
 * top-level `paths:`, methods the keys at indent 4, statuses the keys at
 * indent 8 under a method's `responses:` at indent 6. This covers the
 * subset openapi.yaml is written in (block style, 2-space indentation, no
 * multi-line plain or quoted scalars), not YAML at large. Markdown is read
 * line by line; fenced code blocks are skipped when looking for headings.
 * Why: the CI machine has libc and cmocka only, and the point is to catch
 * drift between the contract, the user documentation and the document the
 * daemon serves (a renamed field, a dropped path, a new endpoint documented
 * in one place only) early; every file is read fresh. Every check collects
 * all that is missing before failing, so one run names every gap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"

#define DEFAULT_OPENAPI_PATH "api/openapi.yaml"
#define DEFAULT_API_MD_PATH "docs/API.md"
#define DEFAULT_CONTRACT_PATH "../shared/spec/API.md"
/* The line that starts the final section of docs/API.md, excluded from the
 * openapi.yaml checks. */
#define NOT_SERVED_HEADING "## Not served yet"

/* Longest key, value, path or name kept; longer ones are truncated, which
 * makes them fail to match rather than overflow. */
#define NAME_MAX_LEN 128
/* docs/API.md serves 16 (method, path) pairs; fewer found means the parse broke. */
#define MIN_SERVED_ENDPOINTS 16
/* The product contract has 13 headings and bullets naming an endpoint, and 8 worlds routes. */
#define MIN_CONTRACT_ENDPOINTS 13
/* The examples name about 70 distinct members. */
#define MIN_DOC_FIELDS 50
/* docs/API.md names 16 IMPACTD_* variables, the contract 13. */
#define MIN_DOC_ENV 8

typedef struct yaml_key {
    int indent; /* column of the key's first character */
    int line;   /* 1-based */
    char name[NAME_MAX_LEN];
    char value[NAME_MAX_LEN]; /* the rest of the line, unquoted; "" when none */
} yaml_key;

typedef struct endpoint {
    char method[16]; /* upper case */
    char path[NAME_MAX_LEN];
    int line;             /* where it was found */
    char statuses[16][8]; /* openapi.yaml: response keys under the operation */
    size_t n_statuses;
} endpoint;

typedef struct name_list {
    char (*names)[NAME_MAX_LEN];
    int *lines;
    size_t n, cap;
} name_list;

typedef struct endpoint_list {
    endpoint *items;
    size_t n, cap;
} endpoint_list;

/* What is read from one Markdown file. */
typedef struct md_doc {
    const char *path;
    char *text;          /* the whole file, NUL-terminated; NULL when absent */
    size_t scanned;      /* bytes scanned below: up to NOT_SERVED_HEADING, or all */
    int not_served_line; /* 1-based line of NOT_SERVED_HEADING; 0 when none */
    endpoint_list ops;   /* (method, path) from headings (and bullets, for the contract) */
    name_list fields;    /* JSON member names */
    name_list env;       /* IMPACTD_* names */
    name_list words;     /* `backticked` lower-case names */
} md_doc;

typedef struct spec_fixture {
    const char *yaml_path;
    char *yaml; /* whole file, NUL-terminated */
    yaml_key *keys;
    size_t n_keys, cap_keys;
    endpoint_list yaml_ops; /* (method, path) under paths: in openapi.yaml */
    md_doc docs;            /* docs/API.md, served part */
    md_doc contract;        /* ../shared/spec/API.md, whole */
} spec_fixture;

/* ---- small helpers ------------------------------------------------------------------------ */

static char *read_whole_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (ferror(f) || n < cap - 1) break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

static void copy_span(char *dst, size_t cap, const char *src, size_t len) {
    if (len >= cap) len = cap - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

static void *grow(void *p, size_t *cap, size_t elem) {
    size_t n = *cap ? *cap * 2 : 64;
    void *q = realloc(p, n * elem);
    assert_non_null(q);
    *cap = n;
    return q;
}

static int name_list_has(const name_list *l, const char *name) {
    for (size_t i = 0; i < l->n; ++i)
        if (strcmp(l->names[i], name) == 0) return 1;
    return 0;
}

/* Adds `name` unless present; keeps the first line it was seen on. */
static void name_list_add(name_list *l, const char *name, size_t len, int line) {
    char tmp[NAME_MAX_LEN];
    copy_span(tmp, sizeof tmp, name, len);
    if (name_list_has(l, tmp)) return;
    if (l->n == l->cap) {
        size_t cap = l->cap;
        l->names = grow(l->names, &cap, sizeof l->names[0]);
        l->lines = grow(l->lines, &l->cap, sizeof l->lines[0]);
    }
    memcpy(l->names[l->n], tmp, sizeof tmp);
    l->lines[l->n++] = line;
}

static endpoint *endpoint_add(endpoint_list *l, const char *method, size_t mlen, const char *path,
                              size_t plen, int line) {
    if (l->n == l->cap) l->items = grow(l->items, &l->cap, sizeof l->items[0]);
    endpoint *e = &l->items[l->n++];
    memset(e, 0, sizeof *e);
    copy_span(e->method, sizeof e->method, method, mlen);
    for (char *c = e->method; *c; ++c)
        if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
    copy_span(e->path, sizeof e->path, path, plen);
    e->line = line;
    return e;
}

static const endpoint *endpoint_find(const endpoint_list *l, const char *method, const char *path) {
    for (size_t i = 0; i < l->n; ++i)
        if (strcmp(l->items[i].method, method) == 0 && strcmp(l->items[i].path, path) == 0)
            return &l->items[i];
    return NULL;
}

static int has_status(const endpoint *e, const char *status) {
    for (size_t i = 0; i < e->n_statuses; ++i)
        if (strcmp(e->statuses[i], status) == 0) return 1;
    return 0;
}

static int is_ident_start(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }
static int is_ident(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
static int is_upper(char c) { return c >= 'A' && c <= 'Z'; }

/* ---- the YAML subset ---------------------------------------------------------------------- */

/* Copies a scalar value, dropping one level of surrounding quotes. */
static void unquote_value(char *dst, size_t cap, const char *v, size_t n) {
    if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0]) {
        ++v;
        n -= 2;
    }
    copy_span(dst, cap, v, n);
}

/*
 * Records the mapping key on one line, if any. *block is the indentation
 * of the key that opened a block scalar still in progress, or -1.
 */
static void scan_yaml_line(spec_fixture *fx, const char *s, size_t len, int line, int *block) {
    while (len > 0 && (s[len - 1] == '\r' || s[len - 1] == ' '))
        --len;
    size_t ind = 0;
    while (ind < len && s[ind] == ' ')
        ++ind;
    if (ind == len) return;                       /* blank, also inside a block scalar */
    if (*block >= 0 && (int)ind > *block) return; /* block scalar content */
    *block = -1;
    const char *c = s + ind;
    size_t n = len - ind;
    if (c[0] == '#') return;
    /* "- key: v" is a key of the mapping that is the sequence item */
    while (n >= 2 && c[0] == '-' && c[1] == ' ') {
        c += 2;
        n -= 2;
        ind += 2;
        while (n > 0 && c[0] == ' ') {
            ++c;
            --n;
            ++ind;
        }
    }
    if (n == 0 || c[0] == '{' || c[0] == '[' || c[0] == '#') return;
    const char *key;
    size_t klen, i;
    if (c[0] == '\'' || c[0] == '"') {
        for (i = 1; i < n && c[i] != c[0]; ++i) {
        }
        if (i >= n || i + 1 >= n || c[i + 1] != ':') return; /* a quoted scalar, not a key */
        key = c + 1;
        klen = i - 1;
        i += 1; /* at the ':' */
    } else {
        for (i = 0; i < n; ++i)
            if (c[i] == ':' && (i + 1 == n || c[i + 1] == ' ')) break;
        if (i == n) return; /* a plain scalar */
        key = c;
        klen = i;
    }
    size_t v = i + 1;
    while (v < n && c[v] == ' ')
        ++v;
    if (fx->n_keys == fx->cap_keys) fx->keys = grow(fx->keys, &fx->cap_keys, sizeof fx->keys[0]);
    yaml_key *k = &fx->keys[fx->n_keys++];
    k->indent = (int)ind;
    k->line = line;
    copy_span(k->name, sizeof k->name, key, klen);
    unquote_value(k->value, sizeof k->value, c + v, n - v);
    if (v < n && (c[v] == '|' || c[v] == '>')) *block = (int)ind;
}

static void scan_yaml(spec_fixture *fx) {
    int block = -1, line = 0;
    for (const char *p = fx->yaml; *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        scan_yaml_line(fx, p, len, ++line, &block);
        p += len + (eol ? 1 : 0);
    }
}

static int is_http_method(const char *k) {
    static const char *const methods[] = {"get",     "put",  "post",  "delete",
                                          "options", "head", "patch", "trace"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; ++i)
        if (strcmp(k, methods[i]) == 0) return 1;
    return 0;
}

/* Operations under the top-level paths: with their response status keys. */
static void collect_yaml_ops(spec_fixture *fx) {
    int in_paths = 0, in_responses = 0;
    const char *path = NULL;
    endpoint *op = NULL;
    for (size_t i = 0; i < fx->n_keys; ++i) {
        const yaml_key *k = &fx->keys[i];
        if (k->indent == 0) {
            in_paths = strcmp(k->name, "paths") == 0;
            path = NULL;
            op = NULL;
            continue;
        }
        if (!in_paths) continue;
        if (k->indent <= 2) {
            path = k->indent == 2 ? k->name : NULL;
            op = NULL;
        } else if (k->indent == 4) {
            op = path && is_http_method(k->name)
                     ? endpoint_add(&fx->yaml_ops, k->name, strlen(k->name), path, strlen(path),
                                    k->line)
                     : NULL;
            in_responses = 0;
        } else if (k->indent == 6) {
            in_responses = op && strcmp(k->name, "responses") == 0;
        } else if (k->indent == 8 && in_responses && op->n_statuses < 16) {
            copy_span(op->statuses[op->n_statuses++], sizeof op->statuses[0], k->name,
                      strlen(k->name));
        }
    }
}

static int yaml_has_key(const spec_fixture *fx, const char *name) {
    for (size_t i = 0; i < fx->n_keys; ++i)
        if (strcmp(fx->keys[i].name, name) == 0) return 1;
    return 0;
}

/* The value of `child` directly under the top-level `parent`, or NULL. */
static const char *yaml_top_value(const spec_fixture *fx, const char *parent, const char *child) {
    int in = 0;
    for (size_t i = 0; i < fx->n_keys; ++i) {
        const yaml_key *k = &fx->keys[i];
        if (k->indent == 0) {
            in = strcmp(k->name, parent) == 0;
            if (in && !child) return k->value;
        } else if (in && k->indent == 2 && strcmp(k->name, child) == 0) {
            return k->value;
        }
    }
    return NULL;
}

/* ---- Markdown ----------------------------------------------------------------------------- */

/* "POST /v1/toi..." at s: the method (upper-case letters) and the path up to a space or '`'. */
static int parse_method_path(const char *s, const char *end, const char **m, size_t *mlen,
                             const char **p, size_t *plen) {
    size_t i = 0;
    while (s + i < end && is_upper(s[i]))
        ++i;
    if (i < 3 || i > 7 || s + i + 1 >= end || s[i] != ' ' || s[i + 1] != '/') return 0;
    *m = s;
    *mlen = i;
    *p = s + i + 1;
    size_t j = 0;
    while (*p + j < end && (*p)[j] != ' ' && (*p)[j] != '`')
        ++j;
    *plen = j;
    return 1;
}

/* An endpoint heading "### METHOD /path ..." on the line [s, end). */
static int heading_op(const char *s, const char *end, const char **m, size_t *mlen, const char **p,
                      size_t *plen) {
    return strncmp(s, "### ", 4) == 0 && parse_method_path(s + 4, end, m, mlen, p, plen);
}

/* JSON member names on the line: "name": or "name"?: (optional in a sketch). */
static void scan_fields(name_list *fields, const char *s, const char *end, int line) {
    for (const char *q = s; q < end; ++q) {
        if (*q != '"' || q + 1 >= end || !is_ident_start(q[1])) continue;
        const char *n0 = q + 1, *n1 = n0;
        while (n1 < end && is_ident(*n1))
            ++n1;
        if (n1 >= end || *n1 != '"') continue;
        const char *after = n1 + 1;
        if (after < end && *after == '?') ++after;
        while (after < end && *after == ' ')
            ++after;
        if (after < end && *after == ':') name_list_add(fields, n0, (size_t)(n1 - n0), line);
        q = n1; /* the closing quote is not an opening one */
    }
}

/* `name` spans on the line whose content is a lower-case name (letters, digits, '_', '-'). */
static void scan_words(name_list *words, const char *s, const char *end, int line) {
    for (const char *q = s; q < end; ++q) {
        if (*q != '`') continue;
        const char *n0 = q + 1, *n1 = n0;
        while (n1 < end && (is_ident(*n1) || *n1 == '-'))
            ++n1;
        if (n1 < end && *n1 == '`' && n1 > n0 && is_ident_start(*n0))
            name_list_add(words, n0, (size_t)(n1 - n0), line);
        q = n1 < end && *n1 == '`' ? n1 : q; /* a closing backtick opens nothing */
    }
}

static void scan_env(name_list *env, const char *s, const char *end, int line) {
    for (const char *q = strstr(s, "IMPACTD_"); q && q < end; q = strstr(q + 1, "IMPACTD_")) {
        const char *e = q;
        while (e < end && (is_upper(*e) || *e == '_' || (*e >= '0' && *e <= '9')))
            ++e;
        name_list_add(env, q, (size_t)(e - q), line);
    }
}

/*
 * Reads md->text: endpoint headings (and "- `METHOD /path`" bullets when
 * `bullets`), member names, IMPACTD_* names and backticked names. With
 * `stop_at_not_served`, stops at the NOT_SERVED_HEADING line.
 */
static void scan_markdown(md_doc *md, int bullets, int stop_at_not_served) {
    int line = 0, in_code = 0;
    const char *s = md->text;
    while (*s) {
        const char *eol = strchr(s, '\n');
        const char *end = eol ? eol : s + strlen(s);
        ++line;
        if (stop_at_not_served && !in_code &&
            strncmp(s, NOT_SERVED_HEADING, sizeof NOT_SERVED_HEADING - 1) == 0 &&
            s + sizeof NOT_SERVED_HEADING - 1 == end) {
            md->not_served_line = line;
            break;
        }
        const char *m, *p;
        size_t mlen, plen;
        if (strncmp(s, "```", 3) == 0) {
            in_code = !in_code;
        } else if (!in_code && heading_op(s, end, &m, &mlen, &p, &plen)) {
            endpoint_add(&md->ops, m, mlen, p, plen, line);
        } else if (bullets && !in_code && strncmp(s, "- `", 3) == 0 &&
                   parse_method_path(s + 3, end, &m, &mlen, &p, &plen) && p[plen] == '`') {
            endpoint_add(&md->ops, m, mlen, p, plen, line);
        }
        scan_fields(&md->fields, s, end, line);
        scan_env(&md->env, s, end, line);
        if (!in_code) scan_words(&md->words, s, end, line);
        s = eol ? eol + 1 : end;
    }
    md->scanned = (size_t)(s - md->text);
}

/* 1 when `needle` occurs in `text` and the character after it is not one of `cont`. */
static int occurs_bounded(const char *text, const char *needle, const char *cont) {
    size_t n = strlen(needle);
    for (const char *q = strstr(text, needle); q; q = strstr(q + 1, needle))
        if (q[n] == '\0' || !strchr(cont, q[n])) return 1;
    return 0;
}

static const char PATH_CHARS[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                 "/_-.<>{}";

/* ---- fixture ------------------------------------------------------------------------------ */

static const char *env_or(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

static int teardown(void **state);

static int setup(void **state) {
    spec_fixture *fx = calloc(1, sizeof *fx);
    *state = fx;
    if (!fx) return -1;
    fx->yaml_path = env_or("IMP_OPENAPI_PATH", DEFAULT_OPENAPI_PATH);
    fx->docs.path = env_or("IMP_API_MD_PATH", DEFAULT_API_MD_PATH);
    fx->contract.path = env_or("IMP_CONTRACT_PATH", DEFAULT_CONTRACT_PATH);
    fx->yaml = read_whole_file(fx->yaml_path);
    fx->docs.text = read_whole_file(fx->docs.path);
    fx->contract.text = read_whole_file(fx->contract.path); /* NULL: absent, checked later */
    if (!fx->yaml || !fx->docs.text) {
        fprintf(stderr, "cannot read %s (run the test from the repository root)\n",
                !fx->yaml ? fx->yaml_path : fx->docs.path);
        teardown(state);
        return -1;
    }
    scan_yaml(fx);
    collect_yaml_ops(fx);
    scan_markdown(&fx->docs, 0, 1);
    if (fx->contract.text) scan_markdown(&fx->contract, 1, 0);
    return 0;
}

static void free_names(name_list *l) {
    free(l->names);
    free(l->lines);
}

static void free_md(md_doc *md) {
    free(md->text);
    free(md->ops.items);
    free_names(&md->fields);
    free_names(&md->env);
    free_names(&md->words);
}

static int teardown(void **state) {
    spec_fixture *fx = *state;
    if (!fx) return 0;
    free(fx->yaml);
    free(fx->keys);
    free(fx->yaml_ops.items);
    free_md(&fx->docs);
    free_md(&fx->contract);
    free(fx);
    *state = NULL;
    return 0;
}

/* ---- tests -------------------------------------------------------------------------------- */

/* Guards the extraction itself: a parse that finds nothing would pass every check below. */
static void test_extraction_finds_everything(void **state) {
    const spec_fixture *fx = *state;
    const md_doc *d = &fx->docs;
    int bad = 0;
    if (d->ops.n < MIN_SERVED_ENDPOINTS || d->fields.n < MIN_DOC_FIELDS || d->env.n < MIN_DOC_ENV) {
        fprintf(stderr,
                "%s: found %zu served endpoints (want >= %d), %zu field names (want >= %d), "
                "%zu IMPACTD_* variables (want >= %d); has the layout changed?\n",
                d->path, d->ops.n, MIN_SERVED_ENDPOINTS, d->fields.n, MIN_DOC_FIELDS, d->env.n,
                MIN_DOC_ENV);
        bad = 1;
    }
    if (!d->not_served_line) {
        fprintf(stderr, "%s: no line \"%s\" (the final section)\n", d->path, NOT_SERVED_HEADING);
        bad = 1;
    }
    if (fx->yaml_ops.n < MIN_SERVED_ENDPOINTS) {
        fprintf(stderr, "%s: found only %zu operations under paths: (want >= %d)\n", fx->yaml_path,
                fx->yaml_ops.n, MIN_SERVED_ENDPOINTS);
        bad = 1;
    }
    const md_doc *c = &fx->contract;
    if (c->text && (c->ops.n < MIN_CONTRACT_ENDPOINTS || c->fields.n < MIN_DOC_FIELDS ||
                    c->env.n < MIN_DOC_ENV)) {
        fprintf(stderr,
                "%s: found %zu endpoints (want >= %d), %zu field names, %zu IMPACTD_* "
                "variables; has the contract's layout changed?\n",
                c->path, c->ops.n, MIN_CONTRACT_ENDPOINTS, c->fields.n, c->env.n);
        bad = 1;
    }
    if (bad) fail();
}

static void test_document_header(void **state) {
    const spec_fixture *fx = *state;
    const char *openapi = yaml_top_value(fx, "openapi", NULL);
    const char *title = yaml_top_value(fx, "info", "title");
    const char *version = yaml_top_value(fx, "info", "version");
    const char *desc = yaml_top_value(fx, "info", "description");
    int bad = 0;
    if (!openapi || strncmp(openapi, "3.1.", 4) != 0) {
        fprintf(stderr, "%s: `openapi:` must be 3.1.x, got %s\n", fx->yaml_path,
                openapi ? openapi : "(none)");
        bad = 1;
    }
    if (!title || strcmp(title, "impactd") != 0) {
        fprintf(stderr, "%s: info.title must be impactd\n", fx->yaml_path);
        bad = 1;
    }
    if (!version || strcmp(version, "1.0.0") != 0) {
        fprintf(stderr, "%s: info.version must be 1.0.0\n", fx->yaml_path);
        bad = 1;
    }
    if (!desc) {
        fprintf(stderr, "%s: info.description is missing\n", fx->yaml_path);
        bad = 1;
    }
    if (bad) fail();
}

/* openapi.yaml's operations and docs/API.md's served headings are the same set. */
static void test_served_endpoints_match(void **state) {
    const spec_fixture *fx = *state;
    size_t missing = 0;
    for (size_t i = 0; i < fx->docs.ops.n; ++i) {
        const endpoint *e = &fx->docs.ops.items[i];
        if (!endpoint_find(&fx->yaml_ops, e->method, e->path)) {
            fprintf(stderr, "%s: missing operation %s %s (%s line %d)\n", fx->yaml_path, e->method,
                    e->path, fx->docs.path, e->line);
            ++missing;
        }
    }
    for (size_t i = 0; i < fx->yaml_ops.n; ++i) {
        const endpoint *e = &fx->yaml_ops.items[i];
        if (!endpoint_find(&fx->docs.ops, e->method, e->path)) {
            fprintf(stderr, "%s: no heading \"### %s %s — ...\" before \"%s\" (%s line %d)\n",
                    fx->docs.path, e->method, e->path, NOT_SERVED_HEADING, fx->yaml_path, e->line);
            ++missing;
        }
    }
    if (missing) {
        fprintf(stderr, "%zu endpoint(s) in one document and not the other\n", missing);
        fail();
    }
}

/* The router's endpoint table (api/endpoint_table.h) serves exactly the (method, path) set
 * of docs/API.md: a GET row also serves HEAD, a POST or DELETE row that method only; paths
 * with {id} are compared as templates. */
static void test_router_table_matches_docs(void **state) {
    const spec_fixture *fx = *state;
    size_t n, missing = 0, served = 0;
    const imp_endpoint *eps = imp_endpoints(&n);
    for (size_t i = 0; i < n; ++i) {
        const char *methods[2] = {eps[i].method, strcmp(eps[i].method, "GET") == 0 ? "HEAD" : NULL};
        for (int k = 0; k < 2 && methods[k]; ++k) {
            ++served;
            if (!endpoint_find(&fx->docs.ops, methods[k], eps[i].path)) {
                fprintf(stderr, "%s: the router serves %s %s; no heading names it\n", fx->docs.path,
                        methods[k], eps[i].path);
                ++missing;
            }
        }
    }
    for (size_t i = 0; i < fx->docs.ops.n; ++i) {
        const endpoint *e = &fx->docs.ops.items[i];
        if (!imp_endpoint_find(e->method, e->path)) {
            fprintf(stderr, "%s line %d: %s %s is not in the router's endpoint table\n",
                    fx->docs.path, e->line, e->method, e->path);
            ++missing;
        }
    }
    assert_int_equal(served, fx->docs.ops.n);
    if (missing) fail();
}

/* Every served heading has an example; the final section has no endpoint heading. */
static void test_docs_examples_and_not_served_section(void **state) {
    const spec_fixture *fx = *state;
    const md_doc *d = &fx->docs;
    size_t bad = 0;
    for (size_t i = 0; i < d->ops.n; ++i) {
        const endpoint *e = &d->ops.items[i];
        /* the section: from the heading's line to the next line starting with '#' outside code */
        const char *s = d->text;
        for (int line = 1; line < e->line && s; ++line) {
            s = strchr(s, '\n');
            if (s) ++s;
        }
        int fences = 0, in_code = 0;
        for (s = s ? strchr(s, '\n') : NULL; s && *s; s = strchr(s, '\n')) {
            ++s;
            if (strncmp(s, "```", 3) == 0) {
                ++fences;
                in_code = !in_code;
            } else if (!in_code && *s == '#') {
                break;
            }
        }
        int want = strcmp(e->method, "POST") == 0 ? 2 : 1;
        if (fences / 2 < want) {
            fprintf(stderr, "%s line %d: %s %s has %d example block(s), want %d\n", d->path,
                    e->line, e->method, e->path, fences / 2, want);
            ++bad;
        }
    }
    /* after the served part: no "### METHOD /path" heading */
    int line = d->not_served_line, in_code = 0;
    for (const char *s = d->text + d->scanned; *s;) {
        const char *eol = strchr(s, '\n');
        const char *end = eol ? eol : s + strlen(s);
        const char *m, *p;
        size_t mlen, plen;
        if (strncmp(s, "```", 3) == 0) {
            in_code = !in_code;
        } else if (!in_code && heading_op(s, end, &m, &mlen, &p, &plen)) {
            fprintf(stderr, "%s line %d: an endpoint heading in \"%s\", which serves nothing\n",
                    d->path, line, NOT_SERVED_HEADING);
            ++bad;
        }
        ++line;
        s = eol ? eol + 1 : end;
    }
    if (bad) {
        fprintf(stderr, "%zu problem(s) with the sections of %s\n", bad, d->path);
        fail();
    }
}

/* Everything the product contract names occurs in docs/API.md. */
static void test_docs_cover_the_contract(void **state) {
    const spec_fixture *fx = *state;
    const md_doc *c = &fx->contract;
    const char *docs = fx->docs.text;
    if (!c->text) {
        printf("note: %s is absent (a clone without shared/); the check that %s covers the "
               "product contract is skipped\n",
               c->path, fx->docs.path);
        skip();
    }
    size_t missing = 0;
    char needle[NAME_MAX_LEN + 32];
    for (size_t i = 0; i < c->ops.n; ++i) {
        const endpoint *e = &c->ops.items[i];
        snprintf(needle, sizeof needle, "%s %s", e->method, e->path);
        if (!occurs_bounded(docs, needle, PATH_CHARS)) {
            fprintf(stderr, "%s: \"%s\" does not occur (%s line %d)\n", fx->docs.path, needle,
                    c->path, e->line);
            ++missing;
        }
    }
    const name_list *lists[] = {&c->fields, &c->words};
    for (size_t k = 0; k < 2; ++k) {
        for (size_t i = 0; i < lists[k]->n; ++i) {
            const char *name = lists[k]->names[i];
            char quoted[NAME_MAX_LEN + 2], ticked[NAME_MAX_LEN + 2];
            snprintf(quoted, sizeof quoted, "\"%s\"", name);
            snprintf(ticked, sizeof ticked, "`%s`", name);
            if (!strstr(docs, quoted) && !strstr(docs, ticked)) {
                fprintf(stderr, "%s: neither `%s` nor \"%s\" occurs (%s line %d)\n", fx->docs.path,
                        name, name, c->path, lists[k]->lines[i]);
                ++missing;
            }
        }
    }
    for (size_t i = 0; i < c->env.n; ++i) {
        if (!occurs_bounded(docs, c->env.names[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")) {
            fprintf(stderr, "%s: %s does not occur (%s line %d)\n", fx->docs.path, c->env.names[i],
                    c->path, c->env.lines[i]);
            ++missing;
        }
    }
    if (missing) {
        fprintf(stderr, "%zu name(s) of the product contract missing from %s\n", missing,
                fx->docs.path);
        fail();
    }
}
static void test_every_field_name_is_a_key(void **state) {
    const spec_fixture *fx = *state;
    /* Members the contract names in prose and tables as well as in examples. */
    static const char *const required[] = {
        "status",
        "hit",
        "time",
        "point",
        "normal",
        "a_position",
        "b_position",
        "depth",
        "closest_approach",
        "distance",
        "intersects",
        "parallel",
        "t",
        "s",
        "closest",
        "same_time",
        "overlap",
        "mtv",
        "impulse",
        "kinetic_energy",
        "before",
        "after",
        "collisions",
        "overlapping",
        "stats",
        "candidate_pairs",
        "broadphase",
        "elapsed_ms",
        "events",
        "bodies",
        "stopped",
        "valid",
        "violations",
        "kind",
        "obstacle",
        "position",
        "velocity",
        "results",
        "requests",
        "op",
        "body",
        "horizon",
        "max_results",
        "gravity",
        "max_events",
        "record",
        "to",
        "dt",
        "world",
        "max_speed",
        "max_iterations",
        "half_extents",
        "rotation",
        "vertices",
        "radius",
        "offset",
        "restitution",
        "tangential",
        "mass",
        "static",
        "acceleration",
        "shape",
        "id",
        "type",
        "title",
        "detail",
        "pointer",
        "a",
        "b",
        "p",
        "q",
        "tolerance",
    };
    size_t missing = 0;
    for (size_t i = 0; i < sizeof required / sizeof required[0]; ++i) {
        if (!yaml_has_key(fx, required[i])) {
            fprintf(stderr, "%s: no key `%s:` (a field of the contract)\n", fx->yaml_path,
                    required[i]);
            ++missing;
        }
    }
    for (size_t i = 0; i < fx->docs.fields.n; ++i) {
        int listed = 0;
        for (size_t j = 0; j < sizeof required / sizeof required[0] && !listed; ++j)
            listed = strcmp(required[j], fx->docs.fields.names[i]) == 0;
        if (!listed && !yaml_has_key(fx, fx->docs.fields.names[i])) {
            fprintf(stderr, "%s: no key `%s:` (a member in %s line %d)\n", fx->yaml_path,
                    fx->docs.fields.names[i], fx->docs.path, fx->docs.fields.lines[i]);
            ++missing;
        }
    }
    if (missing) {
        fprintf(stderr, "%zu contract field name(s) missing as YAML keys\n", missing);
        fail();
    }
}

static void test_configuration_and_media_types_described(void **state) {
    const spec_fixture *fx = *state;
    /* the problem types the server sends (values, so anywhere in the text) */
    static const char *const problem_types[] = {
        "malformed-json",  "wrong-type",         "missing-field",     "mixed-dimensions",
        "unknown-field",   "bad-request",        "invalid-field",     "invalid-geometry",
        "limit-exceeded",  "duplicate-id",       "unsupported-field", "internal-error",
        "not-found",       "method-not-allowed", "payload-too-large", "unsupported-media-type",
        "not-implemented", "overloaded",         "draining",          "bad-content-encoding",
    };
    /* headers and media types the contract names (keys of headers: and content:) */
    static const char *const keys[] = {
        "Retry-After",
        "Allow",
        "Content-Encoding",
        "Accept-Encoding",
        "Vary",
        "application/problem+json",
        "application/json",
        "text/plain; version=0.0.4",
        "application/yaml",
    };
    size_t missing = 0;
    for (size_t i = 0; i < fx->docs.env.n; ++i) {
        if (!strstr(fx->yaml, fx->docs.env.names[i])) {
            fprintf(stderr, "%s: configuration variable %s is not described (%s line %d)\n",
                    fx->yaml_path, fx->docs.env.names[i], fx->docs.path, fx->docs.env.lines[i]);
            ++missing;
        }
    }
    for (size_t i = 0; i < sizeof problem_types / sizeof problem_types[0]; ++i) {
        if (!strstr(fx->yaml, problem_types[i])) {
            fprintf(stderr, "%s: problem type `%s` does not occur\n", fx->yaml_path,
                    problem_types[i]);
            ++missing;
        }
    }
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i) {
        if (!yaml_has_key(fx, keys[i])) {
            fprintf(stderr, "%s: no key `%s:` (a header or media type)\n", fx->yaml_path, keys[i]);
            ++missing;
        }
    }
    if (missing) {
        fprintf(stderr, "%zu required name(s) missing\n", missing);
        fail();
    }
}

static void test_no_tabs_and_error_statuses(void **state) {
    const spec_fixture *fx = *state;
    static const char *const post_statuses[] = {"400", "405", "413", "415", "422", "501", "503"};
    size_t missing = 0;
    const char *tab = strchr(fx->yaml, '\t');
    if (tab) {
        int line = 1;
        for (const char *c = fx->yaml; c < tab; ++c)
            line += *c == '\n';
        fprintf(stderr, "%s line %d: a tab character (YAML indents with spaces)\n", fx->yaml_path,
                line);
        ++missing;
    }
    for (size_t i = 0; i < fx->yaml_ops.n; ++i) {
        const endpoint *e = &fx->yaml_ops.items[i];
        for (size_t j = 0; j < 2; ++j) {
            /* a DELETE answers 204 where the others answer 200 */
            const char *st = j == 1 ? "404" : strcmp(e->method, "DELETE") == 0 ? "204" : "200";
            if (!has_status(e, st)) {
                fprintf(stderr, "%s line %d: %s %s has no '%s' response\n", fx->yaml_path, e->line,
                        e->method, e->path, st);
                ++missing;
            }
        }
        if (strcmp(e->method, "POST") != 0) continue;
        for (size_t j = 0; j < sizeof post_statuses / sizeof post_statuses[0]; ++j) {
            if (!has_status(e, post_statuses[j])) {
                fprintf(stderr, "%s line %d: POST %s has no '%s' response\n", fx->yaml_path,
                        e->line, e->path, post_statuses[j]);
                ++missing;
            }
        }
    }
    const endpoint *ready = endpoint_find(&fx->yaml_ops, "GET", "/readyz");
    if (ready && !has_status(ready, "503")) {
        fprintf(stderr, "%s line %d: GET /readyz has no '503' response (draining)\n", fx->yaml_path,
                ready->line);
        ++missing;
    }
    if (missing) {
        fprintf(stderr, "%zu problem(s) with tabs or response statuses\n", missing);
        fail();
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extraction_finds_everything),
        cmocka_unit_test(test_document_header),
        cmocka_unit_test(test_served_endpoints_match),
        cmocka_unit_test(test_router_table_matches_docs),
        cmocka_unit_test(test_docs_examples_and_not_served_section),
        cmocka_unit_test(test_docs_cover_the_contract),
        cmocka_unit_test(test_every_field_name_is_a_key),
        cmocka_unit_test(test_configuration_and_media_types_described),
        cmocka_unit_test(test_no_tabs_and_error_statuses),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

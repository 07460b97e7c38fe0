/*
 * scenetext.c - scene bodies decoded from the request text (see scenetext.h).
 *
 * DESIGN
 * What: the fast path of /v1/scenes/predict and /v1/scenes/simulate for the
 * common large request, many spheres: {"id": "a" or 7, "radius": r or
 * "shape": {"type": "sphere", "radius": r}, "position": [..], "velocity",
 * "acceleration", "mass", "static", "restitution", "tangential"} (a body
 * with a `filter`, or any member not listed, is declined).
 * How: one pass over the top-level object finds the "bodies" member and
 * decodes its array with a strict hand-written reader (JSON grammar, numbers
 * by imp_num_parse, correctly rounded like strtod); the other members are
 * skipped by a bracket counter. The request text with the bodies array
 * replaced by [] is then parsed by jansson, so everything else (and its
 * errors) is decoded by the endpoint as usual, and the bodies go to it
 * through api/bodies.c (imp_dec_scene) as the tree path's do. Every body is
 * checked with the same predicates as api/decode.c (imp_dec_magnitude_ok,
 * imp_dec_range_ok, imp_dec_id_number_ok) and filled as imp_dec_body_value
 * fills it; ids become jansson values held by the rest of the request, as
 * the jansson path's ids are.
 * Anything else - another shape, an unknown or repeated member, a string
 * with an escape or a non-ASCII byte, a value out of range, more bodies than
 * ctx->max_bodies, a number that overflows, any syntax error, the rest
 * failing to parse - returns 0 and the jansson path runs from scratch. It
 * alone writes problems, so every error keeps its pointer and wording.
 * Why the result is the jansson path's: the text with the bodies replaced by
 * [] is valid JSON exactly when the original is (the replaced span is a
 * valid array at a value position: the prefix before it is the same bytes,
 * which the reader lexes as jansson does for any valid prefix); the bodies
 * are decoded first by both endpoints, so the dimension they fix and any
 * later error are the same; duplicate "bodies" members stay in the rest,
 * where jansson rejects them. tests/unit/test_scenetext.c compares the two
 * paths byte for byte, and the api fuzz target does on every scene input.
 * Why at all: jansson allocates a value per number and a hash table per
 * object and parses numbers with strtod; for 10,000 bodies that took
 * several times the solve (tests/bench/bench_scenes).
 */
#include "api/scenetext.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/numtext.h"

typedef struct cur {
    const char *p, *end;
} cur;

static void ws(cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t'))
        c->p++;
}

/* The next non-space byte is ch: consume it. */
static int eat(cur *c, char ch) {
    ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A string of printable ASCII without escapes: [*s, *s + *n). */
static int plain_string(cur *c, const char **s, size_t *n) {
    if (!eat(c, '"')) return 0;
    const char *q = c->p;
    while (q < c->end && *q != '"') {
        unsigned char u = (unsigned char)*q;
        if (u < 0x20 || u >= 0x80 || u == '\\') return 0;
        q++;
    }
    if (q >= c->end) return 0;
    *s = c->p;
    *n = (size_t)(q - c->p);
    c->p = q + 1;
    return 1;
}

static int raw_number(cur *c, double *x) {
    ws(c);
    const char *stop;
    if (imp_num_parse(c->p, c->end, x, &stop) != 0) return 0;
    c->p = stop;
    return 1;
}

/* A number as every request number must be, within [min, max]. */
static int number(cur *c, double min, int open_min, double max, double *x) {
    return raw_number(c, x) && imp_dec_magnitude_ok(*x) && imp_dec_range_ok(*x, min, open_min, max);
}

/* A vector of the request's dimension (*dim 0: this one fixes it). */
static int vec(cur *c, int *dim, imp_vec3 *out) {
    double v[3] = {0, 0, 0};
    int k = 0;
    if (!eat(c, '[')) return 0;
    do {
        if (k == 3 || !number(c, -INFINITY, 0, INFINITY, &v[k])) return 0;
        k++;
    } while (eat(c, ','));
    if (!eat(c, ']') || k < 2 || (*dim != 0 && *dim != k)) return 0;
    *dim = k;
    *out = imp_v3(v[0], v[1], v[2]);
    return 1;
}

static int literal(cur *c, const char *word) {
    ws(c);
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return 0;
    c->p += n;
    return 1;
}

static int key_is(const char *k, size_t n, const char *word) {
    return n == strlen(word) && memcmp(k, word, n) == 0;
}

/* {"type": "sphere", "radius": r} in either order. */
static int sphere_shape(cur *c, double *radius) {
    int have_type = 0, have_radius = 0;
    if (!eat(c, '{')) return 0;
    do {
        const char *k, *v;
        size_t kn, vn;
        if (!plain_string(c, &k, &kn) || !eat(c, ':')) return 0;
        if (key_is(k, kn, "type") && !have_type) {
            if (!plain_string(c, &v, &vn) || !key_is(v, vn, "sphere")) return 0;
            have_type = 1;
        } else if (key_is(k, kn, "radius") && !have_radius) {
            if (!number(c, 0.0, 0, INFINITY, radius)) return 0;
            have_radius = 1;
        } else {
            return 0;
        }
    } while (eat(c, ','));
    return eat(c, '}') && have_type && have_radius;
}

enum {
    K_ID,
    K_RADIUS,
    K_SHAPE,
    K_POSITION,
    K_VELOCITY,
    K_ACCELERATION,
    K_MASS,
    K_STATIC,
    K_RESTITUTION,
    K_TANGENTIAL,
    K_COUNT
};
#define KEY(word)                                                                                  \
    { word, sizeof(word) - 1 }
static const struct {
    const char *word;
    size_t len;
} KEYS[K_COUNT] = {KEY("id"),          KEY("radius"),       KEY("shape"), KEY("position"),
                   KEY("velocity"),    KEY("acceleration"), KEY("mass"),  KEY("static"),
                   KEY("restitution"), KEY("tangential")};

/* One body, as imp_dec_body_value fills it; string and number ids are appended to `ids`. */
static int body(cur *c, int *dim, json_t *ids, size_t index, imp_body *b) {
    memset(b, 0, sizeof *b);
    b->index = index;
    b->mass = 1.0;
    b->restitution = 1.0;
    b->tangential = 1.0;
    b->filter = IMP_FILTER_DEFAULT; /* a body with a `filter` member is declined */
    b->shape.type = IMP_SHAPE_SPHERE;
    unsigned seen = 0;
    if (!eat(c, '{')) return 0;
    do {
        const char *k;
        size_t kn;
        if (!plain_string(c, &k, &kn) || !eat(c, ':')) return 0;
        int key = 0;
        while (key < K_COUNT && !(kn == KEYS[key].len && memcmp(k, KEYS[key].word, kn) == 0))
            key++;
        if (key == K_COUNT || (seen & (1u << key))) return 0;
        seen |= 1u << key;
        int ok = 0;
        double x = 0;
        switch (key) {
        case K_ID: {
            const char *s;
            size_t sn;
            json_t *id = NULL;
            ws(c);
            if (c->p < c->end && *c->p == '"') {
                if (plain_string(c, &s, &sn)) id = json_stringn(s, sn);
            } else if (raw_number(c, &x) && imp_dec_id_number_ok(x)) {
                id = json_real(x);
            }
            ok = id && json_array_append_new(ids, id) == 0;
            b->id = id;
            break;
        }
        case K_RADIUS: ok = number(c, 0.0, 0, INFINITY, &b->shape.radius); break;
        case K_SHAPE: ok = sphere_shape(c, &b->shape.radius); break;
        case K_POSITION: ok = vec(c, dim, &b->m.p); break;
        case K_VELOCITY: ok = vec(c, dim, &b->m.v); break;
        case K_ACCELERATION: ok = vec(c, dim, &b->m.a); break;
        case K_MASS: ok = number(c, 0.0, 1, INFINITY, &b->mass); break;
        case K_STATIC:
            b->is_static = literal(c, "true");
            ok = b->is_static || literal(c, "false");
            break;
        case K_RESTITUTION: ok = number(c, 0.0, 0, 1.0, &b->restitution); break;
        case K_TANGENTIAL: ok = number(c, 0.0, 0, 1.0, &b->tangential); break;
        }
        if (!ok) return 0;
    } while (eat(c, ','));
    /* a position, and a radius either bare or in the shape (with both, the jansson path
     * ignores the bare one whatever it is: not taken here) */
    return eat(c, '}') && (seen & (1u << K_POSITION)) &&
           !(seen & (1u << K_RADIUS)) != !(seen & (1u << K_SHAPE));
}

/* Bytes of the bodies array per chunk parsed on its own (on the caller's threads). */
#define CHUNK_BYTES ((size_t)128 * 1024)
#define MAX_CHUNKS 64

/* A run of bodies: from `from` (the '{' of a body) up to `to`, where the next chunk starts
 * (NULL: the last chunk, which runs to the array's ']'). */
typedef struct chunk {
    const char *from, *to, *end, *stop;
    size_t max; /* bodies allowed */
    int dim, ok;
    json_t *ids; /* the ids of these bodies */
    imp_body *b;
    size_t n;
} chunk;

static void parse_chunk(chunk *k) {
    cur c = {k->from, k->end};
    /* a first guess from the length (a sphere body is rarely under 60 bytes), so that a
     * large array is seldom copied while it grows */
    size_t cap = (size_t)((k->to ? k->to : k->end) - k->from) / 60 + 16;
    for (;;) {
        if (k->n >= k->max) return;
        if (!k->b || k->n == cap) {
            cap = k->b ? 2 * cap : cap;
            imp_body *grown = realloc(k->b, cap * sizeof *grown);
            if (!grown) return;
            k->b = grown;
        }
        if (!body(&c, &k->dim, k->ids, k->n, &k->b[k->n])) return;
        k->n++;
        if (!eat(&c, ',')) break;
        ws(&c);
        if (k->to && c.p >= k->to) {
            /* the next chunk's start must be exactly where a body starts */
            k->ok = c.p == k->to;
            return;
        }
    }
    k->ok = !k->to && eat(&c, ']');
    k->stop = c.p;
}

static void parse_chunks(void *ctx, size_t begin, size_t end) {
    chunk *ks = ctx;
    for (size_t i = begin; i < end; ++i)
        parse_chunk(&ks[i]);
}

/* Where a body probably starts at or after p: the '{' of "}, {" with its '}' before end
 * (NULL: none). A guess: the pattern may sit inside a string; parse_chunk of the chunk
 * before checks it. */
static const char *guess_body_start(const char *p, const char *end) {
    for (; (p = memchr(p, '}', (size_t)(end - p))) != NULL; ++p) {
        cur c = {p + 1, end};
        if (eat(&c, ',') && eat(&c, '{')) return c.p - 1;
    }
    return NULL;
}

static void free_chunks(chunk *ks, size_t nk) {
    for (size_t i = 0; i < nk; ++i) {
        imp_bodies_free(ks[i].b, ks[i].n);
        json_decref(ks[i].ids);
    }
}

/* The bodies array, in chunks parsed in parallel when it is long (a guessed chunk start that
 * is not a body's start makes the whole array be parsed again in one chunk), into *out (n of
 * them, malloc'd); the ids appended to `ids`. */
static int bodies_array(cur *c, const imp_api_ctx *ctx, int *dim, json_t *ids, imp_body **out,
                        size_t *n) {
    *out = NULL;
    *n = 0;
    if (!eat(c, '[')) return 0;
    if (eat(c, ']')) return 1;
    ws(c);
    size_t max = ctx->max_bodies < UINT32_MAX ? ctx->max_bodies : UINT32_MAX;
    chunk ks[MAX_CHUNKS];
    size_t want = (size_t)(c->end - c->p) / CHUNK_BYTES + 1, nk = 0;
    if (want > MAX_CHUNKS) want = MAX_CHUNKS;
    size_t step = (size_t)(c->end - c->p) / want;
    /* chunk starts guessed near every step-th byte, each searched for within one step, so
     * the guessing reads each byte at most once whatever the text */
    const char *from = c->p;
    for (size_t i = 1; i < want; ++i) {
        const char *at = c->p + i * step, *stop = at + step < c->end ? at + step : c->end;
        const char *to = at > from && at < stop ? guess_body_start(at, stop) : NULL;
        if (!to) continue;
        ks[nk++] = (chunk){from, to, c->end, NULL, max, 0, 0, json_array(), NULL, 0};
        from = to;
    }
    ks[nk++] = (chunk){from, NULL, c->end, NULL, max, 0, 0, json_array(), NULL, 0};
    imp_parallel_for(&ctx->parallel, nk, 1, parse_chunks, ks);
    int ok = 1, d = 0;
    size_t total = 0;
    for (size_t i = 0; i < nk; ++i) {
        ok = ok && ks[i].ok && ks[i].ids && (d == 0 || ks[i].dim == d);
        d = ks[i].dim;
        total += ks[i].n;
    }
    if (!ok && nk > 1) {
        /* a start guessed wrong (or a body the sequential parse would reject anyway) */
        free_chunks(ks, nk);
        nk = 1;
        ks[0] = (chunk){c->p, NULL, c->end, NULL, max, 0, 0, json_array(), NULL, 0};
        parse_chunk(&ks[0]);
        ok = ks[0].ok && ks[0].ids;
        d = ks[0].dim;
        total = ks[0].n;
    }
    if (ok && total > max) ok = 0;
    if (ok && nk == 1) {
        *out = ks[0].b;
        ks[0].b = NULL;
    } else if (ok) {
        *out = malloc(total * sizeof **out);
        ok = *out != NULL;
        for (size_t i = 0, at = 0; ok && i < nk; ++i) {
            memcpy(*out + at, ks[i].b, ks[i].n * sizeof **out);
            for (size_t j = at; j < at + ks[i].n; ++j)
                (*out)[j].index = j;
            at += ks[i].n;
            free(ks[i].b); /* moved (a sphere owns nothing, so nothing is owned twice) */
            ks[i].b = NULL;
            ks[i].n = 0;
        }
    }
    for (size_t i = 0; ok && i < nk; ++i)
        ok = json_array_extend(ids, ks[i].ids) == 0;
    if (ok) {
        *n = total;
        *dim = d;
        c->p = ks[nk - 1].stop;
    }
    free_chunks(ks, nk);
    return ok;
}

static int is_delim(char ch) {
    switch (ch) {
    case ',':
    case ':':
    case '[':
    case ']':
    case '{':
    case '}':
    case '"':
    case ' ':
    case '\n':
    case '\r':
    case '\t':
    case '\0': return 1;
    }
    return 0;
}

/* Past a string that may have escapes (its validity is jansson's to judge, on the rest). */
static int skip_string(cur *c) {
    const char *q = c->p + 1;
    while (q < c->end && *q != '"')
        q += *q == '\\' ? 2 : 1;
    if (q >= c->end) return 0;
    c->p = q + 1;
    return 1;
}

/* Past one value of any kind: brackets counted, strings skipped, scalars to a delimiter. */
static int skip_value(cur *c) {
    size_t depth = 0;
    do {
        ws(c);
        if (c->p >= c->end) return 0;
        char ch = *c->p;
        if (ch == '"') {
            if (!skip_string(c)) return 0;
        } else if (ch == '[' || ch == '{') {
            depth++;
            c->p++;
        } else if (ch == ']' || ch == '}') {
            if (depth == 0) return 0;
            depth--;
            c->p++;
        } else if (ch == ',' || ch == ':') {
            if (depth == 0) return 0;
            c->p++;
        } else {
            if (is_delim(ch)) return 0;
            while (c->p < c->end && !is_delim(*c->p))
                c->p++;
        }
    } while (depth > 0);
    return 1;
}

int imp_scenetext_decode(const char *text, size_t len, const imp_api_ctx *ctx, imp_body **out,
                         size_t *out_n, int *out_dim, json_t **rest) {
    cur c = {text, text + len};
    const char *span0 = NULL, *span1 = NULL;
    imp_body *bodies = NULL;
    size_t n = 0;
    int dim = 0;
    json_t *ids = json_array(), *tree = NULL;
    char *rest_text = NULL;
    int taken = 0;
    if (!ids || !text || !eat(&c, '{') || eat(&c, '}')) goto done;
    do {
        ws(&c);
        const char *key = c.p;
        if (c.p >= c.end || *c.p != '"' || !skip_string(&c)) goto done;
        size_t key_len = (size_t)(c.p - key);
        if (!eat(&c, ':')) goto done;
        if (!span0 && key_is(key, key_len, "\"bodies\"")) {
            ws(&c);
            span0 = c.p;
            if (!bodies_array(&c, ctx, &dim, ids, &bodies, &n)) goto done;
            span1 = c.p;
        } else if (!skip_value(&c)) {
            goto done;
        }
    } while (eat(&c, ','));
    if (!eat(&c, '}') || !span0) goto done;
    ws(&c);
    if (c.p != c.end) goto done;

    size_t head = (size_t)(span0 - text), tail = (size_t)(c.end - span1);
    rest_text = malloc(head + 2 + tail);
    if (!rest_text) goto done;
    memcpy(rest_text, text, head);
    memcpy(rest_text + head, "[]", 2);
    memcpy(rest_text + head + 2, span1, tail);
    tree = json_loadb(rest_text, head + 2 + tail,
                      JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY, NULL);
    /* the ids live as long as the request, as they do on the tree path */
    if (!tree || json_object_set(tree, "bodies", ids) != 0) goto done;

    *out = bodies;
    *out_n = n;
    *out_dim = dim;
    *rest = tree;
    bodies = NULL;
    tree = NULL;
    taken = 1;
done:
    imp_bodies_free(bodies, n);
    json_decref(ids);
    json_decref(tree);
    free(rest_text);
    return taken;
}

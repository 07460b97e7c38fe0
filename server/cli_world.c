/*
 * cli_world.c - `impact world import` and `impact world upload`: a level
 * made in a modelling tool (glTF/GLB, OBJ, FBX) as a World, and a World
 * onto a server, uploaded only when the server does not hold it yet.
 *
 * DESIGN
 * What: `impact world import FILE [--out PATH] [--one-sided] [--scale S]
 * [--pretty]` reads a model with Assimp and writes the World JSON that
 * POST /v1/worlds takes: one `mesh` collider per mesh instance (a mesh
 * that two nodes use is two colliders), vertices in world space (the node
 * transforms applied, then --scale), at position [0, 0, 0]. The id is the
 * mesh's name, else its node's, else "mesh-N" (N: the mesh's index in the
 * file; also for a name that is not UTF-8), made unique with "-2", "-3",
 * ... Point and line primitives are dropped; a file with no triangle at
 * all is an error.
 * `impact world upload FILE --url URL [--token-file PATH] [--one-sided]
 * [--scale S]` sends a World (FILE as is, or imported first when its name
 * ends in .gltf, .glb, .obj or .fbx, to the bytes `impact world import
 * FILE` prints, newline included) to URL: HEAD /v1/worlds/<id> with the
 * id computed here (the SHA-256 of the exact bytes it would send), and
 * POST /v1/worlds only when that is not 200. It prints the server's reply,
 * or {"id": ..., "status": "already-stored"} for a skipped upload.
 * Exit status (cli.c's convention): 0 written, stored or already stored;
 * 1 the model file is not one Assimp reads, holds no triangle or a
 * coordinate that is not finite, or the server answered 4xx; 2 usage
 * (unknown option, missing FILE or --url, FILE or the token file cannot be
 * opened); 3 the server answered 5xx or could not be reached, or out of
 * memory, or the output could not be written. Messages go to stderr; the
 * token never appears in any output.
 * How: aiImportFileExWithProperties with Triangulate (quads and polygons
 * into triangles), RemoveComponent (normals, texture coordinates, colours,
 * ...: only positions matter, so JoinIdenticalVertices then merges vertices
 * by position alone), SortByPType (points and lines into meshes of their
 * own, which are skipped) and ValidateDataStructure (indices in range).
 * The node tree is walked with each node's transform composed in double
 * (Assimp keeps floats), applied to the float positions; a transform that
 * mirrors (negative determinant) swaps two indices of each triangle so the
 * front face stays counter-clockwise. Reals are written by api/jsonout
 * (the shortest text that reads back to the same double, as in every
 * reply of the daemon).
 * Uploads use libcurl; the id is api/world_store's imp_world_id_of.
 * Why: Assimp reads the formats level designers export without a
 * converter of ours; it is linked into this tool only, since the daemon
 * never parses model files (a parser of untrusted binary formats has no
 * place in a network service that only needs triangles). The HEAD first
 * is what the content-addressed ids are for: re-running a deploy script
 * costs one round trip, not a re-upload and a rebuild.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "api/jsonout.h"
#include "api/world_store.h"
#include "cli.h"

/* Seconds to wait for the server to accept a connection. */
#define CONNECT_TIMEOUT_S 30L

typedef struct world_opts {
    const char *file, *out, *url, *token_file;
    int one_sided, pretty;
    double scale;
} world_opts;

static void world_usage(FILE *out) {
    fprintf(out,
            "Usage: %s world import FILE [--out PATH] [--one-sided] [--scale S] [--pretty]\n"
            "       %s world upload FILE --url URL [--token-file PATH] [--one-sided] [--scale S]\n"
            "\n"
            "import: turns a glTF/GLB, OBJ or FBX level (any format Assimp reads) into the\n"
            "World JSON of POST /v1/worlds: one mesh collider per mesh, node transforms\n"
            "applied, on stdout or in PATH.\n"
            "upload: sends a World (FILE as is, or a .gltf, .glb, .obj or .fbx imported first)\n"
            "to URL/v1/worlds unless HEAD URL/v1/worlds/<its SHA-256> is 200; prints the\n"
            "server's reply.\n"
            "\n"
            "Options:\n"
            "  --out PATH         write the World to PATH instead of stdout\n"
            "  --one-sided        mark every mesh one_sided (hits on back faces do not count)\n"
            "  --scale S          multiply every coordinate by S (after the node transforms)\n"
            "  --pretty           indent the JSON\n"
            "  --url URL          the server, e.g. http://127.0.0.1:8080\n"
            "  --token-file PATH  send Authorization: Bearer <the file's first line>\n"
            "\n"
            "Exit status: 0 success, 1 bad model file or a 4xx answer, 2 usage error,\n"
            "3 a 5xx answer, no connection, or output failure.\n",
            imp_cli_program, imp_cli_program);
}

/* ---- unique collider ids ------------------------------------------------------------------- */

/* A set of strings (open addressing, linear probing; owns its copies). */
typedef struct name_set {
    char **slot;
    size_t cap, n;
} name_set;

static uint64_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; ++s)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int name_set_has(const name_set *set, const char *s) {
    if (!set->cap) return 0;
    for (size_t i = name_hash(s) & (set->cap - 1); set->slot[i]; i = (i + 1) & (set->cap - 1))
        if (strcmp(set->slot[i], s) == 0) return 1;
    return 0;
}

/* Adds a copy of s (not in the set yet). Returns 0, or -1 when out of memory. */
static int name_set_add(name_set *set, const char *s) {
    if (2 * (set->n + 1) > set->cap) { /* at most half full */
        size_t cap = set->cap ? set->cap * 2 : 64;
        char **slot = calloc(cap, sizeof *slot);
        if (!slot) return -1;
        for (size_t i = 0; i < set->cap; ++i) {
            if (!set->slot[i]) continue;
            size_t j = name_hash(set->slot[i]) & (cap - 1);
            while (slot[j])
                j = (j + 1) & (cap - 1);
            slot[j] = set->slot[i];
        }
        free(set->slot);
        set->slot = slot;
        set->cap = cap;
    }
    char *copy = strdup(s);
    if (!copy) return -1;
    size_t i = name_hash(s) & (set->cap - 1);
    while (set->slot[i])
        i = (i + 1) & (set->cap - 1);
    set->slot[i] = copy;
    ++set->n;
    return 0;
}

static void name_set_free(name_set *set) {
    for (size_t i = 0; i < set->cap; ++i)
        free(set->slot[i]);
    free(set->slot);
    memset(set, 0, sizeof *set);
}

/* The id of a collider: `base`, or base-2, base-3, ... when taken; added to
 * the set. Returns a malloc'd string, or NULL when out of memory. */
static char *unique_id(name_set *set, const char *base) {
    size_t n = strlen(base) + 24;
    char *id = malloc(n);
    if (!id) return NULL;
    snprintf(id, n, "%s", base);
    for (unsigned long k = 2; name_set_has(set, id); ++k)
        snprintf(id, n, "%s-%lu", base, k);
    if (name_set_add(set, id) == 0) return id;
    free(id);
    return NULL;
}

/* ---- import ---------------------------------------------------------------------------------- */

/* An affine transform: rows of [R | t], row-major (Assimp's a1..c4). */
typedef struct affine {
    double m[3][4];
} affine;

/* parent * (the node's own transform). */
static affine affine_compose(const affine *parent, const struct aiMatrix4x4 *t) {
    const double local[3][4] = {
        {t->a1, t->a2, t->a3, t->a4}, {t->b1, t->b2, t->b3, t->b4}, {t->c1, t->c2, t->c3, t->c4}};
    affine out;
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 4; ++c) {
            double v = parent->m[r][0] * local[0][c] + parent->m[r][1] * local[1][c] +
                       parent->m[r][2] * local[2][c];
            out.m[r][c] = c == 3 ? v + parent->m[r][3] : v;
        }
    }
    return out;
}

static double affine_det(const affine *a) {
    const double(*m)[4] = a->m;
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
           m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

typedef struct import_ctx {
    const struct aiScene *scene;
    const world_opts *opts;
    imp_jbuf out;
    name_set ids;
    size_t colliders;
    int status; /* CLI_EXIT_OK until something failed (and was reported) */
} import_ctx;

/* A name usable as an id: not empty and valid UTF-8 (JSON text must be), else NULL. */
static const char *ai_name(const struct aiString *s) {
    if (s->length == 0 || s->length >= MAXLEN) return NULL;
    json_t *valid = json_stringn(s->data, s->length); /* NULL for invalid UTF-8 */
    json_decref(valid);
    return valid ? s->data : NULL;
}

/* Appends mesh `index` seen through `to_world` as one collider (nothing when
 * it has no triangle). */
static void emit_mesh(import_ctx *c, const struct aiNode *node, unsigned index,
                      const affine *to_world) {
    const struct aiMesh *mesh = c->scene->mMeshes[index];
    size_t tris = 0;
    for (unsigned f = 0; f < mesh->mNumFaces; ++f)
        tris += mesh->mFaces[f].mNumIndices == 3;
    if (tris == 0 || mesh->mNumVertices < 3 || !mesh->mVertices) return;

    char fallback[32];
    snprintf(fallback, sizeof fallback, "mesh-%u", index);
    const char *base = ai_name(&mesh->mName);
    if (!base) base = ai_name(&node->mName);
    if (!base) base = fallback;
    char *id = unique_id(&c->ids, base);
    if (!id) {
        c->out.failed = 1;
        return;
    }
    imp_jbuf *b = &c->out;
    if (c->colliders++) IMP_JBUF_LIT(b, ",");
    IMP_JBUF_LIT(b, "{\"id\":");
    imp_jbuf_string(b, id, strlen(id));
    IMP_JBUF_LIT(b, ",\"shape\":{\"type\":\"mesh\",\"vertices\":[");
    for (unsigned v = 0; v < mesh->mNumVertices; ++v) {
        const double p[3] = {mesh->mVertices[v].x, mesh->mVertices[v].y, mesh->mVertices[v].z};
        if (v) IMP_JBUF_LIT(b, ",");
        IMP_JBUF_LIT(b, "[");
        for (int r = 0; r < 3; ++r) {
            const double *row = to_world->m[r];
            double x = (row[0] * p[0] + row[1] * p[1] + row[2] * p[2] + row[3]) * c->opts->scale;
            if (!isfinite(x)) {
                fprintf(stderr, "%s: %s: collider '%s' has a coordinate that is not finite\n",
                        imp_cli_program, c->opts->file, id);
                c->status = CLI_EXIT_PROBLEM;
                free(id);
                return;
            }
            if (r) IMP_JBUF_LIT(b, ",");
            imp_jbuf_real(b, x);
        }
        IMP_JBUF_LIT(b, "]");
    }
    free(id);
    /* a mirroring transform (or scale) turns counter-clockwise into clockwise */
    int flip = affine_det(to_world) * c->opts->scale < 0;
    IMP_JBUF_LIT(b, "],\"triangles\":[");
    size_t written = 0;
    for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
        const struct aiFace *face = &mesh->mFaces[f];
        if (face->mNumIndices != 3) continue;
        if (written++) IMP_JBUF_LIT(b, ",");
        IMP_JBUF_LIT(b, "[");
        imp_jbuf_int(b, face->mIndices[0]);
        IMP_JBUF_LIT(b, ",");
        imp_jbuf_int(b, face->mIndices[flip ? 2 : 1]);
        IMP_JBUF_LIT(b, ",");
        imp_jbuf_int(b, face->mIndices[flip ? 1 : 2]);
        IMP_JBUF_LIT(b, "]");
    }
    IMP_JBUF_LIT(b, "]");
    if (c->opts->one_sided) IMP_JBUF_LIT(b, ",\"one_sided\":true");
    IMP_JBUF_LIT(b, "},\"position\":[0.0,0.0,0.0]}");
}

static void walk(import_ctx *c, const struct aiNode *node, const affine *parent) {
    affine to_world = affine_compose(parent, &node->mTransformation);
    for (unsigned i = 0; i < node->mNumMeshes && c->status == CLI_EXIT_OK; ++i)
        if (node->mMeshes[i] < c->scene->mNumMeshes)
            emit_mesh(c, node, node->mMeshes[i], &to_world);
    for (unsigned i = 0; i < node->mNumChildren && c->status == CLI_EXIT_OK; ++i)
        walk(c, node->mChildren[i], &to_world);
}

/*
 * Imports opts->file into *world (compact World JSON, malloc'd, the caller
 * frees; *len its length). Returns CLI_EXIT_OK, or an exit status after a
 * message on stderr.
 */
static int import_world(const world_opts *opts, char **world, size_t *len) {
    /* a file that cannot be opened is a usage error, as for `impact OP --file` */
    int fd = open(opts->file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return imp_cli_usage_error("cannot open '%s': %s", opts->file, strerror(errno));
    close(fd);

    struct aiPropertyStore *props = aiCreatePropertyStore();
    if (!props) {
        fprintf(stderr, "%s: out of memory\n", imp_cli_program);
        return CLI_EXIT_INTERNAL;
    }
    aiSetImportPropertyInteger(props, AI_CONFIG_PP_RVC_FLAGS,
                               aiComponent_NORMALS | aiComponent_TANGENTS_AND_BITANGENTS |
                                   aiComponent_COLORS | aiComponent_TEXCOORDS |
                                   aiComponent_BONEWEIGHTS | aiComponent_ANIMATIONS |
                                   aiComponent_TEXTURES | aiComponent_LIGHTS | aiComponent_CAMERAS |
                                   aiComponent_MATERIALS);
    unsigned flags = aiProcess_RemoveComponent | aiProcess_Triangulate |
                     aiProcess_JoinIdenticalVertices | aiProcess_SortByPType |
                     aiProcess_ValidateDataStructure;
    const struct aiScene *scene = aiImportFileExWithProperties(opts->file, flags, NULL, props);
    aiReleasePropertyStore(props);
    if (!scene || !scene->mRootNode) {
        const char *why = aiGetErrorString();
        fprintf(stderr, "%s: %s: not a model file Assimp can read: %s\n", imp_cli_program,
                opts->file, why && *why ? why : "no scene");
        aiReleaseImport(scene);
        return CLI_EXIT_PROBLEM;
    }

    import_ctx c = {.scene = scene, .opts = opts, .status = CLI_EXIT_OK};
    const affine identity = {{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}}};
    IMP_JBUF_LIT(&c.out, "{\"colliders\":[");
    walk(&c, scene->mRootNode, &identity);
    IMP_JBUF_LIT(&c.out, "]}");
    aiReleaseImport(scene);
    name_set_free(&c.ids);
    if (c.status == CLI_EXIT_OK && c.out.failed) {
        fprintf(stderr, "%s: out of memory\n", imp_cli_program);
        c.status = CLI_EXIT_INTERNAL;
    }
    if (c.status == CLI_EXIT_OK && c.colliders == 0) {
        fprintf(stderr, "%s: %s: no triangles (points and lines are not imported)\n",
                imp_cli_program, opts->file);
        c.status = CLI_EXIT_PROBLEM;
    }
    if (c.status != CLI_EXIT_OK) {
        free(c.out.p);
        return c.status;
    }
    *world = c.out.p;
    *len = c.out.len;
    return CLI_EXIT_OK;
}

static int cmd_import(const world_opts *opts) {
    char *world = NULL;
    size_t len = 0;
    int rc = import_world(opts, &world, &len);
    if (rc != CLI_EXIT_OK) return rc;
    FILE *out = stdout;
    if (opts->out && !(out = fopen(opts->out, "w"))) {
        fprintf(stderr, "%s: cannot create '%s': %s\n", imp_cli_program, opts->out,
                strerror(errno));
        free(world);
        return CLI_EXIT_INTERNAL;
    }
    int failed = imp_cli_print_json(out, world, len, opts->pretty) != 0;
    if (out != stdout) failed = fclose(out) != 0 || failed;
    free(world);
    if (!failed) return CLI_EXIT_OK;
    fprintf(stderr, "%s: cannot write the World to %s\n", imp_cli_program,
            opts->out ? opts->out : "standard output");
    return CLI_EXIT_INTERNAL;
}

/* ---- upload ---------------------------------------------------------------------------------- */

/* Whether `path` names a model file (imported) rather than a World JSON. */
static int is_model_file(const char *path) {
    static const char *const EXT[] = {".gltf", ".glb", ".obj", ".fbx"};
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof EXT / sizeof EXT[0]; ++i) {
        size_t k = strlen(EXT[i]);
        if (n > k && strcasecmp(path + n - k, EXT[i]) == 0) return 1;
    }
    return 0;
}

/* The header "Authorization: Bearer <token>" from the token file's first
 * line (malloc'd into *header). Returns CLI_EXIT_OK or CLI_EXIT_USAGE. */
static int read_token_header(const char *path, char **header) {
    char *token = NULL;
    size_t len = 0;
    int rc = imp_cli_read_file(path, &token, &len);
    if (rc != CLI_EXIT_OK) return rc;
    size_t n = strcspn(token, "\r\n");
    while (n > 0 && (token[n - 1] == ' ' || token[n - 1] == '\t'))
        --n;
    size_t start = strspn(token, " \t");
    if (start >= n) {
        free(token);
        return imp_cli_usage_error("the token file '%s' is empty", path);
    }
    static const char PREFIX[] = "Authorization: Bearer ";
    *header = malloc(sizeof PREFIX + n - start);
    if (*header) {
        memcpy(*header, PREFIX, sizeof PREFIX - 1);
        memcpy(*header + sizeof PREFIX - 1, token + start, n - start);
        (*header)[sizeof PREFIX - 1 + n - start] = '\0';
    }
    memset(token, 0, len);
    free(token);
    if (*header) return CLI_EXIT_OK;
    fprintf(stderr, "%s: out of memory\n", imp_cli_program);
    return CLI_EXIT_INTERNAL;
}

static size_t collect_reply(char *p, size_t size, size_t n, void *user) {
    imp_jbuf *b = user;
    imp_jbuf_raw(b, p, size * n);
    return b->failed ? 0 : size * n;
}

/* One request: HEAD when body is NULL, else a POST of len bytes of JSON.
 * Returns the HTTP status (the reply in *reply), or 0 after a message on
 * stderr when no answer came. */
static long http_exchange(CURL *curl, const char *url, const char *body, size_t len,
                          const char *auth, imp_jbuf *reply) {
    struct curl_slist *headers = NULL;
    const char *const lines[] = {"Content-Type: application/json", auth};
    for (size_t i = 0; body && i < 2 && lines[i]; ++i) {
        struct curl_slist *h = curl_slist_append(headers, lines[i]);
        if (!h) {
            curl_slist_free_all(headers);
            fprintf(stderr, "%s: out of memory\n", imp_cli_program);
            return 0;
        }
        headers = h;
    }
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect_reply);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, reply);
    if (body) {
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    } else {
        curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    }
    CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK || status == 0)
        fprintf(stderr, "%s: %s %s: %s\n", imp_cli_program, body ? "POST" : "HEAD", url,
                reply->failed ? "out of memory" : curl_easy_strerror(rc));
    return rc == CURLE_OK ? status : 0;
}

/* HEAD, then POST when the world is not stored. Returns the exit status. */
static int upload_world(const world_opts *opts, const char *world, size_t len, const char *auth) {
    char id[IMP_WORLD_ID_LEN + 1];
    imp_world_id_of(world, len, id);
    size_t base = strlen(opts->url);
    while (base > 0 && opts->url[base - 1] == '/')
        --base;
    size_t cap = base + sizeof "/v1/worlds/" + IMP_WORLD_ID_LEN;
    char *url = malloc(cap);
    CURL *curl = curl_easy_init();
    if (!id[0] || !url || !curl) {
        free(url);
        curl_easy_cleanup(curl);
        fprintf(stderr, "%s: out of memory\n", imp_cli_program);
        return CLI_EXIT_INTERNAL;
    }
    snprintf(url, cap, "%.*s/v1/worlds/%s", (int)base, opts->url, id);
    imp_jbuf reply = {0};
    long status = http_exchange(curl, url, NULL, 0, NULL, &reply);
    int rc;
    if (status == 200) {
        IMP_JBUF_LIT(&reply, "{\"id\":");
        imp_jbuf_string(&reply, id, IMP_WORLD_ID_LEN);
        IMP_JBUF_LIT(&reply, ",\"status\":\"already-stored\"}");
        rc = CLI_EXIT_OK;
    } else if (status == 0) {
        rc = CLI_EXIT_INTERNAL;
    } else { /* 404, or anything else: the POST's answer says what is wrong */
        reply.len = 0;
        url[base + strlen("/v1/worlds")] = '\0';
        status = http_exchange(curl, url, world, len, auth, &reply);
        rc = status ? imp_cli_exit_for_status(status) : CLI_EXIT_INTERNAL;
    }
    curl_easy_cleanup(curl);
    free(url);
    if (status && reply.failed) {
        fprintf(stderr, "%s: out of memory\n", imp_cli_program);
        rc = CLI_EXIT_INTERNAL;
    } else if (status && reply.len > 0 && imp_cli_print_json(stdout, reply.p, reply.len, 0)) {
        fprintf(stderr, "%s: cannot write the reply to standard output\n", imp_cli_program);
        rc = CLI_EXIT_INTERNAL;
    }
    free(reply.p);
    return rc;
}

static int cmd_upload(const world_opts *opts) {
    char *world = NULL, *auth = NULL;
    size_t len = 0;
    int rc = opts->token_file ? read_token_header(opts->token_file, &auth) : CLI_EXIT_OK;
    int model = is_model_file(opts->file);
    if (rc == CLI_EXIT_OK)
        rc = model ? import_world(opts, &world, &len) : imp_cli_read_file(opts->file, &world, &len);
    /* the bytes `impact world import FILE` prints, newline included: both give the same id */
    if (rc == CLI_EXIT_OK && model) {
        char *p = realloc(world, len + 2);
        if (p) {
            world = p;
            memcpy(world + len, "\n", 2);
            ++len;
        } else {
            fprintf(stderr, "%s: out of memory\n", imp_cli_program);
            rc = CLI_EXIT_INTERNAL;
        }
    }
    if (rc == CLI_EXIT_OK) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
            fprintf(stderr, "%s: cannot initialise libcurl\n", imp_cli_program);
            rc = CLI_EXIT_INTERNAL;
        } else {
            rc = upload_world(opts, world, len, auth);
            curl_global_cleanup();
        }
    }
    if (auth) memset(auth, 0, strlen(auth));
    free(auth);
    free(world);
    return rc;
}

/* ---- arguments ------------------------------------------------------------------------------- */

/* When argv[*i] is option `name` ("--name VALUE" or "--name=VALUE"), sets
 * *value and returns 1 (0 when it is another argument; -1 after a usage
 * error for a missing or empty value). */
static int option_value(int argc, char **argv, int *i, const char *name, const char **value) {
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '=')) return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
    } else if (*i + 1 < argc) {
        *value = argv[++*i];
    } else {
        imp_cli_usage_error("option '%s' needs a value", name);
        return -1;
    }
    if (**value) return 1;
    imp_cli_usage_error("empty value for '%s'", name);
    return -1;
}

int imp_cli_world(int argc, char **argv) {
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        world_usage(stdout);
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_INTERNAL;
    }
    if (argc < 2) return imp_cli_usage_error("world: missing 'import' or 'upload'");
    int upload = strcmp(argv[1], "upload") == 0;
    if (!upload && strcmp(argv[1], "import") != 0)
        return imp_cli_usage_error("world: unknown subcommand '%s' (import or upload)", argv[1]);

    world_opts o = {.scale = 1.0};
    const char *scale = NULL;
    int only_positional = 0;
    for (int i = 2; i < argc; ++i) {
        const char *a = argv[i];
        int k = 0;
        if (only_positional || a[0] != '-' || a[1] == '\0') {
            if (o.file) return imp_cli_usage_error("unexpected argument '%s' (one FILE)", a);
            o.file = a;
        } else if (strcmp(a, "--") == 0) {
            only_positional = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            world_usage(stdout);
            return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_INTERNAL;
        } else if (strcmp(a, "--one-sided") == 0) {
            o.one_sided = 1;
        } else if (!upload && strcmp(a, "--pretty") == 0) {
            o.pretty = 1;
        } else if ((k = option_value(argc, argv, &i, "--scale", &scale)) ||
                   (!upload && (k = option_value(argc, argv, &i, "--out", &o.out))) ||
                   (upload && (k = option_value(argc, argv, &i, "--url", &o.url))) ||
                   (upload && (k = option_value(argc, argv, &i, "--token-file", &o.token_file)))) {
            if (k < 0) return CLI_EXIT_USAGE;
        } else {
            return imp_cli_usage_error("world %s: unknown option '%s'", argv[1], a);
        }
    }
    if (!o.file) return imp_cli_usage_error("world %s: missing FILE", argv[1]);
    if (scale) {
        char *end = NULL;
        errno = 0;
        o.scale = strtod(scale, &end);
        if (end == scale || *end || errno || !isfinite(o.scale) || o.scale == 0)
            return imp_cli_usage_error("--scale '%s' is not a finite non-zero number", scale);
    }
    if (!upload) return cmd_import(&o);
    if (!o.url) return imp_cli_usage_error("world upload: missing --url");
    if ((scale || o.one_sided) && !is_model_file(o.file))
        return imp_cli_usage_error("--scale and --one-sided apply to model files "
                                   "(.gltf, .glb, .obj, .fbx), not to '%s'",
                                   o.file);
    return cmd_upload(&o);
}

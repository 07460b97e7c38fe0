/*
 * cli.c - impact: the service's endpoints on the command line, no HTTP.
 *
 * DESIGN
 * What: `impact OP [--pretty] [--file PATH] < request.json` runs endpoint
 * OP ("toi", "scenes/predict", ...: the path after /v1/) on one JSON
 * request and prints the response body and a newline on stdout. Problems
 * are printed there too, as the daemon would send them, so a script sees
 * the same document either way. Exit status: 0 for a 2xx answer, 1 for a
 * 4xx problem (the request is wrong), 3 for a 5xx (a bug, or out of memory,
 * or stdout could not be written), 2 for a usage error (unknown or missing
 * OP, unknown flag, unreadable or oversized input), which goes to stderr.
 * `impact world import|upload ...` (cli_world.c) turns level files into
 * Worlds and uploads them to a server, with the same exit statuses.
 * How: the whole input is read into one buffer (growing by doubling up to
 * MAX_INPUT_BYTES) and handed to imp_api_handle with the default limits of
 * imp_api_ctx_init. Without --pretty the api's bytes are written unchanged;
 * --pretty parses them back with jansson and re-indents, keeping 17
 * significant digits so every number still round-trips.
 * Why: calling the same imp_api_handle as the daemon, with the same default
 * limits, makes the CLI's output byte-identical to the daemon's response
 * body, so it doubles as a way to reproduce a served answer without a
 * network. Distinct exit codes for "your request is wrong" (1) and "we are
 * wrong" (3) let scripts retry or report without parsing the JSON.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "api/problem.h"
#include "api/world_store.h"
#include "cli.h"

#define VERSION "1.0.0"

/* Largest request we agree to read (bytes): the daemon's own ceiling for
 * --max-body-bytes; the whole request must fit in memory to be parsed. */
#define MAX_INPUT_BYTES ((size_t)1 << 30)
/* First read buffer (bytes); it doubles from there. */
#define INITIAL_INPUT_BYTES ((size_t)64 << 10)

const char imp_cli_program[] = "impact";

static void usage(FILE *out) {
    fprintf(out,
            "Usage: %s OP [--pretty] [--file PATH] < request.json\n"
            "       %s world import|upload ...  (see '%s world --help')\n"
            "Runs one impactd endpoint on a JSON request without a server and prints the\n"
            "response (or the problem+json) on stdout.\n\n"
            "Operations (POST /v1/OP):\n",
            imp_cli_program, imp_cli_program, imp_cli_program);
    size_t n;
    const imp_endpoint *eps = imp_endpoints(&n);
    for (size_t i = 0; i < n; ++i)
        if (eps[i].op && !strchr(eps[i].path, '{'))
            fprintf(out, "  %-18s %s\n", eps[i].op, eps[i].summary);
    fprintf(out,
            "\nOptions:\n"
            "  %-18s %s\n  %-18s %s\n  %-18s %s\n  %-18s %s\n"
            "\nExit status: 0 success (2xx), 1 problem with the request (4xx),\n"
            "2 usage error, 3 internal error (5xx) or output failure.\n",
            "--pretty", "indent the JSON output", "--file PATH",
            "read the request from PATH instead of stdin (- is stdin)", "-h, --help",
            "print this text and exit", "--version", "print the version and exit");
}

int imp_cli_usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", imp_cli_program);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry '%s --help'.\n", imp_cli_program);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

typedef enum read_status { READ_OK, READ_ERRNO, READ_TOO_BIG } read_status;

/*
 * Reads fd to EOF into a malloc'd buffer (caller frees *out; NUL-terminated
 * for convenience, *len excludes the NUL). On READ_ERRNO, errno is the
 * cause; nothing is allocated on any failure.
 */
static read_status read_all(int fd, char **out, size_t *len) {
    size_t cap = INITIAL_INPUT_BYTES, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) return READ_ERRNO;
    for (;;) {
        if (n == cap) {
            if (cap > MAX_INPUT_BYTES) { /* read one byte past the limit: too big */
                free(buf);
                return READ_TOO_BIG;
            }
            /* +1 beyond the limit so an input of exactly MAX_INPUT_BYTES is told
             * apart from a longer one */
            size_t ncap = cap * 2 > MAX_INPUT_BYTES ? MAX_INPUT_BYTES + 1 : cap * 2;
            char *p = realloc(buf, ncap + 1);
            if (!p) {
                free(buf);
                errno = ENOMEM;
                return READ_ERRNO;
            }
            buf = p;
            cap = ncap;
        }
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return READ_ERRNO;
        }
        if (k == 0) break;
        n += (size_t)k;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return READ_OK;
}

int imp_cli_read_file(const char *path, char **body, size_t *len) {
    if (path && strcmp(path, "-") == 0) path = NULL;
    int fd = STDIN_FILENO;
    if (path) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return imp_cli_usage_error("cannot open '%s': %s", path, strerror(errno));
    }
    read_status rs = read_all(fd, body, len);
    int read_errno = errno;
    if (fd != STDIN_FILENO) close(fd);
    if (rs == READ_OK) return CLI_EXIT_OK;
    char why[128];
    if (rs == READ_TOO_BIG)
        snprintf(why, sizeof why, "is larger than %zu bytes (1 GiB)", MAX_INPUT_BYTES);
    else
        snprintf(why, sizeof why, "cannot be read: %s", strerror(read_errno));
    return path ? imp_cli_usage_error("'%s' %s", path, why)
                : imp_cli_usage_error("standard input %s", why);
}

int imp_cli_print_json(FILE *out, const char *body, size_t body_len, int pretty) {
    char *indented = NULL;
    if (pretty) {
        json_error_t jerr;
        json_t *doc = json_loadb(body, body_len, 0, &jerr);
        indented = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
        json_decref(doc);
        if (!indented) /* only out of memory: the api emits valid JSON */
            fprintf(stderr, "%s: cannot indent the output; printing it as is\n", imp_cli_program);
    }
    const char *text = indented ? indented : body;
    size_t len = indented ? strlen(indented) : body_len;
    int ok = fwrite(text, 1, len, out) == len && fputc('\n', out) != EOF;
    free(indented);
    ok = fflush(out) == 0 && ok;
    return ok ? 0 : -1;
}

int imp_cli_exit_for_status(long status) {
    if (status >= 200 && status < 300) return CLI_EXIT_OK;
    if (status >= 400 && status < 500) return CLI_EXIT_PROBLEM;
    return CLI_EXIT_INTERNAL;
}

int main(int argc, char **argv) {
    /* level files and uploads: their own arguments (cli_world.c) */
    if (argc > 1 && strcmp(argv[1], "world") == 0) return imp_cli_world(argc - 1, argv + 1);
    const char *op = NULL, *path = NULL;
    int pretty = 0, only_positional = 0;

    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!only_positional && a[0] == '-' && a[1] != '\0') {
            if (strcmp(a, "--") == 0) {
                only_positional = 1;
            } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                usage(stdout);
                return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_INTERNAL;
            } else if (strcmp(a, "--version") == 0) {
                printf("impact %s\n", VERSION);
                return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_INTERNAL;
            } else if (strcmp(a, "--pretty") == 0) {
                pretty = 1;
            } else if (strcmp(a, "--file") == 0) {
                if (i + 1 >= argc) return imp_cli_usage_error("option '%s' needs a path", a);
                path = argv[++i];
            } else if (strncmp(a, "--file=", 7) == 0) {
                path = a + 7;
            } else {
                return imp_cli_usage_error("unknown option '%s'", a);
            }
        } else if (!op) {
            op = a;
        } else {
            return imp_cli_usage_error("unexpected argument '%s' (one operation per run)", a);
        }
    }
    if (!op) return imp_cli_usage_error("missing operation");
    const imp_endpoint *ep = imp_endpoint_by_op(op);
    /* the routes on a stored world need a store that outlives one run: not verbs */
    if (!ep || strchr(ep->path, '{')) return imp_cli_usage_error("unknown operation '%s'", op);
    if (path && path[0] == '\0') return imp_cli_usage_error("empty path for --file");

    char *body = NULL;
    size_t len = 0;
    int rc = imp_cli_read_file(path, &body, &len);
    if (rc != CLI_EXIT_OK) return rc;

    imp_api_ctx ctx;
    imp_api_ctx_init(&ctx);
    /* `impact worlds` builds a world and prints its metadata (the store lives for this run) */
    ctx.worlds = imp_world_store_create(SIZE_MAX);
    imp_api_response resp;
    int status = ctx.worlds ? imp_api_handle(op, body, len, &ctx, &resp) : 500;
    if (!ctx.worlds) imp_api_problem(IMP_E_NOMEM, "out of memory", NULL, &resp);
    imp_world_store_destroy(ctx.worlds);
    free(body);
    int code = imp_cli_exit_for_status(status);
    if (imp_cli_print_json(stdout, resp.body, resp.len, pretty) != 0) {
        fprintf(stderr, "%s: cannot write the response to standard output\n", imp_cli_program);
        code = CLI_EXIT_INTERNAL;
    }
    imp_api_response_free(&resp);
    return code;
}

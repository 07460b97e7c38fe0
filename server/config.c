/*
 * config.c - loading and validating the daemon's settings.
 *
 * DESIGN
 * What: turns defaults, IMPACTD_* environment variables and --flags into
 * one checked imp_config.
 * How: a single table describes every setting (flag name, environment
 * variable, kind, default, range, field offset, help). Loading first
 * collects the raw text of each setting, taking the flag over the variable
 * over the default, then parses every raw text with the same code. Defaults
 * are written as text and parsed like user input, so a default outside its
 * own range is caught at the first start rather than shipped.
 * Why: one table keeps --help, the environment names, the README and the
 * checks from drifting apart, and adding a setting is one line plus a field.
 * A variable overridden by a flag is not parsed at all: the flag is the
 * operator's last word and a stale variable should not stop the daemon.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum setting_kind {
    KIND_INT,  /* long long in [min, max] */
    KIND_ADDR, /* numeric IPv4/IPv6 address, into a char[IMP_CONFIG_BIND_MAX] */
    KIND_LOG,  /* json | text | off */
    KIND_TEXT  /* any text shorter than IMP_CONFIG_TEXT_MAX, into a char[IMP_CONFIG_TEXT_MAX] */
} setting_kind;

typedef struct setting {
    const char *flag; /* without the leading "--" */
    const char *env;
    setting_kind kind;
    const char *dflt; /* as it would be written on the command line */
    long long min, max;
    size_t offset; /* of the field in imp_config */
    const char *help;
} setting;

/* Largest request body we agree to buffer (bytes); what all connections buffer at once is
 * bounded by --max-buffered-bytes. */
#define MAX_BODY_LIMIT (1LL << 30)
/* Largest budget for request bytes buffered at once (bytes): far past any machine we run on,
 * small enough that sums of a few such values cannot overflow a size_t. */
#define MAX_BUFFERED_LIMIT (1LL << 40)
/* Longest time budget (ms): a day; longer work is not a request. */
#define MAX_BUDGET_MS (86400LL * 1000)
/* Threads beyond this only add contention on a machine of our size. */
#define MAX_THREADS 1024

static const setting settings[] = {
    {"port", "IMPACTD_PORT", KIND_INT, "8080", 0, 65535, offsetof(imp_config, port),
     "TCP port to listen on; 0 picks a free port (the chosen one is printed)"},
    {"bind", "IMPACTD_BIND", KIND_ADDR, "0.0.0.0", 0, 0, offsetof(imp_config, bind),
     "numeric IPv4 or IPv6 address to listen on"},
    {"threads", "IMPACTD_THREADS", KIND_INT, "0", 0, MAX_THREADS, offsetof(imp_config, threads),
     "worker threads that decode, solve and encode; 0 means one per online core"},
    {"io-threads", "IMPACTD_IO_THREADS", KIND_INT, "0", 0, MAX_THREADS,
     offsetof(imp_config, io_threads),
     "connection threads that move bytes and answer small pair queries; 0 means one per online "
     "core"},
    {"max-body-bytes", "IMPACTD_MAX_BODY_BYTES", KIND_INT, "67108864", 1, MAX_BODY_LIMIT,
     offsetof(imp_config, max_body_bytes),
     "largest request body (64 MiB admits a 100,000-body scene); larger gets 413"},
    {"max-buffered-bytes", "IMPACTD_MAX_BUFFERED_BYTES", KIND_INT, "1073741824", 1,
     MAX_BUFFERED_LIMIT, offsetof(imp_config, max_buffered_bytes),
     "request body bytes buffered across all connections; beyond it 503 with Retry-After"},
    {"max-bodies", "IMPACTD_MAX_BODIES", KIND_INT, "1000000", 1, 100000000,
     offsetof(imp_config, max_bodies),
     "most bodies in one scene or world, items in one world query, queries in one /v1/ccd; more "
     "gets 422"},
    {"max-batch-items", "IMPACTD_MAX_BATCH_ITEMS", KIND_INT, "10000", 1, 10000000,
     offsetof(imp_config, max_batch_items), "most items in one /v1/batch; more gets 422"},
    {"max-events", "IMPACTD_MAX_EVENTS", KIND_INT, "1000000", 1, 1000000000,
     offsetof(imp_config, max_events), "most events one simulation processes (caps max_events)"},
    {"max-world-triangles", "IMPACTD_MAX_WORLD_TRIANGLES", KIND_INT, "10000000", 1, 2000000000,
     offsetof(imp_config, max_world_triangles),
     "most triangles in one world (meshes and heightfields together); more gets 422"},
    {"world-cache-bytes", "IMPACTD_WORLD_CACHE_BYTES", KIND_INT, "2147483648", 0,
     MAX_BUFFERED_LIMIT, offsetof(imp_config, world_cache_bytes),
     "memory the built worlds may hold; past it the least recently used are evicted"},
    {"world-store", "IMPACTD_WORLD_STORE", KIND_TEXT, "memory", 0, 0,
     offsetof(imp_config, world_store),
     "where worlds are kept: memory (this process), dir:/path (on disk), or "
     "redis://host:port[/db] (shared by every replica)"},
    {"world-write-token-file", "IMPACTD_WORLD_WRITE_TOKEN_FILE", KIND_TEXT, "", 0, 0,
     offsetof(imp_config, world_write_token_file),
     "file holding the bearer token that uploads and deletes of worlds need; empty: none"},
    {"queue-depth", "IMPACTD_QUEUE_DEPTH", KIND_INT, "1024", 1, 1 << 20,
     offsetof(imp_config, queue_depth), "requests waiting for a worker; beyond it 503"},
    {"idle-timeout-s", "IMPACTD_IDLE_TIMEOUT_S", KIND_INT, "30", 0, 86400,
     offsetof(imp_config, idle_timeout_s),
     "close a connection that has not sent complete request headers for this long; 0 never"},
    {"request-timeout-s", "IMPACTD_REQUEST_TIMEOUT_S", KIND_INT, "30", 1, 86400,
     offsetof(imp_config, request_timeout_s),
     "longest time to receive one request body, or to send one reply"},
    {"max-connections", "IMPACTD_MAX_CONNECTIONS", KIND_INT, "1000", 1, 1000000,
     offsetof(imp_config, max_connections), "simultaneous client connections"},
    {"drain-grace-s", "IMPACTD_DRAIN_GRACE_S", KIND_INT, "5", 0, 3600,
     offsetof(imp_config, drain_grace_s),
     "after SIGTERM, keep serving this long with /readyz at 503, then stop accepting"},
    {"drain-timeout-s", "IMPACTD_DRAIN_TIMEOUT_S", KIND_INT, "30", 0, 3600,
     offsetof(imp_config, drain_timeout_s),
     "then wait at most this long for requests in flight before exiting"},
    {"time-budget-ms", "IMPACTD_TIME_BUDGET_MS", KIND_INT, "10000", 1, MAX_BUDGET_MS,
     offsetof(imp_config, time_budget_ms),
     "a request's time budget unless it sends time_budget_ms; past it 503 (a simulation: 200, "
     "stopped time_budget)"},
    {"max-time-budget-ms", "IMPACTD_MAX_TIME_BUDGET_MS", KIND_INT, "60000", 1, MAX_BUDGET_MS,
     offsetof(imp_config, max_time_budget_ms), "the most a request's time_budget_ms may ask for"},
    {"inline-slice-us", "IMPACTD_INLINE_SLICE_US", KIND_INT, "1000", 0, 1000000,
     offsetof(imp_config, inline_slice_us),
     "a small pair query (/v1/toi and the like, up to 2 KiB) is answered by the connection thread "
     "that read it; past this many microseconds it goes to a worker; 0: every request does"},
    {"log", "IMPACTD_LOG", KIND_LOG, "json", 0, 0, offsetof(imp_config, log),
     "log format on stderr: json, text or off"},
};

#define N_SETTINGS (sizeof settings / sizeof settings[0])

typedef enum source { SRC_DEFAULT, SRC_ENV, SRC_FLAG } source;

/* Decimal integer, the whole string, no surrounding space. */
static int parse_int(const char *s, long long *out) {
    if (*s == '\0' || *s == ' ' || *s == '\t') return 0;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || *end != '\0') return 0;
    *out = v;
    return 1;
}

static const setting *find_flag(const char *name, size_t len) {
    for (size_t i = 0; i < N_SETTINGS; ++i) {
        if (strlen(settings[i].flag) == len && strncmp(settings[i].flag, name, len) == 0) {
            return &settings[i];
        }
    }
    return NULL;
}

/* Parses `text` (from `src`) into the field of `s` in cfg. */
static int apply(imp_config *cfg, const setting *s, const char *text, source src,
                 imp_config_error *err) {
    char label[64];
    if (src == SRC_FLAG)
        snprintf(label, sizeof label, "--%s", s->flag);
    else if (src == SRC_ENV)
        snprintf(label, sizeof label, "%s", s->env);
    else
        snprintf(label, sizeof label, "default of --%s", s->flag);
    char *field = (char *)cfg + s->offset;

    switch (s->kind) {
    case KIND_INT: {
        long long v;
        if (!parse_int(text, &v)) {
            IMP_SET_ERROR(err, "%s: \"%.64s\" is not an integer", label, text);
            return 0;
        }
        if (v < s->min || v > s->max) {
            IMP_SET_ERROR(err, "%s: %lld is out of range [%lld, %lld]", label, v, s->min, s->max);
            return 0;
        }
        memcpy(field, &v, sizeof v);
        return 1;
    }
    case KIND_ADDR: {
        unsigned char addr[16];
        if (strlen(text) >= IMP_CONFIG_BIND_MAX ||
            (inet_pton(AF_INET, text, addr) != 1 && inet_pton(AF_INET6, text, addr) != 1)) {
            IMP_SET_ERROR(err, "%s: \"%.64s\" is not a numeric IPv4 or IPv6 address", label, text);
            return 0;
        }
        memcpy(field, text, strlen(text) + 1);
        return 1;
    }
    case KIND_TEXT:
        if (strlen(text) >= IMP_CONFIG_TEXT_MAX) {
            IMP_SET_ERROR(err, "%s: longer than %d bytes", label, IMP_CONFIG_TEXT_MAX - 1);
            return 0;
        }
        memcpy(field, text, strlen(text) + 1);
        return 1;
    case KIND_LOG: {
        imp_log_format f;
        if (!imp_log_parse_format(text, &f)) {
            IMP_SET_ERROR(err, "%s: \"%.64s\" is not one of json, text, off", label, text);
            return 0;
        }
        memcpy(field, &f, sizeof f);
        return 1;
    }
    }
    return 0;
}

imp_config_status imp_config_load(imp_config *cfg, int argc, char *const argv[],
                                  imp_config_error *err) {
    const char *raw[N_SETTINGS];
    source src[N_SETTINGS];
    for (size_t i = 0; i < N_SETTINGS; ++i) {
        const char *env = getenv(settings[i].env);
        raw[i] = env ? env : settings[i].dflt;
        src[i] = env ? SRC_ENV : SRC_DEFAULT;
    }

    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) return IMP_CONFIG_HELP;
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            IMP_SET_ERROR(err, "unexpected argument \"%.64s\"", arg);
            return IMP_CONFIG_ERROR;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
        const setting *s = find_flag(name, name_len);
        if (!s) {
            IMP_SET_ERROR(err, "unknown flag \"--%.*s\"", (int)(name_len > 64 ? 64 : name_len),
                          name);
            return IMP_CONFIG_ERROR;
        }
        const char *value = eq ? eq + 1 : NULL;
        if (!value) {
            if (i + 1 >= argc) {
                IMP_SET_ERROR(err, "--%s needs a value", s->flag);
                return IMP_CONFIG_ERROR;
            }
            value = argv[++i];
        }
        size_t k = (size_t)(s - settings);
        raw[k] = value;
        src[k] = SRC_FLAG;
    }

    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < N_SETTINGS; ++i) {
        if (!apply(cfg, &settings[i], raw[i], src[i], err)) return IMP_CONFIG_ERROR;
    }

    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) cores = 1;
    if (cores > MAX_THREADS) cores = MAX_THREADS;
    if (cfg->threads == 0) cfg->threads = cores;
    if (cfg->io_threads == 0) {
        /* One per core: for small requests, reading, parsing and writing HTTP costs as
         * much as the solving, and an idle connection thread costs nothing (it sleeps
         * in poll). Measured with tests/bench/load.sh on 2 cores: 2 connection threads
         * serve 1.15-1.2x the requests/s of 1; 4 are no better than 2. */
        long n = cores;
        /* libmicrohttpd splits the connection limit across its threads. */
        cfg->io_threads = n < cfg->max_connections ? n : (long)cfg->max_connections;
    } else if (cfg->io_threads > cfg->max_connections) {
        IMP_SET_ERROR(err, "--io-threads (%lld) must not exceed --max-connections (%lld)",
                      cfg->io_threads, cfg->max_connections);
        return IMP_CONFIG_ERROR;
    }
    if (cfg->time_budget_ms > cfg->max_time_budget_ms) {
        IMP_SET_ERROR(err, "--time-budget-ms (%lld) must not exceed --max-time-budget-ms (%lld)",
                      cfg->time_budget_ms, cfg->max_time_budget_ms);
        return IMP_CONFIG_ERROR;
    }
    return IMP_CONFIG_OK;
}

void imp_config_usage(FILE *out, const char *program) {
    fprintf(out,
            "Usage: %s [--flag value | --flag=value]...\n"
            "Collision-prediction HTTP service. Flags override environment variables.\n\n",
            program);
    fprintf(out, "  %-24s %-26s %-10s %s\n", "flag", "environment", "default", "meaning");
    for (size_t i = 0; i < N_SETTINGS; ++i) {
        const setting *s = &settings[i];
        char flag[40];
        snprintf(flag, sizeof flag, "--%s", s->flag);
        fprintf(out, "  %-24s %-26s %-10s %s", flag, s->env, s->dflt, s->help);
        if (s->kind == KIND_INT) fprintf(out, " [%lld, %lld]", s->min, s->max);
        fputc('\n', out);
    }
    fprintf(out, "  %-24s %-26s %-10s %s\n", "--help", "", "", "print this text and exit");
}

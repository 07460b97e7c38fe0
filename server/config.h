/*
 * config.h - the daemon's configuration: one declarative table of settings,
 * each readable from an environment variable and a command-line flag.
 *
 * Precedence: built-in default < environment < flag. Every value is checked
 * (syntax and range) when loaded; nothing downstream re-validates.
 *
 * Thread-safety: imp_config_load reads the environment and must run before
 * any thread starts. A loaded imp_config is plain data, read-only afterwards.
 */
#ifndef IMP_SERVER_CONFIG_H
#define IMP_SERVER_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "log.h"

/* Longest accepted --bind value: an IPv6 literal is at most 45 characters. */
#define IMP_CONFIG_BIND_MAX 64
/* Longest accepted text setting (--world-store, --world-write-token-file), NUL included. */
#define IMP_CONFIG_TEXT_MAX 1024

typedef struct imp_config {
    long long port;                 /* 0 asks the kernel for a free port */
    char bind[IMP_CONFIG_BIND_MAX]; /* numeric IPv4 or IPv6 address */
    long long threads;            /* worker threads; resolved from 0 ("auto") to the online cores */
    long long io_threads;         /* connection (HTTP) threads; resolved from 0 ("auto") */
    long long max_body_bytes;     /* request bodies above this get 413 */
    long long max_buffered_bytes; /* body bytes buffered across connections; beyond: 503 */
    long long max_bodies;         /* bodies in one scene or world (422 beyond) */
    long long max_batch_items;    /* items in one /v1/batch (422 beyond) */
    long long max_events;         /* events one simulation may process */
    long long max_world_triangles; /* triangles in one world (422 beyond) */
    long long world_cache_bytes;   /* bytes the built worlds may hold (LRU eviction beyond) */
    char world_store[IMP_CONFIG_TEXT_MAX]; /* memory | dir:/path | redis://host:port[/db] */
    char world_write_token_file[IMP_CONFIG_TEXT_MAX]; /* "": writes need no token */
    long long queue_depth;                            /* requests waiting for a worker before 503 */
    long long
        idle_timeout_s; /* connections without a request in progress close after this; 0 = never */
    long long
        request_timeout_s;     /* receiving one request, or sending its reply, may take this long */
    long long max_connections; /* simultaneous connections the daemon accepts */
    long long drain_grace_s;   /* after SIGTERM: keep serving this long with /readyz at 503 */
    long long drain_timeout_s; /* then: wait at most this long for in-flight requests */
    long long time_budget_ms;  /* a request's budget unless it asks for its own */
    long long max_time_budget_ms; /* the most a request may ask for */
    long long inline_slice_us;    /* a small pair query's time on its connection thread before
                                     it goes to a worker; 0: every request goes to a worker */
    imp_log_format log;           /* access and error log format on stderr */
} imp_config;

typedef enum imp_config_status {
    IMP_CONFIG_OK = 0,
    IMP_CONFIG_HELP, /* --help was given: print usage, exit 0 */
    IMP_CONFIG_ERROR /* bad value or flag: err->message says which; exit 2 */
} imp_config_status;

typedef struct imp_config_error {
    char message[256]; /* e.g. "--port: 70000 is out of range [0, 65535]" */
} imp_config_error;

/*
 * Fills *cfg from the defaults, then the environment, then argv[1..argc-1]
 * ("--name value" or "--name=value"). Returns IMP_CONFIG_OK, IMP_CONFIG_HELP,
 * or IMP_CONFIG_ERROR with err->message set (err may be NULL). *cfg is
 * fully initialised only on IMP_CONFIG_OK.
 */
imp_config_status imp_config_load(imp_config *cfg, int argc, char *const argv[],
                                  imp_config_error *err);

/* Writes the usage text, generated from the settings table, to `out`. */
void imp_config_usage(FILE *out, const char *program);

#endif

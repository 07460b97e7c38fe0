/*
 * cli.h - what the `impact` tool's files share: the exit statuses, usage
 * errors, reading an input file, printing a JSON document, and the `world`
 * subcommands (cli_world.c). Part of build/impact only, never of impactd.
 */
#ifndef IMP_SERVER_CLI_H
#define IMP_SERVER_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "log.h" /* IMP_PRINTF_LIKE */

/* Exit statuses (see cli.c's DESIGN); part of the interface, like the output. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_PROBLEM = 1, CLI_EXIT_USAGE = 2, CLI_EXIT_INTERNAL = 3 };

/* "impact": the program name every message starts with. */
extern const char imp_cli_program[];

/* Reports a usage error on stderr ("impact: ..." and the --help hint);
 * returns CLI_EXIT_USAGE. */
int imp_cli_usage_error(const char *fmt, ...) IMP_PRINTF_LIKE(1, 2);

/* Reads `path` (NULL or "-": stdin) whole into *body (malloc'd,
 * NUL-terminated, *len without the NUL; the caller frees). Returns
 * CLI_EXIT_OK, or CLI_EXIT_USAGE after saying why (unreadable, > 1 GiB). */
int imp_cli_read_file(const char *path, char **body, size_t *len);

/* Writes a JSON document and a newline to `out`, re-indented by two with
 * 17 significant digits when `pretty`. Returns 0, or -1 when `out` could
 * not be written. */
int imp_cli_print_json(FILE *out, const char *text, size_t len, int pretty);

/* The exit status for an HTTP status: 0 for 2xx, 1 for 4xx, else 3. */
int imp_cli_exit_for_status(long status);

/* `impact world import|upload ...`: argv[0] is "world". Returns the exit status. */
int imp_cli_world(int argc, char **argv);

#endif

/*
 * openapi.c - api/openapi.yaml, built into the library.
 *
 * DESIGN
 * What: the contract's machine-readable description, served by the daemon
 * at GET /openapi.yaml.
 * How: IMP_EMBED_FILE (api/embed.h): the assembler's .incbin copies the
 * file's bytes into .rodata at build time (the Makefile makes this object
 * depend on the YAML), followed by a NUL.
 * Why: a service in a container must not depend on a data file at a path
 * relative to where it was started, and the document served must be the
 * one that was tested with this build.
 */
#include "api/api.h"
#include "api/embed.h"

IMP_EMBED_FILE(imp_api_openapi, "api/openapi.yaml")

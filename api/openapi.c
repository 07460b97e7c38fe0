/*
 * openapi.c - api/openapi.yaml, built into the library.
 *
 * DESIGN
 * What: the contract's machine-readable description, served by the daemon
 * at GET /openapi.yaml.
 * How: the assembler's .incbin copies the file's bytes into .rodata at
 * build time (the Makefile makes this object depend on the YAML), followed
 * by a NUL; the length is the distance between two labels.
 * Why: a service in a container must not depend on a data file at a path
 * relative to where it was started, and the document served must be the
 * one that was tested with this build.
 */
#include "api/api.h"

__asm__(".section .rodata\n"
        ".balign 16\n"
        ".globl imp_openapi_begin_\n"
        ".hidden imp_openapi_begin_\n"
        ".globl imp_openapi_end_\n"
        ".hidden imp_openapi_end_\n"
        "imp_openapi_begin_:\n"
        ".incbin \"api/openapi.yaml\"\n"
        "imp_openapi_end_:\n"
        ".byte 0\n"
        ".previous\n");

extern const char imp_openapi_begin_[], imp_openapi_end_[];

const char *imp_api_openapi(size_t *len) {
    *len = (size_t)(imp_openapi_end_ - imp_openapi_begin_);
    return imp_openapi_begin_;
}

/*
 * embed.h - a file's bytes built into the library at build time.
 *
 * IMP_EMBED_FILE(name, "path") at file scope defines
 *   const char *name(size_t *len)
 * returning the file's bytes (static, followed by a NUL) and their count. The
 * assembler's .incbin copies the file into .rodata; the length is the distance
 * between two labels. The Makefile makes the object depend on the file, which
 * the compiler's dependency files do not see. Used for api/openapi.yaml and
 * viewer/index.html: what is served is the file this build was tested with,
 * and no data file has to be found at run time.
 */
#ifndef IMP_API_EMBED_H
#define IMP_API_EMBED_H

#include <stddef.h>

#define IMP_EMBED_FILE(name, path)                                                                 \
    __asm__(".section .rodata\n"                                                                   \
            ".balign 16\n"                                                                         \
            ".globl " #name "_begin_\n"                                                            \
            ".hidden " #name "_begin_\n"                                                           \
            ".globl " #name "_end_\n"                                                              \
            ".hidden " #name "_end_\n" #name "_begin_:\n"                                          \
            ".incbin \"" path "\"\n" #name "_end_:\n"                                              \
            ".byte 0\n"                                                                            \
            ".previous\n");                                                                        \
    extern const char name##_begin_[], name##_end_[];                                              \
    const char *name(size_t *len) {                                                                \
        *len = (size_t)(name##_end_ - name##_begin_);                                              \
        return name##_begin_;                                                                      \
    }

#endif

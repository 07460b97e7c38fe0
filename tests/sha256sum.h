/*
 * sha256sum.h - the SHA-256 of some bytes as coreutils' sha256sum prints
 * it: a digest computed outside the daemon, to check world ids against.
 */
#ifndef IMP_TEST_SHA256SUM_H
#define IMP_TEST_SHA256SUM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 0 with out[] set to the 64 hex digits, or -1 when a temporary file or the tool failed. */
static inline int imp_test_sha256sum(const char *s, size_t len, char out[65]) {
    char path[] = "/tmp/imp_sha256_XXXXXX";
    int fd = mkstemp(path), rc = -1;
    if (fd < 0) return -1;
    if (write(fd, s, len) == (ssize_t)len) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "sha256sum %s", path);
        FILE *p = popen(cmd, "r");
        if (p) {
            rc = fscanf(p, "%64s", out) == 1 && strlen(out) == 64 ? 0 : -1;
            if (pclose(p) != 0) rc = -1;
        }
    }
    close(fd);
    unlink(path);
    return rc;
}

#endif

/*
 * ccd_data.h - the public CCD benchmark queries (../shared/data/ccd, see its
 * README) read into imp_ccd_query arrays with their ground truth, for
 * tests/unit/test_ccd.c and tests/bench/bench_ccd.c. Header-only (static
 * functions); the data stays outside the repository.
 *
 * Each coordinate is `num, den` in decimal, den a power of two (up to about
 * 2^113) and |num| < 2^53: strtod rounds both correctly, so both are exact,
 * and so is their quotient (a normal double).
 */
#ifndef IMP_TESTS_CCD_DATA_H
#define IMP_TESTS_CCD_DATA_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ccd.h"

typedef struct ccd_set {
    imp_ccd_query *q;
    unsigned char *truth;
    size_t n, cap;
    size_t files;
} ccd_set;

/* The data directory: $IMPACT_CCD_DATA, else ../shared/data/ccd from the repository root. */
static inline const char *ccd_data_dir(void) {
    const char *d = getenv("IMPACT_CCD_DATA");
    return d && *d ? d : "../shared/data/ccd";
}

/* Whether the data directory exists (a clone without ../shared has none: tests skip then). */
static inline int ccd_data_present(void) {
    DIR *d = opendir(ccd_data_dir());
    if (d) closedir(d);
    return d != NULL;
}

static inline void ccd_set_free(ccd_set *s) {
    free(s->q);
    free(s->truth);
    memset(s, 0, sizeof *s);
}

static inline int ccd_push(ccd_set *s, const imp_ccd_query *q, int truth) {
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        imp_ccd_query *nq = realloc(s->q, cap * sizeof *nq);
        if (!nq) return -1;
        s->q = nq;
        unsigned char *nt = realloc(s->truth, cap);
        if (!nt) return -1;
        s->truth = nt;
        s->cap = cap;
    }
    s->q[s->n] = *q;
    s->truth[s->n] = (unsigned char)truth;
    s->n++;
    return 0;
}

/* One coordinate from "num,den"; advances *p past the pair and its separator. */
static inline int ccd_coord(char **p, double *out) {
    char *end;
    double num = strtod(*p, &end);
    if (end == *p || *end != ',') return -1;
    *p = end + 1;
    double den = strtod(*p, &end);
    if (end == *p || den <= 0) return -1;
    *p = end;
    if (**p == ',') (*p)++;
    *out = num / den;
    return 0;
}

static int ccd_cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir (no dot files); *n set; NULL when it cannot be read. Free with
 * ccd_names_free. */
static inline char **ccd_names(const char *dir, size_t *n) {
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char **names = NULL;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) break;
            names = nn;
        }
        names[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    if (names) qsort(names, *n, sizeof *names, ccd_cmp_names);
    return names;
}

static inline void ccd_names_free(char **names, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* Truth booleans from a JSON array of true/false; returns the count or -1. */
static inline long ccd_truth_json(const char *path, unsigned char **out) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t cap = 1024, n = 0;
    unsigned char *t = malloc(cap);
    int c;
    while (t && (c = fgetc(f)) != EOF) {
        if (c != 't' && c != 'f') continue;
        if (n == cap) {
            unsigned char *nt = realloc(t, cap *= 2);
            if (!nt) {
                free(t);
                t = NULL;
                break;
            }
            t = nt;
        }
        t[n++] = c == 't';
    }
    fclose(f);
    if (!t) return -1;
    *out = t;
    return (long)n;
}

/* Queries of one CSV file (8 rows a query; a 7th column is the truth when `truth` is NULL). */
static inline int ccd_load_csv(ccd_set *s, const char *path, imp_ccd_kind kind,
                               const unsigned char *truth, long ntruth) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[512];
    int row = 0, t = 0, status = 0;
    long index = 0;
    imp_ccd_query q = {.kind = kind};
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        double *dst = row < 4 ? q.start[row] : q.end[row - 4];
        for (int i = 0; i < 3 && !status; i++)
            status = ccd_coord(&p, &dst[i]);
        if (status) break;
        if (!truth) t = (int)strtol(p, NULL, 10);
        if (++row == 8) {
            if (truth) {
                if (index >= ntruth) {
                    status = -1;
                    break;
                }
                t = truth[index];
            }
            if (ccd_push(s, &q, t)) {
                status = -1;
                break;
            }
            index++;
            row = 0;
        }
    }
    fclose(f);
    if (row != 0 || (truth && index != ntruth)) status = -1;
    s->files++;
    return status;
}

/* Every handcrafted query: <scene>/{vertex-face,edge-edge}/data_*.csv. */
static inline int ccd_load_handcrafted(ccd_set *s) {
    char dir[1024], path[2048];
    snprintf(dir, sizeof dir, "%s/handcrafted", ccd_data_dir());
    size_t ns;
    char **scenes = ccd_names(dir, &ns);
    if (!scenes) return -1;
    int status = 0;
    for (size_t i = 0; i < ns && !status; i++) {
        static const char *const KINDS[2] = {"vertex-face", "edge-edge"};
        for (int k = 0; k < 2 && !status; k++) {
            char sub[1536];
            snprintf(sub, sizeof sub, "%s/%s/%s", dir, scenes[i], KINDS[k]);
            size_t nf;
            char **files = ccd_names(sub, &nf);
            if (!files) continue; /* LICENSE */
            for (size_t j = 0; j < nf && !status; j++) {
                snprintf(path, sizeof path, "%s/%s", sub, files[j]);
                status =
                    ccd_load_csv(s, path, k ? IMP_CCD_EDGE_EDGE : IMP_CCD_VERTEX_FACE, NULL, 0);
            }
            ccd_names_free(files, nf);
        }
    }
    ccd_names_free(scenes, ns);
    return status;
}

/* Every scalable query: <scene>/queries/<step>{vf,ee}.csv with
 * <scene>/mma_bool/<step>{vf,ee}_mma_bool.json. */
static inline int ccd_load_scalable(ccd_set *s) {
    char dir[1024], path[2048], tpath[2048];
    snprintf(dir, sizeof dir, "%s/scalable", ccd_data_dir());
    size_t ns;
    char **scenes = ccd_names(dir, &ns);
    if (!scenes) return -1;
    int status = 0;
    for (size_t i = 0; i < ns && !status; i++) {
        char sub[1536];
        snprintf(sub, sizeof sub, "%s/%s/queries", dir, scenes[i]);
        size_t nf;
        char **files = ccd_names(sub, &nf);
        if (!files) continue;
        for (size_t j = 0; j < nf && !status; j++) {
            size_t len = strlen(files[j]);
            if (len < 6 || strcmp(files[j] + len - 4, ".csv") != 0) continue;
            imp_ccd_kind kind = files[j][len - 6] == 'v' ? IMP_CCD_VERTEX_FACE : IMP_CCD_EDGE_EDGE;
            snprintf(path, sizeof path, "%s/%s", sub, files[j]);
            snprintf(tpath, sizeof tpath, "%s/%s/mma_bool/%.*s_mma_bool.json", dir, scenes[i],
                     (int)(len - 4), files[j]);
            unsigned char *truth = NULL;
            long nt = ccd_truth_json(tpath, &truth);
            status = nt < 0 ? -1 : ccd_load_csv(s, path, kind, truth, nt);
            free(truth);
        }
        ccd_names_free(files, nf);
    }
    ccd_names_free(scenes, ns);
    return status;
}

#endif

/*
 * budget.h - a request's time budget, and the stop check that enforces it.
 *
 * Thread-safety: a budget belongs to one request. Its stop check may be
 * called from every thread of a parallel range at once (it only reads);
 * the budget is set (imp_budget_set) before the work it limits starts.
 */
#ifndef IMP_API_BUDGET_H
#define IMP_API_BUDGET_H

#include <time.h>

#include "api/api.h"
#include "core/parallel.h"

typedef struct imp_budget {
    struct timespec start; /* when the request's work began */
    double budget_ms;      /* in force; 0: none */
    double cap_ms;         /* the most a request may ask for */
    double deadline_s;     /* start + budget, CLOCK_MONOTONIC seconds (INFINITY: none) */
    imp_stop outer;        /* the caller's own stop check (client gone, shutdown) */
} imp_budget;

/* Starts a budget now: `budget_ms` unless the request asks for another (0: none), at most
 * `cap_ms`, inside the caller's stop check `outer` (may be {NULL, NULL}). */
void imp_budget_start(imp_budget *b, double budget_ms, double cap_ms, imp_stop outer);

/* The request's own "time_budget_ms" (> 0): it replaces the default, clipped to the cap. */
void imp_budget_set(imp_budget *b, double ms);

/* The stop check (core/parallel.h) of budget `cls`: the outer check's reason, else
 * IMP_STOP_TIME_BUDGET once the deadline has passed, else 0. One clock read. */
int imp_budget_check(void *cls);

/* Milliseconds since the budget started. */
double imp_budget_elapsed_ms(const imp_budget *b);

#endif

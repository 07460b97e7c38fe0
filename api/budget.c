/*
 * budget.c - time budgets (see budget.h).
 *
 * DESIGN
 * What: the deadline of one request, and the stop check that core's long
 * loops poll (core/parallel.h: every IMP_STOP_POLL_PAIRS narrowphase pairs
 * or IMP_STOP_POLL_EVENTS simulation queue entries).
 * How: the deadline is a CLOCK_MONOTONIC time in seconds; the check reads
 * the clock once (a vDSO call, tens of nanoseconds) and asks the caller's
 * own check first, so a client that left or a shutdown wins over the
 * budget. Core has no clock: this is where time enters.
 * Why here: the request member "time_budget_ms" is decoded by api/, and the
 * reply to a stop (503 time-budget-exceeded, or a simulation's
 * stopped: "time_budget") is written by the endpoints.
 */
#include "api/budget.h"

#include <math.h>

static double mono_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void arm(imp_budget *b) {
    double start = (double)b->start.tv_sec + (double)b->start.tv_nsec * 1e-9;
    b->deadline_s = b->budget_ms > 0 ? start + b->budget_ms * 1e-3 : INFINITY;
}

void imp_budget_start(imp_budget *b, double budget_ms, double cap_ms, imp_stop outer) {
    clock_gettime(CLOCK_MONOTONIC, &b->start);
    b->cap_ms = cap_ms;
    b->budget_ms = cap_ms > 0 && budget_ms > cap_ms ? cap_ms : budget_ms;
    b->outer = outer;
    arm(b);
}

void imp_budget_set(imp_budget *b, double ms) {
    b->budget_ms = b->cap_ms > 0 && ms > b->cap_ms ? b->cap_ms : ms;
    arm(b);
}

int imp_budget_check(void *cls) {
    const imp_budget *b = cls;
    int why = imp_stop_now(&b->outer);
    if (why) return why;
    return mono_s() > b->deadline_s ? IMP_STOP_TIME_BUDGET : IMP_STOP_NONE;
}

double imp_budget_elapsed_ms(const imp_budget *b) {
    double start = (double)b->start.tv_sec + (double)b->start.tv_nsec * 1e-9;
    return (mono_s() - start) * 1e3;
}

/*
 * countdown.h - the tests' stop check (core/parallel.h imp_stop) that says
 * stop, with reason 7, from its k-th call on, and counts its calls.
 */
#ifndef IMP_TEST_COUNTDOWN_H
#define IMP_TEST_COUNTDOWN_H

typedef struct countdown {
    int calls, k;
} countdown;

static inline int stop_after(void *cls) {
    countdown *c = cls;
    return ++c->calls >= c->k ? 7 : 0;
}

#endif

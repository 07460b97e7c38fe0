/*
 * alloc.h - how the process's allocator keeps memory between requests.
 *
 * Thread-safety: call once at start, before any other thread exists.
 */
#ifndef IMP_SERVER_ALLOC_H
#define IMP_SERVER_ALLOC_H

/* Keeps freed memory in the allocator's heaps for the next request instead of returning it
 * to the kernel (server/alloc.c). The daemon calls it at start; so do the benchmarks that
 * measure what its workers run. */
void imp_alloc_keep(void);

#endif

/*
 * alloc.c - how the process's allocator keeps memory between requests.
 *
 * DESIGN
 * What: imp_alloc_keep, called once by the daemon at start.
 * How: glibc's malloc serves a block above M_MMAP_THRESHOLD (128 KiB at first, rising
 * with the blocks freed to at most 32 MiB) with a fresh mmap that free returns to the
 * kernel, and trims a heap's free top above M_TRIM_THRESHOLD (128 KiB). A scene's arrays
 * (swept bounds, grid cells, candidate pairs, contacts) are megabytes each, so a request
 * paid a page fault for every 4 KiB page it touched, every time: on the 2-core virtual
 * build machine the faults were half of the solve of 100,000 3D spheres (58 against 122 ms
 * with and without, a throwaway loop of imp_scene_predict on 2 workers). Both thresholds
 * go to ALLOC_KEEP_BYTES: blocks up to that size come from the heaps, and up to that much
 * free memory stays in each heap for the next request. Larger blocks (a million-body
 * scene's) are mapped and unmapped as before.
 * Why: a service runs the same requests again and again; keeping what the last one used
 * is what allocators built for servers do (jemalloc's and tcmalloc's caches). The cost is
 * resident memory: after a peak each arena (glibc keeps one per thread that allocates,
 * up to eight per core) may hold up to ALLOC_KEEP_BYTES it does not use.
 */
#include "alloc.h"

#include <malloc.h>

/* The largest block served from the heaps, and the most free memory a heap keeps. */
#define ALLOC_KEEP_BYTES (64 << 20)

void imp_alloc_keep(void) {
    (void)mallopt(M_MMAP_THRESHOLD, ALLOC_KEEP_BYTES);
    (void)mallopt(M_TRIM_THRESHOLD, ALLOC_KEEP_BYTES);
}

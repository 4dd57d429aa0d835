/* mergesort.c: the merge sort of mergesort.h and its call tree without the work, built
 * once per MERGESORT_SUFFIX (see there). The recursive functions are noinline, as a
 * user's instrumented function would be. */
#include "mergesort.h"

#include <string.h>

#include <vor/vor.h>

static void insertion(uint32_t *a, uint32_t n) {
    for (uint32_t i = 1; i < n; i++) {
        uint32_t v = a[i], j = i;
        while (j > 0 && a[j - 1] > v) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

static __attribute__((noinline)) uint64_t sort(uint32_t *a, uint32_t *tmp, uint32_t n) {
    VOR_FUNCTION();
    if (n <= MERGESORT_LEAF) {
        insertion(a, n);
        return 1;
    }
    uint32_t h = n / 2;
    uint64_t calls = 1 + sort(a, tmp, h) + sort(a + h, tmp + h, n - h);
    uint32_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = a[j] < a[i] ? a[j++] : a[i++];
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
    return calls;
}

static __attribute__((noinline)) uint64_t tree(uint32_t n) {
    VOR_FUNCTION();
    if (n <= MERGESORT_LEAF) return 1;
    return 1 + tree(n / 2) + tree(n - n / 2);
}

#define PASTE2(a, b) a##_##b
#define PASTE(a, b) PASTE2(a, b)

uint64_t PASTE(mergesort, MERGESORT_SUFFIX)(uint32_t *a, uint32_t *tmp, uint32_t n) {
    return sort(a, tmp, n);
}

uint64_t PASTE(calltree, MERGESORT_SUFFIX)(uint32_t n) {
    return tree(n);
}

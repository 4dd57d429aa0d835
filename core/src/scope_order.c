/* scope_order.c: end order to begin order (see scope_order.h). */
#include "scope_order.h"

uint32_t vor_scope_preorder(const vor_reader_scope *scopes, uint32_t n, uint32_t *next, vor_scope_subtree *stack) {
    uint32_t top = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t depth = scopes[i].depth;
        uint32_t first = top;
        while (first > 0 && stack[first - 1].depth > depth) first--;
        uint32_t tail = i;
        for (uint32_t k = first; k < top; k++) {
            next[tail] = stack[k].head;
            tail = stack[k].tail;
        }
        next[tail] = VOR_SCOPE_ORDER_END;
        stack[first].head = i;
        stack[first].tail = tail;
        stack[first].depth = depth;
        top = first + 1;
    }
    if (top == 0) return VOR_SCOPE_ORDER_END;
    for (uint32_t k = 0; k + 1 < top; k++) next[stack[k].tail] = stack[k + 1].head;
    return stack[0].head;
}

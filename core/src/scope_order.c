/* scope_order.c: the parent rule, and end order to begin order (see scope_order.h). */
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

uint32_t vor_scopes_link_parents(vor_reader_scope *scopes, uint32_t n_ended, uint32_t n_open, uint32_t *last_at,
                                 uint32_t max_depth) {
    const uint32_t invalid = VOR_PARENT_UNKNOWN;
    uint32_t unknown = 0;
    for (uint32_t k = 0; k < n_open; k++) {
        vor_reader_scope *s = &scopes[n_ended + k];
        s->parent = k == 0 ? VOR_PARENT_NONE : n_ended + k - 1;
    }
    /* last_at[j] for j < valid: the nearest later ended scope at depth j with no shallower
     * scope ended after it (so far in this backward pass); invalid when there is none. */
    uint32_t valid = 0;
    for (uint32_t i = n_ended; i-- > 0;) {
        vor_reader_scope *s = &scopes[i];
        uint32_t d = s->depth;
        if (d == 0) {
            s->parent = VOR_PARENT_NONE;
        } else if (d - 1 < valid && last_at[d - 1] != invalid) {
            s->parent = last_at[d - 1];
        } else if (d - 1 < n_open) {
            s->parent = n_ended + (d - 1);
        } else {
            s->parent = VOR_PARENT_UNKNOWN;
            unknown++;
        }
        if (d >= max_depth) {
            /* Too deep to track: its children cannot find it. */
            if (s->parent != VOR_PARENT_UNKNOWN) {
                s->parent = VOR_PARENT_UNKNOWN;
                unknown++;
            }
            continue;
        }
        while (valid < d) last_at[valid++] = invalid;
        last_at[d] = i;
        valid = d + 1;
    }
    return unknown;
}

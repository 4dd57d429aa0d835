/* scope_order.h: a thread's scopes from end order (how frame records and captures list
 * them: each scope after its children) to begin order (each scope before its children),
 * for writers that need parents first: Chrome trace X events (viewers nest a child that
 * starts at its parent's very nanosecond only if the parent comes first) and flame graph
 * builders that take scopes as they open. Used by the VOR_TRACE writer and the vor command.
 */
#ifndef VOR_SCOPE_ORDER_H
#define VOR_SCOPE_ORDER_H

#include <stdint.h>

#include "vor/reader.h"

#define VOR_SCOPE_ORDER_END UINT32_MAX

/* A finished subtree not yet claimed by a parent: a linked run head .. tail in pre-order. */
typedef struct vor_scope_subtree {
    uint32_t head, tail, depth;
} vor_scope_subtree;

/* Links scopes[0..n) (one thread, end order) into pre-order through next[]; returns the
 * first index, VOR_SCOPE_ORDER_END when n is 0; next[last] is VOR_SCOPE_ORDER_END.
 * `next` and `stack` hold n entries each. One linear pass, no allocation: a scope at depth
 * d claims the subtrees on top of the stack that are deeper than d as its children, in
 * order, and becomes one subtree itself. Scopes whose parent is not in the list (it ends
 * later, or was dropped) come out as top-level runs in their place. */
uint32_t vor_scope_preorder(const vor_reader_scope *scopes, uint32_t n, uint32_t *next, vor_scope_subtree *stack);

#endif

/* scope_order.h: the parent rule of docs/FORMAT.md §4.5, and a thread's scopes from end order (how frame records and
 * captures list them: each scope after its children) to begin order (each scope before its children), for writers that
 * need parents first: Chrome trace X events (viewers nest a child that starts at its parent's very nanosecond only if
 * the parent comes first) and flame graph builders that take scopes as they open. Used by the VOR_TRACE writer and the
 * vor command.
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

/* The parent rule (docs/FORMAT.md §4.5), the one implementation every reader and the live
 * frame assembly use. `scopes` holds one thread's n_ended scopes in end order followed by
 * its n_open open ones (outermost first, depth = position). Sets every `parent`:
 *   - ended scope at depth d > 0: the first later ended scope at depth d - 1, provided no
 *     shallower scope ended between them; else the open scope at depth d - 1 if there is
 *     one; else VOR_PARENT_UNKNOWN (only in captures whose writer did not list open scopes);
 *   - open scope k > 0: open scope k - 1; depth 0 (ended or open): VOR_PARENT_NONE.
 * `last_at` is scratch of `max_depth` entries; a scope deeper than that gets
 * VOR_PARENT_UNKNOWN. One pass from the last scope back, no allocation. Returns the number
 * of scopes whose parent is unknown. */
uint32_t vor_scopes_link_parents(vor_reader_scope *scopes, uint32_t n_ended, uint32_t n_open, uint32_t *last_at,
                                 uint32_t max_depth);

#endif

/* scope_order.c: a thread's scopes from end order (how captures store them: each scope
 * after its children) to begin order (each scope before its children), for writers that
 * need parents first: Chrome trace X events (viewers nest a child that starts at its
 * parent's very nanosecond only if the parent comes first) and flame graph builders that
 * take scopes as they open.
 *
 * One linear pass with a stack of finished subtrees, each a linked run (head .. tail) in
 * pre-order: a scope at depth d claims the subtrees on top of the stack that are deeper
 * than d as its children, in order, and becomes one subtree itself. The same pass as the
 * live Chrome trace writer's (core/src/chrome_trace.c), over the reader's scope type.
 */
#include "cli.h"

uint32_t scope_preorder(const vor_reader_scope *scopes, uint32_t n, uint32_t *next, scope_order_entry *stack) {
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
        next[tail] = SCOPE_ORDER_END;
        stack[first].head = i;
        stack[first].tail = tail;
        stack[first].depth = depth;
        top = first + 1;
    }
    if (top == 0) return SCOPE_ORDER_END;
    for (uint32_t k = 0; k + 1 < top; k++) next[stack[k].tail] = stack[k + 1].head;
    return stack[0].head;
}

/* names_code.c: compiled with -O2 -g -finstrument-functions into test_names, which is
 * linked without -rdynamic: none of these functions is in the dynamic symbol table, so
 * only the program's .symtab and DWARF can name them. Each NAMES_LINE_* is the line of
 * the function's declarator (where DWARF puts its entry), defined just above it. */
#include "names_code.h"

#define NOINLINE __attribute__((noinline))

enum { LINE_STATIC = __LINE__ + 1 };
static NOINLINE int static_leaf(int x) {
    return x * 3 + 1;
}

enum { LINE_HIDDEN = __LINE__ + 1 };
__attribute__((visibility("hidden"))) NOINLINE int hidden_function(int x) {
    return static_leaf(x) ^ 0x55;
}

/* Inlined into names_entry, and also outlined (called through a pointer): both copies
 * report the outlined copy's address to the hooks, so they are one function site. */
enum { LINE_INLINED = __LINE__ + 1 };
static inline int inlined_and_outlined(int x) {
    return x * x - 1;
}

static int (*volatile through_pointer)(int) = inlined_and_outlined;

enum { LINE_ENTRY = __LINE__ + 1 };
int names_entry(int x) {
    return hidden_function(x) + inlined_and_outlined(x) + through_pointer(x + 1);
}

const names_expected names_code_functions[NAMES_CODE_FUNCTIONS] = {
    {"static_leaf", LINE_STATIC, 1, (const void *)static_leaf},
    {"hidden_function", LINE_HIDDEN, 1, (const void *)hidden_function},
    {"inlined_and_outlined", LINE_INLINED, 2, (const void *)inlined_and_outlined},
    {"names_entry", LINE_ENTRY, 1, (const void *)names_entry},
};

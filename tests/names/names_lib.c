/* names_lib.c: a shared object loaded with dlopen by test_names, compiled with -O2 -g
 * -finstrument-functions and linked with a fixed build id (see CMakeLists.txt). Each
 * LINE_* is the line of the function's declarator, defined just above it. */
#include "names_code.h"

static const names_expected functions[NAMES_LIB_FUNCTIONS];

enum { LINE_STATIC = __LINE__ + 1 };
static __attribute__((noinline)) int names_lib_static(int x) {
    return x + 42;
}

enum { LINE_ENTRY = __LINE__ + 1 };
int names_lib_entry(int x, const names_expected **expected) {
    *expected = functions;
    return names_lib_static(x) * 2;
}

static const names_expected functions[NAMES_LIB_FUNCTIONS] = {
    {"names_lib_static", LINE_STATIC, 1, (const void *)names_lib_static},
    {"names_lib_entry", LINE_ENTRY, 1, (const void *)names_lib_entry},
};

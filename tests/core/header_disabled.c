/* header_disabled.c: with VOR_DISABLE the macros compile to nothing. */
#define VOR_DISABLE 1
#include <vor/vor.h>

int header_disabled_work(void);
int header_disabled_work(void) {
    VOR_FUNCTION();
    VOR_SCOPE("never recorded");
    return vor_is_enabled(); /* the functions stay available */
}

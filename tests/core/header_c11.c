/* header_c11.c: vor.h compiled as strict C11, plus the explicit begin/end form. */
#include <vor/vor.h>

int header_c11_work(void);
int header_c11_work(void) {
    static vor_site site = VOR_SITE_INIT("c11 explicit");
    int began = vor_scope_begin(&site);
    if (began) vor_scope_end();
    VOR_SCOPE("c11 scope");
    VOR_SCOPE("c11 second scope on one line"); VOR_SCOPE("c11 third");
    return began;
}

/* header_c99.c: vor.h compiled as strict C99 (see CMakeLists.txt). */
#include <vor/vor.h>

int header_c99_work(int n);
int header_c99_work(int n) {
    VOR_FUNCTION();
    int sum = 0;
    for (int i = 0; i < n; i++) {
        VOR_SCOPE("c99 loop");
        sum += i;
    }
    return sum;
}

/* app.c: a program outside the vor tree (README's `app.c`), built against vor's wasm flavour
 * by the README's own emcc lines, its installed package and a CMake subproject
 * (tests/wasm/setup.test.mjs). Three frames of two nested scopes; prints what vor counted. */
#include <stdio.h>

#include <vor/vor.h>

int main(void) {
    vor_enable();
    for (int frame = 0; frame < 3; frame++) {
        VOR_SCOPE("frame body");
        {
            VOR_SCOPE("inner");
        }
    }
    vor_frame_mark();
    vor_frame_mark();
    vor_frame_mark();
    vor_counters c;
    vor_get_counters(&c);
    vor_shutdown();
    printf("app: %llu frames, %llu scopes\n", (unsigned long long)c.frames, (unsigned long long)c.scopes_recorded);
    return c.frames == 3 && c.scopes_recorded == 6 ? 0 : 1;
}

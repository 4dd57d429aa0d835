/* main.c: records one frame through an installed vor and checks it arrived. */
#include <stdio.h>
#include <vor/vor.h>

int main(void) {
    vor_enable();
    {
        VOR_SCOPE("installed");
    }
    vor_frame_mark();
    vor_counters c;
    vor_get_counters(&c);
    vor_shutdown();
    if (c.frames != 1 || c.scopes_recorded != 1) {
        fprintf(stderr, "consumer: expected 1 frame and 1 scope, got %llu and %llu\n",
                (unsigned long long)c.frames, (unsigned long long)c.scopes_recorded);
        return 1;
    }
    printf("consumer: vor %s works\n", vor_version_string());
    return 0;
}

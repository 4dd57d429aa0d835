/* process_name_workload.c: a tiny program built with Emscripten for node, recording with
 * whatever VOR_RECORD and VOR_TRACE say; test_process_name.c reads the name its outputs
 * give the process. */
#include <vor/vor.h>

int main(void) {
    vor_enable();
    for (int i = 0; i < 2; i++) {
        VOR_SCOPE("step");
        vor_frame_mark();
    }
    vor_shutdown();
    return 0;
}

/* deterministic_workload.c: the same scopes, nesting and metric values on every run and
 * every platform (only durations differ), built natively and to wasm so the test can
 * require the two captures to agree. Records with VOR_RECORD / VOR_RECORD_FLAME. */
#include <stdio.h>

#include <vor/vor.h>

static volatile double sink;

static void leaf(int n) {
    VOR_FUNCTION();
    double acc = 0;
    for (int i = 0; i < n * 100; i++) acc += i * 0.5;
    sink = acc;
}

static void branch(int frame) {
    VOR_SCOPE("branch");
    for (int i = 0; i <= frame % 3; i++) leaf(i + 1);
    if (frame % 4 == 0) {
        VOR_SCOPE("rare");
        leaf(2);
    }
}

int main(void) {
    vor_set_thread_name("main");
    vor_record_metric_unit("score", "points");
    vor_enable();
    for (int frame = 0; frame < 40; frame++) {
        {
            VOR_SCOPE("frame body");
            branch(frame);
            branch(frame + 1);
        }
        vor_record_metric("score", frame * 1.25);
        if (frame >= 20) vor_record_metric("late", 1.0 / (frame + 1));
        vor_frame_mark();
    }
    vor_shutdown();
    printf("deterministic_workload: 40 frames\n");
    return 0;
}

/* long_names_workload.c: a native program whose capture holds two edge cases for the
 * panel's capture decoder (decoder_edges.test.mjs, run by check_decoder_on_capture.sh):
 *   - a scope site named with 300 bytes of two-byte characters (150 x "é"), past
 *     VOR_MAX_NAME_BYTES: the capture must keep it cut at a character boundary (127 "é",
 *     254 bytes), as every other output cuts it;
 *   - thread ids past the sizes of tables keyed by them (a thread takes the next id at its
 *     first scope): the main thread is thread 0, 1023 short threads ("churn") take ids
 *     1..1023 and end, then a long-lived thread
 *     ("late", id 1024) records a scope in each of the last frames next to the main
 *     thread's, so the two share every frame while their ids are equal modulo 1024.
 * Records with VOR_RECORD (and VOR_RECORD_FLAME=1, VOR_RECORD_EVERY=1 for the scopes).
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include <vor/vor.h>

#define CHURNED 1023
#define LATE_FRAMES 12

/* 150 x "é": 300 bytes. */
#define E10 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
#define LONG_NAME E10 E10 E10 E10 E10 E10 E10 E10 E10 E10 E10 E10 E10 E10 E10

static int asked; /* atomic: frames the late thread was asked to record */
static int done;  /* atomic: frames it recorded */

/* The one site with the long name. */
static void long_named(void) {
    VOR_SCOPE(LONG_NAME);
}

static void *churn(void *arg) {
    (void)arg;
    vor_set_thread_name("churn");
    VOR_SCOPE("churn"); /* takes the next thread id */
    return NULL;
}

static void *late(void *arg) {
    (void)arg;
    vor_set_thread_name("late");
    for (int frame = 1; frame <= LATE_FRAMES; frame++) {
        while (__atomic_load_n(&asked, __ATOMIC_ACQUIRE) < frame) sched_yield();
        {
            VOR_SCOPE("late_work");
        }
        __atomic_store_n(&done, frame, __ATOMIC_RELEASE);
    }
    return NULL;
}

int main(void) {
    vor_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.thread_buffer_scopes = 1024; /* many threads, few scopes each */
    vor_setup(&desc);
    vor_set_thread_name("main");
    vor_enable();
    long_named(); /* the main thread takes id 0 */
    vor_frame_mark();
    for (int i = 0; i < CHURNED; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, churn, NULL) != 0) return 1;
        pthread_join(t, NULL);
        if (i % 32 == 31) { /* a frame now and then collects the ended threads' buffers */
            long_named();
            vor_frame_mark();
        }
    }
    pthread_t t;
    if (pthread_create(&t, NULL, late, NULL) != 0) return 1;
    for (int frame = 1; frame <= LATE_FRAMES; frame++) {
        {
            VOR_SCOPE("main_work");
        }
        __atomic_store_n(&asked, frame, __ATOMIC_RELEASE);
        while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < frame) sched_yield();
        vor_frame_mark();
    }
    pthread_join(t, NULL);
    vor_shutdown();
    return 0;
}

/* devtools_scenes.c: a deterministic program for the DevTools sink test
 * (devtools.test.mjs). The page (fixtures/devtools.html) drives it one frame at a time;
 * every frame has the same scopes, with busy-waits of known length so that the
 * durations are known lower bounds and the minimum-duration filter has a clear cut:
 *
 *   main thread ("main"):
 *     update                      everything below, about 1.4 ms
 *       physics        >= 400 us
 *         collide      >= 300 us
 *       render         >= 200 us
 *         draw_batch   >= 150 us  (one site, three scopes)
 *       tiny           no wait: far below the test's 100 us threshold
 *   worker thread ("loader"; only in the pthreads build, SCENES_WORKER=1):
 *     load_chunk       >= 300 us
 *       decode         >= 200 us
 *
 * Built three ways (CMakeLists.txt): for the page (web), for the page with a pthread
 * (web, worker), and for node (where the sink must default to off). Exports are
 * EMSCRIPTEN_KEEPALIVE functions, so the link needs no EXPORTED_FUNCTIONS list beyond
 * the runtime. A logger keeps what vor reports, for the test to read.
 */
#include <emscripten.h>
#include <stdio.h>
#include <string.h>

#include <vor/browser.h>
#include <vor/vor.h>

#if defined(SCENES_WORKER)
#include <emscripten/threading.h>
#include <math.h>
#include <pthread.h>
#endif

#define LOG_BYTES 4096

static char log_text[LOG_BYTES];
static size_t log_length;

static void keep_log(void *user_data, vor_log_level level, vor_log_item item, const char *message) {
    (void)user_data;
    (void)level;
    (void)item;
    int n = snprintf(log_text + log_length, LOG_BYTES - log_length, "%s\n", message);
    if (n > 0) log_length += (size_t)n;
    if (log_length >= LOG_BYTES) log_length = LOG_BYTES - 1; /* full: later messages are cut */
    fprintf(stderr, "vor: %s\n", message);
}

static void spin_us(double us) {
    double end = emscripten_get_now() + us / 1000.0;
    while (emscripten_get_now() < end) {
    }
}

#if defined(SCENES_WORKER)
static int work_requested; /* atomic: frames asked of the worker */
static int work_done;      /* atomic: frames it finished */

static void *loader(void *arg) {
    (void)arg;
    vor_set_thread_name("loader");
    for (int frame = 1;; frame++) {
        int seen;
        while ((seen = __atomic_load_n(&work_requested, __ATOMIC_ACQUIRE)) < frame)
            emscripten_futex_wait(&work_requested, (uint32_t)seen, INFINITY); /* sleeps, no spinning */
        {
            VOR_SCOPE("load_chunk");
            spin_us(300);
            {
                VOR_SCOPE("decode");
                spin_us(200);
            }
        }
        __atomic_store_n(&work_done, frame, __ATOMIC_RELEASE);
    }
    return NULL;
}
#endif

/* Starts the session; returns 1 when the sink's mode is readable. */
EMSCRIPTEN_KEEPALIVE int scenes_start(void) {
    vor_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.logger.func = keep_log;
    vor_setup(&desc);
    vor_set_thread_name("main");
#if defined(SCENES_WORKER)
    pthread_t thread;
    if (pthread_create(&thread, NULL, loader, NULL) != 0) return 0;
    pthread_detach(thread);
#endif
    vor_enable();
    return 1;
}

/* One frame of the scenes above, then vor_frame_mark(). */
EMSCRIPTEN_KEEPALIVE void scenes_frame(int k) {
#if defined(SCENES_WORKER)
    int ticket;
#endif
    {
        VOR_SCOPE("update");
#if defined(SCENES_WORKER)
        /* Asked inside update: the worker's scopes cannot really begin before update. */
        ticket = __atomic_add_fetch(&work_requested, 1, __ATOMIC_ACQ_REL);
        emscripten_futex_wake(&work_requested, 1);
#endif
        {
            VOR_SCOPE("physics");
            spin_us(400);
            {
                VOR_SCOPE("collide");
                spin_us(300);
            }
        }
        {
            VOR_SCOPE("render");
            spin_us(200);
            for (int i = 0; i < 3; i++) {
                VOR_SCOPE("draw_batch");
                spin_us(150);
            }
        }
        {
            VOR_SCOPE("tiny");
        }
    }
#if defined(SCENES_WORKER)
    while (__atomic_load_n(&work_done, __ATOMIC_ACQUIRE) < ticket) {
    }
#endif
    vor_record_metric("loss", 1.0 / (k + 1));
    vor_record_metric_unit("tokens", "tokens/s");
    vor_record_metric("tokens", 1000.0 * k);
    vor_frame_mark();
}

EMSCRIPTEN_KEEPALIVE void scenes_set_mode(int mode) {
    vor_browser_set_mode((vor_browser_mode)mode);
}

EMSCRIPTEN_KEEPALIVE int scenes_get_mode(void) {
    return (int)vor_browser_get_mode();
}

EMSCRIPTEN_KEEPALIVE void scenes_set_min_duration_us(double us) {
    vor_browser_set_min_duration_ns((uint64_t)(us * 1000.0));
}

EMSCRIPTEN_KEEPALIVE double scenes_get_min_duration_us(void) {
    return (double)vor_browser_get_min_duration_ns() / 1000.0;
}

EMSCRIPTEN_KEEPALIVE void scenes_set_track_group(const char *group) {
    vor_browser_set_track_group(group);
}

/* The track group in effect (a static copy). */
EMSCRIPTEN_KEEPALIVE const char *scenes_get_track_group(void) {
    static char group[VOR_BROWSER_TRACK_GROUP_MAX_BYTES + 1];
    vor_browser_get_track_group(group, sizeof group);
    return group;
}

/* The names of every metric column, comma-separated (a static copy). */
EMSCRIPTEN_KEEPALIVE const char *scenes_columns(void) {
    static char text[2048];
    size_t n = 0;
    text[0] = '\0';
    for (uint32_t id = 0; id < vor_column_count(); id++) {
        vor_column_info info;
        if (!vor_column_get(id, &info)) continue;
        int w = snprintf(text + n, sizeof text - n, "%s%s", n ? "," : "", info.name);
        if (w < 0 || (size_t)w >= sizeof text - n) break;
        n += (size_t)w;
    }
    return text;
}

/* Everything vor reported so far, one message a line. */
EMSCRIPTEN_KEEPALIVE const char *scenes_log(void) {
    return log_text;
}

/* How many times a sink failure was counted (VOR_LOG_CONSUMER_FAILED). */
EMSCRIPTEN_KEEPALIVE double scenes_failures(void) {
    return (double)vor_log_count(VOR_LOG_CONSUMER_FAILED);
}

EMSCRIPTEN_KEEPALIVE double scenes_frames(void) {
    vor_counters c;
    vor_get_counters(&c);
    return (double)c.frames;
}

int main(void) {
    return 0;
}

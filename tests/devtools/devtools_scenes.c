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
 * Besides: frames of many zero-length scopes (scenes_burst_frame: every one must reach the
 * DevTools tracks, one clock step wide), frames of thousands of scopes (scenes_heavy_frame:
 * the entry budget keeps Chrome's trace buffer from overflowing), a frame whose one scope has a site name of 300 bytes (150 x "é", past
 * VOR_MAX_NAME_BYTES: every output must cut it to the same 127 characters), and the
 * in-page panel bridge (scenes_panel_poll, as wasm/site/example.html polls it). The
 * pthreads build can also run the frames in a worker ("framer": the frame thread is then
 * a pthread, as with -sPROXY_TO_PTHREAD, while the page drives it and sets the sink's
 * settings from the main thread), and start and end many short threads ("churn"), so
 * that thread ids grow past the sizes of tables keyed by them. A thread takes the next id
 * at its first scope; the page can give the main thread one with scenes_page_work (a
 * scope on the main thread, shown in the frame the framer closes next).
 *
 * Built three ways (CMakeLists.txt): for the page (web), for the page with pthreads
 * (web, worker), and for node (where the sink must default to off). Exports are
 * EMSCRIPTEN_KEEPALIVE functions, so the link needs no EXPORTED_FUNCTIONS list beyond
 * the runtime. A logger keeps what vor reports, for the test to read.
 */
#include <emscripten.h>
#include <stdint.h>
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
#if defined(SCENES_WORKER)
    /* Room for the churned threads, which exit between two frames: small buffers, many. */
    desc.max_threads = 1024;
    desc.thread_buffer_scopes = 1024;
#endif
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

/* 150 x "é": 300 bytes. */
#define E10 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
#define LONG_NAME E10 E10 E10 E10 E10 E10 E10 E10 E10 E10 E10 E10 E10 E10 E10

/* One frame with one scope (>= 200 us) named LONG_NAME, then vor_frame_mark(). */
EMSCRIPTEN_KEEPALIVE void scenes_long_name_frame(void) {
    {
        VOR_SCOPE(LONG_NAME);
        spin_us(200);
    }
    vor_frame_mark();
}

/* A frame of `n` steps of zero-length work, as the example's training step makes with a
 * coarse clock: step { n x gradients { optimizer_step } }, then `spin_ms` of work outside
 * any scope (room for the entries at one clock step each), then vor_frame_mark(). */
EMSCRIPTEN_KEEPALIVE void scenes_burst_frame(int n, double spin_ms) {
    {
        VOR_SCOPE("step");
        for (int i = 0; i < n; i++) {
            VOR_SCOPE("gradients");
            {
                VOR_SCOPE("optimizer_step");
            }
        }
    }
    spin_us(spin_ms * 1000.0);
    vor_frame_mark();
}

/* A frame of an instrumented library: heavy { n leaves }, every 10th leaf ("long_leaf")
 * busy for 30 us, the others ("short_leaf") empty; then vor_frame_mark(). */
EMSCRIPTEN_KEEPALIVE void scenes_heavy_frame(int n) {
    {
        VOR_SCOPE("heavy");
        for (int i = 0; i < n; i++) {
            if (i % 10 == 0) {
                VOR_SCOPE("long_leaf");
                spin_us(30);
            } else {
                VOR_SCOPE("short_leaf");
            }
        }
    }
    vor_frame_mark();
}

EMSCRIPTEN_KEEPALIVE void scenes_set_entry_budget(double entries) {
    vor_browser_set_entry_budget((uint32_t)entries);
}

EMSCRIPTEN_KEEPALIVE double scenes_get_entry_budget(void) {
    return (double)vor_browser_get_entry_budget();
}

/* One scope on the calling thread (the page's), outside any frame of its own. */
EMSCRIPTEN_KEEPALIVE void scenes_page_work(void) {
    VOR_SCOPE("page_work");
    spin_us(50);
}

/* The in-page panel bridge (wasm/src/panel_bridge.c), polled as the example page polls it. */
extern int vor_wasm_panel_poll(void);
EMSCRIPTEN_KEEPALIVE int scenes_panel_poll(void) {
    return vor_wasm_panel_poll();
}

/* A double converted as vor/browser.h asks of callers: saturated to UINT64_MAX. */
EMSCRIPTEN_KEEPALIVE void scenes_set_min_duration_us(double us) {
    double ns = us * 1000.0;
    vor_browser_set_min_duration_ns(!(ns > 0) ? 0 : ns >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)ns);
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

#if defined(SCENES_WORKER)
/* ---- The frame loop in a worker ------------------------------------------------------- */

static int framer_ready;     /* atomic */
static int framer_requested; /* atomic: frames asked of the framer */
static int framer_done;      /* atomic: frames it closed */

static void *framer(void *arg) {
    (void)arg;
    vor_set_thread_name("framer");
    __atomic_store_n(&framer_ready, 1, __ATOMIC_RELEASE);
    for (int done = 0;; done++) {
        int seen;
        while ((seen = __atomic_load_n(&framer_requested, __ATOMIC_ACQUIRE)) <= done)
            emscripten_futex_wait(&framer_requested, (uint32_t)seen, INFINITY);
        scenes_frame(done); /* its first vor_frame_mark() makes this the frame thread */
        __atomic_store_n(&framer_done, done + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* Starts the framer (the page waits for scenes_framer_ready: a new worker may need the
 * main thread's event loop to start). */
EMSCRIPTEN_KEEPALIVE int scenes_framer_start(void) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, framer, NULL) != 0) return 0;
    pthread_detach(thread);
    return 1;
}

EMSCRIPTEN_KEEPALIVE int scenes_framer_ready(void) {
    return __atomic_load_n(&framer_ready, __ATOMIC_ACQUIRE);
}

/* Asks the framer for `count` more frames; scenes_framer_done() counts those closed. */
EMSCRIPTEN_KEEPALIVE void scenes_framer_frames(int count) {
    __atomic_add_fetch(&framer_requested, count, __ATOMIC_ACQ_REL);
    emscripten_futex_wake(&framer_requested, 1);
}

EMSCRIPTEN_KEEPALIVE int scenes_framer_done(void) {
    return __atomic_load_n(&framer_done, __ATOMIC_ACQUIRE);
}

/* ---- Thread churn ---------------------------------------------------------------------- */

static int churned; /* atomic: short threads started and ended */

static void *churn_child(void *arg) {
    (void)arg;
    vor_set_thread_name("churn");
    VOR_SCOPE("churn"); /* takes the next thread id */
    return NULL;
}

static void *churner(void *arg) {
    int n = (int)(intptr_t)arg;
    for (int i = 0; i < n; i++) {
        pthread_t child;
        if (pthread_create(&child, NULL, churn_child, NULL) != 0) break;
        pthread_join(child, NULL);
        __atomic_add_fetch(&churned, 1, __ATOMIC_ACQ_REL);
    }
    return NULL;
}

/* Starts and ends `n` threads, one after the other, each taking a thread id (and leaving
 * one scope for the next frame); the page waits for scenes_churned() to reach n. */
EMSCRIPTEN_KEEPALIVE int scenes_churn(int n) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, churner, (void *)(intptr_t)n) != 0) return 0;
    pthread_detach(thread);
    return 1;
}

EMSCRIPTEN_KEEPALIVE int scenes_churned(void) {
    return __atomic_load_n(&churned, __ATOMIC_ACQUIRE);
}
#endif

int main(void) {
    return 0;
}

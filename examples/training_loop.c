/* training_loop.c: the demo program. A training-style loop instrumented with vor: each
 * step is one frame with nested scopes (forward, backward, optimizer), a loader thread
 * reads batches from a file and reports its I/O, and the loss is a user metric. At the
 * end it prints the frame-time statistics.
 *
 * The same source builds natively and to WebAssembly, so the two runs can be compared:
 * the work per step is deterministic (fixed arithmetic, fixed batch sizes), only the
 * machine and the runtime differ. Natively the loader is a pthread; without pthreads
 * (a plain wasm build) it runs on the main thread between steps. In the browser build
 * (VOR_EXAMPLE_BROWSER) the page drives it: one step per animation frame, forever.
 *
 *   training_loop [STEPS]            default 300 steps
 *   VOR_RECORD=run.vor training_loop   also writes a capture (see README)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vor/vor.h>

#if defined(VOR_EXAMPLE_BROWSER)
#include <emscripten/html5.h>
#endif

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define EXAMPLE_THREADS 0
#else
#define EXAMPLE_THREADS 1
#include <pthread.h>
#endif

#define WIDTH 512 /* the "model": LAYERS matrices of WIDTH x WIDTH */
#define LAYERS 4
#define ROWS_PER_BLOCK 64
#define BATCH_BYTES (64 * 1024) /* what the loader reads per batch */

static float weights[LAYERS][WIDTH * WIDTH];
static float activations[WIDTH];
static float gradient[WIDTH];
static unsigned char batch[BATCH_BYTES];
static double loss = 4.0;

static void layer_forward(const float *w) {
    VOR_FUNCTION();
    static float next[WIDTH];
    for (int block = 0; block < WIDTH; block += ROWS_PER_BLOCK) {
        VOR_SCOPE("matvec row block");
        for (int r = block; r < block + ROWS_PER_BLOCK; r++) {
            float acc = 0;
            for (int c = 0; c < WIDTH; c++) acc += w[r * WIDTH + c] * activations[c];
            next[r] = tanhf(acc * 0.01f);
        }
    }
    memcpy(activations, next, sizeof next);
}

static void forward(void) {
    VOR_FUNCTION();
    for (int layer = 0; layer < LAYERS; layer++) layer_forward(weights[layer]);
}

static void backward(void) {
    VOR_FUNCTION();
    {
        VOR_SCOPE("gradients");
        for (int i = 0; i < WIDTH; i++) gradient[i] = activations[i] * (1.0f - activations[i] * activations[i]);
    }
    for (int layer = LAYERS - 1; layer >= 0; layer--) {
        VOR_SCOPE("weight update");
        float *w = weights[layer];
        for (int r = 0; r < WIDTH; r++)
            for (int c = 0; c < WIDTH; c++) w[r * WIDTH + c] -= 1e-4f * gradient[r] * activations[c];
    }
}

static void optimizer_step(int step) {
    VOR_FUNCTION();
    loss = 0.05 + 3.95 * exp(-step / 80.0) + 0.02 * sin(step * 0.7);
}

/* Reads one batch from the data file, timing it for vor_record_io. */
static void load_batch(FILE *data) {
    VOR_SCOPE("load batch");
    uint64_t t0 = vor_now_ns();
    size_t got = fread(batch, 1, sizeof batch, data);
    if (got < sizeof batch) {
        rewind(data);
        got += fread(batch + got, 1, sizeof batch - got, data);
    }
    vor_record_io(vor_now_ns() - t0, got);
}

/* The model's input from the batch just loaded (main thread, before the loader refills it). */
static void take_batch(void) {
    for (int i = 0; i < WIDTH; i++) activations[i] = (float)batch[i] / 255.0f;
}

static FILE *open_data_file(void) {
    /* A scratch file of deterministic bytes stands in for a dataset. */
    FILE *f = tmpfile();
    if (f == NULL) return NULL;
    for (int i = 0; i < 4 * BATCH_BYTES; i++) fputc((i * 131 + 7) & 0xFF, f);
    rewind(f);
    return f;
}

#if EXAMPLE_THREADS
typedef struct loader {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int wanted, done, quit;
    FILE *data;
} loader;

static void *loader_main(void *arg) {
    loader *l = arg;
    vor_set_thread_name("loader");
    pthread_mutex_lock(&l->lock);
    for (;;) {
        while (l->wanted == l->done && !l->quit) pthread_cond_wait(&l->wake, &l->lock);
        if (l->quit) break;
        pthread_mutex_unlock(&l->lock);
        load_batch(l->data);
        pthread_mutex_lock(&l->lock);
        l->done++;
        pthread_cond_broadcast(&l->wake);
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

static void request_batch(loader *l) {
    pthread_mutex_lock(&l->lock);
    l->wanted++;
    pthread_cond_broadcast(&l->wake);
    pthread_mutex_unlock(&l->lock);
}

static void wait_batch(loader *l) {
    VOR_SCOPE("wait for batch");
    pthread_mutex_lock(&l->lock);
    while (l->done < l->wanted) pthread_cond_wait(&l->wake, &l->lock);
    pthread_mutex_unlock(&l->lock);
}
#endif

#if EXAMPLE_THREADS
static loader batch_loader;
static pthread_t loader_thread;
#endif
static FILE *data_file;

/* One training step: one frame. */
static void train_step(int step) {
    {
        VOR_SCOPE("train step");
#if EXAMPLE_THREADS
        wait_batch(&batch_loader);
        take_batch();
        request_batch(&batch_loader); /* the loader reads the next batch while we compute */
#else
        load_batch(data_file);
        take_batch();
#endif
        forward();
        backward();
        optimizer_step(step);
    }
    vor_record_metric("loss", loss);
    vor_frame_mark();
}

#if defined(VOR_EXAMPLE_BROWSER)
static int browser_step;
static EM_BOOL animation_frame(double time_ms, void *user) {
    (void)time_ms;
    (void)user;
    train_step(browser_step++);
    return EM_TRUE; /* keep going */
}
#endif

int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 300;
    if (steps <= 0) {
        fprintf(stderr, "training_loop: STEPS must be a positive number (got \"%s\")\n", argv[1]);
        return 2;
    }
    data_file = open_data_file();
    if (data_file == NULL) {
        perror("training_loop: cannot create the scratch data file");
        return 1;
    }
    for (int layer = 0; layer < LAYERS; layer++)
        for (int i = 0; i < WIDTH * WIDTH; i++) weights[layer][i] = (float)((i * 7919 + layer) % 1000) / 1000.0f - 0.5f;

    vor_set_thread_name("main");
    vor_record_metric_unit("loss", "nats");
    vor_enable();

#if EXAMPLE_THREADS
    memset(&batch_loader, 0, sizeof batch_loader);
    pthread_mutex_init(&batch_loader.lock, NULL);
    pthread_cond_init(&batch_loader.wake, NULL);
    batch_loader.data = data_file;
    if (pthread_create(&loader_thread, NULL, loader_main, &batch_loader) != 0) {
        fprintf(stderr, "training_loop: cannot start the loader thread\n");
        return 1;
    }
    request_batch(&batch_loader);
#endif

#if defined(VOR_EXAMPLE_BROWSER)
    emscripten_request_animation_frame_loop(animation_frame, NULL);
    return 0; /* the runtime stays alive; the browser calls animation_frame */
#else
    for (int step = 0; step < steps; step++) train_step(step);

#if EXAMPLE_THREADS
    pthread_mutex_lock(&batch_loader.lock);
    batch_loader.quit = 1;
    pthread_cond_broadcast(&batch_loader.wake);
    pthread_mutex_unlock(&batch_loader.lock);
    pthread_join(loader_thread, NULL);
#endif

    vor_frame_stats stats;
    vor_frame_stats_get(&stats);
    vor_counters counters;
    vor_get_counters(&counters);
    printf("training_loop: %d steps, final loss %.4f\n", steps, loss);
    printf("frame time: mean %.3f ms, p50 %.3f ms, p95 %.3f ms, p99 %.3f ms, max %.3f ms\n", stats.mean_ns / 1e6,
           stats.p50_ns / 1e6, stats.p95_ns / 1e6, stats.p99_ns / 1e6, stats.max_ns / 1e6);
    printf("scopes: %llu recorded, %llu dropped; one empty scope costs %.1f ns\n",
           (unsigned long long)counters.scopes_recorded, (unsigned long long)counters.scopes_dropped,
           vor_empty_span_ns());
    vor_shutdown();
    fclose(data_file);
    return 0;
#endif
}

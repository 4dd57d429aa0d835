/* upload_live.c: the live upload of a running program to a profile store, natively
 * (VOR_UPLOAD=http://HOST:PORT, vor_upload_start; vor/upload.h).
 *
 * Shape, and why:
 *   - The frame thread only encodes (upload_stream.c) and copies each record into a ring of
 *     VOR_UPLOAD_BUFFER_MB (default 16 MiB) - no lock, no system call, no allocation after the
 *     start. A background thread owns the network (upload_ws.c) and sends from the ring. The
 *     ring is single-producer (the frame thread, under the frame lock) single-consumer (the
 *     thread): `head` (bytes written) and `freed` (bytes the server acknowledged) are atomics.
 *   - Bytes leave the ring only when the server acknowledges them (its acks say how much it
 *     stored, whole records), not when they are sent: a dropped connection resumes from what
 *     the server holds, from the ring, with nothing lost. The ring bounds memory: when it is full
 *     (the server slow or unreachable for long), frames are left out of the upload, counted and
 *     reported once (UPLOAD_DROPPED), and the upload goes on as a valid capture without them.
 *   - The connection is re-made with back-off (0.25 s doubling to 10 s); the server answers
 *     the hello with the offset it holds and sending resumes there. If the server lost what the
 *     ring no longer has (its store was wiped), the rest goes up as a new capture (fresh key, a
 *     fresh encoder, so the new capture is complete on its own).
 *   - A refusal (bad token, the store full, a foreign server) is final: reported once
 *     (UPLOAD_PROBLEM, with the server's words) and the upload stops; the program runs on.
 *   - At close (vor_shutdown, exit) the end record is queued and the thread given up to
 *     VOR_UPLOAD_FLUSH_MS (default 3000) to deliver the rest; then it is told to stop, its
 *     socket is shut down so no call blocks, and it is joined.
 * Local captures (VOR_RECORD) are written as always, independently: the upload never affects
 * them.
 */
#include "upload_stream.h"
#include "upload_client.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    SEND_CHUNK = 1 << 20,
    CONNECT_TIMEOUT_MS = 5000,
    SEND_TIMEOUT_MS = 10000,
    IDLE_WAIT_MS = 20,
    BACKOFF_MIN_MS = 250,
    BACKOFF_MAX_MS = 10000
};

typedef struct live {
    vor_upload_settings set;
    vor_url url;
    vor_upload_stream *stream;
    uint8_t *ring;
    uint64_t cap;
    uint64_t head;   /* ring bytes written (frame thread; release) */
    uint64_t freed;  /* ring bytes the server has (thread; release) */
    int closing;     /* the end record is queued (or could not be): deliver and finish */
    int stop;        /* give up now */
    int restart_req; /* thread asks: the next record starts a fresh capture */
    int fresh_ready; /* frame thread answers: fresh_pos is where it starts */
    uint64_t fresh_pos;
    int finished; /* the thread is done (delivered, refused, or stopped) */
    int failed;   /* refused for good: the consumer goes away */
    pthread_t thread;
    pthread_mutex_t lock; /* ws pointer (for abort) and the close handshake */
    pthread_cond_t cond;
    vor_ws *ws;
    /* status (read by vor_upload_get_status) */
    int connected;
    uint64_t acked_stream, reconnects;
    char id[40];
} live;

static live *current; /* the session's upload (frame lock) */
static vor_upload_status last_status;

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the frame thread's side ---- */

static int ring_put(void *user, const uint8_t *bytes, size_t n) {
    live *l = user;
    uint64_t head = l->head, freed = vor_atomic_load_acquire(&l->freed);
    if (n > l->cap - (head - freed)) return 0;
    uint64_t at = head % l->cap, first = l->cap - at < n ? l->cap - at : n;
    memcpy(l->ring + at, bytes, first);
    memcpy(l->ring, bytes + first, n - first);
    vor_atomic_store_release(&l->head, head + n);
    return 1;
}

static int live_frame(void *state, const vor_frame_record *rec) {
    live *l = state;
    if (vor_atomic_load_acquire(&l->failed)) return 1; /* refused for good: closes this consumer */
    if (vor_atomic_load_acquire(&l->restart_req)) {
        vor_upload_stream_restart(l->stream);
        l->fresh_pos = l->head;
        vor_atomic_store_relaxed(&l->restart_req, 0);
        vor_atomic_store_release(&l->fresh_ready, 1);
    }
    vor_upload_stream_frame(l->stream, rec);
    return 0;
}

/* ---- the thread's side ---- */

static int sleep_unless_stopped(live *l, int ms) {
    pthread_mutex_lock(&l->lock);
    if (!l->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += ms / 1000;
        until.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&l->cond, &l->lock, &until);
    }
    int stop = l->stop;
    pthread_mutex_unlock(&l->lock);
    return stop;
}

static void set_ws(live *l, vor_ws *ws) {
    pthread_mutex_lock(&l->lock);
    l->ws = ws;
    pthread_mutex_unlock(&l->lock);
    vor_atomic_store_relaxed(&l->connected, ws != NULL);
}

static void give_up(live *l, const char *why) {
    vor_log(VOR_LOG_UPLOAD_PROBLEM, "%s: %s; the upload stops (the program runs on)", l->set.url, why);
    vor_atomic_store_release(&l->failed, 1);
}

typedef struct cursor {
    char key[25];
    uint64_t start_pos; /* ring position of stream offset H (the header's length) */
    uint64_t sent;      /* stream offset sent so far */
} cursor;

/* Stream offset -> ring position (offsets below the header's length have none). */
static uint64_t ring_pos(const live *l, const cursor *c, uint64_t s) {
    return c->start_pos + (s - vor_upload_stream_header(l->stream)->size);
}

/* Asks the frame thread for a fresh start and waits for it; 0, or -1 when stopping. */
static int restart(live *l, cursor *c) {
    vor_atomic_store_release(&l->fresh_ready, 0);
    vor_atomic_store_release(&l->restart_req, 1);
    while (!vor_atomic_load_acquire(&l->fresh_ready)) {
        if (vor_atomic_load_acquire(&l->closing) || sleep_unless_stopped(l, IDLE_WAIT_MS)) return -1;
    }
    c->start_pos = l->fresh_pos;
    vor_atomic_store_release(&l->freed, c->start_pos);
    vor_upload_random_key(c->key);
    c->sent = 0;
    return 0;
}

/* Connects and says hello; the server's offset decides where sending resumes. 1 connected,
 * 0 try again later, -1 refused for good, 2 already complete. */
static int connect_and_resume(live *l, cursor *c) {
    char err[300], hello[4096], text[1024];
    vor_upload_hello h = {c->key,     l->set.project, l->set.name, NULL, l->set.token[0] ? l->set.token : NULL,
                          l->set.tags};
    if (vor_upload_hello_json(&h, hello, sizeof hello, err, sizeof err) != 0) {
        give_up(l, err);
        return -1;
    }
    vor_ws *ws = vor_ws_connect(&l->url, "/upload", "vor-upload", CONNECT_TIMEOUT_MS, err, sizeof err);
    if (!ws) {
        vor_log(VOR_LOG_UPLOAD_PROBLEM, "%s; retrying, frames wait in the upload buffer", err);
        return 0;
    }
    int code = 0;
    vor_upload_msg m;
    if (vor_ws_send(ws, 0, hello, strlen(hello), SEND_TIMEOUT_MS) != 0 ||
        vor_ws_recv(ws, text, sizeof text, CONNECT_TIMEOUT_MS, &code) != 1) {
        vor_ws_close(ws, 0);
        return 0;
    }
    vor_upload_msg_parse(text, &m);
    if (m.type == VOR_UPLOAD_MSG_ERROR) {
        vor_ws_close(ws, 1000);
        give_up(l, m.message[0] ? m.message : "refused");
        return -1;
    }
    if (m.type == VOR_UPLOAD_MSG_DONE) {
        vor_ws_close(ws, 1000);
        return 2;
    }
    if (m.type != VOR_UPLOAD_MSG_OFFSET) {
        vor_ws_close(ws, 1002);
        give_up(l, "the server does not speak the vor-upload protocol");
        return -1;
    }
    snprintf(l->id, sizeof l->id, "%s", m.id);
    uint64_t H = vor_upload_stream_header(l->stream)->size, freed = l->freed, head = vor_atomic_load_acquire(&l->head);
    bool ok;
    if (m.bytes < H)
        ok = freed == c->start_pos; /* the header is always at hand; the ring must be whole */
    else {
        uint64_t pos = ring_pos(l, c, m.bytes);
        ok = pos >= freed && pos <= head;
        if (ok) vor_atomic_store_release(&l->freed, pos);
    }
    if (!ok) {
        /* The server lost what the ring no longer holds: the rest becomes a new capture. */
        vor_ws_close(ws, 1000);
        vor_log(VOR_LOG_UPLOAD_PROBLEM, "%s no longer holds this upload's start; the rest goes up as a new capture",
                l->set.url);
        return restart(l, c) == 0 ? 0 : -1;
    }
    c->sent = m.bytes;
    vor_atomic_store_relaxed(&l->acked_stream, m.bytes);
    set_ws(l, ws);
    return 1;
}

/* Sends what waits (at most SEND_CHUNK), reads what the server said. 1 go on, 0 connection lost,
 * -1 refused, 2 done (the server stored the whole capture). */
static int pump(live *l, cursor *c, bool *finish_sent) {
    const vor_out *hdr = vor_upload_stream_header(l->stream);
    uint64_t H = hdr->size, head = vor_atomic_load_acquire(&l->head);
    uint64_t end_stream = H + (head - c->start_pos);
    bool sent_any = false;
    if (c->sent < H) {
        if (vor_ws_send(l->ws, 1, hdr->data + c->sent, (size_t)(H - c->sent), SEND_TIMEOUT_MS) != 0) return 0;
        c->sent = H;
        sent_any = true;
    }
    if (c->sent < end_stream) {
        uint64_t pos = ring_pos(l, c, c->sent), n = end_stream - c->sent;
        if (n > SEND_CHUNK) n = SEND_CHUNK;
        uint64_t at = pos % l->cap;
        if (n > l->cap - at) n = l->cap - at; /* up to the ring's end; the rest next time */
        if (vor_ws_send(l->ws, 1, l->ring + at, (size_t)n, SEND_TIMEOUT_MS) != 0) return 0;
        c->sent += n;
        sent_any = true;
    }
    int closing = vor_atomic_load_acquire(&l->closing);
    if (closing && c->sent == end_stream && !*finish_sent) {
        /* Everything is out. Without an end record (it did not fit) the server needs to be told. */
        const char finish[] = "{\"type\":\"finish\"}";
        if (closing == 2 && vor_ws_send(l->ws, 0, finish, sizeof finish - 1, SEND_TIMEOUT_MS) != 0) return 0;
        *finish_sent = true;
    }
    char text[1024];
    int code = 0;
    for (;;) {
        int r = vor_ws_recv(l->ws, text, sizeof text, sent_any ? 0 : IDLE_WAIT_MS, &code);
        if (r == 0) return 1;
        if (r < 0) return 0;
        vor_upload_msg m;
        vor_upload_msg_parse(text, &m);
        if (m.type == VOR_UPLOAD_MSG_ACK || m.type == VOR_UPLOAD_MSG_DONE) {
            vor_atomic_store_relaxed(&l->acked_stream, m.bytes);
            if (m.bytes >= H) {
                uint64_t pos = ring_pos(l, c, m.bytes);
                if (pos > l->freed && pos <= head) vor_atomic_store_release(&l->freed, pos);
            }
            if (m.type == VOR_UPLOAD_MSG_DONE) return 2;
        } else if (m.type == VOR_UPLOAD_MSG_ERROR) {
            give_up(l, m.message[0] ? m.message : "refused");
            return -1;
        }
        sent_any = true; /* keep reading what is there without waiting */
    }
}

static void *run(void *arg) {
    live *l = arg;
    cursor c;
    memset(&c, 0, sizeof c);
    vor_upload_random_key(c.key);
    int backoff = BACKOFF_MIN_MS;
    bool finish_sent = false;
    while (!vor_atomic_load_acquire(&l->stop)) {
        if (!l->ws) {
            finish_sent = false;
            int r = connect_and_resume(l, &c);
            if (r < 0 || r == 2) break;
            if (r == 0) {
                l->reconnects++;
                if (sleep_unless_stopped(l, backoff)) break;
                backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
                continue;
            }
            backoff = BACKOFF_MIN_MS;
        }
        int p = pump(l, &c, &finish_sent);
        if (p == 1) continue;
        vor_ws *ws = l->ws;
        set_ws(l, NULL);
        vor_ws_close(ws, p == 2 ? 1000 : 0);
        if (p == 2 || p < 0) break;
        l->reconnects++;
    }
    if (l->ws) {
        vor_ws *ws = l->ws;
        set_ws(l, NULL);
        vor_ws_close(ws, 1001);
    }
    pthread_mutex_lock(&l->lock);
    l->finished = 1;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

/* ---- consumer life ---- */

static void record_status(live *l) {
    vor_upload_status *s = &last_status;
    s->active = !l->finished;
    s->connected = vor_atomic_load_relaxed(&l->connected);
    s->bytes_encoded = vor_upload_stream_bytes(l->stream);
    s->bytes_acked = vor_atomic_load_relaxed(&l->acked_stream);
    s->frames_dropped = vor_upload_stream_dropped(l->stream);
    s->reconnects = l->reconnects;
    snprintf(s->id, sizeof s->id, "%s", l->id);
}

static void live_free(live *l) {
    vor_upload_stream_free(l->stream);
    free(l->ring);
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->cond);
    free(l);
}

static void live_close(void *state) {
    live *l = state;
    int ended = !vor_atomic_load_acquire(&l->failed) && vor_upload_stream_end(l->stream);
    vor_atomic_store_release(&l->closing, ended ? 1 : 2);
    const char *flush = getenv("VOR_UPLOAD_FLUSH_MS");
    long ms = flush && *flush ? strtol(flush, NULL, 10) : 3000;
    if (ms < 0 || ms > 600000) ms = 3000;
    int64_t deadline = now_ms() + ms;
    pthread_mutex_lock(&l->lock);
    while (!l->finished) {
        int64_t left = deadline - now_ms();
        if (left <= 0) break;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += left / 1000;
        until.tv_nsec += (long)(left % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&l->cond, &l->lock, &until);
    }
    int delivered = l->finished && !l->failed;
    l->stop = 1;
    vor_ws_abort(l->ws);
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
    pthread_join(l->thread, NULL);
    uint64_t lost = vor_upload_stream_bytes(l->stream) - vor_atomic_load_relaxed(&l->acked_stream);
    if (!delivered && !l->failed && lost)
        vor_log(VOR_LOG_UPLOAD_PROBLEM,
                "%s: %llu bytes were not delivered within VOR_UPLOAD_FLUSH_MS=%ld; the "
                "server keeps what arrived (resumable), a local capture (VOR_RECORD) has everything",
                l->set.url, (unsigned long long)lost, ms);
    record_status(l);
    last_status.active = 0;
    if (current == l) current = NULL;
    live_free(l);
}

/* With the frame lock held: the session's upload to url. */
static int start_locked(const char *url, const vor_upload_options *o) {
    char err[300];
    if (!vor_session_now.active) {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "vor_upload_start: no session (call vor_enable() first)");
        return 0;
    }
    if (current) {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "vor_upload_start: an upload is already running in this session");
        return 0;
    }
    live *l = calloc(1, sizeof *l);
    if (!l) return 0;
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->cond, NULL);
    if (vor_upload_settings_resolve(url, o, &l->set) != 0 || vor_url_parse(l->set.url, &l->url, err, sizeof err) != 0) {
        if (l->set.url[0]) vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "VOR_UPLOAD: %s; not uploading", err);
        live_free(l);
        return 0;
    }
    l->cap = l->set.buffer_bytes;
    l->ring = malloc((size_t)l->cap);
    l->stream = l->ring ? vor_upload_stream_new(&l->set.capture, ring_put, l) : NULL;
    if (!l->stream) {
        vor_log(VOR_LOG_OUT_OF_MEMORY, "upload buffer (VOR_UPLOAD_BUFFER_MB)");
        live_free(l);
        return 0;
    }
    if (pthread_create(&l->thread, NULL, run, l) != 0) {
        vor_log(VOR_LOG_UPLOAD_PROBLEM, "cannot start the upload thread");
        live_free(l);
        return 0;
    }
    vor_consumer c = {"upload", l, live_frame, NULL, live_close};
    if (!vor_consumers_add(&c)) {
        live_close(l);
        return 0;
    }
    current = l;
    return 1;
}

int vor_upload_open_from_environment(void) {
    const char *url = getenv("VOR_UPLOAD");
    if (!url || !*url) return 0;
    if (vor_session_forked) return 0; /* the parent's upload */
    return start_locked(url, NULL);
}

int vor_upload_start(const char *url, const vor_upload_options *options) {
    int held_before = !vor_frame_lock_acquire();
    int ok = start_locked(url, options);
    if (!held_before) vor_frame_lock_release();
    return ok;
}

void vor_upload_get_status(vor_upload_status *out) {
    if (current) record_status(current);
    *out = last_status;
}

/* upload_stream.c: the bytes of a live upload, made on the frame thread (see upload_stream.h).
 *
 * Each frame is encoded and framed exactly as the capture writer does (record_encoder.c: one
 * record, compressed alone, checked), so the store receives a capture like VOR_RECORD's, and its
 * flame settings (VOR_RECORD_FLAME, _EVERY, _MAX_FRAMES) are the same variables. The record is
 * offered to the sink; when the sink has no room the frame is left out of the upload (counted:
 * vor_upload_get_status, and one UPLOAD_DROPPED report) and the encoder is replaced by a fresh
 * one, so the next record declares its columns, sites, threads and modules and writes every value
 * in full: losing records never makes later ones unreadable (format 1.1 records are
 * self-contained but for a two-record reach-back, which a fresh encoder does not use).
 * Cost on the frame thread: the encoding, LZ4 and one memcpy into the sink; no system call.
 */
#include "upload_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lz4.h>

#include "record_encoder.h"
#include "vor/reader.h"

struct vor_upload_stream {
    vor_capture_options options;
    vor_upload_sink_fn sink;
    void *user;
    vor_record_encoder *encoder;
    LZ4_stream_t *lz4;
    vor_out header, raw, framed;
    uint64_t frames_seen, flame_frames_written, dropped, bytes;
    int fresh_next; /* replace the encoder before the next record */
};

vor_upload_stream *vor_upload_stream_new(const vor_capture_options *options, vor_upload_sink_fn sink, void *user) {
    vor_upload_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->options = *options;
    if (s->options.every == 0) s->options.every = 1;
    s->sink = sink;
    s->user = user;
    s->raw.max_capacity = VOR_READER_MAX_RECORD_BYTES - 32;
    s->framed.max_capacity = (size_t)LZ4_compressBound((int)VOR_READER_MAX_RECORD_BYTES) + 32;
    s->header.max_capacity = 2u << 20;
    s->encoder = vor_record_encoder_new();
    s->lz4 = LZ4_createStream();
    if (!s->encoder || !s->lz4) {
        vor_upload_stream_free(s);
        return NULL;
    }
    vor_capture_header_info info = {options->flame, vor_session_now.wall_epoch_ns, vor_producer_name(),
                                    vor_process_name(), (uint64_t)getpid()};
    vor_encode_capture_header(&s->header, &info);
    if (s->header.failed) {
        vor_upload_stream_free(s);
        return NULL;
    }
    return s;
}

const vor_out *vor_upload_stream_header(const vor_upload_stream *s) {
    return &s->header;
}

static int offer(vor_upload_stream *s) {
    if (!vor_frame_capture_record(s->raw.data, s->raw.size, s->lz4, &s->framed)) return 0;
    if (!s->sink(s->user, s->framed.data, s->framed.size)) return 0;
    s->bytes += s->framed.size;
    return 1;
}

void vor_upload_stream_frame(vor_upload_stream *s, const vor_frame_record *rec) {
    uint64_t nth = s->frames_seen++;
    if (s->fresh_next) {
        vor_record_encoder *fresh = vor_record_encoder_new();
        if (!fresh) {
            s->dropped++;
            vor_log(VOR_LOG_OUT_OF_MEMORY, "upload record");
            return;
        }
        vor_record_encoder_free(s->encoder);
        s->encoder = fresh;
        s->fresh_next = 0;
    }
    int flame = s->options.flame && vor_frame_record_has_scopes(rec) && (nth % s->options.every) == 0 &&
                (s->options.max_flame_frames == 0 || s->flame_frames_written < s->options.max_flame_frames);
    int flame_dropped = 0;
    s->raw.size = 0;
    if (!vor_encode_frame(s->encoder, rec, flame, &s->raw, &flame_dropped)) {
        s->dropped++;
        vor_log(VOR_LOG_OUT_OF_MEMORY, "upload record");
        return;
    }
    if (!offer(s)) {
        /* No room: this frame is not uploaded; the encoder thinks it was, so start afresh. */
        s->dropped++;
        s->fresh_next = 1;
        vor_log(VOR_LOG_UPLOAD_DROPPED, "the upload buffer is full (the server is slow or unreachable); the local "
                                        "capture (VOR_RECORD), if any, has every frame");
        return;
    }
    if (flame && !flame_dropped) s->flame_frames_written++;
}

int vor_upload_stream_end(vor_upload_stream *s) {
    s->raw.size = 0;
    vor_encode_end(&s->raw);
    return !s->raw.failed && offer(s);
}

void vor_upload_stream_restart(vor_upload_stream *s) {
    s->fresh_next = 1;
}

uint64_t vor_upload_stream_dropped(const vor_upload_stream *s) {
    return s->dropped;
}

uint64_t vor_upload_stream_bytes(const vor_upload_stream *s) {
    return s->bytes + s->header.size;
}

void vor_upload_stream_free(vor_upload_stream *s) {
    if (!s) return;
    vor_record_encoder_free(s->encoder);
    if (s->lz4) LZ4_freeStream(s->lz4);
    free(s->header.data);
    free(s->raw.data);
    free(s->framed.data);
    free(s);
}

/* ---- settings ---- */

static void copy_env(char *out, size_t cap, const char *given, const char *env, const char *fallback) {
    const char *v = given ? given : getenv(env);
    snprintf(out, cap, "%s", v && *v ? v : fallback);
}

static uint64_t positive(const char *name) {
    const char *text = getenv(name);
    if (!text || !*text) return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end || v == 0 || text[0] == '-') {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "%s=\"%.40s\" is not a positive whole number; ignored", name, text);
        return 0;
    }
    return v;
}

int vor_upload_settings_resolve(const char *url, const vor_upload_options *o, vor_upload_settings *out) {
    static const vor_upload_options none;
    if (!o) o = &none;
    memset(out, 0, sizeof *out);
    if (!url || !*url || strlen(url) >= sizeof out->url) {
        vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "upload: no server address (VOR_UPLOAD=http://HOST:PORT)");
        return -1;
    }
    snprintf(out->url, sizeof out->url, "%s", url);
    copy_env(out->project, sizeof out->project, o->project, "VOR_PROJECT", "default");
    copy_env(out->tags, sizeof out->tags, o->tags, "VOR_TAGS", "");
    copy_env(out->token, sizeof out->token, o->token, "VOR_UPLOAD_TOKEN", "");
    const char *token_file = getenv("VOR_UPLOAD_TOKEN_FILE");
    if (!out->token[0] && token_file && *token_file) {
        FILE *f = fopen(token_file, "re");
        char line[520] = "";
        if (!f || !fgets(line, sizeof line, f)) {
            vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "VOR_UPLOAD_TOKEN_FILE=%s cannot be read; uploading without a token",
                         token_file);
        }
        if (f) fclose(f);
        line[strcspn(line, "\r\n")] = '\0';
        snprintf(out->token, sizeof out->token, "%s", line);
    }
    char fallback[256];
    snprintf(fallback, sizeof fallback, "%s.vor", vor_process_name());
    copy_env(out->name, sizeof out->name, o->name, "VOR_UPLOAD_NAME", fallback);
    uint64_t mb = positive("VOR_UPLOAD_BUFFER_MB");
    out->buffer_bytes = o->buffer_bytes ? o->buffer_bytes : mb ? (size_t)(mb > 4096 ? 4096 : mb) << 20 : 16u << 20;
    const char *flame = getenv("VOR_RECORD_FLAME");
    out->capture.flame = o->flame == 1 || (flame && !strcmp(flame, "1"));
    uint64_t every = o->every ? o->every : positive("VOR_RECORD_EVERY");
    out->capture.every = every == 0 ? 1 : (every > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)every);
    out->capture.max_flame_frames = o->max_flame_frames ? o->max_flame_frames : positive("VOR_RECORD_MAX_FRAMES");
    return 0;
}

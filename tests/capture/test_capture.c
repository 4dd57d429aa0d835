/* test_capture.c: the .vor writer and reader together: round trips of every column,
 * value, unit, scope and thread name; a metric first appearing mid-run; flame-frame
 * gating; torn tails at every byte offset; a reader tailing a second process; a writer
 * killed with SIGKILL; and the errors for bad input and bad settings. */
#include "capture_support.h"
#include "crc32c.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- Round trip ---- */

static void run_workload(int frames) {
    capture_workload(frames);
}

static double expected_value(const recorded_frame *f, uint32_t column, int *found) {
    *found = 0;
    vor_column c;
    if (column < f->n_system) {
        if (!(f->system_present & (1u << column))) return 0;
        assert_int_equal(vor_column_read(column, &c), 1);
        *found = 1;
        return (double)f->system_raw[column] * c.scale;
    }
    for (uint32_t u = 0; u < f->n_user; u++)
        if (f->user[u].column_id == column) {
            *found = 1;
            return f->user[u].value;
        }
    return 0;
}

static void round_trip_preserves_every_frame_value_scope_and_name(void **state) {
    (void)state;
    const char *path = temp_path(".vor");
    start_recording(path, 1);
    run_workload(20);
    /* Keep the records the writer saw, then end the session (which finishes the file). */
    recording cap = rec;
    memset(&rec, 0, sizeof rec);
    vor_shutdown();

    vor_reader *r = open_or_fail(path);
    read_capture got = {0};
    collect_frames(r, &got);
    assert_int_equal(got.last, VOR_READ_NOTHING_YET);
    assert_int_equal(vor_reader_finished(r), 1);
    assert_int_equal(got.n_frames, 20);
    const vor_reader_info *info = vor_reader_get_info(r);
    assert_non_null(info);
    assert_int_equal(info->version_major, 1);
    assert_int_equal(info->flame, 1);
    assert_int_equal(info->pid, (uint64_t)getpid());
    assert_non_null(strstr(info->producer, "vor " VOR_VERSION_STRING));

    /* Columns: the system ones from the header, user ones with their final units. */
    for (uint32_t id = 0; id < vor_column_count(); id++) {
        vor_column_info want;
        assert_int_equal(vor_column_get(id, &want), 1);
        const vor_reader_column *c = vor_reader_get_column(r, id);
        if (c == NULL) continue; /* columns never given a value in this capture */
        assert_string_equal(c->name, want.name);
        assert_string_equal(c->unit, want.unit);
        assert_int_equal(c->is_system, want.is_system);
    }
    assert_int_equal(vor_reader_system_column_count(r), 5);

    for (uint32_t i = 0; i < 20; i++) {
        const recorded_frame *w = &cap.frames[i];
        const read_frame *g = &got.frames[i];
        assert_int_equal(g->index, w->index);
        assert_int_equal(g->start_ns, w->start_ns);
        assert_int_equal(g->duration_ns, w->duration_ns);
        assert_int_equal(g->overhead_ns, w->overhead_ns);
        assert_int_equal(g->dropped, w->dropped);
        /* Every value, bit for bit (NaN included). */
        uint32_t expected_count = 0;
        for (uint32_t c = 0; c < 5; c++)
            if (w->system_present & (1u << c)) expected_count++;
        assert_int_equal(g->n_values, expected_count + w->n_user);
        for (uint32_t v = 0; v < g->n_values; v++) {
            int found;
            double want = expected_value(w, g->values[v].column_id, &found);
            assert_true(found);
            if (isnan(want))
                assert_true(isnan(g->values[v].value));
            else
                assert_memory_equal(&want, &g->values[v].value, sizeof want);
        }
        /* Every scope, with names resolved on both sides. */
        assert_int_equal(g->n_scopes, w->n_scopes);
        assert_int_equal(g->has_flame, 1);
        for (uint32_t s = 0; s < g->n_scopes; s++) {
            const recorded_scope *ws = &w->scopes[s];
            const read_scope *gs = &g->scopes[s];
            assert_int_equal(gs->thread_id, ws->thread_id);
            assert_int_equal(gs->depth, ws->depth);
            assert_int_equal(gs->start_ns, ws->start_ns);
            assert_int_equal(gs->duration_ns, ws->duration_ns);
            const vor_site *site = vor_site_get(ws->site_id);
            const vor_reader_site *rs = vor_reader_get_site(r, gs->site_id);
            assert_non_null(rs);
            assert_string_equal(rs->name, site->name);
            assert_string_equal(rs->function, site->function);
            assert_string_equal(rs->file, site->file);
            assert_int_equal(rs->line, site->line);
            const vor_reader_thread *t = vor_reader_get_thread(r, gs->thread_id);
            assert_non_null(t);
        }
    }
    /* The metric that first appears in frame 10 is absent before, present after, and its
     * unit registered in frame 12 was re-declared. */
    int late = -1;
    for (uint32_t id = 0; id < vor_reader_column_count(r); id++) {
        const vor_reader_column *c = vor_reader_get_column(r, id);
        if (c && strcmp(c->name, "late metric") == 0) late = (int)id;
    }
    assert_true(late > 0);
    assert_string_equal(vor_reader_get_column(r, (uint32_t)late)->unit, "widgets");
    for (uint32_t i = 0; i < 20; i++) {
        int present = 0;
        for (uint32_t v = 0; v < got.frames[i].n_values; v++)
            if ((int)got.frames[i].values[v].column_id == late) present = 1;
        assert_int_equal(present, i >= 10);
    }
    /* Thread names: the worker thread of the last frame was renamed. */
    const read_frame *last = &got.frames[19];
    int saw_renamed = 0;
    for (uint32_t s = 0; s < last->n_scopes; s++) {
        const vor_reader_thread *t = vor_reader_get_thread(r, last->scopes[s].thread_id);
        if (strcmp(t->name, "loader (renamed)") == 0) saw_renamed = 1;
    }
    assert_true(saw_renamed);

    read_capture_free(&got);
    vor_reader_close(r);
    for (uint32_t i = 0; i < cap.n_frames; i++) free(cap.frames[i].scopes);
    unlink(path);
}

static void metrics_only_by_default_and_flame_gating(void **state) {
    (void)state;
    const char *path = temp_path(".vor");
    start_recording(path, 0);
    run_workload(4);
    vor_shutdown();
    vor_reader *r = open_or_fail(path);
    read_capture got = {0};
    collect_frames(r, &got);
    assert_int_equal(got.n_frames, 4);
    for (uint32_t i = 0; i < 4; i++) assert_int_equal(got.frames[i].has_flame, 0);
    assert_int_equal(vor_reader_get_info(r)->flame, 0);
    read_capture_free(&got);
    vor_reader_close(r);
    session_teardown();

    /* One frame in 3, at most 2 of them. */
    setenv("VOR_RECORD_EVERY", "3", 1);
    setenv("VOR_RECORD_MAX_FRAMES", "2", 1);
    start_recording(path, 1);
    run_workload(12);
    vor_shutdown();
    r = open_or_fail(path);
    collect_frames(r, &got);
    assert_int_equal(got.n_frames, 12);
    for (uint32_t i = 0; i < 12; i++) assert_int_equal(got.frames[i].has_flame, i == 0 || i == 3);
    read_capture_free(&got);
    vor_reader_close(r);
    unlink(path);
}

/* Every warning the settings gave, one per line. */
static char settings_warnings[2048];
static void settings_logger(void *user, vor_log_level level, vor_log_item item, const char *message) {
    (void)user;
    (void)level;
    if (item != VOR_LOG_BAD_ENVIRONMENT) return;
    size_t n = strlen(settings_warnings);
    snprintf(settings_warnings + n, sizeof settings_warnings - n, "%s\n", message);
}

static void bad_settings_warn_once_each_and_the_program_runs_on(void **state) {
    (void)state;
    const char *path = temp_path(".vor");
    setenv("VOR_RECORD_EVERY", "0", 1);
    setenv("VOR_RECORD_MAX_FRAMES", "lots", 1);
    setenv("VOR_RECORD_FLAME", "yes", 1);
    setenv("VOR_RECORD", path, 1);
    settings_warnings[0] = '\0';
    vor_desc d = {0};
    d.logger.func = settings_logger;
    assert_int_equal(vor_setup(&d), 1);
    vor_enable();
    /* Three bad settings: three warnings, each naming its variable and value, once. */
    assert_int_equal(vor_log_count(VOR_LOG_BAD_ENVIRONMENT), 3);
    assert_non_null(strstr(settings_warnings, "VOR_RECORD_EVERY=\"0\""));
    assert_non_null(strstr(settings_warnings, "VOR_RECORD_MAX_FRAMES=\"lots\""));
    assert_non_null(strstr(settings_warnings, "VOR_RECORD_FLAME=\"yes\""));
    int lines = 0;
    for (const char *p = settings_warnings; *p; p++) lines += *p == '\n';
    assert_int_equal(lines, 3);
    { VOR_SCOPE("still recorded"); }
    vor_frame_mark();
    vor_shutdown();
    /* The capture was still written, metrics only (the bad flag was ignored). */
    vor_reader *r = open_or_fail(path);
    read_capture got = {0};
    collect_frames(r, &got);
    assert_int_equal(got.n_frames, 1);
    assert_int_equal(got.frames[0].has_flame, 0);
    read_capture_free(&got);
    vor_reader_close(r);
    unlink(path);
}

static void unwritable_path_warns_once_and_the_program_runs_on(void **state) {
    (void)state;
    setenv("VOR_RECORD", "/nonexistent-dir/sub/run.vor", 1);
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    assert_int_equal(captured.count[VOR_LOG_BAD_ENVIRONMENT], 1);
    assert_non_null(strstr(captured.last_message[VOR_LOG_BAD_ENVIRONMENT], "/nonexistent-dir/sub/run.vor"));
    assert_non_null(strstr(captured.last_message[VOR_LOG_BAD_ENVIRONMENT], "No such file or directory"));
    recording_attach(4);
    { VOR_SCOPE("measured anyway"); }
    vor_frame_mark();
    assert_int_equal(rec.n_frames, 1);
    assert_int_equal(rec.frames[0].n_scopes, 1);
}

/* ---- Torn tails ---- */

static uint8_t *make_capture(size_t *size, int frames) {
    const char *path = temp_path(".vor");
    start_recording(path, 1);
    run_workload(frames);
    vor_shutdown();
    uint8_t *bytes = read_file(path, size);
    unlink(path);
    session_teardown();
    unsetenv("VOR_RECORD");
    unsetenv("VOR_RECORD_FLAME");
    return bytes;
}

static void torn_tail_at_every_byte_of_the_last_record(void **state) {
    (void)state;
    size_t size;
    uint8_t *bytes = make_capture(&size, 6);
    size_t offsets[64];
    uint32_t n = record_offsets(bytes, size, offsets, 64);
    assert_int_equal(n, 7); /* 6 frames + the end record */
    size_t last_frame = offsets[5], end_record = offsets[6];

    /* The complete frames, for comparison. */
    vor_reader *full = vor_reader_open_memory();
    assert_int_equal(vor_reader_feed(full, bytes, size), 1);
    read_capture all = {0};
    collect_frames(full, &all);
    assert_int_equal(all.n_frames, 6);
    vor_reader_close(full);

    for (size_t cut = last_frame; cut < end_record; cut++) {
        vor_reader *r = vor_reader_open_memory();
        assert_int_equal(vor_reader_feed(r, bytes, cut), 1);
        read_capture got = {0};
        collect_frames(r, &got);
        if (got.last != VOR_READ_NOTHING_YET) fail_msg("cut at %zu: %s", cut, got.error);
        assert_int_equal(got.n_frames, 5);
        assert_int_equal(vor_reader_offset(r), last_frame);
        /* The rest arrives: the torn frame is read whole. */
        assert_int_equal(vor_reader_feed(r, bytes + cut, end_record - cut), 1);
        collect_frames(r, &got);
        assert_int_equal(got.last, VOR_READ_NOTHING_YET);
        assert_int_equal(got.n_frames, 6);
        assert_int_equal(got.frames[5].index, all.frames[5].index);
        assert_int_equal(got.frames[5].n_scopes, all.frames[5].n_scopes);
        assert_int_equal(got.frames[5].duration_ns, all.frames[5].duration_ns);
        read_capture_free(&got);
        vor_reader_close(r);
    }

    /* The same through a file that grows, at a few cuts, including inside the header. */
    const size_t cuts[] = {0, 3, 9, 20, last_frame + 1, last_frame + 4, end_record - 1};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        const char *path = temp_path(".vor");
        write_file(path, bytes, cuts[k]);
        vor_reader *r = open_or_fail(path);
        read_capture got = {0};
        collect_frames(r, &got);
        if (got.last != VOR_READ_NOTHING_YET) fail_msg("file cut at %zu: %s", cuts[k], got.error);
        FILE *f = fopen(path, "ab");
        assert_non_null(f);
        fwrite(bytes + cuts[k], 1, size - cuts[k], f);
        fclose(f);
        collect_frames(r, &got);
        assert_int_equal(got.last, VOR_READ_NOTHING_YET);
        assert_int_equal(got.n_frames, 6);
        assert_int_equal(vor_reader_finished(r), 1);
        read_capture_free(&got);
        vor_reader_close(r);
        unlink(path);
    }
    read_capture_free(&all);
    free(bytes);
}

/* ---- Another process writing ---- */

/* Records `frames` frames (forever if negative). With pause_fd >= 0, it stops after frame
 * 49 until a byte can be read from pause_fd, so a reader is sure to catch it mid-file. */
static void child_records(const char *path, int frames, int sleep_us, int flame, int pause_fd) {
    setenv("VOR_RECORD", path, 1);
    if (flame) setenv("VOR_RECORD_FLAME", "1", 1);
    vor_enable();
    for (int i = 0; frames < 0 || i < frames; i++) {
        if (i == 50 && pause_fd >= 0) {
            char go;
            while (read(pause_fd, &go, 1) < 0 && errno == EINTR) {
            }
        }
        {
            VOR_SCOPE("child step");
            for (int k = 0; k < 20; k++) {
                VOR_SCOPE("child inner");
            }
        }
        vor_record_metric("step", i);
        vor_frame_mark();
        if (sleep_us) usleep((useconds_t)sleep_us);
    }
    vor_shutdown();
}

static int step_value(const read_frame *f, vor_reader *r, double *out) {
    for (uint32_t v = 0; v < f->n_values; v++) {
        const vor_reader_column *c = vor_reader_get_column(r, f->values[v].column_id);
        if (c && strcmp(c->name, "step") == 0) {
            *out = f->values[v].value;
            return 1;
        }
    }
    return 0;
}

static void reader_tails_a_capture_another_process_is_writing(void **state) {
    (void)state;
    const char *path = temp_path(".vor");
    int go[2];
    assert_int_equal(pipe(go), 0);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(go[1]);
        child_records(path, 300, 1000, 1, go[0]);
        _exit(0);
    }
    close(go[0]);
    vor_reader *r = NULL;
    char err[512];
    for (int tries = 0; r == NULL && tries < 20000; tries++) {
        r = vor_reader_open(path, err, sizeof err);
        if (r == NULL) usleep(500);
    }
    assert_non_null(r);
    read_capture got = {0};
    int waits = 0, waits_mid_file = 0, released = 0;
    while (!vor_reader_finished(r) && waits < 40000) {
        collect_frames(r, &got);
        if (got.last == VOR_READ_ERROR) fail_msg("%s", got.error);
        /* The writer is paused after frame 49: the reader must come to the end of what is
         * there and wait, and only then is the writer let go. */
        if (!released && got.n_frames == 50) {
            waits_mid_file++;
            assert_int_equal(write(go[1], "g", 1), 1);
            released = 1;
        }
        if (!vor_reader_finished(r)) {
            usleep(500);
            waits++;
        }
    }
    close(go[1]);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(got.n_frames, 300);
    assert_int_equal(waits_mid_file, 1); /* it read a file still being written, and waited */
    assert_true(waits > 0);
    for (uint32_t i = 0; i < 300; i++) {
        double v;
        assert_int_equal(got.frames[i].index, i);
        assert_int_equal(step_value(&got.frames[i], r, &v), 1);
        assert_true(v == i);
        assert_int_equal(got.frames[i].n_scopes, 21);
    }
    read_capture_free(&got);
    vor_reader_close(r);
    unlink(path);
}

static void killed_writer_leaves_every_complete_record_readable(void **state) {
    (void)state;
    const off_t kill_after[] = {40000, 200000, 700000};
    for (size_t k = 0; k < sizeof kill_after / sizeof kill_after[0]; k++) {
        const char *path = temp_path(".vor");
        fflush(NULL);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            child_records(path, -1, 0, 1, -1);
            _exit(0);
        }
        struct stat st;
        for (int tries = 0; tries < 200000; tries++) {
            if (stat(path, &st) == 0 && st.st_size >= kill_after[k]) break;
            usleep(100);
        }
        assert_int_equal(kill(child, SIGKILL), 0);
        int status;
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFSIGNALED(status));

        vor_reader *r = open_or_fail(path);
        read_capture got = {0};
        collect_frames(r, &got);
        if (got.last != VOR_READ_NOTHING_YET) fail_msg("after SIGKILL: %s", got.error);
        assert_int_equal(vor_reader_finished(r), 0);
        assert_true(got.n_frames > 10);
        /* Every complete record was read: the reader stopped within the last record. */
        assert_true(stat(path, &st) == 0);
        uint64_t left = (uint64_t)st.st_size - vor_reader_offset(r);
        size_t size;
        uint8_t *bytes = read_file(path, &size);
        if (left >= 10) /* the remainder is an incomplete record */
            assert_true(record_length_at(bytes, size, vor_reader_offset(r)) > left);
        assert_int_equal(vor_reader_damage_count(r), 0);
        free(bytes);
        for (uint32_t i = 0; i < got.n_frames; i++) {
            double v;
            assert_int_equal(got.frames[i].index, i);
            assert_int_equal(step_value(&got.frames[i], r, &v), 1);
            assert_true(v == i);
        }
        read_capture_free(&got);
        vor_reader_close(r);
        unlink(path);
    }
}

/* ---- fork() ---- */

static int count_in_file(const char *path, const char *needle) {
    size_t size;
    uint8_t *bytes = read_file(path, &size);
    int n = 0;
    for (size_t i = 0; i + strlen(needle) <= size; i++)
        if (memcmp(bytes + i, needle, strlen(needle)) == 0) n++;
    free(bytes);
    return n;
}

static void forked_child_leaves_the_parents_files_alone(void **state) {
    (void)state;
    const char *path = temp_path(".vor");
    const char *trace = temp_path(".json");
    setenv("VOR_TRACE", trace, 1);
    start_recording(path, 1);
    run_workload(3);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* The child of a recording process: it measures, marks frames, even tries to start
         * a session of its own, and exits normally (atexit hooks run). */
        { VOR_SCOPE("in the child"); }
        vor_frame_mark();
        vor_enable();
        vor_frame_mark();
        exit(0);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    run_workload(3);
    vor_shutdown();
    unsetenv("VOR_TRACE");

    vor_reader *r = open_or_fail(path);
    read_capture got = {0};
    collect_frames(r, &got);
    if (got.last != VOR_READ_NOTHING_YET) fail_msg("%s", got.error);
    assert_int_equal(got.n_frames, 6);
    assert_int_equal(vor_reader_finished(r), 1);
    read_capture_free(&got);
    vor_reader_close(r);
    assert_int_equal(count_in_file(trace, "\n]\n"), 1); /* closed once, by the parent */
    assert_int_equal(count_in_file(trace, "in the child"), 0);
    unlink(path);
    unlink(trace);
}

static int exit_on_failure_logger_calls;
static void exit_on_failure(void *user, vor_log_level level, vor_log_item item, const char *message) {
    (void)user;
    (void)level;
    (void)message;
    if (item == VOR_LOG_CONSUMER_FAILED) exit(3);
}

static void logger_that_exits_inside_a_frame_mark_does_not_hang(void **state) {
    (void)state;
    (void)exit_on_failure_logger_calls;
    const char *path = temp_path(".vor");
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* A file size limit lets the header through and fails a later record's write:
         * CONSUMER_FAILED is reported from inside vor_frame_mark, and this logger exits. */
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit limit = {400, 400};
        setrlimit(RLIMIT_FSIZE, &limit);
        setenv("VOR_RECORD", path, 1);
        setenv("VOR_RECORD_FLAME", "1", 1);
        vor_desc d = {0};
        d.logger.func = exit_on_failure;
        vor_setup(&d);
        vor_enable();
        for (int i = 0; i < 200; i++) {
            { VOR_SCOPE("growing the file"); }
            vor_record_metric("i", i);
            vor_frame_mark();
        }
        _exit(0);
    }
    int status = 0;
    pid_t done = 0;
    for (int waited = 0; waited < 1000 && done == 0; waited++) {
        done = waitpid(child, &status, WNOHANG);
        if (done == 0) usleep(10000);
    }
    if (done == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        fail_msg("the program hung in exit() called from the logger");
    }
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 3);
    /* The capture is left in the crash-tolerant form: readable, not finished. */
    vor_reader *r = open_or_fail(path);
    read_capture got = {0};
    collect_frames(r, &got);
    assert_int_equal(got.last, VOR_READ_NOTHING_YET);
    read_capture_free(&got);
    vor_reader_close(r);
    unlink(path);
}

/* ---- Bad input ---- */

static vor_read_status read_bytes(const uint8_t *bytes, size_t size, char *error, size_t cap, uint32_t *frames) {
    const char *path = temp_path(".vor");
    write_file(path, bytes, size);
    vor_reader *r = open_or_fail(path);
    read_capture got = {0};
    collect_frames(r, &got);
    snprintf(error, cap, "%s", got.error);
    *frames = got.n_frames;
    vor_read_status last = got.last;
    read_capture_free(&got);
    vor_reader_close(r);
    unlink(path);
    return last;
}

static void bad_input_gives_clear_errors(void **state) {
    (void)state;
    size_t size;
    uint8_t *good = make_capture(&size, 3);
    size_t offsets[8];
    uint32_t n = record_offsets(good, size, offsets, 8);
    assert_int_equal(n, 4);
    uint8_t *bad = malloc(size);
    char err[1200];
    uint32_t frames;

    const char text[] = "time,value\n1,2\n3,4\n";
    assert_int_equal(read_bytes((const uint8_t *)text, sizeof text - 1, err, sizeof err, &frames), VOR_READ_ERROR);
    assert_non_null(strstr(err, "not a vor capture"));
    assert_non_null(strstr(err, "at byte 0"));

    /* Short garbage is recognised at once; a short prefix of the magic waits. */
    assert_int_equal(read_bytes((const uint8_t *)"PK\x03", 3, err, sizeof err, &frames), VOR_READ_ERROR);
    assert_int_equal(read_bytes(good, 5, err, sizeof err, &frames), VOR_READ_NOTHING_YET);
    assert_int_equal(read_bytes(good, 0, err, sizeof err, &frames), VOR_READ_NOTHING_YET);
    /* A header cut short waits (it is written with one write: a capture being created). */
    assert_int_equal(read_bytes(good, 18, err, sizeof err, &frames), VOR_READ_NOTHING_YET);
    assert_int_equal(read_bytes(good, offsets[0] - 1, err, sizeof err, &frames), VOR_READ_NOTHING_YET);

    memcpy(bad, good, size);
    bad[8] = 2; /* major version 2 */
    assert_int_equal(read_bytes(bad, size, err, sizeof err, &frames), VOR_READ_ERROR);
    assert_non_null(strstr(err, "format version 2.1"));

    /* Every damaged byte of the header is an error naming the problem, never a wait. */
    for (size_t i = 0; i < offsets[0]; i++) {
        memcpy(bad, good, size);
        bad[i] ^= 0x5A;
        vor_read_status st = read_bytes(bad, size, err, sizeof err, &frames);
        if (st != VOR_READ_ERROR || frames != 0 ||
            (strstr(err, "header check value does not match") == NULL && strstr(err, "damaged header") == NULL &&
             strstr(err, "not a vor capture") == NULL && strstr(err, "format version") == NULL))
            fail_msg("header byte %zu ^ 0x5a: status %d after %u frames: %s", i, st, frames, err);
    }
    /* B in particular: a damaged header size is never taken for a header still arriving. */
    for (size_t i = 12; i < 16; i++) {
        memcpy(bad, good, size);
        bad[i] ^= 0x40;
        assert_int_equal(read_bytes(bad, size, err, sizeof err, &frames), VOR_READ_ERROR);
        assert_non_null(strstr(err, "header size field fails its check"));
    }
    free(bad);
    free(good);
}

/* CRC-32C against its published check value and a bitwise reference, whole and in pieces. */
static uint32_t crc32c_bitwise(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static void crc32c_matches_its_definition(void **state) {
    (void)state;
    assert_int_equal(vor_crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(vor_crc32c_portable(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(vor_crc32c(0, "", 0), 0);
    uint8_t data[1027];
    uint64_t x = 0x243F6A8885A308D3ull;
    for (size_t i = 0; i < sizeof data; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        data[i] = (uint8_t)(x >> 56);
    }
    for (size_t n = 0; n <= sizeof data; n += (n < 40 ? 1 : 97)) {
        size_t len = n > sizeof data - 3 ? sizeof data - 3 : n; /* from an odd address: unaligned words */
        uint32_t want = crc32c_bitwise(data + 3, len);
        assert_int_equal(vor_crc32c(0, data + 3, len), want);
        assert_int_equal(vor_crc32c_portable(0, data + 3, len), want);
        size_t half = len / 3;
        assert_int_equal(vor_crc32c(vor_crc32c(0, data + 3, half), data + 3 + half, len - half), want);
        assert_int_equal(vor_crc32c_portable(vor_crc32c(0, data + 3, half), data + 3 + half, len - half), want);
    }
}

static void memory_reader_bounds_what_it_holds(void **state) {
    (void)state;
    vor_reader *r = vor_reader_open_memory();
    static uint8_t chunk[1 << 20];
    memset(chunk, 0x89, sizeof chunk);
    size_t fed = 0;
    while (vor_reader_feed(r, chunk, sizeof chunk)) fed += sizeof chunk;
    assert_true(fed <= (size_t)VOR_READER_MAX_RECORD_BYTES + (1u << 20));
    assert_true(fed >= (size_t)VOR_READER_MAX_RECORD_BYTES);
    vor_reader_frame f;
    assert_int_equal(vor_reader_next(r, &f), VOR_READ_ERROR); /* and it is not a capture */
    assert_int_equal(vor_reader_feed(r, chunk, 1), 0);        /* nothing taken after an error */
    vor_reader_close(r);
    /* A file reader refuses feeding. */
    assert_int_equal(vor_reader_feed(NULL, chunk, 1), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(round_trip_preserves_every_frame_value_scope_and_name, capture_teardown),
        cmocka_unit_test_teardown(metrics_only_by_default_and_flame_gating, capture_teardown),
        cmocka_unit_test_teardown(bad_settings_warn_once_each_and_the_program_runs_on, capture_teardown),
        cmocka_unit_test_teardown(unwritable_path_warns_once_and_the_program_runs_on, capture_teardown),
        cmocka_unit_test_teardown(torn_tail_at_every_byte_of_the_last_record, capture_teardown),
        cmocka_unit_test_teardown(reader_tails_a_capture_another_process_is_writing, capture_teardown),
        cmocka_unit_test_teardown(killed_writer_leaves_every_complete_record_readable, capture_teardown),
        cmocka_unit_test_teardown(forked_child_leaves_the_parents_files_alone, capture_teardown),
        cmocka_unit_test_teardown(logger_that_exits_inside_a_frame_mark_does_not_hang, capture_teardown),
        cmocka_unit_test_teardown(bad_input_gives_clear_errors, capture_teardown),
        cmocka_unit_test(crc32c_matches_its_definition),
        cmocka_unit_test(memory_reader_bounds_what_it_holds),
    };
    return cmocka_run_group_tests_name("capture", tests, NULL, NULL);
}

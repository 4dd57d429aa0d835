/* test_process_name.c: one name for a process in every output (vor_process_name).
 *
 *   test_safety_process_name native        the capture's name is the kernel's name of the
 *                                          process; a non-ASCII name the kernel cut in the
 *                                          middle of a character is cut at the last whole
 *                                          one (before: the capture stored a lone byte)
 *   test_safety_process_name trace         the VOR_TRACE process_name event says the same
 *                                          as the capture (needs chrome_trace.c to ask
 *                                          vor_process_name)
 *   test_safety_process_name wasm FILE.cjs the wasm program under node: its capture is
 *                                          named after the script, as the native build
 *   test_safety_process_name wasm-trace FILE.cjs   ... and its trace says the same
 *
 * Programs run as children: this program itself (re-executed under another name, in
 * "record" mode), or node.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chrome_check.h"
#include "child.h"
#include "vor/reader.h"

#define E_ACUTE "\xC3\xA9"

static const char *self_path;
static const char *wasm_program;

/* The process name in a capture's header (copied into out). */
static void capture_process_name(const char *path, char *out, size_t cap) {
    char err[1024];
    vor_reader *r = vor_reader_open(path, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(vor_reader_poll_header(r), 1);
    snprintf(out, cap, "%s", vor_reader_get_info(r)->process);
    vor_reader_close(r);
}

/* The process_name event of a strict trace (hex of its name, copied into out). */
static void trace_process_name_hex(const char *path, char *out, size_t cap) {
    trace_dump d;
    assert_int_equal(check_trace("strict", path, &d), 0);
    const char *line = NULL;
    for (size_t i = 0; i < d.n && !line; i++)
        if (strstr(d.lines[i], " process_name ")) line = d.lines[i];
    assert_non_null(line);
    snprintf(out, cap, "%s", strstr(line, " process_name ") + strlen(" process_name "));
    trace_dump_free(&d);
}

/* "record" mode: a session with the outputs the environment asks for, two frames. */
static int record_two_frames(void) {
    vor_enable();
    for (int i = 0; i < 2; i++) {
        { VOR_SCOPE("scope"); }
        vor_frame_mark();
    }
    vor_shutdown();
    return 0;
}

typedef struct exec_args {
    const char *program; /* run as argv[0] */
    const char *argv1;
    const char *capture, *trace;
} exec_args;

static void exec_recording(void *arg) {
    const exec_args *a = arg;
    setenv("VOR_RECORD", a->capture, 1);
    setenv("VOR_RECORD_FLAME", "1", 1);
    setenv("VOR_TRACE", a->trace, 1);
    if (strcmp(a->argv1, "node") == 0) {
        execl(VOR_NODE, "node", a->program, (char *)NULL);
    } else {
        execl(a->program, a->program, a->argv1, (char *)NULL);
    }
    _exit(95);
}

/* Runs `program` recording both outputs; fills the paths. */
static void run_recording(const char *program, const char *argv1, char *capture, char *trace) {
    snprintf(capture, 512, "%s", safety_temp_path(".vor"));
    snprintf(trace, 512, "%s", safety_temp_path(".json"));
    exec_args a = {program, argv1, capture, trace};
    child_result r;
    run_child(exec_recording, &a, &r);
    if (r.err[0]) fprintf(stderr, "child stderr:\n%s", r.err);
    assert_int_equal(r.stuck, 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_status, 0);
    child_result_free(&r);
}

/* A symlink to this program named "éééééééé" (16 bytes), in the test's directory. */
static void accented_link(char *link_path) {
    snprintf(link_path, 512, "%s", test_path(E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE));
    char target[4096];
    ssize_t n = readlink("/proc/self/exe", target, sizeof target - 1);
    assert_true(n > 0);
    target[n] = '\0';
    assert_int_equal(symlink(target, link_path), 0);
}

static void native_name(void **state) {
    (void)state;
    /* This program, as itself: the kernel's name for it. */
    char capture[512], trace[512], name[512];
    run_recording(self_path, "record", capture, trace);
    capture_process_name(capture, name, sizeof name);
    char comm[64] = "";
    FILE *f = fopen("/proc/self/comm", "r");
    assert_non_null(f);
    assert_non_null(fgets(comm, sizeof comm, f));
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    assert_string_equal(name, comm);
    assert_string_equal(vor_process_name(), comm);
    unlink(capture);
    unlink(trace);

    /* As "éééééééé" (16 bytes): the kernel keeps 15, seven "é" and half of one. */
    char link_path[512];
    accented_link(link_path);
    run_recording(link_path, "record", capture, trace);
    capture_process_name(capture, name, sizeof name);
    assert_string_equal(name, E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE);
    unlink(link_path);
    unlink(capture);
    unlink(trace);
}

/* The trace names the process as the capture does. */
static void check_same_name(const char *capture, const char *trace) {
    char name[512], trace_hex[1100];
    capture_process_name(capture, name, sizeof name);
    trace_process_name_hex(trace, trace_hex, sizeof trace_hex);
    assert_string_equal(trace_hex, hex_of(name));
}

static void trace_says_the_same(void **state) {
    (void)state;
    char capture[512], trace[512], link_path[512];
    run_recording(self_path, "record", capture, trace);
    check_same_name(capture, trace);
    accented_link(link_path);
    run_recording(link_path, "record", capture, trace);
    check_same_name(capture, trace);
    unlink(link_path);
    unlink(capture);
    unlink(trace);
}

/* The script's name without ".cjs": what the native build of the same program is called. */
static const char *script_name(void) {
    static char name[512];
    const char *base = strrchr(wasm_program, '/');
    snprintf(name, sizeof name, "%s", base ? base + 1 : wasm_program);
    char *dot = strrchr(name, '.');
    if (dot) *dot = '\0';
    return name;
}

static void wasm_name(void **state) {
    (void)state;
    assert_int_equal(access(wasm_program, R_OK), 0); /* build the wasm flavour first */
    char capture[512], trace[512], name[512];
    run_recording(wasm_program, "node", capture, trace);
    capture_process_name(capture, name, sizeof name);
    assert_string_equal(name, script_name());
    unlink(capture);
    unlink(trace);
}

static void wasm_trace_says_the_same(void **state) {
    (void)state;
    assert_int_equal(access(wasm_program, R_OK), 0);
    char capture[512], trace[512];
    run_recording(wasm_program, "node", capture, trace);
    check_same_name(capture, trace);
    unlink(capture);
    unlink(trace);
}

int main(int argc, char **argv) {
    self_path = argv[0];
    if (argc == 2 && strcmp(argv[1], "record") == 0) return record_two_frames();
    int failed = 2;
    if (argc == 2 && strcmp(argv[1], "native") == 0) {
        const struct CMUnitTest tests[] = {cmocka_unit_test(native_name)};
        failed = cmocka_run_group_tests(tests, NULL, NULL);
    } else if (argc == 2 && strcmp(argv[1], "trace") == 0) {
        const struct CMUnitTest tests[] = {cmocka_unit_test(trace_says_the_same)};
        failed = cmocka_run_group_tests(tests, NULL, NULL);
    } else if (argc == 3 && strcmp(argv[1], "wasm") == 0) {
        wasm_program = argv[2];
        const struct CMUnitTest tests[] = {cmocka_unit_test(wasm_name)};
        failed = cmocka_run_group_tests(tests, NULL, NULL);
    } else if (argc == 3 && strcmp(argv[1], "wasm-trace") == 0) {
        wasm_program = argv[2];
        const struct CMUnitTest tests[] = {cmocka_unit_test(wasm_trace_says_the_same)};
        failed = cmocka_run_group_tests(tests, NULL, NULL);
    } else {
        fprintf(stderr, "usage: %s native|trace|wasm FILE.cjs|wasm-trace FILE.cjs\n", argv[0]);
    }
    remove_test_dir();
    return failed;
}

/* process_info.c: the name of the process, one for every output.
 *
 * The .vor header and the Chrome trace's process_name event both name the process, and
 * both ask here, so one run carries one name everywhere (in wasm they used to differ:
 * "program" in the capture, "vor (WebAssembly)" in the trace).
 *
 * Natively the name is the kernel's name for the process, /proc/self/comm: what ps and
 * top show, and what prctl(PR_SET_NAME) changes. The kernel keeps 15 bytes of it and may
 * cut a character in two; when the name is such a cut of the program's file name, it is
 * cut again at the last whole character (utf8.h), so outputs never hold half of one.
 * Without /proc: the program's file name.
 *
 * In wasm it is the program's file name as Emscripten gives it (argv[0]: under node the
 * script, e.g. training_loop.cjs) without its .js, .cjs or .mjs, so that a native run and
 * its wasm build under node have the same name; a page has no file name (Emscripten's
 * "this.program") and is named "wasm program".
 *
 * Read once per process, by the first output that asks (at a session's start).
 *
 * The producer ("vor VERSION PLATFORM") is written here too, for the same reason: the
 * capture writer and the live upload write the same header.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "utf8.h"
#include "vor_internal.h"

#define NAME_BYTES 256

static char name[NAME_BYTES];
static pthread_once_t name_once = PTHREAD_ONCE_INIT;

/* The program's file name without its directory (glibc and Emscripten's musl). */
static const char *file_name(void) {
    const char *n = program_invocation_short_name;
    return n && *n ? n : "program";
}

#if defined(VOR_PLATFORM_LINUX)
static void read_name(void) {
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, name, sizeof name - 1) : -1;
    if (fd >= 0) close(fd);
    while (n > 0 && (name[n - 1] == '\n' || name[n - 1] == '\r')) n--;
    if (n <= 0) {
        snprintf(name, sizeof name, "%s", file_name());
        return;
    }
    name[n] = '\0';
    /* The kernel's cut of a longer file name: cut it at a character boundary instead. */
    const char *full = file_name();
    if (strlen(full) > (size_t)n && strncmp(full, name, (size_t)n) == 0) name[vor_utf8_cut(full, (size_t)n)] = '\0';
}
#else
static void read_name(void) {
    const char *full = file_name();
    if (strcmp(full, "this.program") == 0) full = "wasm program";
    size_t n = vor_utf8_cut(full, sizeof name - 1);
    static const char *const scripts[] = {".cjs", ".mjs", ".js"};
    for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
        size_t k = strlen(scripts[i]);
        if (n > k && memcmp(full + n - k, scripts[i], k) == 0) {
            n -= k;
            break;
        }
    }
    memcpy(name, full, n);
    name[n] = '\0';
}
#endif

const char *vor_process_name(void) {
    pthread_once(&name_once, read_name);
    return name;
}

const char *vor_producer_name(void) {
#if defined(VOR_PLATFORM_WASM)
    return "vor " VOR_VERSION_STRING " emscripten-wasm32";
#elif defined(__x86_64__)
    return "vor " VOR_VERSION_STRING " linux-x86_64";
#elif defined(__aarch64__)
    return "vor " VOR_VERSION_STRING " linux-aarch64";
#else
    return "vor " VOR_VERSION_STRING " linux-other";
#endif
}

/* bench_cli.c: figures for the `vor` command on large captures (docs/PERFORMANCE.md).
 *
 *     bench_cli [FRAMES_METRICS [FRAMES_FLAME]]     defaults 1000000 and 20000
 *
 * Writes two captures in a temporary directory through the real writer (this program is
 * instrumented and runs with VOR_RECORD set): one metrics-only, one with flame frames of
 * 49 scopes (1 + 8 + 8 x 5 nested). Then measures:
 *   - the reader alone (in-process): frames/s metrics-only (target >= 2M), and frames/s
 *     and scopes/s with flame frames;
 *   - the `vor` binary (spawned, as users run it): `export --format chrome` in MB/s of
 *     JSON (target >= 100 MB/s; counted from a pipe, so no disk in the way), `export
 *     --format folded`, `export --format csv` and `summary` in seconds and frames/s.
 * Prints figures, asserts nothing. Temporary files are removed. VOR_BENCH_VOR=path runs
 * another `vor` binary than the one built beside this benchmark.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vor/reader.h"
#include "vor/vor.h"

extern char **environ;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void write_capture(const char *path, long frames, int flame) {
    setenv("VOR_RECORD", path, 1);
    setenv("VOR_RECORD_FLAME", flame ? "1" : "0", 1);
    vor_record_metric_unit("loss", "nats");
    vor_enable();
    for (long i = 0; i < frames; i++) {
        if (flame) {
            VOR_SCOPE("frame");
            for (int s = 0; s < 8; s++) {
                VOR_SCOPE("system");
                for (int t = 0; t < 5; t++) {
                    VOR_SCOPE("task");
                }
            }
        }
        vor_record_metric("loss", 1.0 / (double)(i + 1));
        vor_record_metric("step", (double)i);
        vor_frame_mark();
    }
    vor_shutdown();
    unsetenv("VOR_RECORD");
    unsetenv("VOR_RECORD_FLAME");
}

static int read_capture(const char *path, uint64_t *frames, uint64_t *scopes, double *seconds) {
    char err[512];
    double t0 = now_s();
    vor_reader *r = vor_reader_open(path, err, sizeof err);
    if (!r) {
        fprintf(stderr, "bench_cli: %s\n", err);
        return -1;
    }
    vor_reader_frame f;
    vor_read_status st;
    *frames = *scopes = 0;
    while ((st = vor_reader_next(r, &f)) == VOR_READ_FRAME) {
        (*frames)++;
        *scopes += f.n_scopes;
    }
    *seconds = now_s() - t0;
    if (st == VOR_READ_ERROR) fprintf(stderr, "bench_cli: %s\n", vor_reader_error(r));
    vor_reader_close(r);
    return st == VOR_READ_ERROR ? -1 : 0;
}

/* Runs `vor ARGS...`, counting its stdout bytes. Returns the exit status, -1 on failure. */
static int run_vor(char *const argv[], uint64_t *out_bytes, double *seconds) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    double t0 = now_s();
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        fprintf(stderr, "bench_cli: cannot run %s: %s\n", argv[0], strerror(rc));
        return -1;
    }
    static char buf[1 << 16];
    uint64_t total = 0;
    for (;;) {
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        total += (uint64_t)n;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    *seconds = now_s() - t0;
    *out_bytes = total;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void bench_command(const char *label, char *const argv[], uint64_t frames) {
    uint64_t bytes = 0;
    double s = 0;
    int rc = run_vor(argv, &bytes, &s);
    if (rc != 0) {
        printf("%-34s failed (status %d)\n", label, rc);
        return;
    }
    printf("%-34s %8.3f s  %7.2f M frames/s  %8.1f MB out  %7.1f MB/s\n", label, s, (double)frames / s / 1e6,
           (double)bytes / 1e6, (double)bytes / 1e6 / s);
}

int main(int argc, char **argv) {
    long metric_frames = argc > 1 ? atol(argv[1]) : 1000000;
    long flame_frames = argc > 2 ? atol(argv[2]) : 20000;
    if (metric_frames < 1 || flame_frames < 1) {
        fprintf(stderr, "usage: bench_cli [FRAMES_METRICS [FRAMES_FLAME]]\n");
        return 2;
    }
    char dir[] = "/tmp/vor-bench-cli-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_cli: mkdtemp");
        return 1;
    }
    char metrics_path[256], flame_path[256];
    snprintf(metrics_path, sizeof metrics_path, "%s/metrics.vor", dir);
    snprintf(flame_path, sizeof flame_path, "%s/flame.vor", dir);

    double t0 = now_s();
    write_capture(metrics_path, metric_frames, 0);
    double tw1 = now_s() - t0;
    t0 = now_s();
    write_capture(flame_path, flame_frames, 1);
    double tw2 = now_s() - t0;
    printf("capture, metrics only:  %ld frames, %.1f MB (written in %.2f s)\n", metric_frames,
           (double)file_size(metrics_path) / 1e6, tw1);
    printf("capture, flame frames:  %ld frames x 49 scopes, %.1f MB (written in %.2f s)\n", flame_frames,
           (double)file_size(flame_path) / 1e6, tw2);

    uint64_t frames, scopes;
    double s;
    if (read_capture(metrics_path, &frames, &scopes, &s) == 0)
        printf("%-34s %8.3f s  %7.2f M frames/s  (target >= 2)\n", "reader, metrics only", s, (double)frames / s / 1e6);
    if (read_capture(flame_path, &frames, &scopes, &s) == 0)
        printf("%-34s %8.3f s  %7.2f M frames/s  %7.2f M scopes/s\n", "reader, flame frames", s, (double)frames / s / 1e6,
               (double)scopes / s / 1e6);

    char *vor = getenv("VOR_BENCH_VOR") ? getenv("VOR_BENCH_VOR") : VOR_CLI_PATH;
    char *chrome[] = {vor, "export", flame_path, "--format", "chrome", NULL};
    char *folded[] = {vor, "export", flame_path, "--format", "folded", NULL};
    char *csv[] = {vor, "export", metrics_path, "--format", "csv", NULL};
    char *summary_m[] = {vor, "summary", metrics_path, NULL};
    char *summary_f[] = {vor, "summary", flame_path, NULL};
    bench_command("vor export --format chrome", chrome, (uint64_t)flame_frames);
    printf("%-34s (target >= 100 MB/s of JSON)\n", "");
    bench_command("vor export --format folded", folded, (uint64_t)flame_frames);
    bench_command("vor export --format csv (metrics)", csv, (uint64_t)metric_frames);
    bench_command("vor summary (metrics only)", summary_m, (uint64_t)metric_frames);
    bench_command("vor summary (flame frames)", summary_f, (uint64_t)flame_frames);

    remove(metrics_path);
    remove(flame_path);
    rmdir(dir);
    return 0;
}

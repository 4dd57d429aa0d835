/* fake_nvtx.c: an NVTX tool built by the tests, loaded by NVTX itself: a program started
 * with NVTX_INJECTION64_PATH naming this library has its first NVTX call dlopen it and
 * call InitializeInjectionNvtx2 with NVTX's export table, exactly as Nsight Systems'
 * injection library is loaded. It installs callbacks of the CORE2 (domain) module through
 * that table, the real NVTX v3 ABI (nvtxDetail/nvtxTypes.h), and logs what it receives.
 *
 * Environment:
 *   FAKE_NVTX_LOG=PATH   one line per event (below), written as they come (a mutex)
 *   FAKE_NVTX_MODE=M     fail_init: InitializeInjectionNvtx2 returns 0 (NVTX then makes
 *                        every call a no-op); no_pop: no DomainRangePop callback (a tool
 *                        without that entry point); default: all of the ones below
 *
 * Log lines: "init", "domain H NAME", "push TID H DEPTH NAME" (DEPTH: the thread's ranges
 * open before this one), "pop TID H DEPTH" (DEPTH: the thread's open ranges after; -1: a
 * pop with nothing open, which a correct program never makes), "mark TID H PAYLOAD NAME".
 * H is the domain's number (1 for the first created, 0 for the default domain).
 * Without FAKE_NVTX_LOG nothing is written (the bench's tool, whose calls cost a few
 * instructions each).
 */
#define NVTX_NO_IMPL
#include "nvtx3/nvToolsExt.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

static FILE *log_file;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int depth;
static int n_domains;
static struct fake_domain {
    int number;
} domains[16];

static int domain_number(nvtxDomainHandle_t h) {
    return h == NULL ? 0 : ((struct fake_domain *)(void *)h)->number;
}

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...) {
    if (log_file == NULL) return;
    va_list args;
    va_start(args, fmt);
    pthread_mutex_lock(&log_lock);
    vfprintf(log_file, fmt, args);
    fputc('\n', log_file);
    fflush(log_file);
    pthread_mutex_unlock(&log_lock);
    va_end(args);
}

static long tid(void) {
    return (long)syscall(SYS_gettid);
}

static const char *message(const nvtxEventAttributes_t *a) {
    if (a == NULL) return "(no attributes)";
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii != NULL) return a->message.ascii;
    return "(not ascii)";
}

static nvtxDomainHandle_t NVTX_API domain_create(const char *name) {
    pthread_mutex_lock(&log_lock);
    struct fake_domain *d = n_domains < 16 ? &domains[n_domains] : NULL;
    if (d != NULL) d->number = ++n_domains;
    pthread_mutex_unlock(&log_lock);
    if (d == NULL) return NULL;
    log_line("domain %d %s", d->number, name ? name : "(null)");
    return (nvtxDomainHandle_t)(void *)d;
}

static int NVTX_API range_push(nvtxDomainHandle_t h, const nvtxEventAttributes_t *a) {
    int before = depth++;
    if (log_file == NULL) return before; /* the bench's tool: no system call per range */
    log_line("push %ld %d %d %s", tid(), domain_number(h), before, message(a));
    return before;
}

static int NVTX_API range_pop(nvtxDomainHandle_t h) {
    int after = depth > 0 ? --depth : -1;
    if (log_file == NULL) return after;
    log_line("pop %ld %d %d", tid(), domain_number(h), after);
    return after;
}

static void NVTX_API mark(nvtxDomainHandle_t h, const nvtxEventAttributes_t *a) {
    unsigned long long payload = a && a->payloadType == NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 ? a->payload.ullValue : 0;
    log_line("mark %ld %d %llu %s", tid(), domain_number(h), payload, message(a));
}

static int install(NvtxFunctionTable table, unsigned size, int id, NvtxFunctionPointer fn) {
    if ((unsigned)id >= size || table[id] == NULL) return 0;
    *table[id] = fn;
    return 1;
}

API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
    const char *mode = getenv("FAKE_NVTX_MODE");
    if (mode == NULL) mode = "";
    const char *path = getenv("FAKE_NVTX_LOG");
    if (path != NULL && *path) log_file = fopen(path, "a");
    log_line("init");
    if (strcmp(mode, "fail_init") == 0) return 0;
    const NvtxExportTableCallbacks *callbacks = (const NvtxExportTableCallbacks *)get_export_table(NVTX_ETID_CALLBACKS);
    if (callbacks == NULL) return 0;
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || table == NULL) return 0;
    int ok = install(table, size, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)domain_create) &&
             install(table, size, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)range_push) &&
             install(table, size, NVTX_CBID_CORE2_DomainMarkEx, (NvtxFunctionPointer)mark);
    if (strcmp(mode, "no_pop") != 0) ok = ok && install(table, size, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)range_pop);
    return ok;
}

/* fake_nvml.c: a stand-in for the NVIDIA driver's libnvidia-ml.so.1, built by the tests
 * under that very name so that libvor's real path (dlopen of the soname, dlsym of each
 * entry point) loads it when the test puts its folder first on LD_LIBRARY_PATH.
 *
 * It implements the entry points vor uses, with NVML's signatures and return codes,
 * scripted by the file named in FAKE_NVML_SCRIPT (read by nvmlInit), one directive a line:
 *
 *   devices N                        GPUs (default 1, at most 8)
 *   init_error CODE                  nvmlInit returns CODE
 *   count_error CODE                 nvmlDeviceGetCount returns CODE
 *   value DEV METRIC BASE [STEP]     call k of METRIC on DEV returns BASE + STEP * k
 *   error DEV METRIC CODE [FROM]     calls FROM, FROM+1, ... return CODE (default FROM 0)
 *   lost DEV FROM                    every call on DEV from its FROM-th on: GPU_IS_LOST
 *   hang DEV METRIC AT               call AT blocks until fake_nvml_release()
 *   sleep_us N                       every device call sleeps N microseconds
 *   spin_us N                        every device call busy-waits N microseconds
 *   log PATH                         at unload, write the counters below to PATH
 *
 * METRIC: util mem power pcie_tx pcie_rx temp clock (units as NVML's: %, bytes, mW, KB/s,
 * C, MHz). Calls are counted per device and metric from 0. Unscripted values are 0.
 * The log says "init N", "shutdown N", "uninitialised N" (device calls made while NVML
 * was not initialised: vor must never make one) and "calls DEV METRIC N" lines.
 *
 * Variants leave entry points out (-DFAKE_NVML_OMIT_HANDLE, _OMIT_POWER_PCIE), as an old
 * or broken driver would. For the test programs: fake_nvml_calls(dev, metric),
 * fake_nvml_hanging() and fake_nvml_release() (found with dlopen RTLD_NOLOAD + dlsym).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

enum { SUCCESS = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2, GPU_IS_LOST = 15 };
enum { M_UTIL, M_MEM, M_POWER, M_PCIE_TX, M_PCIE_RX, M_TEMP, M_CLOCK, M_COUNT };
static const char *const metric_names[M_COUNT] = {"util", "mem", "power", "pcie_tx", "pcie_rx", "temp", "clock"};

#define MAX_DEVICES 8

typedef struct fake_device {
    int index;
    long long base[M_COUNT], step[M_COUNT];
    int error[M_COUNT];
    unsigned error_from[M_COUNT];
    long hang_at[M_COUNT]; /* -1: none */
    long lost_from;        /* -1: never */
    unsigned calls[M_COUNT]; /* atomic */
} fake_device;

static struct {
    int loaded;
    pid_t pid; /* the process that loaded the script: a forked child writes no log */
    int n_devices;
    int init_error, count_error;
    long sleep_us, spin_us;
    char log_path[512];
    fake_device devices[MAX_DEVICES];
} script;

static int refs;                /* nvmlInit - nvmlShutdown; atomic */
static unsigned inits, shutdowns, uninitialised; /* atomic */
static pthread_mutex_t hang_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hang_cond = PTHREAD_COND_INITIALIZER;
static int hanging, released;

static int metric_of(const char *name) {
    for (int m = 0; m < M_COUNT; m++)
        if (strcmp(name, metric_names[m]) == 0) return m;
    fprintf(stderr, "fake_nvml: unknown metric %s\n", name);
    exit(90);
}

static fake_device *device_of(int dev) {
    if (dev < 0 || dev >= MAX_DEVICES) {
        fprintf(stderr, "fake_nvml: bad device %d\n", dev);
        exit(90);
    }
    return &script.devices[dev];
}

static void load_script(void) {
    if (script.loaded) return;
    script.loaded = 1;
    script.pid = getpid();
    script.n_devices = 1;
    for (int d = 0; d < MAX_DEVICES; d++) {
        script.devices[d].index = d;
        script.devices[d].lost_from = -1;
        for (int m = 0; m < M_COUNT; m++) script.devices[d].hang_at[m] = -1;
    }
    const char *path = getenv("FAKE_NVML_SCRIPT");
    if (path == NULL) return;
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "fake_nvml: cannot open %s\n", path);
        exit(90);
    }
    char line[600], word[32], metric[32];
    while (fgets(line, sizeof line, f)) {
        int dev = 0, n = 0;
        long long a = 0, b = 0;
        if (line[0] == '#' || sscanf(line, "%31s", word) != 1) continue;
        if (strcmp(word, "devices") == 0 && sscanf(line, "%*s %d", &script.n_devices) == 1) continue;
        if (strcmp(word, "init_error") == 0 && sscanf(line, "%*s %d", &script.init_error) == 1) continue;
        if (strcmp(word, "count_error") == 0 && sscanf(line, "%*s %d", &script.count_error) == 1) continue;
        if (strcmp(word, "sleep_us") == 0 && sscanf(line, "%*s %ld", &script.sleep_us) == 1) continue;
        if (strcmp(word, "spin_us") == 0 && sscanf(line, "%*s %ld", &script.spin_us) == 1) continue;
        if (strcmp(word, "log") == 0 && sscanf(line, "%*s %511s", script.log_path) == 1) continue;
        if (strcmp(word, "value") == 0 && (n = sscanf(line, "%*s %d %31s %lld %lld", &dev, metric, &a, &b)) >= 3) {
            fake_device *d = device_of(dev);
            int m = metric_of(metric);
            d->base[m] = a;
            d->step[m] = n == 4 ? b : 0;
            continue;
        }
        if (strcmp(word, "error") == 0 && (n = sscanf(line, "%*s %d %31s %lld %lld", &dev, metric, &a, &b)) >= 3) {
            fake_device *d = device_of(dev);
            int m = metric_of(metric);
            d->error[m] = (int)a;
            d->error_from[m] = n == 4 ? (unsigned)b : 0;
            continue;
        }
        if (strcmp(word, "lost") == 0 && sscanf(line, "%*s %d %lld", &dev, &a) == 2) {
            device_of(dev)->lost_from = (long)a;
            continue;
        }
        if (strcmp(word, "hang") == 0 && sscanf(line, "%*s %d %31s %lld", &dev, metric, &a) == 3) {
            device_of(dev)->hang_at[metric_of(metric)] = (long)a;
            continue;
        }
        fprintf(stderr, "fake_nvml: bad line: %s", line);
        exit(90);
    }
    fclose(f);
    if (script.n_devices < 0 || script.n_devices > MAX_DEVICES) script.n_devices = MAX_DEVICES;
}

static void wait_us(void) {
    if (script.sleep_us > 0) {
        struct timespec t = {script.sleep_us / 1000000, (script.sleep_us % 1000000) * 1000};
        while (nanosleep(&t, &t) != 0) {
        }
    }
    if (script.spin_us > 0) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        do clock_gettime(CLOCK_MONOTONIC, &b);
        while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < script.spin_us);
    }
}

/* One device call: counts it, then answers as scripted. */
static int answer(void *handle, int m, unsigned long long *value) {
    if (__atomic_load_n(&refs, __ATOMIC_ACQUIRE) <= 0) {
        __atomic_fetch_add(&uninitialised, 1, __ATOMIC_RELAXED);
        return UNINITIALIZED;
    }
    fake_device *d = handle;
    if (d == NULL || d < script.devices || d >= script.devices + script.n_devices) return INVALID_ARGUMENT;
    unsigned k = __atomic_fetch_add(&d->calls[m], 1, __ATOMIC_ACQ_REL);
    wait_us();
    if (d->hang_at[m] == (long)k) {
        pthread_mutex_lock(&hang_lock);
        hanging = 1;
        while (!released) pthread_cond_wait(&hang_cond, &hang_lock);
        hanging = 0;
        pthread_mutex_unlock(&hang_lock);
    }
    if (d->lost_from >= 0 && (long)k >= d->lost_from) return GPU_IS_LOST;
    if (d->error[m] != 0 && k >= d->error_from[m]) return d->error[m];
    *value = (unsigned long long)(d->base[m] + d->step[m] * (long long)k);
    return SUCCESS;
}

/* ---- NVML's entry points ----------------------------------------------------------- */

API int nvmlInit_v2(void) {
    load_script();
    __atomic_fetch_add(&inits, 1, __ATOMIC_RELAXED);
    if (script.init_error) return script.init_error;
    __atomic_fetch_add(&refs, 1, __ATOMIC_ACQ_REL);
    return SUCCESS;
}

API int nvmlInit(void) { return nvmlInit_v2(); }

API int nvmlShutdown(void) {
    if (__atomic_load_n(&refs, __ATOMIC_ACQUIRE) <= 0) return UNINITIALIZED;
    __atomic_fetch_add(&shutdowns, 1, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&refs, 1, __ATOMIC_ACQ_REL);
    return SUCCESS;
}

API int nvmlDeviceGetCount_v2(unsigned int *count) {
    if (__atomic_load_n(&refs, __ATOMIC_ACQUIRE) <= 0) return UNINITIALIZED;
    if (script.count_error) return script.count_error;
    *count = (unsigned)script.n_devices;
    return SUCCESS;
}

API int nvmlDeviceGetCount(unsigned int *count) { return nvmlDeviceGetCount_v2(count); }

#if !defined(FAKE_NVML_OMIT_HANDLE)
API int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **device) {
    if (__atomic_load_n(&refs, __ATOMIC_ACQUIRE) <= 0) return UNINITIALIZED;
    if (index >= (unsigned)script.n_devices || device == NULL) return INVALID_ARGUMENT;
    *device = &script.devices[index];
    return SUCCESS;
}

API int nvmlDeviceGetHandleByIndex(unsigned int index, void **device) {
    return nvmlDeviceGetHandleByIndex_v2(index, device);
}
#endif

API int nvmlDeviceGetUtilizationRates(void *device, unsigned int *rates /* nvmlUtilization_t */) {
    unsigned long long v = 0;
    int r = answer(device, M_UTIL, &v);
    if (r == SUCCESS) {
        rates[0] = (unsigned)v; /* gpu */
        rates[1] = 0;           /* memory */
    }
    return r;
}

API int nvmlDeviceGetMemoryInfo(void *device, unsigned long long *memory /* nvmlMemory_t */) {
    unsigned long long v = 0;
    int r = answer(device, M_MEM, &v);
    if (r == SUCCESS) {
        memory[0] = 80000000000ull; /* total */
        memory[1] = memory[0] - v;  /* free */
        memory[2] = v;              /* used */
    }
    return r;
}

#if !defined(FAKE_NVML_OMIT_POWER_PCIE)
API int nvmlDeviceGetPowerUsage(void *device, unsigned int *milliwatts) {
    unsigned long long v = 0;
    int r = answer(device, M_POWER, &v);
    if (r == SUCCESS) *milliwatts = (unsigned)v;
    return r;
}

API int nvmlDeviceGetPcieThroughput(void *device, int counter, unsigned int *kb_per_s) {
    if (counter != 0 && counter != 1) return INVALID_ARGUMENT;
    unsigned long long v = 0;
    int r = answer(device, counter == 0 ? M_PCIE_TX : M_PCIE_RX, &v);
    if (r == SUCCESS) *kb_per_s = (unsigned)v;
    return r;
}
#endif

API int nvmlDeviceGetTemperature(void *device, int sensor, unsigned int *celsius) {
    if (sensor != 0) return INVALID_ARGUMENT; /* NVML_TEMPERATURE_GPU */
    unsigned long long v = 0;
    int r = answer(device, M_TEMP, &v);
    if (r == SUCCESS) *celsius = (unsigned)v;
    return r;
}

API int nvmlDeviceGetClockInfo(void *device, int type, unsigned int *mhz) {
    if (type != 1) return INVALID_ARGUMENT; /* NVML_CLOCK_SM */
    unsigned long long v = 0;
    int r = answer(device, M_CLOCK, &v);
    if (r == SUCCESS) *mhz = (unsigned)v;
    return r;
}

API const char *nvmlErrorString(int code) {
    switch (code) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 9: return "Driver Not Loaded";
    case 15: return "GPU is lost";
    default: return "Unknown Error";
    }
}

/* ---- For the test programs ---------------------------------------------------------- */

API unsigned fake_nvml_calls(unsigned dev, const char *metric) {
    if (dev >= MAX_DEVICES) return 0;
    return __atomic_load_n(&script.devices[dev].calls[metric_of(metric)], __ATOMIC_ACQUIRE);
}

API int fake_nvml_hanging(void) {
    pthread_mutex_lock(&hang_lock);
    int h = hanging;
    pthread_mutex_unlock(&hang_lock);
    return h;
}

API void fake_nvml_release(void) {
    pthread_mutex_lock(&hang_lock);
    released = 1;
    pthread_cond_broadcast(&hang_cond);
    pthread_mutex_unlock(&hang_lock);
}

__attribute__((destructor)) static void write_log(void) {
    if (!script.log_path[0] || getpid() != script.pid) return;
    FILE *f = fopen(script.log_path, "w");
    if (f == NULL) return;
    fprintf(f, "init %u\nshutdown %u\nuninitialised %u\n", __atomic_load_n(&inits, __ATOMIC_RELAXED),
            __atomic_load_n(&shutdowns, __ATOMIC_RELAXED), __atomic_load_n(&uninitialised, __ATOMIC_RELAXED));
    for (int d = 0; d < script.n_devices; d++)
        for (int m = 0; m < M_COUNT; m++)
            fprintf(f, "calls %d %s %u\n", d, metric_names[m],
                    __atomic_load_n(&script.devices[d].calls[m], __ATOMIC_RELAXED));
    fclose(f);
}

/* gpu_nvml.c: NVML (libnvidia-ml.so.1, the NVIDIA driver's management library) loaded at
 * run time.
 *
 * vor is never linked against NVML and needs no NVIDIA header or toolkit to build: the
 * library is opened with dlopen by its soname, as the driver installs it, and each entry
 * point is looked up with dlsym and called through a pointer whose type is written here
 * from NVML's documented C API (the structures vor reads are NVML's first versions, which
 * every driver keeps). A machine without the driver has no such library: that is not an
 * error, there are simply no GPU columns. The library is never closed: a poller thread
 * left behind in a driver call (gpu_poller.c) must not lose the code it runs.
 *
 * The `_v2` entry points are preferred, as nvml.h maps them; drivers older than them have
 * the unversioned ones, used as a fallback. A reading whose entry point is missing is left
 * out (no column); a missing entry point that every reading needs makes NVML unusable.
 */
#include "platform.h"

#if defined(VOR_PLATFORM_LINUX)

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gpu.h"

#define NVML_SONAME "libnvidia-ml.so.1"

/* nvml.h: nvmlUtilization_t, nvmlMemory_t (v1). */
typedef struct nvml_utilization {
    unsigned int gpu;
    unsigned int memory;
} nvml_utilization;
typedef struct nvml_memory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvml_memory;

/* nvml.h's enumerations passed by value (C enums: int-sized). */
enum { NVML_TEMPERATURE_GPU = 0, NVML_CLOCK_SM = 1, NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };

typedef struct nvml_api {
    int (*init)(void);
    int (*shutdown)(void);
    int (*device_count)(unsigned int *);
    int (*device_by_index)(unsigned int, void **);
    int (*utilization)(void *, nvml_utilization *);
    int (*memory)(void *, nvml_memory *);
    int (*power)(void *, unsigned int *);
    int (*pcie)(void *, int, unsigned int *);
    int (*temperature)(void *, int, unsigned int *);
    int (*clock)(void *, int, unsigned int *);
    const char *(*error_string)(int);
} nvml_api;

static nvml_api nvml;

/* The entry point `name`, else `fallback` (may be NULL). */
static void *symbol(void *lib, const char *name, const char *fallback) {
    void *p = dlsym(lib, name);
    if (p == NULL && fallback) p = dlsym(lib, fallback);
    return p;
}

int vor_nvml_open(char *why, size_t cap) {
    why[0] = '\0';
    void *lib = dlopen(NVML_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *err = dlerror();
        /* No such file anywhere on the search path: no NVIDIA driver, nothing to report. */
        if (err && strstr(err, "No such file or directory") == NULL)
            snprintf(why, cap, "%s could not be loaded: %s", NVML_SONAME, err);
        return 0;
    }
    static const struct {
        const char *name, *fallback;
        size_t offset;
        int required;
    } entries[] = {
        {"nvmlInit_v2", "nvmlInit", offsetof(nvml_api, init), 1},
        {"nvmlShutdown", NULL, offsetof(nvml_api, shutdown), 1},
        {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", offsetof(nvml_api, device_count), 1},
        {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", offsetof(nvml_api, device_by_index), 1},
        {"nvmlDeviceGetUtilizationRates", NULL, offsetof(nvml_api, utilization), 0},
        {"nvmlDeviceGetMemoryInfo", NULL, offsetof(nvml_api, memory), 0},
        {"nvmlDeviceGetPowerUsage", NULL, offsetof(nvml_api, power), 0},
        {"nvmlDeviceGetPcieThroughput", NULL, offsetof(nvml_api, pcie), 0},
        {"nvmlDeviceGetTemperature", NULL, offsetof(nvml_api, temperature), 0},
        {"nvmlDeviceGetClockInfo", NULL, offsetof(nvml_api, clock), 0},
        {"nvmlErrorString", NULL, offsetof(nvml_api, error_string), 0},
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        void *p = symbol(lib, entries[i].name, entries[i].fallback);
        if (p == NULL && entries[i].required) {
            memset(&nvml, 0, sizeof nvml);
            snprintf(why, cap, "%s has no %s", NVML_SONAME, entries[i].name);
            return 0;
        }
        /* A data pointer from dlsym stored as the function pointer it is (POSIX). */
        memcpy((char *)&nvml + entries[i].offset, &p, sizeof p);
    }
    int code = nvml.init();
    if (code != VOR_NVML_SUCCESS) {
        snprintf(why, cap, "nvmlInit failed: %s (NVML error %d)", vor_nvml_error_text(code), code);
        return 0;
    }
    return 1;
}

int vor_nvml_init(void) {
    return nvml.init ? nvml.init() : VOR_NVML_ERROR_FUNCTION_NOT_FOUND;
}

void vor_nvml_shutdown(void) {
    if (nvml.shutdown) nvml.shutdown();
}

uint32_t vor_nvml_device_count(int *code) {
    unsigned int n = 0;
    *code = nvml.device_count(&n);
    return *code == VOR_NVML_SUCCESS ? n : 0;
}

int vor_nvml_device(uint32_t index, void **handle) {
    *handle = NULL;
    int code = nvml.device_by_index(index, handle);
    if (code == VOR_NVML_SUCCESS && *handle == NULL) code = VOR_NVML_ERROR_INVALID_ARGUMENT;
    return code;
}

int vor_nvml_has(vor_gpu_metric metric) {
    switch (metric) {
    case VOR_GPU_UTIL: return nvml.utilization != NULL;
    case VOR_GPU_MEM: return nvml.memory != NULL;
    case VOR_GPU_POWER: return nvml.power != NULL;
    case VOR_GPU_PCIE: return nvml.pcie != NULL;
    case VOR_GPU_TEMP: return nvml.temperature != NULL;
    case VOR_GPU_CLOCK: return nvml.clock != NULL;
    default: return 0;
    }
}

int vor_nvml_read(void *handle, vor_gpu_metric metric, int64_t *raw) {
    if (!vor_nvml_has(metric)) return VOR_NVML_ERROR_FUNCTION_NOT_FOUND;
    unsigned int v = 0, rx = 0;
    int code;
    switch (metric) {
    case VOR_GPU_UTIL: {
        nvml_utilization u = {0, 0};
        code = nvml.utilization(handle, &u);
        v = u.gpu;
        break;
    }
    case VOR_GPU_MEM: {
        nvml_memory m = {0, 0, 0};
        code = nvml.memory(handle, &m);
        if (code == VOR_NVML_SUCCESS) *raw = m.used > (unsigned long long)INT64_MAX ? INT64_MAX : (int64_t)m.used;
        return code;
    }
    case VOR_GPU_POWER: code = nvml.power(handle, &v); break;
    case VOR_GPU_PCIE:
        code = nvml.pcie(handle, NVML_PCIE_UTIL_TX_BYTES, &v);
        if (code == VOR_NVML_SUCCESS) code = nvml.pcie(handle, NVML_PCIE_UTIL_RX_BYTES, &rx);
        if (code == VOR_NVML_SUCCESS) *raw = (int64_t)v + (int64_t)rx;
        return code;
    case VOR_GPU_TEMP: code = nvml.temperature(handle, NVML_TEMPERATURE_GPU, &v); break;
    case VOR_GPU_CLOCK: code = nvml.clock(handle, NVML_CLOCK_SM, &v); break;
    default: return VOR_NVML_ERROR_INVALID_ARGUMENT;
    }
    if (code == VOR_NVML_SUCCESS) *raw = (int64_t)v;
    return code;
}

const char *vor_nvml_error_text(int code) {
    const char *text = nvml.error_string ? nvml.error_string(code) : NULL;
    return text && *text ? text : "NVML error";
}

#endif /* VOR_PLATFORM_LINUX */

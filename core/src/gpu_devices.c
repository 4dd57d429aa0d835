/* gpu_devices.c: which GPUs and readings become system columns, decided once per process.
 *
 * Column ids are process-wide (columns.c: system columns first, then user metrics in the
 * order they are named, which may be before the first session), so the GPU columns are
 * fixed the first time the system columns are asked for: at the first vor_enable(), or
 * at an earlier vor_record_metric*(). That first call is the probe: it reads VOR_GPU (0
 * keeps NVML unloaded), loads NVML (gpu_nvml.c) and reads each reading of each device
 * once. A reading becomes a column when the driver has its entry point and does not say
 * it is unsupported on that device (a reading that fails otherwise still gets its column
 * and is absent while it fails); a device that is lost at the probe gets none. Devices
 * are taken in NVML's order, at most four (with six readings each they fill the format's
 * 32 system columns). The values read by the probe are the first sample, so the
 * first frame has them.
 *
 * Names: gpu_util, gpu_mem, gpu_power, pcie, gpu_temp, gpu_clock with one GPU; with more,
 * every column is named by the NVML index (the one nvidia-smi shows): gpu0_util,
 * gpu0_pcie, gpu1_util, ...
 *
 * Absent driver: no column at all and nothing said. A driver that is there but unusable
 * (missing entry points, nvmlInit failing, no device): no column and one info line.
 */
#include "platform.h"

#if defined(VOR_PLATFORM_LINUX)

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

static const struct {
    const char *suffix; /* gpuN_<suffix> */
    const char *single; /* the name with one GPU */
    const char *unit;
    double scale;
} metric_defs[VOR_GPU_METRIC_COUNT] = {
    [VOR_GPU_UTIL] = {"util", "gpu_util", "%", 1.0},
    [VOR_GPU_MEM] = {"mem", "gpu_mem", "MB", 1e-6},        /* bytes -> 10^6 bytes */
    [VOR_GPU_POWER] = {"power", "gpu_power", "W", 1e-3},   /* mW */
    [VOR_GPU_PCIE] = {"pcie", "pcie", "MB/s", 1.024e-3},  /* NVML's KB/s, KB = 1,024 bytes */
    [VOR_GPU_TEMP] = {"temp", "gpu_temp", "C", 1.0},
    [VOR_GPU_CLOCK] = {"clock", "gpu_clock", "MHz", 1.0},
};

#define FOUR_GPUS "left out, vor takes at most four GPUs (a capture holds 32 system columns)"

static vor_gpu_column columns[VOR_GPU_COLUMNS_MAX];
static uint32_t n_columns;
static struct {
    uint32_t index;
    void *handle;
} devices[VOR_GPU_DEVICES_MAX];
static uint32_t n_devices;
static int nvml_initialised; /* between a successful nvmlInit and its nvmlShutdown */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

vor_system_column_def vor_gpu_column_def(const vor_gpu_column *c) {
    vor_system_column_def d = {c->name, metric_defs[c->metric].unit, metric_defs[c->metric].scale, 0};
    return d;
}

/* VOR_GPU: unset or 1 = on, 0 = off; anything else is reported and ignored (on). */
static int gpu_wanted(void) {
    const char *text = getenv("VOR_GPU");
    if (text == NULL || *text == '\0' || strcmp(text, "1") == 0) return 1;
    if (strcmp(text, "0") == 0) return 0;
    vor_log_each(VOR_LOG_BAD_ENVIRONMENT, "VOR_GPU=\"%.40s\" must be 0 or 1; ignored", text);
    return 1;
}

/* An answer that means "this device does not have that reading", for good. */
static int unsupported(int code) {
    return code == VOR_NVML_ERROR_NOT_SUPPORTED || code == VOR_NVML_ERROR_NO_PERMISSION ||
           code == VOR_NVML_ERROR_FUNCTION_NOT_FOUND || code == VOR_NVML_ERROR_INVALID_ARGUMENT;
}

/* Appends what was left out to `notes` ("; " between items). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void note(char *notes, size_t cap, const char *fmt, ...) {
    size_t n = strlen(notes);
    if (n + 3 >= cap) return;
    if (n) {
        memcpy(notes + n, "; ", 3);
        n += 2;
    }
    va_list args;
    va_start(args, fmt);
    vsnprintf(notes + n, cap - n, fmt, args);
    va_end(args);
}

static void probe(void) {
    if (!gpu_wanted()) return;
    char why[256];
    if (!vor_nvml_open(why, sizeof why)) {
        if (why[0]) vor_log(VOR_LOG_GPU_UNAVAILABLE, "%s", why);
        return;
    }
    nvml_initialised = 1;
    int code = 0;
    uint32_t count = vor_nvml_device_count(&code);
    if (count == 0) {
        if (code != VOR_NVML_SUCCESS)
            vor_log(VOR_LOG_GPU_UNAVAILABLE, "nvmlDeviceGetCount failed: %s (NVML error %d)", vor_nvml_error_text(code),
                    code);
        else
            vor_log(VOR_LOG_GPU_UNAVAILABLE, "NVML sees no GPU");
        vor_nvml_shutdown();
        nvml_initialised = 0;
        return;
    }

    int64_t first[VOR_GPU_COLUMNS_MAX];
    uint32_t present = 0;
    char notes[400] = "";
    uint32_t d = 0;
    for (; d < count; d++) {
        void *handle = NULL;
        code = vor_nvml_device(d, &handle);
        if (code != VOR_NVML_SUCCESS) {
            note(notes, sizeof notes, "GPU %u: no handle (%s)", d, vor_nvml_error_text(code));
            continue;
        }
        vor_gpu_column found[VOR_GPU_METRIC_COUNT];
        int64_t raw[VOR_GPU_METRIC_COUNT];
        uint32_t k = 0, got = 0;
        int lost = 0;
        for (int m = 0; m < VOR_GPU_METRIC_COUNT && !lost; m++) {
            if (!vor_nvml_has((vor_gpu_metric)m)) continue;
            raw[k] = 0;
            code = vor_nvml_read(handle, (vor_gpu_metric)m, &raw[k]);
            if (code == VOR_NVML_ERROR_GPU_IS_LOST) lost = 1;
            if (lost || unsupported(code)) continue;
            found[k].device = d;
            found[k].metric = (vor_gpu_metric)m;
            if (count == 1)
                snprintf(found[k].name, sizeof found[k].name, "%s", metric_defs[m].single);
            else
                snprintf(found[k].name, sizeof found[k].name, "gpu%u_%s", d, metric_defs[m].suffix);
            if (code == VOR_NVML_SUCCESS) got |= 1u << k;
            k++;
        }
        if (lost) {
            note(notes, sizeof notes, "GPU %u: %s", d, vor_nvml_error_text(VOR_NVML_ERROR_GPU_IS_LOST));
            continue;
        }
        if (k == 0) {
            note(notes, sizeof notes, "GPU %u: %s", d, "supports none of the readings");
            continue;
        }
        if (n_columns + k > VOR_GPU_COLUMNS_MAX || n_devices == VOR_GPU_DEVICES_MAX) break;
        for (uint32_t i = 0; i < k; i++) {
            found[i].slot = n_devices;
            if (got & (1u << i)) present |= 1u << n_columns;
            first[n_columns] = raw[i];
            columns[n_columns++] = found[i];
        }
        devices[n_devices].index = d;
        devices[n_devices].handle = handle;
        n_devices++;
    }
    if (d + 1 == count)
        note(notes, sizeof notes, "GPU %u: %s", d, FOUR_GPUS);
    else if (d < count)
        note(notes, sizeof notes, "GPUs %u to %u: %s", d, count - 1, FOUR_GPUS);
    if (n_columns == 0) {
        vor_log(VOR_LOG_GPU_UNAVAILABLE, "no GPU has a reading vor can take (%s)", notes);
        vor_nvml_shutdown();
        nvml_initialised = 0;
        return;
    }
    if (notes[0]) vor_log(VOR_LOG_GPU_LEFT_OUT, "%s", notes);
    vor_gpu_publish_first(first, present);
}

uint32_t vor_gpu_columns(const vor_gpu_column **out) {
    pthread_once(&probe_once, probe);
    *out = columns;
    return n_columns;
}

uint32_t vor_gpu_devices_open(void **handles) {
    if (!nvml_initialised) {
        int code = vor_nvml_init();
        if (code != VOR_NVML_SUCCESS) {
            vor_log(VOR_LOG_GPU_UNAVAILABLE, "nvmlInit failed: %s (NVML error %d)", vor_nvml_error_text(code), code);
            return 0;
        }
        nvml_initialised = 1;
        /* Handles are only valid while NVML is initialised: ask again, by NVML index. */
        for (uint32_t s = 0; s < n_devices; s++)
            if (vor_nvml_device(devices[s].index, &devices[s].handle) != VOR_NVML_SUCCESS) devices[s].handle = NULL;
    }
    for (uint32_t s = 0; s < n_devices; s++) handles[s] = devices[s].handle;
    return n_devices;
}

void vor_gpu_devices_close(void) {
    if (!nvml_initialised) return;
    vor_nvml_shutdown();
    nvml_initialised = 0;
}

#endif /* VOR_PLATFORM_LINUX */

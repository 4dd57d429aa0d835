/* gpu.h: the GPU rows of a native build, as the system metrics see them.
 *
 * Three files, one job each:
 *   gpu_nvml.c     loads libnvidia-ml.so.1 at run time (dlopen; never linked, no header
 *                  needed to build) and turns each of its readings into one raw integer;
 *   gpu_devices.c  once per process, decides which GPUs and readings become system
 *                  columns (names, units, scales) and takes the first sample;
 *   gpu_poller.c   during a session, a background thread reads them at VOR_GPU_POLL_HZ and
 *                  publishes the latest sample, which each frame copies without waiting.
 * system_metrics_linux.c appends the columns to the platform's and the sample to each frame.
 */
#ifndef VOR_GPU_H
#define VOR_GPU_H

#include <stdint.h>

#include "vor_internal.h"

/* The readings, in column order per device. */
typedef enum vor_gpu_metric {
    VOR_GPU_UTIL,  /* % of time a kernel ran (nvmlDeviceGetUtilizationRates .gpu) */
    VOR_GPU_MEM,   /* bytes of device memory in use (nvmlDeviceGetMemoryInfo .used) */
    VOR_GPU_POWER, /* mW (nvmlDeviceGetPowerUsage) */
    VOR_GPU_PCIE,  /* KB/s sent + received (nvmlDeviceGetPcieThroughput TX + RX) */
    VOR_GPU_TEMP,  /* degrees C of the GPU die (nvmlDeviceGetTemperature) */
    VOR_GPU_CLOCK, /* MHz of the SM clock (nvmlDeviceGetClockInfo) */
    VOR_GPU_METRIC_COUNT
} vor_gpu_metric;

/* NVML's return codes that vor treats apart (nvml.h's values). */
enum {
    VOR_NVML_SUCCESS = 0,
    VOR_NVML_ERROR_INVALID_ARGUMENT = 2,
    VOR_NVML_ERROR_NOT_SUPPORTED = 3,
    VOR_NVML_ERROR_NO_PERMISSION = 4,
    VOR_NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    VOR_NVML_ERROR_GPU_IS_LOST = 15,
};

/* ---- gpu_nvml.c ----------------------------------------------------------------------- */

/* Loads the library and its entry points, then initialises NVML. Returns 1 on success;
 * 0 with `why` empty when there is no library at all (no NVIDIA driver: nothing to say),
 * 0 with `why` set when a library was found but cannot be used. Once per process. */
VOR_HIDDEN int vor_nvml_open(char *why, size_t cap);
/* nvmlInit again after vor_nvml_shutdown (a later session); an NVML return code. */
VOR_HIDDEN int vor_nvml_init(void);
VOR_HIDDEN void vor_nvml_shutdown(void);
/* Devices NVML sees; 0 on error (*code set). */
VOR_HIDDEN uint32_t vor_nvml_device_count(int *code);
/* The handle of device `index`; an NVML return code. */
VOR_HIDDEN int vor_nvml_device(uint32_t index, void **handle);
/* 1 if the library has the entry point(s) `metric` needs. */
VOR_HIDDEN int vor_nvml_has(vor_gpu_metric metric);
/* Reads one metric as its raw integer (units above); an NVML return code. */
VOR_HIDDEN int vor_nvml_read(void *handle, vor_gpu_metric metric, int64_t *raw);
/* NVML's text for a return code ("Unknown Error"), or a generic one. Never NULL. */
VOR_HIDDEN const char *vor_nvml_error_text(int code);

/* ---- gpu_devices.c -------------------------------------------------------------------- */

#define VOR_GPU_NAME_BYTES 24
/* Column budget: what the format's 32 system columns leave beside Linux's 5. */
#define VOR_GPU_COLUMNS_MAX 27u
/* Devices with columns: 27 columns hold four GPUs of six readings. */
#define VOR_GPU_DEVICES_MAX 4u

typedef struct vor_gpu_column {
    uint32_t slot;       /* which device of the column list (0 .. devices - 1) */
    uint32_t device;     /* its NVML index, as nvidia-smi numbers it */
    vor_gpu_metric metric;
    char name[VOR_GPU_NAME_BYTES];
} vor_gpu_column;

/* The GPU columns, decided on the first call (the NVML probe: VOR_GPU, the library, the
 * devices, which readings each supports, at most VOR_GPU_COLUMNS_MAX columns), in device
 * order; later calls return the same. Any thread. */
VOR_HIDDEN uint32_t vor_gpu_columns(const vor_gpu_column **out);
/* A column's name, unit and scale (raw units in vor_gpu_metric). */
VOR_HIDDEN vor_system_column_def vor_gpu_column_def(const vor_gpu_column *c);
/* For a session: NVML initialised (again, if a previous session shut it down) and the
 * handle of each column device in handles[slot] (NULL for one that is gone). Returns the
 * number of slots, 0 if NVML cannot be used. Frame lock held. */
VOR_HIDDEN uint32_t vor_gpu_devices_open(void **handles);
/* Shuts NVML down after a session (its poller stopped). Frame lock held. */
VOR_HIDDEN void vor_gpu_devices_close(void);

/* ---- gpu_poller.c --------------------------------------------------------------------- */

/* Starts the poller for a session (reads VOR_GPU_POLL_HZ); does nothing if it runs
 * already (a resume after vor_disable) or there are no GPU columns. Frame lock held. */
VOR_HIDDEN void vor_gpu_begin_session(void);
/* Stops it and waits for it (bounded: a driver call that does not return within a second
 * leaves the thread behind, and GPU values off for the process). Frame lock held. */
VOR_HIDDEN void vor_gpu_end_session(void);
/* Publishes the probe's first sample (gpu_devices.c), before any session. */
VOR_HIDDEN void vor_gpu_publish_first(const int64_t *raw, uint32_t present);
/* Copies the latest sample (raw per GPU column) and returns the mask of columns that have
 * a value in it: none that is older than the staleness bound. Never waits. Frame thread. */
VOR_HIDDEN uint32_t vor_gpu_sample(int64_t *raw);

#endif /* VOR_GPU_H */

/* system_metrics_wasm.c: the system columns of a WebAssembly build (browser or node).
 *
 *   frame_ms      wall time of the frame (performance.now() based)
 *   memory_mb     the JS heap in use: performance.memory.usedJSHeapSize in Chromium
 *                 (cached by the browser for ~50 ms; coarse on other origins than
 *                 localhost), process.memoryUsage().heapUsed under node. The browser gives
 *                 no RSS, so JS-heap sampling takes its place; absent where neither exists.
 *   wasm_heap_mb  wasm linear memory in use: the top of the heap (sbrk(0)). Growth of
 *                 linear memory barely moves the JS heap, hence its own column.
 *   io_ms, io_MB  I/O recorded with vor_record_io during the frame
 * There is no cpu_ms (no process CPU clock in a page) and no GPU column: a metric the
 * platform cannot supply is absent, never a row of zeros.
 */
#include "platform.h"

#if defined(VOR_PLATFORM_WASM)

#include <emscripten.h>
#include <unistd.h>

#include "vor_internal.h"

enum { COL_FRAME, COL_MEMORY, COL_WASM_HEAP, COL_IO_MS, COL_IO_MB, COL_COUNT };

static const vor_system_column_def wasm_columns[COL_COUNT] = {
    {"frame_ms", "ms", 1e-6, 0}, {"memory_mb", "MB", 1e-6, 1}, {"wasm_heap_mb", "MB", 1e-6, 1},
    {"io_ms", "ms", 1e-3, 0},    {"io_MB", "MB", 1e-6, 0},
};

/* Bytes of JS heap in use, or -1 where the environment does not say. Sampled at most every
 * 50 ms and cached in between: node's process.memoryUsage() costs tens of microseconds (it
 * also measures RSS), and Chromium refreshes performance.memory only that often anyway. */
EM_JS(double, vor_js_heap_used_bytes, (void), {
    var cache = Module['vorHeapSample'] || (Module['vorHeapSample'] = { at: -1e9, bytes: -1 });
    var now = (typeof performance !== 'undefined') ? performance.now() : Date.now();
    if (now - cache.at < 50) return cache.bytes;
    cache.at = now;
    if (typeof performance !== 'undefined' && performance.memory &&
        typeof performance.memory.usedJSHeapSize === 'number')
        cache.bytes = performance.memory.usedJSHeapSize;
    else if (typeof process !== 'undefined' && process.memoryUsage)
        cache.bytes = process.memoryUsage().heapUsed;
    else
        cache.bytes = -1;
    return cache.bytes;
});

const vor_system_column_def *vor_system_columns(uint32_t *count) {
    *count = COL_COUNT;
    return wasm_columns;
}

static uint64_t wasm_heap_bytes(void) {
    return (uint64_t)(uintptr_t)sbrk(0);
}

uint64_t vor_current_memory_bytes(void) {
    double js = vor_js_heap_used_bytes();
    return js >= 0 ? (uint64_t)js : wasm_heap_bytes();
}

void vor_system_begin_session(void) {
}

void vor_system_end_session(void) {
}

uint32_t vor_system_sample(int64_t *raw, int64_t frame_ns, uint64_t io_ns, uint64_t io_bytes) {
    uint32_t present = 1u << COL_FRAME;
    raw[COL_FRAME] = frame_ns;
    double js = vor_js_heap_used_bytes();
    if (js >= 0) {
        raw[COL_MEMORY] = (int64_t)js;
        present |= 1u << COL_MEMORY;
    }
    raw[COL_WASM_HEAP] = (int64_t)wasm_heap_bytes();
    raw[COL_IO_MS] = (int64_t)((io_ns + 500) / 1000); /* us */
    raw[COL_IO_MB] = (int64_t)io_bytes;
    present |= (1u << COL_WASM_HEAP) | (1u << COL_IO_MS) | (1u << COL_IO_MB);
    return present;
}

#endif /* VOR_PLATFORM_WASM */

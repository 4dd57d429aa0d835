/* panel_bridge.c: feeds the panel embedded in a page (web/embed.js, createInPageSource)
 * from the in-process frame ring.
 *
 * The page calls vor_wasm_panel_poll() once per animation frame. It copies the frame
 * views the ring gained since the last poll and hands each to JS (vor_js_panel_frame:
 * one call per frame, the view's bytes read straight out of linear memory), preceded by
 * declarations of whatever those frames name for the first time: columns (and units that
 * changed), sites, threads (new or renamed; thread_table.h), and once the clock's step
 * (vor_clock_get_info: the panel's clock chip). Polling rather than
 * pushing from vor_frame_mark keeps the page in control of when the panel does work, and
 * a page that stops polling costs nothing but the ring.
 *
 * The page's source is JavaScript that may throw or be missing: the JS library
 * (wasm/js/panel_bridge.js) catches, and this file then goes on as if nothing was
 * delivered. Each frame is offered once (the next index moves past it before the call,
 * so a failure never sends a frame twice); names count as declared only once a source
 * took them (after a failure, everything is declared again with the next frame, so no
 * name is lost). Without a source (Module.vorPanelSource unset), a poll skips the frames
 * and declares nothing: a source set later gets every name with its first frame. A throw is counted and reported once
 * through vor's logger (VOR_LOG_CONSUMER_FAILED, with the message); the poll returns normally.
 */
#if defined(__EMSCRIPTEN__)

#include <emscripten.h>
#include <stdlib.h>
#include <string.h>

#include "declarations_json.h"
#include "thread_table.h"
#include "vor_internal.h"

#define PANEL_RING_FRAMES 4000u /* frames the ring keeps for the page when it enabled none */
#define ERROR_BYTES 160u

/* What the JS library returns (wasm/js/panel_bridge.js has the same values). */
enum { JS_DELIVERED = 0, JS_THREW = 1, JS_NO_SOURCE = 2 };

extern int vor_js_panel_has_source(void);
extern int vor_js_panel_declarations(const char *json, char *error, uint32_t error_capacity);
extern int vor_js_panel_frame(const uint8_t *view, uint32_t size, char *error, uint32_t error_capacity);

static struct {
    int started;
    uint64_t next_index; /* first frame not yet offered */
    uint32_t columns_sent;
    const char *column_units[VOR_SYSTEM_COLUMNS_MAX + VOR_MAX_USER_COLUMNS];
    uint32_t sites_sent;
    int clock_sent; /* the clock (vor_clock_get_info) was declared */
    thread_table threads;
    uint8_t *view;
    size_t view_capacity;
    vor_declarations_json declarations;
    char error[ERROR_BYTES];
} bridge;

/* Everything is declared again with the next frame. */
static void forget_names(void) {
    bridge.columns_sent = 0;
    memset(bridge.column_units, 0, sizeof bridge.column_units);
    bridge.sites_sent = 0;
    bridge.clock_sent = 0;
    thread_table_clear(&bridge.threads);
}

static void declare_threads_of_view(const uint8_t *view) {
    uint32_t n_values, n_threads;
    memcpy(&n_values, view + 48, 4);
    memcpy(&n_threads, view + 52, 4);
    const uint8_t *table = view + 64 + (size_t)n_values * 16u;
    thread_table_make_room(&bridge.threads, n_threads);
    for (uint32_t t = 0; t < n_threads; t++) {
        uint32_t id;
        memcpy(&id, table + t * 8u, 4);
        char name[VOR_THREAD_NAME_BYTES];
        if (!vor_thread_name(id, name, sizeof name)) continue;
        if (thread_table_seen(&bridge.threads, id, name)) continue;
        vor_declarations_thread(&bridge.declarations, id, name);
    }
}

static void declare_names(void) {
    uint32_t columns = vor_column_count();
    for (uint32_t id = 0; id < columns && id < VOR_SYSTEM_COLUMNS_MAX + VOR_MAX_USER_COLUMNS; id++) {
        vor_column_info c;
        if (!vor_column_get(id, &c)) continue;
        if (id < bridge.columns_sent && bridge.column_units[id] == c.unit) continue;
        vor_declarations_column(&bridge.declarations, id, c.name, c.unit, c.is_system);
        bridge.column_units[id] = c.unit;
    }
    if (columns > bridge.columns_sent) bridge.columns_sent = columns;
    uint32_t sites = vor_site_count();
    for (uint32_t id = bridge.sites_sent + 1; id <= sites; id++) {
        const vor_site *s = vor_site_get(id);
        if (s) vor_declarations_site(&bridge.declarations, id, s->name, s->function, s->file, s->line, 0);
    }
    bridge.sites_sent = sites;
    if (!bridge.clock_sent) { /* the panel's clock chip */
        vor_clock_info clock;
        vor_clock_get_info(&clock);
        vor_declarations_clock(&bridge.declarations, clock.resolution_ns, clock.source, clock.cross_origin_isolated);
        bridge.clock_sent = 1;
    }
}

/* After a JS call: 1 if the source took it. A throw is counted and reported (once). */
static int delivered(int r, const char *what) {
    if (r == JS_DELIVERED) return 1;
    if (r == JS_THREW)
        vor_log(VOR_LOG_CONSUMER_FAILED, "the in-page panel source threw in %s: %s; the frame was skipped", what,
                bridge.error[0] ? bridge.error : "(no message)");
    return 0;
}

/* Sends the frames the ring gained since the last call; returns how many the source took. */
EMSCRIPTEN_KEEPALIVE int vor_wasm_panel_poll(void) {
    if (!bridge.started) {
        bridge.started = 1;
        if (vor_settings_now.frame_ring_frames == 0) vor_frame_ring_enable(PANEL_RING_FRAMES);
    }
    uint64_t oldest, newest;
    if (!vor_frame_ring_range(&oldest, &newest)) return 0;
    if (bridge.next_index < oldest || bridge.next_index > newest + 1) bridge.next_index = oldest;
    if (!vor_js_panel_has_source()) {
        bridge.next_index = newest + 1; /* nobody to show them to */
        return 0;
    }
    int sent = 0;
    while (bridge.next_index <= newest) {
        uint64_t i = bridge.next_index++; /* offered once, whatever JS does with it */
        size_t size = vor_frame_ring_copy(i, NULL, 0);
        if (size == 0) continue;
        if (size > bridge.view_capacity) {
            uint8_t *p = realloc(bridge.view, size);
            if (p == NULL) {
                vor_log(VOR_LOG_OUT_OF_MEMORY, "panel frame view of %zu bytes", size);
                break;
            }
            bridge.view = p;
            bridge.view_capacity = size;
        }
        if (vor_frame_ring_copy(i, bridge.view, bridge.view_capacity) != size) continue;
        vor_declarations_begin(&bridge.declarations);
        declare_names();
        declare_threads_of_view(bridge.view);
        const char *json = vor_declarations_end(&bridge.declarations);
        if (json) {
            bridge.error[0] = '\0';
            if (!delivered(vor_js_panel_declarations(json, bridge.error, ERROR_BYTES), "pushDeclarations")) {
                forget_names(); /* declared again with the next frame; this one would name unknowns */
                continue;
            }
        }
        bridge.error[0] = '\0';
        if (delivered(vor_js_panel_frame(bridge.view, (uint32_t)size, bridge.error, ERROR_BYTES), "pushFrame")) sent++;
    }
    return sent;
}

#endif /* __EMSCRIPTEN__ */

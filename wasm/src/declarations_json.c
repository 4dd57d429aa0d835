/* declarations_json.c: see declarations_json.h. Strings are cut as the capture writer
 * cuts them (names at VOR_MAX_NAME_BYTES, file paths at VOR_MAX_FILE_BYTES, at a UTF-8 character
 * boundary: core/src/utf8.h), so a live panel and a capture show one name the same way,
 * and escaped with the Chrome trace writer's escaper (valid UTF-8 out, whatever bytes
 * come in). */
#include "declarations_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chrome_json.h"
#include "utf8.h"
#include "vor/vor.h"

#define MAX_JSON_BYTES (16u << 20)

static void init(vor_out *o) {
    o->size = 0;
    o->failed = 0;
    o->max_capacity = MAX_JSON_BYTES;
}

void vor_declarations_begin(vor_declarations_json *d) {
    init(&d->columns);
    init(&d->sites);
    init(&d->threads);
    init(&d->clock);
    init(&d->costs);
    init(&d->text);
}

static void put_raw(vor_out *o, const char *s) {
    vor_out_bytes(o, s, strlen(s));
}

static void put_string(vor_out *o, const char *s, size_t max_bytes) {
    if (s == NULL) s = "";
    size_t n = vor_utf8_cut(s, max_bytes);
    vor_out_u8(o, '"');
    if (vor_out_reserve(o, 6 * n + 1)) o->size += vor_chrome_json_escape(s, n, (char *)o->data + o->size, NULL);
    vor_out_u8(o, '"');
}

static void put_uint(vor_out *o, uint64_t v) {
    char tmp[24];
    snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    put_raw(o, tmp);
}

static void open_entry(vor_out *o) {
    put_raw(o, o->size ? ",{" : "{");
}

void vor_declarations_column(vor_declarations_json *d, uint32_t id, const char *name, const char *unit, int is_system) {
    vor_out *o = &d->columns;
    open_entry(o);
    put_raw(o, "\"id\":");
    put_uint(o, id);
    put_raw(o, ",\"name\":");
    put_string(o, name, VOR_MAX_NAME_BYTES);
    put_raw(o, ",\"unit\":");
    put_string(o, unit, VOR_MAX_NAME_BYTES);
    put_raw(o, is_system ? ",\"system\":true}" : ",\"system\":false}");
}

void vor_declarations_site(vor_declarations_json *d, uint32_t id, const char *name, const char *function,
                           const char *file, uint32_t line, uint32_t module_id) {
    vor_out *o = &d->sites;
    open_entry(o);
    put_raw(o, "\"id\":");
    put_uint(o, id);
    put_raw(o, ",\"name\":");
    put_string(o, name, VOR_MAX_NAME_BYTES);
    put_raw(o, ",\"function\":");
    put_string(o, function, VOR_MAX_NAME_BYTES);
    put_raw(o, ",\"file\":");
    put_string(o, file, VOR_MAX_FILE_BYTES);
    put_raw(o, ",\"line\":");
    put_uint(o, line);
    if (module_id) {
        put_raw(o, ",\"module\":");
        put_uint(o, module_id);
    }
    put_raw(o, "}");
}

void vor_declarations_thread(vor_declarations_json *d, uint32_t id, const char *name) {
    vor_out *o = &d->threads;
    open_entry(o);
    put_raw(o, "\"id\":");
    put_uint(o, id);
    put_raw(o, ",\"name\":");
    put_string(o, name, VOR_MAX_NAME_BYTES);
    put_raw(o, "}");
}

void vor_declarations_clock(vor_declarations_json *d, uint64_t resolution_ns, const char *source, int isolated) {
    if (resolution_ns == 0) return;
    vor_out *o = &d->clock;
    o->size = 0;
    put_raw(o, "{\"resolution_ns\":");
    put_uint(o, resolution_ns);
    put_raw(o, ",\"source\":");
    put_string(o, source ? source : "", 64);
    put_raw(o, ",\"cross_origin_isolated\":");
    put_raw(o, isolated == 1 ? "true" : isolated == 0 ? "false" : "null");
    put_raw(o, "}");
}

void vor_declarations_costs(vor_declarations_json *d, double scope_ns, double function_ns) {
    if (!(scope_ns > 0 && isfinite(scope_ns))) scope_ns = 0;
    if (!(function_ns > 0 && isfinite(function_ns))) function_ns = 0;
    if (scope_ns == 0 && function_ns == 0) return;
    char tmp[96];
    snprintf(tmp, sizeof tmp, "{\"scope_ns\":%.17g,\"function_ns\":%.17g}", scope_ns, function_ns);
    vor_out *o = &d->costs;
    o->size = 0;
    put_raw(o, tmp);
}

static void put_array(vor_out *text, const char *key, const vor_out *items, int *first) {
    if (items->size == 0) return;
    put_raw(text, *first ? "\"" : ",\"");
    put_raw(text, key);
    put_raw(text, "\":[");
    vor_out_bytes(text, items->data, items->size);
    put_raw(text, "]");
    *first = 0;
}

const char *vor_declarations_end(vor_declarations_json *d) {
    if (d->columns.size == 0 && d->sites.size == 0 && d->threads.size == 0 && d->clock.size == 0 && d->costs.size == 0)
        return NULL;
    vor_out *t = &d->text;
    int first = 1;
    put_raw(t, "{");
    put_array(t, "columns", &d->columns, &first);
    put_array(t, "sites", &d->sites, &first);
    put_array(t, "threads", &d->threads, &first);
    if (d->clock.size > 0) {
        put_raw(t, first ? "\"clock\":" : ",\"clock\":");
        vor_out_bytes(t, d->clock.data, d->clock.size);
        first = 0;
    }
    if (d->costs.size > 0) {
        put_raw(t, first ? "\"costs\":" : ",\"costs\":");
        vor_out_bytes(t, d->costs.data, d->costs.size);
    }
    put_raw(t, "}");
    vor_out_u8(t, 0);
    if (t->failed || d->columns.failed || d->sites.failed || d->threads.failed || d->clock.failed || d->costs.failed)
        return NULL;
    return (const char *)t->data;
}

void vor_declarations_free(vor_declarations_json *d) {
    free(d->columns.data);
    free(d->sites.data);
    free(d->threads.data);
    free(d->clock.data);
    free(d->costs.data);
    free(d->text.data);
    memset(d, 0, sizeof *d);
}

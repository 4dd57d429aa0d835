/* columns.c: the metric columns (system and user), the latest user values, and the I/O
 * accumulators.
 *
 * Every metric is a column with a stable id: system columns first (ids 0..n-1, fixed by
 * the platform), then user metrics in the order they are first named. The registry is
 * process-wide and only grows, capped at VOR_MAX_USER_COLUMNS user columns, so ids and
 * name pointers stay valid as long as the process runs. Name lookup is a small
 * open-addressing hash under a mutex: vor_record_metric is meant for a handful of calls
 * per frame, not for the scope hot path.
 *
 * vor_record_io is the exception: it may be called from any thread for every read or
 * write, so it is two relaxed atomic additions, drained by the frame thread.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fnv1a.h"
#include "utf8.h"
#include "vor_internal.h"

#define MAX_COLUMNS (VOR_SYSTEM_COLUMNS_MAX + VOR_MAX_USER_COLUMNS)
#define MAX_UNIT_CHANGES 8
#define HASH_SLOTS 1024u /* > 2 x MAX_COLUMNS, power of two */

typedef struct column_entry {
    vor_column column;
    char *owned_name;
    char *owned_unit;
    char *retired_units[MAX_UNIT_CHANGES]; /* replaced units, kept: readers may hold them */
    double latest;
    int has_value;
} column_entry;

static vor_mutex columns_lock = VOR_MUTEX_INIT;
static column_entry entries[MAX_COLUMNS];
static uint32_t n_columns; /* atomic for readers */
static uint32_t n_system;
static uint16_t hash_slots[HASH_SLOTS]; /* column id + 1; 0 = empty */

static uint64_t io_ns_total;    /* atomic */
static uint64_t io_bytes_total; /* atomic */

static uint32_t hash_name(const char *s, size_t n) {
    return vor_fnv1a32(s, n);
}

/* Copies at most VOR_MAX_NAME_BYTES, reporting a truncation. */
static size_t bounded_length(const char *s, const char *what) {
    size_t n = strnlen(s, VOR_MAX_NAME_BYTES + 1);
    if (n > VOR_MAX_NAME_BYTES) {
        vor_log(VOR_LOG_NAME_TOO_LONG, "%s \"%.*s...\"", what, (int)vor_utf8_cut(s, 40), s);
        n = vor_utf8_cut(s, VOR_MAX_NAME_BYTES);
    }
    return n;
}

static char *copy_string(const char *s, size_t n) {
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

/* Finds a column by name; with `create`, adds a user column. Lock held. */
static void ensure_system_columns_locked(void);

static column_entry *find_locked(const char *name, size_t n, int create) {
    ensure_system_columns_locked();
    uint32_t h = hash_name(name, n);
    for (uint32_t probe = 0; probe < HASH_SLOTS; probe++) {
        uint32_t i = (h + probe) & (HASH_SLOTS - 1);
        uint16_t id1 = hash_slots[i];
        if (id1 == 0) {
            if (!create) return NULL;
            if (n_columns - n_system >= VOR_MAX_USER_COLUMNS) {
                vor_log(VOR_LOG_TOO_MANY_COLUMNS, "\"%.*s\"", (int)vor_utf8_cut(name, n > 60 ? 60 : n), name);
                return NULL;
            }
            column_entry *e = &entries[n_columns];
            e->owned_name = copy_string(name, n);
            if (e->owned_name == NULL) {
                vor_log(VOR_LOG_OUT_OF_MEMORY, "column name");
                return NULL;
            }
            e->column.name = e->owned_name;
            e->column.unit = "";
            e->column.is_system = 0;
            e->column.scale = 1.0;
            e->column.unit_version = 0;
            hash_slots[i] = (uint16_t)(n_columns + 1);
            vor_atomic_store_release(&n_columns, n_columns + 1);
            return e;
        }
        column_entry *e = &entries[id1 - 1];
        if (strncmp(e->column.name, name, n) == 0 && e->column.name[n] == '\0') return e;
    }
    return NULL;
}

/* Declares the platform's system columns before anything else gets an id (lock held):
 * user metrics may be named before the first session starts. */
static void ensure_system_columns_locked(void) {
    if (n_columns != 0) return;
    uint32_t count = 0;
    const vor_system_column_def *defs = vor_system_columns(&count);
    for (uint32_t c = 0; c < count && c < VOR_SYSTEM_COLUMNS_MAX; c++) {
        uint32_t h = hash_name(defs[c].name, strlen(defs[c].name));
        uint32_t i = h & (HASH_SLOTS - 1);
        while (hash_slots[i] != 0) i = (i + 1) & (HASH_SLOTS - 1);
        column_entry *e = &entries[n_columns];
        e->column.name = defs[c].name;
        e->column.unit = defs[c].unit;
        e->column.is_system = 1;
        e->column.scale = defs[c].scale;
        hash_slots[i] = (uint16_t)(n_columns + 1);
        vor_atomic_store_release(&n_columns, n_columns + 1);
        n_system++;
    }
}

uint32_t vor_columns_begin_session(void) {
    vor_mutex_lock(&columns_lock);
    ensure_system_columns_locked();
    uint32_t result = n_system;
    vor_mutex_unlock(&columns_lock);
    vor_atomic_store_relaxed(&io_ns_total, 0);
    vor_atomic_store_relaxed(&io_bytes_total, 0);
    return result;
}

void vor_columns_end_session(void) {
    /* Columns live as long as the process (ids, names and units stay valid), but values
     * belong to the session that ends: the next one starts with no user values. */
    vor_mutex_lock(&columns_lock);
    for (uint32_t id = n_system; id < n_columns; id++) entries[id].has_value = 0;
    vor_mutex_unlock(&columns_lock);
}

/* fork(): the columns' lock is taken before and released after (session.c). */
void vor_columns_fork(vor_fork_phase phase) {
    if (phase == VOR_FORK_PREPARE)
        pthread_mutex_lock(&columns_lock);
    else
        pthread_mutex_unlock(&columns_lock);
}

uint32_t vor_column_count(void) {
    return vor_atomic_load_acquire(&n_columns);
}

int vor_column_read(uint32_t id, vor_column *out) {
    vor_mutex_lock(&columns_lock);
    int ok = id < n_columns;
    if (ok) *out = entries[id].column;
    vor_mutex_unlock(&columns_lock);
    return ok;
}

int vor_column_get(uint32_t id, vor_column_info *out) {
    vor_column c;
    if (out == NULL || !vor_column_read(id, &c)) return 0;
    out->id = id;
    out->is_system = c.is_system;
    out->name = c.name;
    out->unit = c.unit;
    return 1;
}

void vor_record_metric(const char *name, double value) {
    if (name == NULL) {
        vor_log(VOR_LOG_NAME_NULL, "vor_record_metric");
        return;
    }
    if (!isfinite(value)) vor_log(VOR_LOG_VALUE_NOT_FINITE, "metric \"%.*s\"", (int)vor_utf8_cut(name, 60), name);
    size_t n = bounded_length(name, "metric");
    vor_mutex_lock(&columns_lock);
    column_entry *e = find_locked(name, n, 1);
    if (e != NULL && !e->column.is_system) {
        e->latest = value;
        e->has_value = 1;
    }
    vor_mutex_unlock(&columns_lock);
}

void vor_record_metric_unit(const char *name, const char *unit) {
    if (name == NULL) {
        vor_log(VOR_LOG_NAME_NULL, "vor_record_metric_unit");
        return;
    }
    if (unit == NULL) unit = "";
    size_t n = bounded_length(name, "metric");
    size_t un = bounded_length(unit, "unit");
    vor_mutex_lock(&columns_lock);
    column_entry *e = find_locked(name, n, 1);
    if (e != NULL && !e->column.is_system && (strlen(e->column.unit) != un || strncmp(e->column.unit, unit, un) != 0)) {
        if (e->column.unit_version >= MAX_UNIT_CHANGES) {
            vor_mutex_unlock(&columns_lock);
            vor_log(VOR_LOG_BAD_SETTING, "the unit of metric \"%.*s\" changed more than %d times; kept \"%s\"",
                    (int)vor_utf8_cut(name, 60), name, MAX_UNIT_CHANGES, e->column.unit);
            return;
        }
        char *copy = copy_string(unit, un);
        if (copy) {
            /* The previous unit string stays allocated (readers may hold its pointer);
             * MAX_UNIT_CHANGES bounds how many a column can leave behind. */
            if (e->owned_unit) e->retired_units[e->column.unit_version] = e->owned_unit;
            e->owned_unit = copy;
            e->column.unit = copy;
            e->column.unit_version++;
        } else {
            vor_log(VOR_LOG_OUT_OF_MEMORY, "unit");
        }
    }
    vor_mutex_unlock(&columns_lock);
}

uint32_t vor_columns_snapshot_user(vor_user_value *out, uint32_t cap) {
    uint32_t k = 0;
    vor_mutex_lock(&columns_lock);
    for (uint32_t id = n_system; id < n_columns && k < cap; id++) {
        if (!entries[id].has_value) continue;
        out[k].column_id = id;
        out[k].reserved = 0;
        out[k].value = entries[id].latest;
        k++;
    }
    vor_mutex_unlock(&columns_lock);
    return k;
}

void vor_record_io(uint64_t ns, uint64_t bytes) {
    if (!vor_internal_is_collecting()) return;
    vor_atomic_add_relaxed(&io_ns_total, ns);
    vor_atomic_add_relaxed(&io_bytes_total, bytes);
}

void vor_io_drain(uint64_t *ns, uint64_t *bytes) {
    *ns = vor_atomic_exchange(&io_ns_total, 0);
    *bytes = vor_atomic_exchange(&io_bytes_total, 0);
}

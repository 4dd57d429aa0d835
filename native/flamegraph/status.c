/*
 * status.c: status names and texts, error filling, the version string.
 *
 * The enum and its texts come from one list (FLAMEGRAPH_STATUS_LIST in flamegraph.h), so a new
 * status cannot be added without its text. Messages are formatted once, into the caller's
 * flamegraph_error, so that a command-line tool prints exactly one line per failure.
 */
#include "flamegraph_internal.h"

#include <stdio.h>
#include <string.h>

#define FG_STRINGIFY_VALUE(x) #x
#define FG_STRINGIFY(x) FG_STRINGIFY_VALUE(x)

const char *flamegraph_version_string(void)
{
    return FG_STRINGIFY(FLAMEGRAPH_VERSION_MAJOR) "." FG_STRINGIFY(
        FLAMEGRAPH_VERSION_MINOR) "." FG_STRINGIFY(FLAMEGRAPH_VERSION_PATCH);
}

static const char *const status_names[] = {
#define FG_STATUS_NAME(name, text) #name,
    FLAMEGRAPH_STATUS_LIST(FG_STATUS_NAME)
#undef FG_STATUS_NAME
};

static const char *const status_texts[] = {
#define FG_STATUS_TEXT(name, text) text,
    FLAMEGRAPH_STATUS_LIST(FG_STATUS_TEXT)
#undef FG_STATUS_TEXT
};

const char *flamegraph_status_name(flamegraph_status status)
{
    if ((unsigned)status >= (unsigned)FLAMEGRAPH_STATUS_COUNT)
        return "?";
    return status_names[status];
}

const char *flamegraph_status_text(flamegraph_status status)
{
    if ((unsigned)status >= (unsigned)FLAMEGRAPH_STATUS_COUNT)
        return "?";
    return status_texts[status];
}

void fg_clear_error(flamegraph_error *err)
{
    if (err == NULL)
        return;
    err->status = FLAMEGRAPH_OK;
    err->line = 0;
    err->message[0] = '\0';
}

flamegraph_status fg_fail(flamegraph_error *err, flamegraph_status status, uint64_t line,
                          const char *format, ...)
{
    if (err == NULL)
        return status;
    err->status = status;
    err->line = line;
    va_list args;
    va_start(args, format);
    int written = vsnprintf(err->message, sizeof err->message, format, args);
    va_end(args);
    if (written < 0)
        snprintf(err->message, sizeof err->message, "%s", flamegraph_status_text(status));
    return status;
}

/* csv.c: one CSV field, RFC 4180 style, for `vor export --format csv`.
 *
 * Metric names come from user code and may hold anything: a field is quoted (with inner
 * quotes doubled) when it holds a comma, a quote, a line break, or starts or ends with a
 * space (which some readers would trim). Numbers never need quoting.
 */
#include "cli.h"

#include <string.h>

void csv_write_field(FILE *out, const char *text) {
    size_t n = strlen(text);
    int quote = n > 0 && (text[0] == ' ' || text[n - 1] == ' ');
    if (!quote && strpbrk(text, ",\"\r\n")) quote = 1;
    if (!quote) {
        fwrite(text, 1, n, out);
        return;
    }
    putc('"', out);
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '"') putc('"', out);
        putc(text[i], out);
    }
    putc('"', out);
}

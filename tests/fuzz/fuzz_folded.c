/* fuzz_folded.c: libFuzzer target for the folded-stacks reader and what reads its output.
 *
 * `vor flamegraph --folded FILE` reads text from anywhere (flamegraph.pl pipelines, other
 * profilers), so the reader, the tree, the layout and both writers (SVG and folded) get
 * arbitrary input. The first byte picks the tree's mode (merged or flame chart, reversed
 * or not) and a small node cap, so caps and modes are reached too. Beyond "never crash,
 * hang or leak" (ASan/UBSan), one property is checked: what the folded writer writes reads
 * back into a tree with the same total, so an export can always be read again.
 */
#define _XOPEN_SOURCE 700 /* fmemopen, open_memstream */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "flamegraph.h"

static double total_of(const flamegraph_tree *tree) {
    return flamegraph_tree_get_stats(tree).total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    uint8_t mode = data[0];
    flamegraph_tree_options options = {0};
    options.flamechart = (mode & 1) != 0;
    options.reverse = (mode & 2) != 0;
    options.max_nodes = (mode & 4) ? 64 : 0;
    options.max_name_bytes = (mode & 8) ? 16 : 0;
    flamegraph_folded_options folded = {0};
    folded.max_line_bytes = (mode & 16) ? 256 : 0;

    flamegraph_tree *tree = flamegraph_tree_create(&options);
    if (tree == NULL) return 0;
    flamegraph_error err;
    /* fmemopen refuses a size of 0: an empty text leaves the tree empty */
    FILE *in = size > 1 ? fmemopen((void *)(data + 1), size - 1, "r") : NULL;
    if (in) {
        (void)flamegraph_read_folded(tree, in, &folded, &err);
        fclose(in);
    }

    FILE *sink = fopen("/dev/null", "w");
    if (sink) {
        (void)flamegraph_write_svg(tree, NULL, sink, &err);
        fclose(sink);
    }

    /* The folded export reads back with the same total (at a node cap, stacks may drop). */
    char *text = NULL;
    size_t text_size = 0;
    FILE *out = open_memstream(&text, &text_size);
    if (out) {
        flamegraph_status written = flamegraph_write_folded(tree, out, &err);
        fclose(out);
        flamegraph_tree_options again = options;
        again.max_nodes = 0;
        again.max_name_bytes = 0; /* names were already cut; do not cut them again */
        flamegraph_tree *copy = written == FLAMEGRAPH_OK ? flamegraph_tree_create(&again) : NULL;
        FILE *back = copy && text_size ? fmemopen(text, text_size, "r") : NULL;
        if (back) {
            flamegraph_folded_options unlimited = {0};
            unlimited.max_line_bytes = text_size + 1;
            flamegraph_status st = flamegraph_read_folded(copy, back, &unlimited, &err);
            fclose(back);
            double a = total_of(tree), b = total_of(copy);
            double tolerance = 1e-9 * (a > b ? a : b) + 1e-6;
            if (st != FLAMEGRAPH_OK || (a - b > tolerance || b - a > tolerance)) {
                fprintf(stderr, "fuzz_folded: the folded export does not read back (%s, total %.17g vs %.17g):\n%.*s\n",
                        st != FLAMEGRAPH_OK ? err.message : "read", a, b, (int)text_size, text);
                abort();
            }
        }
        flamegraph_tree_destroy(copy);
        free(text);
    }
    flamegraph_tree_destroy(tree);
    return 0;
}

/*
 * flamegraph_render.c: a small command over the flame graph library, for the script tests.
 *
 *   test_flamegraph_render [OPTIONS] FOLDED [-o OUT.svg]           a flame graph
 *   test_flamegraph_render [OPTIONS] BEFORE AFTER [-o OUT.svg]     a differential graph
 *   test_flamegraph_render --to-folded FOLDED                      the tree back as folded text
 *
 * OPTIONS are those of `vor flamegraph` (flamegraph_parse_args), so the Python and browser tests
 * exercise the real option handling too. It is also the reference for wiring the `vor` command:
 * parse, build trees, write, map failures to exit status 2 with one message.
 */
#include "flamegraph.h"

#include <stdio.h>
#include <string.h>

static flamegraph_tree *read_tree(const char *path, const flamegraph_options *options)
{
    flamegraph_tree *tree = flamegraph_tree_create(&options->tree);
    if (tree == NULL) {
        fprintf(stderr, "flamegraph_render: out of memory\n");
        return NULL;
    }
    FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (in == NULL) {
        fprintf(stderr, "flamegraph_render: cannot open %s\n", path);
        flamegraph_tree_destroy(tree);
        return NULL;
    }
    flamegraph_error err;
    flamegraph_folded_options folded = { .source_name = path };
    flamegraph_status status = flamegraph_read_folded(tree, in, &folded, &err);
    if (in != stdin)
        fclose(in);
    if (status != FLAMEGRAPH_OK) {
        fprintf(stderr, "flamegraph_render: %s\n", err.message);
        flamegraph_tree_destroy(tree);
        return NULL;
    }
    flamegraph_tree_stats stats = flamegraph_tree_get_stats(tree);
    if (stats.dropped_stacks > 0)
        fprintf(stderr, "flamegraph_render: %s: %llu stacks dropped at %zu nodes\n", path,
                (unsigned long long)stats.dropped_stacks, stats.max_nodes);
    return tree;
}

int main(int argc, char **argv)
{
    bool to_folded = argc > 1 && strcmp(argv[1], "--to-folded") == 0;
    if (to_folded) {
        argv[1] = argv[0];
        argc--;
        argv++;
    }
    flamegraph_options options;
    flamegraph_error err;
    int rc = flamegraph_parse_args(argc, argv, &options, &err);
    if (rc == FLAMEGRAPH_ARGS_HELP) {
        fputs(flamegraph_help_text(), stdout);
        return 0;
    }
    if (rc != FLAMEGRAPH_ARGS_OK) {
        fprintf(stderr, "flamegraph_render: %s\n", err.message);
        return 2;
    }
    const char *paths[2];
    size_t path_count = 0;
    if (options.folded_path != NULL)
        paths[path_count++] = options.folded_path;
    for (size_t i = 0; i < options.input_count && path_count < 2; i++)
        paths[path_count++] = options.inputs[i];
    if (path_count == 0 || options.input_count + (options.folded_path != NULL) > 2) {
        fprintf(stderr, "flamegraph_render: give one folded file, or two (before, after)\n");
        return 2;
    }

    flamegraph_tree *trees[2] = { NULL, NULL };
    for (size_t i = 0; i < path_count; i++) {
        trees[i] = read_tree(paths[i], &options);
        if (trees[i] == NULL) {
            flamegraph_tree_destroy(trees[0]);
            return 2;
        }
    }
    FILE *out = options.output_path ? fopen(options.output_path, "wb") : stdout;
    if (out == NULL) {
        fprintf(stderr, "flamegraph_render: cannot write %s\n", options.output_path);
        flamegraph_tree_destroy(trees[0]);
        flamegraph_tree_destroy(trees[1]);
        return 2;
    }
    flamegraph_status status;
    if (to_folded)
        status = flamegraph_write_folded(trees[0], out, &err);
    else if (path_count == 2)
        status = flamegraph_write_diff_svg(trees[0], trees[1], &options.svg, out, &err);
    else
        status = flamegraph_write_svg(trees[0], &options.svg, out, &err);
    if (out != stdout && fclose(out) != 0 && status == FLAMEGRAPH_OK) {
        status = FLAMEGRAPH_ERR_WRITE;
        snprintf(err.message, sizeof err.message, "cannot write %s", options.output_path);
    }
    flamegraph_tree_destroy(trees[0]);
    flamegraph_tree_destroy(trees[1]);
    if (status != FLAMEGRAPH_OK) {
        fprintf(stderr, "flamegraph_render: %s\n", err.message);
        return 2;
    }
    return 0;
}

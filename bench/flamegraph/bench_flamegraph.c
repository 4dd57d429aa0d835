/*
 * bench_flamegraph.c: how fast scope events become a flame graph SVG, end to end.
 *
 *   bench_flamegraph [EVENTS [OUT.svg]]     default: 2,000,000 events, SVGs to temporary files
 *                                           (OUT receives the merged graph)
 *
 * The events imitate a profiled program's flame frames. A fixed call tree stands for the program
 * (about 15,000 call sites over 1,500 function names, fan-out shrinking with depth, a few chains
 * 40 deep, names repeating as in recursion); each frame walks it with random choices: a call
 * site runs 0 to 3 times in a row. Events are generated first, in begin order with inclusive
 * durations (what a capture stores); only then is the clock started, so the figures cover tree
 * building (flamegraph_tree_add_scope) and SVG writing.
 * Also measured: the same events as a flame chart (time order kept: many more nodes), and
 * reading the merged tree back from folded text. Prints figures; asserts nothing.
 */
#include "flamegraph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FUNCTION_COUNT 1500
#define CALL_SITES 20000 /* room; the shape below makes about 15,000 */
#define MAX_STACK_DEPTH 40
#define DEFAULT_EVENTS 2000000ull

typedef struct scope_event {
    uint32_t function;
    uint32_t depth;
    uint64_t duration_ns;
} scope_event;

/* The program: a call tree of call sites, children of site s are first_child[s] .. + count. */
typedef struct call_site {
    uint32_t function;
    uint32_t first_child, child_count;
} call_site;

typedef struct generator {
    uint64_t random_state;
    call_site sites[CALL_SITES];
    uint32_t site_count;
    scope_event *events;
    size_t count, capacity;
} generator;

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double seconds_now(void)
{
    struct timespec now;
    timespec_get(&now, TIME_UTC);
    return (double)now.tv_sec + now.tv_nsec * 1e-9;
}

/* Builds the call tree breadth first: wide near the root, thin below, a few deep chains. */
static void build_program(generator *gen)
{
    uint32_t depth_of[CALL_SITES];
    gen->sites[0] = (call_site){ .function = 0 };
    depth_of[0] = 0;
    gen->site_count = 1;
    for (uint32_t s = 0; s < gen->site_count; s++) {
        uint32_t depth = depth_of[s];
        uint64_t roll = next_random(&gen->random_state);
        uint32_t children = depth < 3 ? 6 + (uint32_t)(roll % 6)
                            : depth < 8 ? (uint32_t)(roll % 4)
                            : depth + 1 < MAX_STACK_DEPTH && roll % 9 == 0 ? 1 : 0;
        if (gen->site_count + children > CALL_SITES)
            children = 0;
        gen->sites[s].first_child = gen->site_count;
        gen->sites[s].child_count = children;
        for (uint32_t k = 0; k < children; k++) {
            uint32_t child = gen->site_count++;
            uint64_t pick = next_random(&gen->random_state);
            /* One call in ten is recursion: the caller's own name again. */
            gen->sites[child] = (call_site){ .function = pick % 10 == 0
                                                             ? gen->sites[s].function
                                                             : (uint32_t)(pick % FUNCTION_COUNT) };
            depth_of[child] = depth + 1;
        }
    }
}

/* Emits call site `site` at `depth` and what it calls, in begin order; returns its inclusive
 * duration in nanoseconds. */
static uint64_t generate_scope(generator *gen, uint32_t site, uint32_t depth)
{
    if (gen->count == gen->capacity)
        return 0;
    size_t index = gen->count++;
    gen->events[index] = (scope_event){ .function = gen->sites[site].function, .depth = depth };
    uint64_t duration = 100 + next_random(&gen->random_state) % 3000; /* own time */
    const call_site *caller = &gen->sites[site];
    for (uint32_t k = 0; k < caller->child_count; k++) {
        uint32_t runs = (uint32_t)(next_random(&gen->random_state) % 4); /* 0 to 3 times */
        for (uint32_t r = 0; r < runs && gen->count < gen->capacity; r++)
            duration += generate_scope(gen, caller->first_child + k, depth + 1);
    }
    gen->events[index].duration_ns = duration;
    return duration;
}

static void generate_events(generator *gen, size_t count)
{
    gen->random_state = 12345;
    build_program(gen);
    gen->capacity = count;
    gen->count = 0;
    while (gen->count < gen->capacity) /* one frame per walk from the root */
        generate_scope(gen, 0, 0);
}

static double file_size(FILE *file)
{
    fseek(file, 0, SEEK_END);
    return (double)ftell(file);
}

/* Builds a tree from the events, writes the SVG; prints one line of figures. */
static flamegraph_tree *run(const char *label, const generator *gen, char names[][32],
                            bool flamechart, FILE *out)
{
    flamegraph_tree_options tree_options = { .flamechart = flamechart };
    flamegraph_svg_options svg_options = { .count_name = "ns", .deterministic = true };
    double start = seconds_now();
    flamegraph_tree *tree = flamegraph_tree_create(&tree_options);
    if (tree == NULL) {
        fprintf(stderr, "bench_flamegraph: out of memory\n");
        return NULL;
    }
    for (size_t i = 0; i < gen->count; i++) {
        const scope_event *event = &gen->events[i];
        if (event->depth == 0)
            flamegraph_tree_end_scopes(tree);
        flamegraph_tree_add_scope(tree, names[event->function], event->depth, event->duration_ns);
    }
    flamegraph_tree_end_scopes(tree);
    double built = seconds_now();
    flamegraph_error err;
    flamegraph_status status = flamegraph_write_svg(tree, &svg_options, out, &err);
    double written = seconds_now();
    if (status != FLAMEGRAPH_OK)
        fprintf(stderr, "bench_flamegraph: %s\n", err.message);
    flamegraph_tree_stats stats = flamegraph_tree_get_stats(tree);
    double total = written - start;
    printf("%-10s %9zu events  %8zu nodes (%llu dropped)  tree %6.1f ms  svg %6.1f ms (%5.1f MB)  "
           "total %6.1f ms  %5.2f M events/s\n",
           label, gen->count, stats.node_count, (unsigned long long)stats.dropped_stacks,
           (built - start) * 1e3, (written - built) * 1e3, file_size(out) / 1e6, total * 1e3,
           gen->count / total / 1e6);
    return tree;
}

int main(int argc, char **argv)
{
    unsigned long long event_count = argc > 1 ? strtoull(argv[1], NULL, 10) : DEFAULT_EVENTS;
    if (event_count == 0) {
        fprintf(stderr, "usage: bench_flamegraph [EVENTS [OUT.svg]]\n");
        return 2;
    }
    generator *gen = calloc(1, sizeof *gen);
    char(*names)[32] = malloc(FUNCTION_COUNT * sizeof *names);
    if (gen == NULL || names == NULL ||
        (gen->events = malloc(event_count * sizeof *gen->events)) == NULL) {
        fprintf(stderr, "bench_flamegraph: out of memory for %llu events\n", event_count);
        return 1;
    }
    static const char *const stems[] = { "update", "render", "parse", "physics", "collide",
                                         "draw",   "upload", "hash",  "alloc",   "decode" };
    for (int f = 0; f < FUNCTION_COUNT; f++)
        snprintf(names[f], sizeof names[f], "%s_%s_%d", stems[f % 10], stems[(f / 10) % 10], f);
    generate_events(gen, (size_t)event_count);

    FILE *out = argc > 2 ? fopen(argv[2], "w+b") : tmpfile();
    if (out == NULL) {
        fprintf(stderr, "bench_flamegraph: cannot open the output file\n");
        return 1;
    }
    printf("flame graph engine %s: %zu synthetic scope events, %u call sites, %d functions, "
           "up to %d deep\n",
           flamegraph_version_string(), gen->count, gen->site_count, FUNCTION_COUNT,
           MAX_STACK_DEPTH);
    flamegraph_tree *merged = run("merged", gen, names, false, out);
    FILE *chart_out = tmpfile(); /* OUT keeps the merged graph */
    flamegraph_tree *chart = chart_out ? run("flamechart", gen, names, true, chart_out) : NULL;
    if (chart_out != NULL)
        fclose(chart_out);

    /* Folded round trip of the merged tree: how fast `--folded` input is read. */
    if (merged != NULL) {
        FILE *folded = tmpfile();
        flamegraph_error err;
        flamegraph_tree *reread = flamegraph_tree_create(NULL);
        if (folded != NULL && reread != NULL &&
            flamegraph_write_folded(merged, folded, &err) == FLAMEGRAPH_OK) {
            double bytes = file_size(folded);
            rewind(folded);
            double start = seconds_now();
            flamegraph_status status = flamegraph_read_folded(reread, folded, NULL, &err);
            double elapsed = seconds_now() - start;
            flamegraph_tree_stats stats = flamegraph_tree_get_stats(reread);
            printf("folded     %9llu lines   %5.1f MB read in %6.1f ms: %5.2f M lines/s, %5.0f MB/s%s\n",
                   (unsigned long long)stats.stacks, bytes / 1e6, elapsed * 1e3,
                   stats.stacks / elapsed / 1e6, bytes / elapsed / 1e6,
                   status == FLAMEGRAPH_OK ? "" : " (read failed)");
        }
        flamegraph_tree_destroy(reread);
        if (folded != NULL)
            fclose(folded);
    }
    flamegraph_tree_destroy(merged);
    flamegraph_tree_destroy(chart);
    fclose(out);
    free(gen->events);
    free(gen);
    free(names);
    return 0;
}

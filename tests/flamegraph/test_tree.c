/*
 * test_tree.c: the stack tree: merging, flame chart order, reverse, scopes, the node cap.
 * Each test states a rule and checks it through the tree's folded form and its stats.
 */
#include "test_helpers.h"

static void add(flamegraph_tree *tree, const char *stack, uint64_t value)
{
    char copy[256];
    const char *names[16];
    size_t depth = 0;
    snprintf(copy, sizeof copy, "%s", stack);
    for (char *frame = strtok(copy, ";"); frame != NULL; frame = strtok(NULL, ";"))
        names[depth++] = frame;
    assert_int_equal(flamegraph_tree_add_stack(tree, names, depth, value), FLAMEGRAPH_OK);
}

static void merged_tree_merges_frames_with_the_same_name_path(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    add(tree, "a;b", 1);
    add(tree, "a;c", 2);
    add(tree, "a;b", 3);
    assert_folded(tree, "a;b 4\na;c 2\n");
    flamegraph_tree_stats stats = flamegraph_tree_get_stats(tree);
    assert_int_equal(stats.node_count, 4); /* all, a, b, c */
    assert_true(stats.total == 6.0);
    assert_int_equal(stats.stacks, 3);
    flamegraph_tree_destroy(tree);
}

static void merged_tree_orders_siblings_by_name_whatever_the_input_order(void **state)
{
    (void)state;
    flamegraph_tree *first = tree_of("zeta 1\nalpha 2\nmid 3\n", NULL);
    flamegraph_tree *second = tree_of("mid 3\nalpha 2\nzeta 1\n", NULL);
    assert_folded(first, "alpha 2\nmid 3\nzeta 1\n");
    assert_folded(second, "alpha 2\nmid 3\nzeta 1\n");
    flamegraph_tree_destroy(first);
    flamegraph_tree_destroy(second);
}

static void flamechart_keeps_time_order_and_does_not_merge_non_adjacent_repeats(void **state)
{
    (void)state;
    flamegraph_tree_options options = { .flamechart = true };
    flamegraph_tree *tree = flamegraph_tree_create(&options);
    add(tree, "main;b", 1);
    add(tree, "main;c", 1);
    add(tree, "main;b", 1);
    assert_folded(tree, "main;b 1\nmain;c 1\nmain;b 1\n");
    assert_int_equal(flamegraph_tree_get_stats(tree).node_count, 5); /* all, main, b, c, b */
    flamegraph_tree_destroy(tree);
}

static void flamechart_merges_adjacent_repeats(void **state)
{
    (void)state;
    flamegraph_tree_options options = { .flamechart = true };
    flamegraph_tree *tree = flamegraph_tree_create(&options);
    add(tree, "main;b", 1);
    add(tree, "main;b", 2);
    add(tree, "main;b;x", 4);
    assert_folded(tree, "main;b 3\nmain;b;x 4\n");
    flamegraph_tree_destroy(tree);
}

static void reverse_stores_every_stack_leaf_first(void **state)
{
    (void)state;
    flamegraph_tree_options options = { .reverse = true };
    flamegraph_tree *tree = flamegraph_tree_create(&options);
    add(tree, "main;parse;lex", 5);
    add(tree, "main;eval;lex", 3);
    add(tree, "main;eval", 2);
    /* lex is now a root child holding both callers' time. */
    assert_folded(tree, "eval;main 2\nlex;eval;main 3\nlex;parse;main 5\n");
    flamegraph_tree_destroy(tree);
}

static void names_are_copied_so_the_caller_may_reuse_its_buffers(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    char name[16] = "first";
    const char *names[] = { name };
    assert_int_equal(flamegraph_tree_add_stack(tree, names, 1, 1), FLAMEGRAPH_OK);
    strcpy(name, "second");
    assert_int_equal(flamegraph_tree_add_stack(tree, names, 1, 1), FLAMEGRAPH_OK);
    assert_folded(tree, "first 1\nsecond 1\n");
    flamegraph_tree_destroy(tree);
}

static void fractional_values_add_up_and_zero_values_add_nothing(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    const char *names[] = { "a" };
    assert_int_equal(flamegraph_tree_add_stack_fractional(tree, names, 1, 0.25), FLAMEGRAPH_OK);
    assert_int_equal(flamegraph_tree_add_stack_fractional(tree, names, 1, 1.5), FLAMEGRAPH_OK);
    const char *other[] = { "never" };
    assert_int_equal(flamegraph_tree_add_stack(tree, other, 1, 0), FLAMEGRAPH_OK);
    assert_int_equal(flamegraph_tree_add_stack_fractional(tree, names, 1, -1.0),
                     FLAMEGRAPH_ERR_ARGUMENT);
    assert_folded(tree, "a 1.75\n");
    assert_int_equal(flamegraph_tree_get_stats(tree).node_count, 2);
    flamegraph_tree_destroy(tree);
}

static void node_cap_drops_whole_stacks_counts_them_and_keeps_memory_fixed(void **state)
{
    (void)state;
    flamegraph_tree_options options = { .max_nodes = 4 }; /* the root and three frames */
    flamegraph_tree *tree = flamegraph_tree_create(&options);
    const char *full[] = { "a", "b", "c" };
    const char *one_more[] = { "a", "b", "d" };
    assert_int_equal(flamegraph_tree_add_stack(tree, full, 3, 1), FLAMEGRAPH_OK);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(flamegraph_tree_add_stack(tree, one_more, 3, 2), FLAMEGRAPH_DROPPED);
    assert_int_equal(flamegraph_tree_add_stack(tree, full, 3, 5), FLAMEGRAPH_OK); /* known path */
    flamegraph_tree_stats stats = flamegraph_tree_get_stats(tree);
    assert_int_equal(stats.node_count, 4);
    assert_int_equal(stats.dropped_stacks, 1000);
    assert_true(stats.dropped_value == 2000.0);
    assert_true(stats.total == 6.0); /* dropped stacks are not half-added */
    assert_folded(tree, "a;b;c 6\n");
    flamegraph_tree_destroy(tree);
}

static void node_cap_is_reported_in_the_svg_notes(void **state)
{
    (void)state;
    flamegraph_tree_options options = { .max_nodes = 2 };
    flamegraph_tree *tree = tree_of("a 1\nb 2\nc 3\n", &options);
    char *svg = svg_of(tree, NULL);
    assert_non_null(strstr(svg, "2 stacks dropped at the capacity of 2 nodes (5 samples)"));
    free(svg);
    flamegraph_tree_destroy(tree);
}

static void stacks_deeper_than_the_maximum_are_dropped(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    const char **names = malloc((FLAMEGRAPH_MAX_DEPTH + 1) * sizeof *names);
    for (size_t i = 0; i <= FLAMEGRAPH_MAX_DEPTH; i++)
        names[i] = "f";
    assert_int_equal(flamegraph_tree_add_stack(tree, names, FLAMEGRAPH_MAX_DEPTH + 1, 1),
                     FLAMEGRAPH_DROPPED);
    assert_int_equal(flamegraph_tree_add_stack(tree, names, FLAMEGRAPH_MAX_DEPTH, 1),
                     FLAMEGRAPH_OK);
    flamegraph_tree_stats stats = flamegraph_tree_get_stats(tree);
    assert_int_equal(stats.dropped_stacks, 1);
    assert_int_equal(stats.max_depth, FLAMEGRAPH_MAX_DEPTH);
    free(names);
    flamegraph_tree_destroy(tree);
}

static void long_names_are_truncated(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    char *name = malloc(FLAMEGRAPH_MAX_NAME_LENGTH + 100);
    memset(name, 'x', FLAMEGRAPH_MAX_NAME_LENGTH + 99);
    name[FLAMEGRAPH_MAX_NAME_LENGTH + 99] = '\0';
    const char *names[] = { name };
    assert_int_equal(flamegraph_tree_add_stack(tree, names, 1, 1), FLAMEGRAPH_OK);
    flamegraph_tree_stats stats = flamegraph_tree_get_stats(tree);
    assert_int_equal(stats.name_bytes, sizeof "all" + FLAMEGRAPH_MAX_NAME_LENGTH + 1);
    free(name);
    flamegraph_tree_destroy(tree);
}

static void create_refuses_a_cap_above_the_limit(void **state)
{
    (void)state;
    flamegraph_tree_options options = { .max_nodes = FLAMEGRAPH_LIMIT_MAX_NODES + 1 };
    assert_null(flamegraph_tree_create(&options));
}

static void many_distinct_nodes_grow_the_tree_correctly(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    char a[32], b[32];
    const char *names[] = { a, b };
    for (int i = 0; i < 300; i++) {
        for (int j = 0; j < 30; j++) {
            snprintf(a, sizeof a, "outer%d", i);
            snprintf(b, sizeof b, "inner%d", j);
            assert_int_equal(flamegraph_tree_add_stack(tree, names, 2, 1), FLAMEGRAPH_OK);
        }
    }
    /* Again, in another order: everything must be found, nothing created. */
    for (int j = 0; j < 30; j++) {
        for (int i = 0; i < 300; i++) {
            snprintf(a, sizeof a, "outer%d", i);
            snprintf(b, sizeof b, "inner%d", j);
            assert_int_equal(flamegraph_tree_add_stack(tree, names, 2, 1), FLAMEGRAPH_OK);
        }
    }
    flamegraph_tree_stats stats = flamegraph_tree_get_stats(tree);
    assert_int_equal(stats.node_count, 1 + 300 + 300 * 30);
    assert_int_equal(stats.name_count, 1 + 300 + 30);
    assert_true(stats.total == 2.0 * 300 * 30);
    flamegraph_tree_destroy(tree);
}

/* ----- scopes ------------------------------------------------------------------------------ */

static void scopes_give_each_frame_its_inclusive_time(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    /* Frame 1 */
    assert_int_equal(flamegraph_tree_add_scope(tree, "frame", 0, 100), FLAMEGRAPH_OK);
    assert_int_equal(flamegraph_tree_add_scope(tree, "update", 1, 60), FLAMEGRAPH_OK);
    assert_int_equal(flamegraph_tree_add_scope(tree, "physics", 2, 40), FLAMEGRAPH_OK);
    assert_int_equal(flamegraph_tree_add_scope(tree, "render", 1, 30), FLAMEGRAPH_OK);
    flamegraph_tree_end_scopes(tree);
    /* Frame 2 */
    assert_int_equal(flamegraph_tree_add_scope(tree, "frame", 0, 100), FLAMEGRAPH_OK);
    assert_int_equal(flamegraph_tree_add_scope(tree, "update", 1, 50), FLAMEGRAPH_OK);
    flamegraph_tree_end_scopes(tree);
    /* frame: 200 in all, 110 + 30 in children; update: 110, 40 in physics. */
    assert_folded(tree, "frame 60\nframe;render 30\nframe;update 70\nframe;update;physics 40\n");
    assert_true(flamegraph_tree_get_stats(tree).total == 200.0);
    flamegraph_tree_destroy(tree);
}

static void scopes_in_a_flamechart_keep_their_order(void **state)
{
    (void)state;
    flamegraph_tree_options options = { .flamechart = true };
    flamegraph_tree *tree = flamegraph_tree_create(&options);
    const char *sequence[] = { "load", "update", "load" };
    for (int i = 0; i < 3; i++) {
        flamegraph_tree_add_scope(tree, "frame", 0, 10);
        flamegraph_tree_add_scope(tree, sequence[i], 1, 10);
        flamegraph_tree_end_scopes(tree);
    }
    /* The three "frame" scopes are adjacent and merge; their children are not. */
    assert_folded(tree, "frame;load 10\nframe;update 10\nframe;load 10\n");
    flamegraph_tree_destroy(tree);
}

static void reversed_scopes_become_stacks_of_their_own_time(void **state)
{
    (void)state;
    flamegraph_tree_options options = { .reverse = true };
    flamegraph_tree *tree = flamegraph_tree_create(&options);
    flamegraph_tree_add_scope(tree, "frame", 0, 100);
    flamegraph_tree_add_scope(tree, "update", 1, 60);
    flamegraph_tree_add_scope(tree, "physics", 2, 40);
    flamegraph_tree_end_scopes(tree);
    assert_folded(tree, "frame 40\nphysics;update;frame 40\nupdate;frame 20\n");
    flamegraph_tree_destroy(tree);
}

static void a_scope_that_skips_a_level_is_refused_and_counted(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    assert_int_equal(flamegraph_tree_add_scope(tree, "orphan", 2, 5), FLAMEGRAPH_ERR_ARGUMENT);
    assert_int_equal(flamegraph_tree_add_scope(tree, "ok", 0, 7), FLAMEGRAPH_OK);
    flamegraph_tree_end_scopes(tree);
    flamegraph_tree_stats stats = flamegraph_tree_get_stats(tree);
    assert_int_equal(stats.dropped_stacks, 1);
    assert_true(stats.dropped_value == 5.0);
    assert_folded(tree, "ok 7\n");
    flamegraph_tree_destroy(tree);
}

static void scopes_past_the_cap_are_dropped_with_their_children_and_the_parent_keeps_the_time(
    void **state)
{
    (void)state;
    flamegraph_tree_options options = { .max_nodes = 3 }; /* root, frame, update */
    flamegraph_tree *tree = flamegraph_tree_create(&options);
    assert_int_equal(flamegraph_tree_add_scope(tree, "frame", 0, 100), FLAMEGRAPH_OK);
    assert_int_equal(flamegraph_tree_add_scope(tree, "update", 1, 60), FLAMEGRAPH_OK);
    assert_int_equal(flamegraph_tree_add_scope(tree, "physics", 2, 40), FLAMEGRAPH_DROPPED);
    assert_int_equal(flamegraph_tree_add_scope(tree, "collide", 3, 30), FLAMEGRAPH_DROPPED);
    assert_int_equal(flamegraph_tree_add_scope(tree, "update", 1, 10), FLAMEGRAPH_OK);
    flamegraph_tree_end_scopes(tree);
    flamegraph_tree_stats stats = flamegraph_tree_get_stats(tree);
    assert_int_equal(stats.dropped_stacks, 2);
    assert_true(stats.dropped_value == 40.0); /* collide is inside physics: not counted twice */
    assert_folded(tree, "frame 30\nframe;update 70\n");
    flamegraph_tree_destroy(tree);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(merged_tree_merges_frames_with_the_same_name_path),
        cmocka_unit_test(merged_tree_orders_siblings_by_name_whatever_the_input_order),
        cmocka_unit_test(flamechart_keeps_time_order_and_does_not_merge_non_adjacent_repeats),
        cmocka_unit_test(flamechart_merges_adjacent_repeats),
        cmocka_unit_test(reverse_stores_every_stack_leaf_first),
        cmocka_unit_test(names_are_copied_so_the_caller_may_reuse_its_buffers),
        cmocka_unit_test(fractional_values_add_up_and_zero_values_add_nothing),
        cmocka_unit_test(node_cap_drops_whole_stacks_counts_them_and_keeps_memory_fixed),
        cmocka_unit_test(node_cap_is_reported_in_the_svg_notes),
        cmocka_unit_test(stacks_deeper_than_the_maximum_are_dropped),
        cmocka_unit_test(long_names_are_truncated),
        cmocka_unit_test(create_refuses_a_cap_above_the_limit),
        cmocka_unit_test(many_distinct_nodes_grow_the_tree_correctly),
        cmocka_unit_test(scopes_give_each_frame_its_inclusive_time),
        cmocka_unit_test(scopes_in_a_flamechart_keep_their_order),
        cmocka_unit_test(reversed_scopes_become_stacks_of_their_own_time),
        cmocka_unit_test(a_scope_that_skips_a_level_is_refused_and_counted),
        cmocka_unit_test(
            scopes_past_the_cap_are_dropped_with_their_children_and_the_parent_keeps_the_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

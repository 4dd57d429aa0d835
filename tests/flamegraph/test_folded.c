/*
 * test_folded.c: the folded stacks reader and writer.
 * What is accepted (and how it reads), what is refused (with which status, line and message).
 */
#include "test_helpers.h"

static void good_input_builds_the_merged_tree(void **state)
{
    (void)state;
    flamegraph_tree *tree = tree_of("main;parse;lex 10\nmain;parse 5\nmain;eval 7\nidle 1\n", NULL);
    assert_folded(tree, "idle 1\nmain;eval 7\nmain;parse 5\nmain;parse;lex 10\n");
    assert_true(flamegraph_tree_get_stats(tree).total == 23.0);
    flamegraph_tree_destroy(tree);
}

static void crlf_blank_lines_trailing_blanks_tabs_and_a_bom_are_accepted(void **state)
{
    (void)state;
    flamegraph_tree *tree =
        tree_of("\xEF\xBB\xBF"
                "a;b 1\r\n\r\n   \n\ta;b\t2  \r\nc 3", /* no newline at the very end */
                NULL);
    /* The tab before the second "a;b" is part of its first frame's name. */
    assert_folded(tree, "\ta;b 2\na;b 1\nc 3\n");
    flamegraph_tree_destroy(tree);
}

static void fractional_counts_are_accepted(void **state)
{
    (void)state;
    flamegraph_tree *tree = tree_of("a 1.5\na 0.25\nb .5\nc 2.\nd 0\n", NULL);
    assert_folded(tree, "a 1.75\nb 0.5\nc 2\n");
    flamegraph_tree_destroy(tree);
}

static void frame_names_may_contain_spaces_and_markup(void **state)
{
    (void)state;
    flamegraph_tree *tree = tree_of("std::vector<int>::push_back (inlined);operator new 3\n", NULL);
    assert_folded(tree, "std::vector<int>::push_back (inlined);operator new 3\n");
    flamegraph_tree_destroy(tree);
}

/* Reads `text` and checks the error: status, line and words of the message. */
static void assert_refused(const char *text, size_t max_line_bytes, flamegraph_status status,
                           uint64_t line, const char *message_part)
{
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    flamegraph_error err;
    assert_int_equal(read_folded_text(tree, text, max_line_bytes, &err), status);
    assert_int_equal(err.status, status);
    assert_int_equal(err.line, line);
    if (strstr(err.message, message_part) == NULL)
        fail_msg("message '%s' lacks '%s'", err.message, message_part);
    flamegraph_tree_destroy(tree);
}

static void a_line_without_count_is_refused_with_its_line_number(void **state)
{
    (void)state;
    assert_refused("a;b 1\nc;d\n", 0, FLAMEGRAPH_ERR_MISSING_COUNT, 2,
                   "test.folded:2: missing count");
    assert_refused("a;b 1\n\nc;d e;f\n", 0, FLAMEGRAPH_ERR_MISSING_COUNT, 3,
                   "test.folded:3: missing count");
}

static void a_count_that_is_not_a_non_negative_number_is_refused(void **state)
{
    (void)state;
    assert_refused("a 1\nb 12abc\n", 0, FLAMEGRAPH_ERR_BAD_COUNT, 2,
                   "test.folded:2: count is not a non-negative number: '12abc'");
    assert_refused("a -3\n", 0, FLAMEGRAPH_ERR_BAD_COUNT, 1, "'-3'");
    assert_refused("a 1.2.3\n", 0, FLAMEGRAPH_ERR_BAD_COUNT, 1, "'1.2.3'");
    assert_refused("a 1e5\n", 0, FLAMEGRAPH_ERR_BAD_COUNT, 1, "'1e5'");
}

static void a_count_without_frames_is_refused(void **state)
{
    (void)state;
    assert_refused("a 1\n42\n", 0, FLAMEGRAPH_ERR_EMPTY_STACK, 2, "test.folded:2: no frame");
    assert_refused("  42\n", 0, FLAMEGRAPH_ERR_EMPTY_STACK, 1, "no frame before the count");
}

static void an_overlong_line_is_refused_with_its_line_number(void **state)
{
    (void)state;
    /* The limit is 16 bytes: a 16-byte line passes, a 40-byte line does not. */
    assert_refused("abcdefghijklm 16\nx 1\n0123456789012345678901234567890123456 1\n", 16,
                   FLAMEGRAPH_ERR_LINE_TOO_LONG, 3, "test.folded:3: line longer than 16 bytes");
    assert_refused("x 1\n0123456789012345678901234567890123456 1", 16,
                   FLAMEGRAPH_ERR_LINE_TOO_LONG, 2, "line longer than 16 bytes");
}

static void binary_input_is_refused(void **state)
{
    (void)state;
    static const char text[] = "a 1\nb\0c 2\n";
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    FILE *in = stream_of(text, sizeof text - 1);
    flamegraph_error err;
    assert_int_equal(flamegraph_read_folded(tree, in, NULL, &err), FLAMEGRAPH_ERR_BINARY);
    assert_int_equal(err.line, 2);
    assert_non_null(strstr(err.message, "<input>:2: NUL byte"));
    fclose(in);
    flamegraph_tree_destroy(tree);
}

static void a_stack_with_too_many_frames_is_refused(void **state)
{
    (void)state;
    size_t length = FLAMEGRAPH_MAX_DEPTH * 2 + 8;
    char *text = malloc(length + 1);
    size_t used = 0;
    for (size_t i = 0; i <= FLAMEGRAPH_MAX_DEPTH; i++) {
        text[used++] = 'f';
        text[used++] = ';';
    }
    used--; /* the last ';' */
    memcpy(text + used, " 1\n", 4);
    assert_refused(text, 0, FLAMEGRAPH_ERR_TOO_DEEP, 1, "more than 4096 frames");
    free(text);
}

static void stacks_before_an_error_stay_in_the_tree(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    flamegraph_error err;
    assert_int_equal(read_folded_text(tree, "a 1\nb 2\ngarbage\nc 3\n", 0, &err),
                     FLAMEGRAPH_ERR_MISSING_COUNT);
    assert_folded(tree, "a 1\nb 2\n");
    flamegraph_tree_destroy(tree);
}

static void reaching_the_node_cap_while_reading_is_not_an_error(void **state)
{
    (void)state;
    flamegraph_tree_options options = { .max_nodes = 3 };
    flamegraph_tree *tree = flamegraph_tree_create(&options);
    flamegraph_error err;
    assert_int_equal(read_folded_text(tree, "a 1\nb 2\nc 4\nd 8\n", 0, &err), FLAMEGRAPH_OK);
    flamegraph_tree_stats stats = flamegraph_tree_get_stats(tree);
    assert_int_equal(stats.dropped_stacks, 2);
    assert_true(stats.dropped_value == 12.0);
    flamegraph_tree_destroy(tree);
}

static void long_inputs_are_read_across_buffer_boundaries(void **state)
{
    (void)state;
    /* About 3 MB: many 64 KiB reads, lines cut at every possible place. */
    const int lines = 150000;
    FILE *in = tmpfile();
    for (int i = 0; i < lines; i++)
        fprintf(in, "main;worker_%d;leaf_%d %d\n", i % 97, i % 13, 1 + i % 5);
    rewind(in);
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    flamegraph_error err;
    assert_int_equal(flamegraph_read_folded(tree, in, NULL, &err), FLAMEGRAPH_OK);
    double expected = 0;
    for (int i = 0; i < lines; i++)
        expected += 1 + i % 5;
    flamegraph_tree_stats stats = flamegraph_tree_get_stats(tree);
    assert_true(stats.total == expected);
    assert_int_equal(stats.stacks, lines);
    assert_int_equal(stats.node_count, 1 + 1 + 97 + 97 * 13);
    fclose(in);
    flamegraph_tree_destroy(tree);
}

static void written_folded_stacks_read_back_to_the_same_tree(void **state)
{
    (void)state;
    flamegraph_tree *tree = tree_of("a;b 3\na;c;d 2.5\ne 1\nsemi;colon 1\n", NULL);
    char *first = folded_of(tree);
    flamegraph_tree *again = tree_of(first, NULL);
    char *second = folded_of(again);
    assert_string_equal(first, second);
    free(first);
    free(second);
    flamegraph_tree_destroy(tree);
    flamegraph_tree_destroy(again);
}

static void names_with_separators_are_written_so_that_they_read_back(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    const char *names[] = { "a;b", "line\nbreak" };
    assert_int_equal(flamegraph_tree_add_stack(tree, names, 2, 4), FLAMEGRAPH_OK);
    assert_folded(tree, "a:b;line break 4\n");
    flamegraph_tree_destroy(tree);
}

/* Found by fuzz_folded: a one-frame stack named "\r" was written as a blank stack, which the
 * reader refuses ("no frame before the count"). */
/* Found by fuzz_folded: counts past 1e63 were written cut to 63 digits. */
/* Found by fuzz_folded: a first frame named with a leading byte-order mark lost it when read
 * back (the reader skips a BOM at the start of the text), leaving a blank stack. */
static void a_leading_byte_order_mark_in_a_name_survives(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    const char *names[] = { "\xEF\xBB\xBFx" };
    assert_int_equal(flamegraph_tree_add_stack(tree, names, 1, 2), FLAMEGRAPH_OK);
    assert_folded(tree, "\n\xEF\xBB\xBFx 2\n");
    flamegraph_tree *copy = flamegraph_tree_create(NULL);
    flamegraph_error err;
    assert_int_equal(read_folded_text(copy, "\n\xEF\xBB\xBFx 2\n", 0, &err), FLAMEGRAPH_OK);
    assert_folded(copy, "\n\xEF\xBB\xBFx 2\n");
    flamegraph_tree_destroy(copy);
    flamegraph_tree_destroy(tree);
}

static void huge_counts_are_written_whole(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    flamegraph_error err;
    assert_int_equal(read_folded_text(tree, "a 2e77\n", 0, &err), FLAMEGRAPH_ERR_BAD_COUNT);
    const char *a[] = { "a" };
    assert_int_equal(flamegraph_tree_add_stack_fractional(tree, a, 1, 1.7e308), FLAMEGRAPH_OK);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_int_equal(flamegraph_write_folded(tree, out, &err), FLAMEGRAPH_OK);
    fclose(out);
    assert_true(size > 300);
    flamegraph_tree *copy = flamegraph_tree_create(NULL);
    assert_int_equal(read_folded_text(copy, text, size + 1, &err), FLAMEGRAPH_OK);
    assert_true(flamegraph_tree_get_stats(copy).total == 1.7e308);
    free(text);
    flamegraph_tree_destroy(copy);
    flamegraph_tree_destroy(tree);
}

static void blank_one_frame_stacks_are_written_so_that_they_read_back(void **state)
{
    (void)state;
    flamegraph_tree *tree = flamegraph_tree_create(NULL);
    flamegraph_error err;
    assert_int_equal(read_folded_text(tree, "\r\t 2\nmain;\r 3\n", 0, &err), FLAMEGRAPH_OK);
    const char *empty[] = { "" };
    assert_int_equal(flamegraph_tree_add_stack(tree, empty, 1, 4), FLAMEGRAPH_OK);
    assert_folded(tree, "? 4\n? 2\nmain;  3\n");
    flamegraph_tree *copy = flamegraph_tree_create(NULL);
    assert_int_equal(read_folded_text(copy, "? 4\n? 2\nmain;  3\n", 0, &err), FLAMEGRAPH_OK);
    assert_true(flamegraph_tree_get_stats(copy).total == 9.0);
    flamegraph_tree_destroy(copy);
    flamegraph_tree_destroy(tree);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_input_builds_the_merged_tree),
        cmocka_unit_test(crlf_blank_lines_trailing_blanks_tabs_and_a_bom_are_accepted),
        cmocka_unit_test(fractional_counts_are_accepted),
        cmocka_unit_test(frame_names_may_contain_spaces_and_markup),
        cmocka_unit_test(a_line_without_count_is_refused_with_its_line_number),
        cmocka_unit_test(a_count_that_is_not_a_non_negative_number_is_refused),
        cmocka_unit_test(a_count_without_frames_is_refused),
        cmocka_unit_test(an_overlong_line_is_refused_with_its_line_number),
        cmocka_unit_test(binary_input_is_refused),
        cmocka_unit_test(a_stack_with_too_many_frames_is_refused),
        cmocka_unit_test(stacks_before_an_error_stay_in_the_tree),
        cmocka_unit_test(reaching_the_node_cap_while_reading_is_not_an_error),
        cmocka_unit_test(long_inputs_are_read_across_buffer_boundaries),
        cmocka_unit_test(written_folded_stacks_read_back_to_the_same_tree),
        cmocka_unit_test(names_with_separators_are_written_so_that_they_read_back),
        cmocka_unit_test(blank_one_frame_stacks_are_written_so_that_they_read_back),
        cmocka_unit_test(huge_counts_are_written_whole),
        cmocka_unit_test(a_leading_byte_order_mark_in_a_name_survives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

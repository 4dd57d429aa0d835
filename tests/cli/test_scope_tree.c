/* test_scope_tree.c: end-order scopes with depths -> self times and stacks
 * (native/cli/scope_tree.c, stack_trie.c, folded.c, name_table.c), and end order ->
 * begin order (scope_order.c).
 *
 * Hand-made cases pin the rules (nesting in one frame, a parent ending frames later,
 * merging by name, threads, irregular input, the cap); a randomised case builds random
 * call trees, cuts their end-order stream into frames at random points and checks every
 * folded line against self times computed directly from the trees. */
#include "cli_test.h"

#include <string.h>

typedef struct fixture {
    name_table *names;
    stack_trie *trie;
    scope_tree *tree;
} fixture;

static void fixture_open(fixture *fx, uint32_t max_nodes) {
    fx->names = name_table_create();
    fx->trie = stack_trie_create(max_nodes);
    fx->tree = scope_tree_create(fx->trie);
    assert_non_null(fx->names);
    assert_non_null(fx->trie);
    assert_non_null(fx->tree);
}

static void fixture_close(fixture *fx) {
    scope_tree_destroy(fx->tree);
    stack_trie_destroy(fx->trie);
    name_table_destroy(fx->names);
}

/* Feeds one scope on `thread` (root named `thread_name`, or NULL for no thread root);
 * returns its self time. */
static int64_t add(fixture *fx, uint32_t thread, const char *thread_name, const char *name, uint32_t depth, int64_t dur) {
    scope_tree_scope s = {name_table_intern(fx->names, name), depth, dur};
    uint32_t root = thread_name ? name_table_intern(fx->names, thread_name) : NAME_NONE;
    int64_t self = -1;
    assert_int_equal(scope_tree_add(fx->tree, thread, root, &s, &self), 0);
    return self;
}

/* The folded output after finishing. The caller frees. */
static char *folded(fixture *fx) {
    scope_tree_finish(fx->tree);
    mem_out m;
    mem_open(&m);
    assert_int_equal(folded_write(fx->trie, fx->names, m.f), 0);
    char *copy = strdup(mem_text(&m));
    mem_close(&m);
    return copy;
}

static void self_time_is_duration_minus_direct_children(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, 0);
    /* outer(45) { inner(20), inner2(7) }, end order */
    assert_int_equal(add(&fx, 0, "main", "inner", 1, 20), 20);
    assert_int_equal(add(&fx, 0, "main", "inner2", 1, 7), 7);
    assert_int_equal(add(&fx, 0, "main", "outer", 0, 45), 18);
    char *text = folded(&fx);
    assert_string_equal(text, "main;outer 18\n"
                              "main;outer;inner 20\n"
                              "main;outer;inner2 7\n");
    free(text);
    fixture_close(&fx);
}

static void grandchildren_are_not_direct_children(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, 0);
    /* a(100) { b(60) { c(25) { d(5) } } , e(10) } */
    assert_int_equal(add(&fx, 0, "t", "d", 3, 5), 5);
    assert_int_equal(add(&fx, 0, "t", "c", 2, 25), 20);
    assert_int_equal(add(&fx, 0, "t", "b", 1, 60), 35);
    assert_int_equal(add(&fx, 0, "t", "e", 1, 10), 10);
    assert_int_equal(add(&fx, 0, "t", "a", 0, 100), 30);
    char *text = folded(&fx);
    assert_string_equal(text, "t;a 30\nt;a;b 35\nt;a;b;c 20\nt;a;b;c;d 5\nt;a;e 10\n");
    free(text);
    fixture_close(&fx);
}

static void a_parent_may_end_frames_after_its_children(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, 0);
    /* Frame 1: two children of a run-long scope; frame 2: one more, then the scope. */
    add(&fx, 0, "main", "step", 1, 10);
    add(&fx, 0, "main", "io", 2, 3); /* child of the next step */
    add(&fx, 0, "main", "step", 1, 5);
    assert_int_equal(add(&fx, 0, "main", "run", 0, 40), 25);
    char *text = folded(&fx);
    assert_string_equal(text, "main;run 25\nmain;run;step 12\nmain;run;step;io 3\n");
    free(text);
    assert_int_equal(scope_tree_get_stats(fx.tree).unfinished, 0);
    fixture_close(&fx);
}

static void stacks_merge_by_name_across_calls_and_frames(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, 0);
    for (int frame = 0; frame < 3; frame++) {
        add(&fx, 0, "main", "render", 1, 4);
        add(&fx, 0, "main", "render", 1, 6);
        add(&fx, 0, "main", "physics", 1, 10);
        add(&fx, 0, "main", "update", 0, 25);
    }
    char *text = folded(&fx);
    assert_string_equal(text, "main;update 15\nmain;update;physics 30\nmain;update;render 30\n");
    free(text);
    /* Root, thread, update, physics, render: nothing else stays alive. */
    assert_int_equal(stack_trie_get_stats(fx.trie).nodes, 5);
    fixture_close(&fx);
}

static void same_names_in_different_places_stay_apart(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, 0);
    add(&fx, 0, "t", "x", 2, 1);
    add(&fx, 0, "t", "b", 1, 3);
    add(&fx, 0, "t", "x", 2, 2);
    add(&fx, 0, "t", "c", 1, 5);
    add(&fx, 0, "t", "a", 0, 10);
    add(&fx, 0, "t", "x", 0, 7); /* a top-level x too */
    char *text = folded(&fx);
    assert_string_equal(text, "t;a 2\nt;a;b 2\nt;a;b;x 1\nt;a;c 3\nt;a;c;x 2\nt;x 7\n");
    free(text);
    fixture_close(&fx);
}

static void threads_are_roots_or_merge_without_them(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, 0);
    add(&fx, 0, "main", "work", 0, 5);
    add(&fx, 1, "loader", "work", 0, 7);
    add(&fx, 1, "loader", "read", 1, 2); /* pending: its parent never ends */
    char *text = folded(&fx);
    assert_string_equal(text, "loader;read 2\nloader;work 7\nmain;work 5\n");
    assert_int_equal(scope_tree_get_stats(fx.tree).unfinished, 1);
    free(text);
    fixture_close(&fx);

    fixture_open(&fx, 0);
    add(&fx, 0, NULL, "work", 0, 5);
    add(&fx, 1, NULL, "work", 0, 7);
    text = folded(&fx);
    assert_string_equal(text, "work 12\n");
    free(text);
    fixture_close(&fx);
}

static void a_missing_level_still_nests_and_is_counted(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, 0);
    add(&fx, 0, "t", "deep", 2, 5); /* its depth-1 parent was dropped by the writer */
    assert_int_equal(add(&fx, 0, "t", "top", 0, 20), 15);
    assert_int_equal(scope_tree_get_stats(fx.tree).skipped_level, 1);
    char *text = folded(&fx);
    assert_string_equal(text, "t;top 15\nt;top;deep 5\n");
    free(text);
    fixture_close(&fx);
}

static void children_longer_than_their_parent_give_zero_self(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, 0);
    add(&fx, 0, "t", "child", 1, 30);
    assert_int_equal(add(&fx, 0, "t", "parent", 0, 20), 0);
    assert_int_equal(scope_tree_get_stats(fx.tree).negative_self, 1);
    fixture_close(&fx);
}

static void too_deep_scopes_are_ignored(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, 0);
    scope_tree_scope s = {name_table_intern(fx.names, "x"), SCOPE_TREE_MAX_DEPTH, 5};
    int64_t self;
    assert_int_equal(scope_tree_add(fx.tree, 0, NAME_NONE, &s, &self), -1);
    assert_int_equal(scope_tree_get_stats(fx.tree).too_deep, 1);
    fixture_close(&fx);
}

/* Sum of the values of folded text. */
static uint64_t folded_total(const char *text) {
    uint64_t sum = 0;
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        const char *sp = nl;
        while (sp > line && sp[-1] != ' ') sp--;
        sum += strtoull(sp, NULL, 10);
        line = nl + 1;
    }
    return sum;
}

static void past_the_cap_time_goes_to_the_nearest_kept_ancestor(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, 4); /* root, thread, one group, one stack */
    add(&fx, 0, "t", "b", 1, 3);
    add(&fx, 0, "t", "c", 1, 4);
    add(&fx, 0, "t", "a", 0, 10);
    add(&fx, 0, "t", "z", 0, 6);
    char *text = folded(&fx);
    assert_true(stack_trie_get_stats(fx.trie).refused > 0);
    assert_int_equal(folded_total(text), 16); /* all the time is still there */
    free(text);
    fixture_close(&fx);
}

/* ---- Randomised: random trees, random frame cuts ----------------------------------- */

#define MAX_NODES 400
typedef struct rnode {
    int name;
    int parent;
    int depth;
    int64_t self, duration;
    int children[8];
    int n_children;
} rnode;

static uint32_t seed;
static uint32_t rnd(uint32_t n) {
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 8) % n;
}

static const char *const NAMES[] = {"a", "b", "c", "d"};

/* Builds a random tree under `parent`, returns its index. */
static int grow_tree(rnode *nodes, int *count, int parent, int depth) {
    int id = (*count)++;
    rnode *n = &nodes[id];
    memset(n, 0, sizeof *n);
    n->name = (int)rnd(4);
    n->parent = parent;
    n->depth = depth;
    n->self = rnd(100);
    n->duration = n->self;
    int kids = depth < 6 ? (int)rnd(4) : 0;
    for (int k = 0; k < kids && *count < MAX_NODES - 8; k++) {
        int c = grow_tree(nodes, count, id, depth + 1);
        nodes[id].children[nodes[id].n_children++] = c;
        nodes[id].duration += nodes[c].duration;
    }
    return id;
}

static void path_of(const rnode *nodes, int id, const char *thread, char *out, size_t cap) {
    const char *parts[16];
    int n = 0;
    for (int i = id; i >= 0; i = nodes[i].parent) parts[n++] = NAMES[nodes[i].name];
    size_t len = (size_t)snprintf(out, cap, "%s", thread);
    while (n-- > 0) len += (size_t)snprintf(out + len, cap - len, ";%s", parts[n]);
}

static void emit(fixture *fx, const rnode *nodes, int id, int *fed) {
    for (int k = 0; k < nodes[id].n_children; k++) emit(fx, nodes, nodes[id].children[k], fed);
    int64_t self = add(fx, 0, "th", NAMES[nodes[id].name], (uint32_t)nodes[id].depth, nodes[id].duration);
    assert_int_equal(self, nodes[id].self);
    (*fed)++;
}

static void random_trees_fold_to_their_self_times(void **state) {
    (void)state;
    for (uint32_t trial = 0; trial < 200; trial++) {
        seed = trial * 7919u + 1u;
        fixture fx;
        fixture_open(&fx, 0);
        static rnode nodes[MAX_NODES];
        int count = 0;
        int roots[16], n_roots = 1 + (int)rnd(4);
        for (int r = 0; r < n_roots; r++) roots[r] = grow_tree(nodes, &count, -1, 0);
        int fed = 0;
        /* Frames are only cuts in the stream: the tree feeds the same scopes in order. */
        for (int r = 0; r < n_roots; r++) emit(&fx, nodes, roots[r], &fed);
        assert_int_equal(fed, count);
        char *text = folded(&fx);

        /* Expected: self summed per path, every path with a positive value. */
        char expected_paths[MAX_NODES][128];
        int64_t expected_values[MAX_NODES];
        int n_expected = 0;
        for (int i = 0; i < count; i++) {
            char p[128];
            path_of(nodes, i, "th", p, sizeof p);
            int k = 0;
            while (k < n_expected && strcmp(expected_paths[k], p) != 0) k++;
            if (k == n_expected) {
                strcpy(expected_paths[n_expected], p);
                expected_values[n_expected++] = 0;
            }
            expected_values[k] += nodes[i].self;
        }
        int lines = 0;
        for (int k = 0; k < n_expected; k++) {
            if (expected_values[k] == 0) continue;
            char line[160];
            snprintf(line, sizeof line, "%.127s %lld\n", expected_paths[k], (long long)expected_values[k]);
            /* Match at a line start. */
            const char *at = strstr(text, line);
            while (at && at != text && at[-1] != '\n') at = strstr(at + 1, line);
            if (!at) fail_msg("trial %u: missing line %s in\n%s", trial, line, text);
            lines++;
        }
        int got_lines = 0;
        for (const char *c = text; *c; c++) got_lines += *c == '\n';
        assert_int_equal(got_lines, lines);
        free(text);
        fixture_close(&fx);
    }
}

static void names_are_interned_once(void **state) {
    (void)state;
    name_table *t = name_table_create();
    assert_non_null(t);
    uint32_t a = name_table_intern(t, "alpha");
    assert_int_equal(name_table_intern(t, "alpha"), a);
    char buf[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "name %d", i);
        assert_int_equal(name_table_intern(t, buf), (uint32_t)i + 1);
    }
    assert_int_equal(name_table_intern(t, "alpha"), a);
    assert_string_equal(name_table_get(t, 4001), "name 4000");
    assert_int_equal(name_table_count(t), 5001);
    assert_int_equal(name_table_intern(t, NULL), name_table_intern(t, ""));
    name_table_destroy(t);
}

static void folded_names_are_made_safe(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, 0);
    add(&fx, 0, "my;thread", "a;b\nc", 0, 5);
    char *text = folded(&fx);
    assert_string_equal(text, "my:thread;a:b c 5\n");
    free(text);
    fixture_close(&fx);
}

/* Pre-order of end-order scopes, as names joined by spaces. */
static void preorder_names(const vor_reader_scope *s, const char *const *names, uint32_t n, char *out, size_t cap) {
    uint32_t next[16];
    scope_order_entry stack[16];
    out[0] = '\0';
    size_t len = 0;
    for (uint32_t i = scope_preorder(s, n, next, stack); i != SCOPE_ORDER_END; i = next[i])
        len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? " " : "", names[i]);
}

static void end_order_becomes_begin_order(void **state) {
    (void)state;
    char got[128];
    /* outer(inner, inner2(leaf)), then top */
    const vor_reader_scope a[] = {{1, 1, 10, 5, 0, 0}, {2, 2, 20, 1, 0, 0}, {3, 1, 18, 4, 0, 0}, {4, 0, 5, 30, 0, 0}, {5, 0, 40, 2, 0, 0}};
    const char *const an[] = {"inner", "leaf", "inner2", "outer", "top"};
    preorder_names(a, an, 5, got, sizeof got);
    assert_string_equal(got, "outer inner inner2 leaf top");
    /* Parents in a later frame: runs stay in place, children after their own parent. */
    const vor_reader_scope b[] = {{1, 2, 0, 1, 0, 0}, {2, 1, 0, 3, 0, 0}, {3, 1, 5, 1, 0, 0}};
    const char *const bn[] = {"a", "b", "c"};
    preorder_names(b, bn, 3, got, sizeof got);
    assert_string_equal(got, "b a c");
    preorder_names(b, bn, 0, got, sizeof got);
    assert_string_equal(got, "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(self_time_is_duration_minus_direct_children),
        cmocka_unit_test(grandchildren_are_not_direct_children),
        cmocka_unit_test(a_parent_may_end_frames_after_its_children),
        cmocka_unit_test(stacks_merge_by_name_across_calls_and_frames),
        cmocka_unit_test(same_names_in_different_places_stay_apart),
        cmocka_unit_test(threads_are_roots_or_merge_without_them),
        cmocka_unit_test(a_missing_level_still_nests_and_is_counted),
        cmocka_unit_test(children_longer_than_their_parent_give_zero_self),
        cmocka_unit_test(too_deep_scopes_are_ignored),
        cmocka_unit_test(past_the_cap_time_goes_to_the_nearest_kept_ancestor),
        cmocka_unit_test(random_trees_fold_to_their_self_times),
        cmocka_unit_test(names_are_interned_once),
        cmocka_unit_test(folded_names_are_made_safe),
        cmocka_unit_test(end_order_becomes_begin_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

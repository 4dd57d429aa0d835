/* test_symbolizer.c: the symbolizer that the runtime and `vor symbolize` share
 * (core/src/module_symbols_linux.h): it reads a file's build id, names offsets of a
 * binary (function, file, line), refuses a file whose build id is not the expected one,
 * finds a stripped file's symbols in a debug directory by build id, finds lines without
 * .debug_aranges (which clang does not emit), answers bad input
 * with one message, and gives the same answers when its DWARF cache is tiny.
 *
 * Offsets are computed from the code's addresses in this process minus the load bias
 * from dlinfo; build ids are fixed at link time (CMakeLists.txt). */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dwarf_lines_linux.h"
#include "module_symbols_linux.h"
#include "names_code.h"

static uintptr_t bias_of(void *handle) {
    struct link_map *map = NULL;
    assert_int_equal(dlinfo(handle, RTLD_DI_LINKMAP, &map), 0);
    return map->l_addr;
}

static vor_module_symbols *open_ok(const char *path, const char *debug_dir) {
    char err[512] = "";
    vor_module_symbols_options options = {debug_dir, NULL};
    vor_module_symbols *m = vor_module_symbols_open(path, &options, err, sizeof err);
    if (m == NULL) fail_msg("%s: %s", path, err);
    return m;
}

/* The library's expected functions, and its load bias (it stays loaded). */
static const names_expected *library_functions(uintptr_t *bias) {
    void *lib = dlopen(NAMES_LIB_PATH, RTLD_NOW);
    assert_non_null(lib);
    names_lib_entry_fn entry = (names_lib_entry_fn)dlsym(lib, "names_lib_entry");
    assert_non_null(entry);
    const names_expected *functions = NULL;
    entry(0, &functions);
    *bias = bias_of(lib);
    return functions;
}

static void check_named(vor_module_symbols *m, const names_expected *f, uintptr_t bias, const char *file) {
    uint64_t offset = (uintptr_t)f->address - bias;
    vor_symbol sym;
    assert_int_equal(vor_module_symbols_lookup(m, offset, &sym), 1);
    assert_string_equal(sym.function, f->name);
    assert_int_equal(sym.function_start, offset);
    if (strstr(sym.file, file) == NULL) fail_msg("%s: file '%s', expected %s", f->name, sym.file, file);
    assert_int_equal(sym.line, f->line);
    /* An address inside the function names the function that holds it. */
    assert_int_equal(vor_module_symbols_lookup(m, offset + 1, &sym), 1);
    assert_string_equal(sym.function, f->name);
    assert_int_equal(sym.function_start, offset);
}

static void names_the_functions_of_a_program_with_file_and_line(void **state) {
    (void)state;
    vor_module_symbols *m = open_ok("/proc/self/exe", "");
    assert_string_equal(vor_module_symbols_build_id(m), NAMES_SYMBOLIZER_BUILD_ID);
    assert_true(vor_module_symbols_has_dwarf(m));
    uintptr_t bias = bias_of(dlopen(NULL, RTLD_NOW));
    for (unsigned i = 0; i < NAMES_CODE_FUNCTIONS; i++) check_named(m, &names_code_functions[i], bias, "names_code.c");
    vor_symbol sym;
    assert_int_equal(vor_module_symbols_lookup(m, 0, &sym), 0); /* no code there */
    assert_string_equal(sym.function, "");
    vor_module_symbols_close(m);
}

/* Opens a file with names_lib's code and checks that every function of it is named. */
static void check_library_file(const char *path, const char *debug_dir) {
    uintptr_t bias;
    const names_expected *functions = library_functions(&bias);
    vor_module_symbols *m = open_ok(path, debug_dir);
    assert_string_equal(vor_module_symbols_build_id(m), NAMES_LIB_BUILD_ID);
    assert_true(vor_module_symbols_has_dwarf(m));
    for (unsigned i = 0; i < NAMES_LIB_FUNCTIONS; i++) check_named(m, &functions[i], bias, "names_lib.c");
    vor_module_symbols_close(m);
}

static void names_a_shared_object_read_from_its_file(void **state) {
    (void)state;
    check_library_file(NAMES_LIB_PATH, "");
}

static void finds_lines_without_debug_aranges(void **state) {
    (void)state;
    check_library_file(NAMES_LIB_NO_ARANGES_PATH, "");
}

static void refuses_a_file_whose_build_id_is_not_the_expected_one(void **state) {
    (void)state;
    char err[512] = "";
    vor_module_symbols_options options = {"", NAMES_LIB_OTHER_BUILD_ID};
    assert_null(vor_module_symbols_open(NAMES_LIB_PATH, &options, err, sizeof err));
    assert_non_null(strstr(err, NAMES_LIB_BUILD_ID));
    assert_non_null(strstr(err, NAMES_LIB_OTHER_BUILD_ID));
    options.expected_build_id = NAMES_LIB_BUILD_ID;
    vor_module_symbols *m = vor_module_symbols_open(NAMES_LIB_PATH, &options, err, sizeof err);
    assert_non_null(m);
    vor_module_symbols_close(m);
}

static void finds_a_stripped_files_symbols_in_a_debug_directory(void **state) {
    (void)state;
    uintptr_t bias;
    const names_expected *functions = library_functions(&bias);
    const names_expected *hidden = &functions[0], *exported = &functions[1];
    vor_symbol sym;

    vor_module_symbols *stripped = open_ok(NAMES_LIB_STRIPPED_PATH, "");
    assert_string_equal(vor_module_symbols_build_id(stripped), NAMES_LIB_BUILD_ID);
    assert_false(vor_module_symbols_has_dwarf(stripped));
    assert_int_equal(vor_module_symbols_lookup(stripped, (uintptr_t)hidden->address - bias, &sym), 0);
    assert_int_equal(vor_module_symbols_lookup(stripped, (uintptr_t)exported->address - bias, &sym), 1);
    assert_string_equal(sym.function, exported->name); /* .dynsym */
    assert_string_equal(sym.file, "");
    vor_module_symbols_close(stripped);

    check_library_file(NAMES_LIB_STRIPPED_PATH, NAMES_DEBUG_DIR);
}

static void bad_input_gets_one_message(void **state) {
    (void)state;
    struct {
        const char *path, *message;
    } cases[] = {
        {NAMES_SOURCE_DIR "/names_code.c", "not an ELF file"},
        {NAMES_SOURCE_DIR, "not a regular file"},
        {NAMES_SOURCE_DIR "/no-such-file", "cannot open: No such file or directory"},
        {NAMES_OBJECT_PATH, "an ELF object file, not an executable or shared object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[512] = "";
        assert_null(vor_module_symbols_open(cases[i].path, NULL, err, sizeof err));
        assert_string_equal(err, cases[i].message);
    }
}

static void a_file_whose_dwarf_describes_no_code_gives_no_lines(void **state) {
    (void)state;
    vor_module_symbols *m = open_ok(NAMES_DATA_PATH, "");
    assert_true(vor_module_symbols_has_dwarf(m));
    vor_symbol sym;
    for (uint64_t address = 0; address < 0x10000; address += 0x10) {
        vor_module_symbols_lookup(m, address, &sym); /* the C runtime's functions have names */
        assert_string_equal(sym.file, "");
        assert_int_equal(sym.line, 0);
    }
    vor_module_symbols_close(m);
}

static void a_tiny_dwarf_cache_gives_the_same_answers(void **state) {
    (void)state;
    uintptr_t lib_bias, program_bias = bias_of(dlopen(NULL, RTLD_NOW));
    const names_expected *functions = library_functions(&lib_bias);
    vor_module_symbols *program = open_ok("/proc/self/exe", ""), *lib = open_ok(NAMES_LIB_PATH, "");
    vor_symbol sym;
    vor_module_symbols_lookup(program, (uintptr_t)names_code_functions[0].address - program_bias, &sym);
    vor_module_symbols_lookup(lib, (uintptr_t)functions[0].address - lib_bias, &sym);
    size_t held = vor_dwarf_cache_bytes();

    vor_dwarf_cache_set_limit(1); /* every decoded unit is forgotten at once */
    for (int round = 0; round < 3; round++) {
        for (unsigned i = 0; i < NAMES_CODE_FUNCTIONS; i++)
            check_named(program, &names_code_functions[i], program_bias, "names_code.c");
        for (unsigned i = 0; i < NAMES_LIB_FUNCTIONS; i++) check_named(lib, &functions[i], lib_bias, "names_lib.c");
        if (vor_dwarf_cache_bytes() >= held) fail_msg("cache %zu bytes, %zu before", vor_dwarf_cache_bytes(), held);
    }
    vor_dwarf_cache_set_limit(0);
    vor_module_symbols_close(program);
    vor_module_symbols_close(lib);
    assert_int_equal(vor_dwarf_cache_bytes(), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_the_functions_of_a_program_with_file_and_line),
        cmocka_unit_test(names_a_shared_object_read_from_its_file),
        cmocka_unit_test(finds_lines_without_debug_aranges),
        cmocka_unit_test(refuses_a_file_whose_build_id_is_not_the_expected_one),
        cmocka_unit_test(finds_a_stripped_files_symbols_in_a_debug_directory),
        cmocka_unit_test(bad_input_gets_one_message),
        cmocka_unit_test(a_file_whose_dwarf_describes_no_code_gives_no_lines),
        cmocka_unit_test(a_tiny_dwarf_cache_gives_the_same_answers),
    };
    return cmocka_run_group_tests_name("symbolizer", tests, NULL, NULL);
}

/* test_names.c: functions of -finstrument-functions are named natively from the modules'
 * symbol tables and DWARF. This program is linked without -rdynamic, so static, hidden
 * and inlined-and-outlined functions are in no dynamic symbol table, yet each is named
 * with its file and line; a shared object loaded with dlopen is named the same way; every
 * function site carries its module (path, build id, load address) and offset. A stripped
 * library names what it exports and says why the rest is module+offset; a library
 * replaced on disk after it was loaded is not used to name the code that was loaded.
 *
 * Expected values come from elsewhere than vor's own reading: build ids are fixed at link
 * time (CMakeLists.txt), load addresses come from dlinfo, lines from __LINE__. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names_code.h"
#include "support.h"

static int teardown(void **state) {
    (void)state;
    session_teardown();
    return 0;
}

/* The load bias of the object `handle` refers to (dlopen(NULL) = the program). */
static uintptr_t bias_of(void *handle) {
    struct link_map *map = NULL;
    assert_int_equal(dlinfo(handle, RTLD_DI_LINKMAP, &map), 0);
    return map->l_addr;
}

/* The site of frame `f` named `name`, and how many of the frame's scopes are its. */
static const vor_site *find_site(const recorded_frame *f, const char *name, unsigned *calls) {
    const vor_site *found = NULL;
    *calls = 0;
    for (uint32_t i = 0; i < f->kept; i++) {
        const vor_site *s = vor_site_get(f->scopes[i].site_id);
        if (s != NULL && strcmp(s->name, name) == 0) {
            found = s;
            (*calls)++;
        }
    }
    if (found == NULL) {
        for (uint32_t i = 0; i < f->kept; i++) print_message("  recorded: %s\n", vor_site_get(f->scopes[i].site_id)->name);
        fail_msg("no function site named %s", name);
    }
    return found;
}

typedef struct expected_module {
    char path[PATH_MAX];
    const char *build_id;
    uintptr_t bias;
} expected_module;

/* Checks the sites of `n` functions in frame `f`; returns their module id. */
static uint32_t check_functions(const recorded_frame *f, const names_expected *functions, unsigned n,
                                const char *source_file, const expected_module *module) {
    uint32_t module_id = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned calls;
        const vor_site *s = find_site(f, functions[i].name, &calls);
        assert_int_equal(calls, functions[i].calls);
        assert_string_equal(s->function, functions[i].name);
        assert_non_null(s->file);
        if (strstr(s->file, source_file) == NULL) fail_msg("%s: file %s, expected %s", s->name, s->file, source_file);
        assert_int_equal(s->line, functions[i].line);
        uint32_t id = 0;
        uint64_t offset = 0;
        assert_true(vor_site_module_address(s, &id, &offset));
        assert_int_equal(offset, (uintptr_t)functions[i].address - module->bias);
        if (module_id == 0) module_id = id;
        assert_int_equal(id, module_id);
    }
    vor_module_info info;
    assert_true(vor_module_get(module_id, &info));
    assert_int_equal(info.id, module_id);
    assert_string_equal(info.path, module->path);
    assert_string_equal(info.build_id, module->build_id);
    assert_int_equal(info.load_address, module->bias);
    return module_id;
}

static void start_recording(void) {
    vor_desc d = {0};
    setup_with_capture(d);
    vor_enable();
    recording_attach(64);
}

/* Calls the entry of the loaded names_lib copy `lib` in one recorded frame. */
static const names_expected *record_library_frame(void *lib) {
    names_lib_entry_fn entry = (names_lib_entry_fn)dlsym(lib, "names_lib_entry");
    assert_non_null(entry);
    start_recording();
    const names_expected *functions = NULL;
    entry(1, &functions);
    vor_frame_mark();
    return functions;
}

/* The site of a function named module+offset (`module`: the file's base name). */
static const vor_site *find_unnamed_site(const char *module, void *lib, const void *address) {
    char name[128];
    unsigned calls;
    snprintf(name, sizeof name, "%s+0x%llx", module, (unsigned long long)((uintptr_t)address - bias_of(lib)));
    return find_site(&rec.frames[0], name, &calls);
}

static uint32_t program_module;

static void static_hidden_and_inlined_functions_are_named_without_rdynamic(void **state) {
    (void)state;
    /* None of them is visible to dladdr: the names below come from .symtab. */
    for (unsigned i = 0; i < NAMES_CODE_FUNCTIONS; i++) {
        Dl_info info;
        if (dladdr(names_code_functions[i].address, &info) && info.dli_sname)
            assert_string_not_equal(info.dli_sname, names_code_functions[i].name);
    }
    start_recording();
    names_entry(3);
    vor_frame_mark();
    expected_module program = {"", NAMES_PROGRAM_BUILD_ID, 0};
    ssize_t n = readlink("/proc/self/exe", program.path, sizeof program.path - 1);
    assert_true(n > 0);
    program.path[n] = '\0';
    void *self = dlopen(NULL, RTLD_NOW);
    program.bias = bias_of(self);
    program_module = check_functions(&rec.frames[0], names_code_functions, NAMES_CODE_FUNCTIONS, "names_code.c", &program);
    assert_int_equal(vor_log_count(VOR_LOG_SYMBOLS_UNAVAILABLE), 0);
}

static void a_dlopened_library_is_named_and_its_module_recorded(void **state) {
    (void)state;
    void *lib = dlopen(NAMES_LIB_PATH, RTLD_NOW); /* never closed: sites outlive it */
    assert_non_null(lib);
    const names_expected *functions = record_library_frame(lib);
    expected_module library = {"", NAMES_LIB_BUILD_ID, bias_of(lib)};
    assert_non_null(realpath(NAMES_LIB_PATH, library.path));
    uint32_t id = check_functions(&rec.frames[0], functions, NAMES_LIB_FUNCTIONS, "names_lib.c", &library);
    assert_int_not_equal(id, program_module);
    assert_true(vor_module_count() >= 2);
}

static void a_stripped_library_names_its_exported_functions_and_says_why(void **state) {
    (void)state;
    void *lib = dlopen(NAMES_LIB_STRIPPED_PATH, RTLD_NOW);
    assert_non_null(lib);
    const names_expected *functions = record_library_frame(lib);
    unsigned calls;
    const vor_site *exported = find_site(&rec.frames[0], "names_lib_entry", &calls); /* .dynsym */
    assert_null(exported->file);
    find_unnamed_site("names_lib_stripped.so", lib, functions[0].address);
    assert_int_equal(vor_log_count(VOR_LOG_SYMBOLS_UNAVAILABLE), 1);
    const char *message = captured.last_message[VOR_LOG_SYMBOLS_UNAVAILABLE];
    assert_non_null(strstr(message, "names_lib_stripped.so is stripped"));
    assert_non_null(strstr(message, &NAMES_LIB_BUILD_ID[2])); /* where its debug file would be */
}

/* Copies file `from` to `to` (replacing it by rename, as a build does). */
static void copy_file(const char *from, const char *to) {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", to);
    FILE *in = fopen(from, "rb"), *out = fopen(tmp, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(rename(tmp, to), 0);
}

static void a_library_rebuilt_after_loading_does_not_name_the_loaded_code(void **state) {
    (void)state;
    char dir[] = "/tmp/vor-names-XXXXXX", path[PATH_MAX];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/libreplaced.so", dir);
    copy_file(NAMES_LIB_OTHER_PATH, path);
    void *lib = dlopen(path, RTLD_NOW);
    assert_non_null(lib);
    copy_file(NAMES_LIB_PATH, path); /* the same code with another build id, at the same path */
    const names_expected *functions = record_library_frame(lib);

    unsigned calls;
    /* The static function: module+offset, an offset addr2line takes for the original file. */
    const vor_site *s = find_unnamed_site("libreplaced.so", lib, functions[0].address);
    assert_null(s->file);
    /* The exported one: from the dynamic symbol table of the loaded image. */
    find_site(&rec.frames[0], "names_lib_entry", &calls);
    uint32_t id;
    uint64_t offset;
    assert_true(vor_site_module_address(s, &id, &offset));
    vor_module_info info;
    assert_true(vor_module_get(id, &info));
    assert_string_equal(info.build_id, NAMES_LIB_OTHER_BUILD_ID); /* the loaded image's */
    assert_int_equal(vor_log_count(VOR_LOG_SYMBOLS_UNAVAILABLE), 1);
    const char *message = captured.last_message[VOR_LOG_SYMBOLS_UNAVAILABLE];
    assert_non_null(strstr(message, "libreplaced.so"));
    assert_non_null(strstr(message, NAMES_LIB_BUILD_ID));
    assert_non_null(strstr(message, NAMES_LIB_OTHER_BUILD_ID));
    unlink(path);
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(static_hidden_and_inlined_functions_are_named_without_rdynamic, teardown),
        cmocka_unit_test_teardown(a_dlopened_library_is_named_and_its_module_recorded, teardown),
        cmocka_unit_test_teardown(a_stripped_library_names_its_exported_functions_and_says_why, teardown),
        cmocka_unit_test_teardown(a_library_rebuilt_after_loading_does_not_name_the_loaded_code, teardown),
    };
    return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}

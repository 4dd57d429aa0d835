/* lua_driver.c: drives Debian's Lua 5.4 interpreter (tests/thirdparty) in steps. Lua
 * reports errors with longjmp, which skips the end of every scope between error() and the
 * pcall that catches it: the C functions of the interpreter (-finstrument-functions exit
 * hooks) and this driver's own hand-placed scope in checked_root (a cleanup attribute
 * that never runs). Coroutine yields are longjmps too (lua_yield unwinds to lua_resume).
 *
 * Steps cycle through four kinds (step % 4):
 *   0 tables:     builds a table, sorts it with a Lua comparator, concatenates
 *   1 strings:    string.format, gsub and gmatch over generated text
 *   2 errors:     error() deep in a recursion inside pcall, and a C function that raises
 *                 with luaL_error inside pcall (its VOR_SCOPE skipped)
 *   3 coroutines: a generator that yields (longjmp out of the interpreter's C frames)
 * --kinds DIGITS (default "0123") picks the kinds the steps cycle through:
 * "01" drives the interpreter without a single longjmp (the outputs tests, whose captures
 * must nest exactly today; the longjmp test runs the default cycle, step % 4 = kind).
 * Every step returns an integer the driver folds into the checksum, so the native and wasm
 * builds can be compared. Small on purpose (a few thousand calls into the interpreter).
 *
 * Hand-placed scopes: the step, each call into the library's entry points ("run step"
 * around lua_pcall, "collect garbage" around lua_gc) and checked_root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <vor/vor.h>

#include "driver.h"

const char driver_name[] = "lua_driver";
const int driver_default_steps = 8;
const char driver_usage[] = " [--kinds DIGITS]";

static lua_State *L;
static int scale_factor = 1;
static const char *step_kinds = "0123";

static const char script[] =
    "local kinds = {}\n"
    "kinds[0] = function(n)\n"
    "  local t = {}\n"
    "  for i = 1, 60 * n do t[i] = (i * 7919) % 1009 end\n"
    "  table.sort(t, function(a, b) return a > b end)\n"
    "  local parts = {}\n"
    "  for i = 1, #t, 10 do parts[#parts + 1] = tostring(t[i]) end\n"
    "  return #table.concat(parts, ',') + t[1]\n"
    "end\n"
    "kinds[1] = function(n)\n"
    "  local words = {}\n"
    "  for i = 1, 40 * n do words[i] = string.format('w%03d', (i * 31) % 97) end\n"
    "  local text = table.concat(words, ' ')\n"
    "  local replaced, count = text:gsub('w0(%d)', 'x%1')\n"
    "  local sum = count\n"
    "  for d in replaced:gmatch('%d+') do sum = sum + tonumber(d) end\n"
    "  return sum + #replaced\n"
    "end\n"
    "local function deep(k)\n"
    "  if k == 0 then error('deep error') end\n"
    "  return deep(k - 1) + 1\n"
    "end\n"
    "kinds[2] = function(n)\n"
    "  local caught = 0\n"
    "  for i = 1, 4 * n do\n"
    "    local ok, msg = pcall(deep, 10 + i % 5)\n"
    "    if not ok and msg:find('deep error', 1, true) then caught = caught + 1 end\n"
    "    local ok2, msg2 = pcall(checked_root, -i)\n"
    "    if not ok2 and msg2:find('negative', 1, true) then caught = caught + 1 end\n"
    "    caught = caught + checked_root(i * i)\n"
    "  end\n"
    "  return caught\n"
    "end\n"
    "kinds[3] = function(n)\n"
    "  local gen = coroutine.wrap(function()\n"
    "    for i = 1, 30 * n do coroutine.yield(i * i % 101) end\n"
    "  end)\n"
    "  local sum = 0\n"
    "  for i = 1, 30 * n do sum = sum + gen() end\n"
    "  return sum\n"
    "end\n"
    "function step(kind, n) return kinds[kind](n) end\n";

/* A C function the script calls: raises a Lua error (longjmp) for negative input, from
 * inside a hand-placed scope whose end is then skipped. */
static int c_checked_root(lua_State *state) {
    VOR_SCOPE("checked_root");
    lua_Integer x = luaL_checkinteger(state, 1);
    if (x < 0) return luaL_error(state, "checked_root: negative argument %d", (int)x);
    lua_Integer r = 0;
    while ((r + 1) * (r + 1) <= x) r++;
    lua_pushinteger(state, r);
    return 1;
}

int driver_option(const char *name, const char *value) {
    if (strcmp(name, "kinds") != 0) return 0;
    if (value[0] == '\0' || strspn(value, "0123") != strlen(value)) {
        fprintf(stderr, "%s: --kinds takes digits 0 to 3 (got '%s')\n", driver_name, value);
        return -1;
    }
    step_kinds = value;
    return 1;
}

int driver_init(int scale) {
    scale_factor = scale;
    L = luaL_newstate();
    if (L == NULL) {
        fprintf(stderr, "%s: luaL_newstate failed\n", driver_name);
        return 1;
    }
    luaL_openlibs(L);
    lua_register(L, "checked_root", c_checked_root);
    if (luaL_loadbufferx(L, script, sizeof script - 1, "=driver", "t") != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK) {
        fprintf(stderr, "%s: the script failed to load: %s\n", driver_name, lua_tostring(L, -1));
        return 1;
    }
    return 0;
}

static int call_step(int step, lua_Integer *result) {
    VOR_SCOPE("run step");
    lua_getglobal(L, "step");
    lua_pushinteger(L, step_kinds[step % (int)strlen(step_kinds)] - '0');
    lua_pushinteger(L, scale_factor);
    if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
        fprintf(stderr, "%s: step %d failed: %s\n", driver_name, step, lua_tostring(L, -1));
        lua_pop(L, 1);
        return 1;
    }
    *result = lua_tointeger(L, -1);
    lua_pop(L, 1);
    return 0;
}

static void collect_garbage(void) {
    VOR_SCOPE("collect garbage");
    lua_gc(L, LUA_GCCOLLECT);
}

int driver_step(int step, uint64_t *checksum) {
    VOR_SCOPE("step");
    lua_Integer result = 0;
    if (call_step(step, &result) != 0) return 1;
    collect_garbage();
    long long v = (long long)result;
    *checksum = driver_hash(*checksum, &v, sizeof v);
    return 0;
}

void driver_finish(void) {
    lua_close(L);
}

#!/bin/sh
# run.sh: one thirdparty test (tests/thirdparty/CMakeLists.txt registers each with its
# environment): runs a driver of build/thirdparty with vor's outputs on, then reads them back.
#
#   run.sh names LIB                      native -finstrument-functions run: functions named
#   run.sh diff LIB                       native against wasm, same driver: names match
#   run.sh outputs LIB FLAVOUR VARIANT    capture, traces, flame graph, summary read back
#   run.sh longjmp FLAVOUR VARIANT
#                                         Lua's longjmps: later frames recorded correctly
#
# Environment (set by ctest): THIRDPARTY_BIN (build/thirdparty), THIRDPARTY_OUT (this test's
# folder, emptied first and left for inspection), VOR (the vor command), THIRDPARTY_CHECK
# (check_capture), VOR_SOURCE_DIR. LIB: lua or zstd; FLAVOUR: native or wasm (node);
# VARIANT: hand (hand-placed scopes) or whole (the library with -finstrument-functions).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$THIRDPARTY_OUT
rm -rf "$out"
mkdir -p "$out"
STEPS=8
# hand_names LIB: the driver's hand-placed scopes, separated by ';'.
hand_names() {
    case $1 in
    lua) echo "step;run step;collect garbage;checked_root" ;;
    zstd) echo "step;make input;compress one-shot;compress streaming;decompress;verify" ;;
    esac
}

# drive NAME FLAVOUR PROGRAM [ARGS...]: runs build/thirdparty's PROGRAM with the outputs
# already in the environment; its stdout and stderr go to $out/NAME.out and NAME.err.
drive() {
    name=$1
    flavour=$2
    program=$3
    shift 3
    if [ "$flavour" = native ]; then
        set -- "$THIRDPARTY_BIN/native/bin/$program" "$@"
    else
        set -- node "$THIRDPARTY_BIN/wasm/bin/$program.cjs" "$@"
    fi
    status=0
    "$@" --steps "$STEPS" > "$out/$name.out" 2> "$out/$name.err" || status=$?
    if [ "$status" != 0 ]; then
        cat "$out/$name.err" >&2
        echo "FAIL $* exited with status $status" >&2
        exit 1
    fi
    grep '^checksum ' "$out/$name.out" > /dev/null || { echo "FAIL $name printed no checksum" >&2; exit 1; }
}

# record NAME FLAVOUR PROGRAM: a capture with flame frames, $out/NAME.vor.
record() {
    VOR_RECORD="$out/$1.vor" VOR_RECORD_FLAME=1 drive "$@"
}

check_trace() {
    node "$VOR_SOURCE_DIR/tests/chrome/check_trace.mjs" strict "$1" --summary
}

case ${1:-} in
names)
    lib=$2
    record native native "${lib}_whole"
    "$THIRDPARTY_CHECK" names "$out/native.vor" 99
    ;;
diff)
    lib=$2
    record native native "${lib}_whole"
    record wasm wasm "${lib}_whole"
    a=$(grep '^checksum ' "$out/native.out")
    b=$(grep '^checksum ' "$out/wasm.out")
    [ "$a" = "$b" ] || { echo "FAIL the two flavours computed different results: native $a, wasm $b" >&2; exit 1; }
    "$THIRDPARTY_CHECK" names "$out/wasm.vor" 100 --no-lines
    "$VOR" diff "$out/native.vor" "$out/wasm.vor" --json --top 1000000 > "$out/diff.json"
    "$VOR" diff "$out/native.vor" "$out/wasm.vor" --svg "$out/diff.svg" > "$out/diff.txt"
    hand=$(hand_names "$lib")
    IFS=';'
    # shellcheck disable=SC2086
    /usr/bin/python3 "$here/check_outputs.py" diff "$out/diff.json" 95 $hand
    unset IFS
    /usr/bin/python3 -c "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])" "$out/diff.svg"
    ;;
outputs)
    lib=$2
    flavour=$3
    variant=$4
    # Lua's tables and strings steps only: the error and coroutine steps (longjmp) are the
    # longjmp test's, whose captures do not nest exactly until the core closes skipped scopes.
    kinds=
    [ "$lib" = lua ] && kinds="--kinds 01"
    # shellcheck disable=SC2086
    VOR_TRACE="$out/live.json" record run "$flavour" "${lib}_$variant" $kinds
    check_trace "$out/live.json"
    "$VOR" export "$out/run.vor" --format chrome -o "$out/export.json"
    # README: the export of a capture is the very bytes VOR_TRACE wrote in the same run, so
    # the check of the live trace holds for it too.
    cmp "$out/live.json" "$out/export.json"
    "$VOR" export "$out/run.vor" --format folded -o "$out/folded.txt"
    "$VOR" flamegraph "$out/run.vor" -o "$out/flame.svg"
    "$VOR" summary "$out/run.vor" --json --top 50 > "$out/summary.json"
    /usr/bin/python3 "$here/check_outputs.py" outputs "$out/summary.json" "$out/folded.txt" "$out/flame.svg"
    # zstd raises no errors: its frames must all hold scopes, none dropped.
    complete=
    [ "$lib" = zstd ] && complete=--complete
    "$THIRDPARTY_CHECK" structure "$out/run.vor" "$STEPS" $complete
    ;;
longjmp)
    flavour=$2
    variant=$3
    # The Chrome trace nests exactly whatever happened (its writer's promise): a hard check.
    VOR_TRACE="$out/live.json" record run "$flavour" "lua_$variant"
    check_trace "$out/live.json"
    # Frames that must hold unwound scopes: error steps (2) always; coroutine yields (3) skip
    # only the interpreter's own functions, which the hand variant does not record.
    kinds=2
    [ "$variant" = whole ] && kinds=23
    "$THIRDPARTY_CHECK" longjmp "$out/run.vor" "$STEPS" step checked_root "$kinds"
    ;;
*)
    echo "usage: run.sh names|diff|outputs|longjmp ..." >&2
    exit 2
    ;;
esac

"""python -m vor run: runs a Python program with vor recording, unmodified.

    python -m vor run [options] script.py [args...]
    python -m vor run [options] -m module [args...]

The options set the same environment variables a C program reads (VOR_RECORD,
VOR_RECORD_FLAME, ...), for vor only: they are put back as they were once the session
started, so programs the script starts do not write into the same capture.
--all-functions times every Python function call through the interpreter's profiling
hook (in C, as cProfile's is); --frame-function NAME marks a frame at each return of the
function NAME. Without either, the program's own vor.profile / vor.scope / vor.frame_mark
calls do the work; a run that marked no frame at all is recorded as one frame.
"""

import argparse
import inspect
import os
import pkgutil  # noqa: F401  runpy imports it when it starts the program: not the program's time
import runpy
import sys

from . import _vor

USAGE = "python -m vor run [options] (script.py | -m module) [args...]"


def _positive(text):
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be at least 1")
    return value


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m vor run",
        usage=USAGE,
        description="Runs a Python program with vor recording (see the README's Python section).",
    )
    p.add_argument("--record", metavar="PATH", help="write a .vor capture (VOR_RECORD)")
    p.add_argument("--flame", action="store_true", help="with --record: also record the scopes (VOR_RECORD_FLAME=1)")
    p.add_argument("--every", metavar="N", type=_positive, help="with --flame: scopes in 1 frame in N (VOR_RECORD_EVERY)")
    p.add_argument("--max-frames", metavar="N", type=_positive,
                   help="with --flame: scopes in the first N frames only (VOR_RECORD_MAX_FRAMES)")
    p.add_argument("--trace", metavar="PATH", help="write a Chrome trace (VOR_TRACE)")
    p.add_argument("--all-functions", action="store_true",
                   help="every Python function call is a scope (the interpreter's profiling hook)")
    p.add_argument("--frame-function", metavar="NAME",
                   help="mark a frame at each return of this function (name, Class.name or module.name)")
    p.add_argument("--thread-buffer", metavar="N", type=_positive,
                   help="scopes a thread can end between two frames (vor.setup; default 65536)")
    p.add_argument("-m", dest="module", metavar="MODULE", help="run a module as a script, like python -m")
    p.add_argument("target", nargs=argparse.REMAINDER, help="script.py and its arguments (or the module's arguments)")
    return p


def _settings(args):
    """The VOR_* variables the options ask for."""
    env = {}
    if args.record:
        env["VOR_RECORD"] = args.record
    if args.flame:
        env["VOR_RECORD_FLAME"] = "1"
    if args.every:
        env["VOR_RECORD_EVERY"] = str(args.every)
    if args.max_frames:
        env["VOR_RECORD_MAX_FRAMES"] = str(args.max_frames)
    if args.trace:
        env["VOR_TRACE"] = args.trace
    return env


def _check(parser, args):
    if args.module is None and not args.target:
        parser.error("give a script to run (or -m module)")
    if (args.every or args.max_frames) and not args.flame:
        parser.error("--every and --max-frames apply to flame frames: add --flame")
    if args.flame and not args.record and not os.environ.get("VOR_RECORD"):
        parser.error("--flame records scopes into a capture: add --record PATH")
    if args.module is None and not os.path.isfile(args.target[0]):
        parser.error(f"{args.target[0]}: no such file")


def _start_session(env):
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        _vor.enable()  # reads the variables
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _keep_runpy_out():
    # runpy's functions start the program: they are not the program's (and its run_path
    # would sit above the program's frames in every stack).
    for obj in list(vars(runpy).values()):
        if getattr(obj, "__module__", None) != "runpy":
            continue
        members = vars(obj).values() if isinstance(obj, type) else (obj,)
        for member in members:
            if inspect.isfunction(member):
                _vor.skip(member)


def _run_program(args):
    """The program as a function of no arguments (left out of --all-functions)."""
    if args.module is not None:
        sys.argv = [args.module] + args.target

        def program():
            runpy.run_module(args.module, run_name="__main__", alter_sys=True)

    else:
        script = args.target[0]
        sys.argv = list(args.target)
        sys.path[0] = os.path.dirname(os.path.abspath(script))

        def program():
            runpy.run_path(script, run_name="__main__")

    return _vor.skip(program)


def main(argv):
    parser = _parser()
    args = parser.parse_args(argv)
    if args.target and args.target[0] == "--":
        args.target = args.target[1:]
    _check(parser, args)
    if args.thread_buffer:
        _vor.setup(thread_buffer_scopes=args.thread_buffer)
    program = _run_program(args)
    _start_session(_settings(args))
    hooked = args.all_functions or args.frame_function is not None
    if hooked:
        _keep_runpy_out()
        _vor._hook_start(args.all_functions, args.frame_function)
    status = 0
    try:
        program()
    except SystemExit as e:
        status = e.code
    finally:
        if hooked:
            _vor._hook_stop()
        if _vor.is_enabled() and _vor.counters()["frames"] == 0:
            _vor.frame_mark()  # nothing marked frames: the whole run is frame 0
        counters = _vor.counters()
        _vor.shutdown()
        where = f" into {args.record}" if args.record else ""
        print(f"vor: {counters['frames']} frames, {counters['scopes_recorded']} scopes recorded, "
              f"{counters['scopes_dropped']} dropped{where}", file=sys.stderr)
        if counters["scopes_dropped"] and counters["frames"] <= 1 and args.frame_function is None:
            print("vor: the run was one frame, and a thread's buffer holds the scopes of one frame: "
                  "mark frames with --frame-function NAME (or raise --thread-buffer)", file=sys.stderr)
    return status

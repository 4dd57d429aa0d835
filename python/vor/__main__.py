"""python -m vor: the command line of the Python package.

    python -m vor run [options] script.py [args...]    run a program with vor recording
    python -m vor version                              print vor's version

`vor summary`, `vor flamegraph`, `vor diff` and `vor serve` (the C command) read what it
records.
"""

import sys

USAGE = """usage: python -m vor run [options] (script.py | -m module) [args...]
       python -m vor version
run --help lists the options."""


def main(argv):
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "run":
        from ._run import main as run

        return run(rest)
    if command == "version":
        from . import version

        print(version)
        return 0
    print(f"python -m vor: unknown command '{command}'\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

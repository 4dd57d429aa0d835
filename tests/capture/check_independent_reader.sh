#!/bin/sh
# The reference reader (capture_dump) and the independent Python reader written from
# docs/FORMAT.md agree on real captures, damaged copies, the 1.0 capture in data/ and a
# capture with open scopes, drops and modules, and a stream resumed mid-capture. Arguments:
# training_loop capture_dump test_capture_format test_capture_index.
set -eu
exec /usr/bin/python3 "$(dirname "$0")/compare_readers.py" "$1" "$2" "$3" "$4"

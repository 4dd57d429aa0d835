#!/bin/sh
# Installs what the build and the tests need on Debian 12, idempotently.
#
# Every `make` target that builds runs this first. On a machine that already
# has everything it only queries dpkg and returns, so it costs well under a
# second. Debian packages come from apt (root needed only when something is
# missing); npm packages come from the committed package-lock.json with
# `npm ci`, re-run only when the lockfile changes.
set -eu

cd "$(dirname "$0")/.."

export DEBIAN_FRONTEND=noninteractive

# Network steps are tried three times, 10 s apart: a mirror's hiccup should not fail a build.
retry() {
    for attempt in 1 2 3; do
        "$@" && return 0
        [ "$attempt" = 3 ] && break
        echo "setup: '$*' failed (attempt $attempt of 3); retrying in 10 s" >&2
        sleep 10
    done
    echo "setup: '$*' failed 3 times; check the network and the Debian and npm mirrors" >&2
    return 1
}

DEBIAN_PACKAGES="cmake ninja-build pkg-config make gcc g++ clang-14 clang-format-14 libclang-rt-14-dev \
emscripten liblz4-dev lz4 python3 python3-lz4 libwebsockets-dev libcmocka-dev chromium \
libdw-dev libelf-dev libsqlite3-dev \
python3-dev python3-pytest python3-setuptools python3-numpy dpkg-dev"

missing=""
for pkg in $DEBIAN_PACKAGES; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    case "$status" in
        *"install ok installed"*) ;;
        *) missing="$missing $pkg" ;;
    esac
done

if [ -n "$missing" ]; then
    echo "setup: installing Debian packages:$missing"
    if [ "$(id -u)" != 0 ]; then
        echo "setup: these packages are missing and installing them needs root:$missing" >&2
        exit 1
    fi
    retry apt-get update -qq
    # shellcheck disable=SC2086
    retry apt-get install -y -qq --no-install-recommends $missing
fi

# Node.js and npm: the machine image ships them (NodeSource build); only
# install Debian's when there is none at all.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
        echo "setup: node and npm are missing and installing them needs root" >&2
        exit 1
    fi
    retry apt-get update -qq
    retry apt-get install -y -qq --no-install-recommends nodejs npm
fi

# npm packages from the lockfile. The stamp records which lockfile was installed.
if [ -f package-lock.json ]; then
    stamp=node_modules/.vor-lock-stamp
    if [ -L node_modules ] && { [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; }; then
        # A link to another checkout's packages (git worktrees share one): `npm ci` would empty
        # that directory under everyone using it. Say so instead.
        echo "setup: node_modules links to $(readlink node_modules), installed for another package-lock.json;" \
             "not reinstalling through the link (run setup there, or replace the link)" >&2
    elif [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
        echo "setup: npm ci (package-lock.json changed or node_modules missing)"
        retry npm ci --no-audit --no-fund --loglevel=error
        cp package-lock.json "$stamp"
    fi
fi

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

DEBIAN_PACKAGES="cmake ninja-build pkg-config make gcc g++ clang-14 libclang-rt-14-dev \
emscripten liblz4-dev lz4 python3 python3-lz4 libwebsockets-dev libcmocka-dev chromium"

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
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi

# Node.js and npm: the machine image ships them (NodeSource build); only
# install Debian's when there is none at all.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
        echo "setup: node and npm are missing and installing them needs root" >&2
        exit 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm
fi

# npm packages from the lockfile. The stamp records which lockfile was installed.
if [ -f package-lock.json ]; then
    stamp=node_modules/.vor-lock-stamp
    if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
        echo "setup: npm ci (package-lock.json changed or node_modules missing)"
        npm ci --no-audit --no-fund --loglevel=error
        cp package-lock.json "$stamp"
    fi
fi

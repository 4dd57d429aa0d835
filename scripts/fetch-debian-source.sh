#!/bin/sh
# Fetches one Debian bookworm source package and extracts it, Debian's patches applied,
# into DEST (dpkg-source, from dpkg-dev).
# Used for the code vor builds but never commits: lz4 for the wasm flavour
# (fetch-lz4-source.sh), and the third-party libraries tests/thirdparty profiles.
#
# A private apt configuration (one deb-src line; lists, cache and downloads under
# DEST's parent folder, in apt/ and PACKAGE-download/), so the machine's /etc/apt is
# never touched; apt checks the files against the signed Release file. No Debian
# revision is pinned: a stable update replaces the old source in the archive, and a pin
# would then break every fresh build. Downloads are tried three times (apt's lock on the
# shared lists, held by a second fetch running at the same moment, is one reason to retry).
# Idempotent: DEST appears in one rename once complete, so an existing DEST is complete
# and nothing is done.
#
#   sh scripts/fetch-debian-source.sh PACKAGE DEST
#   e.g. sh scripts/fetch-debian-source.sh lua5.4 build/deps/lua5.4-source
set -eu
if [ $# -ne 2 ] || [ -z "$1" ] || [ -z "$2" ]; then
    echo "usage: sh scripts/fetch-debian-source.sh PACKAGE DEST" >&2
    exit 2
fi
package=$1
case $package in
    *[!a-z0-9.+-]*|[!a-z0-9]*)
        echo "fetch-debian-source: '$package' is not a Debian source package name" >&2
        exit 2 ;;
esac
[ -d "$2" ] && exit 0
mkdir -p "$(dirname "$2")"
deps=$(cd "$(dirname "$2")" && pwd)
dest=$deps/$(basename "$2")
me="fetch-debian-source ($package)"

mkdir -p "$deps/apt/lists/partial" "$deps/apt/cache/archives/partial" "$deps/apt/etc"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
    > "$deps/apt/etc/sources.list"
APT="-o Dir::Etc::SourceList=$deps/apt/etc/sources.list -o Dir::Etc::SourceParts=/dev/null
     -o Dir::State::Lists=$deps/apt/lists -o Dir::Cache=$deps/apt/cache -o APT::Sandbox::User=root"
download=$deps/$package-download
mkdir -p "$download"

fetch() {
    # shellcheck disable=SC2086
    apt-get $APT update -qq && (cd "$download" && apt-get $APT source --download-only -qq "$package")
}
echo "$me: downloading Debian's $package source package"
for attempt in 1 2 3; do
    fetch && break
    if [ "$attempt" = 3 ]; then
        echo "$me: could not download Debian's $package source (3 attempts); check the network" >&2
        exit 1
    fi
    echo "$me: download failed (attempt $attempt of 3); retrying in 10 s" >&2
    sleep 10
done

# The newest source package downloaded, extracted by dpkg-source with Debian's patches
# applied (security fixes included), beside DEST, then renamed to it. dpkg-source checks
# the tarballs against the .dsc, whose checksums apt took from the signed archive (the
# .dsc's own signature needs debian-keyring, which is not required: its warning is
# shown only if extraction fails).
dsc=$(ls "$download/${package}_"*.dsc 2>/dev/null | sort -V | tail -n 1)
if [ -z "$dsc" ]; then
    echo "$me: no ${package}_*.dsc in $download" >&2
    exit 1
fi
unpack=$deps/.unpack-$package.$$
rm -rf "$unpack"
mkdir -p "$unpack"
trap 'rm -rf "$unpack"' EXIT
if ! (cd "$download" && dpkg-source -x "$dsc" "$unpack/src") > "$unpack/log" 2>&1; then
    cat "$unpack/log" >&2
    echo "$me: dpkg-source could not extract $(basename "$dsc")" >&2
    exit 1
fi
# -T: a second fetch that finished first leaves DEST complete; never move into it.
if ! mv -T "$unpack/src" "$dest" 2>/dev/null; then
    [ -d "$dest" ] || { echo "$me: could not rename the extracted source to $dest" >&2; exit 1; }
fi
echo "$me: $dest ($(basename "$dsc" .dsc), Debian's patches applied)"

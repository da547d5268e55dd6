#!/bin/sh
# Fetch Debian's arm64 Xen 4.17 hypervisor package and unpack it into build/xen/ (gitignored).
# Idempotent: does nothing when the cache already holds the hypervisor binary.
# Needs root (or sudo) only for `dpkg --add-architecture arm64` and `apt-get update`.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE="$ROOT/build/xen"
PKG=${XEN_PKG:-xen-hypervisor-4.17-arm64}

if ls "$CACHE"/root/boot/xen-* >/dev/null 2>&1; then
	echo "fetch-xen: cache present: $(ls "$CACHE"/root/boot/xen-* | head -n 1)"
	exit 0
fi

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	$SUDO dpkg --add-architecture arm64
	$SUDO apt-get update
fi
if ! apt-cache show "$PKG:arm64" >/dev/null 2>&1; then
	$SUDO apt-get update
fi
if ! apt-cache show "$PKG:arm64" >/dev/null 2>&1; then
	echo "fetch-xen: no package $PKG:arm64; candidates:" >&2
	apt-cache search --names-only '^xen-hypervisor-.*-arm64' >&2 || true
	exit 1
fi

mkdir -p "$CACHE/deb"
rm -rf "$CACHE/root.tmp"
(cd "$CACHE/deb" && apt-get download "$PKG:arm64")
DEB=$(ls -t "$CACHE"/deb/"$PKG"_*_arm64.deb | head -n 1)
dpkg -x "$DEB" "$CACHE/root.tmp"
mv "$CACHE/root.tmp" "$CACHE/root"
echo "fetch-xen: unpacked $(basename "$DEB") into $CACHE/root"
ls "$CACHE"/root/boot/

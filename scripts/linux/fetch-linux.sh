#!/bin/sh
# Make the Linux test guest out of Debian arm64 packages only, in build/linux/ (gitignored):
#   Image              Debian's arm64 kernel (linux-image-arm64 names the package), uncompressed
#   initramfs.cpio.gz  busybox-static, rt-tests' cyclictest with its libraries, the virtio
#                      modules and /init (tools/tern/initramfs.py)
#   VERSION            package and version of the kernel, busybox-static and rt-tests
#   root/, deb/        the unpacked packages, and the packages themselves
# Idempotent: the packages are fetched once; Image and the initramfs are remade only when missing
# or older than the packages (the initramfs also when tools/tern/initramfs.py is newer).
# Needs root (or sudo) only for `dpkg --add-architecture arm64` and `apt-get update`.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE="$ROOT/build/linux"
# cyclictest needs libc6 (libc, librt, libpthread, the loader) and libnuma1: the initramfs
# builder follows its ELF NEEDED entries and names any library missing from these.
PACKAGES="busybox-static rt-tests libc6 libnuma1"

fail() {
	echo "fetch-linux: $*" >&2
	exit 1
}

fetch_packages() {
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		$SUDO dpkg --add-architecture arm64
		$SUDO apt-get update
	fi
	if ! apt-cache show linux-image-arm64:arm64 >/dev/null 2>&1; then
		$SUDO apt-get update
	fi
	# The metapackage depends on the versioned kernel package, e.g. linux-image-6.1.0-56-arm64.
	KPKG=$(apt-cache depends linux-image-arm64:arm64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[^:]*-arm64\).*/\1/p' | head -n 1)
	[ -n "$KPKG" ] || fail "cannot tell which kernel package linux-image-arm64:arm64 depends on"

	rm -rf "$CACHE/VERSION" "$CACHE/deb" "$CACHE/root.tmp"
	mkdir -p "$CACHE/deb"
	if ! (cd "$CACHE/deb" && apt-get download "$KPKG:arm64" $(printf '%s:arm64 ' $PACKAGES)) \
		>"$CACHE/download.log" 2>&1; then
		cat "$CACHE/download.log" >&2
		fail "apt-get download failed"
	fi
	rm "$CACHE/download.log"
	for deb in "$CACHE"/deb/*.deb; do
		dpkg -x "$deb" "$CACHE/root.tmp"
	done
	rm -rf "$CACHE/root"
	mv "$CACHE/root.tmp" "$CACHE/root"
	for pkg in "$KPKG" busybox-static rt-tests; do
		dpkg-deb -f "$CACHE"/deb/"$pkg"_*_arm64.deb Package Version | cut -d' ' -f2 | paste -sd' '
	done >"$CACHE/VERSION"
}

# True when file $1 is missing or older than any of the others.
stale() {
	target=$1
	shift
	for dep in "$@"; do
		[ "$target" -nt "$dep" ] || return 0
	done
	return 1
}

# Debian's arm64 vmlinuz is a plain Image in bookworm; gzip-compressed ones are unpacked too.
make_image() {
	VMLINUZ=$(ls "$CACHE"/root/boot/vmlinuz-* 2>/dev/null | head -n 1)
	[ -n "$VMLINUZ" ] || fail "no boot/vmlinuz-* in $CACHE/root"
	if [ "$(od -An -tx1 -N2 "$VMLINUZ" | tr -d ' \n')" = 1f8b ]; then
		gzip -dc <"$VMLINUZ" >"$CACHE/Image.tmp"
	else
		cp "$VMLINUZ" "$CACHE/Image.tmp"
	fi
	# arm64 boot protocol: the magic "ARM\x64" at offset 0x38 of the Image header.
	if [ "$(od -An -tx1 -j56 -N4 "$CACHE/Image.tmp" | tr -d ' \n')" != 41524d64 ]; then
		rm -f "$CACHE/Image.tmp"
		fail "$VMLINUZ is not an arm64 Image (no ARM\\x64 magic at offset 0x38)"
	fi
	mv "$CACHE/Image.tmp" "$CACHE/Image"
}

make_initramfs() {
	if ! out=$(PYTHONPATH="$ROOT/tools" python3 -m tern.initramfs --root "$CACHE/root" \
		--out "$CACHE/initramfs.cpio.gz.tmp" 2>&1); then
		rm -f "$CACHE/initramfs.cpio.gz.tmp"
		echo "$out" >&2
		fail "could not build the initramfs"
	fi
	mv "$CACHE/initramfs.cpio.gz.tmp" "$CACHE/initramfs.cpio.gz"
}

# VERSION is written last, so it stands for a complete set of unpacked packages.
[ -d "$CACHE/root" ] && [ -f "$CACHE/VERSION" ] || fetch_packages
if stale "$CACHE/Image" "$CACHE/VERSION"; then
	make_image
fi
if stale "$CACHE/initramfs.cpio.gz" "$CACHE/VERSION" "$ROOT/tools/tern/initramfs.py"; then
	make_initramfs
fi

echo "fetch-linux: $(head -n 1 "$CACHE/VERSION"): $CACHE/Image ($(wc -c <"$CACHE/Image") bytes)," \
	"$CACHE/initramfs.cpio.gz ($(wc -c <"$CACHE/initramfs.cpio.gz") bytes)"

#!/bin/sh
# Make the Linux test guest out of Debian packages only, for one architecture:
#   scripts/linux/fetch-linux.sh [arm64|riscv64]    (default arm64; `make linux` makes both)
# into build/linux/ (arm64) or build/linux-riscv64/ (riscv64), gitignored:
#   Image              Debian's kernel (linux-image-ARCH names the package), uncompressed: an
#                      arm64 Image, or a RISC-V one ("RSC\x05" at 0x38; Debian's riscv64
#                      vmlinuz is one, with an EFI stub Tern does not use)
#   initramfs.cpio.gz  busybox-static, rt-tests' cyclictest with the libraries it needs (the
#                      lib* packages rt-tests depends on, and libc6), the virtio and uio modules,
#                      the vsock modules, this tree's tern-chan, tern-vio and tern-vsock
#                      (guests/build/ARCH/: `make -C guests tern-chan tern-vio tern-vsock`,
#                      which `make linux` runs first) and /init
#                      (tools/tern/initramfs.py)
#   VERSION            package and version of the kernel (first line) and of every other
#                      package, then the Debian suite they came from ("suite NAME")
#   root/, deb/        the unpacked packages, and the packages themselves
#   apt/               riscv64 only: the private apt configuration, its indices and cache
#
# arm64 comes from the host's own apt sources (Debian 12, bookworm), with arm64 added to dpkg's
# architectures: that, and apt-get update, need root (or sudo).
#
# riscv64: Debian 12 has no riscv64 (it is an official architecture from Debian 13, trixie), so
# its packages come through a private apt configuration in apt/: its own sources.list, index
# lists and cache, riscv64 as apt's only architecture. The system's sources and dpkg's
# architectures are left alone, and no root is needed. The suite is trixie (with
# trixie-updates and trixie-security) when apt-get update succeeds for it. deb.debian.org has
# been serving trixie's riscv64 Packages files with sizes that do not match the signed Release
# file ("File has unexpected size (9385284 != 9387120). Mirror sync in progress?"), and apt
# refuses them; then the script says so, quoting apt's errors, and falls back to sid
# (unstable), with the same package names. Either suite is verified the same way: the Release
# file against Debian's archive keyring, the Packages file against the Release file, every .deb
# against the Packages file (apt-get download); nothing is ever fetched unauthenticated. sid's
# kernel is split into linux-image-V (an empty package), linux-binary-V and linux-modules-V
# (and /usr merged): the kernel's linux-*-V dependencies are fetched with it.
#
# Idempotent: the packages are fetched once; Image and the initramfs are remade only when missing
# or older than the packages (the initramfs also when tools/tern/initramfs.py or tern-chan is
# newer).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ARCH=${1:-arm64}
case $ARCH in
arm64)
	CACHE="$ROOT/build/linux"
	MAGIC=41524d64 # "ARM\x64", the arm64 boot protocol's Image header
	;;
riscv64)
	CACHE="$ROOT/build/linux-riscv64"
	MAGIC=52534305 # "RSC\x05", the RISC-V Image header's magic2
	;;
*)
	echo "usage: $0 [arm64|riscv64]" >&2
	exit 2
	;;
esac
APT="$CACHE/apt"
TERN_CHAN="$ROOT/guests/build/$ARCH/tern-chan"
TERN_VIO="$ROOT/guests/build/$ARCH/tern-vio"
TERN_VSOCK="$ROOT/guests/build/$ARCH/tern-vsock"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

fail() {
	echo "fetch-linux: $ARCH: $*" >&2
	exit 1
}

# apt-get and apt-cache, on the host's configuration (arm64) or the private one (riscv64).
apt_() {
	tool=$1
	shift
	if [ "$ARCH" = arm64 ]; then
		"$tool" "$@"
	else
		"$tool" -o Dir::Etc::sourcelist="$APT/sources.list" -o Dir::Etc::sourceparts=- \
			-o Dir::State::Lists="$APT/lists" -o Dir::Cache="$APT/cache" \
			-o Dir::State::status="$APT/status" \
			-o APT::Architecture="$ARCH" -o APT::Architectures="$ARCH" "$@"
	fi
}

# The private configuration for suite $1 and its indices; false (apt's log in
# $APT/update.log) if apt-get update fails.
private_update() {
	rm -rf "$APT/lists" "$APT/cache"
	mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial"
	: >"$APT/status"
	opts="[arch=$ARCH signed-by=$KEYRING]"
	if [ "$1" = trixie ]; then
		printf 'deb %s http://deb.debian.org/debian %s main\n' \
			"$opts" trixie "$opts" trixie-updates
		printf 'deb %s http://deb.debian.org/debian-security trixie-security main\n' "$opts"
	else
		printf 'deb %s http://deb.debian.org/debian %s main\n' "$opts" "$1"
	fi >"$APT/sources.list"
	apt_ apt-get -q update >"$APT/update.log" 2>&1
}

# SUITE: where the packages come from, with the indices up to date.
apt_setup() {
	if [ "$ARCH" = arm64 ]; then
		SUDO=
		[ "$(id -u)" -eq 0 ] || SUDO=sudo
		if ! dpkg --print-foreign-architectures | grep -qx arm64; then
			$SUDO dpkg --add-architecture arm64
			$SUDO apt-get update
		fi
		if ! apt-cache show linux-image-arm64:arm64 >/dev/null 2>&1; then
			$SUDO apt-get update
		fi
		SUITE=$(. /etc/os-release && echo "$VERSION_CODENAME")
		return
	fi
	mkdir -p "$APT"
	SUITE=trixie
	if ! private_update trixie; then
		echo "fetch-linux: warning: apt-get update failed for Debian 13 (trixie) riscv64:" >&2
		grep '^E:' "$APT/update.log" | sed 's/^/    /' >&2
		echo "fetch-linux: warning: using sid (unstable) instead, the same packages," \
			"verified the same way" >&2
		SUITE=sid
		if ! private_update sid; then
			cat "$APT/update.log" >&2
			fail "apt-get update failed for sid too"
		fi
	fi
}

# What a package depends on: one name a line, without :ARCH qualifiers or alternatives' bars.
depends() {
	apt_ apt-cache depends "$1:$ARCH" 2>/dev/null |
		sed -n 's/^ *|\{0,1\}Depends: \([^:< ][^: ]*\).*/\1/p'
}

fetch_packages() {
	apt_setup
	# The metapackage depends on the versioned kernel package, e.g. linux-image-6.1.0-56-arm64,
	# which may depend on its own parts (linux-binary-V, linux-modules-V; V its version).
	KPKG=$(depends "linux-image-$ARCH" | grep -x "linux-image-.*-$ARCH" | head -n 1)
	[ -n "$KPKG" ] ||
		fail "cannot tell which kernel package linux-image-$ARCH depends on (suite $SUITE)"
	V=${KPKG#linux-image-}
	KPARTS=$(depends "$KPKG" | awk -v v="-$V" \
		'/^linux-/ && length($0) > length(v) && substr($0, length($0) - length(v) + 1) == v')
	# cyclictest's libraries: the lib* packages rt-tests depends on (libc6, libnuma1, and
	# libcpupower1 from rt-tests 2.5). The initramfs builder follows its ELF NEEDED entries
	# and names any library missing from them.
	LIBS=$(depends rt-tests | grep '^lib' | sort -u)
	PACKAGES=$(echo busybox-static rt-tests $LIBS)

	rm -rf "$CACHE/VERSION" "$CACHE/deb" "$CACHE/root.tmp"
	mkdir -p "$CACHE/deb"
	if ! (cd "$CACHE/deb" && apt_ apt-get download \
		$(printf "%s:$ARCH " "$KPKG" $KPARTS $PACKAGES)) >"$CACHE/download.log" 2>&1; then
		cat "$CACHE/download.log" >&2
		fail "apt-get download failed (suite $SUITE)"
	fi
	rm "$CACHE/download.log"
	for deb in "$CACHE"/deb/*.deb; do
		dpkg -x "$deb" "$CACHE/root.tmp"
	done
	rm -rf "$CACHE/root"
	mv "$CACHE/root.tmp" "$CACHE/root"
	{
		for pkg in "$KPKG" $KPARTS $PACKAGES; do
			dpkg-deb -f "$CACHE"/deb/"$pkg"_*.deb Package Version | cut -d' ' -f2 |
				paste -sd' '
		done
		echo "suite $SUITE"
	} >"$CACHE/VERSION.tmp"
	mv "$CACHE/VERSION.tmp" "$CACHE/VERSION"
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

# The kernel: boot/vmlinuz-* (bookworm, trixie), or usr/lib/modules/*/vmlinuz (sid), a plain
# Image or a gzip-compressed one.
make_image() {
	VMLINUZ=$(ls "$CACHE"/root/boot/vmlinu[xz]-* "$CACHE"/root/usr/lib/modules/*/vmlinuz \
		2>/dev/null | head -n 1) || true
	[ -n "$VMLINUZ" ] || fail "no boot/vmlinuz-* or usr/lib/modules/*/vmlinuz in $CACHE/root"
	if [ "$(od -An -tx1 -N2 "$VMLINUZ" | tr -d ' \n')" = 1f8b ]; then
		gzip -dc <"$VMLINUZ" >"$CACHE/Image.tmp"
	else
		cp "$VMLINUZ" "$CACHE/Image.tmp"
	fi
	if [ "$(od -An -tx1 -j56 -N4 "$CACHE/Image.tmp" | tr -d ' \n')" != "$MAGIC" ]; then
		rm -f "$CACHE/Image.tmp"
		fail "$VMLINUZ is not an Image for $ARCH (no magic $MAGIC at offset 0x38)"
	fi
	mv "$CACHE/Image.tmp" "$CACHE/Image"
}

make_initramfs() {
	if ! out=$(PYTHONPATH="$ROOT/tools" python3 -m tern.initramfs --root "$CACHE/root" \
		--arch "$ARCH" --tern-chan "$TERN_CHAN" --tern-vio "$TERN_VIO" --tern-vsock "$TERN_VSOCK" --out "$CACHE/initramfs.cpio.gz.tmp" 2>&1); then
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
[ -f "$TERN_CHAN" ] || fail "no $TERN_CHAN: run \`make -C guests tern-chan\` first"
[ -f "$TERN_VIO" ] || fail "no $TERN_VIO: run \`make -C guests tern-vio\` first"
[ -f "$TERN_VSOCK" ] || fail "no $TERN_VSOCK: run \`make -C guests tern-vsock\` first"
if stale "$CACHE/initramfs.cpio.gz" "$CACHE/VERSION" "$ROOT/tools/tern/initramfs.py" \
	"$TERN_CHAN" "$TERN_VIO" "$TERN_VSOCK"; then
	make_initramfs
fi

echo "fetch-linux: $ARCH: $(head -n 1 "$CACHE/VERSION") $(grep '^suite ' "$CACHE/VERSION" || true):" \
	"$CACHE/Image ($(wc -c <"$CACHE/Image") bytes)," \
	"$CACHE/initramfs.cpio.gz ($(wc -c <"$CACHE/initramfs.cpio.gz") bytes)"

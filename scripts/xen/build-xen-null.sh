#!/bin/sh
# Build the Xen 4.17 hypervisor (arm64, hypervisor only, no tools) from Debian's source package
# with schedulers Debian's binary lacks. One script, two variants (an argument):
#
#     scripts/xen/build-xen-null.sh          # null  -> build/xen-null/xen  (make xen-null)
#     scripts/xen/build-xen-null.sh sched    # sched -> build/xen-sched/xen (make xen-sched)
#     scripts/xen/build-xen-null.sh sched --config   # its .config fragment and stamp hash only
#     scripts/xen/run-xen.py --xen build/xen-null/xen --xen-args "sched=null vwfi=native"
#
# Debian's binary xen-hypervisor-4.17-arm64 is built without CONFIG_SCHED_NULL (with sched=null
# it logs "Could not find scheduler: null" and runs credit2), nor RTDS or ARINC 653. This builds
# Debian's source package with arm64_defconfig plus CONFIG_EXPERT, CONFIG_UNSUPPORTED and
# CONFIG_SCHED_NULL (both variants), and for "sched" also CONFIG_SCHED_RTDS,
# CONFIG_SCHED_ARINC653 and CONFIG_BOOT_TIME_CPUPOOLS (dom0less cpupools from the device tree,
# docs/misc/arm/device-tree/cpupools.txt); CONFIG_DEBUG off. Apart from options that EXPERT only
# makes visible (left at their defaults) that is Debian's own configuration. credit2 stays the
# default scheduler, so `sched=credit2` (or no sched=) on either binary is the like-with-like
# baseline; credit (credit1) is in arm64_defconfig already.
#
# Source version: $XEN_SRC_VERSION if set, else the version of the binary package that
# fetch-xen.sh downloaded into build/xen/deb/, else the newest source package apt knows. When
# that version cannot be downloaded (a mirror that serves bookworm-security's binary packages
# but not its sources) it warns and builds the newest version that can be, e.g. bookworm's.
# Idempotent: does nothing when the variant's build/xen-*/xen exists and its stamp (source
# version and config) matches; one variant never rebuilds the other's directory. Needs root (or
# sudo) for apt: it may
#   - apt-get install the few missing build tools (gcc-aarch64-linux-gnu make bison flex python3
#     gcc libc6-dev dpkg-dev),
#   - add /etc/apt/sources.list.d/tern-xen-src.sources: deb-src entries for bookworm and
#     bookworm-security on the mirrors (and with the Signed-By) of the existing deb entries,
#   - apt-get update and apt-get source --download-only xen=VERSION.
# Environment: XEN_SRC_VERSION, JOBS (default nproc), CROSS_COMPILE (aarch64-linux-gnu-),
# FORCE=1 (rebuild even when the stamp matches).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VARIANT=${1:-null}
BIN_PKG=xen-hypervisor-4.17-arm64
SRC_PKG=xen
JOBS=${JOBS:-$(nproc)}
CROSS=${CROSS_COMPILE:-aarch64-linux-gnu-}
TOOLS="gcc-aarch64-linux-gnu make bison flex python3 gcc libc6-dev dpkg-dev"
SRC_LIST=/etc/apt/sources.list.d/tern-xen-src.sources
APT_LOCK="-o DPkg::Lock::Timeout=600"
RECIPE=1 # bump when the build steps change in a way that changes the result

# Options set on top of arm64_defconfig, in .config syntax. The null variant's fragment (and so
# its stamp's config hash) is what it always was: an existing build/xen-null stays up to date.
case "$VARIANT" in
null) FRAGMENT='CONFIG_EXPERT=y
CONFIG_UNSUPPORTED=y
CONFIG_SCHED_NULL=y
# CONFIG_DEBUG is not set' ;;
sched) FRAGMENT='CONFIG_EXPERT=y
CONFIG_UNSUPPORTED=y
CONFIG_SCHED_NULL=y
CONFIG_SCHED_RTDS=y
CONFIG_SCHED_ARINC653=y
CONFIG_BOOT_TIME_CPUPOOLS=y
# CONFIG_DEBUG is not set' ;;
*) echo "build-xen-null: error: unknown variant '$VARIANT' (null or sched)" >&2; exit 2 ;;
esac
NAME=xen-$VARIANT
OUT="$ROOT/build/$NAME"
RESULT="$OUT/xen"
STAMP="$OUT/xen.stamp"

T0=$(date +%s)
say() { echo "build-$NAME: [$(( $(date +%s) - T0 ))s] $*"; }
die() { echo "build-$NAME: error: $*" >&2; exit 1; }

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

# --- which source version --------------------------------------------------------------------
# The version of the cached binary package (build/xen/deb, from fetch-xen.sh), so that the two
# builds differ only in their configuration. "Source: xen (V)" names the source version when it
# differs from the binary's (binNMU).
cached_bin_version() {
	deb=$(ls -t "$ROOT"/build/xen/deb/"$BIN_PKG"_*_arm64.deb 2>/dev/null | head -n 1) || true
	[ -n "$deb" ] || return 0
	src=$(dpkg-deb -f "$deb" Source)
	case "$src" in
	*"("*")"*) v=${src#*(}; echo "${v%%)*}" ;;
	*) dpkg-deb -f "$deb" Version ;;
	esac
}

config_hash=$(printf 'recipe %s\n%s\n' "$RECIPE" "$FRAGMENT" | sha256sum | cut -c1-16)
# `--config`: the variant's configuration and the hash its stamp records, nothing else done.
if [ "${2:-}" = --config ]; then
	printf 'config: %s\n%s\n' "$config_hash" "$FRAGMENT"
	exit 0
fi
WANT=${XEN_SRC_VERSION:-$(cached_bin_version)}

# The stamp records the requested version (empty: newest) and the one actually built, which
# differs when the requested one could not be downloaded (see below).
if [ -z "${FORCE:-}" ] && [ -f "$RESULT" ] && [ -f "$STAMP" ]; then
	have_cfg=$(sed -n 's/^config: //p' "$STAMP")
	have_req=$(sed -n 's/^requested-version: //p' "$STAMP")
	have_ver=$(sed -n 's/^source-version: //p' "$STAMP")
	if [ "$have_cfg" = "$config_hash" ] && { [ -z "$WANT" ] || [ "$WANT" = "$have_req" ]; }; then
		say "up to date: $RESULT (xen $have_ver, config $have_cfg)"
		exit 0
	fi
	say "stale build (have xen $have_ver for ${have_req:-newest}, config $have_cfg;" \
		"want xen ${WANT:-newest}, config $config_hash): rebuilding"
fi

# --- build tools -----------------------------------------------------------------------------
missing=
for p in $TOOLS; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || missing="$missing $p"
done
if [ -n "$missing" ]; then
	say "installing:$missing"
	$SUDO apt-get $APT_LOCK update -q
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get $APT_LOCK install -y -q --no-install-recommends $missing
fi
command -v "${CROSS}gcc" >/dev/null || die "${CROSS}gcc not found"

# --- deb-src entries -------------------------------------------------------------------------
src_versions() { apt-cache showsrc "$SRC_PKG" 2>/dev/null | sed -n 's/^Version: //p'; }

if [ -z "$(src_versions)" ] && [ ! -f "$SRC_LIST" ]; then
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
	say "adding deb-src entries for $codename $codename-security: $SRC_LIST"
	tmp=$(mktemp)
	python3 - "$codename" "$codename-security" >"$tmp" <<'EOF'
"""Print deb822 deb-src stanzas mirroring the enabled `deb` entries for the given suites."""
import glob
import re
import sys

want = sys.argv[1:]
files = ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")) \
    + sorted(glob.glob("/etc/apt/sources.list.d/*.sources"))
entries = []  # (uris, suites, components, [(field, value)])
ONELINE_OPTS = {"signed-by": "Signed-By", "trusted": "Trusted"}

for path in files:
    try:
        text = open(path, encoding="utf-8").read()
    except OSError:
        continue
    if path.endswith(".sources"):
        for block in re.split(r"\n\s*\n", text):
            fields, last = {}, None
            for line in block.splitlines():
                if line.startswith("#") or not line.strip():
                    continue
                if line[0] in " \t" and last:
                    fields[last] += "\n" + line
                    continue
                key, _, value = line.partition(":")
                last = key.strip()
                fields[last] = value.strip()
            low = {k.lower(): k for k in fields}
            if "deb" not in fields.get(low.get("types", ""), "").split():
                continue
            if fields.get(low.get("enabled", ""), "yes").lower() == "no":
                continue
            extra = [(k, v) for k, v in fields.items() if k.lower() not in
                     ("types", "uris", "suites", "components", "architectures", "enabled")]
            entries.append((fields.get(low.get("uris", ""), "").split(),
                            fields.get(low.get("suites", ""), "").split(),
                            fields.get(low.get("components", ""), "").split(), extra))
    else:
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            m = re.match(r"deb\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s*(.*)$", line)
            if not m:
                continue
            extra = []
            for opt in (m.group(1) or "").split():
                k, _, v = opt.partition("=")
                if k in ONELINE_OPTS:
                    extra.append((ONELINE_OPTS[k], v))
            entries.append(([m.group(2)], [m.group(3)], m.group(4).split(), extra))

seen = set()
out = []
for uris, suites, comps, extra in entries:
    uris = [u for u in uris if not u.startswith("cdrom:")]
    suites = [s for s in suites if s in want]
    key = (tuple(uris), tuple(suites))
    if not uris or not suites or key in seen:
        continue
    seen.add(key)
    lines = ["Types: deb-src", "URIs: " + " ".join(uris), "Suites: " + " ".join(suites),
             "Components: " + " ".join(comps or ["main"])]
    lines += [f"{k}: {v}" for k, v in extra]
    out.append("\n".join(lines))
covered = {s for _, suites in seen for s in suites}
if set(want) - covered:
    sys.exit(f"no enabled deb entry for suite(s) {sorted(set(want) - covered)} in {files}")
print("# deb-src for Debian's xen source package (scripts/xen/build-xen-null.sh)\n")
print("\n\n".join(out))
EOF
	sed 's/^/    | /' "$tmp"
	$SUDO install -m 0644 "$tmp" "$SRC_LIST"
	rm -f "$tmp"
	$SUDO apt-get $APT_LOCK update -q
elif [ -n "$WANT" ] && ! src_versions | grep -qxF "$WANT"; then
	$SUDO apt-get $APT_LOCK update -q # the index may predate the cached binary package
fi
[ -n "$(src_versions)" ] || die "apt knows no source package '$SRC_PKG' (deb-src entries?)"

# --- source ----------------------------------------------------------------------------------
# Try the requested version first, then every other version apt knows, newest first. A fallback
# is loud: it happens when the archive has moved on from the cached binary package, or when a
# mirror serves the binary packages of bookworm-security but not its sources.
mkdir -p "$OUT/dl"
# _apt must be able to write there, or apt warns and downloads unsandboxed.
chmod 0777 "$OUT/dl" 2>/dev/null || true
candidates=$(src_versions | sort -u | sort -rV)
[ -z "$WANT" ] || candidates=$(printf '%s\n%s\n' "$WANT" "$(echo "$candidates" | grep -vxF "$WANT")")
dsc=
for v in $candidates; do
	# The other variant's download of this version, if any: apt then skips the files whose
	# hashes match the archive index, rather than fetching them again.
	uv=${v#*:}
	for d in "$ROOT"/build/xen-*/dl; do
		[ "$d" != "$OUT/dl" ] && [ -f "$d/${SRC_PKG}_$uv.dsc" ] && [ ! -f "$OUT/dl/${SRC_PKG}_$uv.dsc" ] &&
			cp "$d/${SRC_PKG}_${uv%-*}"* "$OUT/dl/" 2>/dev/null || true
	done
	say "apt-get source --download-only $SRC_PKG=$v"
	ok=
	(cd "$OUT/dl" && apt-get -q source --download-only "$SRC_PKG=$v") >"$OUT/dl/apt.log" 2>&1 && ok=1
	grep -Ev '^(NOTICE|Please use|git clone|to retrieve|https://salsa|Reading package lists)' \
		"$OUT/dl/apt.log" | sed 's/^/    /'
	if [ -n "$ok" ] && [ -f "$OUT/dl/${SRC_PKG}_${v#*:}.dsc" ]; then
		dsc=$OUT/dl/${SRC_PKG}_${v#*:}.dsc
		break
	fi
done
[ -n "$dsc" ] || die "could not download any version of the '$SRC_PKG' source package"
if [ -n "$WANT" ] && [ "$v" != "$WANT" ]; then
	echo "build-$NAME: WARNING: could not download source version $WANT (that of the cached" \
		"binary package); building $v instead. Compare with 'sched=credit2' on this same" \
		"binary for a like-with-like scheduler comparison." >&2
fi
VERSION=$(sed -n 's/^Version: //p' "$dsc")
SRC="$OUT/src/xen-$VERSION"
if [ ! -f "$SRC/.unpacked" ]; then
	say "unpacking $(basename "$dsc") (with Debian's patches) into $SRC"
	rm -rf "$SRC"
	mkdir -p "$OUT/src"
	# gpgv cannot check the .dsc signature without debian-keyring: apt already checked the
	# files' hashes against the signed archive index.
	if ! dpkg-source -q -x "$dsc" "$SRC" >"$OUT/unpack.log" 2>&1; then
		cat "$OUT/unpack.log" >&2
		die "dpkg-source -x $dsc failed"
	fi
	touch "$SRC/.unpacked"
fi

# --- configure -------------------------------------------------------------------------------
MK="make -C $SRC/xen XEN_TARGET_ARCH=arm64 CROSS_COMPILE=$CROSS"
say "configuring: arm64_defconfig + $(echo "$FRAGMENT" | tr '\n' ' ')"
$MK -s distclean >/dev/null 2>&1 || true
$MK -s defconfig
printf '%s\n' "$FRAGMENT" >>"$SRC/xen/.config"
# (kconfig warns "override: reassigning to symbol": expected, the fragment overrides defconfig)
$MK -s olddefconfig 2>&1 | grep -v 'warning: override: reassigning to symbol' || true
# Every option of the fragment must have survived olddefconfig (dependencies met).
echo "$FRAGMENT" | while IFS= read -r line; do
	case "$line" in
	"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *}
		! grep -q "^$opt=" "$SRC/xen/.config" || die "$opt is set in .config" ;;
	CONFIG_*) grep -qxF "$line" "$SRC/xen/.config" || die "$line did not stick in .config" ;;
	esac
done

# --- build -----------------------------------------------------------------------------------
say "building the hypervisor: $MK -j$JOBS (log: $OUT/build.log)"
if ! $MK -j"$JOBS" >"$OUT/build.log" 2>&1; then
	tail -n 40 "$OUT/build.log" >&2
	die "build failed (log: $OUT/build.log)"
fi
[ -f "$SRC/xen/xen" ] || die "no $SRC/xen/xen after the build"

cp "$SRC/xen/xen" "$RESULT.tmp"
cp "$SRC/xen/.config" "$OUT/xen.config"
cp "$SRC/xen/xen-syms" "$OUT/xen-syms" 2>/dev/null || true
printf 'requested-version: %s\nsource-version: %s\nconfig: %s\nbuilt: %s in %ss\n' \
	"$WANT" "$VERSION" "$config_hash" \
	"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(( $(date +%s) - T0 ))" >"$STAMP"
mv "$RESULT.tmp" "$RESULT"
say "done: $RESULT (xen $VERSION; config $OUT/xen.config)"
grep -E '^CONFIG_SCHED_|^CONFIG_BOOT_TIME_CPUPOOLS|^CONFIG_EXPERT|^CONFIG_UNSUPPORTED|CONFIG_DEBUG[ =]' "$OUT/xen.config" |
	sed 's/^/    /'

"""The initramfs of Tern's Linux test guest, and the newc cpio writer that makes it.

The guest is made only of Debian packages of one architecture (arm64 or riscv64, ARCHS below),
which scripts/linux/fetch-linux.sh unpacks into one tree (build/linux/root, or
build/linux-riscv64/root). `build()` takes from that tree busybox, cyclictest with the shared
libraries and loader it needs, the kernel's virtio drivers that Debian builds as modules and
uio_pci_generic, tun, and adds /init (INIT below), the same on every architecture, the
architecture's tern-chan, tern-vio and tern-vsock (guests/linux/, built by
`make -C guests tern-chan tern-vio tern-vsock`) when given, and a disk image for tern-vio at /srv/disk.img
when given. /init prints
`TERN-LINUX: ready cpus=N kernel=VERSION` once the guest is up, then does what `tern.run=` on the
kernel command line asks:

    shell (default)  an interactive busybox shell on the console; leaving it powers off
    blk              print hello.txt of the tar archive on /dev/vda (see diskimage.py)
    hvc              write a line to /dev/hvc0, the first virtio console's port
    blk-read         read /dev/vda's first `tern.blk.bytes=N` bytes (default 1048576) with
                     O_DIRECT, once per request size of `tern.blk.sizes=A,B` (bytes, default
                     4096,16384), each printed as `TERN-LINUX: blk-read bytes=N bs=S ns=T`
                     (T: the guest's own monotonic clock around the read)
    cyclictest       `tern.loops=N` cyclictest samples, printed as statistics and a histogram
    stress           a busy loop pinned on every online cpu, forever
    chan             tern-chan pong: member 1 of a channel through its ivshmem PCI function,
                     `tern.chan.count=N` messages answered (`tern.chan.bdf=B` picks the function,
                     `tern.chan.size=BYTES` gives the channel's size, `tern.chan.member=K`
                     this member's index in place of the function's IVPosition)
    chan-probe       tern-chan probe: find, bind and map the function, print what it has
    vio-net-backend  tern-vio net: serve a virtio-net channel through the TAP interface vio0
                     (10.0.2.1/24), print `TERN-LINUX: vio-net backend up`, then take TCP
                     transfers on port 5001, each printed as `TERN-LINUX: vio-net received
                     bytes=N md5=H` after `TERN-LINUX: vio-net receive-time bytes=N ns=T` (T:
                     the guest's clock from the connection's acceptance to its end of file):
                     for ever, or `tern.vio.transfers=N` of them, then off
    vio-net-frontend the first ethN (a virtio-net) as 10.0.2.2/24: ping 10.0.2.1 five times
                     (`TERN-LINUX: vio-net ping <summary>`, `TERN-LINUX: vio-net rtt <ping's
                     round-trip line>`), then send `tern.vio.bytes=N`
                     bytes (default 1048576) of a known pattern to its port 5001
                     (`TERN-LINUX: vio-net sent bytes=N md5=H`), and powers off only once
                     the backend answers on its port 5002 with what it received
                     (`TERN-LINUX: vio-net acknowledged bytes=N md5=H`)
    vio-blk-backend  tern-vio blk /srv/disk.img: serve a virtio-blk from the image
                     (the vio modes pass `tern.vio.bdf=B` as --bdf, `tern.vio.once=1` as --once)
    vsock-echo       tern-vsock: connect to the host (CID 2) port 1234 over the virtio vsock
                     device, send a line and print the echo (`TERN-LINUX: vsock-echo port=1234
                     reply=echo: hello from Linux over vsock`), then connect to port 4321,
                     which must be refused (`TERN-LINUX: vsock-refused port=4321 errno=E`)

    PYTHONPATH=tools python3 -m tern.initramfs --root build/linux/root \
        --out build/linux/initramfs.cpio.gz [--arch arm64] [--tern-chan guests/build/arm64/tern-chan]
        [--tern-vio guests/build/arm64/tern-vio] [--tern-vsock guests/build/arm64/tern-vsock]
        [--vio-disk FILE]

A tree with /usr merged (Debian 13 on: /bin, /sbin and /lib are links into /usr, and packages
ship their files under usr/ only) gives an archive with the same links.
"""

import argparse
import gzip
import lzma
import os
import posixpath
import stat
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import TernError, ToolError
from .image import ELF_HEADER, ELF_MACHINES, ELF_MAGIC, ELF_PHDR, ELFCLASS64, ELFDATA2LSB

NEWC_MAGIC = b"070701"
TRAILER = "TRAILER!!!"

ELF_SHDR = struct.Struct("<IIQQQQIIQQ")
ELF_DYN = struct.Struct("<qQ")
PT_LOAD, PT_DYNAMIC, PT_INTERP = 1, 2, 3
DT_NULL, DT_NEEDED, DT_STRTAB = 0, 1, 5


@dataclass(frozen=True)
class GuestArch:
    """What differs between the architectures' packages: where shared libraries are, searched
    in this order (Debian's loader searches its multiarch directories without an ld.so.cache,
    so none is needed in the guest), and the drivers for the devices QEMU virt gives a guest
    (virtio over MMIO and over PCIe, the UART, the PCIe host bridge), uio_pci_generic (a
    channel's ivshmem PCI function to user space) and tun (tern-vio's TAP interface): those Debian builds as modules go in with
    what they depend on, the ones built into its kernel are skipped."""

    library_dirs: tuple
    modules: tuple


VIRTIO_MODULES = ("virtio_mmio", "virtio_pci", "virtio_blk", "virtio_net", "virtio_console",
                  "pci_host_generic", "uio", "uio_pci_generic", "tun",
                  # AF_VSOCK over a virtio vsock device (tern-vsock): vsock and the virtio
                  # transport's common part come in as its dependencies.
                  "vmw_vsock_virtio_transport")
ARCHS = {
    "arm64": GuestArch(("lib/aarch64-linux-gnu", "usr/lib/aarch64-linux-gnu", "lib", "usr/lib"),
                       VIRTIO_MODULES + ("amba_pl011",)),
    # The riscv virt board's ns16550 is driven by 8250_of, which Debian builds in.
    "riscv64": GuestArch(("lib/riscv64-linux-gnu", "usr/lib/riscv64-linux-gnu", "lib",
                          "usr/lib"), VIRTIO_MODULES),
}

# The top-level directories that are links into /usr in a merged tree.
USR_MERGED = ("bin", "sbin", "lib")

# Module files as a kernel package may ship them, and how to get the plain module: busybox
# insmod is given plain .ko files, so compressed ones are unpacked when the initramfs is built.
# (Debian 12's kernel ships plain ones.)
MODULE_FORMATS = {".ko": bytes, ".ko.xz": lzma.decompress, ".ko.gz": gzip.decompress}

# The guest's /init, run by busybox sh. Its TERN-LINUX lines are what test harnesses parse.
# The kernel's console messages are silenced (dmesg -n 1) before the first of them, so that a
# driver message cannot split one of those lines; `dmesg` still shows them.
INIT = r"""#!/bin/sh
/bin/busybox --install -s
export PATH=/sbin:/usr/sbin:/bin:/usr/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir /dev/shm  # cyclictest shares its statistics through POSIX shared memory
mount -t tmpfs tmpfs /dev/shm

# /etc/modules lists the modules to load, each after the ones it depends on.
failed=
while read -r module; do
    insmod "$module" || failed="$failed ${module##*/}"
done </etc/modules

set -f  # the command line is split into words below, never globbed
run=shell
loops=1000
chan_args=
vio_bytes=1048576
vio_transfers=0
vio_args=
blk_bytes=1048576
blk_sizes=4096,16384
for arg in $(cat /proc/cmdline); do
    case $arg in
    tern.run=*) run=${arg#*=} ;;
    tern.loops=*) loops=${arg#*=} ;;
    tern.chan.count=*) chan_args="$chan_args --count ${arg#*=}" ;;
    tern.chan.bdf=*) chan_args="$chan_args --bdf ${arg#*=}" ;;
    tern.chan.size=*) chan_args="$chan_args --size ${arg#*=}" ;;
    tern.chan.member=*) chan_args="$chan_args --member ${arg#*=}" ;;
    tern.vio.bytes=*) vio_bytes=${arg#*=} ;;
    tern.vio.transfers=*) vio_transfers=${arg#*=} ;;
    tern.vio.bdf=*) vio_args="$vio_args --bdf ${arg#*=}" ;;
    tern.vio.once=1) vio_args="$vio_args --once" ;;
    tern.blk.bytes=*) blk_bytes=${arg#*=} ;;
    tern.blk.sizes=*) blk_sizes=${arg#*=} ;;
    esac
done
set +f

dmesg -n 1
[ -z "$failed" ] || echo "TERN-LINUX: module-error$failed"
echo "TERN-LINUX: ready cpus=$(nproc) kernel=$(uname -r)"

finish() {
    echo "TERN-LINUX: done"
    # The console may still be sending what was written to it (a UART without an interrupt
    # line is polled, a FIFO's worth a tick). Closing it, its last user, waits until all is out.
    exec poweroff -f </dev/null >/dev/null 2>&1
}

# Standard input on one line: newlines become spaces, with none at the end.
oneline() {
    tr '\n' ' ' | sed 's/ *$//'
}

# A line to the first virtio console's port (virtio_console: /dev/hvc0), whoever serves it.
run_hvc() {
    if ! wait_for /dev/hvc0; then
        echo "TERN-LINUX: hvc-error no /dev/hvc0"
    elif echo "hello from Linux over virtio-console" >/dev/hvc0; then
        echo "TERN-LINUX: hvc written"
    else
        echo "TERN-LINUX: hvc-error cannot write /dev/hvc0"
    fi
}

# The guest's monotonic clock in ns, in $ns: the kernel's own "now" of /proc/timer_list, read
# by the shell's builtin (no process started, so that the time measured is the work's).
now() {
    ns=
    while read -r w1 w2 w3 rest; do
        if [ "$w1 $w2" = "now at" ]; then
            ns=$w3
            break
        fi
    done </proc/timer_list
}

# The disk's driver probes it while insmod runs, but give its device node a moment.
wait_vda() {
    i=0
    while [ ! -b /dev/vda ] && [ "$i" -lt 50 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ -b /dev/vda ] || echo "TERN-LINUX: $1-error no /dev/vda"
    [ -b /dev/vda ]
}

run_blk() {
    if ! wait_vda blk; then
        :
    elif text=$(tar -xOf /dev/vda hello.txt 2>/tmp/tar.err); then
        echo "TERN-LINUX: blk $(printf '%s' "$text" | oneline)"
    else
        echo "TERN-LINUX: blk-error $(oneline </tmp/tar.err)"
    fi
}

# One read of the disk's first bytes per request size, each request straight to the device
# (O_DIRECT: no page cache, no read-ahead), timed by the guest.
run_blk_read() {
    wait_vda blk-read || return
    case $blk_bytes in
    '' | 0 | *[!0-9]*)
        echo "TERN-LINUX: blk-read-error tern.blk.bytes=$blk_bytes is not a positive number"
        return ;;
    esac
    now
    if [ -z "$ns" ]; then
        echo "TERN-LINUX: blk-read-error no clock in /proc/timer_list"
        return
    fi
    for bs in $(echo "$blk_sizes" | tr ',' ' '); do
        count=$((blk_bytes / bs))
        sync
        echo 3 >/proc/sys/vm/drop_caches
        now
        start=$ns
        if ! dd if=/dev/vda of=/dev/null bs="$bs" count="$count" iflag=direct \
                2>/tmp/dd.err; then
            echo "TERN-LINUX: blk-read-error bs=$bs $(oneline </tmp/dd.err)"
            return
        fi
        now
        echo "TERN-LINUX: blk-read bytes=$((count * bs)) bs=$bs ns=$((ns - start))"
    done
}

run_cyclictest() {
    case $loops in
    '' | 0 | *[!0-9]*)  # cyclictest would read these as 0: run forever
        echo "TERN-LINUX: cyclictest-error tern.loops=$loops is not a positive number"
        return ;;
    esac
    # One SCHED_FIFO 80 thread waking every 1000 us (clock_nanosleep), memory locked, only the
    # summary at the end, with a histogram of 1 us buckets up to 10 ms. cyclictest exits 0 even
    # on a bad option, so a run counts only if it printed its summary's last latency line.
    cyclictest --mlockall --quiet --threads=1 --priority=80 --interval=1000 \
        --loops="$loops" --histogram=10000 >/tmp/cyclictest.out 2>/tmp/cyclictest.err
    status=$?
    if [ "$status" -ne 0 ] || ! grep -q '^# Max Latencies:' /tmp/cyclictest.out; then
        echo "TERN-LINUX: cyclictest-error status $status:" \
            "$(cat /tmp/cyclictest.err /tmp/cyclictest.out | head -n 3 | oneline)"
        return
    fi
    # The samples are the histogram's buckets and the overflows past its last one (rt-tests
    # before 2.5 also print the buckets' sum as "# Total:", later ones do not).
    # cyclictest pads numbers with zeros, which busybox awk would read as octal: num() strips them.
    awk '
        function num(s) { sub(/^0+/, "", s); return s + 0 }
        /^[0-9]/ { total += num($2) }
        /^# Min Latencies:/ { min = num($4) }
        /^# Avg Latencies:/ { avg = num($4) }
        /^# Max Latencies:/ { max = num($4) }
        /^# Histogram Overflows:/ { overflows = num($4) }
        /^[0-9]/ && num($2) > 0 {
            hist = hist sprintf("TERN-LINUX: cyclictest-hist %d %d\n", num($1), num($2))
        }
        END {
            printf "TERN-LINUX: cyclictest min=%d avg=%d max=%d samples=%d\n", min, avg, max,
                total + overflows
            printf "%s", hist
            if (overflows) printf "TERN-LINUX: cyclictest-overflows %d\n", overflows
        }' /tmp/cyclictest.out
}

run_stress() {
    echo "TERN-LINUX: stress running"
    cpu=0
    while [ "$cpu" -lt "$(nproc)" ]; do
        taskset -c "$cpu" sh -c 'while :; do :; done' &
        cpu=$((cpu + 1))
    done
    wait
}

# tern-chan prints its own TERN-LINUX line and exits 1 after an error line; any other status
# (killed by a signal, not there) has printed none.
run_chan() {
    set -f
    /usr/bin/tern-chan "$1" $chan_args
    status=$?
    set +f
    [ "$status" -le 1 ] || echo "TERN-LINUX: $2 error=tern-chan exited with status $status"
}

# tern-vsock prints its own TERN-LINUX line and exits 1 after an error line; any other status
# (killed by a signal, not there) has printed none.
run_vsock() {
    /usr/bin/tern-vsock "$@"
    status=$?
    [ "$status" -le 1 ] || echo "TERN-LINUX: vsock-$1 error=tern-vsock exited with status $status"
}

# A line echoed by whoever serves the vsock device as the host, and a port nobody serves.
run_vsock_echo() {
    run_vsock echo "hello from Linux over vsock"
    run_vsock refused --port 4321
}

# Wait up to 10 s for a path to exist.
wait_for() {
    i=0
    while [ ! -e "$1" ] && [ "$i" -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ -e "$1" ]
}

# A file's size and MD5, as the vio-net lines print them.
size_md5() {
    echo "bytes=$(($(wc -c <"$1"))) md5=$(md5sum <"$1" | cut -d' ' -f1)"
}

# tern-vio prints its own TERN-LINUX lines; it returns only after an error.
run_vio_net_backend() {
    set -f
    /usr/bin/tern-vio net $vio_args &
    set +f
    vio=$!
    if ! wait_for /sys/class/net/vio0; then
        echo "TERN-LINUX: vio-net-error no vio0"
        wait
        return
    fi
    ip addr add 10.0.2.1/24 dev vio0 && ip link set vio0 up ||
        echo "TERN-LINUX: vio-net-error cannot configure vio0"
    echo "TERN-LINUX: vio-net backend up"
    case $vio_args in
    *--once*) wait; return ;;     # what waited is served: no transfers
    esac
    # Each transfer as it comes; the backend stays up while tern-vio serves (a test's run
    # ends when every partition is off: tern.vio.transfers says when).
    # What nc -e runs for each connection: its bytes to a file (nc's own stdin copy ends
    # early), timed from the connection's acceptance to its end of file (the sender's last
    # byte here: the transfer's time on the receiver's clock).
    cat >/tmp/timed-cat <<'EOF'
#!/bin/sh
now() { while read -r w1 w2 w3 rest; do [ "$w1 $w2" = "now at" ] && ns=$w3 && break; done; }
now </proc/timer_list; start=$ns; cat >/tmp/rx; now </proc/timer_list
echo $((ns - start)) >/tmp/rx.ns
EOF
    chmod +x /tmp/timed-cat
    received=0
    while kill -0 "$vio" 2>/dev/null; do
        if nc -l -p 5001 -e /tmp/timed-cat </dev/null; then
            echo "TERN-LINUX: vio-net receive-time bytes=$(($(wc -c </tmp/rx))) ns=$(cat /tmp/rx.ns)"
            echo "TERN-LINUX: vio-net received $(size_md5 /tmp/rx)"
            # The sender stays up until it hears this (its bytes may still be on the way).
            size_md5 /tmp/rx >/tmp/ack
            j=0
            until nc 10.0.2.2 5002 -e cat /tmp/ack </dev/null || [ "$j" -ge 10 ]; do
                sleep 1
                j=$((j + 1))
            done
            received=$((received + 1))
            if [ "$received" = "$vio_transfers" ]; then
                # The answer's frames need this side's tern-vio until the sender has them: it
                # says so by connecting to port 5003, and only then does this side stop.
                nc -l -p 5003 -e true </dev/null
                kill "$vio"
                return
            fi
        else
            echo "TERN-LINUX: vio-net-error nc exited with status $?"
            break
        fi
    done
    wait
}

run_vio_net_frontend() {
    case $vio_bytes in
    '' | *[!0-9]*)
        echo "TERN-LINUX: vio-net-error tern.vio.bytes=$vio_bytes is not a number"
        return ;;
    esac
    # virtio_mmio and virtio_net were loaded with the other modules: the device probes then.
    wait_for /sys/class/net/eth0
    dev=
    for path in /sys/class/net/eth*; do
        [ -e "$path" ] && dev=${path##*/} && break
    done
    if [ -z "$dev" ]; then
        echo "TERN-LINUX: vio-net-error no ethN"
        return
    fi
    ip addr add 10.0.2.2/24 dev "$dev" && ip link set "$dev" up
    # The backend boots beside this partition: wait (up to 60 s) until it answers.
    i=0
    until ping -c 1 -W 1 10.0.2.1 >/dev/null 2>&1 || [ "$i" -ge 60 ]; do
        i=$((i + 1))
    done
    ping -c 5 10.0.2.1 >/tmp/ping.out 2>&1
    echo "TERN-LINUX: vio-net ping $(grep 'packets transmitted' /tmp/ping.out | oneline)"
    echo "TERN-LINUX: vio-net rtt $(grep 'round-trip' /tmp/ping.out | oneline)"
    yes "Tern virtio-net 0123456789abcdefghijklmnopqrstuvwxyz" | head -c "$vio_bytes" >/tmp/tx
    # The receiver's word that it has every byte, before this partition may power off.
    nc -l -p 5002 -e sh -c 'cat >/tmp/ack' </dev/null &
    ack=$!
    # The receiver listens again after each transfer: a refused connection is retried.
    i=0
    until nc 10.0.2.1 5001 -e cat /tmp/tx </dev/null || [ "$i" -ge 10 ]; do
        sleep 1
        i=$((i + 1))
    done
    echo "TERN-LINUX: vio-net sent $(size_md5 /tmp/tx)"
    wait "$ack"
    echo "TERN-LINUX: vio-net acknowledged $(oneline </tmp/ack)"
    # The receiver serves until it hears that the answer arrived (its last transfer).
    i=0
    until nc 10.0.2.1 5003 -e true </dev/null || [ "$i" -ge 10 ]; do
        sleep 1
        i=$((i + 1))
    done
}

run_vio_blk_backend() {
    set -f
    /usr/bin/tern-vio blk /srv/disk.img $vio_args
    status=$?
    set +f
    [ "$status" -le 1 ] || echo "TERN-LINUX: vio-blk error=tern-vio exited with status $status"
}

case $run in
shell)
    echo "TERN-LINUX: shell"
    setsid cttyhack sh  # the console as controlling tty, so that job control and ^C work
    ;;
blk) run_blk ;;
hvc) run_hvc ;;
blk-read) run_blk_read ;;
cyclictest) run_cyclictest ;;
stress) run_stress ;;
chan) run_chan pong chan ;;
chan-probe) run_chan probe chan-probe ;;
vio-net-backend) run_vio_net_backend ;;
vio-net-frontend) run_vio_net_frontend ;;
vio-blk-backend) run_vio_blk_backend ;;
vsock-echo) run_vsock_echo ;;
*) echo "TERN-LINUX: error unknown tern.run=$run" ;;
esac
finish
"""


@dataclass(frozen=True)
class Entry:
    """One cpio member: mode is st_mode (type and permissions); data a file's contents or a
    symlink's target; rdev a device node's (major, minor)."""

    mode: int
    data: bytes = b""
    rdev: tuple = (0, 0)


class Archive:
    """The members of a newc ("070701") cpio archive, by path, in the order they were added.

    Paths are relative ("bin/busybox"). Adding a path adds its missing parent directories
    first, as the kernel's unpacker wants; adding the same member twice is harmless.
    """

    def __init__(self):
        self.entries = {}

    def add_dir(self, path, mode=0o755):
        self._add(path, Entry(stat.S_IFDIR | mode))

    def add_file(self, path, data, mode=0o644):
        self._add(path, Entry(stat.S_IFREG | mode, bytes(data)))

    def add_symlink(self, path, target):
        self._add(path, Entry(stat.S_IFLNK | 0o777, target.encode()))

    def add_char_device(self, path, major, minor, mode=0o600):
        self._add(path, Entry(stat.S_IFCHR | mode, rdev=(major, minor)))

    def _add(self, path, entry):
        path = path.strip("/")
        if path in self.entries:
            if self.entries[path] != entry:
                raise ValueError(f"{path}: added twice with different contents")
            return
        parent = posixpath.dirname(path)
        if parent and parent not in self.entries:
            self.add_dir(parent)
        self.entries[path] = entry

    def to_bytes(self):
        """The archive, TRAILER!!! included; owner root, mtime 0, inodes numbered from 1."""
        members = [_member(path, ino, e.mode, 2 if stat.S_ISDIR(e.mode) else 1, e.data, e.rdev)
                   for ino, (path, e) in enumerate(self.entries.items(), start=1)]
        members.append(_member(TRAILER, 0, 0, 1))
        return b"".join(members)


def _member(name, ino, mode, nlink, data=b"", rdev=(0, 0)):
    # newc: a 110-byte ASCII header of 13 eight-digit hex fields, the NUL-terminated name padded
    # to a multiple of 4 bytes (header included), then the data padded likewise.
    name = name.encode() + b"\0"
    fields = (ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdev[0], rdev[1], len(name), 0)
    header = NEWC_MAGIC + b"".join(b"%08X" % f for f in fields)
    return _pad4(header + name) + _pad4(data)


def _pad4(data):
    return data + b"\0" * (-len(data) % 4)


def _cstring(data, offset):
    return data[offset:data.index(b"\0", offset)].decode()


def _elf64(data):
    header = ELF_HEADER.unpack_from(data)
    if header[0][:4] != ELF_MAGIC or header[0][4] != ELFCLASS64 or header[0][5] != ELFDATA2LSB:
        raise ValueError("not a little-endian ELF64 file")
    return header


def elf_dependencies(data):
    """(program interpreter or None, [DT_NEEDED library names]) of an ELF64 program or library."""
    _, _, _, _, _, phoff, _, _, _, phentsize, phnum, _, _, _ = _elf64(data)
    interp, dynamic, loads = None, None, []
    for phdr in range(phoff, phoff + phnum * phentsize, phentsize):
        p_type, _, offset, vaddr, _, filesz, _, _ = ELF_PHDR.unpack_from(data, phdr)
        if p_type == PT_INTERP:
            interp = _cstring(data, offset)
        elif p_type == PT_DYNAMIC:
            dynamic = (offset, filesz)
        elif p_type == PT_LOAD:
            loads.append((vaddr, offset, filesz))
    if dynamic is None:
        return interp, []
    needed, strtab = [], None
    for entry in range(dynamic[0], dynamic[0] + dynamic[1], ELF_DYN.size):
        tag, value = ELF_DYN.unpack_from(data, entry)
        if tag == DT_NULL:
            break
        if tag == DT_NEEDED:
            needed.append(value)
        elif tag == DT_STRTAB:
            # An address: the file offset is where the segment that loads it comes from.
            strtab = next((offset + value - vaddr for vaddr, offset, size in loads
                           if vaddr <= value < vaddr + size), None)
    if needed and strtab is None:
        raise ValueError("no loaded string table for DT_NEEDED")
    return interp, [_cstring(data, strtab + name) for name in needed]


def modinfo(data):
    """The .modinfo section of a kernel module (an ELF64 relocatable file) as a dict."""
    header = _elf64(data)
    shoff, shentsize, shnum, shstrndx = header[6], header[11], header[12], header[13]
    sections = [ELF_SHDR.unpack_from(data, shoff + i * shentsize) for i in range(shnum)]
    names = sections[shstrndx][4]
    for name, _, _, _, offset, size, _, _, _, _ in sections:
        if _cstring(data, names + name) == ".modinfo":
            items = data[offset:offset + size].decode().split("\0")
            return dict(item.split("=", 1) for item in items if "=" in item)
    return {}


def load_order(wanted, depends_of):
    """The modules wanted and those they depend on, each after its dependencies.

    depends_of(name) gives the names of the modules that module needs.
    """
    order = []

    def visit(name, chain):
        if name in order:
            return
        if name in chain:
            raise ToolError(f"kernel modules depend on each other in a cycle: "
                            f"{' -> '.join(chain + (name,))}")
        for dep in depends_of(name):
            visit(dep, chain + (name,))
        order.append(name)

    for name in wanted:
        visit(name, ())
    return order


def _module_name(path):
    # Module names use underscores where file names may use dashes (amba-pl011.ko).
    name = posixpath.basename(path)
    suffix = next((s for s in MODULE_FORMATS if name.endswith(s)), "")
    return name.removesuffix(suffix).replace("-", "_")


class _Tree:
    """Copies files of the unpacked packages under root into an archive at the same paths.

    In a tree with /usr merged (no lib/ at the top, a usr/lib/) a path under one of
    USR_MERGED is taken from under usr/, where its link leads.
    """

    def __init__(self, root, archive, arch):
        self.root = Path(root)
        self.archive = archive
        self.arch = arch
        self.merged = (self.root / "usr/lib").is_dir() and not os.path.lexists(self.root / "lib")

    def where(self, path):
        """Where path is in the tree: under usr/ if /usr is merged and its top is a link."""
        if self.merged and path.split("/", 1)[0] in USR_MERGED:
            return "usr/" + path
        return path

    def read(self, path):
        try:
            return (self.root / path).read_bytes()
        except OSError as e:
            raise ToolError(f"{self.root / path}: {e.strerror} "
                            f"(scripts/linux/fetch-linux.sh unpacks the packages)") from None

    def add(self, path):
        """Add path (following symlinks, each kept as a link); the regular file it ends at."""
        path = self.where(path)
        full = self.root / path
        if full.is_symlink():
            target = os.readlink(full)
            self.archive.add_symlink(path, target)
            return self.add(posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
                            .lstrip("/"))
        data = self.read(path)
        self.archive.add_file(path, data, stat.S_IMODE(full.stat().st_mode))
        return path

    def add_program(self, path):
        """Add an ELF program or library with its loader and the libraries it needs."""
        real = self.add(path)
        try:
            interp, needed = elf_dependencies(self.read(real))
        except (ValueError, struct.error) as e:
            raise ToolError(f"{self.root / real}: cannot read its ELF dynamic section ({e})") \
                from None
        if interp:
            self.add(interp.lstrip("/"))
        for name in needed:
            dirs = self.arch.library_dirs
            lib = next((self.where(posixpath.join(d, name)) for d in dirs
                        if os.path.lexists(self.root / self.where(d) / name)), None)
            if lib is None:
                raise ToolError(f"{path} needs {name}, which is in none of "
                                f"{', '.join(dirs)} under {self.root}")
            if lib not in self.archive.entries:
                self.add_program(lib)

    def add_modules(self):
        """Add the architecture's modules that are not built in, with their dependencies; their
        paths in load order."""
        top = self.where("lib/modules")
        versions = sorted(p.name for p in (self.root / top).glob("*"))
        if len(versions) != 1:
            raise ToolError(f"{self.root}/{top}: expected one kernel's modules, "
                            f"found {versions or 'none'}")
        base = f"{top}/{versions[0]}"
        builtin = {_module_name(line) for line in
                   self.read(f"{base}/modules.builtin").decode().split()}
        files = {_module_name(p.name): p.relative_to(self.root).as_posix()
                 for p in (self.root / base / "kernel").rglob("*.ko*")
                 if p.name.endswith(tuple(MODULE_FORMATS))}
        unknown = [m for m in self.arch.modules if m not in files and m not in builtin]
        if unknown:
            raise ToolError(f"kernel {versions[0]} has neither built in nor as a module: "
                            f"{', '.join(unknown)}")

        modules = {}  # name -> (path in the archive, the plain .ko file's contents)

        def module(name):
            if name not in modules:
                if name not in files:
                    raise ToolError(f"kernel {versions[0]} has no module {name}")
                modules[name] = self.read_module(files[name])
            return modules[name]

        def depends_of(name):
            _, data = module(name)
            try:
                text = modinfo(data).get("depends", "")
            except (ValueError, struct.error) as e:
                raise ToolError(f"{self.root / files[name]}: cannot read its .modinfo ({e})") \
                    from None
            return [dep for dep in text.split(",") if dep]

        order = load_order([m for m in self.arch.modules if m in files], depends_of)
        for name in order:
            self.archive.add_file(*module(name))
        return [module(name)[0] for name in order]

    def read_module(self, path):
        """A module file's path as a plain .ko, and its contents, decompressed."""
        suffix = next(s for s in MODULE_FORMATS if path.endswith(s))
        try:
            return path.removesuffix(suffix) + ".ko", MODULE_FORMATS[suffix](self.read(path))
        except (lzma.LZMAError, OSError, EOFError) as e:
            raise ToolError(f"{self.root / path}: cannot decompress ({e})") from None


TERN_CHAN = "usr/bin/tern-chan"
TERN_VIO = "usr/bin/tern-vio"
TERN_VSOCK = "usr/bin/tern-vsock"
VIO_DISK = "srv/disk.img"


def _add_program(archive, path, program, arch, make_target):
    try:
        data = Path(program).read_bytes()
    except OSError as e:
        raise ToolError(f"{program}: {e.strerror} (`make -C guests {make_target}` builds it)") \
            from None
    machine = next(m for m, a in ELF_MACHINES.items() if a == arch)
    if len(data) < ELF_HEADER.size or _elf64(data)[2] != machine:
        raise ToolError(f"{program}: not a 64-bit {arch} ELF program")
    archive.add_file(path, data, 0o755)


def build(root, arch="arm64", tern_chan=None, tern_vio=None, vio_disk=None, tern_vsock=None):
    """The guest's initramfs from the packages of `arch` (a key of ARCHS) unpacked under root,
    with the programs tern_chan, tern_vio and tern_vsock (paths: that architecture's
    tern-chan, tern-vio and tern-vsock) at /usr/bin/, and the file vio_disk at /srv/disk.img (tern-vio blk's disk):
    (Archive, module paths)."""
    archive = Archive()
    # The kernel opens /dev/console as /init's stdin/stdout/stderr before anything is mounted.
    archive.add_char_device("dev/console", 5, 1)
    tree = _Tree(root, archive, ARCHS[arch])
    if tree.merged:
        for top in USR_MERGED:
            archive.add_dir(f"usr/{top}")
            archive.add_symlink(top, f"usr/{top}")
    # Mount points, and the directories `busybox --install -s` puts its applets in.
    for path in ("proc", "sys", "tmp", "root", "sbin", "usr/sbin"):
        if tree.where(path) == path:
            archive.add_dir(path)
    busybox = tree.add("bin/busybox")
    # /init's interpreter, /bin/sh; it installs the other applets.
    archive.add_symlink(posixpath.join(posixpath.dirname(busybox), "sh"), "busybox")
    tree.add_program("usr/bin/cyclictest")
    modules = tree.add_modules()
    archive.add_file("etc/modules", "".join(f"/{path}\n" for path in modules).encode())
    if tern_chan is not None:
        _add_program(archive, TERN_CHAN, tern_chan, arch, "tern-chan")
    if tern_vio is not None:
        _add_program(archive, TERN_VIO, tern_vio, arch, "tern-vio")
    if tern_vsock is not None:
        _add_program(archive, TERN_VSOCK, tern_vsock, arch, "tern-vsock")
    if vio_disk is not None:
        try:
            # Read-write: tern-vio serves the guest's writes too (in the initramfs's memory).
            archive.add_file(VIO_DISK, Path(vio_disk).read_bytes(), 0o644)
        except OSError as e:
            raise ToolError(f"{vio_disk}: {e.strerror}") from None
    archive.add_file("init", INIT.encode(), 0o755)
    return archive, modules


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m tern.initramfs",
        description="Build the Linux test guest's initramfs from unpacked Debian packages.")
    parser.add_argument("--root", type=Path, required=True,
                        help="the unpacked packages (build/linux/root)")
    parser.add_argument("--out", type=Path, required=True,
                        help="the gzip-compressed cpio archive to write")
    parser.add_argument("--arch", choices=sorted(ARCHS), default="arm64",
                        help="the packages' architecture (default: arm64)")
    parser.add_argument("--tern-chan", type=Path,
                        help="that architecture's tern-chan program (guests/build/ARCH/tern-chan)")
    parser.add_argument("--tern-vio", type=Path,
                        help="that architecture's tern-vio program (guests/build/ARCH/tern-vio)")
    parser.add_argument("--tern-vsock", type=Path,
                        help="that architecture's tern-vsock program (guests/build/ARCH/tern-vsock)")
    parser.add_argument("--vio-disk", type=Path,
                        help="a disk image for `tern-vio blk`, at /srv/disk.img")
    args = parser.parse_args(argv)
    try:
        archive, modules = build(args.root, args.arch, args.tern_chan, args.tern_vio,
                                 args.vio_disk, args.tern_vsock)
    except TernError as e:
        print(f"initramfs: error: {e}", file=sys.stderr)
        return e.status
    data = gzip.compress(archive.to_bytes(), mtime=0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    names = " ".join(_module_name(path) for path in modules) or "none"
    print(f"initramfs: {args.out} ({len(data)} bytes, {len(archive.entries)} members; "
          f"modules: {names})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

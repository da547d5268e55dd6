"""tern-chan, a channel's Linux side, against QEMU's own ivshmem-plain on the bare board.

No hypervisor: Debian's kernel (from `make linux`) boots natively with an initramfs built here
from the same packages and this tree's tern-chan (`make -C guests tern-chan`), and QEMU's
ivshmem-plain, the PCI function (1af4:1110) a channel is to Linux, on the board's PCIe bus.
`tern.run=chan-probe` finds it, binds uio_pci_generic, maps BAR0 and BAR2 and reads BAR0's
IVPosition. ivshmem-plain has no doorbell or interrupt, so `tern.run=chan` (the pong mode) is
tested here only with messages that wait in the queue before it starts: the test is member 0,
writing them into the file behind the shared memory before the board boots and reading the
answers back after it powered off. Its waits for rings are the hypervisor's to test.
"""

import gzip
import re
import struct
import subprocess

import pytest
from conftest import REPO

from tern import initramfs, qemu, run_native

LINUX = {"arm64": (REPO / "build" / "linux", "console=ttyAMA0"),
         "riscv64": (REPO / "build" / "linux-riscv64", "console=ttyS0")}
SHM_SIZE = 1 << 20
# channel.h's layout, as this test expects it: queue 0 (member 0 -> 1) in the first half, queue
# 1 in the second; in each, head, ready, tail and the 64-byte slots at these offsets.
HEAD, READY, TAIL, SLOTS, MSG_SIZE, CHANNEL_READY = 0x00, 0x04, 0x40, 0x80, 64, 0x59444552
PROBE = re.compile(r"TERN-LINUX: chan-probe bdf=(\S+) position=(\d+) bar2=(\d+) uio=(uio\d+)")
# riscv64 on the board's PLIC instead of its APLIC and IMSICs: natively, Debian's 7.2 kernel
# hangs on QEMU 7.2's aplic-imsic board once its console switches to the UART's interrupt (with
# or without ivshmem; under the hypervisor that console is polled). The PCIe map, what tern-chan
# meets, is the same on both (ECAM 0x3000_0000, memory window 0x4000_0000).
BOARD = {"arm64": (), "riscv64": ("-machine", "aia=none")}
# A busy 2-core host boots the board's emulation slowly; Linux is up in seconds when idle.
TIMEOUT = 180


def boot(tmp_path, arch, run, backend, dtb=None):
    directory, console = LINUX[arch]
    return run_native(directory / "Image", bootargs=f"{console} quiet tern.run={run}",
                      memory=512 << 20, initrd=initrd(tmp_path, arch), dtb=dtb, timeout=TIMEOUT,
                      qemu_args=("-object", backend, "-device", "ivshmem-plain,memdev=chan")
                      + BOARD[arch], workdir=tmp_path / "run")


def initrd(tmp_path, arch):
    directory = LINUX[arch][0]
    tern_chan = REPO / "guests" / "build" / arch / "tern-chan"
    assert (directory / "root").is_dir() and (directory / "Image").exists(), \
        f"missing {directory}: run `make linux` first"
    assert tern_chan.exists(), f"missing {tern_chan}: run `make -C guests tern-chan` first"
    archive, _ = initramfs.build(directory / "root", arch, tern_chan)
    path = tmp_path / f"initramfs-{arch}.cpio.gz"
    path.write_bytes(gzip.compress(archive.to_bytes(), mtime=0))
    return path


@pytest.mark.parametrize("arch", ["arm64", "riscv64"])
def test_tern_chan_probe_binds_and_maps_qemus_ivshmem(tmp_path, arch):
    result = boot(tmp_path, arch, "chan-probe",
                  f"memory-backend-ram,id=chan,size={SHM_SIZE},share=on")
    assert result.ok, result.explain()
    lines = [line for line in result.log if line.startswith("TERN-LINUX:")]
    assert not [line for line in lines if "error" in line], lines
    probes = [m for m in map(PROBE.fullmatch, lines) if m]
    assert len(probes) == 1, lines
    bdf, position, bar2, uio = probes[0].groups()
    assert re.fullmatch(r"0000:00:[0-9a-f]{2}\.0", bdf), bdf
    assert uio == "uio0"                # bound: uio_pci_generic registered its device
    assert int(bar2) == SHM_SIZE
    # QEMU's ivshmem-plain has no peers: its IVPosition reads 0.
    assert int(position) == 0


def message(i):
    return struct.pack("<8Q", *(i * 0x100 + k for k in range(8)))


# Where the test's own channel node puts the channel: above each board's 512 MiB of RAM.
NODE_ADDRESS = {"arm64": 0x6000_0000, "riscv64": 0xa000_0000}


def dtb_with_channel(tmp_path, arch, size, qemu_args):
    """QEMU's own device tree for the run, with a tern,channel node of `size` bytes, the
    partition's first channel (the hypervisor gives a member this node beside the function)."""
    board = tmp_path / "board.dtb"
    command = qemu.native_command(LINUX[arch][0] / "Image", memory=512 << 20, arch=arch,
                                  extra=qemu_args + ("-machine", f"dumpdtb={board}"))
    subprocess.run(command, check=True, capture_output=True, timeout=60)
    dts = subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(board)], check=True,
                         capture_output=True, text=True).stdout
    addr = NODE_ADDRESS[arch]
    dts += (f"/ {{\n\ttern-channel@{addr:x} {{\n\t\tcompatible = \"tern,channel\";\n"
            f"\t\treg = <0x0 0x{addr:x} 0x0 0x{size:x}>, <0x0 0x{addr + size:x} 0x0 0x1000>;\n"
            f"\t\ttern,member = <1>;\n\t}};\n}};\n")
    dtb = tmp_path / "channel.dtb"
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(dtb), "-"], input=dts,
                   check=True, capture_output=True, text=True)
    return dtb


@pytest.mark.parametrize("arch", ["arm64", "riscv64"])
@pytest.mark.parametrize("size", [SHM_SIZE, 0xc0000], ids=["bar2-size", "node-size"])
def test_tern_chan_pong_answers_the_messages_waiting(tmp_path, arch, size):
    """The queues span the channel's size: BAR2's when it is a power of two, else the one its
    device tree node gives (768 KiB in a 1 MiB BAR2 here)."""
    count, half = 5, size // 2
    shm = bytearray(SHM_SIZE)
    for i in range(count):
        shm[SLOTS + i * MSG_SIZE:SLOTS + (i + 1) * MSG_SIZE] = message(i + 1)
    struct.pack_into("<II", shm, HEAD, count, CHANNEL_READY)
    # Member 1's indices, stale: it zeroes them when it opens.
    struct.pack_into("<I", shm, TAIL, 0xdead)
    struct.pack_into("<I", shm, half + HEAD, 0xbeef)
    path = tmp_path / "shm"
    path.write_bytes(shm)
    backend = f"memory-backend-file,id=chan,size={SHM_SIZE},mem-path={path},share=on"
    dtb = None
    if size != SHM_SIZE:
        dtb = dtb_with_channel(tmp_path, arch, size, ("-object", backend, "-device",
                                                      "ivshmem-plain,memdev=chan") + BOARD[arch])
    # ivshmem-plain's IVPosition is 0: tern.chan.member=1 makes this Linux the ponger.
    result = boot(tmp_path, arch, f"chan tern.chan.count={count} tern.chan.member=1", backend,
                  dtb=dtb)
    assert result.ok, result.explain()
    lines = [line for line in result.log if line.startswith("TERN-LINUX:")]
    assert f"TERN-LINUX: chan answered={count} member=1 size={size} bdf=0000:00:01.0" \
        in lines, lines
    shm = path.read_bytes()
    assert struct.unpack_from("<I", shm, TAIL)[0] == count              # all taken
    head, ready = struct.unpack_from("<II", shm, half + HEAD)
    assert (head, ready) == (count, CHANNEL_READY)                      # all answered
    assert struct.unpack_from("<I", shm, half + TAIL)[0] == 0           # member 0's own
    for i in range(count):
        start = half + SLOTS + i * MSG_SIZE
        assert shm[start:start + MSG_SIZE] == message(i + 1), i      # the same, in order


# ---- under the hypervisor: tern-chan in a Linux partition, the latency guest its peer ----

from tern import run_system  # noqa: E402
from tern.config import dump_toml  # noqa: E402

LAT_IMAGE = {arch: REPO / "guests" / "build" / arch / "lat.img" for arch in LINUX}
# Linux's delivery mode as the other Linux tests of each board run it.
LINUX_IRQ = {"arm64": "trap", "riscv64": "direct"}
ROUND_TRIPS = 20
# The pinger looks for its peer 20 s (lat's CHAN_START_US) after this: Linux boots, loads
# uio_pci_generic and opens its queues first.
PINGER_DELAY_US = 15000000
ANSWERED = re.compile(r"TERN-LINUX: chan answered=(\d+) member=(\d+) size=(\d+) bdf=(\S+)")


@pytest.mark.parametrize("arch", ["arm64", "riscv64"])
def test_linux_user_space_answers_the_latency_guest_over_a_channel(tmp_path, arch):
    """The latency guest (member 0, bare metal) pings tern-chan in Linux user space (member
    1) over a channel, ROUND_TRIPS times: its message through the shared memory and its ring,
    tern-chan woken through uio_pci_generic by the ivshmem function's INTx, the same message
    back and BAR0's Doorbell ringing member 0. Every message answered, in order, each side's
    rings counted on its own side."""
    directory, console = LINUX[arch]
    rt = {"name": "rt", "cpus": [1], "memory": "32MiB", "image": str(LAT_IMAGE[arch]),
          "irq": "direct", "wfi": "native",
          "bootargs": f"lat.samples={ROUND_TRIPS} lat.tests=chan lat.chan=msg "
                      f"lat.start_delay_us={PINGER_DELAY_US}"}
    linux = {"name": "linux", "cpus": [2, 3], "memory": "256MiB",
             "image": str(directory / "Image"), "initrd": str(directory / "initramfs.cpio.gz"),
             "irq": LINUX_IRQ[arch], "wfi": "trap" if LINUX_IRQ[arch] == "trap" else "native",
             "bootargs": f"{console} quiet tern.run=chan tern.chan.count={ROUND_TRIPS}"}
    path = tmp_path / "system.toml"
    path.write_text(dump_toml({
        "board": {"arch": arch, "cpus": 4, "memory": "1GiB"},
        "partition": [rt, linux],
        "channel": [{"name": "msg", "size": "64KiB", "members": ["rt", "linux"]}]}))
    result = run_system(path, timeout=TIMEOUT)
    assert result.ok, result.explain()
    answered = [ANSWERED.search(line) for line in result.partitions["linux"].lines]
    answered = [m for m in answered if m]
    assert [(int(m.group(1)), int(m.group(2)), int(m.group(3))) for m in answered] == \
        [(ROUND_TRIPS, 1, 64 << 10)], result.explain()
    records = result.partitions["rt"].lat
    assert [(r["test"], r.get("samples"), "error" in r) for r in records] == \
        [("chan-rtt", ROUND_TRIPS, False)], result.explain()
    assert result.stats["rt"]["doorbell_ring"] == ROUND_TRIPS, result.stats
    assert result.stats["linux"]["doorbell_ring"] == ROUND_TRIPS, result.stats
    assert result.stats["rt"]["faults"] == result.stats["linux"]["faults"] == 0, result.stats
    # An INTx that keeps coming back with nothing pending (a level re-pended for ever) is one
    # Linux gives up on after 100000: it says so on the console whatever its log level.
    assert not [line for line in result.log if "Disabling IRQ" in line or "nobody cared" in line], \
        result.explain()

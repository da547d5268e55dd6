"""VirtIO devices served by another partition (issue 28, second half): Linux's virtio-blk driver
finds a disk at the board's first virtio-mmio slot and reads a file off it, served by the
bare-metal backend guest (guests/vback) from the image the hypervisor loaded as its initrd,
while the latency guest runs beside them (`-k virtio`).

Linux (`tern.run=blk`) prints hello.txt of the tar archive on /dev/vda (tools/tern/initramfs.py,
tools/tern/diskimage.py); the backend says it is ready with the disk's sectors; the
hypervisor's counters show requests posted on the frontend and nothing refused either way.
The backend serves until it is told to stop: the console stops it once Linux is off.
"""

import gzip
import struct
import subprocess
import sys

import pytest
from conftest import LAT, LAT_RISCV64, REPO

from tern import initramfs, qemu, run_native, run_system
from tern.config import dump_toml
from tern.diskimage import SECTOR, tar_disk
from tern.runner import run_qemu

VBACK = {"arm64": REPO / "guests" / "build" / "arm64" / "vback.img",
         "riscv64": REPO / "guests" / "build" / "riscv64" / "vback.img"}
# Linux as the other Linux tests run it on each board: arm64 trap-and-inject, riscv64 trap-less.
LINUX = {
    "arm64": (REPO / "build" / "linux", "console=ttyAMA0", "trap", LAT, "vtimer-wfi"),
    "riscv64": (REPO / "build" / "linux-riscv64", "console=ttyS0", "direct", LAT_RISCV64,
                "sstc-wfi"),
}
BOARD = {"arm64": {"cpus": 4, "memory": "1GiB"},
         "riscv64": {"arch": "riscv64", "cpus": 4, "memory": "1GiB"}}
CONTENT = b"served by a partition 28\n"
RT_SAMPLES = 200
# A busy 2-core host boots the board's emulation slowly; Linux is up in seconds when idle.
TIMEOUT = 180


TERN_VSOCK = {"arm64": REPO / "guests" / "build" / "arm64" / "tern-vsock",
              "riscv64": REPO / "guests" / "build" / "riscv64" / "tern-vsock"}


def vback_built(arch):
    assert VBACK[arch].exists(), f"missing {VBACK[arch]}: run `make -C guests` first"


def linux_built(arch):
    directory = LINUX[arch][0]
    kernel, initrd = directory / "Image", directory / "initramfs.cpio.gz"
    assert kernel.exists() and initrd.exists(), \
        f"missing {kernel} or {initrd}: run `make linux` first"
    return kernel, initrd


def system(tmp_path, arch, disk=CONTENT, run="blk", device="blk", initrd=None, trusted=False):
    """rt (the latency guest) on core 1, linux (the frontend, tern.run=`run`, the initramfs
    `initrd` if given) on core 2, store (the backend) on core 3, and between them the blk device
    disk0, its disk relative to the description, the console con0 or the vsock sock0;
    `trusted`: backend_trusted, store maps linux's RAM."""
    _, console, linux_irq, lat, rt_test = LINUX[arch]
    kernel, built = linux_built(arch)
    initrd = initrd or built
    vback_built(arch)
    (tmp_path / "disk.img").write_bytes(tar_disk({"hello.txt": disk}))
    partitions = [
        {"name": "rt", "cpus": [1], "memory": "32MiB", "image": str(lat), "irq": "direct",
         "wfi": "native", "bootargs": f"lat.samples={RT_SAMPLES} lat.tests={rt_test}"},
        {"name": "linux", "cpus": [2], "memory": "256MiB", "image": str(kernel),
         "initrd": str(initrd), "irq": linux_irq,
         "wfi": "native" if linux_irq == "direct" else "trap",
         "bootargs": f"{console} quiet tern.run={run}"},
        {"name": "store", "cpus": [3], "memory": "32MiB", "image": str(VBACK[arch]),
         "irq": "trap", "wfi": "trap", "bootargs": ""},
    ]
    virtio = [{"name": "disk0", "device": "blk", "frontend": "linux", "backend": "store",
               "disk": "disk.img"} if device == "blk" else
              {"name": "sock0" if device == "vsock" else "con0", "device": device,
               "frontend": "linux", "backend": "store"}]
    if trusted:
        virtio[0]["backend_trusted"] = True
    path = tmp_path / "system.toml"
    path.write_text(dump_toml({"board": BOARD[arch], "partition": partitions,
                               "virtio": virtio}))
    return path


def tern_check(path):
    return subprocess.run([sys.executable, str(REPO / "tern"), "check", str(path)],
                          capture_output=True, text=True, timeout=60)


def lines_of(result, name, prefix):
    tag = f"[{name}] "
    return [line[len(tag):] for line in result.log
            if line.startswith(tag) and line[len(tag):].startswith(prefix)]


@pytest.mark.parametrize("mode", ["mediated", "trusted"])
@pytest.mark.parametrize("arch", sorted(LINUX))
def test_virtio_blk_served_by_a_bare_metal_partition(tmp_path, arch, mode):
    # trusted: the backend reads the file's sectors straight into Linux's buffers through its
    # window onto Linux's RAM, the hypervisor posting the chains' segments and copying nothing.
    trusted = mode == "trusted"
    path = system(tmp_path, arch, trusted=trusted)
    check = tern_check(path)
    assert check.returncode == 0, check.stderr
    assert "disk0" in check.stdout, check.stdout        # the device's channel is laid out
    assert ("backend store is trusted: it reads and writes all of linux's RAM"
            in check.stdout) == trusted, check.stdout

    stopped = []

    def console(line):
        # The backend serves for ever: stop it once the frontend is done with the disk (typed
        # while Linux still powers off: on riscv64 a line typed with every core idle was at
        # times not taken, which is left to find).
        if line.strip() == "[linux] TERN-LINUX: done" and not stopped:
            stopped.append(line)
            return "stop store\r"
        return None

    result = run_system(path, timeout=TIMEOUT, console=console)
    assert result.ok, result.explain()

    # The backend found its device and the disk, whole sectors of it.
    sectors = len(tar_disk({"hello.txt": CONTENT})) // SECTOR
    assert lines_of(result, "store", "TERN-VBACK:") == \
        [f"TERN-VBACK: ready disk0 blk sectors={sectors}{' segments' if trusted else ''}"], \
        result.explain()

    # Linux read the file through the virtio-mmio slot: its exact content.
    linux = lines_of(result, "linux", "TERN-LINUX:")
    assert "TERN-LINUX: blk " + CONTENT.decode().strip() in linux, result.explain()
    assert not [line for line in linux if "error" in line], linux

    frontend, backend = result.stats["linux"], result.stats["store"]
    assert frontend["virtio_notify"] > 0 and frontend["virtio_request"] > 0, frontend
    assert 0 < frontend["virtio_completion"] <= frontend["virtio_request"], frontend
    for stats in (frontend, backend):
        assert stats["virtio_refused_frontend"] == 0, stats
        assert stats["virtio_refused_backend"] == 0, stats
        assert stats["faults"] == 0, stats
    assert result.partitions["store"].state == "off", result.explain()

    # The real-time partition beside them ran to its end, every sample taken.
    rt = result.partitions["rt"]
    assert rt.state == "off", result.explain()
    assert [r["test"] for r in rt.lat] == [LINUX[arch][4]], result.explain()
    assert all(r["samples"] == RT_SAMPLES and "error" not in r for r in rt.lat), rt.lat


@pytest.mark.parametrize("arch", sorted(LINUX))
def test_virtio_console_served_by_a_bare_metal_partition(tmp_path, arch):
    # Linux's virtio_console writes a line to hvc0; the bare-metal backend prints it.
    path = system(tmp_path, arch, run="hvc", device="console")

    stopped = []

    def console(line):
        if line.strip() == "[linux] TERN-LINUX: done" and not stopped:   # as above
            stopped.append(line)
            return "stop store\r"
        return None

    result = run_system(path, timeout=TIMEOUT, console=console)
    assert result.ok, result.explain()
    assert "TERN-LINUX: hvc written" in lines_of(result, "linux", "TERN-LINUX:"), \
        result.explain()
    assert lines_of(result, "store", "TERN-VBACK:") == [
        "TERN-VBACK: ready con0 console",
        "TERN-VBACK: con0: hello from Linux over virtio-console"], result.explain()
    frontend = result.stats["linux"]
    assert frontend["virtio_request"] > 0 and frontend["virtio_refused_frontend"] == 0, frontend
    assert frontend["virtio_refused_backend"] == 0, frontend


def vsock_initrd(tmp_path, arch):
    """The Linux guest's initramfs with this tree's tern-vsock (the prebuilt one may predate
    it), built as test_virtio_net.py builds its own."""
    directory = LINUX[arch][0]
    assert (directory / "root").is_dir(), f"missing {directory}/root: run `make linux` first"
    assert TERN_VSOCK[arch].exists(), \
        f"missing {TERN_VSOCK[arch]}: run `make -C guests tern-vsock` first"
    archive, _ = initramfs.build(directory / "root", arch, tern_vsock=TERN_VSOCK[arch])
    path = tmp_path / f"initramfs-{arch}.cpio.gz"
    path.write_bytes(gzip.compress(archive.to_bytes(), mtime=0))
    return path


@pytest.mark.parametrize("arch", sorted(LINUX))
def test_virtio_vsock_served_by_a_bare_metal_partition(tmp_path, arch):
    # Linux's vsock drivers connect to the host (CID 2) port 1234, which vback serves: the
    # line comes back prefixed, and vback printed it; port 4321 is not served: refused.
    path = system(tmp_path, arch, run="vsock-echo", device="vsock",
                  initrd=vsock_initrd(tmp_path, arch))
    check = tern_check(path)
    assert check.returncode == 0, check.stderr
    assert "(device ID 19, guest CID 3)" in check.stdout, check.stdout

    stopped = []

    def console(line):
        if line.strip() == "[linux] TERN-LINUX: done" and not stopped:   # as above
            stopped.append(line)
            return "stop store\r"
        return None

    result = run_system(path, timeout=TIMEOUT, console=console)
    assert result.ok, result.explain()
    linux = lines_of(result, "linux", "TERN-LINUX:")
    assert not [line for line in linux if "error" in line], linux
    vsock = [line for line in linux if line.startswith("TERN-LINUX: vsock")]
    assert len(vsock) == 2, result.explain()
    # The echo, byte for byte (the client also exits non-zero on any other answer).
    assert vsock[0] == "TERN-LINUX: vsock-echo port=1234 reply=echo: hello from Linux over vsock", \
        result.explain()
    # The unserved port: the connect failed with a reset (or refusal), as the client saw it.
    refused = vsock[1].split()
    assert refused[:3] == ["TERN-LINUX:", "vsock-refused", "port=4321"], vsock
    assert refused[3] in ("errno=104", "errno=111"), vsock
    assert lines_of(result, "store", "TERN-VBACK:") == [
        "TERN-VBACK: ready sock0 vsock cid=3 port=1234",
        "TERN-VBACK: sock0: vsock 1234: hello from Linux over vsock"], result.explain()
    frontend = result.stats["linux"]
    assert frontend["virtio_request"] > 0 and frontend["virtio_completion"] > 0, frontend
    assert frontend["virtio_refused_frontend"] == 0, frontend
    assert frontend["virtio_refused_backend"] == 0, frontend


@pytest.mark.parametrize("arch", sorted(LINUX))
def test_vback_without_a_virtio_channel_says_so_and_ends(arch):
    # On the bare board: no tern,channel node with tern,virtio, nothing to serve, no wait.
    vback_built(arch)
    result = run_native(VBACK[arch], timeout=60)
    assert result.ok, result.explain()
    assert "TERN-VBACK: error no virtio device to serve" in result.log, result.explain()


# ---- vback alone on the bare board, serving requests written into its channels beforehand ----

# tern/virtio_channel.h's layout, as this test writes and reads it.
VIO_MAGIC, VIO_VERSION, VIO_READY = 0x4F495654, 2, 0x59444552
REQUESTS, COMPLETIONS, ENTRIES_AT, DATA, CONFIG = 0x1000, 0x3000, 0x80, 0x5000, 0x100
BLK, CONSOLE = 2, 3
SHAPE = {BLK: (1, 32, 0x8000), CONSOLE: (2, 64, 0x1000)}      # queues, queue size, slot size
RAM = 512 << 20
RAM_BASE = {"arm64": 0x4000_0000, "riscv64": 0x8000_0000}
CHANNELS_AT = 256 << 20         # from RAM's base: above what QEMU loads (image, initrd, dtb)
DOORBELL_SPI = 60               # a line nothing on the board drives: the test rings no doorbell


class Channel:
    """A virtio channel's bytes, as the hypervisor would leave them, with requests posted."""

    def __init__(self, device):
        self.device = device
        self.queues, self.queue_size, self.slot_size = SHAPE[device]
        self.entries = self.queues * self.queue_size
        self.mem = bytearray(DATA + self.entries * self.slot_size)
        struct.pack_into("<8I", self.mem, 0, VIO_MAGIC, VIO_VERSION, device, self.queues,
                         self.queue_size, self.slot_size, 0, 0)
        self.posted = 0

    def slot(self, queue, head):
        return DATA + (queue * self.queue_size + head) * self.slot_size

    def post(self, queue, head, readable, writable, epoch=0):
        if queue < self.queues and head < self.queue_size:
            start = self.slot(queue, head)
            self.mem[start:start + len(readable)] = readable
        struct.pack_into("<HHIII", self.mem, REQUESTS + ENTRIES_AT + self.posted * 16, queue,
                         head, len(readable), writable, epoch)
        self.posted += 1
        struct.pack_into("<I", self.mem, REQUESTS, self.posted)

    def completions(self, mem):
        count = struct.unpack_from("<I", mem, COMPLETIONS)[0]
        return [struct.unpack_from("<HHII", mem, COMPLETIONS + ENTRIES_AT + i * 16)
                for i in range(count)]


def blk_request(kind, sector, data=b""):
    return struct.pack("<IIQ", kind, 0, sector) + data


def channel_node(arch, name, address, size, doorbell, virtio):
    irq = f"<0 {DOORBELL_SPI} 1>" if arch == "arm64" else f"<{DOORBELL_SPI} 1>"
    return (f"\ttern-channel@{address:x} {{\n\t\tcompatible = \"tern,channel\";\n"
            f"\t\treg = <0x0 0x{address:x} 0x0 0x{size:x}>, <0x0 0x{doorbell:x} 0x0 0x1000>;\n"
            f"\t\ttern,name = \"{name}\";\n\t\ttern,member = <0>;\n"
            f"\t\ttern,members = \"store\", \"linux\";\n\t\tinterrupts = {irq};\n"
            f"\t\ttern,virtio = \"{virtio}\";\n\t}};\n")


@pytest.mark.parametrize("arch", sorted(LINUX))
def test_vback_serves_virtio_requests_waiting_in_its_channels(tmp_path, arch):
    """No hypervisor: QEMU's board with its RAM in a file, and a device tree with two virtio
    channels in that RAM, a blk (the disk: QEMU's -initrd) and a console. The requests are
    there before vback starts; it serves them in its first look at the rings, before it
    sleeps; the console's garbage line comes once every completion is published (the blk's
    device is served first). The doorbell pages are RAM too: vback's rings of member 1 are
    stores nobody answers."""
    vback_built(arch)
    disk = tar_disk({"hello.txt": CONTENT})
    (tmp_path / "disk.img").write_bytes(disk)

    blk = Channel(BLK)
    blk.post(0, 3, blk_request(0, 0), 2 * SECTOR + 1)               # IN: the tar header
    blk.post(0, 4, blk_request(8, 0), 20 + 1)                       # GET_ID
    blk.post(0, 5, blk_request(1, 7, b"\x5a" * SECTOR), 1)          # OUT to sector 7
    blk.post(0, 6, blk_request(0, 7), SECTOR + 1)                   # ... read back
    blk.post(0, 7, blk_request(0, len(disk) // SECTOR), SECTOR + 1)  # past the end
    blk.post(0, 40, blk_request(0, 0), SECTOR + 1)                  # no head 40: garbage
    con = Channel(CONSOLE)
    con.post(0, 0, b"", 64)                                          # receiveq: held
    con.post(1, 0, b"hello from the ", 0)
    con.post(1, 1, b"frontend\nsecond line\n", 0)
    # Garbage (no head 70): its line comes after this channel's completions are published,
    # which is when the test stops the board.
    con.post(1, 70, b"x", 0)

    base = RAM_BASE[arch]
    places = [(blk, "disk0", "blk", base + CHANNELS_AT), (con, "con0", "console",
                                                         base + CHANNELS_AT + (16 << 20))]
    ram = tmp_path / "ram"
    with open(ram, "wb") as f:
        f.truncate(RAM)
        for channel, _, _, address in places:
            f.seek(address - base)
            f.write(channel.mem)
    memory = ("-object", f"memory-backend-file,id=ram0,size={RAM},mem-path={ram},share=on",
              "-machine", "memory-backend=ram0")

    board = tmp_path / "board.dtb"
    command = qemu.native_command(VBACK[arch], memory=RAM, arch=arch,
                                  extra=memory + ("-machine", f"dumpdtb={board}"))
    subprocess.run(command, check=True, capture_output=True, timeout=60)
    dts = subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(board)], check=True,
                         capture_output=True, text=True).stdout
    dts += "/ {\n" + "".join(channel_node(arch, name, address, len(channel.mem),
                                          address + (8 << 20), virtio)
                             for channel, name, virtio, address in places) + "};\n"
    dtb = tmp_path / "vback.dtb"
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(dtb), "-"], input=dts,
                   check=True, capture_output=True, text=True)

    command = qemu.native_command(VBACK[arch], memory=RAM, arch=arch, initrd=tmp_path / "disk.img",
                                  dtb=dtb, extra=memory)
    run = run_qemu(command, timeout=60, log_path=tmp_path / "serial.log",
                   stop_when=lambda line: line.startswith("TERN-VBACK: con0: garbage"))
    log = run.lines
    assert not run.timed_out, log[-20:]
    vback = [line for line in log if line.startswith("TERN-VBACK:")]
    assert vback == [f"TERN-VBACK: ready disk0 blk sectors={len(disk) // SECTOR}",
                     "TERN-VBACK: ready con0 console",
                     "TERN-VBACK: disk0: garbage request skipped (the rest are counted, "
                     "not printed)",
                     "TERN-VBACK: con0: hello from the frontend",
                     "TERN-VBACK: con0: second line",
                     "TERN-VBACK: con0: garbage request skipped (the rest are counted, "
                     "not printed)"], log[-20:]

    mem = ram.read_bytes()
    at = CHANNELS_AT
    header = struct.unpack_from("<II", mem, at + 0x40)
    assert header == (VIO_READY, 1), header                  # ready, config generation 1
    capacity, size_max, seg_max = struct.unpack_from("<QII", mem, at + CONFIG)
    assert (capacity, size_max, seg_max) == (len(disk) // SECTOR, 4096, 7)
    assert struct.unpack_from("<I", mem, at + REQUESTS + 0x40)[0] == 6     # all taken
    assert blk.completions(mem[at:]) == [(0, 3, 2 * SECTOR + 1, 0), (0, 4, 21, 0),
                                         (0, 5, 1, 0), (0, 6, SECTOR + 1, 0),
                                         (0, 7, SECTOR + 1, 0)]

    def written(head, readable, length):
        start = at + blk.slot(0, head) + readable
        return mem[start:start + length]

    assert written(3, 16, 2 * SECTOR + 1) == disk[:2 * SECTOR] + b"\0"       # OK
    assert written(4, 16, 21) == b"tern-disk0".ljust(20, b"\0") + b"\0"
    assert written(5, 16 + SECTOR, 1) == b"\0"
    assert written(6, 16, SECTOR + 1) == b"\x5a" * SECTOR + b"\0"
    assert written(7, 16, SECTOR + 1) == bytes(SECTOR) + b"\x01"              # IOERR

    at = CHANNELS_AT + (16 << 20)
    assert struct.unpack_from("<I", mem, at + 0x40)[0] == VIO_READY
    assert con.completions(mem[at:]) == [(1, 0, 0, 0), (1, 1, 0, 0)]         # receiveq held
    assert struct.unpack_from("<I", mem, at + REQUESTS + 0x40)[0] == 4     # all taken

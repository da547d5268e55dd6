"""tern-vio, a VirtIO backend in Linux user space, against QEMU's ivshmem-plain on the bare board.

No hypervisor: Debian's kernel boots natively with an initramfs built here with this tree's
tern-vio and a disk image, QEMU's ivshmem-plain standing for the channel's PCI function and a
tern,channel node with `tern,virtio = "blk"` added to QEMU's own device tree. The test is the
hypervisor: it writes the channel's header and requests into the file behind the shared
memory before the board boots (ivshmem-plain has no doorbell, so `tern.vio.once=1` has
tern-vio serve what waits and exit), and reads the config space and completions back after.
This proves the program itself on a real kernel (uio, BAR2 as device memory, the disk file);
tests/system/test_virtio_net.py has it serve a partition under the hypervisor.
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
# As test_linux_chan.py: riscv64 natively on the PLIC (QEMU 7.2's AIA board hangs Debian's
# kernel once its console takes the UART's interrupt).
BOARD = {"arm64": (), "riscv64": ("-machine", "aia=none")}
NODE_ADDRESS = {"arm64": 0x6000_0000, "riscv64": 0xa000_0000}
TIMEOUT = 180

# tern/virtio_channel.h
VIO_MAGIC, VIO_VERSION, VIO_READY = 0x4F495654, 2, 0x59444552
CONFIG, REQUESTS, COMPLETIONS, DATA = 0x100, 0x1000, 0x3000, 0x5000
PROD, CONS, ENTRIES = 0x00, 0x40, 0x80
QUEUE_SIZE, SLOT_SIZE = 32, 0x8000
CHANNEL_SIZE = DATA + QUEUE_SIZE * SLOT_SIZE
SHM_SIZE = 2 << 20                      # BAR2: the channel's size rounded up to a power of two
DISK = bytes((i * 7 + i // 512) & 0xff for i in range(64 << 10))
IN, OUT, GET_ID, FLUSH = 0, 1, 8, 4
OK, IOERR, UNSUPP = 0, 1, 2
SERVED = re.compile(r"TERN-LINUX: vio disk0 served requests=(\d+) completions=(\d+) "
                    r"garbage=(\d+) stale=(\d+) malformed=(\d+)")


def dtb_with_virtio_channel(tmp_path, arch, qemu_args, name="disk0", device="blk",
                            channel_size=CHANNEL_SIZE, shm_size=SHM_SIZE):
    """QEMU's own device tree with the backend's node for the channel (its first: PCI device
    1), as the hypervisor gives member 0 of a [[virtio]]'s channel."""
    board = tmp_path / "board.dtb"
    command = qemu.native_command(LINUX[arch][0] / "Image", memory=512 << 20, arch=arch,
                                  extra=qemu_args + ("-machine", f"dumpdtb={board}"))
    subprocess.run(command, check=True, capture_output=True, timeout=60)
    dts = subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(board)], check=True,
                         capture_output=True, text=True).stdout
    addr = NODE_ADDRESS[arch]
    dts += (f"/ {{\n\ttern-channel@{addr:x} {{\n\t\tcompatible = \"tern,channel\";\n"
            f"\t\treg = <0x0 0x{addr:x} 0x0 0x{channel_size:x}>, "
            f"<0x0 0x{addr + shm_size:x} 0x0 0x1000>;\n"
            f"\t\ttern,name = \"{name}\";\n\t\ttern,member = <0>;\n"
            f"\t\ttern,members = \"backend\", \"frontend\";\n"
            f"\t\ttern,virtio = \"{device}\";\n\t}};\n}};\n")
    dtb = tmp_path / "channel.dtb"
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(dtb), "-"], input=dts,
                   check=True, capture_output=True, text=True)
    return dtb


def initrd(tmp_path, arch):
    directory = LINUX[arch][0]
    tern_vio = REPO / "guests" / "build" / arch / "tern-vio"
    assert (directory / "root").is_dir() and (directory / "Image").exists(), \
        f"missing {directory}: run `make linux` first"
    assert tern_vio.exists(), f"missing {tern_vio}: run `make -C guests tern-vio` first"
    disk = tmp_path / "disk.img"
    disk.write_bytes(DISK)
    archive, _ = initramfs.build(directory / "root", arch, tern_vio=tern_vio, vio_disk=disk)
    path = tmp_path / f"initramfs-{arch}.cpio.gz"
    path.write_bytes(gzip.compress(archive.to_bytes(), mtime=0))
    return path


def slot(head):
    return DATA + head * SLOT_SIZE


@pytest.mark.parametrize("arch", ["arm64", "riscv64"])
def test_tern_vio_serves_the_blk_requests_waiting(tmp_path, arch):
    shm = bytearray(SHM_SIZE)
    struct.pack_into("<7I", shm, 0, VIO_MAGIC, VIO_VERSION, 2, 1, QUEUE_SIZE, SLOT_SIZE, 0)
    written = bytes(range(256)) * 2
    requests = [                        # (head, type, sector, data written, readable, writable)
        (0, OUT, 3, written, 16 + 512, 1),
        (1, IN, 3, b"", 16, 512 + 1),   # after the OUT: reads what it wrote
        (2, IN, 0, b"", 16, 1024 + 1),
        (3, GET_ID, 0, b"", 16, 20 + 1),
        (4, FLUSH, 0, b"", 16, 1),      # not offered
        (5, IN, len(DISK) // 512 - 1, b"", 16, 1024 + 1),   # past the end
    ]
    for i, (head, kind, sector, data, readable, writable) in enumerate(requests):
        struct.pack_into("<IIQ", shm, slot(head), kind, 0, sector)
        shm[slot(head) + 16:slot(head) + 16 + len(data)] = data
        struct.pack_into("<HHIII", shm, REQUESTS + ENTRIES + 16 * i, 0, head, readable,
                         writable, 0)
    # Garbage: a head past the queue, skipped and counted.
    struct.pack_into("<HHIII", shm, REQUESTS + ENTRIES + 16 * len(requests), 0, QUEUE_SIZE,
                     16, 1, 0)
    struct.pack_into("<I", shm, REQUESTS + PROD, len(requests) + 1)
    path = tmp_path / "shm"
    path.write_bytes(shm)
    backend = f"memory-backend-file,id=chan,size={SHM_SIZE},mem-path={path},share=on"
    qemu_args = ("-object", backend, "-device", "ivshmem-plain,memdev=chan") + BOARD[arch]
    dtb = dtb_with_virtio_channel(tmp_path, arch, qemu_args)
    directory, console = LINUX[arch]
    result = run_native(directory / "Image",
                        bootargs=f"{console} quiet tern.run=vio-blk-backend tern.vio.once=1",
                        memory=512 << 20, initrd=initrd(tmp_path, arch), dtb=dtb,
                        timeout=TIMEOUT, qemu_args=qemu_args, workdir=tmp_path / "run")
    assert result.ok, result.explain()
    lines = [line for line in result.log if line.startswith("TERN-LINUX:")]
    assert "TERN-LINUX: vio disk0 blk sectors=128 bdf=0000:00:01.0" in lines, lines
    served = [m.groups() for m in map(SERVED.search, lines) if m]
    assert served == [(str(len(requests) + 1), str(len(requests)), "1", "0", "0")], lines

    shm = path.read_bytes()
    # The config space (little-endian virtio_blk_config), then ready.
    assert struct.unpack_from("<QII", shm, CONFIG) == (len(DISK) // 512, 4096, 7)
    assert struct.unpack_from("<II", shm, 0x40) == (VIO_READY, 1)
    assert struct.unpack_from("<I", shm, REQUESTS + CONS)[0] == len(requests) + 1
    assert struct.unpack_from("<I", shm, COMPLETIONS + PROD)[0] == len(requests)
    completions = [struct.unpack_from("<HHII", shm, COMPLETIONS + ENTRIES + 16 * i)
                   for i in range(len(requests))]
    assert completions == [(0, head, writable, 0)
                           for head, _, _, _, _, writable in requests]

    def status(head, writable):
        return shm[slot(head) + 16 + writable - 1]

    assert [status(head, writable) for head, _, _, _, _, writable in requests] == \
        [OK, OK, OK, OK, UNSUPP, IOERR]
    assert shm[slot(1) + 16:slot(1) + 16 + 512] == written
    assert shm[slot(2) + 16:slot(2) + 16 + 1024] == DISK[:1024]
    assert shm[slot(3) + 16:slot(3) + 16 + 20] == b"tern-disk0".ljust(20, b"\0")


# virtio-net's shape, and the frontend's MAC tern-vio derives from the device's name.
NET_QUEUE_SIZE, NET_SLOT_SIZE = 64, 0x800
NET_CHANNEL_SIZE = DATA + 2 * NET_QUEUE_SIZE * NET_SLOT_SIZE
NET_SHM_SIZE = 512 << 10
NET_HDR, RX_BUFFERS, RX_WRITABLE = 12, 8, 12 + 1518
NET_SERVED = re.compile(r"TERN-LINUX: vio net0 served requests=(\d+) completions=(\d+) "
                        r"garbage=(\d+) stale=(\d+) malformed=(\d+)")


def name_mac(name):
    h = 0xcbf29ce484222325                  # FNV-1a, 64 bits, as vio_mac_from_name
    for c in name.encode():
        h = ((h ^ c) * 0x100000001b3) & (1 << 64) - 1
    return bytes([2] + [(h >> 8 * i) & 0xff for i in range(5)])


def net_slot(queue, head):
    return DATA + (queue * NET_QUEUE_SIZE + head) * NET_SLOT_SIZE


@pytest.mark.parametrize("arch", ["arm64", "riscv64"])
def test_tern_vio_moves_a_frame_to_the_tap_and_the_answer_back(tmp_path, arch):
    """The frontend's ARP request for the backend's 10.0.2.1 (a transmitq request) goes out
    on vio0; the backend's kernel answers, and the answer fills a held receiveq buffer."""
    mac = name_mac("net0")
    shm = bytearray(NET_SHM_SIZE)
    struct.pack_into("<7I", shm, 0, VIO_MAGIC, VIO_VERSION, 1, 2, NET_QUEUE_SIZE,
                     NET_SLOT_SIZE, 0)
    entries = [(0, head, 0, RX_WRITABLE) for head in range(RX_BUFFERS)]
    arp = (b"\xff" * 6 + mac + b"\x08\x06" +
           struct.pack(">HHBBH", 1, 0x0800, 6, 4, 1) + mac + bytes([10, 0, 2, 2]) +
           bytes(6) + bytes([10, 0, 2, 1])).ljust(60, b"\0")
    shm[net_slot(1, 0) + NET_HDR:net_slot(1, 0) + NET_HDR + len(arp)] = arp
    entries.append((1, 0, NET_HDR + len(arp), 0))
    for i, (queue, head, readable, writable) in enumerate(entries):
        struct.pack_into("<HHIII", shm, REQUESTS + ENTRIES + 16 * i, queue, head, readable,
                         writable, 0)
    struct.pack_into("<I", shm, REQUESTS + PROD, len(entries))
    path = tmp_path / "shm"
    path.write_bytes(shm)
    backend = f"memory-backend-file,id=chan,size={NET_SHM_SIZE},mem-path={path},share=on"
    qemu_args = ("-object", backend, "-device", "ivshmem-plain,memdev=chan") + BOARD[arch]
    dtb = dtb_with_virtio_channel(tmp_path, arch, qemu_args, "net0", "net", NET_CHANNEL_SIZE,
                                  NET_SHM_SIZE)
    directory, console = LINUX[arch]
    result = run_native(directory / "Image",
                        bootargs=f"{console} quiet tern.run=vio-net-backend tern.vio.once=1",
                        memory=512 << 20, initrd=initrd(tmp_path, arch), dtb=dtb,
                        timeout=TIMEOUT, qemu_args=qemu_args, workdir=tmp_path / "run")
    assert result.ok, result.explain()
    lines = [line for line in result.log if line.startswith("TERN-LINUX:")]
    assert f"TERN-LINUX: vio net0 net mac={mac.hex(':')} bdf=0000:00:01.0" in lines, lines
    assert "TERN-LINUX: vio-net backend up" in lines, lines
    served = [m.groups() for m in map(NET_SERVED.search, lines) if m]
    assert len(served) == 1 and served[0][0] == str(len(entries)), lines
    assert served[0][2:] == ("0", "0", "0"), lines

    shm = path.read_bytes()
    assert shm[CONFIG:CONFIG + 6] == mac
    assert struct.unpack_from("<II", shm, 0x40) == (VIO_READY, 1)
    done = [struct.unpack_from("<HHII", shm, COMPLETIONS + ENTRIES + 16 * i)
            for i in range(struct.unpack_from("<I", shm, COMPLETIONS + PROD)[0])]
    assert len(done) == int(served[0][1]), (done, lines)
    assert done[0] == (1, 0, 0, 0)          # the transmitq request, given back
    received = []
    for queue, head, written, epoch in done[1:]:
        assert queue == 0 and head < RX_BUFFERS and NET_HDR < written <= RX_WRITABLE
        start = net_slot(0, head)
        assert shm[start:start + NET_HDR] == bytes(10) + b"\1\0"   # num_buffers 1
        received.append(shm[start + NET_HDR:start + written])
    # The backend's kernel's answer, to the frontend's MAC: 10.0.2.1 is at vio0's address.
    replies = [f for f in received if f[:6] == mac and f[12:14] == b"\x08\x06" and
               struct.unpack_from(">H", f, 20)[0] == 2]
    assert len(replies) == 1, received
    assert replies[0][28:32] == bytes([10, 0, 2, 1]) and replies[0][32:38] == mac

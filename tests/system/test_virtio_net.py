"""virtio-net between two Linux partitions: one serves the other's network from user space.

The frontend ("client") finds a virtio-mmio device at the board's first slot and drives it
with Linux's own virtio_net; the hypervisor carries its requests over the device's channel to
the backend ("server"), where tern-vio (guests/linux/tern-vio) moves the frames between the
channel, reached through its ivshmem PCI function and uio_pci_generic, and a TAP interface.
Both run /init's vio-net modes (tools/tern/initramfs.py): the client pings the server, then
sends a known pattern over TCP; the server prints what it received. The initramfs is built
here from `make linux`'s packages and this tree's tern-vio (`make -C guests tern-vio`).
"""

import gzip
import hashlib
import re

import pytest
from conftest import REPO

from tern import initramfs, run_system
from tern.config import dump_toml

LINUX = {"arm64": (REPO / "build" / "linux", "console=ttyAMA0"),
         "riscv64": (REPO / "build" / "linux-riscv64", "console=ttyS0")}
# Linux's delivery mode as the other Linux tests of each board run it.
LINUX_IRQ = {"arm64": "trap", "riscv64": "direct"}
BYTES = 256 << 10
# /init's pattern (run_vio_net_frontend): `yes LINE | head -c BYTES`.
PATTERN_LINE = b"Tern virtio-net 0123456789abcdefghijklmnopqrstuvwxyz\n"
# Two Linux boots on a busy 2-core host, then the transfer.
TIMEOUT = 360
PING = re.compile(r"TERN-LINUX: vio-net ping (\d+) packets transmitted, (\d+) packets received")
TRANSFER = re.compile(r"TERN-LINUX: vio-net (sent|received) bytes=(\d+) md5=([0-9a-f]{32})")


def initrd(tmp_path, arch):
    directory = LINUX[arch][0]
    tern_vio = REPO / "guests" / "build" / arch / "tern-vio"
    assert (directory / "root").is_dir() and (directory / "Image").exists(), \
        f"missing {directory}: run `make linux` first"
    assert tern_vio.exists(), f"missing {tern_vio}: run `make -C guests tern-vio` first"
    archive, _ = initramfs.build(directory / "root", arch, tern_vio=tern_vio)
    path = tmp_path / f"initramfs-{arch}.cpio.gz"
    path.write_bytes(gzip.compress(archive.to_bytes(), mtime=0))
    return path


def linux(name, cpus, arch, image, run):
    directory, console = LINUX[arch]
    return {"name": name, "cpus": cpus, "memory": "256MiB",
            "image": str(directory / "Image"), "initrd": str(image),
            "irq": LINUX_IRQ[arch], "wfi": "trap" if LINUX_IRQ[arch] == "trap" else "native",
            "bootargs": f"{console} quiet tern.run={run}"}


@pytest.mark.parametrize("arch", ["arm64", "riscv64"])
def test_a_linux_partition_serves_the_others_network(tmp_path, arch):
    image = initrd(tmp_path, arch)
    path = tmp_path / "system.toml"
    path.write_text(dump_toml({
        "board": {"arch": arch, "cpus": 4, "memory": "1GiB"},
        "partition": [
            linux("server", [1], arch, image, "vio-net-backend tern.vio.transfers=1"),
            linux("client", [2], arch, image, f"vio-net-frontend tern.vio.bytes={BYTES}")],
        "virtio": [{"name": "net0", "device": "net", "frontend": "client",
                    "backend": "server"}]}))
    result = run_system(path, timeout=TIMEOUT)
    assert result.ok, result.explain()
    server, client = result.partitions["server"].lines, result.partitions["client"].lines
    assert any("TERN-LINUX: vio net0 net mac=02:" in line for line in server), server
    assert any("TERN-LINUX: vio-net backend up" in line for line in server), server
    # Tern's lines only: riscv64's kernel says "error" of the console UART it polls.
    assert not [line for line in server + client
                if line.startswith("TERN-LINUX:") and "error" in line], server + client

    pings = [m for m in map(PING.search, client) if m]
    assert [(int(m.group(1)), int(m.group(2))) for m in pings] == [(5, 5)], client

    pattern = (PATTERN_LINE * (BYTES // len(PATTERN_LINE) + 1))[:BYTES]
    want = (BYTES, hashlib.md5(pattern).hexdigest())
    sent = [(int(m.group(2)), m.group(3)) for m in map(TRANSFER.search, client)
            if m and m.group(1) == "sent"]
    received = [(int(m.group(2)), m.group(3)) for m in map(TRANSFER.search, server)
                if m and m.group(1) == "received"]
    assert sent == [want], client
    assert received == [want], server
    # ... and the client powered off only after the server said it had every byte.
    assert f"TERN-LINUX: vio-net acknowledged bytes={want[0]} md5={want[1]}" in client, client

    stats = result.stats
    assert stats["client"]["virtio_notify"] > 0, stats
    assert stats["client"]["virtio_completion"] > 0, stats
    for name in ("server", "client"):
        assert stats[name]["virtio_refused_frontend"] == 0, stats
        assert stats[name]["virtio_refused_backend"] == 0, stats
        assert stats[name]["faults"] == 0, stats

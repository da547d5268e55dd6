"""VirtIO devices served by another partition (issue 28, second half): Linux's virtio-blk driver
finds a disk at the board's first virtio-mmio slot and reads a file off it, served by the
bare-metal backend guest (guests/vback) from the image the hypervisor loaded as its initrd,
while the latency guest runs beside them (`-k virtio`).

Linux (`tern.run=blk`) prints hello.txt of the tar archive on /dev/vda (tools/tern/initramfs.py,
tools/tern/diskimage.py); the backend says it is ready with the disk's sectors; the
hypervisor's counters show requests posted on the frontend and nothing refused either way.
The backend serves until it is told to stop: the console stops it once Linux is off.
"""

import subprocess
import sys

import pytest
from conftest import LAT, LAT_RISCV64, REPO

from tern import run_native, run_system
from tern.config import dump_toml
from tern.diskimage import SECTOR, tar_disk

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


def vback_built(arch):
    assert VBACK[arch].exists(), f"missing {VBACK[arch]}: run `make -C guests` first"


def linux_built(arch):
    directory = LINUX[arch][0]
    kernel, initrd = directory / "Image", directory / "initramfs.cpio.gz"
    assert kernel.exists() and initrd.exists(), \
        f"missing {kernel} or {initrd}: run `make linux` first"
    return kernel, initrd


def system(tmp_path, arch, disk=CONTENT):
    """rt (the latency guest) on core 1, linux (the frontend) on core 2, store (the backend)
    on core 3, and the blk device disk0 between them, its disk relative to the description."""
    directory, console, linux_irq, lat, rt_test = LINUX[arch]
    kernel, initrd = linux_built(arch)
    vback_built(arch)
    (tmp_path / "disk.img").write_bytes(tar_disk({"hello.txt": disk}))
    partitions = [
        {"name": "rt", "cpus": [1], "memory": "32MiB", "image": str(lat), "irq": "direct",
         "wfi": "native", "bootargs": f"lat.samples={RT_SAMPLES} lat.tests={rt_test}"},
        {"name": "linux", "cpus": [2], "memory": "256MiB", "image": str(kernel),
         "initrd": str(initrd), "irq": linux_irq,
         "wfi": "native" if linux_irq == "direct" else "trap",
         "bootargs": f"{console} quiet tern.run=blk"},
        {"name": "store", "cpus": [3], "memory": "32MiB", "image": str(VBACK[arch]),
         "irq": "trap", "wfi": "trap", "bootargs": ""},
    ]
    virtio = [{"name": "disk0", "device": "blk", "frontend": "linux", "backend": "store",
               "disk": "disk.img"}]
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


@pytest.mark.parametrize("arch", sorted(LINUX))
def test_virtio_blk_served_by_a_bare_metal_partition(tmp_path, arch):
    path = system(tmp_path, arch)
    check = tern_check(path)
    assert check.returncode == 0, check.stderr
    assert "disk0" in check.stdout, check.stdout        # the device's channel is laid out

    stopped = []

    def console(line):
        # The backend serves for ever: stop it once the frontend has powered off.
        if line.strip() == "tern: partition linux off" and not stopped:
            stopped.append(line)
            return "stop store\r"
        return None

    result = run_system(path, timeout=TIMEOUT, console=console)
    assert result.ok, result.explain()

    # The backend found its device and the disk, whole sectors of it.
    sectors = len(tar_disk({"hello.txt": CONTENT})) // SECTOR
    assert lines_of(result, "store", "TERN-VBACK:") == \
        [f"TERN-VBACK: ready disk0 blk sectors={sectors}"], result.explain()

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
def test_vback_without_a_virtio_channel_says_so_and_ends(arch):
    # On the bare board: no tern,channel node with tern,virtio, nothing to serve, no wait.
    vback_built(arch)
    result = run_native(VBACK[arch], timeout=60)
    assert result.ok, result.explain()
    assert "TERN-VBACK: error no virtio device to serve" in result.log, result.explain()

"""The arm64 hypervisor's own check of a config blob on the board, with blobs packed by hand:
what `tern check` refuses first never reaches it otherwise (test_riscv64.py does the same on
riscv64)."""

import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
from tern import abi, qemu  # noqa: E402

HYPERVISOR = REPO / "hypervisor" / "build" / "arm64" / "tern.img"
CONFIG_HPA = 0x43F00000
MiB = 1 << 20
TIMEOUT = 60


def run_board(tmp_path, blob, memory=1 << 30):
    """The hypervisor alone with a blob: the serial log's `tern:` lines and QEMU's exit code."""
    assert HYPERVISOR.exists(), f"missing {HYPERVISOR}: run `make all` first"
    path = tmp_path / "config.blob"
    path.write_bytes(blob)
    cmd = (qemu.board_args("cortex-a53", 2, memory, machine_extra=qemu.SYSTEM_MACHINE_OPTIONS)
           + ["-kernel", str(HYPERVISOR)] + qemu.loader_args(path, CONFIG_HPA))
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    log = done.stdout.replace("\0", "")
    return [line.rstrip("\r") for line in log.splitlines() if line.startswith("tern:")], done.returncode


def partition(name="rt", cpus=(1,), ram_hpa=0x44000000, **more):
    fields = dict(name=name, ram_ipa=0x40000000, ram_hpa=ram_hpa, ram_size=32 * MiB,
                  entry_ipa=0x40080000, dtb_ipa=0x41E00000, image_ipa=0x40080000,
                  image_size=4096, pristine_image_hpa=0x4A000000,
                  pristine_dtb_hpa=0x4A200000, dtb_size=4096, cpus=cpus)
    fields.update(more)
    return abi.PartitionRecord(**fields)


def blob(*partitions, ram_size=1 << 30):
    return abi.pack(abi.ConfigBlob(board_cpus=2, partitions=list(partitions), ram_size=ram_size,
                                   flags=abi.CF_IOMMU))


ECAM = abi.Region(0x3F000000, 0x3F000000, 0x1000000)
MEMORY_WINDOW = abi.Region(0x10000000, 0x10000000, 0x2EFF0000)


@pytest.mark.parametrize("records, ram_size, error", [
    # The board has 1 GiB (QEMU's -m, in the device tree x0 names): the blob says 2 GiB.
    ([partition()], 2 << 30,
     "board RAM size 0x80000000, but the board has 0x40000000 (the firmware's device tree)"),
    # The bridge's ECAM (its bus's DMA through the SMMU) to one, its memory window to another.
    ([partition(regions=[ECAM]),
      partition(name="other", cpus=(0,), ram_hpa=0x46000000, pristine_image_hpa=0x4A400000,
                pristine_dtb_hpa=0x4A600000, regions=[MEMORY_WINDOW])], 1 << 30,
     "partition other: region 0x10000000 is part of a device rt has a part of"),
    ([partition(regions=[abi.Region(0x3F100000, 0x3F100000, 0x100000)])], 1 << 30,
     "partition rt: region 0x3f100000+0x100000 is part of the ECAM at 0x3f000000+0x1000000"),
], ids=["ram-beyond-the-board", "bridge-split-window", "ecam-part"])
def test_the_board_check_refuses_what_the_tool_never_writes(tmp_path, records, ram_size, error):
    lines, rc = run_board(tmp_path, blob(*records, ram_size=ram_size))
    assert len(lines) == 2 and lines[1].startswith("tern: error: system description: "), lines
    assert error in lines[1], lines
    assert rc == 0, lines

"""tern-chan, a channel's Linux side, against QEMU's own ivshmem-plain on the bare board.

No hypervisor: Debian's kernel (from `make linux`) boots natively with an initramfs built here
from the same packages and this tree's tern-chan (`make -C guests tern-chan`), and QEMU's
ivshmem-plain, the PCI function (1af4:1110) a channel is to Linux, on the board's PCIe bus.
`tern.run=chan-probe` finds it, binds uio_pci_generic, maps BAR0 and BAR2 and reads BAR0's
IVPosition. ivshmem-plain has no doorbell or interrupt, so the pong mode is tested against the
hypervisor's function instead.
"""

import gzip
import re

import pytest
from conftest import REPO

from tern import initramfs, run_native

LINUX = {"arm64": (REPO / "build" / "linux", "console=ttyAMA0"),
         "riscv64": (REPO / "build" / "linux-riscv64", "console=ttyS0")}
SHM_SIZE = 1 << 20
IVSHMEM = ("-object", f"memory-backend-ram,id=chan,size={SHM_SIZE},share=on",
           "-device", "ivshmem-plain,memdev=chan")
PROBE = re.compile(r"TERN-LINUX: chan-probe bdf=(\S+) uio=(uio\d+) position=(\d+) bar2=(\d+)")
# riscv64 on the board's PLIC instead of its APLIC and IMSICs: natively, Debian's 7.2 kernel
# hangs on QEMU 7.2's aplic-imsic board once its console switches to the UART's interrupt (with
# or without ivshmem; under the hypervisor that console is polled). The PCIe map, what tern-chan
# meets, is the same on both (ECAM 0x3000_0000, memory window 0x4000_0000).
BOARD = {"arm64": (), "riscv64": ("-machine", "aia=none")}
# A busy 2-core host boots the board's emulation slowly; Linux is up in seconds when idle.
TIMEOUT = 180


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
    directory, console = LINUX[arch]
    result = run_native(directory / "Image", bootargs=f"{console} quiet tern.run=chan-probe",
                        memory=512 << 20, initrd=initrd(tmp_path, arch), timeout=TIMEOUT,
                        qemu_args=IVSHMEM + BOARD[arch], workdir=tmp_path / "run")
    assert result.ok, result.explain()
    lines = [line for line in result.log if line.startswith("TERN-LINUX:")]
    assert not [line for line in lines if "error" in line], lines
    probes = [m for m in map(PROBE.fullmatch, lines) if m]
    assert len(probes) == 1, lines
    bdf, uio, position, bar2 = probes[0].groups()
    assert re.fullmatch(r"0000:00:[0-9a-f]{2}\.0", bdf), bdf
    assert uio == "uio0"                # bound: uio_pci_generic registered its device
    assert int(bar2) == SHM_SIZE
    # QEMU's ivshmem-plain has no peers: its IVPosition reads 0.
    assert int(position) == 0

"""QEMU command lines for the board, with and without the hypervisor."""

import shutil

from .config import MAX_PCI_DEVICES, PCI_MODELS
from .errors import ToolError

QEMU = "qemu-system-aarch64"
MiB = 1 << 20

# highmem=off: nothing above 4 GiB (PCIe ECAM at 0x3f00_0000, RAM ends by 4 GiB), the board
# Tern's addresses assume.  -nic none: no default network card on the PCIe bus.
MACHINE_OPTIONS = "gic-version=3,highmem=off"
# Hypervisor runs only: QEMU's SMMUv3 in front of the PCIe bus, which Tern programs to confine
# the DMA of passed-through devices (the config blob says it is there: abi.CF_SMMUV3).  Native
# runs stay the bare board, where a guest would see it in QEMU's device tree and might use it.
SYSTEM_MACHINE_OPTIONS = ",iommu=smmuv3"
PCI_FIRST_SLOT = 2                # [board] pci device i goes in slot PCI_FIRST_SLOT + i
# edu's DMA keeps only the low 28 address bits by default, below the RAM at 0x4000_0000; a
# 32-bit mask covers the whole board (nothing is above 4 GiB).
PCI_MODEL_OPTIONS = {"edu": ",dma_mask=0xffffffff"}


def require_qemu():
    """Fail early, with a hint, when QEMU is not installed."""
    if not shutil.which(QEMU):
        raise ToolError(f"{QEMU} not found (install the qemu-system-arm package)")


def _opt(value):
    """A value inside a QEMU -opt list, where ',' must be doubled."""
    return str(value).replace(",", ",,")


def board_args(cpu, cpus, memory, virtualization=True, icount=None, pci=(), machine_extra=""):
    """The machine: QEMU virt with GICv3, highmem=off, no NIC, `pci` models on its PCIe bus.

    virtualization=True gives the CPUs EL2 and makes QEMU enter -kernel there
    (the hypervisor's case); False enters at EL1, as a partition's guest does.
    machine_extra is appended to the -M options (",dumpdtb=FILE").
    """
    machine = "virt," + ("virtualization=on," if virtualization else "") + MACHINE_OPTIONS
    args = [QEMU, "-M", machine + machine_extra, "-cpu", cpu, "-smp", str(cpus),
            "-m", f"{memory // MiB}M", "-display", "none", "-monitor", "none",
            "-serial", "stdio", "-no-reboot", "-nic", "none"]
    args += pci_args(pci)
    if icount is not None:
        # align/sleep off: virtual time runs only with instructions, so results
        # do not depend on how busy the host is.
        args += ["-icount", f"shift={int(icount)},align=off,sleep=off"]
    return args


def pci_args(models):
    """-device MODEL,addr=SLOT.0 for each model, from slot PCI_FIRST_SLOT on."""
    models = list(models)
    for model in models:
        if model not in PCI_MODELS:
            raise ToolError(f'unknown PCI device model "{model}" '
                            f"(allowed: {', '.join(PCI_MODELS)})")
    if len(models) > MAX_PCI_DEVICES:
        raise ToolError(f"at most {MAX_PCI_DEVICES} PCI devices (got {len(models)})")
    args = []
    for i, model in enumerate(models):
        args += ["-device", f"{model},addr={PCI_FIRST_SLOT + i}.0{PCI_MODEL_OPTIONS[model]}"]
    return args


def loader_args(path, addr):
    """Put the raw bytes of `path` at board address `addr` before the CPUs start."""
    return ["-device", f"loader,file={_opt(path)},addr=0x{addr:x},force-raw=on"]


def system_command(board, hypervisor, loads, icount=None):
    """QEMU running the hypervisor; loads = [(path, board address), ...]."""
    args = board_args(board.cpu, board.cpus, board.memory, True, icount, board.pci,
                      machine_extra=SYSTEM_MACHINE_OPTIONS)
    args += ["-kernel", str(hypervisor)]
    for path, addr in loads:
        args += loader_args(path, addr)
    return args


def native_command(image, bootargs="", cpu="cortex-a53", cpus=2, memory=2048 * MiB,
                   icount=None, pci=()):
    """QEMU booting `image` directly, at EL1, with QEMU's own device tree."""
    args = board_args(cpu, cpus, memory, False, icount, pci)
    args += ["-kernel", str(image)]
    if bootargs:
        args += ["-append", bootargs]
    return args

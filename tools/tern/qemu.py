"""QEMU command lines for the board, with and without the hypervisor."""

import shutil
import socket
import time

from .config import MAX_PCI_DEVICES, PCI_DISK_MODELS, PCI_MODELS, PciDevice
from .errors import ToolError
from .image import ARM64, RISCV64
from .layout import QEMU_VIRT_ARM64, QEMU_VIRT_RISCV64, VIRT_BOARDS

QEMU = QEMU_VIRT_ARM64.qemu_binary
QEMU_RISCV64 = QEMU_VIRT_RISCV64.qemu_binary
# The QEMU that runs each architecture's board, and Debian's package with it.
QEMU_BINARIES = {b.arch: b.qemu_binary for b in VIRT_BOARDS.values()}
QEMU_PACKAGES = {b.arch: b.qemu_package for b in VIRT_BOARDS.values()}
MiB = 1 << 20

# What every arm64 run gives -M (layout.QEMU_VIRT_ARM64).  -nic none: no default network card
# on the PCIe bus.
MACHINE_OPTIONS = QEMU_VIRT_ARM64.qemu_machine_options
# Hypervisor runs only: QEMU's SMMUv3 in front of the PCIe bus, which Tern programs to confine
# the DMA of passed-through devices (the config blob says it is there: abi.CF_IOMMU).  Native
# runs stay the bare board, where a guest would see it in QEMU's device tree and might use it.
SYSTEM_MACHINE_OPTIONS = ",iommu=smmuv3"
PCI_FIRST_SLOT = 2                # [board] pci device i goes in slot PCI_FIRST_SLOT + i
# edu's DMA keeps only the low 28 address bits by default, below the RAM of either board
# (arm64's from 0x4000_0000, riscv64's from 0x8000_0000); a 32-bit mask covers all of it, as
# both boards' RAM ends by 4 GiB.
PCI_MODEL_OPTIONS = {"edu": ",dma_mask=0xffffffff"}


# The riscv virt board of the RISC-V port (issue 13): the AIA (APLIC in MSI mode, an IMSIC with
# an S-level file and 4 guest files per hart: ECAM 0x3000_0000, 32-bit window 0x4000_0000),
# harts with the H extension and Sstc. QEMU's own OpenSBI (fw_dynamic) is the firmware; an
# S-mode -kernel is entered at 0x8020_0000 with a0 = hart id, a1 = the device tree.
RISCV64_MACHINE = f"{QEMU_VIRT_RISCV64.qemu_machine},{QEMU_VIRT_RISCV64.qemu_machine_options}"
RISCV64_CPU = QEMU_VIRT_RISCV64.qemu_cpu
DEFAULT_CPU = {b.arch: b.qemu_cpu for b in VIRT_BOARDS.values()}


def require_qemu(arch=ARM64):
    """Fail early, with a hint, when the QEMU for `arch`'s board is not installed."""
    if not shutil.which(QEMU_BINARIES[arch]):
        raise ToolError(f"{QEMU_BINARIES[arch]} not found (install the {QEMU_PACKAGES[arch]} "
                        f"package)")


def _opt(value):
    """A value inside a QEMU -opt list, where ',' must be doubled."""
    return str(value).replace(",", ",,")


def board_args(cpu, cpus, memory, virtualization=True, icount=None, pci=(), machine_extra=""):
    """The machine: QEMU virt with GICv3, highmem=off, no NIC, `pci` models on its PCIe bus.

    virtualization=True gives the CPUs EL2 and makes QEMU enter -kernel there
    (the hypervisor's case); False enters at EL1, as a partition's guest does.
    machine_extra is appended to the -M options (",dumpdtb=FILE").
    """
    machine = (f"{QEMU_VIRT_ARM64.qemu_machine}," + ("virtualization=on," if virtualization else "")
               + MACHINE_OPTIONS)
    return _machine_args(QEMU, machine + machine_extra, cpu, cpus, memory, icount, pci)


def riscv64_board_args(cpus, memory, icount=None, pci=(), cpu=RISCV64_CPU):
    """The riscv virt board (RISCV64_MACHINE), with the same console, options and PCI slots
    as board_args gives the arm64 one."""
    return _machine_args(QEMU_RISCV64, RISCV64_MACHINE, cpu, cpus, memory, icount, pci)


def _machine_args(binary, machine, cpu, cpus, memory, icount, pci):
    """What every board run has: the serial console on stdio, no display, monitor, reboot or
    network, the PCI devices, and icount when asked for."""
    args = [binary, "-M", machine, "-cpu", cpu, "-smp", str(cpus),
            "-m", f"{memory // MiB}M", "-display", "none", "-monitor", "none",
            "-serial", "stdio", "-no-reboot", "-nic", "none"]
    args += pci_args(pci)
    if icount is not None:
        # align/sleep off: virtual time runs only with instructions, so results
        # do not depend on how busy the host is.
        args += ["-icount", f"shift={int(icount)},align=off,sleep=off"]
    return args


def pci_args(devices):
    """QEMU options for each PCI device (config.PciDevice or a model name), from slot
    PCI_FIRST_SLOT on; a virtio-blk's disk is a raw image, a virtio-net's network QEMU's
    user network restricted to the board."""
    devices = [PciDevice(d) if isinstance(d, str) else d for d in devices]
    for d in devices:
        if d.model not in PCI_MODELS:
            raise ToolError(f'unknown PCI device model "{d.model}" '
                            f"(allowed: {', '.join(PCI_MODELS)})")
        if (d.model in PCI_DISK_MODELS) != (d.disk is not None):
            raise ToolError(f"PCI device {d.model}: a disk image goes with "
                            f"{', '.join(PCI_DISK_MODELS)} only, and it needs one")
    if len(devices) > MAX_PCI_DEVICES:
        raise ToolError(f"at most {MAX_PCI_DEVICES} PCI devices (got {len(devices)})")
    # A virtio device does its DMA through the IOMMU (the SMMUv3 that confines it to its
    # partition) only with VIRTIO_F_ACCESS_PLATFORM offered, which needs a modern-only device:
    # without it QEMU's virtio devices reach board memory directly.  On riscv64, which has no
    # IOMMU, the feature still matters: it makes the guest's driver use its DMA API, which
    # follows the host bridge's dma-ranges to the partition's RAM on the board.
    virtio = ",disable-legacy=on,iommu_platform=on"
    args = []
    for i, d in enumerate(devices):
        slot = PCI_FIRST_SLOT + i
        backend = f"pci{slot}"
        if d.model == "virtio-blk":
            args += ["-drive", f"if=none,id={backend},format=raw,file={_opt(d.disk)}",
                     "-device", f"virtio-blk-pci,drive={backend},addr={slot}.0{virtio}"]
        elif d.model == "virtio-net":
            args += ["-netdev", f"user,id={backend},restrict=on",
                     "-device", f"virtio-net-pci,netdev={backend},addr={slot}.0{virtio}"]
        else:
            args += ["-device", f"{d.model},addr={slot}.0{PCI_MODEL_OPTIONS.get(d.model, '')}"]
    return args


def loader_args(path, addr):
    """Put the raw bytes of `path` at board address `addr` before the CPUs start."""
    return ["-device", f"loader,file={_opt(path)},addr=0x{addr:x},force-raw=on"]


def system_has_iommu(arch):
    """Whether system_command's board for `arch` has an IOMMU for the hypervisor (arm64: the
    SMMUv3, SYSTEM_MACHINE_OPTIONS; QEMU 7.2's riscv virt has none): layout.VirtBoard.iommu."""
    return bool(VIRT_BOARDS[arch].iommu)


def system_command(board, hypervisor, loads, icount=None):
    """QEMU running the hypervisor on `board`'s (config.Board) architecture, entered at EL2 on
    arm64, in HS-mode under the firmware on riscv64; loads = [(path, board address), ...]."""
    if board.arch == RISCV64:
        args = riscv64_board_args(board.cpus, board.memory, icount, board.pci)
    else:
        args = board_args(board.cpu, board.cpus, board.memory, True, icount, board.pci,
                          machine_extra=SYSTEM_MACHINE_OPTIONS)
    args += ["-kernel", str(hypervisor)]
    for path, addr in loads:
        args += loader_args(path, addr)
    return args


def native_command(image, bootargs="", cpu=None, cpus=2, memory=2048 * MiB,
                   icount=None, pci=(), initrd=None, dtb=None, arch=ARM64, extra=()):
    """QEMU booting `image` directly on `arch`'s board (arm64: at EL1; riscv64: in S-mode
    under the firmware), with QEMU's own device tree or `dtb` (and `initrd`); `extra` are
    further QEMU options, as given (a device model [board] pci has not, such as ivshmem)."""
    cpu = cpu or DEFAULT_CPU[arch]
    if arch == RISCV64:
        args = riscv64_board_args(cpus, memory, icount, pci, cpu)
    else:
        args = board_args(cpu, cpus, memory, False, icount, pci)
    args += ["-kernel", str(image)]
    if initrd:
        args += ["-initrd", str(initrd)]
    if dtb:
        args += ["-dtb", str(dtb)]
    if bootargs:
        args += ["-append", bootargs]
    return args + list(extra)


# Instruction traces (tern bench's rt-path scenario): every instruction at 0x4000_0000 and
# above, where the hypervisor and the partitions' images run (Linux's kernel runs at its own
# high addresses, its user space low: neither is logged), one instruction per block so each
# shows, with exception entries and returns.
TRACE_ITEMS = "exec,nochain,int"
TRACE_RANGE = "0x40000000+0x40000000"


def trace_args(log_path, from_boot=True, monitor=None):
    """QEMU options writing an instruction trace to log_path: from the board's reset, or
    (from_boot=False) once trace_on() is sent through the UNIX socket `monitor`."""
    args = ["-D", str(log_path), "-dfilter", TRACE_RANGE]
    if from_boot:
        args += ["-singlestep", "-d", TRACE_ITEMS]
    if monitor:
        args += ["-monitor", f"unix:{monitor},server=on,wait=off"]
    return args


def trace_on(monitor):
    hmp(monitor, "singlestep on", f"log {TRACE_ITEMS}")


def trace_off(monitor):
    hmp(monitor, "log none", "singlestep off")


def hmp(path, *commands, timeout=10.0):
    """Type `commands` at the QEMU human monitor listening on UNIX socket `path`; returns
    what it answered. Each command has run when its prompt comes back."""
    deadline = time.monotonic() + timeout
    replies = []
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(timeout)
            s.connect(str(path))
            _until_prompt(s, deadline)
            for command in commands:
                s.sendall(command.encode() + b"\n")
                replies.append(_until_prompt(s, deadline))
    except OSError as e:
        raise ToolError(f"QEMU monitor at {path}: {e}") from e
    return replies


def _until_prompt(s, deadline):
    got = b""
    while not got.endswith(b"(qemu) "):
        if time.monotonic() > deadline:
            raise ToolError(f"QEMU monitor: no prompt (got {got[-200:]!r})")
        chunk = s.recv(4096)
        if not chunk:
            raise ToolError("QEMU monitor closed the connection")
        got += chunk
    return got.decode("utf-8", "replace")

"""QEMU command lines for the board, with and without the hypervisor."""

import shutil

from .errors import ToolError

QEMU = "qemu-system-aarch64"
MiB = 1 << 20


def require_qemu():
    """Fail early, with a hint, when QEMU is not installed."""
    if not shutil.which(QEMU):
        raise ToolError(f"{QEMU} not found (install the qemu-system-arm package)")


def _opt(value):
    """A value inside a QEMU -opt list, where ',' must be doubled."""
    return str(value).replace(",", ",,")


def board_args(cpu, cpus, memory, virtualization=True, icount=None):
    """The machine: QEMU virt with GICv3.

    virtualization=True gives the CPUs EL2 and makes QEMU enter -kernel there
    (the hypervisor's case); False enters at EL1, as a partition's guest does.
    """
    machine = "virt,gic-version=3"
    if virtualization:
        machine = "virt,virtualization=on,gic-version=3"
    args = [QEMU, "-M", machine, "-cpu", cpu, "-smp", str(cpus),
            "-m", f"{memory // MiB}M", "-display", "none", "-monitor", "none",
            "-serial", "stdio", "-no-reboot"]
    if icount is not None:
        # align/sleep off: virtual time runs only with instructions, so results
        # do not depend on how busy the host is.
        args += ["-icount", f"shift={int(icount)},align=off,sleep=off"]
    return args


def loader_args(path, addr):
    """Put the raw bytes of `path` at board address `addr` before the CPUs start."""
    return ["-device", f"loader,file={_opt(path)},addr=0x{addr:x},force-raw=on"]


def system_command(board, hypervisor, loads, icount=None):
    """QEMU running the hypervisor; loads = [(path, board address), ...]."""
    args = board_args(board.cpu, board.cpus, board.memory, True, icount)
    args += ["-kernel", str(hypervisor)]
    for path, addr in loads:
        args += loader_args(path, addr)
    return args


def native_command(image, bootargs="", cpu="cortex-a53", cpus=2, memory=2048 * MiB,
                   icount=None):
    """QEMU booting `image` directly, at EL1, with QEMU's own device tree."""
    args = board_args(cpu, cpus, memory, False, icount)
    args += ["-kernel", str(image)]
    if bootargs:
        args += ["-append", bootargs]
    return args

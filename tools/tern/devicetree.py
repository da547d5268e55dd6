"""A partition's device tree: exactly what the partition can see, at the board's
own addresses, so a guest written for QEMU virt needs no changes.

`partition_dts()` writes DTS text; `compile_dts()` turns it into a DTB with dtc.
"""

import shutil
import subprocess
from pathlib import Path

from . import layout
from .errors import ToolError, show_path
from .files import NewFile, write_new

CPU_COMPATIBLE = {
    "cortex-a53": "arm,cortex-a53",
    "cortex-a57": "arm,cortex-a57",
    # QEMU's "max" is no real core; the generic binding says "an Armv8 CPU".
    "max": "arm,armv8",
}

GIC_PHANDLE = 1
RNG_SEED_BYTES = 32               # what QEMU's virt board puts in its own /chosen/rng-seed
CLOCK_PHANDLE = 2
UART_CLOCK_HZ = 24_000_000

# Generic timer PPIs as (type, number, flags): secure phys 29, non-secure
# phys 30, virtual 27, hypervisor 26, in the order the binding requires.
TIMER_PPIS = ((1, 13, 4), (1, 14, 4), (1, 11, 4), (1, 10, 4))

# GIC interrupt specifier cells.
GIC_SPI = 0
IRQ_LEVEL_HIGH = 4

# PCI bus addresses (3 cells: phys.hi, phys.mid, phys.lo) as the PCI bus binding spells them.
PCI_SPACE_IO = 0x0100_0000        # phys.hi space code 01: I/O
PCI_SPACE_MEM32 = 0x0200_0000     # phys.hi space code 10: 32-bit memory
PCI_DEVICE_SHIFT = 11             # phys.hi bits 15:11: device (slot) number
PCI_INTX_PINS = 4                 # INTA..INTD = 1..4
# Like QEMU's tree: interrupt-map lists slots 0-3, matched on the slot's low two bits
# (mask 0x1800) and the pin; slot s pin p raises INTx line (s + p - 1) % 4.
PCI_INTX_SLOTS = 4
PCI_INTX_MAP_MASK = (0x1800, 0, 0, 7)


def _cells(*values):
    return "<" + " ".join(f"0x{v:x}" for v in values) + ">"


def _u64(value):
    """A 64-bit property value: two cells."""
    return _cells(value >> 32, value & 0xFFFF_FFFF)


def _reg(base, size):
    """A reg entry with #address-cells = #size-cells = 2."""
    return _cells(base >> 32, base & 0xFFFF_FFFF, size >> 32, size & 0xFFFF_FFFF)


def _string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def partition_dts(name, num_vcpus, cpu_model, ram_ipa, ram_size, bootargs="", devices=(),
                  initrd=None, rng_seed=None):
    """DTS source for a partition with `num_vcpus` vCPUs and RAM at `ram_ipa`.

    devices: names of layout.BOARD_DEVICES the partition owns; each gets its node,
    at the board's addresses, after the emulated ones.  initrd: (IPA, size) of an
    initial ramdisk, named in /chosen as Linux expects.  rng_seed: bytes for
    /chosen/rng-seed, as QEMU gives the bare board (random bytes for its guest's
    random number generator).
    """
    uart = f"pl011@{layout.UART_BASE:x}"
    gicr_size = layout.GICR_STRIDE * num_vcpus
    lines = [
        "/dts-v1/;",
        "",
        f"/* Tern partition \"{name}\": {num_vcpus} vCPU(s), RAM 0x{ram_ipa:x}+0x{ram_size:x} */",
        "/ {",
        '\tcompatible = "linux,dummy-virt";',
        f'\tmodel = {_string("Tern partition " + name)};',
        "\t#address-cells = <2>;",
        "\t#size-cells = <2>;",
        f"\tinterrupt-parent = <{GIC_PHANDLE}>;",
        "",
        "\tchosen {",
        f'\t\tstdout-path = "/{uart}";',
        f"\t\tbootargs = {_string(bootargs)};",
    ] + ([f"\t\tlinux,initrd-start = {_u64(initrd[0])};",
          f"\t\tlinux,initrd-end = {_u64(initrd[0] + initrd[1])};"] if initrd else []) + (
        [f"\t\trng-seed = [{bytes(rng_seed).hex(' ')}];"] if rng_seed else []) + [
        "\t};",
        "",
        "\tcpus {",
        "\t\t#address-cells = <1>;",
        "\t\t#size-cells = <0>;",
    ]
    for i in range(num_vcpus):
        lines += [
            "",
            f"\t\tcpu@{i} {{",
            '\t\t\tdevice_type = "cpu";',
            f'\t\t\tcompatible = "{CPU_COMPATIBLE[cpu_model]}";',
            f"\t\t\treg = <{i}>;",
            '\t\t\tenable-method = "psci";',
            "\t\t};",
        ]
    lines += [
        "\t};",
        "",
        f"\tmemory@{ram_ipa:x} {{",
        '\t\tdevice_type = "memory";',
        f"\t\treg = {_reg(ram_ipa, ram_size)};",
        "\t};",
        "",
        "\tpsci {",
        '\t\tcompatible = "arm,psci-1.0", "arm,psci-0.2";',
        '\t\tmethod = "smc";',
        "\t};",
        "",
        f"\tintc@{layout.GICD_BASE:x} {{",
        '\t\tcompatible = "arm,gic-v3";',
        "\t\t#interrupt-cells = <3>;",
        "\t\t#address-cells = <0>;         /* no children: no ITS */",
        "\t\tinterrupt-controller;",
        f"\t\treg = {_reg(layout.GICD_BASE, layout.GICD_SIZE)},",
        f"\t\t      {_reg(layout.GICR_BASE, gicr_size)};",
        f"\t\tphandle = <{GIC_PHANDLE}>;",
        "\t};",
        "",
        "\ttimer {",
        '\t\tcompatible = "arm,armv8-timer";',
        "\t\tinterrupts = " + ", ".join(_cells(*ppi) for ppi in TIMER_PPIS) + ";",
        "\t\talways-on;",
        "\t};",
        "",
        "\tapb-pclk {",
        '\t\tcompatible = "fixed-clock";',
        "\t\t#clock-cells = <0>;",
        f"\t\tclock-frequency = <{UART_CLOCK_HZ}>;",
        '\t\tclock-output-names = "clk24mhz";',
        f"\t\tphandle = <{CLOCK_PHANDLE}>;",
        "\t};",
        "",
        f"\t{uart} {{",
        '\t\tcompatible = "arm,pl011", "arm,primecell";',
        f"\t\treg = {_reg(layout.UART_BASE, layout.UART_SIZE)};",
        f"\t\tinterrupts = {_cells(0, layout.UART_SPI, 4)};",
        f"\t\tclocks = <{CLOCK_PHANDLE}>, <{CLOCK_PHANDLE}>;",
        '\t\tclock-names = "uartclk", "apb_pclk";',
        "\t};",
    ]
    for device_name in devices:
        device = layout.BOARD_DEVICES[device_name]
        lines += [""] + DEVICE_NODES[device.kind](device)
    lines += [
        "};",
        "",
    ]
    return "\n".join(lines)


def _pci_address(space, address):
    return (space, address >> 32, address & 0xFFFF_FFFF)


def pci_host_ecam_node(device):
    """QEMU virt's generic ECAM host bridge, as QEMU describes it, minus MSI.

    Tern's virtual GIC has no ITS, so there is no msi-map: devices use INTx.
    The interrupt-map's parent is the partition's GIC, which has
    #address-cells = <0>, so entries carry no parent unit address (QEMU's have 2).
    """
    ecam = device.region("ecam")
    pio = device.region("io")
    mmio = device.region("mmio")
    last_bus = ecam.size // layout.PCIE_ECAM_BUS_SIZE - 1
    # (PCI address, CPU address, size): I/O from PCI address 0, memory 1:1.
    windows = ((_pci_address(PCI_SPACE_IO, 0), pio.base, pio.size),
               (_pci_address(PCI_SPACE_MEM32, mmio.base), mmio.base, mmio.size))
    ranges = [_cells(*pci, cpu >> 32, cpu & 0xFFFF_FFFF, size >> 32, size & 0xFFFF_FFFF)
              for pci, cpu, size in windows]
    interrupt_map = []
    for slot in range(PCI_INTX_SLOTS):
        for pin in range(1, PCI_INTX_PINS + 1):
            spi = device.spis[(slot + pin - 1) % len(device.spis)]
            interrupt_map.append(_cells(slot << PCI_DEVICE_SHIFT, 0, 0, pin, GIC_PHANDLE,
                                        GIC_SPI, spi, IRQ_LEVEL_HIGH))
    indent = "\t\t" + " " * len("interrupt-map = ")
    return [
        f"\tpcie@{mmio.base:x} {{",
        f'\t\tcompatible = "{device.kind}";',
        '\t\tdevice_type = "pci";',
        "\t\t#address-cells = <3>;",
        "\t\t#size-cells = <2>;",
        "\t\t#interrupt-cells = <1>;",
        f"\t\tbus-range = {_cells(0, last_bus)};",
        "\t\tlinux,pci-domain = <0>;",
        "\t\tdma-coherent;",
        f"\t\treg = {_reg(ecam.base, ecam.size)};",
        "\t\tranges = " + (",\n\t\t         ").join(ranges) + ";",
        f"\t\tinterrupt-map-mask = {_cells(*PCI_INTX_MAP_MASK)};",
        "\t\tinterrupt-map = " + (",\n" + indent).join(interrupt_map) + ";",
        "\t};",
    ]


# How each kind of layout.BoardDevice is described: kind -> lines of its node.
DEVICE_NODES = {
    "pci-host-ecam-generic": pci_host_ecam_node,
}


def dtc_path():
    path = shutil.which("dtc")
    if not path:
        raise ToolError("dtc not found (install the device-tree-compiler package)")
    return path


def compile_dts(source, dtb_path):
    """Write `source` next to `dtb_path` as .dts, compile it, return the DTB bytes.

    Both files appear only once complete (files.NewFile: dtc writes a temporary one)."""
    dtb_path = Path(dtb_path)
    dts_path = dtb_path.with_suffix(".dts")
    write_new(dts_path, source)
    with NewFile(dtb_path) as out:
        proc = subprocess.run([dtc_path(), "-q", "-I", "dts", "-O", "dtb", "-o",
                               f"/dev/fd/{out.fileno()}", str(dts_path)],
                              capture_output=True, text=True, pass_fds=(out.fileno(),))
        if proc.returncode != 0:
            first = (proc.stderr.strip().splitlines() or ["no message"])[0]
            raise ToolError(f"dtc failed on {show_path(dts_path)}: {first}")
    return dtb_path.read_bytes()

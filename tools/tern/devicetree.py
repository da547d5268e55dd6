"""A partition's device tree: exactly what the partition can see, at the board's
own addresses, so a guest written for QEMU virt needs no changes.

`partition_dts()` (arm64) and `riscv64_partition_dts()` write DTS text,
`system_partition_dts()` the one a partition of a system gets; `compile_dts()` turns
it into a DTB with dtc.
"""

import shutil
import subprocess
from pathlib import Path

from . import abi, layout
from .errors import ToolError, show_path
from .files import NewFile, write_new
from .image import RISCV64

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

# Interrupt specifier cells: the GIC's type, and the trigger both controllers' bindings share.
GIC_SPI = 0
IRQ_EDGE_RISING = 1
IRQ_LEVEL_HIGH = 4

# PCI bus addresses (3 cells: phys.hi, phys.mid, phys.lo) as the PCI bus binding spells them.
PCI_SPACE_IO = 0x0100_0000        # phys.hi space code 01: I/O
PCI_SPACE_MEM32 = 0x0200_0000     # phys.hi space code 10: 32-bit memory
PCI_SPACE_MEM64 = 0x0300_0000     # phys.hi space code 11: 64-bit memory
PCI_DEVICE_SHIFT = 11             # phys.hi bits 15:11: device (slot) number
PCI_INTX_PINS = 4                 # INTA..INTD = 1..4
# Like QEMU's tree: interrupt-map lists slots 0-3, matched on the slot's low two bits
# (mask 0x1800) and the pin; slot s pin p raises INTx line (s + p - 1) % 4.
PCI_INTX_SLOTS = 4
PCI_INTX_MAP_MASK = (0x1800, 0, 0, 7)
PCI_INTA = 1
IVSHMEM_INTX_MAP_MASK = (0xF800, 0, 0, 7)   # the whole device number, and the pin


# riscv64.  A partition's harts are the board's (qemu.RISCV64_CPU), as QEMU 7.2's own tree
# describes them (its riscv,isa is "rv64imafdch_zicsr_..._zbs_smaia_ssaia_sstc"), seen from
# VS-mode: no H (no nested virtualisation) and no M-level AIA (smaia).  Sstc and the S-level
# AIA (ssaia: the vCPU's own interrupt file, its stopei) only with irq = "direct": a "trap"
# partition has neither enabled (its stimecmp and IMSIC accesses would fault) and uses the
# SBI's timer and IPIs.
RISCV_ISA = "rv64imafdc_zicsr_zifencei_zihintpause_zba_zbb_zbc_zbs"
RISCV_ISA_DIRECT = "_ssaia_sstc"
RISCV_MMU_TYPE = "riscv,sv39"
RISCV_UART_CLOCK_HZ = 3_686_400   # the ns16550a's clock on QEMU's riscv virt
RISCV_IRQ_S_EXTERNAL = 9          # the local interrupt an S-level interrupt file raises
RISCV_IMSIC_NUM_IDS = 255         # the board's: identities 1-255 in each file
RISCV_INTC_PHANDLE_BASE = 1       # vCPU i's riscv,cpu-intc (label cpuI_intc): phandle 1 + i
RISCV_IMSIC_PHANDLE = RISCV_INTC_PHANDLE_BASE + abi.MAX_VCPUS
RISCV_APLIC_PHANDLE = RISCV_IMSIC_PHANDLE + 1


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


def _preamble(name, num_vcpus, ram_ipa, ram_size):
    """The DTS header and the root node's opening line."""
    return [
        "/dts-v1/;",
        "",
        f"/* Tern partition \"{name}\": {num_vcpus} vCPU(s), RAM 0x{ram_ipa:x}+0x{ram_size:x} */",
        "/ {",
    ]


def _chosen(stdout_path, bootargs, initrd, rng_seed, pci_probe_only=False):
    """/chosen: the console, the command line, the initrd and the random seed, if any.

    pci_probe_only: Linux keeps the BARs it finds (the emulated ivshmem bridge's, fixed by the
    hypervisor) instead of assigning its own."""
    return [
        "",
        "\tchosen {",
        f"\t\tstdout-path = {_string(stdout_path)};",
        f"\t\tbootargs = {_string(bootargs)};",
    ] + ([f"\t\tlinux,initrd-start = {_u64(initrd[0])};",
          f"\t\tlinux,initrd-end = {_u64(initrd[0] + initrd[1])};"] if initrd else []) + (
        [f"\t\trng-seed = [{bytes(rng_seed).hex(' ')}];"] if rng_seed else []) + (
        ["\t\tlinux,pci-probe-only = <1>;"] if pci_probe_only else []) + [
        "\t};",
    ]


def _memory(ram_ipa, ram_size):
    return [
        "",
        f"\tmemory@{ram_ipa:x} {{",
        '\t\tdevice_type = "memory";',
        f"\t\treg = {_reg(ram_ipa, ram_size)};",
        "\t};",
    ]


def channel_node(channel, k, interrupt):
    """The tern,channel node member `k` of `channel` (layout.ChannelPlacement) sees: its
    shared memory and doorbell page, who is who, and its doorbell as `interrupt` (the
    property line, in the board's own style), at the root (2 address and 2 size cells)."""
    member = channel.members[k]
    names = ", ".join(_string(m.name) for m in channel.members)
    return [
        f"\ttern-channel@{channel.ipa:x} {{",
        '\t\tcompatible = "tern,channel";',
        f"\t\treg = {_reg(channel.ipa, channel.size)},",
        f"\t\t      {_reg(channel.doorbell_ipa, layout.DOORBELL_PAGE)};",
        f"\t\ttern,name = {_string(channel.name)};",
        f"\t\ttern,member = <{k}>;",
        f"\t\ttern,members = {names};",
    ] + ([] if member.writable else ["\t\ttern,readonly;"]) + (
        [f"\t\ttern,virtio = {_string(channel.virtio)};"] if channel.virtio else []) + [
        f"\t\t{interrupt};",
        "\t};",
    ]


def _member_channels(name, channels):
    """[(channel, member index)] of the channels (layout.ChannelPlacement) partition `name`
    maps: not those of the VirtIO devices it is the frontend of."""
    return [(c, k) for c in channels for k, m in enumerate(c.members)
            if m.name == name and not m.frontend]


def virtio_mmio_node(v, indent, interrupt):
    """A [[virtio]] device (layout.VirtioPlacement) as its frontend sees it: the board's
    virtio-mmio transport at its slot, as QEMU's own tree has it, with `interrupt` (the
    property lines, in the board's style) and `indent` tabs."""
    tabs = "\t" * indent
    return [
        f"{tabs}virtio_mmio@{v.mmio_ipa:x} {{",
        f'{tabs}\tcompatible = "virtio,mmio";',
        f"{tabs}\treg = {_reg(v.mmio_ipa, v.mmio_size)};",
    ] + [f"{tabs}\t{line};" for line in interrupt] + [
        f"{tabs}}};",
    ]


def partition_dts(name, num_vcpus, cpu_model, ram_ipa, ram_size, bootargs="", devices=(),
                  initrd=None, rng_seed=None, channels=(), pci_functions=(), virtio=()):
    """DTS source for an arm64 partition with `num_vcpus` vCPUs and RAM at `ram_ipa`.

    devices: names of layout.QEMU_VIRT_ARM64.devices the partition owns; each gets its node,
    at the board's addresses, after the emulated ones.  initrd: (IPA, size) of an
    initial ramdisk, named in /chosen as Linux expects.  rng_seed: bytes for
    /chosen/rng-seed, as QEMU gives the bare board (random bytes for its guest's
    random number generator).  channels: layout.ChannelPlacement; a tern,channel node for each
    the partition `name` is a member of, its doorbell an edge-triggered SPI.  pci_functions:
    layout.PciFunction, the partition's channels as ivshmem functions on an emulated PCIe host
    bridge at the board's, each function's INTA its doorbell SPI, level-high.  virtio:
    layout.VirtioPlacement of the devices the partition is the frontend of, each a
    virtio_mmio node as QEMU's (edge-rising SPI, dma-coherent).
    """
    board = layout.QEMU_VIRT_ARM64
    uart = f"pl011@{board.uart.base:x}"
    gicr_size = board.gic.redist_stride * num_vcpus
    lines = _preamble(name, num_vcpus, ram_ipa, ram_size) + [
        '\tcompatible = "linux,dummy-virt";',
        f'\tmodel = {_string("Tern partition " + name)};',
        "\t#address-cells = <2>;",
        "\t#size-cells = <2>;",
        f"\tinterrupt-parent = <{GIC_PHANDLE}>;",
    ] + _chosen(f"/{uart}", bootargs, initrd, rng_seed, bool(pci_functions)) + [
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
    lines += ["\t};"] + _memory(ram_ipa, ram_size) + [
        "",
        "\tpsci {",
        '\t\tcompatible = "arm,psci-1.0", "arm,psci-0.2";',
        '\t\tmethod = "smc";',
        "\t};",
        "",
        f"\tintc@{board.gic.dist_base:x} {{",
        '\t\tcompatible = "arm,gic-v3";',
        "\t\t#interrupt-cells = <3>;",
        "\t\t#address-cells = <0>;         /* no children: no ITS */",
        "\t\tinterrupt-controller;",
        f"\t\treg = {_reg(board.gic.dist_base, board.gic.dist_size)},",
        f"\t\t      {_reg(board.gic.redist_base, gicr_size)};",
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
        f"\t\treg = {_reg(board.uart.base, board.uart.size)};",
        f"\t\tinterrupts = {_cells(0, board.uart.spi, 4)};",
        f"\t\tclocks = <{CLOCK_PHANDLE}>, <{CLOCK_PHANDLE}>;",
        '\t\tclock-names = "uartclk", "apb_pclk";',
        "\t};",
    ]
    for device_name in devices:
        device = board.devices[device_name]
        lines += [""] + DEVICE_NODES[device.kind](device)
    if pci_functions:
        lines += [""] + ivshmem_bridge_node(board.devices[layout.PCIE_DEVICE], False,
                                            _function_irqs(pci_functions, channels),
                                            _gic_spi_parent)
    for channel, k in _member_channels(name, channels):
        spi = channel.members[k].irq - layout.SPI_INTID_BASE
        lines += [""] + channel_node(channel, k, "interrupts = "
                                     + _cells(GIC_SPI, spi, IRQ_EDGE_RISING))
    for v in virtio:
        spi = v.irq - layout.SPI_INTID_BASE
        lines += [""] + virtio_mmio_node(v, 1, [
            "interrupts = " + _cells(GIC_SPI, spi, IRQ_EDGE_RISING), "dma-coherent"])
    lines += [
        "};",
        "",
    ]
    return "\n".join(lines)


def riscv64_partition_dts(name, num_vcpus, ram_ipa, ram_size, bootargs="", irq_direct=True,
                          initrd=None, rng_seed=None, devices=(), ram_hpa=None, channels=(),
                          pci_functions=(), virtio=()):
    """DTS source for a riscv64 partition: QEMU riscv virt's own tree, cut down to what the
    partition has (its harts, RAM, the ns16550, with irq_direct an IMSIC with one S-level
    file per vCPU, the devices it owns and, if they have wired interrupts, an APLIC), in
    QEMU's style.  No SBI node: the hypervisor is the partition's SBI.  initrd, rng_seed: as
    partition_dts.

    devices: names of layout.QEMU_VIRT_RISCV64.devices the partition owns.  ram_hpa: where its
    RAM is on the board (default: at ram_ipa), which is where a device's DMA must go to reach
    it, as nothing translates DMA on this board.  channels: as partition_dts; a doorbell is an
    edge-rising source of the partition's APLIC, which a member has for it.  pci_functions: as
    partition_dts, INTA the doorbell's APLIC source, level-high.  virtio: as partition_dts,
    each node under /soc as QEMU's, its APLIC source level-high.
    """
    board = layout.QEMU_VIRT_RISCV64
    soc = "/soc"
    uart = f"serial@{board.uart.base:x}"
    isa = RISCV_ISA + (RISCV_ISA_DIRECT if irq_direct else "")
    lines = _preamble(name, num_vcpus, ram_ipa, ram_size) + [
        "\t#address-cells = <2>;",
        "\t#size-cells = <2>;",
        '\tcompatible = "riscv-virtio";',
        '\tmodel = "riscv-virtio,qemu";',
    ] + _chosen(f"{soc}/{uart}", bootargs, initrd, rng_seed, bool(pci_functions)) + [
        "",
        "\tcpus {",
        "\t\t#address-cells = <1>;",
        "\t\t#size-cells = <0>;",
        f"\t\ttimebase-frequency = <{board.timer_hz}>;",
    ]
    for i in range(num_vcpus):
        lines += [
            "",
            f"\t\tcpu@{i} {{",
            '\t\t\tdevice_type = "cpu";',
            f"\t\t\treg = <{i}>;",
            '\t\t\tstatus = "okay";',
            '\t\t\tcompatible = "riscv";',
            f'\t\t\triscv,isa = "{isa}";',
            f'\t\t\tmmu-type = "{RISCV_MMU_TYPE}";',
            "",
            f"\t\t\t{_riscv_intc_label(i)}: interrupt-controller {{",
            "\t\t\t\t#interrupt-cells = <1>;",
            "\t\t\t\t#address-cells = <0>;",
            "\t\t\t\tinterrupt-controller;",
            '\t\t\t\tcompatible = "riscv,cpu-intc";',
            f"\t\t\t\tphandle = <{RISCV_INTC_PHANDLE_BASE + i}>;",
            "\t\t\t};",
            "\t\t};",
        ]
    lines += ["\t};"] + _memory(ram_ipa, ram_size) + [
        "",
        f"\t{soc[1:]} {{",
        "\t\t#address-cells = <2>;",
        "\t\t#size-cells = <2>;",
        '\t\tcompatible = "simple-bus";',
        "\t\tranges;",
        "",
        # No interrupts: partitions have no console input yet.
        f"\t\t{uart} {{",
        '\t\t\tcompatible = "ns16550a";',
        f"\t\t\treg = {_reg(board.uart.base, board.uart.size)};",
        f"\t\t\tclock-frequency = <{RISCV_UART_CLOCK_HZ}>;",
        "\t\t};",
    ]
    if irq_direct:
        lines += [""] + _riscv_imsic_node(num_vcpus)
    owned = [board.devices[d] for d in devices]
    member_of = _member_channels(name, channels)
    if member_of or virtio or any(device.aplic_sources for device in owned):
        lines += [""] + _riscv_aplic_node(num_vcpus, irq_direct)
    # Without an IMSIC (irq = "trap") a device has nowhere to send its MSIs: it uses INTx.
    msi_parent = RISCV_IMSIC_PHANDLE if irq_direct else None
    dma_window = (ram_ipa, ram_ipa if ram_hpa is None else ram_hpa, ram_size)
    for device in owned:
        lines += [""] + RISCV64_DEVICE_NODES[device.kind](device, msi_parent, dma_window)
    if pci_functions:
        lines += [""] + ivshmem_bridge_node(board.devices[layout.PCIE_DEVICE], True,
                                            _function_irqs(pci_functions, channels),
                                            _aplic_parent)
    for v in virtio:
        lines += [""] + virtio_mmio_node(v, 2, [
            "interrupts = " + _cells(v.irq, IRQ_LEVEL_HIGH),
            f"interrupt-parent = <{RISCV_APLIC_PHANDLE}>"])
    lines += ["\t};"]
    for channel, k in member_of:
        source = channel.members[k].irq
        lines += [""] + channel_node(channel, k, "interrupts-extended = "
                                     + _cells(RISCV_APLIC_PHANDLE, source, IRQ_EDGE_RISING))
    lines += [
        "};",
        "",
    ]
    return "\n".join(lines)


def _riscv_intc_label(vcpu):
    """The DTS label of vCPU `vcpu`'s local interrupt controller (riscv,cpu-intc)."""
    return f"cpu{vcpu}_intc"


def _riscv_s_external(num_vcpus):
    """interrupts-extended cells naming each vCPU's supervisor external interrupt."""
    return ", ".join(f"<&{_riscv_intc_label(i)} {RISCV_IRQ_S_EXTERNAL}>" for i in range(num_vcpus))


def _riscv_imsic_node(num_vcpus):
    """The IMSIC's S-level files, one per vCPU at the bare board's stride: vCPU i's file is
    where hart i's is on the board (the hypervisor backs it with a guest file of its core).

    riscv,guest-index-bits is the board's, so that a guest computes that stride; the files
    in between (guest files on the board) are not the partition's.
    """
    aia = layout.QEMU_VIRT_RISCV64.aia
    base = aia.imsic_s_base
    targets = _riscv_s_external(num_vcpus)
    return [
        f"\t\timsics@{base:x} {{",
        '\t\t\tcompatible = "qemu,imsics", "riscv,imsics";',
        f"\t\t\treg = {_reg(base, aia.imsic_stride * num_vcpus)};",
        f"\t\t\tinterrupts-extended = {targets};",
        f"\t\t\triscv,num-ids = <{RISCV_IMSIC_NUM_IDS}>;",
        f"\t\t\triscv,guest-index-bits = <{aia.imsic_guest_index_bits}>;",
        "\t\t\tinterrupt-controller;",
        "\t\t\t#interrupt-cells = <0>;",
        "\t\t\t#address-cells = <0>;",
        "\t\t\tmsi-controller;",
        f"\t\t\tphandle = <{RISCV_IMSIC_PHANDLE}>;",
        "\t\t};",
    ]


def _riscv_aplic_node(num_vcpus, msi_mode):
    """The partition's APLIC, at the board's supervisor-level domain: in MSI delivery mode
    into its IMSIC (trap-less partitions, as on the board), else in direct delivery mode with
    an interrupt delivery control per vCPU (QEMU's aia=aplic board), which the hypervisor
    emulates.  Its sources are the board's; those the partition does not own read as zero."""
    aia = layout.QEMU_VIRT_RISCV64.aia
    base = aia.aplic_base
    if msi_mode:
        parent = [f"\t\t\tmsi-parent = <{RISCV_IMSIC_PHANDLE}>;"]
    else:
        parent = [f"\t\t\tinterrupts-extended = {_riscv_s_external(num_vcpus)};"]
    return [
        f"\t\taplic@{base:x} {{",
        '\t\t\tcompatible = "riscv,aplic";',
        f"\t\t\treg = {_reg(base, aia.aplic_size)};",
    ] + parent + [
        f"\t\t\triscv,num-sources = <{aia.aplic_num_sources}>;",
        "\t\t\tinterrupt-controller;",
        "\t\t\t#interrupt-cells = <2>;",
        "\t\t\t#address-cells = <0>;",
        f"\t\t\tphandle = <{RISCV_APLIC_PHANDLE}>;",
        "\t\t};",
    ]


def system_partition_dts(board, p, placed, rng_seed=None, channels=(), virtio=()):
    """The device tree source of partition `p` (config.Partition) of a system on `board`
    (config.Board), laid out as `placed` (layout.PartitionPlacement); channels: the system's
    (layout.Layout.channels), of which those `p` maps get a node; virtio: the system's
    (layout.Layout.virtio), of which those `p` is the frontend of get a virtio_mmio node."""
    initrd = (placed.initrd_ipa, placed.initrd_size) if placed.initrd_size else None
    mine = tuple(v for v in virtio if v.frontend == p.index)
    if board.arch == RISCV64:
        return riscv64_partition_dts(p.name, len(p.cpus), placed.ram_ipa, placed.ram_size,
                                     p.bootargs, p.irq_direct, initrd, rng_seed, p.devices,
                                     placed.ram_hpa, channels, placed.pci_functions, mine)
    return partition_dts(p.name, len(p.cpus), board.cpu, placed.ram_ipa, placed.ram_size,
                         p.bootargs, p.devices, initrd, rng_seed, channels,
                         placed.pci_functions, mine)


def _pci_address(space, address):
    return (space, address >> 32, address & 0xFFFF_FFFF)


def _pci_range(pci, cpu, size):
    """One ranges (or dma-ranges) entry of a PCI host bridge under a parent with 2 address and
    2 size cells: PCI address (3 cells), CPU address, size."""
    return _cells(*pci, cpu >> 32, cpu & 0xFFFF_FFFF, size >> 32, size & 0xFFFF_FFFF)


def _pci_windows(device):
    """The host bridge's ranges entries: its I/O window from PCI address 0, its 32-bit memory
    window at the same PCI and CPU addresses, as QEMU's virt boards both map them."""
    pio = device.region("io")
    mmio = device.region("mmio")
    return [_pci_range(_pci_address(PCI_SPACE_IO, 0), pio.base, pio.size),
            _pci_range(_pci_address(PCI_SPACE_MEM32, mmio.base), mmio.base, mmio.size)]


def _pci_last_bus(device):
    return device.region("ecam").size // layout.PCIE_ECAM_BUS_SIZE - 1


def _pci_host_node(device, in_soc, last_bus, reg_size, ranges, interrupt_map, mask,
                   before_reg=(), after_ranges=()):
    """A generic ECAM host bridge node named as QEMU's tree names the board's: arm64's at the
    root after its memory window, riscv64's under /soc (in_soc) after its ECAM.  ranges,
    interrupt_map: the entries' cells; before_reg, after_ranges: more properties, where QEMU
    puts them."""
    ecam = device.region("ecam")
    if in_soc:
        indent, unit = "\t\t", f"pci@{ecam.base:x}"
    else:
        indent, unit = "\t", f"pcie@{device.region('mmio').base:x}"
    inner = indent + "\t"
    range_indent = inner + " " * len("ranges = ")
    map_indent = inner + " " * len("interrupt-map = ")
    return [
        f"{indent}{unit} {{",
        f'{inner}compatible = "{device.kind}";',
        f'{inner}device_type = "pci";',
        f"{inner}#address-cells = <3>;",
        f"{inner}#size-cells = <2>;",
        f"{inner}#interrupt-cells = <1>;",
        f"{inner}bus-range = {_cells(0, last_bus)};",
        f"{inner}linux,pci-domain = <0>;",
        f"{inner}dma-coherent;",
    ] + [inner + line for line in before_reg] + [
        f"{inner}reg = {_reg(ecam.base, reg_size)};",
        f"{inner}ranges = " + (",\n" + range_indent).join(ranges) + ";",
    ] + [inner + line for line in after_ranges] + [
        f"{inner}interrupt-map-mask = {_cells(*mask)};",
        f"{inner}interrupt-map = " + (",\n" + map_indent).join(interrupt_map) + ";",
        f"{indent}}};",
    ]


def pci_host_ecam_node(device):
    """QEMU virt's generic ECAM host bridge, as QEMU describes it, minus MSI.

    Tern's virtual GIC has no ITS, so there is no msi-map: devices use INTx.
    The interrupt-map's parent is the partition's GIC, which has
    #address-cells = <0>, so entries carry no parent unit address (QEMU's have 2).
    """
    interrupt_map = []
    for slot in range(PCI_INTX_SLOTS):
        for pin in range(1, PCI_INTX_PINS + 1):
            spi = device.spis[(slot + pin - 1) % len(device.spis)]
            interrupt_map.append(_cells(slot << PCI_DEVICE_SHIFT, 0, 0, pin, GIC_PHANDLE,
                                        GIC_SPI, spi, IRQ_LEVEL_HIGH))
    return _pci_host_node(device, False, _pci_last_bus(device), device.region("ecam").size,
                          _pci_windows(device), interrupt_map, PCI_INTX_MAP_MASK)


def _function_irqs(pci_functions, channels):
    """[(device number, its doorbell interrupt)] of a member's ivshmem functions."""
    return [(f.device, channels[f.channel].members[f.member].irq) for f in pci_functions]


def _gic_spi_parent(intid):
    """An interrupt-map entry's parent and its cells before the trigger: a GIC SPI."""
    return (GIC_PHANDLE, GIC_SPI, intid - layout.SPI_INTID_BASE)


def _aplic_parent(source):
    """Likewise: a source of the partition's APLIC (trap-less or not, as channel_node's)."""
    return (RISCV_APLIC_PHANDLE, source)


def ivshmem_bridge_node(device, in_soc, functions, doorbell):
    """The PCIe host bridge the hypervisor emulates for a channel member at the board's
    `device` addresses: bus 0 (one bus of ECAM), the 32-bit memory window alone (the BARs are
    there; no I/O window), and INTA of each ivshmem function its doorbell, level-high.

    in_soc: as _pci_host_node.  functions: [(device number, doorbell irq)]; doorbell(irq): the
    interrupt-map parent's
    phandle and specifier cells before the trigger.  The mask keeps every bit of the device
    number: with up to 8 functions (devices 1-8), QEMU's two-bit slot mask would make device 5
    match device 1's entry.
    """
    mmio = device.region("mmio")
    ranges = [_pci_range(_pci_address(PCI_SPACE_MEM32, mmio.base), mmio.base, mmio.size)]
    interrupt_map = [_cells(number << PCI_DEVICE_SHIFT, 0, 0, PCI_INTA, *doorbell(irq),
                            IRQ_LEVEL_HIGH) for number, irq in functions]
    return _pci_host_node(device, in_soc, 0, layout.PCIE_ECAM_BUS_SIZE, ranges, interrupt_map,
                          IVSHMEM_INTX_MAP_MASK)


# How each kind of layout.BoardDevice is described: kind -> lines of its node.
DEVICE_NODES = {
    "pci-host-ecam-generic": pci_host_ecam_node,
}


def riscv64_pci_host_ecam_node(device, msi_parent, dma_window):
    """QEMU riscv virt's generic ECAM host bridge under /soc, as QEMU describes it with the
    AIA's IMSIC, minus the 64-bit window.

    The interrupt-map sends INTx to the partition's APLIC (the board's sources, swizzled per
    slot as QEMU does).  msi-parent (a phandle, or None for no IMSIC) is the partition's
    IMSIC: a device's MSIs go to the S-level file of a vCPU, which the hypervisor backs with a
    guest interrupt file.
    dma_window: (RAM IPA, RAM board address, size).  Nothing translates this board's DMA, so
    a device reaches the partition's RAM at its board address; dma-ranges says so, and a guest
    that reads it (Linux does) gives devices those addresses.  QEMU's own tree, where RAM is
    where the CPU sees it, has none.
    """
    ram_ipa, ram_hpa, ram_size = dma_window
    space = PCI_SPACE_MEM32 if ram_hpa + ram_size <= 1 << 32 else PCI_SPACE_MEM64
    sources = device.aplic_sources
    interrupt_map = [_cells(slot << PCI_DEVICE_SHIFT, 0, 0, pin, RISCV_APLIC_PHANDLE,
                            sources[(slot + pin - 1) % len(sources)], IRQ_LEVEL_HIGH)
                     for slot in range(PCI_INTX_SLOTS) for pin in range(1, PCI_INTX_PINS + 1)]
    msi = [f"msi-parent = <{msi_parent}>;"] if msi_parent is not None else []
    dma = [f"dma-ranges = {_pci_range(_pci_address(space, ram_hpa), ram_ipa, ram_size)};"]
    return _pci_host_node(device, True, _pci_last_bus(device), device.region("ecam").size,
                          _pci_windows(device), interrupt_map, PCI_INTX_MAP_MASK,
                          before_reg=msi, after_ranges=dma)


RISCV64_DEVICE_NODES = {
    "pci-host-ecam-generic": riscv64_pci_host_ecam_node,
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

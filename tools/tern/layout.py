"""Board addresses of QEMU virt and where each part of a system goes.

Mirrors hypervisor/platform/qemu-virt/board.c (tests/tool checks the two
agree).  `place(system)` decides every host-physical (HPA) and guest-physical
(IPA) address, or raises ConfigError when something does not fit.
"""

from dataclasses import dataclass

from . import abi
from .errors import ConfigError
from .units import MiB, format_duration, format_size

# The board (host physical addresses).
GICD_BASE = 0x0800_0000
GICD_SIZE = 0x1_0000
GICR_BASE = 0x080A_0000
GICR_STRIDE = 0x2_0000
UART_BASE = 0x0900_0000
UART_SIZE = 0x1000
UART_SPI = 1                      # INTID 33
SPI_INTID_BASE = 32               # INTID of SPI 0
RAM_BASE = 0x4000_0000
# Tern runs QEMU virt with highmem=off (no device or RAM above 4 GiB, the PCIe ECAM at
# 0x3f00_0000), so board RAM ends at 4 GiB at most: 3 GiB from RAM_BASE.
RAM_LIMIT = 0x1_0000_0000

# QEMU virt's PCIe host bridge (generic ECAM) with highmem=off.  QEMU's own device tree
# names it pcie@10000000; bus numbers follow from the ECAM size, 1 MiB per bus.
PCIE_MMIO_BASE = 0x1000_0000      # 32-bit memory window, PCI address == CPU address
PCIE_MMIO_SIZE = 0x2EFF_0000
PCIE_PIO_BASE = 0x3EFF_0000       # I/O window, PCI I/O addresses from 0
PCIE_PIO_SIZE = 0x1_0000
PCIE_ECAM_BASE = 0x3F00_0000
PCIE_ECAM_SIZE = 0x100_0000
PCIE_ECAM_BUS_SIZE = 1 * MiB      # 32 devices x 8 functions x 4 KiB
PCIE_INTX_SPIS = (3, 4, 5, 6)     # INTA..INTD of slot 0 (INTIDs 35-38); swizzled per slot


@dataclass(frozen=True)
class DeviceRegion:
    """One MMIO range of a board device, at its board address."""

    name: str                     # "ecam": names the range in `tern check` and the DT code
    base: int
    size: int


@dataclass(frozen=True)
class BoardDevice:
    """A board device a partition can own: its MMIO ranges and its interrupts."""

    name: str                     # what [[partition]] devices = [...] lists
    kind: str                     # which device tree node describes it (devicetree.py)
    regions: tuple                # DeviceRegion, by address
    spis: tuple                   # SPI numbers (INTID = 32 + SPI)

    @property
    def intids(self):
        return tuple(SPI_INTID_BASE + spi for spi in self.spis)

    def region(self, name):
        for r in self.regions:
            if r.name == name:
                return r
        raise KeyError(name)


# What a partition may own, by name.  A device is mapped at its board addresses
# (IPA == HPA) as device memory, and its SPIs go to that partition alone.
BOARD_DEVICES = {d.name: d for d in (
    BoardDevice("pcie", "pci-host-ecam-generic",
                regions=(DeviceRegion("mmio", PCIE_MMIO_BASE, PCIE_MMIO_SIZE),
                         DeviceRegion("io", PCIE_PIO_BASE, PCIE_PIO_SIZE),
                         DeviceRegion("ecam", PCIE_ECAM_BASE, PCIE_ECAM_SIZE)),
                spis=PCIE_INTX_SPIS),
)}

HYP_BASE = 0x4000_0000
HYP_SIZE = 64 * MiB
HYP_IMAGE_HPA = 0x4008_0000       # where QEMU's -kernel puts an Image with text_offset 0x80000
CONFIG_HPA = 0x43F0_0000
CONFIG_MAX = 1 * MiB
PARTITION_RAM_START = HYP_BASE + HYP_SIZE

# Every partition sees its RAM at the board's RAM base, so unmodified images boot.
PARTITION_RAM_IPA = RAM_BASE

BLOCK = 2 * MiB                   # stage-2 block size: the unit of partition RAM
DTB_AREA = 2 * MiB                # the device tree gets the last 2 MiB of RAM ...
DTB_WINDOW = 512 * MiB            # ... within the first 512 MiB (arm64 boot protocol)

# With -kernel, QEMU writes its own device tree for the hypervisor into RAM at
# RAM base + min(RAM / 2, 128 MiB), as a 1 MiB ROM region.  QEMU refuses to
# start if a -device loader region overlaps it, and a partition whose RAM held
# it would not start from zeroed memory, so that 2 MiB block is left unused.
QEMU_DTB_MAX_OFFSET = 128 * MiB


def align_up(value, alignment):
    return -(-value // alignment) * alignment


def align_down(value, alignment):
    return value // alignment * alignment


def dtb_ipa(ram_ipa, ram_size):
    """IPA of a partition's device tree: the last 2 MiB of RAM, capped at 512 MiB."""
    return ram_ipa + min(ram_size, DTB_WINDOW) - DTB_AREA


def qemu_dtb_block(board_memory):
    """The 2 MiB block holding QEMU's own device tree, as (start, end)."""
    start = align_down(RAM_BASE + min(board_memory // 2, QEMU_DTB_MAX_OFFSET), BLOCK)
    return start, start + BLOCK


@dataclass(frozen=True)
class RegionPlacement:
    """A device's MMIO range as one partition sees it (device memory, passed through)."""

    name: str                     # "pcie ecam"
    ipa: int
    hpa: int
    size: int


@dataclass(frozen=True)
class PartitionPlacement:
    """Every address tern decides for one partition."""

    name: str
    ram_ipa: int
    ram_hpa: int
    ram_size: int
    image_ipa: int
    image_size: int
    entry_ipa: int
    dtb_ipa: int
    dtb_area: int                 # bytes reserved for the device tree at dtb_ipa
    pristine_image_hpa: int
    pristine_dtb_hpa: int
    regions: tuple = ()           # RegionPlacement: devices' MMIO passed through
    intids: tuple = ()            # devices' SPIs, as INTIDs
    initrd_ipa: int = 0
    initrd_size: int = 0          # 0: no initrd
    pristine_initrd_hpa: int = 0

    def hpa(self, ipa):
        """Board address of a guest-physical address inside this partition's RAM."""
        return ipa - self.ram_ipa + self.ram_hpa

    @property
    def image_hpa(self):
        return self.hpa(self.image_ipa)

    @property
    def dtb_hpa(self):
        return self.hpa(self.dtb_ipa)

    @property
    def initrd_hpa(self):
        return self.hpa(self.initrd_ipa)


@dataclass(frozen=True)
class Layout:
    """The whole board: partitions in file order, plus what tern reserved."""

    board_memory: int
    partitions: tuple
    qemu_dtb: tuple               # (start, end) left unused, see QEMU_DTB_MAX_OFFSET
    end: int                      # first board address past everything placed

    @property
    def ram_end(self):
        return RAM_BASE + self.board_memory

    def by_name(self, name):
        for p in self.partitions:
            if p.name == name:
                return p
        raise KeyError(name)


class _Allocator:
    """Hands out 2 MiB aligned board ranges upwards, stepping over a hole."""

    def __init__(self, start, hole):
        self.next = start
        self.hole = hole

    def take(self, size):
        start = align_up(self.next, BLOCK)
        hole_start, hole_end = self.hole
        if start < hole_end and hole_start < start + size:
            start = hole_end
        self.next = start + align_up(size, BLOCK)
        return start


def place(system):
    """Lay out `system` (config.System) in board RAM; raises ConfigError."""
    board_memory = system.board.memory
    hole = qemu_dtb_block(board_memory)
    ram_end = RAM_BASE + board_memory
    alloc = _Allocator(PARTITION_RAM_START, hole)

    ram = []
    overflow = None               # key of the first thing that went past the end of RAM
    for p in system.partitions:
        ram_hpa = alloc.take(p.memory)
        if ram_hpa + p.memory > ram_end and overflow is None:
            overflow = f"{p.toml_key}.memory"
        ram.append(ram_hpa)

    placements = []
    for p, ram_hpa in zip(system.partitions, ram):
        ram_ipa = PARTITION_RAM_IPA
        image = p.image
        image_ipa = image.load_address(ram_ipa)
        image_size = image.mem_size
        entry_ipa = image.entry(ram_ipa)
        dtb = dtb_ipa(ram_ipa, p.memory)
        _check_image_fits(system, p, ram_ipa, image_ipa, image_size, entry_ipa, dtb)
        initrd_ipa = _initrd_ipa(system, p, image_ipa + image_size, dtb)
        pristine_image = alloc.take(image_size)
        if pristine_image + image_size > ram_end and overflow is None:
            overflow = f"{p.toml_key}.image"
        pristine_dtb = alloc.take(DTB_AREA)
        if pristine_dtb + DTB_AREA > ram_end and overflow is None:
            overflow = f"{p.toml_key}.image"
        pristine_initrd = 0
        if p.initrd_size:
            pristine_initrd = alloc.take(p.initrd_size)
            if pristine_initrd + p.initrd_size > ram_end and overflow is None:
                overflow = f"{p.toml_key}.initrd"
        regions, intids = _device_regions(system, p, ram_ipa)
        placements.append(PartitionPlacement(
            name=p.name, ram_ipa=ram_ipa, ram_hpa=ram_hpa, ram_size=p.memory,
            image_ipa=image_ipa, image_size=image_size, entry_ipa=entry_ipa,
            dtb_ipa=dtb, dtb_area=DTB_AREA,
            pristine_image_hpa=pristine_image, pristine_dtb_hpa=pristine_dtb,
            regions=regions, intids=intids, initrd_ipa=initrd_ipa, initrd_size=p.initrd_size,
            pristine_initrd_hpa=pristine_initrd))

    end = alloc.next
    if overflow:
        raise ConfigError(overflow, f"partitions need {format_size(end - RAM_BASE, round_up=True)} "
                                    f"but the board has {format_size(board_memory)}",
                          file=system.source)
    return Layout(board_memory=board_memory, partitions=tuple(placements),
                  qemu_dtb=hole, end=end)


def _device_regions(system, p, ram_ipa):
    """The MMIO regions and INTIDs of the devices `p` owns, mapped at board addresses."""
    regions = tuple(RegionPlacement(f"{d.name} {r.name}", ipa=r.base, hpa=r.base, size=r.size)
                    for d in (BOARD_DEVICES[name] for name in p.devices) for r in d.regions)
    key = f"{p.toml_key}.devices"
    if len(regions) > abi.MAX_REGIONS:
        raise ConfigError(key, f"the devices have {len(regions)} MMIO regions, more than the "
                               f"{abi.MAX_REGIONS} a partition can have", file=system.source)
    # What the partition already sees at fixed IPAs: a device must not cover any of it.
    taken = [("the partition's RAM", ram_ipa, p.memory),
             ("the GIC distributor", GICD_BASE, GICD_SIZE),
             ("the GIC redistributors", GICR_BASE, GICR_STRIDE * len(p.cpus)),
             ("the PL011", UART_BASE, UART_SIZE)]
    for r in regions:
        for what, start, size in taken:
            if r.ipa < start + size and start < r.ipa + r.size:
                raise ConfigError(key, f"{r.name} at 0x{r.ipa:x}-0x{r.ipa + r.size:x} overlaps "
                                       f"{what} (0x{start:x}-0x{start + size:x})",
                                  file=system.source)
        taken.append((r.name, r.ipa, r.size))
    intids = tuple(i for name in p.devices for i in BOARD_DEVICES[name].intids)
    return regions, intids


def _initrd_ipa(system, p, image_end, dtb):
    """Where the initrd goes: right below the device tree, 2 MiB aligned, above the image.

    The top of the boot window keeps it clear of the kernel, which grows past its
    image (bss, early page tables) and allocates upwards from there.
    """
    if not p.initrd_size:
        return 0
    ipa = align_down(dtb - p.initrd_size, BLOCK)
    if ipa < image_end:
        raise ConfigError(f"{p.toml_key}.initrd",
                          f"initrd ({format_size(p.initrd_size, round_up=True)}) does not fit "
                          f"between the image (ends at IPA 0x{image_end:x}) and the device tree "
                          f"(0x{dtb:x}): give the partition more memory", file=system.source)
    return ipa


def _check_image_fits(system, p, ram_ipa, image_ipa, image_size, entry_ipa, dtb):
    ram_end = ram_ipa + p.memory
    dtb_end = dtb + DTB_AREA
    image_end = image_ipa + image_size
    where = (f"it covers IPA 0x{image_ipa:x}-0x{image_end:x}, but RAM is "
             f"0x{ram_ipa:x}-0x{ram_end:x} and the device tree takes 0x{dtb:x}-0x{dtb_end:x}")
    key = f"{p.toml_key}.image"
    if image_ipa < ram_ipa or image_end > ram_end:
        raise ConfigError(key, f"image does not fit in the partition's RAM: {where}",
                          file=system.source)
    if image_ipa < dtb_end and dtb < image_end:
        raise ConfigError(key, f"image overlaps the device tree area: {where}", file=system.source)
    if not image_ipa <= entry_ipa < image_end:
        raise ConfigError(key, f"entry point 0x{entry_ipa:x} is outside the image "
                               f"(0x{image_ipa:x}-0x{image_end:x})", file=system.source)


def describe(system, layout):
    """Rows for `tern check`, by board address: (region, HPA range, size, IPA range, notes).

    A partition's image, device tree and device regions follow its RAM row, indented.
    """
    def span(start, size):
        return f"0x{start:08x}-0x{start + size:08x}"

    groups = [(HYP_BASE, [("hypervisor", span(HYP_BASE, HYP_SIZE), format_size(HYP_SIZE), "-",
                           f"image at 0x{HYP_IMAGE_HPA:x}, config blob at 0x{CONFIG_HPA:x}")])]
    hole_start, hole_end = layout.qemu_dtb
    groups.append((hole_start, [("QEMU's dtb", span(hole_start, hole_end - hole_start),
                                 format_size(hole_end - hole_start), "-",
                                 "QEMU's own device tree, left unused")]))
    for p, pl in zip(system.partitions, layout.partitions):
        cores = ",".join(str(c) for c in p.cpus)
        wfi = ("native" if p.wfi_native else "trap") + ("; irq direct" if p.irq_direct else "")
        devices = f"; {', '.join(p.devices)} INTIDs {_ranges(pl.intids)}" if p.devices else ""
        groups.append((pl.ram_hpa, [
            (f"{p.name}", span(pl.ram_hpa, pl.ram_size), format_size(pl.ram_size),
             span(pl.ram_ipa, pl.ram_size),
             f"RAM; cores {cores}; wfi {wfi}{devices}{_restart_policy(p)}"),
            (f"  {p.image.kind}", span(pl.image_hpa, pl.image_size), format_size(pl.image_size),
             span(pl.image_ipa, pl.image_size), f"entry 0x{pl.entry_ipa:x}"),
            ("  dtb", span(pl.dtb_hpa, pl.dtb_area), format_size(pl.dtb_area),
             span(pl.dtb_ipa, pl.dtb_area), "x0 at entry"),
        ] + ([("  initrd", span(pl.initrd_hpa, pl.initrd_size), format_size(pl.initrd_size),
               span(pl.initrd_ipa, pl.initrd_size), "named in /chosen")]
             if pl.initrd_size else []) + [(f"  {r.name}", span(r.hpa, r.size), format_size(r.size), span(r.ipa, r.size),
              "device, pass-through") for r in pl.regions]))
        groups.append((pl.pristine_image_hpa, [
            (f"{p.name} image copy", span(pl.pristine_image_hpa, pl.image_size),
             format_size(pl.image_size), "-", "pristine, for restarts")]))
        groups.append((pl.pristine_dtb_hpa, [
            (f"{p.name} dtb copy", span(pl.pristine_dtb_hpa, pl.dtb_area),
             format_size(pl.dtb_area), "-", "pristine, for restarts")]))
        if pl.initrd_size:
            groups.append((pl.pristine_initrd_hpa, [
                (f"{p.name} initrd copy", span(pl.pristine_initrd_hpa, pl.initrd_size),
                 format_size(pl.initrd_size), "-", "pristine, for restarts")]))
    groups.sort(key=lambda g: g[0])
    return [row for _, rows in groups for row in rows]


def _restart_policy(p):
    """'; on_fault restart; max_restarts 5; restart_backoff 10 ms', each only if not the default."""
    notes = []
    if p.on_fault != "stop":
        notes.append(f"on_fault {p.on_fault}")
    if p.max_restarts:
        notes.append(f"max_restarts {p.max_restarts}")
    if p.restart_backoff_us:
        notes.append(f"restart_backoff {format_duration(p.restart_backoff_us)}")
    return "".join(f"; {note}" for note in notes)


def _ranges(numbers):
    """'35-38, 40' for 35, 36, 37, 38, 40."""
    runs = []
    for n in sorted(numbers):
        if runs and runs[-1][1] == n - 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)

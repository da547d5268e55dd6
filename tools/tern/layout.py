"""The boards, QEMU virt arm64 and riscv64, and where each part of a system goes.

Each board is one VirtBoard object: QEMU_VIRT_ARM64 mirrors
hypervisor/platform/qemu-virt-arm64/board.c, QEMU_VIRT_RISCV64
hypervisor/platform/qemu-virt-riscv64/board.c (tests/tool checks that they agree); VIRT_BOARDS
has them by architecture.  `place(system)` decides every host-physical (HPA) and
guest-physical (IPA) address, or raises ConfigError when something does not fit.
"""

from dataclasses import dataclass, field, replace
from typing import Callable

from . import abi
from .errors import ConfigError
from .image import ARM64, RISCV64
from .units import GiB, KiB, MiB, format_duration, format_size

SPI_INTID_BASE = 32               # the GIC architecture's INTID of SPI 0
PCIE_ECAM_BUS_SIZE = 1 * MiB      # a generic ECAM's bus: 32 devices x 8 functions x 4 KiB
CONFIG_MAX = 1 * MiB              # the config blob's room, on either board

BLOCK = 2 * MiB                   # stage-2 block size: the unit of partition RAM
DTB_AREA = 2 * MiB                # the device tree gets the last 2 MiB of RAM ...
DTB_WINDOW = 512 * MiB            # ... within the first 512 MiB (arm64 boot protocol; a
                                  # riscv64 partition's goes at the same place)
DOORBELL_PAGE = 4 * KiB           # a channel's doorbell registers, right after its memory

# A Linux member reaches a channel as an ivshmem PCI function on a host bridge the hypervisor
# emulates at the board's PCIe addresses: bus 0, its j-th channel device 1 + j (function 0).
# The firmware-style BAR assignment below is fixed (the guest's /chosen says probe-only), and
# the hypervisor computes the same one.
IVSHMEM_FIRST_DEVICE = 1
IVSHMEM_BAR0_SIZE = 4 * KiB       # the ivshmem registers
IVSHMEM_BAR2_OFFSET = 1 * MiB     # BAR2s start this far into the window, past every BAR0
IVSHMEM_BAR2_MIN = 4 * KiB
PCIE_DEVICE = "pcie"              # the board device whose addresses the emulated bridge takes

# A [[virtio]] device's channel (hypervisor/include/tern/virtio_channel.h, which
# tests/tool/test_virtio_config.py checks this against): the header, config space and rings
# below VIO_DATA, then one data slot per (queue, descriptor head).
VIO_DATA = 0x5000
# A vsock device's guest_cid, which the hypervisor writes into its config space at boot: this
# plus the device's index among the [[virtio]] devices (its slot), so unique and above the
# reserved CIDs 0-2.
VIO_VSOCK_CID_FIRST = 3


@dataclass(frozen=True)
class VirtioShape:
    """A device type's fixed shape: its queues, each queue_size slots of slot_size bytes."""

    device_id: int                # abi.VIRTIO_*
    queues: int
    queue_size: int
    slot_size: int

    @property
    def channel_size(self):
        """VIO_DATA and every slot, in whole 4 KiB pages."""
        return align_up(VIO_DATA + self.queues * self.queue_size * self.slot_size, 4 * KiB)


VIRTIO_SHAPES = {
    "blk": VirtioShape(abi.VIRTIO_BLK, queues=1, queue_size=32, slot_size=0x8000),
    "net": VirtioShape(abi.VIRTIO_NET, queues=2, queue_size=64, slot_size=0x800),
    "console": VirtioShape(abi.VIRTIO_CONSOLE, queues=2, queue_size=64, slot_size=0x1000),
    # rx, tx, event; a slot: the 44-byte packet header and up to 4 KiB of payload (Linux's rx
    # buffers; the backend's buf_alloc bounds a tx packet's).
    "vsock": VirtioShape(abi.VIRTIO_VSOCK, queues=3, queue_size=32, slot_size=0x2000),
}


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
    spis: tuple                   # arm64: SPI numbers (INTID = 32 + SPI)
    dma: bool = False             # what sits behind it can read and write memory on its own
    aplic_sources: tuple = ()     # riscv64: its lines at the APLIC, by source number

    @property
    def intids(self):
        """Its wired interrupts as the hypervisor numbers them: GIC INTIDs, APLIC sources."""
        return tuple(SPI_INTID_BASE + spi for spi in self.spis) + self.aplic_sources

    def region(self, name):
        for r in self.regions:
            if r.name == name:
                return r
        raise KeyError(name)


@dataclass(frozen=True)
class Uart:
    """The board's console UART, which every partition sees emulated at the same address."""

    name: str                     # as messages name it: "PL011", "ns16550"
    base: int
    size: int
    spi: int = 0                  # arm64: its SPI (INTID = 32 + SPI)


@dataclass(frozen=True)
class Gicv3:
    """An arm64 board's interrupt controller, at its board addresses."""

    dist_base: int
    dist_size: int
    redist_base: int
    redist_stride: int            # one redistributor frame a core


@dataclass(frozen=True)
class Aia:
    """A riscv64 board's interrupt controllers: the IMSIC's S-level interrupt files (hart i's
    at imsic_s_base + i * imsic_stride, each followed by its guest files) and the APLIC's
    supervisor-level domain."""

    imsic_s_base: int
    imsic_guest_index_bits: int   # log2 of the files a hart has room for after its S file
    imsic_file_size: int
    aplic_base: int
    aplic_size: int
    aplic_num_sources: int        # sources 1 .. aplic_num_sources - 1

    @property
    def imsic_stride(self):
        return self.imsic_file_size << self.imsic_guest_index_bits


@dataclass(frozen=True)
class VirtioSlots:
    """The board's virtio-mmio transports, where a [[virtio]] device's frontend finds it:
    slot i's registers at base + i * stride (QEMU's tree gives each reg_size bytes), its
    interrupt first_irq + i as the hypervisor numbers them (GIC INTID, APLIC source)."""

    base: int
    stride: int
    count: int
    first_irq: int
    reg_size: int

    def address(self, i):
        return self.base + i * self.stride

    def irq(self, i):
        return self.first_irq + i


@dataclass(frozen=True)
class VirtBoard:
    """QEMU's virt board of one architecture, as tern lays a system out on it and as its
    partitions see it: every fact `[board] arch` selects."""

    arch: str
    platform: str                 # its hypervisor/platform/ directory, whose board.c this mirrors
    name: str                     # how the docs and reports name it ...
    features: str                 # ... and what sets it apart
    ram_base: int
    memory_max: int               # [board] memory at most ...
    memory_max_reason: str        # ... because of this
    hyp_base: int                 # the hypervisor's range of board RAM (firmware included)
    hyp_size: int
    hyp_image_hpa: int            # where QEMU's -kernel puts the hypervisor
    config_hpa: int
    config_max: int
    firmware: str                 # what else runs in the hypervisor's range ("" nothing)
    raw_hypervisor: bool          # -kernel takes a headerless hypervisor image, at hyp_image_hpa
    partition_ram_ipa: int        # every partition's RAM, at the bare board's RAM base
    qemu_dtb_block: Callable      # board memory -> (start, end) of QEMU's own device tree
    uart: Uart
    timer_hz: int                 # the rate of the counter a guest reads
    dtb_register: str             # holds the device tree's address when a guest starts
    cpu_models: tuple             # what [board] cpu may say; () the key is refused
    default_cpu: str
    default_irq: str              # [[partition]] irq
    direct_needs_native_wfi: bool
    qemu_binary: str              # the QEMU that emulates the board ...
    qemu_package: str             # ... and Debian's package with it
    qemu_machine: str             # -M: the machine, then ...
    qemu_machine_options: str     # ... the options every run gives it
    qemu_cpu: str                 # -cpu unless a run says otherwise
    gic: Gicv3 = None             # arm64's interrupt controller
    aia: Aia = None               # riscv64's
    devices: dict = field(default_factory=dict)   # BoardDevice a partition may own, by name
    iommu: str = ""               # what confines the DMA of devices a partition owns ("": nothing)
    # Board interrupts no device drives, given to channel members as doorbells (GIC INTIDs,
    # APLIC sources); () the board's partitions cannot have channels.
    doorbell_irqs: tuple = ()
    ipa_limit: int = 0            # the first guest-physical address past a partition's stage 2
    virtio_slots: VirtioSlots = None   # where [[virtio]] frontends see their devices
    # Trap-less (irq = "direct") vCPUs one core of a shared [[pool]] can hold, each with
    # interrupt state of its own there (what that state is: shared_direct_what); 0: none, a
    # direct guest owns the core's own interrupt interface.
    shared_direct_vcpus: int = 0
    shared_direct_what: str = ""

    @property
    def irq_kind(self):
        """What the board's interrupt numbers are, as `tern check` names them."""
        return "INTID" if self.gic else "APLIC source"

    @property
    def partition_ram_start(self):
        """The first board address past the hypervisor's range."""
        return self.hyp_base + self.hyp_size

    @property
    def ram_limit(self):
        """The first board address past the most RAM the board may have."""
        return self.ram_base + self.memory_max

    def emulated_regions(self, num_vcpus):
        """What a partition sees at fixed board addresses besides its RAM:
        ((what, base, size), ...)."""
        uart = (f"the {self.uart.name}", self.uart.base, self.uart.size)
        if self.gic:
            return (("the GIC distributor", self.gic.dist_base, self.gic.dist_size),
                    ("the GIC redistributors", self.gic.redist_base,
                     self.gic.redist_stride * num_vcpus),
                    uart)
        return (uart, ("the IMSIC", self.aia.imsic_s_base, self.aia.imsic_stride * num_vcpus))


def align_up(value, alignment):
    return -(-value // alignment) * alignment


def align_down(value, alignment):
    return value // alignment * alignment


def dtb_ipa(ram_ipa, ram_size):
    """IPA of a partition's device tree: the last 2 MiB of RAM, capped at 512 MiB."""
    return ram_ipa + min(ram_size, DTB_WINDOW) - DTB_AREA


def _arm64_qemu_dtb_block(board_memory):
    """With -kernel, QEMU writes its own device tree for the hypervisor into RAM at RAM base
    + min(RAM / 2, 128 MiB), as a 1 MiB ROM region.  QEMU refuses to start if a -device
    loader region overlaps it, and a partition whose RAM held it would not start from zeroed
    memory, so that 2 MiB block is left unused: (start, end)."""
    start = align_down(QEMU_VIRT_ARM64.ram_base + min(board_memory // 2, 128 * MiB), BLOCK)
    return start, start + BLOCK


def _riscv64_qemu_dtb_block(board_memory):
    """QEMU's riscv virt puts its own device tree, as a 1 MiB ROM region, at the 2 MiB
    boundary below min(RAM end, 3 GiB) (so that 32-bit software reaches it); the hypervisor
    is given it.  The 2 MiB block holding it: (start, end)."""
    top = min(QEMU_VIRT_RISCV64.ram_base + board_memory, 0xC000_0000)
    start = align_down(top - 1 * MiB, BLOCK)
    return start, start + BLOCK


# Tern runs QEMU virt with highmem=off (no device or RAM above 4 GiB, the PCIe ECAM at
# 0x3f00_0000), so board RAM ends at 4 GiB at most: 3 GiB from its base.
QEMU_VIRT_ARM64 = VirtBoard(
    arch=ARM64, platform="qemu-virt-arm64", name="QEMU virt arm64",
    features="GICv3, Cortex-A53",
    ram_base=0x4000_0000, memory_max=3 * GiB,
    memory_max_reason="board RAM starts at 1 GiB and must end by 4 GiB (QEMU virt with "
                      "highmem=off)",
    # hyp_image_hpa: where QEMU's -kernel puts an Image with text_offset 0x80000.
    hyp_base=0x4000_0000, hyp_size=64 * MiB, hyp_image_hpa=0x4008_0000, config_hpa=0x43F0_0000,
    config_max=CONFIG_MAX, firmware="", raw_hypervisor=False,
    # Every partition sees its RAM at the board's RAM base, so unmodified images boot.
    partition_ram_ipa=0x4000_0000, qemu_dtb_block=_arm64_qemu_dtb_block,
    uart=Uart("PL011", 0x0900_0000, 0x1000, spi=1),        # INTID 33
    timer_hz=62_500_000,
    gic=Gicv3(dist_base=0x0800_0000, dist_size=0x1_0000, redist_base=0x080A_0000,
              redist_stride=0x2_0000),
    dtb_register="x0",
    cpu_models=("cortex-a53", "cortex-a57", "max"), default_cpu="cortex-a53",
    # A direct guest owns its core's GIC CPU interface: a trapped WFI would wake in the
    # hypervisor with the guest's interrupt pending for EL1, so it waits on the core.
    default_irq="trap", direct_needs_native_wfi=True,
    # highmem=off: nothing above 4 GiB (PCIe ECAM at 0x3f00_0000, RAM ends by 4 GiB), the board
    # Tern's addresses assume.
    qemu_binary="qemu-system-aarch64", qemu_package="qemu-system-arm", qemu_machine="virt",
    qemu_machine_options="gic-version=3,highmem=off", qemu_cpu="cortex-a53",
    # What a partition may own, by name.  A device is mapped at its board addresses
    # (IPA == HPA) as device memory, and its SPIs go to that partition alone.  QEMU virt's
    # PCIe host bridge (generic ECAM) with highmem=off: QEMU's own device tree names it
    # pcie@10000000; the 32-bit memory window has PCI address == CPU address, the I/O window
    # PCI I/O addresses from 0; INTA..INTD of slot 0 are SPIs 3-6 (INTIDs 35-38), swizzled
    # per slot.
    devices={d.name: d for d in (
        BoardDevice("pcie", "pci-host-ecam-generic",
                    regions=(DeviceRegion("mmio", 0x1000_0000, 0x2EFF_0000),
                             DeviceRegion("io", 0x3EFF_0000, 0x1_0000),
                             DeviceRegion("ecam", 0x3F00_0000, 0x100_0000)),
                    spis=(3, 4, 5, 6), dma=True),
    )},
    # `tern run` starts the board with QEMU's SMMUv3 (qemu.SYSTEM_MACHINE_OPTIONS), which the
    # hypervisor programs to confine each device's DMA to its owner's RAM.
    iommu="the SMMUv3",
    # The GIC has 256 SPIs (INTIDs 32-287); QEMU 7.2's hw/arm/virt.c wires SPIs 0-175 at most
    # (the platform bus ends at 112 + 64 - 1), so SPIs 224-255 are free.
    doorbell_irqs=tuple(range(224, 256)),
    ipa_limit=4 * GiB,            # VTCR_EL2.T0SZ = 32
    # QEMU's hw/arm/virt.c: 32 virtio-mmio transports of 0x200 bytes from 0x0a000000, SPIs
    # 16-47 (edge-rising in its tree).
    virtio_slots=VirtioSlots(base=0x0A00_0000, stride=0x200, count=32,
                             first_irq=SPI_INTID_BASE + 16, reg_size=0x200))

# Guest interrupt files per hart QEMU's riscv virt board is started with (aia-guests).
RISCV64_AIA_GUESTS = 4

# The riscv virt board (qemu.RISCV64_MACHINE: the AIA's APLIC and IMSIC, harts with H and Sstc).
QEMU_VIRT_RISCV64 = VirtBoard(
    arch=RISCV64, platform="qemu-virt-riscv64", name="QEMU virt riscv64",
    features="AIA APLIC+IMSIC, Sstc",
    ram_base=0x8000_0000, memory_max=2 * GiB,
    memory_max_reason="board RAM starts at 2 GiB and must end by 4 GiB (the riscv64 "
                      "hypervisor's limit)",
    # OpenSBI (QEMU's fw_dynamic) in the first 2 MiB of RAM, then Tern where the firmware
    # enters an S-mode kernel; the config blob in the last MiB of the hypervisor's 64 MiB.
    hyp_base=0x8000_0000, hyp_size=64 * MiB, hyp_image_hpa=0x8000_0000 + 2 * MiB,
    config_hpa=0x83F0_0000, config_max=CONFIG_MAX,
    firmware="OpenSBI at 0x80000000", raw_hypervisor=True,
    partition_ram_ipa=0x8000_0000, qemu_dtb_block=_riscv64_qemu_dtb_block,
    uart=Uart("ns16550", 0x1000_0000, 0x100),
    timer_hz=10_000_000,          # the time CSR's rate
    # aia-guests=4 needs 5 files a hart, rounded up to 8 = 2^3: a stride of 8 pages.  A
    # partition's vCPU i finds its own file at the same address.
    aia=Aia(imsic_s_base=0x2800_0000, imsic_guest_index_bits=3, imsic_file_size=0x1000,
            aplic_base=0x0D00_0000, aplic_size=0x8000, aplic_num_sources=96),
    dtb_register="a1",
    cpu_models=(), default_cpu="rv64",
    # The guest's own interrupt file and Sstc timer are the fast path; a vCPU waiting in the
    # hypervisor (wfi = "trap") keeps its file selected, so what arrives in it ends the wait:
    # any combination works.
    default_irq="direct", direct_needs_native_wfi=False,
    # The AIA: the APLIC in MSI mode, an IMSIC with an S-level file and 4 guest files per hart;
    # harts with the H extension and Sstc.
    qemu_binary="qemu-system-riscv64", qemu_package="qemu-system-misc", qemu_machine="virt",
    qemu_machine_options=f"aia=aplic-imsic,aia-guests={RISCV64_AIA_GUESTS}",
    qemu_cpu="rv64,h=true,sstc=true",
    # What a riscv64 partition may own.  QEMU riscv virt's PCIe host bridge (generic ECAM),
    # as QEMU 7.2's hw/riscv/virt.c maps it; QEMU's own device tree names it
    # /soc/pci@30000000.  Its 64-bit window (16 GiB past the top of RAM) is not given to a
    # partition: a guest assigns BARs from the 32-bit one.  A device interrupts its owner by
    # MSI (into the vCPU's IMSIC file; the hypervisor, which emulates the ECAM, rewrites the
    # MSI address to the guest interrupt file backing it) or by INTx, the bridge's four lines
    # at the board's APLIC (sources 32-35 for INTA..INTD of slot 0, swizzled per slot), which
    # the owner then programs through its own virtual APLIC.  Nothing confines the DMA of
    # what is behind the bridge: the board has no IOMMU, see config._check_dma.
    devices={d.name: d for d in (
        BoardDevice("pcie", "pci-host-ecam-generic",
                    regions=(DeviceRegion("io", 0x0300_0000, 0x1_0000),
                             DeviceRegion("ecam", 0x3000_0000, 0x1000_0000),   # 256 buses
                             DeviceRegion("mmio", 0x4000_0000, 0x4000_0000)),
                    spis=(), dma=True, aplic_sources=(32, 33, 34, 35)),
    )},
    # QEMU 7.2's riscv virt has no IOMMU: a partition owns a DMA-capable device only with
    # unconfined_dma = true.
    iommu="",
    # QEMU 7.2's include/hw/riscv/virt.h: virtio 1-8, UART 10, RTC 11, PCIe 32-35, the platform
    # bus from 64; sources 48-63 are driven by nothing.
    doorbell_irqs=tuple(range(48, 64)),
    ipa_limit=1 << 41,            # Sv39x4
    # QEMU's hw/riscv/virt.c: 8 virtio-mmio transports a page apart from 0x10001000, APLIC
    # sources 1-8 (level-high in its tree); a device answers the page's first 0x200 bytes.
    virtio_slots=VirtioSlots(base=0x1000_1000, stride=0x1000, count=8, first_irq=1,
                             reg_size=0x1000),
    # A trap-less vCPU of a shared core keeps a guest interrupt file of the hart as its own,
    # whether it runs or not (docs/design.md, "Scheduling").
    shared_direct_vcpus=RISCV64_AIA_GUESTS,
    shared_direct_what=f"guest interrupt files a hart has (QEMU aia-guests={RISCV64_AIA_GUESTS})")

VIRT_BOARDS = {b.arch: b for b in (QEMU_VIRT_ARM64, QEMU_VIRT_RISCV64)}


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
    doorbell_irqs: tuple = ()     # its doorbells as channel member, in channel order
    virtio_irqs: tuple = ()       # its virtio-mmio slots' interrupts, as a frontend
    pci_functions: tuple = ()     # PciFunction: its channels as ivshmem functions, by device
    windows: tuple = ()           # RamWindow: its trusted devices' frontends' RAM, as a backend

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
class RamWindow:
    """A trusted [[virtio]] backend's map of its frontend's whole RAM (abi.RF_PARTITION_RAM),
    one for all the devices it serves that frontend."""

    frontend: str                 # whose RAM
    ipa: int                      # in the backend's map
    hpa: int                      # the frontend's RAM on the board
    size: int


@dataclass(frozen=True)
class ChannelMember:
    """One partition of a channel, as member index k (its place in ChannelPlacement.members)."""

    name: str
    partition: int                # its index in the system's partitions
    writable: bool                # maps the memory read-write (else read-only)
    irq: int                      # its doorbell: a board interrupt of VirtBoard.doorbell_irqs
    frontend: bool = False        # a VirtIO device's frontend: no mapping, irq its slot's


@dataclass(frozen=True)
class PciFunction:
    """A channel as one member sees it on its emulated PCI bus 0: device `device`, function 0,
    its registers at `bar0`, the channel's memory at the start of BAR2."""

    channel: int                  # index in Layout.channels
    member: int                   # the partition's member index k in that channel
    device: int
    bar0: int
    bar2: int
    bar2_size: int                # the channel's size rounded up to a power of two

    @property
    def bdf(self):
        return f"00:{self.device:02x}.0"


def ivshmem_bar2_size(channel_size):
    """A BAR's size is a power of two: the channel's, rounded up, at least a page."""
    return max(IVSHMEM_BAR2_MIN, 1 << (channel_size - 1).bit_length())


def ivshmem_functions(window_base, channel_sizes):
    """[(bar0, bar2, bar2_size)] of devices 1, 2, ... for channels of `channel_sizes` (in the
    partition's channel order) in a memory window at `window_base`: BAR0s a page apart from the
    window's base, each BAR2 at the next address at or above window + 1 MiB aligned to its
    size, in device order."""
    out = []
    next_bar2 = window_base + IVSHMEM_BAR2_OFFSET
    for j, size in enumerate(channel_sizes):
        bar2_size = ivshmem_bar2_size(size)
        bar2 = align_up(next_bar2, bar2_size)
        next_bar2 = bar2 + bar2_size
        out.append((window_base + j * IVSHMEM_BAR0_SIZE, bar2, bar2_size))
    return out


@dataclass(frozen=True)
class ChannelPlacement:
    """Where a channel's memory is on the board and in its members, and their doorbells."""

    name: str
    hpa: int
    size: int
    ipa: int                      # the same in every member
    members: tuple                # ChannelMember, by member index: members, then readonly
    virtio: str = ""              # a [[virtio]] device's channel: its device type

    @property
    def doorbell_ipa(self):
        """The doorbell page, trapped in every member: right after the memory."""
        return self.ipa + self.size


@dataclass(frozen=True)
class VirtioPlacement:
    """A [[virtio]] device: its frontend's slot and the channel its backend serves it over."""

    name: str
    device: str                   # config.VIRTIO_DEVICES
    device_id: int                # abi.VIRTIO_*
    frontend: int                 # partition indices
    backend: int
    channel: int                  # index in Layout.channels (past the [[channel]]s)
    slot: int                     # the description's i-th device: the board's slot i ...
    mmio_ipa: int                 # ... its registers ...
    mmio_size: int                # ... as the board's device tree gives them ...
    irq: int                      # ... and its interrupt
    trusted: bool = False         # backend_trusted: the backend maps the frontend's RAM ...
    window_ipa: int = 0           # ... there (RamWindow)


@dataclass(frozen=True)
class Layout:
    """The whole board: partitions in file order, plus what tern reserved."""

    board: VirtBoard
    board_memory: int
    partitions: tuple
    qemu_dtb: tuple               # (start, end) left unused: QEMU's own device tree
    end: int                      # first board address past everything placed
    channels: tuple = ()          # ChannelPlacement: [[channel]]s, then one per [[virtio]]
    virtio: tuple = ()            # VirtioPlacement, in description order

    @property
    def ram_end(self):
        return self.board.ram_base + self.board_memory

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
    """Lay out `system` (config.System) on its architecture's board; raises ConfigError."""
    board = system.board.virt
    board_memory = system.board.memory
    hole = board.qemu_dtb_block(board_memory)
    ram_end = board.ram_base + board_memory
    alloc = _Allocator(board.partition_ram_start, hole)

    ram = []
    overflow = None               # key of the first thing that went past the end of RAM
    for p in system.partitions:
        ram_hpa = alloc.take(p.memory)
        if ram_hpa + p.memory > ram_end and overflow is None:
            overflow = f"{p.toml_key}.memory"
        ram.append(ram_hpa)

    placements = []
    for p, ram_hpa in zip(system.partitions, ram):
        ram_ipa = board.partition_ram_ipa
        image = p.image
        image_ipa = image.load_address(ram_ipa)
        image_size = image.mem_size
        entry_ipa = image.entry(ram_ipa)
        dtb = dtb_ipa(ram_ipa, p.memory)
        _check_image_fits(system, p, ram_ipa, image_ipa, image_size, entry_ipa, dtb)
        _, initrd_size, initrd_key = system.initrd_of(p)
        initrd_ipa = _initrd_ipa(system, initrd_size, initrd_key, image_ipa + image_size, dtb)
        pristine_image = alloc.take(image_size)
        if pristine_image + image_size > ram_end and overflow is None:
            overflow = f"{p.toml_key}.image"
        pristine_dtb = alloc.take(DTB_AREA)
        if pristine_dtb + DTB_AREA > ram_end and overflow is None:
            overflow = f"{p.toml_key}.image"
        pristine_initrd = 0
        if initrd_size:
            pristine_initrd = alloc.take(initrd_size)
            if pristine_initrd + initrd_size > ram_end and overflow is None:
                overflow = initrd_key
        regions, intids = _device_regions(system, board, p, ram_ipa)
        placements.append(PartitionPlacement(
            name=p.name, ram_ipa=ram_ipa, ram_hpa=ram_hpa, ram_size=p.memory,
            image_ipa=image_ipa, image_size=image_size, entry_ipa=entry_ipa,
            dtb_ipa=dtb, dtb_area=DTB_AREA,
            pristine_image_hpa=pristine_image, pristine_dtb_hpa=pristine_dtb,
            regions=regions, intids=intids, initrd_ipa=initrd_ipa, initrd_size=initrd_size,
            pristine_initrd_hpa=pristine_initrd))

    # Channels come last, so that a system without one is laid out as before.
    channels = []
    for c in system.channels:
        hpa = alloc.take(c.size)
        if hpa + c.size > ram_end and overflow is None:
            overflow = f"{c.toml_key}.size"
        channels.append(_place_channel(system, board, c, hpa, placements, channels))
    # Then each [[virtio]] device's channel, after the [[channel]]s as in the blob.
    virtio = []
    for v in system.virtio:
        size = VIRTIO_SHAPES[v.device].channel_size
        hpa = alloc.take(size)
        if hpa + size > ram_end and overflow is None:
            overflow = v.toml_key
        placed_v, ch = _place_virtio(system, board, v, hpa, placements, channels, virtio)
        virtio.append(placed_v)
        channels.append(ch)
    placements = _give_doorbells(system, board, channels, placements)
    placements = _give_slot_irqs(virtio, placements)
    virtio, placements = _give_windows(system, board, virtio, channels, placements)
    placements = _give_pci_functions(system, board, channels, placements)

    end = alloc.next
    if overflow:
        need = format_size(end - board.ram_base, round_up=True)
        what = ("partitions and channels" if system.channels or system.virtio
                else "partitions")
        raise ConfigError(overflow, f"{what} need {need} but the board has "
                                    f"{format_size(board_memory)}", file=system.source)
    return Layout(board=board, board_memory=board_memory, partitions=tuple(placements),
                  qemu_dtb=hole, end=end, channels=tuple(channels), virtio=tuple(virtio))


def _place_virtio(system, board, v, hpa, placements, channels, earlier):
    """The [[virtio]] device `v` (config.Virtio): its frontend's slot, and its channel at board
    address `hpa`, mapped by the backend alone (member 0; the frontend, member 1, is rung
    through its slot's interrupt)."""
    index = {p.name: i for i, p in enumerate(system.partitions)}
    frontend, backend = index[v.frontend], index[v.backend]
    slots = board.virtio_slots
    slot = len(earlier)                 # board-wide: a slot's interrupt is one partition's
    mmio, irq = slots.address(slot), slots.irq(slot)
    _check_slots_free(system, board, v, placements[frontend])
    size = VIRTIO_SHAPES[v.device].channel_size
    ipa = _channel_ipa(system, board, v.toml_key, size, [backend], placements, channels)
    channel = ChannelPlacement(
        name=v.name, hpa=hpa, size=size, ipa=ipa, virtio=v.device,
        members=(ChannelMember(v.backend, backend, True, irq=0),
                 ChannelMember(v.frontend, frontend, False, irq=irq, frontend=True)))
    return VirtioPlacement(name=v.name, device=v.device,
                           device_id=VIRTIO_SHAPES[v.device].device_id, frontend=frontend,
                           backend=backend, channel=len(channels), slot=slot, mmio_ipa=mmio,
                           mmio_size=slots.reg_size, irq=irq), channel


def _give_windows(system, board, virtio, channels, placements):
    """Each trusted device's backend gets its frontend's RAM (once for all the devices of that
    pair) at the first 2 MiB boundary past its own RAM, every channel's doorbell page and its
    earlier windows: after the channels, so that trusting a device moves nothing else."""
    virtio, placements = list(virtio), list(placements)
    last_channel = channels[-1].doorbell_ipa + DOORBELL_PAGE if channels else 0
    for n, v in enumerate(virtio):
        if not system.virtio[n].trusted:
            continue
        key = f"{system.virtio[n].toml_key}.backend_trusted"
        back, front = placements[v.backend], placements[v.frontend]
        shared = [w for w in back.windows if w.frontend == front.name]
        if shared:
            virtio[n] = replace(v, trusted=True, window_ipa=shared[0].ipa)
            continue
        start = max(back.ram_ipa + back.ram_size, last_channel,
                    *(w.ipa + w.size for w in back.windows))
        ipa = align_up(start, BLOCK)
        end = ipa + front.ram_size
        if end > board.ipa_limit:
            raise ConfigError(key, f"{front.name}'s RAM ({format_size(front.ram_size)}) does "
                                   f"not fit in {back.name}'s map: it would take IPA "
                                   f"0x{ipa:x}-0x{end:x}, past the {board.arch} board's IPA "
                                   f"limit 0x{board.ipa_limit:x}", file=system.source)
        p = system.partitions[v.backend]
        taken = [*((r.name, r.ipa, r.size) for r in back.regions),
                 *board.emulated_regions(len(p.cpus))]
        for what, base, size in taken:
            if ipa < base + size and base < end:
                raise ConfigError(key, f"{front.name}'s RAM at IPA 0x{ipa:x}-0x{end:x} would "
                                       f"overlap {what} (0x{base:x}-0x{base + size:x}) in "
                                       f'partition "{back.name}"', file=system.source)
        if len(back.regions) + len(back.windows) + 1 > abi.MAX_REGIONS:
            raise ConfigError(key, f'partition "{back.name}" would have more than '
                                   f"{abi.MAX_REGIONS} regions (its devices' and its windows "
                                   f"onto trusting frontends' RAM)", file=system.source)
        window = RamWindow(front.name, ipa, front.ram_hpa, front.ram_size)
        placements[v.backend] = replace(back, windows=back.windows + (window,))
        virtio[n] = replace(v, trusted=True, window_ipa=ipa)
    return tuple(virtio), placements


def _check_slots_free(system, board, v, pl):
    """A frontend that owns the board's own virtio-mmio transports (their registers or their
    interrupts) would see them where the hypervisor puts its devices: refused."""
    slots = board.virtio_slots
    start, end = slots.base, slots.address(slots.count)
    irqs = {slots.irq(i) for i in range(slots.count)}
    for r in pl.regions:
        if r.ipa < end and start < r.ipa + r.size:
            raise ConfigError(f"{v.toml_key}.frontend",
                              f'partition "{pl.name}" owns {r.name} (0x{r.ipa:x}-'
                              f"0x{r.ipa + r.size:x}), over the board's virtio-mmio slots "
                              f"(0x{start:x}-0x{end:x})", file=system.source)
    owned = sorted(irqs & set(pl.intids))
    if owned:
        raise ConfigError(f"{v.toml_key}.frontend",
                          f'partition "{pl.name}" owns {board.irq_kind} {owned[0]}, an '
                          f"interrupt of the board's virtio-mmio slots", file=system.source)


def _give_slot_irqs(virtio, placements):
    """Each frontend's irqs get its devices' slots' interrupts."""
    placements = list(placements)
    for v in virtio:
        pl = placements[v.frontend]
        placements[v.frontend] = replace(pl, virtio_irqs=pl.virtio_irqs + (v.irq,))
    return placements


def _place_channel(system, board, c, hpa, placements, earlier):
    """The channel `c` (config.Channel) at board address `hpa`: its IPA is the first 2 MiB
    boundary past every member's RAM and every earlier channel's doorbell page, so that it is
    the same in all members; its doorbells are given by _give_doorbells."""
    index = {p.name: i for i, p in enumerate(system.partitions)}
    members = [index[name] for name in c.all_members]
    ipa = _channel_ipa(system, board, c.toml_key, c.size, members, placements, earlier,
                       size_key=f"{c.toml_key}.size")
    return ChannelPlacement(name=c.name, hpa=hpa, size=c.size, ipa=ipa,
                            members=tuple(ChannelMember(name, i, c.writable(name), irq=0)
                                          for name, i in zip(c.all_members, members)))


def _channel_ipa(system, board, key, size, members, placements, earlier, size_key=None):
    """A channel's IPA in the partitions (indices) `members` that map it: the first 2 MiB
    boundary past their RAM and the `earlier` channels' doorbell pages, with its doorbell page
    clear of what they see there."""
    start = max(placements[i].ram_ipa + placements[i].ram_size for i in members)
    if earlier:
        start = max(start, earlier[-1].doorbell_ipa + DOORBELL_PAGE)
    ipa = align_up(start, BLOCK)
    end = ipa + size + DOORBELL_PAGE
    if end > board.ipa_limit:
        raise ConfigError(size_key or key,
                          f"with its doorbell page it would take IPA 0x{ipa:x}-0x{end:x}, past "
                          f"the {board.arch} board's IPA limit 0x{board.ipa_limit:x}",
                          file=system.source)
    for i in members:
        p, pl = system.partitions[i], placements[i]
        taken = [*((r.name, r.ipa, r.size) for r in pl.regions),
                 *board.emulated_regions(len(p.cpus))]
        for what, base, size_ in taken:
            if ipa < base + size_ and base < end:
                raise ConfigError(key, f"its memory and doorbell page at IPA "
                                       f"0x{ipa:x}-0x{end:x} overlap {what} "
                                       f"(0x{base:x}-0x{base + size_:x}) in partition "
                                       f'"{p.name}"', file=system.source)
    return ipa


def _give_doorbells(system, board, channels, placements):
    """Each member of each channel, channel by channel and member by member, gets the next
    spare interrupt of the board (VirtBoard.doorbell_irqs); returns the partitions'
    placements with their doorbells added and fills in the channels' members."""
    spare = iter(board.doorbell_irqs)
    placements = list(placements)
    for n, (c, ch) in enumerate(zip(system.channels + system.virtio, channels)):
        members = []
        for k, m in enumerate(ch.members):
            if m.frontend:
                # Rung through its slot's interrupt (_give_slot_irqs), not a doorbell.
                members.append(m)
                continue
            irq = next(spare, None)
            if irq is None:
                first, last = board.doorbell_irqs[0], board.doorbell_irqs[-1]
                if ch.virtio:
                    key = f"{c.toml_key}.backend"
                else:
                    key = f"{c.toml_key}.{'members' if k < len(c.members) else 'readonly'}"
                raise ConfigError(key, f'no spare doorbell interrupt left for "{m.name}": the '
                                       f"{board.arch} board has {len(board.doorbell_irqs)} "
                                       f"({board.irq_kind}s {first}-{last}), all given to "
                                       f"earlier channel members", file=system.source)
            members.append(replace(m, irq=irq))
            pl = placements[m.partition]
            placements[m.partition] = replace(pl, doorbell_irqs=pl.doorbell_irqs + (irq,))
        channels[n] = replace(ch, members=tuple(members))
    return placements


def gets_pci_bridge(p):
    """Whether a channel member `p` (config.Partition) gets the emulated ivshmem bridge: not if
    it owns the board's own PCIe host bridge, which is at the same addresses."""
    return PCIE_DEVICE not in p.devices


def _give_pci_functions(system, board, channels, placements):
    """Each channel member that gets the emulated bridge gets an ivshmem function for each of
    its channels; refuses a channel whose function would not fit in the board's window."""
    if PCIE_DEVICE not in board.devices:
        return placements
    window = board.devices[PCIE_DEVICE].region("mmio")
    placements = list(placements)
    for i, p in enumerate(system.partitions):
        if not gets_pci_bridge(p):
            continue
        # A frontend has no function for its device's channel: it sees a virtio-mmio slot.
        mine = [(n, k) for n, ch in enumerate(channels)
                for k, m in enumerate(ch.members) if m.partition == i and not m.frontend]
        bars = ivshmem_functions(window.base, [channels[n].size for n, _ in mine])
        functions = []
        for j, ((n, k), (bar0, bar2, bar2_size)) in enumerate(zip(mine, bars)):
            if bar2 + bar2_size > window.base + window.size:
                raise ConfigError((system.channels + system.virtio)[n].toml_key,
                                  f'its ivshmem function in partition "{p.name}" (BAR2 '
                                  f"0x{bar2:x}-0x{bar2 + bar2_size:x}) does not fit in the "
                                  f"PCI memory window 0x{window.base:x}-"
                                  f"0x{window.base + window.size:x}", file=system.source)
            functions.append(PciFunction(n, k, IVSHMEM_FIRST_DEVICE + j, bar0, bar2, bar2_size))
        placements[i] = replace(placements[i], pci_functions=tuple(functions))
    return placements


def _device_regions(system, board, p, ram_ipa):
    """The MMIO regions and INTIDs of the devices `p` owns, mapped at board addresses."""
    owned = [board.devices[name] for name in p.devices]
    regions = tuple(RegionPlacement(f"{d.name} {r.name}", ipa=r.base, hpa=r.base, size=r.size)
                    for d in owned for r in d.regions)
    key = f"{p.toml_key}.devices"
    if len(regions) > abi.MAX_REGIONS:
        raise ConfigError(key, f"the devices have {len(regions)} MMIO regions, more than the "
                               f"{abi.MAX_REGIONS} a partition can have", file=system.source)
    # What the partition already sees at fixed IPAs: a device must not cover any of it.
    taken = [("the partition's RAM", ram_ipa, p.memory), *board.emulated_regions(len(p.cpus))]
    for r in regions:
        for what, start, size in taken:
            if r.ipa < start + size and start < r.ipa + r.size:
                raise ConfigError(key, f"{r.name} at 0x{r.ipa:x}-0x{r.ipa + r.size:x} overlaps "
                                       f"{what} (0x{start:x}-0x{start + size:x})",
                                  file=system.source)
        taken.append((r.name, r.ipa, r.size))
    intids = tuple(i for d in owned for i in d.intids)
    return regions, intids


def _initrd_ipa(system, size, key, image_end, dtb):
    """Where the initrd (`size` bytes, given by field `key`) goes: right below the device tree,
    2 MiB aligned, above the image.

    The top of the boot window keeps it clear of the kernel, which grows past its
    image (bss, early page tables) and allocates upwards from there.
    """
    if not size:
        return 0
    ipa = align_down(dtb - size, BLOCK)
    if ipa < image_end:
        what = "disk image, the backend's initrd," if key.endswith(".disk") else "initrd"
        raise ConfigError(key,
                          f"{what} ({format_size(size, round_up=True)}) does not fit "
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

    board = layout.board
    firmware = f"{board.firmware}, " if board.firmware else ""
    groups = [(board.hyp_base, [("hypervisor", span(board.hyp_base, board.hyp_size),
                                 format_size(board.hyp_size), "-",
                                 f"{firmware}image at 0x{board.hyp_image_hpa:x}, config blob at "
                                 f"0x{board.config_hpa:x}")])]
    hole_start, hole_end = layout.qemu_dtb
    groups.append((hole_start, [("QEMU's dtb", span(hole_start, hole_end - hole_start),
                                 format_size(hole_end - hole_start), "-",
                                 "QEMU's own device tree, left unused")]))
    for p, pl in zip(system.partitions, layout.partitions):
        cores = ",".join(str(c) for c in p.cpus)
        wfi = ("native" if p.wfi_native else "trap") + ("; irq direct" if p.irq_direct else "")
        devices = ""
        if p.devices:
            kind = "APLIC sources" if board.arch == RISCV64 else "INTIDs"
            interrupts = f"{kind} {_ranges(pl.intids)}" if pl.intids else "no wired interrupts"
            devices = f"; {', '.join(p.devices)} {interrupts}"
        if p.unconfined_dma:
            devices += "; DMA unconfined"
        groups.append((pl.ram_hpa, [
            (f"{p.name}", span(pl.ram_hpa, pl.ram_size), format_size(pl.ram_size),
             span(pl.ram_ipa, pl.ram_size),
             f"RAM; cores {cores}{_pool_note(system, p)}; wfi {wfi}{devices}"
             f"{_restart_policy(p)}"),
            (f"  {p.image.kind}", span(pl.image_hpa, pl.image_size), format_size(pl.image_size),
             span(pl.image_ipa, pl.image_size), f"entry 0x{pl.entry_ipa:x}{_raw_note(p.image)}"),
            ("  dtb", span(pl.dtb_hpa, pl.dtb_area), format_size(pl.dtb_area),
             span(pl.dtb_ipa, pl.dtb_area), f"{board.dtb_register} at entry"),
        ] + ([("  initrd", span(pl.initrd_hpa, pl.initrd_size), format_size(pl.initrd_size),
               span(pl.initrd_ipa, pl.initrd_size), _initrd_note(system, p))]
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
    functions = member_functions(layout)
    described = len(layout.channels) - len(layout.virtio)
    for n, ch in enumerate(layout.channels[:described]):
        members = ", ".join(f"{m.name} {'rw' if m.writable else 'ro'} {board.irq_kind} {m.irq}"
                            for m in ch.members)
        rows = [
            (f"channel {ch.name}", span(ch.hpa, ch.size), format_size(ch.size),
             span(ch.ipa, ch.size), f"shared memory; doorbells: {members}"),
            ("  doorbell", "-", format_size(DOORBELL_PAGE), span(ch.doorbell_ipa, DOORBELL_PAGE),
             "trapped in every member: ring, self, members")]
        for k, m in enumerate(ch.members):
            f = functions.get((n, k))
            if f is None:
                continue
            rows.append((f"  {m.name} pci {f.bdf}", "-", format_size(f.bar2_size),
                         span(f.bar2, f.bar2_size),
                         f"ivshmem BAR2 (memory {format_size(ch.size)}); BAR0 registers "
                         f"0x{f.bar0:08x}"))
        groups.append((ch.hpa, rows))
    for v in layout.virtio:
        groups.append((layout.channels[v.channel].hpa, _virtio_rows(system, layout, v, functions)))
    groups.sort(key=lambda g: g[0])
    # Pools have no address: after everything that has one, in description order.
    pools = [(f"pool {q.name}", "-", "-", "-", pool_summary(system, q)) for q in system.pools]
    return [row for _, rows in groups for row in rows] + pools


def _pool_note(system, p):
    """'; pool frame (arinc653)', with the partition's parameters there; '' in no pool."""
    pool = system.pool_of(p)
    if pool is None:
        return ""
    params = ""
    if pool.scheduler == "rtds":
        params = f", budget {format_duration(p.budget_us)} every {format_duration(p.period_us)}"
    if pool.scheduler == "credit":
        params = f", weight {p.weight}" + (f", cap {p.cap} %" if p.cap else "")
    return f"; pool {pool.name} ({pool.scheduler}{params})"


def pool_summary(system, pool):
    """A [[pool]]'s row notes: its cores, scheduler and parameters, and its members."""
    cores = ",".join(str(c) for c in pool.cpus)
    what = pool.scheduler
    if pool.scheduler == "arinc653":
        windows = ", ".join(f"{w.partition} {format_duration(w.duration_us)}"
                            for w in pool.windows)
        what += f", major frame {format_duration(pool.major_frame_us)}: {windows}"
    members = ", ".join(p.name for p in system.members(pool)) or "no partition"
    return f"cores {cores}; {what}; members {members}"


def _virtio_rows(system, layout, v, functions):
    """`tern check`'s rows of a [[virtio]] device: its channel in the backend, the backend's
    doorbell page and ivshmem function, the frontend's slot."""
    def span(start, size):
        return f"0x{start:08x}-0x{start + size:08x}"

    board = layout.board
    ch = layout.channels[v.channel]
    backend, frontend = ch.members
    if v.trusted:
        mode = (f"trusted: the backend reads and writes all of {frontend.name}'s RAM, the "
                f"hypervisor copies nothing")
    else:
        mode = "mediated: the backend sees only the data the hypervisor copies"
    rows = [
        (f"virtio {v.name}", span(ch.hpa, ch.size), format_size(ch.size), span(ch.ipa, ch.size),
         f"{v.device} served by {backend.name} (doorbell {board.irq_kind} {backend.irq}) to "
         f"{frontend.name}; {mode}"),
        ("  doorbell", "-", format_size(DOORBELL_PAGE), span(ch.doorbell_ipa, DOORBELL_PAGE),
         f"trapped in {backend.name}: ring, self, members")]
    if v.trusted:
        fe = layout.partitions[v.frontend]
        rows.append((f"  {backend.name} window", span(fe.ram_hpa, fe.ram_size),
                     format_size(fe.ram_size), span(v.window_ipa, fe.ram_size),
                     f"{frontend.name}'s RAM, mapped read-write in {backend.name} (trusted)"))
    f = functions.get((v.channel, 0))
    if f is not None:
        rows.append((f"  {backend.name} pci {f.bdf}", "-", format_size(f.bar2_size),
                     span(f.bar2, f.bar2_size),
                     f"ivshmem BAR2 (memory {format_size(ch.size)}); BAR0 registers "
                     f"0x{f.bar0:08x}"))
    cid = (f", guest CID {vsock_cid(layout, v)}" if v.device == "vsock" else "")
    rows.append((f"  {frontend.name} virtio-mmio", "-", format_size(v.mmio_size),
                 span(v.mmio_ipa, v.mmio_size),
                 f"slot {v.slot}, {board.irq_kind} {v.irq}; emulated (device ID "
                 f"{v.device_id}{cid})"))
    return rows


def vsock_cid(layout, v):
    """The guest CID the frontend of vsock device `v` (a VirtioPlacement) gets."""
    return VIO_VSOCK_CID_FIRST + layout.virtio.index(v)


def member_functions(layout):
    """{(channel index, member index): PciFunction} of every member that has one."""
    return {(f.channel, f.member): f for pl in layout.partitions for f in pl.pci_functions}


def notes(system, placed=None):
    """(field, message) of what `tern check` tells without refusing it: a channel member that
    owns the board's PCIe host bridge gets no ivshmem function, only its tern,channel node;
    with the layout `placed`, what each trusted [[virtio]] device trusts its backend with."""
    out = _pool_notes(system)
    for v in placed.virtio if placed else ():
        if not v.trusted:
            continue
        back, front = placed.partitions[v.backend], placed.partitions[v.frontend]
        out.append((f"{system.virtio[placed.virtio.index(v)].toml_key}.backend_trusted",
                    f"{v.name}: backend {back.name} is trusted: it reads and writes all of "
                    f"{front.name}'s RAM ({format_size(front.ram_size)} at 0x{front.ram_hpa:x}, "
                    f"IPA 0x{v.window_ipa:x} in {back.name})"))
    for c in system.channels:
        for name in c.all_members:
            p = next(p for p in system.partitions if p.name == name)
            if not gets_pci_bridge(p):
                out.append((c.toml_key, f'partition "{name}" owns {PCIE_DEVICE}, so channel '
                                        f'"{c.name}" is no ivshmem PCI function there: only its '
                                        f"tern,channel device tree node"))
    return out


def _pool_notes(system):
    """A pool no partition uses (its cores stay idle); an ARINC 653 member with no window."""
    out = []
    for q in system.pools:
        members = system.members(q)
        if not members:
            out.append((q.toml_key, f'pool "{q.name}" has no partition: its cores '
                                    f"{', '.join(map(str, q.cpus))} stay idle"))
        windowed = {w.partition for w in q.windows}
        for p in members:
            if q.scheduler == "arinc653" and p.name not in windowed:
                out.append((f"{q.toml_key}.windows", f'partition "{p.name}" has no window in '
                                                     f'pool "{q.name}": it never runs'))
    return out


def _initrd_note(system, p):
    """An initrd row's notes: where it is named, and whose disk it is if it is one."""
    key = system.initrd_of(p)[2]
    if key.endswith(".disk"):
        device = system.virtio[int(key[len("virtio["):key.index("]")])]
        return f'named in /chosen; the disk of virtio "{device.name}" it serves'
    return "named in /chosen"


def _raw_note(image):
    """What a raw binary's row adds: it had no header, so it is where the board puts one."""
    if image.kind != "raw":
        return ""
    return f"; no header: at RAM base + 0x{image.text_offset:x}, as the board's -kernel puts it"


def _restart_policy(p):
    """'; on_fault restart; max_restarts 5; restart_backoff 10 ms', each only if not the default."""
    notes = []
    if p.on_fault != "inject":
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

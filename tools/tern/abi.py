"""The config blob: struct tern_config, struct tern_config_partition[], then
struct tern_config_channel[] at channels_offset, struct tern_config_virtio[] at
virtio_offset and struct tern_config_pool[] at pools_offset.

Mirrors hypervisor/include/tern/config_abi.h field for field (little-endian,
no padding: every field sits at its natural alignment).  tests/tool/test_abi.py
compiles the header and compares sizes and offsets with the tables below.
"""

import struct
from dataclasses import dataclass, field
from typing import NamedTuple

CONFIG_MAGIC = 0x4E524554         # "TERN"
CONFIG_VERSION = 8
MAX_PARTITIONS = 8
MAX_VCPUS = 8
NAME_LEN = 16
MAX_REGIONS = 8                   # pass-through MMIO regions per partition
IRQ_WORDS = 32                    # interrupt bitmap words: interrupts 0..1023
CF_IOMMU = 1 << 0                 # header flag: the board has its IOMMU (arm64: SMMUv3, iommu=smmuv3)
PF_WFI_NATIVE = 1 << 0
PF_IRQ_DIRECT = 1 << 1
PF_UNCONFINED_DMA = 1 << 2        # the description accepts that its devices' DMA is not confined
PF_MANAGER = 1 << 3               # may call the console's commands as hypercalls (manager = true)
RF_DEVICE = 1 << 0                # region is device memory (Device-nGnRE), not RAM
RF_PARTITION_RAM = 1 << 1         # region is another partition's RAM: a trusted backend's window
FAULT_STOP = 0                    # fault_policy: a guest fault stops the partition
FAULT_RESTART = 1                 # ... or reloads it from its pristine copies and starts it again
FAULT_INJECT = 2                  # ... or an access outside it is the guest's bus error, as on the board
FAULT_POLICIES = (FAULT_STOP, FAULT_RESTART, FAULT_INJECT)
SPI_FIRST = 32                    # INTIDs a partition may be given: the SPIs
SPI_LAST = 1019
PAGE = 0x1000                     # regions are 4 KiB aligned and sized
MAX_CHANNELS = 16                 # [[channel]]s and one per [[virtio]]
MAX_VIRTIO = 8
CHF_WRITABLE = 1 << 0             # channel member maps the memory read-write
CHF_FRONTEND = 1 << 1             # a VirtIO device's frontend: rung, it raises the device's irq
VIRTIO_NET = 1                    # tern_config_virtio.device_id: VirtIO 1.2's device IDs
VIRTIO_BLK = 2
VIRTIO_CONSOLE = 3
VIRTIO_VSOCK = 19
VF_BACKEND_TRUSTED = 1 << 0       # the backend maps the frontend's RAM and moves the data itself
MAX_POOLS = 8                     # [[pool]]s: one core each at least, so no more than the cores
MAX_WINDOWS = 16                  # an ARINC 653 pool's windows in its major frame
POOL_NONE = 0xFFFF_FFFF           # tern_config_partition.pool: no [[pool]], today's null core
SCHED_NULL = 0                    # tern_config_pool.scheduler
SCHED_ARINC653 = 1
SCHED_RTDS = 2
SCHED_CREDIT = 3
SCHEDULERS = {"null": SCHED_NULL, "arinc653": SCHED_ARINC653, "rtds": SCHED_RTDS,
              "credit": SCHED_CREDIT}
MAX_WEIGHT = 65535                # credit weight 1..MAX_WEIGHT
MAX_CAP = 100                     # credit cap: percent of one core (0: none)

# (C field name, struct format) in declaration order.
HEADER_FIELDS = (
    ("magic", "I"),
    ("version", "I"),
    ("size", "I"),
    ("num_partitions", "I"),
    ("board_cpus", "I"),
    ("flags", "I"),
    ("ram_size", "Q"),
    ("num_channels", "I"),
    ("channels_offset", "I"),
    ("num_virtio", "I"),
    ("virtio_offset", "I"),
    ("num_pools", "I"),
    ("pools_offset", "I"),
)

REGION_FIELDS = (
    ("ipa", "Q"),
    ("hpa", "Q"),
    ("size", "Q"),
    ("flags", "I"),
    ("reserved", "I"),
)
REGION_FORMAT = "".join(fmt for _, fmt in REGION_FIELDS)

PARTITION_FIELDS = (
    ("name", f"{NAME_LEN}s"),
    ("ram_ipa", "Q"),
    ("ram_hpa", "Q"),
    ("ram_size", "Q"),
    ("entry_ipa", "Q"),
    ("dtb_ipa", "Q"),
    ("image_ipa", "Q"),
    ("image_size", "Q"),
    ("pristine_image_hpa", "Q"),
    ("pristine_dtb_hpa", "Q"),
    ("dtb_size", "Q"),
    ("num_vcpus", "I"),
    ("flags", "I"),
    ("cpus", f"{MAX_VCPUS}B"),
    ("num_regions", "I"),
    ("reserved0", "I"),
    ("region", REGION_FORMAT * MAX_REGIONS),
    ("irqs", f"{IRQ_WORDS}I"),
    ("initrd_ipa", "Q"),
    ("initrd_size", "Q"),
    ("pristine_initrd_hpa", "Q"),
    ("fault_policy", "I"),
    ("max_restarts", "I"),
    ("restart_backoff_us", "Q"),
    ("pool", "I"),
    ("weight", "I"),
    ("cap", "I"),
    ("budget_us", "I"),
    ("period_us", "I"),
    ("reserved1", "I"),
)


CHANNEL_MEMBER_FIELDS = (
    ("partition", "I"),
    ("flags", "I"),
    ("irq", "I"),
    ("reserved", "I"),
)
CHANNEL_MEMBER_FORMAT = "".join(fmt for _, fmt in CHANNEL_MEMBER_FIELDS)

CHANNEL_FIELDS = (
    ("name", f"{NAME_LEN}s"),
    ("hpa", "Q"),
    ("size", "Q"),
    ("ipa", "Q"),
    ("doorbell_ipa", "Q"),
    ("num_members", "I"),
    ("reserved", "I"),
    ("member", CHANNEL_MEMBER_FORMAT * MAX_PARTITIONS),
)

VIRTIO_FIELDS = (
    ("name", f"{NAME_LEN}s"),
    ("mmio_ipa", "Q"),
    ("device_id", "I"),
    ("flags", "I"),
    ("frontend", "I"),
    ("backend", "I"),
    ("channel", "I"),
    ("irq", "I"),
)


WINDOW_FIELDS = (
    ("partition", "I"),
    ("duration_us", "I"),
)
WINDOW_FORMAT = "".join(fmt for _, fmt in WINDOW_FIELDS)

POOL_FIELDS = (
    ("name", f"{NAME_LEN}s"),
    ("cpus", "I"),
    ("scheduler", "I"),
    ("major_frame_us", "I"),
    ("num_windows", "I"),
    ("window", WINDOW_FORMAT * MAX_WINDOWS),
)


def _struct(field_table):
    return struct.Struct("<" + "".join(fmt for _, fmt in field_table))


def field_offsets(field_table):
    """{name: (offset, size)} computed from the formats, for the ABI test."""
    out = {}
    offset = 0
    for name, fmt in field_table:
        size = struct.calcsize("<" + fmt)
        out[name] = (offset, size)
        offset += size
    return out


HEADER = _struct(HEADER_FIELDS)
REGION = _struct(REGION_FIELDS)
PARTITION = _struct(PARTITION_FIELDS)
CHANNEL_MEMBER = _struct(CHANNEL_MEMBER_FIELDS)
CHANNEL = _struct(CHANNEL_FIELDS)
VIRTIO = _struct(VIRTIO_FIELDS)
WINDOW = _struct(WINDOW_FIELDS)
POOL = _struct(POOL_FIELDS)


class Region(NamedTuple):
    """One struct tern_config_region: a board device's MMIO range given to a partition."""

    ipa: int
    hpa: int
    size: int
    flags: int = RF_DEVICE


@dataclass
class PartitionRecord:
    """One struct tern_config_partition, with Python types."""

    name: str
    ram_ipa: int
    ram_hpa: int
    ram_size: int
    entry_ipa: int
    dtb_ipa: int
    image_ipa: int
    image_size: int
    pristine_image_hpa: int
    pristine_dtb_hpa: int
    dtb_size: int
    cpus: tuple                   # physical core of vCPU i; num_vcpus = len(cpus)
    flags: int = 0
    regions: tuple = ()           # Region (ipa, hpa, size, flags), in order
    irqs: frozenset = frozenset()  # device interrupts passed through (arm64: SPIs' INTIDs)
    initrd_ipa: int = 0
    initrd_size: int = 0           # 0: no initrd
    pristine_initrd_hpa: int = 0
    fault_policy: int = FAULT_STOP
    max_restarts: int = 0          # automatic restarts allowed, then stopped (0: no limit)
    restart_backoff_us: int = 0    # wait before the first automatic restart (0: none)
    pool: int = POOL_NONE          # index in the blob's pools, POOL_NONE: none
    weight: int = 0                # credit pool: 1..MAX_WEIGHT (else 0)
    cap: int = 0                   # credit pool: percent of one core, 0 no cap
    budget_us: int = 0             # RTDS pool: budget_us every period_us (else 0)
    period_us: int = 0

    def __post_init__(self):
        self.regions = tuple(Region(*r) for r in self.regions)
        self.irqs = frozenset(self.irqs)

    @property
    def num_vcpus(self):
        return len(self.cpus)


class ChannelMember(NamedTuple):
    """One struct tern_config_channel_member."""

    partition: int                # index in the blob's partitions
    flags: int                    # CHF_*
    irq: int                      # its doorbell, also in its partition's irqs


@dataclass
class ChannelRecord:
    """One struct tern_config_channel, with Python types."""

    name: str
    hpa: int
    size: int
    ipa: int
    doorbell_ipa: int
    members: tuple = ()           # ChannelMember, by member index

    def __post_init__(self):
        self.members = tuple(ChannelMember(*m) for m in self.members)


@dataclass
class VirtioRecord:
    """One struct tern_config_virtio: a device at a virtio-mmio slot of `frontend`, served by
    `backend` through channel record `channel`."""

    name: str
    mmio_ipa: int
    device_id: int                # VIRTIO_*
    frontend: int                 # partition indices
    backend: int
    channel: int                  # index in the blob's channels
    irq: int                      # the slot's interrupt, also in the frontend's irqs
    flags: int = 0                # VF_*


@dataclass
class PoolRecord:
    """One struct tern_config_pool: cores (indices) with a scheduler, and an ARINC 653 pool's
    major frame and windows ((partition index, duration_us), in order)."""

    name: str
    cpus: tuple
    scheduler: int = SCHED_NULL
    major_frame_us: int = 0
    windows: tuple = ()

    def __post_init__(self):
        self.cpus = tuple(sorted(self.cpus))
        self.windows = tuple(tuple(w) for w in self.windows)


@dataclass
class ConfigBlob:
    """A whole blob, header fields plus partitions and channels."""

    board_cpus: int
    partitions: list = field(default_factory=list)
    magic: int = CONFIG_MAGIC
    version: int = CONFIG_VERSION
    flags: int = 0
    ram_size: int = 0             # board RAM from the RAM base (QEMU -m), bytes
    channels: list = field(default_factory=list)
    virtio: list = field(default_factory=list)
    pools: list = field(default_factory=list)
    # Not in the blob: the lowest interrupt number pack() accepts in a partition's irqs, the
    # first SPI on arm64 (the default), APLIC source 1 on riscv64, whose virtio-mmio slots
    # interrupt at sources 1-8.
    irq_first: int = field(default=SPI_FIRST, compare=False)

    @property
    def channels_offset(self):
        """Where the channel records start: right after the partitions (a multiple of 8, as
        both record sizes are), with or without channels."""
        return HEADER.size + PARTITION.size * len(self.partitions)

    @property
    def virtio_offset(self):
        """Where the virtio records start: right after the channels' (a multiple of 8)."""
        return self.channels_offset + CHANNEL.size * len(self.channels)

    @property
    def pools_offset(self):
        """Where the pool records start: right after the virtio records' (a multiple of 8)."""
        return self.virtio_offset + VIRTIO.size * len(self.virtio)

    @property
    def size(self):
        return self.pools_offset + POOL.size * len(self.pools)


def pack(blob):
    """The bytes QEMU loads at TERN_CONFIG_HPA."""
    if not 1 <= len(blob.partitions) <= MAX_PARTITIONS:
        raise ValueError(f"{len(blob.partitions)} partitions (1..{MAX_PARTITIONS} supported)")
    if len(blob.channels) > MAX_CHANNELS:
        raise ValueError(f"{len(blob.channels)} channels (at most {MAX_CHANNELS} supported)")
    if len(blob.virtio) > MAX_VIRTIO:
        raise ValueError(f"{len(blob.virtio)} virtio devices (at most {MAX_VIRTIO} supported)")
    if len(blob.pools) > MAX_POOLS:
        raise ValueError(f"{len(blob.pools)} pools (at most {MAX_POOLS} supported)")
    out = bytearray(HEADER.pack(blob.magic, blob.version, blob.size, len(blob.partitions),
                                blob.board_cpus, blob.flags, blob.ram_size, len(blob.channels),
                                blob.channels_offset, len(blob.virtio), blob.virtio_offset,
                                len(blob.pools), blob.pools_offset))
    for p in blob.partitions:
        name = p.name.encode("ascii")
        if not 1 <= len(name) < NAME_LEN:
            raise ValueError(f"partition name {p.name!r} must be 1..{NAME_LEN - 1} bytes")
        if not 1 <= len(p.cpus) <= MAX_VCPUS:
            raise ValueError(f"partition {p.name}: {len(p.cpus)} vCPUs (1..{MAX_VCPUS} supported)")
        if p.fault_policy not in FAULT_POLICIES:
            raise ValueError(f"partition {p.name}: unknown fault policy {p.fault_policy}")
        cpus = list(p.cpus) + [0] * (MAX_VCPUS - len(p.cpus))
        out += PARTITION.pack(name, p.ram_ipa, p.ram_hpa, p.ram_size, p.entry_ipa, p.dtb_ipa,
                              p.image_ipa, p.image_size, p.pristine_image_hpa,
                              p.pristine_dtb_hpa, p.dtb_size, len(p.cpus), p.flags, *cpus,
                              len(p.regions), 0, *_region_values(p),
                              *irq_bitmap(p.irqs, blob.irq_first),
                              p.initrd_ipa, p.initrd_size, p.pristine_initrd_hpa,
                              p.fault_policy, p.max_restarts, p.restart_backoff_us,
                              p.pool, p.weight, p.cap, p.budget_us, p.period_us, 0)
    for c in blob.channels:
        out += _pack_channel(c)
    for v in blob.virtio:
        out += _pack_virtio(v)
    for pool in blob.pools:
        out += _pack_pool(pool)
    return bytes(out)


def _pack_pool(pool):
    name = pool.name.encode("ascii")
    if not 1 <= len(name) < NAME_LEN:
        raise ValueError(f"pool name {pool.name!r} must be 1..{NAME_LEN - 1} bytes")
    if len(pool.windows) > MAX_WINDOWS:
        raise ValueError(f"pool {pool.name}: {len(pool.windows)} windows "
                         f"(at most {MAX_WINDOWS} supported)")
    mask = 0
    for core in pool.cpus:
        mask |= 1 << core
    windows = [v for w in pool.windows for v in w]
    windows += [0] * (len(WINDOW_FIELDS) * (MAX_WINDOWS - len(pool.windows)))
    return POOL.pack(name, mask, pool.scheduler, pool.major_frame_us, len(pool.windows),
                     *windows)


def _pack_virtio(v):
    name = v.name.encode("ascii")
    if not 1 <= len(name) < NAME_LEN:
        raise ValueError(f"virtio device name {v.name!r} must be 1..{NAME_LEN - 1} bytes")
    return VIRTIO.pack(name, v.mmio_ipa, v.device_id, v.flags, v.frontend, v.backend,
                       v.channel, v.irq)


def _pack_channel(c):
    name = c.name.encode("ascii")
    if not 1 <= len(name) < NAME_LEN:
        raise ValueError(f"channel name {c.name!r} must be 1..{NAME_LEN - 1} bytes")
    if len(c.members) > MAX_PARTITIONS:
        raise ValueError(f"channel {c.name}: {len(c.members)} members "
                         f"(at most {MAX_PARTITIONS} supported)")
    members = [v for m in c.members for v in (m.partition, m.flags, m.irq, 0)]
    members += [0] * (len(CHANNEL_MEMBER_FIELDS) * (MAX_PARTITIONS - len(c.members)))
    return CHANNEL.pack(name, c.hpa, c.size, c.ipa, c.doorbell_ipa, len(c.members), 0,
                        *members)


def _region_values(p):
    """The region[] array as flat struct values, unused entries zero."""
    if len(p.regions) > MAX_REGIONS:
        raise ValueError(f"partition {p.name}: {len(p.regions)} regions "
                         f"(at most {MAX_REGIONS} supported)")
    values = []
    for r in p.regions:
        if r.ipa % PAGE or r.hpa % PAGE or r.size % PAGE or not r.size:
            raise ValueError(f"partition {p.name}: region ipa 0x{r.ipa:x} hpa 0x{r.hpa:x} "
                             f"size 0x{r.size:x} is not 4 KiB aligned and sized")
        values += [r.ipa, r.hpa, r.size, r.flags, 0]
    return values + [0] * (len(REGION_FIELDS) * (MAX_REGIONS - len(p.regions)))


def irq_bitmap(irqs, first=SPI_FIRST):
    """The irqs[] words: interrupt n is bit (n % 32) of word n / 32; `first` is the lowest
    a partition may have (ConfigBlob.irq_first)."""
    words = [0] * IRQ_WORDS
    for n in sorted(irqs):
        if first == SPI_FIRST and not SPI_FIRST <= n <= SPI_LAST:
            raise ValueError(f"INTID {n} is not an SPI ({SPI_FIRST}..{SPI_LAST})")
        if not first <= n <= SPI_LAST:
            raise ValueError(f"interrupt {n} is not one a partition can have "
                             f"({first}..{SPI_LAST})")
        words[n // 32] |= 1 << (n % 32)
    return words


def irqs_of(words):
    """The interrupts set in an irqs[] bitmap."""
    return frozenset(32 * w + bit for w, word in enumerate(words)
                     for bit in range(32) if word >> bit & 1)


def unpack(data):
    """Parse a blob made by pack() (or anyone); raises ValueError if malformed."""
    if len(data) < HEADER.size:
        raise ValueError(f"blob of {len(data)} bytes is shorter than the header")
    (magic, version, size, count, board_cpus, flags, ram_size, num_channels,
     channels_offset, num_virtio, virtio_offset, num_pools,
     pools_offset) = HEADER.unpack_from(data)
    partitions_end = HEADER.size + count * PARTITION.size
    # Without channels the offset may also be 0, as the hypervisor accepts.
    if channels_offset != partitions_end and (num_channels or channels_offset):
        raise ValueError(f"channels_offset {channels_offset} is not the end of {count} "
                         f"partitions")
    channels_offset = partitions_end
    if num_channels > MAX_CHANNELS:
        raise ValueError(f"num_channels {num_channels} (at most {MAX_CHANNELS})")
    channels_end = channels_offset + num_channels * CHANNEL.size
    if virtio_offset != channels_end and (num_virtio or virtio_offset):
        raise ValueError(f"virtio_offset {virtio_offset} is not the end of {num_channels} "
                         f"channels")
    if num_virtio > MAX_VIRTIO:
        raise ValueError(f"num_virtio {num_virtio} (at most {MAX_VIRTIO})")
    virtio_end = channels_end + num_virtio * VIRTIO.size
    if pools_offset != virtio_end and (num_pools or pools_offset):
        raise ValueError(f"pools_offset {pools_offset} is not the end of {num_virtio} "
                         f"virtio devices")
    if num_pools > MAX_POOLS:
        raise ValueError(f"num_pools {num_pools} (at most {MAX_POOLS})")
    if size != virtio_end + num_pools * POOL.size or size > len(data):
        raise ValueError(f"size {size} does not match {count} partitions, {num_channels} "
                         f"channels, {num_virtio} virtio devices and {num_pools} pools in "
                         f"{len(data)} bytes")
    blob = ConfigBlob(board_cpus=board_cpus, magic=magic, version=version, flags=flags,
                      ram_size=ram_size)
    for i in range(count):
        values = PARTITION.unpack_from(data, HEADER.size + i * PARTITION.size)
        (name, ram_ipa, ram_hpa, ram_size, entry_ipa, dtb_ipa, image_ipa, image_size,
         pristine_image_hpa, pristine_dtb_hpa, dtb_size, num_vcpus, pflags) = values[:13]
        cpus = tuple(values[13:13 + MAX_VCPUS][:num_vcpus])
        at = 13 + MAX_VCPUS
        num_regions = values[at]
        if num_regions > MAX_REGIONS:
            raise ValueError(f"partition {i}: num_regions {num_regions} "
                             f"(at most {MAX_REGIONS})")
        at += 2                                    # num_regions, reserved0
        width = len(REGION_FIELDS)
        regions = tuple(Region(*values[at + k * width:at + k * width + 4])
                        for k in range(num_regions))
        at += width * MAX_REGIONS
        irqs = irqs_of(values[at:at + IRQ_WORDS])
        at += IRQ_WORDS
        initrd_ipa, initrd_size, pristine_initrd_hpa = values[at:at + 3]
        fault_policy, max_restarts, restart_backoff_us = values[at + 3:at + 6]
        pool, weight, cap, budget_us, period_us = values[at + 6:at + 11]
        record = dict(name=name.split(b"\0", 1)[0].decode("ascii", "replace"),
                      ram_ipa=ram_ipa, ram_hpa=ram_hpa, ram_size=ram_size,
                      entry_ipa=entry_ipa, dtb_ipa=dtb_ipa, image_ipa=image_ipa,
                      image_size=image_size, pristine_image_hpa=pristine_image_hpa,
                      pristine_dtb_hpa=pristine_dtb_hpa, dtb_size=dtb_size, cpus=cpus,
                      flags=pflags, regions=regions, irqs=irqs, initrd_ipa=initrd_ipa,
                      initrd_size=initrd_size, pristine_initrd_hpa=pristine_initrd_hpa,
                      fault_policy=fault_policy, max_restarts=max_restarts,
                      restart_backoff_us=restart_backoff_us, pool=pool, weight=weight, cap=cap,
                      budget_us=budget_us, period_us=period_us)
        blob.partitions.append(PartitionRecord(**record))
    for i in range(num_channels):
        values = CHANNEL.unpack_from(data, channels_offset + i * CHANNEL.size)
        name, hpa, size_, ipa, doorbell_ipa, num_members = values[:6]
        if num_members > MAX_PARTITIONS:
            raise ValueError(f"channel {i}: num_members {num_members} (at most {MAX_PARTITIONS})")
        width = len(CHANNEL_MEMBER_FIELDS)
        members = tuple(ChannelMember(*values[7 + k * width:7 + k * width + 3])
                        for k in range(num_members))
        blob.channels.append(ChannelRecord(
            name=name.split(b"\0", 1)[0].decode("ascii", "replace"), hpa=hpa, size=size_,
            ipa=ipa, doorbell_ipa=doorbell_ipa, members=members))
    for i in range(num_virtio):
        (name, mmio_ipa, device_id, vflags, frontend, backend, channel,
         irq) = VIRTIO.unpack_from(data, channels_end + i * VIRTIO.size)
        blob.virtio.append(VirtioRecord(
            name=name.split(b"\0", 1)[0].decode("ascii", "replace"), mmio_ipa=mmio_ipa,
            device_id=device_id, frontend=frontend, backend=backend, channel=channel, irq=irq,
            flags=vflags))
    for i in range(num_pools):
        values = POOL.unpack_from(data, virtio_end + i * POOL.size)
        name, mask, scheduler, major_frame_us, num_windows = values[:5]
        if num_windows > MAX_WINDOWS:
            raise ValueError(f"pool {i}: num_windows {num_windows} (at most {MAX_WINDOWS})")
        windows = tuple(tuple(values[5 + 2 * k:7 + 2 * k]) for k in range(num_windows))
        blob.pools.append(PoolRecord(
            name=name.split(b"\0", 1)[0].decode("ascii", "replace"),
            cpus=tuple(c for c in range(32) if mask >> c & 1), scheduler=scheduler,
            major_frame_us=major_frame_us, windows=windows))
    return blob

"""The config blob: struct tern_config + struct tern_config_partition[].

Mirrors hypervisor/include/tern/config_abi.h field for field (little-endian,
no padding: every field sits at its natural alignment).  tests/tool/test_abi.py
compiles the header and compares sizes and offsets with the tables below.
"""

import struct
from dataclasses import dataclass, field

CONFIG_MAGIC = 0x4E524554         # "TERN"
CONFIG_VERSION = 1
MAX_PARTITIONS = 8
MAX_VCPUS = 8
NAME_LEN = 16
PF_WFI_NATIVE = 1 << 0
PF_IRQ_DIRECT = 1 << 1

# (C field name, struct format) in declaration order.
HEADER_FIELDS = (
    ("magic", "I"),
    ("version", "I"),
    ("size", "I"),
    ("num_partitions", "I"),
    ("board_cpus", "I"),
    ("flags", "I"),
    ("reserved", "3Q"),
)

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
    ("reserved", "4Q"),
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
PARTITION = _struct(PARTITION_FIELDS)


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

    @property
    def num_vcpus(self):
        return len(self.cpus)


@dataclass
class ConfigBlob:
    """A whole blob, header fields plus partitions."""

    board_cpus: int
    partitions: list = field(default_factory=list)
    magic: int = CONFIG_MAGIC
    version: int = CONFIG_VERSION
    flags: int = 0

    @property
    def size(self):
        return HEADER.size + PARTITION.size * len(self.partitions)


def pack(blob):
    """The bytes QEMU loads at TERN_CONFIG_HPA."""
    if not 1 <= len(blob.partitions) <= MAX_PARTITIONS:
        raise ValueError(f"{len(blob.partitions)} partitions (1..{MAX_PARTITIONS} supported)")
    out = bytearray(HEADER.pack(blob.magic, blob.version, blob.size, len(blob.partitions),
                                blob.board_cpus, blob.flags, 0, 0, 0))
    for p in blob.partitions:
        name = p.name.encode("ascii")
        if not 1 <= len(name) < NAME_LEN:
            raise ValueError(f"partition name {p.name!r} must be 1..{NAME_LEN - 1} bytes")
        if not 1 <= len(p.cpus) <= MAX_VCPUS:
            raise ValueError(f"partition {p.name}: {len(p.cpus)} vCPUs (1..{MAX_VCPUS} supported)")
        cpus = list(p.cpus) + [0] * (MAX_VCPUS - len(p.cpus))
        out += PARTITION.pack(name, p.ram_ipa, p.ram_hpa, p.ram_size, p.entry_ipa, p.dtb_ipa,
                              p.image_ipa, p.image_size, p.pristine_image_hpa,
                              p.pristine_dtb_hpa, p.dtb_size, len(p.cpus), p.flags, *cpus,
                              0, 0, 0, 0)
    return bytes(out)


def unpack(data):
    """Parse a blob made by pack() (or anyone); raises ValueError if malformed."""
    if len(data) < HEADER.size:
        raise ValueError(f"blob of {len(data)} bytes is shorter than the header")
    magic, version, size, count, board_cpus, flags, *_ = HEADER.unpack_from(data)
    if size != HEADER.size + count * PARTITION.size or size > len(data):
        raise ValueError(f"size {size} does not match {count} partitions in {len(data)} bytes")
    blob = ConfigBlob(board_cpus=board_cpus, magic=magic, version=version, flags=flags)
    for i in range(count):
        values = PARTITION.unpack_from(data, HEADER.size + i * PARTITION.size)
        (name, ram_ipa, ram_hpa, ram_size, entry_ipa, dtb_ipa, image_ipa, image_size,
         pristine_image_hpa, pristine_dtb_hpa, dtb_size, num_vcpus, pflags) = values[:13]
        cpus = tuple(values[13:13 + MAX_VCPUS][:num_vcpus])
        record = dict(name=name.split(b"\0", 1)[0].decode("ascii", "replace"),
                      ram_ipa=ram_ipa, ram_hpa=ram_hpa, ram_size=ram_size,
                      entry_ipa=entry_ipa, dtb_ipa=dtb_ipa, image_ipa=image_ipa,
                      image_size=image_size, pristine_image_hpa=pristine_image_hpa,
                      pristine_dtb_hpa=pristine_dtb_hpa, dtb_size=dtb_size, cpus=cpus,
                      flags=pflags)
        blob.partitions.append(PartitionRecord(**record))
    return blob

"""System descriptions: read the TOML, check every field, inspect the images.

`load_system(path)` returns a `System` or raises `ConfigError` naming the file,
the field and what is wrong.  Checks that need addresses (does everything fit
in board RAM, does an image fit in its partition) live in layout.py.
"""

import os
import re
import stat
import sys
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from . import layout
from .errors import ConfigError, show_int, show_key, show_path, show_value
from .files import NotAFile, check_regular, read_bounded
from .image import ARM64, ImageError, inspect
from .tomlwriter import dumps as _dumps
from .units import MS, SECOND, GiB, KiB, MiB, TiB, format_duration, format_size


def dump_toml(doc, comment=None):
    """A system description (the dict tomllib.load would give) as TOML text: what demo,
    bench and the tests write (tomlwriter.py)."""
    return _dumps(doc, comment)


MAX_CPUS = 8
MAX_PARTITIONS = 8
CPU_MODELS = layout.QEMU_VIRT_ARM64.cpu_models  # arm64's [board] cpu; riscv64's has no choice
WFI_MODES = ("native", "trap")
IRQ_MODES = ("trap", "direct")
# QEMU PCI device models [board] pci may list.  virtio-blk needs a disk image (a table entry:
# {model = "virtio-blk", disk = "FILE"}); virtio-net gets QEMU's user network, restricted
# (no route to the host or beyond).
PCI_MODELS = ("edu", "virtio-blk", "virtio-net")
PCI_DISK_MODELS = ("virtio-blk",)
PCI_ENTRY_KEYS = ("model", "disk")
MAX_PCI_DEVICES = 4

PARTITION_MEMORY_ALIGN = 2 * MiB
PARTITION_MEMORY_MIN = 4 * MiB
PARTITION_MEMORY_MAX = 2 * GiB
# The hypervisor owns the first 64 MiB; QEMU wants the rest in whole MiB (-m).  The most
# is the board's (layout.VirtBoard.memory_max).
BOARD_MEMORY_MIN = 128 * MiB

NAME_RE = re.compile(r"[a-z0-9_-]{1,15}")
# ASCII digits and blanks only: \d would take other scripts' digits ("６４") and \s a newline.
SIZE_RE = re.compile(r"[ \t]*([0-9]+)[ \t]*(KiB|MiB|GiB|TiB)[ \t]*")
UNITS = {"KiB": KiB, "MiB": MiB, "GiB": GiB, "TiB": TiB}
MAX_DIGITS = 20                   # digits of a size or duration: more is far past any limit
MAX_BOOTARGS = 1024
# A system description is a page or two; anything this big is not one (/dev/zero, a disk).
MAX_DESCRIPTION_BYTES = 1 * MiB
UTF8_BOM = "\ufeff"

# What a guest fault does to its partition (abi.FAULT_INJECT, abi.FAULT_STOP, abi.FAULT_RESTART).
# "inject" is the default: the bare board's own behaviour (docs/configuration.md, on_fault).
FAULT_ACTIONS = ("inject", "stop", "restart")
MAX_RESTARTS = 1_000_000          # more is no limit in practice, which 0 says plainly
DURATION_RE = re.compile(r"([0-9]+)[ \t]*(us|ms|s)")
DURATION_UNITS = {"us": 1, "ms": MS, "s": SECOND}     # in microseconds
# The back-off doubles up to 32 x this, so the longest wait is 32 minutes.
MAX_RESTART_BACKOFF = 60 * SECOND

# [[channel]]: shared memory between partitions, with a doorbell for each member.  The size
# is in whole 4 KiB pages, the stage-2 granule every member maps it with.
MAX_CHANNELS = 8
MAX_CHANNEL_MEMBERS = 8
CHANNEL_SIZE_ALIGN = 4 * KiB
CHANNEL_SIZE_MAX = 64 * MiB
CHANNEL_KEYS = ("name", "size", "members", "readonly")

# [[virtio]]: a VirtIO device one partition (the frontend) sees at one of the board's
# virtio-mmio slots, served by another (the backend) through a channel of its own.
VIRTIO_DEVICES = tuple(layout.VIRTIO_SHAPES)
VIRTIO_KEYS = ("name", "device", "frontend", "backend", "disk", "backend_trusted")
MAX_VIRTIO = 8

# [[pool]]: cores with a scheduler of their own (docs/configuration.md, "Pools").  A partition
# that names no pool is in an implicit null pool of its own cores: today's system.
SCHEDULERS = ("null", "arinc653", "rtds", "credit")
POOL_KEYS = ("name", "cpus", "scheduler", "major_frame_us", "windows")
WINDOW_KEYS = ("partition", "duration_us")
MAX_POOLS = 8                     # abi.MAX_POOLS: a core each at least
MAX_WINDOWS = 16                  # abi.MAX_WINDOWS
MAX_SCHED_US = 10 * SECOND        # a major frame, window, budget or period: at most 10 s
# RTDS servers without budget_us / period_us get Xen's RTDS defaults (xen/common/sched/rt.c).
RTDS_DEFAULT_BUDGET_US = 4000
RTDS_DEFAULT_PERIOD_US = 10000
CREDIT_DEFAULT_WEIGHT = 256       # Xen's credit default
CREDIT_MAX_WEIGHT = 65535
CREDIT_MAX_CAP = 100              # percent of one core; 0: no cap
# The partition keys each scheduler takes: RTDS's server, credit's share.
SCHED_KEYS = {"rtds": ("budget_us", "period_us"), "credit": ("weight", "cap")}

BOARD_KEYS = ("arch", "cpus", "cpu", "memory", "pci")
PARTITION_KEYS = ("name", "cpus", "memory", "image", "initrd", "wfi", "irq", "bootargs",
                  "devices", "unconfined_dma", "on_fault", "max_restarts", "restart_backoff",
                  "pool", "budget_us", "period_us", "weight", "cap", "manager")


@dataclass(frozen=True)
class PciDevice:
    """A device QEMU puts on the board's PCIe bus."""

    model: str
    disk: Path = None             # the raw disk image of a virtio-blk


@dataclass(frozen=True)
class Board:
    """The QEMU virt machine the system runs on."""

    cpus: int = 4
    cpu: str = "cortex-a53"       # the QEMU CPU model; "rv64" on riscv64, which has no choice
    memory: int = 2 * GiB
    pci: tuple = ()               # PciDevice; device i sits in slot 2 + i
    arch: str = ARM64             # layout.VIRT_BOARDS: which board, and its partitions' images

    @property
    def virt(self):
        """The fixed facts of this architecture's board (layout.VirtBoard)."""
        return layout.VIRT_BOARDS[self.arch]


@dataclass(frozen=True)
class Partition:
    """One partition as described, validated and with its image inspected."""

    index: int
    name: str
    cpus: tuple
    memory: int
    image_path: Path
    image: object  # image.GuestImage
    wfi_native: bool = False
    irq_direct: bool = False
    bootargs: str = ""
    devices: tuple = ()           # names in the board's VirtBoard.devices this partition owns
    unconfined_dma: bool = False  # accepts DMA that nothing confines (abi.PF_UNCONFINED_DMA)
    initrd_path: Path = None      # initial ramdisk, loaded below the device tree
    initrd_size: int = 0
    on_fault: str = "inject"      # FAULT_ACTIONS: what a guest fault does
    max_restarts: int = 0         # automatic restarts before it is stopped for good; 0: no limit
    restart_backoff_us: int = 0   # wait before the first automatic restart; 0: none
    pool: str = None              # its [[pool]]'s name; None: an implicit null pool of its cores
    budget_us: int = 0            # RTDS pool: its server's budget every period_us (else 0)
    period_us: int = 0
    weight: int = 0               # credit pool: its share (else 0) ...
    cap: int = 0                  # ... and cap, percent of one core (0: none)
    manager: bool = False         # may call tern ctl's operations as hypercalls (abi.PF_MANAGER)

    @property
    def toml_key(self):
        """How messages name this partition's table: partition[i]."""
        return f"partition[{self.index}]"


@dataclass(frozen=True)
class Window:
    """An ARINC 653 window: `partition`'s vCPUs run on the pool's cores for duration_us."""

    partition: str
    duration_us: int


@dataclass(frozen=True)
class Pool:
    """Cores with a scheduler of their own, and (ARINC 653) its major frame and windows."""

    index: int
    name: str
    cpus: tuple
    scheduler: str                # SCHEDULERS
    major_frame_us: int = 0
    windows: tuple = ()           # Window, in order from the frame's start

    @property
    def toml_key(self):
        """How messages name this pool's table: pool[i]."""
        return f"pool[{self.index}]"

    @property
    def shared(self):
        """Whether its scheduler shares a core between vCPUs (all but null)."""
        return self.scheduler != "null"


@dataclass(frozen=True)
class Channel:
    """Shared memory that several partitions map, each with a doorbell the others can ring."""

    index: int
    name: str
    size: int
    members: tuple                # partition names that map it read-write ...
    readonly: tuple = ()          # ... and those that map it read-only

    @property
    def toml_key(self):
        """How messages name this channel's table: channel[i]."""
        return f"channel[{self.index}]"

    @property
    def all_members(self):
        """Every partition of the channel in member index order: members, then readonly."""
        return self.members + self.readonly

    def writable(self, name):
        return name in self.members


@dataclass(frozen=True)
class Virtio:
    """A VirtIO device: `frontend` drives it at a virtio-mmio slot, `backend` serves it."""

    index: int
    name: str
    device: str                   # VIRTIO_DEVICES
    frontend: str                 # partition names
    backend: str
    disk_path: Path = None        # blk with a bare-metal backend: the image it serves ...
    disk_size: int = 0            # ... loaded as the backend's initrd
    trusted: bool = False         # backend_trusted: the backend maps all of the frontend's RAM

    @property
    def toml_key(self):
        """How messages name this device's table: virtio[i]."""
        return f"virtio[{self.index}]"


@dataclass(frozen=True)
class System:
    """A whole system description."""

    source: str          # the path as the user gave it, for messages
    board: Board
    partitions: tuple = field(default=())
    channels: tuple = field(default=())   # Channel, in description order
    virtio: tuple = field(default=())     # Virtio, in description order
    pools: tuple = field(default=())      # Pool, in description order

    def pool_of(self, p):
        """Partition p's Pool, or None (an implicit null pool of its own cores)."""
        return next((q for q in self.pools if q.name == p.pool), None)

    def members(self, pool):
        """The partitions in `pool`, in description order."""
        return tuple(p for p in self.partitions if p.pool == pool.name)

    def initrd_of(self, p):
        """(path, size, key) of what partition `p` gets as its initrd: its own, or the disk
        of a blk it serves (the key names the field in messages); (None, 0, None): none."""
        if p.initrd_path is not None:
            return p.initrd_path, p.initrd_size, f"{p.toml_key}.initrd"
        for v in self.virtio:
            if v.backend == p.name and v.disk_path is not None:
                return v.disk_path, v.disk_size, f"{v.toml_key}.disk"
        return None, 0, None


def parse_size(value, field):
    """Bytes from an int or an 'N KiB|MiB|GiB|TiB' string."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigError(field, f'must be a size in bytes or a string like "64MiB" '
                                 f'(got {_show(value)})')
    if isinstance(value, int):
        if value <= 0:
            raise ConfigError(field, f"must be positive (got {show_int(value)})")
        return value
    m = SIZE_RE.fullmatch(value)
    if not m:
        raise ConfigError(field, f'{_show(value)} is not a size (use bytes, or "N KiB", '
                                 f'"N MiB", "N GiB", "N TiB")')
    return _digits(m.group(1), field, value) * UNITS[m.group(2)]


def _digits(digits, field, value):
    """The number ASCII `digits` write; more than MAX_DIGITS of them is no size or duration
    tern takes (and int() refuses thousands)."""
    if len(digits.lstrip("0")) > MAX_DIGITS:
        raise ConfigError(field, f"{_show(value)} is far too large")
    return int(digits)


def parse_duration(value, field):
    """Microseconds from 0 or an 'N us|ms|s' string.

    A bare number other than 0 is refused: 10 could be any unit.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value == 0:
        return 0
    m = DURATION_RE.fullmatch(value) if isinstance(value, str) else None
    if not m:
        raise ConfigError(field, f'{_show(value)} is not a duration (use "N us", "N ms" '
                                 f'or "N s")')
    return _digits(m.group(1), field, value) * DURATION_UNITS[m.group(2)]


def load_system(path):
    """Read and validate the TOML system description at `path`.

    Only a regular file of at most MAX_DESCRIPTION_BYTES is read (a FIFO or a device is
    refused without being opened); a UTF-8 byte order mark at its start is skipped.
    """
    source = str(path)
    try:
        data = read_bounded(path, MAX_DESCRIPTION_BYTES)
    except NotAFile as e:
        raise ConfigError(None, e.problem, file=source) from None
    except OSError as e:
        raise ConfigError(None, f"cannot read ({e.strerror})", file=source) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise ConfigError(f"line {line}", f"not UTF-8 text ({e.reason})", file=source) from None
    if text.startswith(UTF8_BOM):
        text = text[len(UTF8_BOM):]
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _syntax_error(e, source) from None
    except RecursionError:
        raise ConfigError("TOML syntax", "arrays or tables nested too deeply",
                          file=source) from None
    except ValueError as e:
        # tomllib lets int() refuse a number of more than sys.get_int_max_str_digits() digits.
        if "integer string conversion" in str(e):
            message = f"a number too long to read (more than {sys.get_int_max_str_digits()} digits)"
        else:
            message = f"cannot read: {e}"
        raise ConfigError("TOML syntax", message, file=source) from None
    try:
        return parse_system(doc, Path(path).parent, source)
    except ConfigError as e:
        e.file = source
        raise


def _known_keys(table, at, known, expected=None):
    """The first key of `table` not in `known` is an error at `at.key` (`at` the table as the
    TOML names it, pool[0] say, or None for the document itself), with what was `expected`
    where the keys are few enough to list; load_system adds the file."""
    for key in table:
        if key not in known:
            field = show_key(key) if at is None else f"{at}.{show_key(key)}"
            raise ConfigError(field, "unknown key" + (f" (expected {expected})" if expected else ""))


def parse_system(doc, base_dir, source="<system>"):
    """Validate a parsed TOML document; image paths resolve against base_dir."""
    _known_keys(doc, None, ("board", "partition", "channel", "virtio", "pool"),
                "[board], [[partition]], [[channel]], [[virtio]] and [[pool]]")
    board = _parse_board(doc.get("board", {}), base_dir)
    pools = _parse_pools(doc.get("pool", []), board)

    entries = doc.get("partition")
    if entries is None:
        raise ConfigError("partition", "at least one [[partition]] is required")
    if not isinstance(entries, list) or not all(isinstance(p, dict) for p in entries):
        raise ConfigError("partition", "must be an array of tables ([[partition]])")
    if not entries:
        raise ConfigError("partition", "at least one [[partition]] is required")
    if len(entries) > MAX_PARTITIONS:
        raise ConfigError("partition", f"at most {MAX_PARTITIONS} partitions are supported "
                                       f"(got {len(entries)})")

    partitions = []
    core_owner = {}
    device_owner = {}
    for index, entry in enumerate(entries):
        p = _parse_partition(index, entry, board, base_dir, partitions, core_owner, device_owner,
                             pools)
        partitions.append(p)
    pools = _check_pools(doc.get("pool", []), pools, partitions, board)
    channels = _parse_channels(doc.get("channel", []), board, partitions)
    virtio = _parse_virtio(doc.get("virtio", []), board, partitions, channels, base_dir)
    _check_shared_pool_lines(pools, partitions, channels, virtio)
    return System(source=source, board=board, partitions=tuple(partitions),
                  channels=channels, virtio=virtio, pools=pools)


def _parse_pools(entries, board):
    """The [[pool]] tables on their own: names, cores, schedulers, major frames (windows name
    partitions: _check_pools reads them once the partitions are parsed)."""
    if not isinstance(entries, list) or not all(isinstance(q, dict) for q in entries):
        raise ConfigError("pool", "must be an array of tables ([[pool]])")
    if len(entries) > MAX_POOLS:
        raise ConfigError("pool", f"at most {MAX_POOLS} pools are supported (got {len(entries)})")
    pools = []
    core_pool = {}
    for index, entry in enumerate(entries):
        at = f"pool[{index}]"
        _known_keys(entry, at, POOL_KEYS)
        name = _parse_name(entry, at, pools, "pool")
        if "cpus" not in entry:
            raise ConfigError(f"{at}.cpus", "missing (list the pool's physical cores, like [2])")
        cpus = entry["cpus"]
        if (not isinstance(cpus, list) or not cpus
                or not all(isinstance(c, int) and not isinstance(c, bool) for c in cpus)):
            raise ConfigError(f"{at}.cpus", f"must be a non-empty list of core numbers, like "
                                            f"[2] (got {_show(cpus)})")
        for core in cpus:
            if not 0 <= core < board.cpus:
                raise ConfigError(f"{at}.cpus", f"core {show_int(core)} is out of range "
                                                f"(board has {board.cpus} cores)")
            if core in core_pool:
                other = core_pool[core]
                what = "listed twice" if other == name else f'already in pool "{other}"'
                raise ConfigError(f"{at}.cpus", f"core {core} is {what}")
            core_pool[core] = name
        if "scheduler" not in entry:
            raise ConfigError(f"{at}.scheduler", f"missing ({_either(SCHEDULERS)})")
        scheduler = entry["scheduler"]
        if scheduler not in SCHEDULERS:
            raise ConfigError(f"{at}.scheduler", f"unknown scheduler {_show(scheduler)} "
                                                 f"(use {_either(SCHEDULERS)})")
        major = 0
        if scheduler != "arinc653":
            for key in ("major_frame_us", "windows"):
                if key in entry:
                    raise ConfigError(f"{at}.{key}", f'only for scheduler = "arinc653" (this '
                                                     f'pool\'s is "{scheduler}")')
        else:
            if "major_frame_us" not in entry:
                raise ConfigError(f"{at}.major_frame_us", "missing (the ARINC 653 major frame, "
                                                          "in microseconds, like 20000)")
            major = _parse_us(entry["major_frame_us"], f"{at}.major_frame_us")
        pools.append(Pool(index=index, name=name, cpus=tuple(cpus), scheduler=scheduler,
                          major_frame_us=major))
    return pools


def _parse_us(value, key, least=1, most=MAX_SCHED_US):
    """A whole number of microseconds from `least` to `most`."""
    if (isinstance(value, bool) or not isinstance(value, int)
            or not least <= value <= most):
        raise ConfigError(key, f"must be a whole number of microseconds from {least} to "
                               f"{most} (got {_show(value)})")
    return value


def _parse_pool_membership(entry, at, name, board, pools):
    """(pool, budget_us, period_us, weight, cap): partition `name`'s pool (None: none) and
    the scheduling keys its scheduler takes, defaults filled in, the others refused."""
    pool = None
    if "pool" in entry:
        value = entry["pool"]
        pool = next((q for q in pools if q.name == value), None)
        if pool is None:
            known = ", ".join(q.name for q in pools) or "none is declared"
            raise ConfigError(f"{at}.pool", f"unknown pool {_show(value)} (pools: {known})")
    scheduler = pool.scheduler if pool else "null"
    takes = SCHED_KEYS.get(scheduler, ())
    for key in ("budget_us", "period_us", "weight", "cap"):
        if key in entry and key not in takes:
            wanted = "rtds" if key in SCHED_KEYS["rtds"] else "credit"
            where = f'pool "{pool.name}" is {scheduler}' if pool else "it names no pool"
            raise ConfigError(f"{at}.{key}", f"only for a partition of an {wanted} pool "
                                             f"({where})")
    budget = period = weight = cap = 0
    if scheduler == "rtds":
        period = _parse_us(entry.get("period_us", RTDS_DEFAULT_PERIOD_US), f"{at}.period_us")
        budget = _parse_us(entry.get("budget_us", RTDS_DEFAULT_BUDGET_US), f"{at}.budget_us")
        if budget > period:
            raise ConfigError(f"{at}.budget_us", f"{budget} us is more than period_us "
                                                 f"({period} us)")
    if scheduler == "credit":
        weight = entry.get("weight", CREDIT_DEFAULT_WEIGHT)
        if (isinstance(weight, bool) or not isinstance(weight, int)
                or not 1 <= weight <= CREDIT_MAX_WEIGHT):
            raise ConfigError(f"{at}.weight", f"must be a whole number from 1 to "
                                              f"{CREDIT_MAX_WEIGHT} (got {_show(weight)})")
        cap = entry.get("cap", 0)
        if isinstance(cap, bool) or not isinstance(cap, int) or not 0 <= cap <= CREDIT_MAX_CAP:
            raise ConfigError(f"{at}.cap", f"must be a percentage of one core from 0 (no cap) "
                                           f"to {CREDIT_MAX_CAP} (got {_show(cap)})")
    return pool, budget, period, weight, cap


def _check_pools(entries, pools, partitions, board):
    """What needs the partitions: each ARINC 653 pool's windows, each RTDS pool's load on its
    cores, and on each shared core no more trap-less vCPUs than the board can hold."""
    by_name = {p.name: p for p in partitions}
    out = []
    for pool in pools:
        at = pool.toml_key
        members = [p for p in partitions if p.pool == pool.name]
        windows = ()
        if pool.scheduler == "arinc653":
            windows = _parse_windows(entries[pool.index].get("windows"), at, pool, by_name)
            total = sum(w.duration_us for w in windows)
            if total > pool.major_frame_us:
                raise ConfigError(f"{at}.windows", f"the windows add up to {total} us, more than "
                                                   f"major_frame_us ({pool.major_frame_us} us)")
        if pool.scheduler == "rtds":
            _check_utilisation(at, pool, members)
        if pool.shared and board.cpu == "max":
            # A switch saves and restores FP/SIMD only: a guest's SVE or SME state would be lost
            # (the hypervisor refuses it at boot too, arm64_shared_pool_check).
            raise ConfigError(f"{at}.scheduler", f'pool "{pool.name}" ({pool.scheduler}) on '
                                                 f'cpu = "max": these cores offer SVE or SME to '
                                                 f"guests, which a shared core does not switch "
                                                 f"(a core model without them shares: "
                                                 f"cortex-a53, cortex-a57)")
        if pool.shared and board.virt.shared_direct_vcpus:
            _check_direct_vcpus(pool, members, board)
        out.append(Pool(index=pool.index, name=pool.name, cpus=pool.cpus,
                        scheduler=pool.scheduler, major_frame_us=pool.major_frame_us,
                        windows=windows))
    return tuple(out)


def _check_shared_pool_lines(pools, partitions, channels, virtio):
    """Not built yet: a shared core's vCPUs take their own virtual interrupts only (timers, IPIs
    between them, the UART's, and a trap-less vCPU's guest interrupt file where the board has
    one for each: _check_direct_vcpus); a device's, a doorbell's or a VirtIO slot's line would
    wait for a vCPU that is not running."""
    shared = {q.name for q in pools if q.shared}
    for p in partitions:
        if p.pool not in shared:
            continue
        what = None
        if p.devices:
            what = ("devices", "devices passed through")
        elif any(p.name in c.all_members for c in channels):
            what = ("pool", "channels")
        elif any(p.name in (v.frontend, v.backend) for v in virtio):
            what = ("pool", "VirtIO devices")
        if what:
            raise ConfigError(f"{p.toml_key}.{what[0]}",
                              f'partition "{p.name}" is in pool "{p.pool}", a shared pool: '
                              f"{what[1]} there are not built yet (only null pools have them)")


def _parse_windows(value, at, pool, by_name):
    key = f"{at}.windows"
    if value is None:
        raise ConfigError(key, 'missing (the major frame\'s windows, in order: [ { partition = '
                               '"a", duration_us = 10000 }, ... ])')
    if not isinstance(value, list) or not value or not all(isinstance(w, dict) for w in value):
        raise ConfigError(key, f"must be a non-empty list of tables like {{ partition = \"a\", "
                               f"duration_us = 10000 }} (got {_show(value)})")
    if len(value) > MAX_WINDOWS:
        raise ConfigError(key, f"at most {MAX_WINDOWS} windows (got {len(value)})")
    windows = []
    for n, entry in enumerate(value):
        wat = f"{key}[{n}]"
        _known_keys(entry, wat, WINDOW_KEYS, "partition and duration_us")
        if "partition" not in entry:
            raise ConfigError(f"{wat}.partition", "missing (the partition that runs in it)")
        name = entry["partition"]
        if name not in by_name:
            raise ConfigError(f"{wat}.partition", f"unknown partition {_show(name)} "
                                                  f"(known: {', '.join(by_name)})")
        if by_name[name].pool != pool.name:
            raise ConfigError(f"{wat}.partition", f'partition "{name}" is not in pool '
                                                  f'"{pool.name}" (its pool key)')
        if "duration_us" not in entry:
            raise ConfigError(f"{wat}.duration_us", "missing (the window's length in "
                                                    "microseconds)")
        windows.append(Window(name, _parse_us(entry["duration_us"], f"{wat}.duration_us")))
    return tuple(windows)


def _check_utilisation(at, pool, members):
    """EDF meets every deadline on a core whose servers ask for no more than all of it."""
    for core in pool.cpus:
        load = Fraction(0)
        users = []
        for p in members:
            vcpus = sum(1 for c in p.cpus if c == core)
            if vcpus:
                load += vcpus * Fraction(p.budget_us, p.period_us)
                users.append(f"{p.name} {vcpus} x {p.budget_us}/{p.period_us} us")
        if load > 1:
            raise ConfigError(f"{at}.cpus", f"core {core} is asked for {float(load):.0%} of its "
                                            f"time ({', '.join(users)}): RTDS meets its "
                                            f"deadlines up to 100 %")


def _check_direct_vcpus(pool, members, board):
    """Each trap-less vCPU of a shared core keeps its own interrupt state on it (riscv64: a
    guest interrupt file of the hart): no more of them than the hart has."""
    most = board.virt.shared_direct_vcpus
    for core in pool.cpus:
        direct = [p for p in members if p.irq_direct for c in p.cpus if c == core]
        if len(direct) > most:
            p = direct[most]
            raise ConfigError(f"{p.toml_key}.irq", f'core {core} of pool "{pool.name}" would '
                                                   f'have {len(direct)} trap-less vCPUs '
                                                   f'(irq = "direct"), more than the {most} '
                                                   f"{board.virt.shared_direct_what}")


def _parse_virtio(entries, board, partitions, channels, base_dir):
    """The [[virtio]] tables, checked against the partitions and channels already parsed."""
    if not isinstance(entries, list) or not all(isinstance(v, dict) for v in entries):
        raise ConfigError("virtio", "must be an array of tables ([[virtio]])")
    virt = board.virt
    if entries and (not virt.doorbell_irqs or virt.virtio_slots is None):
        raise ConfigError("virtio[0]", f"not on {board.arch}: the board has no virtio-mmio "
                                       f"slot or spare interrupt for it")
    if len(entries) > MAX_VIRTIO:
        raise ConfigError("virtio", f"at most {MAX_VIRTIO} virtio devices are supported "
                                    f"(got {len(entries)})")
    devices = []
    for index, entry in enumerate(entries):
        devices.append(_parse_virtio_device(index, entry, partitions, channels, devices,
                                            base_dir))
    # The i-th device of the description is at the board's slot i, whichever its frontend: a
    # slot's interrupt can belong to one partition only.
    slots = virt.virtio_slots.count
    if len(devices) > slots:
        raise ConfigError(f"{devices[slots].toml_key}", f"{len(devices)} virtio devices, but "
                          f"the {board.arch} board has {slots} virtio-mmio slots (one per "
                          f"device, whichever its frontend)")
    return tuple(devices)


def _parse_virtio_device(index, entry, partitions, channels, earlier, base_dir):
    at = f"virtio[{index}]"
    _known_keys(entry, at, VIRTIO_KEYS)
    # One namespace with the channels: each device is a channel of the blob, named as it.
    name = _parse_name(entry, at, (*channels, *earlier), "virtio device")
    if "device" not in entry:
        raise ConfigError(f"{at}.device", f"missing (the device type: "
                                          f"{_either(VIRTIO_DEVICES)})")
    device = entry["device"]
    if device not in VIRTIO_DEVICES:
        raise ConfigError(f"{at}.device", f"unknown device {_show(device)} "
                                          f"(use {_either(VIRTIO_DEVICES)})")
    by_name = {p.name: p for p in partitions}
    ends = {}
    for role, what in (("frontend", "the partition that drives the device"),
                       ("backend", "the partition that serves it")):
        if role not in entry:
            raise ConfigError(f"{at}.{role}", f"missing ({what})")
        value = entry[role]
        if value not in by_name:
            raise ConfigError(f"{at}.{role}", f"unknown partition {_show(value)} "
                                              f"(known: {', '.join(by_name)})")
        ends[role] = value
    frontend, backend = ends["frontend"], ends["backend"]
    if frontend == backend:
        raise ConfigError(f"{at}.backend", f'"{backend}" is the frontend too: a device is '
                                           f"served by another partition")
    trusted = entry.get("backend_trusted", False)
    if not isinstance(trusted, bool):
        raise ConfigError(f"{at}.backend_trusted", f"must be true or false "
                                                   f"(got {_show(trusted)})")
    if trusted and by_name[backend].image.linux:
        raise ConfigError(f"{at}.backend_trusted", f'backend "{backend}" runs Linux, whose '
                                                   f"backend (tern-vio) reaches the channel "
                                                   f"through a PCI function and cannot map "
                                                   f"{frontend}'s RAM: a trusted device needs a "
                                                   f"bare-metal backend (vback)")
    if trusted and device == "vsock":
        raise ConfigError(f"{at}.backend_trusted", "a vsock device is served in mediated mode "
                                                   "only: vback fills the frontend's receive "
                                                   "buffers it holds in their channel slots")
    disk_path, disk_size = _parse_virtio_disk(entry, at, device, by_name[backend], earlier,
                                              base_dir)
    return Virtio(index=index, name=name, device=device, frontend=frontend, backend=backend,
                  disk_path=disk_path, disk_size=disk_size, trusted=trusted)


def _parse_virtio_disk(entry, at, device, backend, earlier, base_dir):
    """(path, size) of a blk's disk image, which a bare-metal backend gets as its initrd; a
    Linux backend (its image a Linux kernel) serves a file of its own and gets none."""
    key = f"{at}.disk"
    disk = entry.get("disk")
    if device != "blk":
        if disk is not None:
            raise ConfigError(key, f"a {device} device has no disk")
        return None, 0
    if backend.image.linux:
        if disk is not None:
            raise ConfigError(key, f'backend "{backend.name}" runs Linux: a Linux backend '
                                   f"serves a file of its own")
        return None, 0
    if disk is None:
        raise ConfigError(key, f'missing: backend "{backend.name}" is bare metal, and serves '
                               f'the disk image given here (disk = "FILE")')
    if backend.initrd_path is not None:
        raise ConfigError(key, f'backend "{backend.name}" names an initrd of its own, where the '
                               f"disk image would be loaded")
    for other in earlier:
        if other.backend == backend.name and other.disk_path is not None:
            raise ConfigError(key, f'backend "{backend.name}" already serves the disk of '
                                   f"{other.toml_key} (one disk a backend: its initrd)")
    path, size = _parse_initrd(disk, key, base_dir)
    return path, size


def _parse_channels(entries, board, partitions):
    """The [[channel]] tables, checked against the partitions already parsed."""
    if not isinstance(entries, list) or not all(isinstance(c, dict) for c in entries):
        raise ConfigError("channel", "must be an array of tables ([[channel]])")
    if entries and not board.virt.doorbell_irqs:
        raise ConfigError("channel[0]", f"not on {board.arch}: the board has no spare "
                                        f"interrupt for a doorbell")
    if len(entries) > MAX_CHANNELS:
        raise ConfigError("channel", f"at most {MAX_CHANNELS} channels are supported "
                                     f"(got {len(entries)})")
    names = tuple(p.name for p in partitions)
    channels = []
    for index, entry in enumerate(entries):
        channels.append(_parse_channel(index, entry, names, channels))
    return tuple(channels)


def _parse_channel(index, entry, partition_names, earlier):
    at = f"channel[{index}]"
    _known_keys(entry, at, CHANNEL_KEYS)
    name = _parse_name(entry, at, earlier, "channel")
    if "size" not in entry:
        raise ConfigError(f"{at}.size", 'missing (give the shared memory\'s size, like "64KiB")')
    size = parse_size(entry["size"], f"{at}.size")
    if size > CHANNEL_SIZE_MAX:
        raise ConfigError(f"{at}.size", f"must be at most {format_size(CHANNEL_SIZE_MAX)} "
                                        f"(got {format_size(size, round_up=True)})")
    if size % CHANNEL_SIZE_ALIGN:
        raise ConfigError(f"{at}.size", f"must be a multiple of 4 KiB (got {format_size(size)})")
    if "members" not in entry:
        raise ConfigError(f"{at}.members", 'missing (list the partitions that share it, '
                                           'like ["a", "b"])')
    members = _channel_partitions(entry["members"], f"{at}.members", partition_names, ())
    if not members:
        raise ConfigError(f"{at}.members", "must list at least one partition (which maps it "
                                           "read-write)")
    readonly = _channel_partitions(entry.get("readonly", []), f"{at}.readonly",
                                   partition_names, members)
    if len(members) + len(readonly) < 2:
        raise ConfigError(f"{at}.members", f'a channel needs at least two partitions '
                                           f'(members and readonly together; got "{members[0]}" '
                                           f"alone)")
    return Channel(index=index, name=name, size=size, members=members, readonly=readonly)


def _channel_partitions(value, key, partition_names, earlier):
    """The partition names a channel's members (or readonly) list gives: known, and each
    listed once there and in `earlier` (its members, for readonly)."""
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise ConfigError(key, f'must be a list of partition names, like ["a", "b"] '
                               f"(got {_show(value)})")
    if len(earlier) + len(value) > MAX_CHANNEL_MEMBERS:
        raise ConfigError(key, f"at most {MAX_CHANNEL_MEMBERS} partitions share a channel "
                               f"(got {len(earlier) + len(value)})")
    seen = []
    for name in value:
        if name not in partition_names:
            raise ConfigError(key, f"unknown partition {_show(name)} "
                                   f"(known: {', '.join(partition_names)})")
        if name in seen:
            raise ConfigError(key, f'"{name}" is listed twice')
        if name in earlier:
            raise ConfigError(key, f'"{name}" is already in members')
        seen.append(name)
    return tuple(seen)


def _syntax_error(e, source):
    # tomllib says "Expected '=' after a key ... (at line 3, column 5)"; put
    # the position where a field name would go so the line reads the same way.
    text = str(e)
    m = re.search(r"\s*\(at line (\d+), column (\d+)\)$", text)
    where = "TOML syntax"
    if m:
        where = f"line {m.group(1)}, column {m.group(2)}"
        text = text[:m.start()]
    elif text.endswith("(at end of document)"):
        where = "end of file"
        text = text[:-len("(at end of document)")].rstrip()
    return ConfigError(where, f"TOML syntax error: {text[:1].lower()}{text[1:]}", file=source)


def _parse_board(table, base_dir):
    if not isinstance(table, dict):
        raise ConfigError("board", "must be a table ([board])")
    _known_keys(table, "board", BOARD_KEYS)
    # First: the architecture decides what the other keys may say.
    arch = table.get("arch", Board.arch)
    if not isinstance(arch, str) or arch not in layout.VIRT_BOARDS:
        raise ConfigError("board.arch", f"must be {_either(layout.VIRT_BOARDS)} "
                                        f"(got {_show(arch)})")
    virt = layout.VIRT_BOARDS[arch]
    cpus = table.get("cpus", Board.cpus)
    if isinstance(cpus, bool) or not isinstance(cpus, int) or not 1 <= cpus <= MAX_CPUS:
        raise ConfigError("board.cpus", f"must be a whole number from 1 to {MAX_CPUS} "
                                        f"(got {_show(cpus)})")
    cpu = table.get("cpu", virt.default_cpu)
    if "cpu" in table and not virt.cpu_models:
        raise ConfigError("board.cpu", f"not for a {arch} board, whose harts are always QEMU's "
                                       f"{virt.default_cpu} (remove the key)")
    if virt.cpu_models and cpu not in virt.cpu_models:
        models = virt.cpu_models
        raise ConfigError("board.cpu", f"unknown CPU {_show(cpu)} "
                                       f"(use {', '.join(models[:-1])} or {models[-1]})")
    memory = Board.memory
    if "memory" in table:
        memory = parse_size(table["memory"], "board.memory")
        if memory % MiB:
            raise ConfigError("board.memory", f"must be a whole number of MiB "
                                              f"(got {memory} bytes)")
        if memory < BOARD_MEMORY_MIN:
            raise ConfigError("board.memory", f"must be at least {format_size(BOARD_MEMORY_MIN)} "
                                              f"(got {format_size(memory)})")
        if memory > virt.memory_max:
            got = format_size(memory, round_up=True)
            raise ConfigError("board.memory", f"must be at most {format_size(virt.memory_max)} "
                                              f"(got {got}): {virt.memory_max_reason}")
    pci = table.get("pci", [])
    if not isinstance(pci, list):
        raise ConfigError("board.pci", f'must be a list of PCI devices, like ["edu"] '
                                       f"(got {_show(pci)})")
    if len(pci) > MAX_PCI_DEVICES:
        raise ConfigError("board.pci", f"at most {MAX_PCI_DEVICES} PCI devices "
                                       f"(got {len(pci)})")
    pci = [_parse_pci_device(entry, f"board.pci[{i}]", base_dir) for i, entry in enumerate(pci)]
    return Board(cpus=cpus, cpu=cpu, memory=memory, pci=tuple(pci), arch=arch)


def _parse_pci_device(entry, key, base_dir):
    """A [board] pci entry: a model name, or a table {model = ..., disk = ...}."""
    allowed = ", ".join(PCI_MODELS)
    if isinstance(entry, str):
        entry = {"model": entry}
    if not isinstance(entry, dict):
        raise ConfigError(key, f'must be a model name or a table like {{model = "virtio-blk", '
                               f'disk = "disk.img"}} (got {_show(entry)})')
    _known_keys(entry, key, PCI_ENTRY_KEYS, "model and disk")
    model = entry.get("model")
    if model not in PCI_MODELS:
        raise ConfigError(key, f"unknown PCI device model {_show(model)} (allowed: {allowed})")
    disk = entry.get("disk")
    if model not in PCI_DISK_MODELS:
        if disk is not None:
            raise ConfigError(f"{key}.disk", f"{model} has no disk")
        return PciDevice(model)
    if disk is None:
        raise ConfigError(f"{key}.disk", f'{model} needs a disk image (disk = "FILE")')
    if not isinstance(disk, str) or not disk:
        raise ConfigError(f"{key}.disk", f"must be a file path (got {_show(disk)})")
    path = Path(base_dir) / disk
    _file_size(path, f"{key}.disk")
    return PciDevice(model, path)


def _parse_partition(index, entry, board, base_dir, earlier, core_owner, device_owner,
                     pools=()):
    at = f"partition[{index}]"
    _known_keys(entry, at, PARTITION_KEYS)
    name = _parse_name(entry, at, earlier)
    pool, budget_us, period_us, weight, cap = _parse_pool_membership(entry, at, name, board,
                                                                     pools)
    cpus = _parse_cpus(entry, at, name, board, core_owner, pool, pools)
    memory = _parse_memory(entry, at)
    image_path, image = _parse_image(entry, at, board, base_dir, memory)
    initrd_path, initrd_size = _parse_initrd(entry.get("initrd"), f"{at}.initrd", base_dir)
    virt = board.virt
    irq, wfi = _parse_irq_and_wfi(entry, at, virt, pool)
    bootargs = _parse_bootargs(entry.get("bootargs", ""), f"{at}.bootargs")
    devices, unconfined_dma = _parse_devices_and_dma(entry, at, name, virt, device_owner)
    on_fault, max_restarts, restart_backoff_us = _parse_fault_policy(entry, at)
    manager = entry.get("manager", False)
    if not isinstance(manager, bool):
        raise ConfigError(f"{at}.manager", f"must be true or false (got {_show(manager)})")
    return Partition(index=index, name=name, cpus=tuple(cpus), memory=memory,
                     image_path=image_path, image=image, wfi_native=(wfi == "native"),
                     irq_direct=(irq == "direct"), bootargs=bootargs, devices=devices,
                     unconfined_dma=unconfined_dma,
                     initrd_path=initrd_path, initrd_size=initrd_size, on_fault=on_fault,
                     max_restarts=max_restarts, restart_backoff_us=restart_backoff_us,
                     pool=pool.name if pool else None, budget_us=budget_us, period_us=period_us,
                     weight=weight, cap=cap, manager=manager)


def _parse_name(entry, at, earlier, kind="partition"):
    """A partition's or channel's (`kind`) name, unique among the `earlier` ones."""
    if "name" not in entry:
        raise ConfigError(f"{at}.name", f"missing (every {kind} needs a name)")
    name = entry["name"]
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise ConfigError(f"{at}.name", f"{_show(name)} must be 1 to 15 characters "
                                        f"from a-z, 0-9, _ and -")
    for other in earlier:
        if other.name == name:
            raise ConfigError(f"{at}.name", f'"{name}" is already the name of {other.toml_key}')
    return name


def _parse_cpus(entry, at, name, board, core_owner, pool=None, pools=()):
    """The partition's physical cores, each recorded in core_owner (core -> partition name):
    a core of a [[pool]] is its members' only; a null pool's (and no pool's) one vCPU per
    core; a shared pool's cores are its members' vCPUs' affinity, several on one core."""
    if "cpus" not in entry:
        raise ConfigError(f"{at}.cpus", "missing (list the physical cores, like [1])")
    cpus = entry["cpus"]
    if (not isinstance(cpus, list) or not cpus
            or not all(isinstance(c, int) and not isinstance(c, bool) for c in cpus)):
        raise ConfigError(f"{at}.cpus", f"must be a non-empty list of core numbers, like [1] "
                                        f"(got {_show(cpus)})")
    if len(cpus) > MAX_CPUS:
        raise ConfigError(f"{at}.cpus", f"at most {MAX_CPUS} vCPUs per partition "
                                        f"(got {len(cpus)})")
    for core in cpus:
        if not 0 <= core < board.cpus:
            raise ConfigError(f"{at}.cpus", f"core {show_int(core)} is out of range "
                                            f"(board has {board.cpus} cores)")
        owner_pool = next((q for q in pools if core in q.cpus), None)
        if pool is None and owner_pool is not None:
            raise ConfigError(f"{at}.cpus", f'core {core} is in pool "{owner_pool.name}", and '
                                            f"the partition names no pool (a pool's cores are "
                                            f"its members' only)")
        if pool is not None and core not in pool.cpus:
            raise ConfigError(f"{at}.cpus", f'core {core} is not in its pool "{pool.name}" '
                                            f"(cores {', '.join(map(str, pool.cpus))})")
        if pool is not None and pool.shared:
            continue
        if core in core_owner:
            owner = core_owner[core]
            if owner == name:
                raise ConfigError(f"{at}.cpus", f"core {core} is listed twice")
            raise ConfigError(f"{at}.cpus", f'core {core} is already used by partition "{owner}"')
        core_owner[core] = name
    return cpus


def _parse_memory(entry, at):
    if "memory" not in entry:
        raise ConfigError(f"{at}.memory", 'missing (give the RAM size, like "64MiB")')
    memory = parse_size(entry["memory"], f"{at}.memory")
    # Too much is said first: for "1TiB" or "2049MiB" the size is what to fix, not its alignment.
    if memory > PARTITION_MEMORY_MAX:
        raise ConfigError(f"{at}.memory", f"must be at most {format_size(PARTITION_MEMORY_MAX)} "
                                          f"(got {format_size(memory, round_up=True)})")
    if memory % PARTITION_MEMORY_ALIGN:
        raise ConfigError(f"{at}.memory", f"must be a multiple of 2 MiB "
                                          f"(got {format_size(memory)})")
    if memory < PARTITION_MEMORY_MIN:
        raise ConfigError(f"{at}.memory", f"must be at least {format_size(PARTITION_MEMORY_MIN)} "
                                          f"(got {format_size(memory)})")
    return memory


def _parse_image(entry, at, board, base_dir, memory):
    """(path, image.inspect's view of it): a guest image for the board that fits in `memory`."""
    if "image" not in entry:
        raise ConfigError(f"{at}.image", "missing (path of the guest's Image, ELF or raw binary)")
    image_value = entry["image"]
    if not isinstance(image_value, str) or not image_value:
        raise ConfigError(f"{at}.image", f"must be a file path (got {_show(image_value)})")
    image_path = Path(base_dir) / image_value
    shown = show_path(os.path.normpath(image_path))
    _file_size(image_path, f"{at}.image")
    try:
        image = inspect(image_path, (board.arch,), raw_arch=board.arch)
    except ImageError as e:
        raise ConfigError(f"{at}.image", e.message(shown)) from None
    except NotAFile as e:
        raise ConfigError(f"{at}.image", f"{e.problem}: {shown}") from None
    except OSError as e:
        raise ConfigError(f"{at}.image", f"cannot read {shown}: {e.strerror}") from None
    # Only the headers have been read: what the image needs is checked before anything
    # reads more of it (an Image is loaded whole; an ELF's segments span mem_size).
    if image.mem_size > memory:
        what = "needs" if image.kind == "ELF" else "is"
        raise ConfigError(f"{at}.image", f"{shown} {what} "
                                         f"{format_size(image.mem_size, round_up=True)}, more "
                                         f"than the partition's {format_size(memory)} of RAM")
    return image_path, image


def _parse_irq_and_wfi(entry, at, virt, pool=None):
    """(irq, wfi): wfi's default, and whether a combination works, depend on irq, the board
    and the pool: in a shared pool a guest's idle must come back to the scheduler."""
    shared = pool is not None and pool.shared
    irq = entry.get("irq", virt.default_irq)
    if irq not in IRQ_MODES:
        raise ConfigError(f"{at}.irq", f'must be "trap" or "direct" (got {_show(irq)})')
    if shared and irq == "direct" and not virt.shared_direct_vcpus:
        raise ConfigError(f"{at}.irq", f'irq = "direct" in pool "{pool.name}" ({pool.scheduler}): '
                                       f"on {virt.arch} a direct guest owns the core's physical "
                                       f"CPU interface, and its interrupts could not wait while "
                                       f'another vCPU runs (use irq = "trap")')
    wfi = entry.get("wfi", "native" if irq == "direct" and not shared else "trap")
    if wfi not in WFI_MODES:
        raise ConfigError(f"{at}.wfi", f'must be "native" or "trap" (got {_show(wfi)})')
    if shared and wfi == "native":
        raise ConfigError(f"{at}.wfi", f'wfi = "native" in pool "{pool.name}" ({pool.scheduler}): '
                                       f"a guest's idle must come back to the scheduler "
                                       f'(use wfi = "trap")')
    if irq == "direct" and wfi != "native" and virt.direct_needs_native_wfi:
        raise ConfigError(f"{at}.wfi", 'irq = "direct" needs wfi = "native"')
    return irq, wfi


def _parse_bootargs(bootargs, key):
    if not isinstance(bootargs, str):
        raise ConfigError(key, f"must be a string (got {_show(bootargs)})")
    if any(not (" " <= ch <= "~") for ch in bootargs):
        raise ConfigError(key, "must be printable ASCII on one line")
    if len(bootargs) > MAX_BOOTARGS:
        raise ConfigError(key, f"at most {MAX_BOOTARGS} characters (got {len(bootargs)})")
    return bootargs


def _parse_devices_and_dma(entry, at, name, virt, device_owner):
    """(devices, unconfined_dma): what the partition owns, and whether it may own a device
    whose DMA nothing confines."""
    devices = _parse_devices(entry.get("devices", []), f"{at}.devices", name, virt,
                             device_owner)
    unconfined_dma = entry.get("unconfined_dma", False)
    if not isinstance(unconfined_dma, bool):
        raise ConfigError(f"{at}.unconfined_dma", f"must be true or false "
                                                  f"(got {_show(unconfined_dma)})")
    _check_dma(devices, unconfined_dma, f"{at}.devices", virt)
    return devices, unconfined_dma


def _parse_fault_policy(entry, at):
    """(on_fault, max_restarts, restart_backoff_us): what the hypervisor does when the
    partition faults."""
    on_fault = entry.get("on_fault", "inject")
    if on_fault not in FAULT_ACTIONS:
        raise ConfigError(f"{at}.on_fault",
                          f'must be "inject", "stop" or "restart" (got {_show(on_fault)})')
    max_restarts = _parse_max_restarts(entry.get("max_restarts", 0), f"{at}.max_restarts")
    restart_backoff_us = _parse_restart_backoff(entry.get("restart_backoff", 0),
                                                f"{at}.restart_backoff")
    return on_fault, max_restarts, restart_backoff_us


def _parse_max_restarts(value, key):
    """Automatic restarts allowed (0: no limit); true and false are not numbers here."""
    if (isinstance(value, bool) or not isinstance(value, int)
            or not 0 <= value <= MAX_RESTARTS):
        raise ConfigError(key, f"must be a whole number from 0 (no limit) to {MAX_RESTARTS} "
                               f"(got {_show(value)})")
    return value


def _parse_restart_backoff(value, key):
    """The first automatic restart's wait, in microseconds."""
    backoff = parse_duration(value, key)
    if backoff > MAX_RESTART_BACKOFF:
        raise ConfigError(key, f"must be at most {format_duration(MAX_RESTART_BACKOFF)} "
                               f"(got {format_duration(backoff)})")
    return backoff


def _parse_initrd(value, key, base_dir):
    """(path, size) of the initial ramdisk, or (None, 0) when there is none."""
    if value is None:
        return None, 0
    if not isinstance(value, str) or not value:
        raise ConfigError(key, f"must be a file path (got {_show(value)})")
    path = Path(base_dir) / value
    size = _file_size(path, key)
    if size == 0:
        raise ConfigError(key, f"{show_path(os.path.normpath(path))} is empty")
    return path, size


def _file_size(path, key):
    """Size of the regular file at `path`; `key` names the field that gave it in errors.

    Only stat, never open: opening a FIFO waits for a writer, and `tern check` would hang.
    """
    try:
        return check_regular(path).st_size
    except NotAFile as e:
        raise ConfigError(key, f"{e.problem}: {show_path(os.path.normpath(path))}") from None


def _parse_devices(devices, key, name, virt, device_owner):
    """Board devices the partition `name` owns on the board `virt` (layout.VirtBoard);
    device_owner: device -> partition name."""
    if devices != [] and not virt.devices:
        raise ConfigError(key, f"not yet on {virt.arch}: its partitions cannot own board "
                               f"devices (got {_show(devices)})")
    if not isinstance(devices, list) or not all(isinstance(d, str) for d in devices):
        raise ConfigError(key, f'must be a list of board device names, like ["pcie"] '
                               f"(got {_show(devices)})")
    for device in devices:
        if device not in virt.devices:
            raise ConfigError(key, f"unknown device {_show(device)} "
                                   f"(known: {', '.join(virt.devices)})")
        if device in device_owner:
            owner = device_owner[device]
            if owner == name:
                raise ConfigError(key, f'"{device}" is listed twice')
            raise ConfigError(key, f'"{device}" is already given to partition "{owner}"')
        device_owner[device] = name
    return tuple(devices)


def _check_dma(devices, unconfined_dma, key, virt):
    """A device that can do DMA reads and writes what it is told to, and only an IOMMU keeps
    that inside its owner's RAM: on a board without one (riscv64) the partition must say it
    accepts the risk."""
    if virt.iommu or unconfined_dma:
        return
    for device in devices:
        if virt.devices[device].dma:
            raise ConfigError(key, f'"{device}" can do DMA, and the {virt.arch} board has no '
                                   f"IOMMU: a device the partition owns can read and write all "
                                   f"of the board's memory (other partitions', the "
                                   f"hypervisor's); unconfined_dma = true accepts that")


def _either(choices):
    """'"a", "b" or "c"'."""
    quoted = [f'"{c}"' for c in choices]
    return f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else quoted[0]


def _show(value):
    """A value as it would look in the TOML file, escaped and cut short (errors.show_value)."""
    return show_value(value)

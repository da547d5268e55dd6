"""System descriptions: read the TOML, check every field, inspect the images.

`load_system(path)` returns a `System` or raises `ConfigError` naming the file,
the field and what is wrong.  Checks that need addresses (does everything fit
in board RAM, does an image fit in its partition) live in layout.py.
"""

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError
from .image import ImageError, inspect

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30

MAX_CPUS = 8
MAX_PARTITIONS = 8
CPU_MODELS = ("cortex-a53", "cortex-a57", "max")
WFI_MODES = ("native", "trap")
IRQ_MODES = ("trap", "direct")

PARTITION_MEMORY_ALIGN = 2 * MiB
PARTITION_MEMORY_MIN = 4 * MiB
PARTITION_MEMORY_MAX = 2 * GiB
# The hypervisor owns the first 64 MiB; QEMU wants the rest in whole MiB (-m).
BOARD_MEMORY_MIN = 128 * MiB

NAME_RE = re.compile(r"[a-z0-9_-]{1,15}")
SIZE_RE = re.compile(r"\s*(\d+)\s*(KiB|MiB|GiB)\s*")
UNITS = {"KiB": KiB, "MiB": MiB, "GiB": GiB}
MAX_BOOTARGS = 1024

BOARD_KEYS = ("cpus", "cpu", "memory")
PARTITION_KEYS = ("name", "cpus", "memory", "image", "wfi", "irq", "bootargs")


@dataclass(frozen=True)
class Board:
    """The QEMU virt machine the system runs on."""

    cpus: int = 4
    cpu: str = "cortex-a53"
    memory: int = 2 * GiB


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

    @property
    def toml_key(self):
        """How messages name this partition's table: partition[i]."""
        return f"partition[{self.index}]"


@dataclass(frozen=True)
class System:
    """A whole system description."""

    source: str          # the path as the user gave it, for messages
    board: Board
    partitions: tuple = field(default=())


def format_size(n, round_up=False):
    """'64 MiB', '2 GiB', '3.1 GiB': whole numbers bare, else one decimal.

    round_up makes an amount that is a little over a limit never print as
    the limit itself ("need 2.1 GiB", not "need 2 GiB", when it is 2 GiB + 2 MiB).
    """
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= scale:
            break
    else:
        return f"{n} bytes"
    if n % scale == 0:
        return f"{n // scale} {unit}"
    tenths = -(-n * 10 // scale) if round_up else round(n * 10 / scale)
    if tenths % 10 == 0:
        return f"{tenths // 10} {unit}"
    return f"{tenths / 10:.1f} {unit}"


def parse_size(value, field):
    """Bytes from an int or an 'N KiB|MiB|GiB' string."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigError(field, f'must be a size in bytes or a string like "64MiB" '
                                 f'(got {_show(value)})')
    if isinstance(value, int):
        if value <= 0:
            raise ConfigError(field, f"must be positive (got {value})")
        return value
    m = SIZE_RE.fullmatch(value)
    if not m:
        raise ConfigError(field, f'"{value}" is not a size (use bytes, or "N KiB", '
                                 f'"N MiB", "N GiB")')
    return int(m.group(1)) * UNITS[m.group(2)]


def load_system(path):
    """Read and validate the TOML system description at `path`."""
    source = str(path)
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(None, "no such file", file=source) from None
    except IsADirectoryError:
        raise ConfigError(None, "is a directory, not a TOML file", file=source) from None
    except tomllib.TOMLDecodeError as e:
        raise _syntax_error(e, source) from None
    except UnicodeDecodeError as e:
        raise ConfigError(None, f"not UTF-8 text ({e.reason})", file=source) from None
    except OSError as e:
        raise ConfigError(None, f"cannot read: {e.strerror}", file=source) from None
    try:
        return parse_system(doc, Path(path).parent, source)
    except ConfigError as e:
        e.file = source
        raise


def parse_system(doc, base_dir, source="<system>"):
    """Validate a parsed TOML document; image paths resolve against base_dir."""
    for key in doc:
        if key not in ("board", "partition"):
            raise ConfigError(key, "unknown key (expected [board] and [[partition]])")
    board = _parse_board(doc.get("board", {}))

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
    for index, entry in enumerate(entries):
        p = _parse_partition(index, entry, board, base_dir, partitions, core_owner)
        partitions.append(p)
    return System(source=source, board=board, partitions=tuple(partitions))


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


def _parse_board(table):
    if not isinstance(table, dict):
        raise ConfigError("board", "must be a table ([board])")
    for key in table:
        if key not in BOARD_KEYS:
            raise ConfigError(f"board.{key}", "unknown key")
    cpus = table.get("cpus", Board.cpus)
    if isinstance(cpus, bool) or not isinstance(cpus, int) or not 1 <= cpus <= MAX_CPUS:
        raise ConfigError("board.cpus", f"must be a whole number from 1 to {MAX_CPUS} "
                                        f"(got {_show(cpus)})")
    cpu = table.get("cpu", Board.cpu)
    if cpu not in CPU_MODELS:
        raise ConfigError("board.cpu", f"unknown CPU {_show(cpu)} "
                                       f"(use {', '.join(CPU_MODELS[:-1])} or {CPU_MODELS[-1]})")
    memory = Board.memory
    if "memory" in table:
        memory = parse_size(table["memory"], "board.memory")
        if memory % MiB:
            raise ConfigError("board.memory", f"must be a whole number of MiB "
                                              f"(got {memory} bytes)")
        if memory < BOARD_MEMORY_MIN:
            raise ConfigError("board.memory", f"must be at least {format_size(BOARD_MEMORY_MIN)} "
                                              f"(got {format_size(memory)})")
    return Board(cpus=cpus, cpu=cpu, memory=memory)


def _parse_partition(index, entry, board, base_dir, earlier, core_owner):
    at = f"partition[{index}]"
    for key in entry:
        if key not in PARTITION_KEYS:
            raise ConfigError(f"{at}.{key}", "unknown key")

    if "name" not in entry:
        raise ConfigError(f"{at}.name", "missing (every partition needs a name)")
    name = entry["name"]
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise ConfigError(f"{at}.name", f"{_show(name)} must be 1 to 15 characters "
                                        f"from a-z, 0-9, _ and -")
    for other in earlier:
        if other.name == name:
            raise ConfigError(f"{at}.name", f'"{name}" is already the name of {other.toml_key}')

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
            raise ConfigError(f"{at}.cpus", f"core {core} is out of range "
                                            f"(board has {board.cpus} cores)")
        if core in core_owner:
            owner = core_owner[core]
            if owner == name:
                raise ConfigError(f"{at}.cpus", f"core {core} is listed twice")
            raise ConfigError(f"{at}.cpus", f'core {core} is already used by partition "{owner}"')
        core_owner[core] = name

    if "memory" not in entry:
        raise ConfigError(f"{at}.memory", 'missing (give the RAM size, like "64MiB")')
    memory = parse_size(entry["memory"], f"{at}.memory")
    if memory % PARTITION_MEMORY_ALIGN:
        raise ConfigError(f"{at}.memory", f"must be a multiple of 2 MiB "
                                          f"(got {format_size(memory)})")
    if memory < PARTITION_MEMORY_MIN:
        raise ConfigError(f"{at}.memory", f"must be at least {format_size(PARTITION_MEMORY_MIN)} "
                                          f"(got {format_size(memory)})")
    if memory > PARTITION_MEMORY_MAX:
        raise ConfigError(f"{at}.memory", f"must be at most {format_size(PARTITION_MEMORY_MAX)} "
                                          f"(got {format_size(memory)})")

    if "image" not in entry:
        raise ConfigError(f"{at}.image", "missing (path of the guest's Image or ELF)")
    image_value = entry["image"]
    if not isinstance(image_value, str) or not image_value:
        raise ConfigError(f"{at}.image", f"must be a file path (got {_show(image_value)})")
    image_path = Path(base_dir) / image_value
    shown = os.path.normpath(image_path)
    if not image_path.is_file():
        raise ConfigError(f"{at}.image", f"no such file: {shown}")
    try:
        image = inspect(image_path)
    except ImageError as e:
        raise ConfigError(f"{at}.image", str(e).replace(str(image_path), shown)) from None
    except OSError as e:
        raise ConfigError(f"{at}.image", f"cannot read {shown}: {e.strerror}") from None

    irq = entry.get("irq", "trap")
    if irq not in IRQ_MODES:
        raise ConfigError(f"{at}.irq", f'must be "trap" or "direct" (got {_show(irq)})')
    # A direct guest owns its core's GIC CPU interface: a trapped WFI would wake in the
    # hypervisor with the guest's interrupt pending for EL1, so it waits on the core.
    wfi = entry.get("wfi", "native" if irq == "direct" else "trap")
    if wfi not in WFI_MODES:
        raise ConfigError(f"{at}.wfi", f'must be "native" or "trap" (got {_show(wfi)})')
    if irq == "direct" and wfi != "native":
        raise ConfigError(f"{at}.wfi", 'irq = "direct" needs wfi = "native"')

    bootargs = entry.get("bootargs", "")
    if not isinstance(bootargs, str):
        raise ConfigError(f"{at}.bootargs", f"must be a string (got {_show(bootargs)})")
    if any(not (" " <= ch <= "~") for ch in bootargs):
        raise ConfigError(f"{at}.bootargs", "must be printable ASCII on one line")
    if len(bootargs) > MAX_BOOTARGS:
        raise ConfigError(f"{at}.bootargs", f"at most {MAX_BOOTARGS} characters "
                                            f"(got {len(bootargs)})")

    return Partition(index=index, name=name, cpus=tuple(cpus), memory=memory,
                     image_path=image_path, image=image, wfi_native=(wfi == "native"),
                     irq_direct=(irq == "direct"), bootargs=bootargs)


def _show(value):
    """A value as it would look in the TOML file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "a table"
    return repr(value)

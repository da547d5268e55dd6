"""Guest images: Linux Image files and ELF64 executables, arm64 and riscv64 (partitions of
the board of their architecture, and `tern native` on the bare board).

`inspect()` reads just enough of a file to know where it wants to live in a
partition's RAM (the Image header, or the ELF header and program headers: never the
whole file) and which architecture it is for; `GuestImage.write_payload()` streams the
bytes to load there.  An
Image is loaded as it is; an ELF is flattened into one contiguous blob (gaps
and bss zero-filled) because QEMU's loader must put it at host addresses that
differ from the addresses the ELF was linked for.  A file with neither header is a raw
binary where a caller allows one (a partition's image, `tern native --arch`): QEMU's
`-kernel` loads such a file as it is at a fixed offset from RAM base, and so does tern.
"""

import io
import struct
from dataclasses import dataclass, field
from pathlib import Path

from .errors import show_path
from .files import copy_range, open_regular

ARM64 = "arm64"
RISCV64 = "riscv64"
ARCHS = (ARM64, RISCV64)
ARCH_NAMES = {ARM64: "AArch64", RISCV64: "RISC-V"}

# arm64 boot protocol (Documentation/arch/arm64/booting.rst): 64-byte header.
IMAGE_HEADER = struct.Struct("<IIQQQQQQ4sI")
IMAGE_MAGIC = b"ARM\x64"
# Kernels older than v3.17 leave image_size 0 and expect this text_offset.
LEGACY_TEXT_OFFSET = 0x80000
# The RISC-V Image header (Documentation/riscv/boot-image-header.rst) has the same size and
# the same text_offset and image_size fields; its magic2 sits where arm64's magic does.
RISCV_IMAGE_MAGIC = b"RSC\x05"
# Where QEMU 7.2's -kernel puts a file with no header it knows, from RAM base: arm64 as an
# Image without image_size (hw/arm/boot.c, KERNEL64_LOAD_ADDR); riscv64 at the kernel start
# address, the firmware's end rounded up to 2 MiB (hw/riscv/boot.c), 0x8020_0000 after
# OpenSBI: where a partition's Image goes too.
RAW_TEXT_OFFSET = {"arm64": LEGACY_TEXT_OFFSET, "riscv64": 0x200000}
# Linux's EFI stub makes its Image a PE/COFF file too: "MZ" in code0, which both Debian
# kernels have and a bare-metal guest's branch instruction is not.
LINUX_EFI_MAGIC = b"MZ"
# Headers QEMU's -kernel knows that tern does not read: a gzip file (the arm64 loader inflates
# it) and a U-Boot uImage (both boards unwrap it).  Taken as raw they would not run: refused.
GZIP_MAGIC = b"\x1f\x8b"
UIMAGE_MAGIC = b"\x27\x05\x19\x56"

ELF_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
ELF_PHDR = struct.Struct("<IIQQQQQQ")
ELF_MAGIC = b"\x7fELF"
ELFCLASS64 = 2
ELFDATA2LSB = 1
EM_AARCH64 = 183
EM_RISCV = 243
ELF_MACHINES = {EM_AARCH64: ARM64, EM_RISCV: RISCV64}
PT_LOAD = 1
# Program headers read at most (real images have a handful): the table is read whole.
MAX_PHDRS = 1024


class ImageError(ValueError):
    """The file is not a usable guest image; the message says why.

    `template` holds "{path}" where the file's name goes: message(shown) puts it there
    as a caller wants it shown, str() as show_path shows it.
    """

    def __init__(self, template, path):
        super().__init__(template)
        self.template = template
        self.path = path

    def message(self, shown):
        return self.template.replace("{path}", shown)

    def __str__(self):
        return self.message(show_path(self.path))


@dataclass(frozen=True)
class Segment:
    """One ELF PT_LOAD segment, by physical address."""

    paddr: int
    offset: int
    filesz: int
    memsz: int


@dataclass(frozen=True)
class GuestImage:
    """Where a guest image goes and what it occupies.

    kind is "Image" (position independent: loaded at RAM base + text_offset),
    "ELF" (fixed physical addresses from its program headers) or "raw" (no header: loaded as
    it is at RAM base + text_offset, the board loader's RAW_TEXT_OFFSET); arch is "arm64" or
    "riscv64".
    """

    path: Path
    kind: str
    file_size: int
    arch: str = ARM64
    text_offset: int = 0
    header_image_size: int = 0
    segments: tuple = field(default=())
    elf_entry: int = 0
    linux: bool = False           # an Image with Linux's EFI stub ("MZ"): a Linux kernel

    @property
    def mem_size(self):
        """Bytes of RAM the loaded image covers, bss included."""
        if self.kind != "ELF":
            return max(self.header_image_size, self.file_size)
        start = min(s.paddr for s in self.segments)
        return max(s.paddr + s.memsz for s in self.segments) - start

    def load_address(self, ram_ipa):
        """Guest-physical address of the image's first byte."""
        if self.kind != "ELF":
            return ram_ipa + self.text_offset
        return min(s.paddr for s in self.segments)

    def entry(self, ram_ipa):
        """Guest-physical address of the first instruction."""
        if self.kind != "ELF":
            return self.load_address(ram_ipa)
        return self.elf_entry

    @property
    def needs_flattening(self):
        """True when the file cannot be handed to QEMU's raw loader as it is."""
        return self.kind == "ELF"

    def payload(self):
        """The bytes to place at load_address(): the file, or the flattened ELF (for small
        images: build.py streams them with write_payload)."""
        out = io.BytesIO()
        self.write_payload(out)
        return out.getvalue()

    def write_payload(self, out):
        """Write the bytes to place at load_address() to `out` (a new, seekable binary file
        at position 0), CHUNK by CHUNK: an ELF's segments at their offsets, the gaps and
        bss left as holes, which read as zeros."""
        total = self.file_size if self.kind != "ELF" else self.mem_size
        f, info = open_regular(self.path)
        with f:
            if info.st_size != self.file_size:
                raise ImageError("changed since it was inspected: {path}", self.path)
            if self.kind != "ELF":
                pieces = [(0, 0, self.file_size)]
            else:
                base = min(s.paddr for s in self.segments)
                pieces = [(s.offset, s.paddr - base, s.filesz) for s in self.segments]
            for offset, at, size in pieces:
                f.seek(offset)
                out.seek(at)
                if copy_range(f, out, size) != size:
                    raise ImageError("changed since it was inspected: {path}", self.path)
        # Holes at the end (bss) are made by writing the last byte.
        end = out.seek(0, io.SEEK_END)
        if end < total:
            out.seek(total - 1)
            out.write(b"\0")
        return total


def _a(word):
    """`word` with its indefinite article: "an arm64", "a riscv64"."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def _formats(archs):
    """What inspect() accepts, for its messages: "an arm64 Image or ELF"."""
    return f"{_a(' or '.join(archs))} Image or ELF"


def inspect(path, archs=(ARM64,), raw_arch=None):
    """Read the header of `path` and describe the image; raises ImageError (also for an
    image of an architecture not in `archs`), or files.NotAFile when `path` is not a
    regular file.  A file that is neither an Image nor an ELF is a raw binary for
    `raw_arch` when that is given (it must be one of `archs`), else refused."""
    path = Path(path)
    f, info = open_regular(path)
    with f:
        head = f.read(IMAGE_HEADER.size)
        file_size = info.st_size
        if head[:4] == ELF_MAGIC:
            return require_arch(_inspect_elf(f, path, head, file_size, archs), archs)
    if len(head) == IMAGE_HEADER.size:
        fields = IMAGE_HEADER.unpack(head)
        text_offset, image_size, magic = fields[2], fields[3], fields[8]
        if magic == IMAGE_MAGIC:
            if image_size == 0:
                text_offset = LEGACY_TEXT_OFFSET
            return require_arch(GuestImage(path=path, kind="Image", file_size=file_size,
                                           text_offset=text_offset,
                                           header_image_size=image_size,
                                           linux=head[:2] == LINUX_EFI_MAGIC), archs)
        if magic == RISCV_IMAGE_MAGIC:
            return require_arch(GuestImage(path=path, kind="Image", file_size=file_size,
                                           text_offset=text_offset, header_image_size=image_size,
                                           arch=RISCV64,
                                           linux=head[:2] == LINUX_EFI_MAGIC), archs)
    if raw_arch is None:
        raise ImageError(f"not {_formats(archs)}: {{path}}", path)
    if not head:
        raise ImageError("empty: {path}", path)
    if head[:2] == GZIP_MAGIC:
        raise ImageError("gzip-compressed: {path} (tern loads Images, ELFs and raw binaries "
                         "as they are: decompress it first)", path)
    if head[:4] == UIMAGE_MAGIC:
        raise ImageError("a U-Boot uImage: {path} (tern loads Images, ELFs and raw binaries: "
                         "give it the image inside)", path)
    return require_arch(GuestImage(path=path, kind="raw", file_size=file_size, arch=raw_arch,
                                   text_offset=RAW_TEXT_OFFSET[raw_arch]), archs)


def require_arch(image, archs):
    """`image` if it is for one of `archs`; raises ImageError if not."""
    if image.arch not in archs:
        raise ImageError(f"{{path}} is {_a(image.arch)} {image.kind}, not {' or '.join(archs)}",
                         image.path)
    return image


def _inspect_elf(f, path, head, file_size, archs):
    """The ELF header (in `head`) and the program header table, read from `f`."""
    if len(head) < ELF_HEADER.size:
        raise ImageError(f"not {_formats(archs)}: {{path}} (truncated ELF header)", path)
    (ident, _type, machine, _version, entry, phoff, _shoff, _flags, _ehsize,
     phentsize, phnum, _shentsize, _shnum, _shstrndx) = ELF_HEADER.unpack_from(head)
    if ident[4] != ELFCLASS64 or ident[5] != ELFDATA2LSB or machine not in ELF_MACHINES:
        need = " or ".join(ARCH_NAMES[a] for a in archs)
        raise ImageError(f"not {_formats(archs)}: {{path}} "
                         f"(ELF class {ident[4]}, data {ident[5]}, machine {machine}; "
                         f"need 64-bit little-endian {need})", path)
    if phnum > MAX_PHDRS:
        raise ImageError(f"ELF has {phnum} program headers, more than the {MAX_PHDRS} tern "
                         f"reads: {{path}}", path)
    if phnum and (phentsize < ELF_PHDR.size or phoff + phnum * phentsize > file_size):
        raise ImageError("ELF program headers run past the end of the file: {path}", path)
    table = b""
    if phnum:
        f.seek(phoff)
        table = f.read(phnum * phentsize)
        if len(table) != phnum * phentsize:
            raise ImageError("ELF program headers run past the end of the file: {path}", path)

    segments = []
    virtual_to_physical = []
    for i in range(phnum):
        (p_type, _pflags, offset, vaddr, paddr, filesz, memsz,
         _align) = ELF_PHDR.unpack_from(table, i * phentsize)
        if p_type != PT_LOAD or memsz == 0:
            continue
        if filesz > memsz or offset + filesz > file_size:
            raise ImageError(f"ELF segment {i} runs past the end of the file: {{path}}", path)
        segments.append(Segment(paddr, offset, filesz, memsz))
        virtual_to_physical.append((vaddr, paddr, memsz))
    if not segments:
        raise ImageError("ELF has no loadable segments: {path}", path)

    segments.sort(key=lambda s: s.paddr)
    for a, b in zip(segments, segments[1:]):
        if a.paddr + a.memsz > b.paddr:
            raise ImageError(f"ELF segments overlap at physical address 0x{b.paddr:x}: "
                             f"{{path}}", path)

    # e_entry is a virtual address; a guest starts with its MMU off, so run it
    # from the physical copy of the segment that holds it.
    for vaddr, paddr, memsz in virtual_to_physical:
        if vaddr <= entry < vaddr + memsz:
            entry = entry - vaddr + paddr
            break
    return GuestImage(path=path, kind="ELF", file_size=file_size,
                      segments=tuple(segments), elf_entry=entry, arch=ELF_MACHINES[machine])

"""Guest images: arm64 Linux Image files and ELF64 AArch64 executables.

`inspect()` reads just enough of a file to know where it wants to live in a
partition's RAM; `GuestImage.payload()` gives the bytes to load there.  An
Image is loaded as it is; an ELF is flattened into one contiguous blob (gaps
and bss zero-filled) because QEMU's loader must put it at host addresses that
differ from the addresses the ELF was linked for.
"""

import struct
from dataclasses import dataclass, field
from pathlib import Path

# arm64 boot protocol (Documentation/arch/arm64/booting.rst): 64-byte header.
IMAGE_HEADER = struct.Struct("<IIQQQQQQ4sI")
IMAGE_MAGIC = b"ARM\x64"
# Kernels older than v3.17 leave image_size 0 and expect this text_offset.
LEGACY_TEXT_OFFSET = 0x80000

ELF_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
ELF_PHDR = struct.Struct("<IIQQQQQQ")
ELF_MAGIC = b"\x7fELF"
ELFCLASS64 = 2
ELFDATA2LSB = 1
EM_AARCH64 = 183
PT_LOAD = 1


class ImageError(ValueError):
    """The file is not a usable guest image; the message says why."""


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

    kind is "Image" (position independent: loaded at RAM base + text_offset)
    or "ELF" (fixed physical addresses from its program headers).
    """

    path: Path
    kind: str
    file_size: int
    text_offset: int = 0
    header_image_size: int = 0
    segments: tuple = field(default=())
    elf_entry: int = 0

    @property
    def mem_size(self):
        """Bytes of RAM the loaded image covers, bss included."""
        if self.kind == "Image":
            return max(self.header_image_size, self.file_size)
        start = min(s.paddr for s in self.segments)
        return max(s.paddr + s.memsz for s in self.segments) - start

    def load_address(self, ram_ipa):
        """Guest-physical address of the image's first byte."""
        if self.kind == "Image":
            return ram_ipa + self.text_offset
        return min(s.paddr for s in self.segments)

    def entry(self, ram_ipa):
        """Guest-physical address of the first instruction."""
        if self.kind == "Image":
            return self.load_address(ram_ipa)
        return self.elf_entry

    @property
    def needs_flattening(self):
        """True when the file cannot be handed to QEMU's raw loader as it is."""
        return self.kind == "ELF"

    def payload(self):
        """The bytes to place at load_address(): the file, or the flattened ELF."""
        data = self.path.read_bytes()
        if self.kind == "Image":
            return data
        base = min(s.paddr for s in self.segments)
        blob = bytearray(self.mem_size)
        for s in self.segments:
            start = s.paddr - base
            blob[start:start + s.filesz] = data[s.offset:s.offset + s.filesz]
        return bytes(blob)


def inspect(path):
    """Read the header of `path` and describe the image; raises ImageError."""
    path = Path(path)
    with open(path, "rb") as f:
        head = f.read(IMAGE_HEADER.size)
        f.seek(0, 2)
        file_size = f.tell()
    if head[:4] == ELF_MAGIC:
        return _inspect_elf(path, file_size)
    if len(head) == IMAGE_HEADER.size:
        fields = IMAGE_HEADER.unpack(head)
        text_offset, image_size, magic = fields[2], fields[3], fields[8]
        if magic == IMAGE_MAGIC:
            if image_size == 0:
                text_offset = LEGACY_TEXT_OFFSET
            return GuestImage(path=path, kind="Image", file_size=file_size,
                              text_offset=text_offset, header_image_size=image_size)
    raise ImageError(f"not an arm64 Image or ELF: {path}")


def _inspect_elf(path, file_size):
    data = path.read_bytes()
    if len(data) < ELF_HEADER.size:
        raise ImageError(f"not an arm64 Image or ELF: {path} (truncated ELF header)")
    (ident, _type, machine, _version, entry, phoff, _shoff, _flags, _ehsize,
     phentsize, phnum, _shentsize, _shnum, _shstrndx) = ELF_HEADER.unpack_from(data)
    if ident[4] != ELFCLASS64 or ident[5] != ELFDATA2LSB or machine != EM_AARCH64:
        raise ImageError(f"not an arm64 Image or ELF: {path} "
                         f"(ELF class {ident[4]}, data {ident[5]}, machine {machine}; "
                         f"need 64-bit little-endian AArch64)")
    if phnum and (phentsize < ELF_PHDR.size or phoff + phnum * phentsize > len(data)):
        raise ImageError(f"ELF program headers run past the end of the file: {path}")

    segments = []
    virtual_to_physical = []
    for i in range(phnum):
        (p_type, _pflags, offset, vaddr, paddr, filesz, memsz,
         _align) = ELF_PHDR.unpack_from(data, phoff + i * phentsize)
        if p_type != PT_LOAD or memsz == 0:
            continue
        if filesz > memsz or offset + filesz > len(data):
            raise ImageError(f"ELF segment {i} runs past the end of the file: {path}")
        segments.append(Segment(paddr, offset, filesz, memsz))
        virtual_to_physical.append((vaddr, paddr, memsz))
    if not segments:
        raise ImageError(f"ELF has no loadable segments: {path}")

    segments.sort(key=lambda s: s.paddr)
    for a, b in zip(segments, segments[1:]):
        if a.paddr + a.memsz > b.paddr:
            raise ImageError(f"ELF segments overlap at physical address 0x{b.paddr:x}: {path}")

    # e_entry is a virtual address; a guest starts with its MMU off, so run it
    # from the physical copy of the segment that holds it.
    for vaddr, paddr, memsz in virtual_to_physical:
        if vaddr <= entry < vaddr + memsz:
            entry = entry - vaddr + paddr
            break
    return GuestImage(path=path, kind="ELF", file_size=file_size,
                      segments=tuple(segments), elf_entry=entry)

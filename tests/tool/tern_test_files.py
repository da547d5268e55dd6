"""Small synthetic guest images and system descriptions for the tool tests."""

from pathlib import Path

from tern.config import dump_toml
from tern.image import ELF_HEADER, ELF_PHDR, IMAGE_HEADER, IMAGE_MAGIC, RISCV_IMAGE_MAGIC

EM_AARCH64 = 183
EM_RISCV = 243
EM_X86_64 = 62


def write_image(path, text_offset=0x80000, image_size=0x10000, size=64, magic=IMAGE_MAGIC):
    """An arm64 Image: the boot protocol header, padded with zeros to `size` bytes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = IMAGE_HEADER.pack(0x14000010, 0, text_offset, image_size, 0xA, 0, 0, 0, magic, 0)
    path.write_bytes(header + bytes(max(size - len(header), 0)))
    return path


def write_riscv_image(path, text_offset=0x200000, image_size=0x10000, size=64):
    """A RISC-V Image: its boot header (magic "RISCV" at 48, magic2 at 56), padded to `size`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = IMAGE_HEADER.pack(0x0400006F, 0, text_offset, image_size, 0, 2,
                               0, int.from_bytes(b"RISCV\0\0\0", "little"),
                               RISCV_IMAGE_MAGIC, 0)
    path.write_bytes(header + bytes(max(size - len(header), 0)))
    return path


def write_elf(path, segments, entry, machine=EM_AARCH64, elf_class=2, data_order=1):
    """An ELF64 executable; segments = [(vaddr, paddr, data, memsz)] as PT_LOAD."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    phoff = ELF_HEADER.size
    data_off = phoff + ELF_PHDR.size * len(segments)
    ident = b"\x7fELF" + bytes([elf_class, data_order, 1]) + bytes(9)
    out = bytearray(ELF_HEADER.pack(ident, 2, machine, 1, entry, phoff, 0, 0, ELF_HEADER.size,
                                    ELF_PHDR.size, len(segments), 0, 0, 0))
    payload = bytearray()
    for vaddr, paddr, data, memsz in segments:
        out += ELF_PHDR.pack(1, 5, data_off + len(payload), vaddr, paddr, len(data), memsz, 0x1000)
        payload += data
    path.write_bytes(bytes(out + payload))
    return path


def write_toml(directory, text, name="sys.toml"):
    path = Path(directory) / name
    path.write_text(text)
    return path


def partition(name="rt", cpus=(1,), memory="64MiB", image="guests/build/arm64/lat.img", raw="",
              **keys):
    """One [[partition]] table as TOML text (config.dump_toml): its keys as Python values,
    `keys` after the four every test gives, None leaves a key out; `raw` is TOML text put at
    the table's end as it is, for inputs that are TOML source on purpose (escapes, a date)."""
    table = {"name": name, "cpus": list(cpus) if isinstance(cpus, tuple) else cpus,
             "memory": memory, "image": image, **keys}
    table = {key: value for key, value in table.items() if value is not None}
    return dump_toml({"partition": [table]}) + (raw + "\n" if raw else "")


def channel(name="msg", size="64KiB", members=("a", "b"), readonly=None, **keys):
    """One [[channel]] table as TOML text, like partition(): None leaves a key out."""
    table = {"name": name, "size": size,
             "members": list(members) if isinstance(members, tuple) else members,
             "readonly": list(readonly) if isinstance(readonly, tuple) else readonly, **keys}
    return dump_toml({"channel": [{k: v for k, v in table.items() if v is not None}]})

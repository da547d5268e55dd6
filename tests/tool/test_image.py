"""arm64 and riscv64 Image and ELF64 inspection, and ELF flattening."""

import pytest
from tern.image import ARCHS, ImageError, inspect
from tern_test_files import EM_RISCV, EM_X86_64, write_elf, write_image, write_riscv_image


def test_image_header(tmp_path):
    img = inspect(write_image(tmp_path / "a.img", text_offset=0x80000, image_size=0x5000,
                              size=0x1000))
    assert img.kind == "Image"
    assert (img.text_offset, img.header_image_size, img.file_size) == (0x80000, 0x5000, 0x1000)
    assert img.mem_size == 0x5000
    assert img.load_address(0x4000_0000) == img.entry(0x4000_0000) == 0x4008_0000
    assert not img.needs_flattening
    assert img.payload() == (tmp_path / "a.img").read_bytes()


def test_image_larger_than_its_header_says(tmp_path):
    img = inspect(write_image(tmp_path / "a.img", image_size=0x100, size=0x2000))
    assert img.mem_size == 0x2000


def test_legacy_image_without_size(tmp_path):
    img = inspect(write_image(tmp_path / "a.img", text_offset=0, image_size=0))
    assert img.text_offset == 0x80000


@pytest.mark.parametrize("data", [b"", b"ARM\x64", b"\0" * 63, b"\0" * 64, b"#!/bin/sh\n" * 20])
def test_not_an_image(tmp_path, data):
    (tmp_path / "x").write_bytes(data)
    with pytest.raises(ImageError, match=r"^not an arm64 Image or ELF: .*/x$"):
        inspect(tmp_path / "x")


def test_bad_magic(tmp_path):
    write_image(tmp_path / "x", magic=b"ARM\x65")
    with pytest.raises(ImageError, match="not an arm64 Image or ELF"):
        inspect(tmp_path / "x")


def test_elf_flattened_with_gap_and_bss(tmp_path):
    path = write_elf(tmp_path / "g.elf", [
        (0x4008_0000, 0x4008_0000, b"\xaa" * 16, 16),
        (0x4008_1000, 0x4008_1000, b"\xbb" * 8, 0x20),      # 0x18 bytes of bss
    ], entry=0x4008_0004)
    img = inspect(path)
    assert img.kind == "ELF" and img.needs_flattening
    assert img.load_address(0x4000_0000) == 0x4008_0000
    assert img.entry(0x4000_0000) == 0x4008_0004
    assert img.mem_size == 0x1020
    blob = img.payload()
    assert blob == b"\xaa" * 16 + bytes(0x1000 - 16) + b"\xbb" * 8 + bytes(0x18)


def test_elf_segments_sorted_by_physical_address(tmp_path):
    path = write_elf(tmp_path / "g.elf", [
        (0x4009_0000, 0x4009_0000, b"\2" * 4, 4),
        (0x4008_0000, 0x4008_0000, b"\1" * 4, 4),
    ], entry=0x4008_0000)
    img = inspect(path)
    assert img.payload()[:4] == b"\1" * 4 and img.payload()[-4:] == b"\2" * 4


def test_elf_virtual_entry_becomes_physical(tmp_path):
    # Linked to run high with the MMU on, loaded low: start at the physical copy.
    path = write_elf(tmp_path / "g.elf", [(0xffff_0000_0008_0000, 0x4008_0000, b"\0" * 64, 64)],
                     entry=0xffff_0000_0008_0010)
    img = inspect(path)
    assert img.entry(0x4000_0000) == 0x4008_0010


def test_elf_for_x86_is_refused(tmp_path):
    path = write_elf(tmp_path / "g.elf", [(0, 0, b"\0", 1)], 0, machine=EM_X86_64)
    with pytest.raises(ImageError, match=r"not an arm64 Image or ELF: .*machine 62"):
        inspect(path)


def test_elf32_is_refused(tmp_path):
    path = write_elf(tmp_path / "g.elf", [(0, 0, b"\0", 1)], 0, elf_class=1)
    with pytest.raises(ImageError, match="not an arm64 Image or ELF"):
        inspect(path)


def test_elf_without_loadable_segments(tmp_path):
    path = write_elf(tmp_path / "g.elf", [], 0)
    with pytest.raises(ImageError, match="ELF has no loadable segments"):
        inspect(path)


def test_truncated_elf_segment(tmp_path):
    path = write_elf(tmp_path / "g.elf", [(0x4008_0000, 0x4008_0000, b"\0" * 32, 32)], 0x4008_0000)
    path.write_bytes(path.read_bytes()[:-8])
    with pytest.raises(ImageError, match="ELF segment 0 runs past the end of the file"):
        inspect(path)


def test_overlapping_elf_segments(tmp_path):
    path = write_elf(tmp_path / "g.elf", [
        (0x4008_0000, 0x4008_0000, b"\0" * 32, 32),
        (0x4008_0010, 0x4008_0010, b"\0" * 32, 32),
    ], 0x4008_0000)
    with pytest.raises(ImageError, match="ELF segments overlap at physical address 0x40080010"):
        inspect(path)


def test_riscv_image_header(tmp_path):
    img = inspect(write_riscv_image(tmp_path / "rv.img", image_size=0x3000, size=0x1000), ARCHS)
    assert (img.kind, img.arch) == ("Image", "riscv64")
    assert (img.text_offset, img.mem_size) == (0x200000, 0x3000)
    assert img.load_address(0x8000_0000) == img.entry(0x8000_0000) == 0x8020_0000
    assert not img.needs_flattening


def test_riscv_elf(tmp_path):
    path = write_elf(tmp_path / "rv.elf", [(0x8020_0000, 0x8020_0000, b"\x13" * 16, 0x40)],
                     entry=0x8020_0000, machine=EM_RISCV)
    img = inspect(path, ARCHS)
    assert (img.kind, img.arch, img.entry(0x8000_0000)) == ("ELF", "riscv64", 0x8020_0000)


def test_arm64_image_and_elf_say_so(tmp_path):
    assert inspect(write_image(tmp_path / "a.img"), ARCHS).arch == "arm64"
    path = write_elf(tmp_path / "a.elf", [(0x4008_0000, 0x4008_0000, b"\0" * 4, 4)], 0x4008_0000)
    assert inspect(path, ARCHS).arch == "arm64"


def test_riscv_refused_where_only_arm64_goes(tmp_path):
    # inspect() takes arm64 only unless told otherwise.
    with pytest.raises(ImageError, match=r"^.*/rv.img is a riscv64 Image, not arm64$"):
        inspect(write_riscv_image(tmp_path / "rv.img"))
    path = write_elf(tmp_path / "rv.elf", [(0x8020_0000, 0x8020_0000, b"\0" * 4, 4)],
                     entry=0x8020_0000, machine=EM_RISCV)
    with pytest.raises(ImageError, match=r"rv.elf is a riscv64 ELF, not arm64$"):
        inspect(path)


def test_unknown_formats_name_both_architectures(tmp_path):
    (tmp_path / "x").write_bytes(b"\0" * 64)
    with pytest.raises(ImageError, match=r"^not an arm64 or riscv64 Image or ELF: .*/x$"):
        inspect(tmp_path / "x", ARCHS)
    path = write_elf(tmp_path / "g.elf", [(0, 0, b"\0", 1)], 0, machine=EM_X86_64)
    with pytest.raises(ImageError, match=r"machine 62; need 64-bit little-endian AArch64 or "
                                         r"RISC-V\)$"):
        inspect(path, ARCHS)


def test_arm64_refused_where_only_riscv64_goes(tmp_path):
    with pytest.raises(ImageError, match=r"^.*/a.img is an arm64 Image, not riscv64$"):
        inspect(write_image(tmp_path / "a.img"), ("riscv64",))
    (tmp_path / "x").write_bytes(b"\0" * 64)
    with pytest.raises(ImageError, match=r"^not a riscv64 Image or ELF: .*/x$"):
        inspect(tmp_path / "x", ("riscv64",))


@pytest.mark.parametrize("arch, ram_base, offset", [("arm64", 0x4000_0000, 0x80000),
                                                    ("riscv64", 0x8000_0000, 0x200000)])
def test_raw_binary_where_allowed(tmp_path, arch, ram_base, offset):
    # What QEMU's -kernel does with a file it finds no header in: loads it as it is.
    (tmp_path / "x").write_bytes(b"\x01\x02" * 50)
    img = inspect(tmp_path / "x", ARCHS, raw_arch=arch)
    assert (img.kind, img.arch, img.mem_size, img.text_offset) == ("raw", arch, 100, offset)
    assert img.load_address(ram_base) == img.entry(ram_base) == ram_base + offset
    assert not img.needs_flattening
    assert img.payload() == (tmp_path / "x").read_bytes()


def test_raw_allowed_still_reads_headers(tmp_path):
    # A header still decides; one for another architecture is still refused.
    assert inspect(write_image(tmp_path / "a.img"), ("arm64",), raw_arch="arm64").kind == "Image"
    with pytest.raises(ImageError, match=r"a.img is an arm64 Image, not riscv64$"):
        inspect(tmp_path / "a.img", ("riscv64",), raw_arch="riscv64")
    write_image(tmp_path / "b.img", magic=b"ARM\x65")      # no magic: raw
    assert inspect(tmp_path / "b.img", raw_arch="arm64").kind == "raw"


@pytest.mark.parametrize("data, message", [
    (b"", r"^empty: .*/x$"),
    (b"\x1f\x8b\x08" + bytes(100), r"^gzip-compressed: .*/x \(tern loads Images, ELFs and raw "
                                    r"binaries as they are: decompress it first\)$"),
    (b"\x27\x05\x19\x56" + bytes(100), r"^a U-Boot uImage: .*/x \(tern loads Images, ELFs and "
                                        r"raw binaries: give it the image inside\)$"),
])
def test_raw_refused(tmp_path, data, message):
    (tmp_path / "x").write_bytes(data)
    with pytest.raises(ImageError, match=message):
        inspect(tmp_path / "x", raw_arch="arm64")

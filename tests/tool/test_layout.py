"""Where partitions, images, device trees and pristine copies land on the board."""

import pytest
from tern import layout
from tern.config import GiB, MiB, load_system
from tern_test_files import partition, write_elf, write_image, write_toml


def placed(tmp_path, text):
    system = load_system(write_toml(tmp_path, text))
    return system, layout.place(system)


def regions(lay):
    """Every board range tern loads something into or hands to a partition."""
    out = []
    for p in lay.partitions:
        out.append((p.name + " RAM", p.ram_hpa, p.ram_hpa + p.ram_size))
        out.append((p.name + " image copy", p.pristine_image_hpa,
                    p.pristine_image_hpa + p.image_size))
        out.append((p.name + " dtb copy", p.pristine_dtb_hpa, p.pristine_dtb_hpa + p.dtb_area))
    return out


def test_one_partition(tmp_path, stub_image):
    _, lay = placed(tmp_path, partition(memory='"64MiB"'))
    (p,) = lay.partitions
    assert p.ram_ipa == 0x4000_0000
    assert p.ram_hpa == 0x4400_0000
    assert p.ram_size == 64 * MiB
    assert p.image_ipa == p.entry_ipa == 0x4008_0000
    assert p.image_size == 0x10000                 # header image_size > 64-byte file
    assert p.dtb_ipa == 0x4000_0000 + 64 * MiB - 2 * MiB
    assert p.image_hpa == 0x4408_0000
    assert p.dtb_hpa == 0x4400_0000 + 62 * MiB
    assert p.hpa(0x4000_1234) == 0x4400_1234
    # Pristine copies come after all partitions' RAM, skipping QEMU's dtb block.
    assert lay.qemu_dtb == (0x4800_0000, 0x4820_0000)
    assert p.pristine_image_hpa == 0x4820_0000
    assert p.pristine_dtb_hpa == 0x4840_0000
    assert lay.end == 0x4860_0000


def test_partitions_in_file_order_and_aligned(tmp_path, stub_image):
    text = ("[board]\ncpus = 8\nmemory = \"4GiB\"\n"
            + partition("a", "[1]", '"6MiB"') + partition("b", "[2]", '"128MiB"')
            + partition("c", "[3, 4]", '"1GiB"') + partition("d", "[5]", '"4MiB"'))
    _, lay = placed(tmp_path, text)
    a, b, c, d = lay.partitions
    assert a.ram_hpa == 0x4400_0000
    assert b.ram_hpa == 0x4820_0000            # would straddle QEMU's dtb at 0x48000000
    assert c.ram_hpa == b.ram_hpa + 128 * MiB
    assert d.ram_hpa == c.ram_hpa + GiB
    spans = regions(lay)
    for name, start, end in spans:
        assert start % (2 * MiB) == 0, name
        assert start >= layout.HYP_BASE + layout.HYP_SIZE, name
        assert end <= lay.ram_end, name
        hole_start, hole_end = lay.qemu_dtb
        assert end <= hole_start or start >= hole_end, name
    spans.sort(key=lambda s: s[1])
    for (n1, _, end1), (n2, start2, _) in zip(spans, spans[1:]):
        assert end1 <= start2, f"{n1} overlaps {n2}"
    assert all(p.ram_ipa == layout.PARTITION_RAM_IPA for p in lay.partitions)


def test_device_tree_stays_in_the_first_512_mib(tmp_path, stub_image):
    _, lay = placed(tmp_path, partition(memory='"1GiB"'))
    assert lay.partitions[0].dtb_ipa == 0x4000_0000 + 510 * MiB


@pytest.mark.parametrize("board_memory, hole", [
    (128 * MiB, 0x4400_0000), (200 * MiB, 0x4640_0000), (256 * MiB, 0x4800_0000),
    (8 * GiB, 0x4800_0000)])
def test_qemu_dtb_block(board_memory, hole):
    assert layout.qemu_dtb_block(board_memory) == (hole, hole + 2 * MiB)


def test_small_board_starts_partitions_after_qemu_dtb(tmp_path, stub_image):
    _, lay = placed(tmp_path, '[board]\nmemory = "128MiB"\n' + partition(memory='"8MiB"'))
    assert lay.partitions[0].ram_hpa == 0x4420_0000


def test_image_with_legacy_header_loads_at_512_kib(tmp_path):
    write_image(tmp_path / "old.img", text_offset=0x1234, image_size=0, size=4096)
    _, lay = placed(tmp_path, partition(image='"old.img"'))
    p = lay.partitions[0]
    assert (p.image_ipa, p.entry_ipa, p.image_size) == (0x4008_0000, 0x4008_0000, 4096)


def test_image_with_other_text_offset(tmp_path):
    write_image(tmp_path / "t.img", text_offset=0x20_0000, image_size=0x1000, size=0x3000)
    _, lay = placed(tmp_path, partition(image='"t.img"'))
    p = lay.partitions[0]
    assert (p.image_ipa, p.image_size) == (0x4020_0000, 0x3000)   # file longer than header says


def test_elf_placed_by_physical_address(tmp_path):
    write_elf(tmp_path / "g.elf", [(0x4010_0000, 0x4010_0000, b"\1" * 64, 0x2000)], 0x4010_0010)
    _, lay = placed(tmp_path, partition(image='"g.elf"'))
    p = lay.partitions[0]
    assert (p.image_ipa, p.entry_ipa, p.image_size) == (0x4010_0000, 0x4010_0010, 0x2000)
    assert p.image_hpa == 0x4410_0000

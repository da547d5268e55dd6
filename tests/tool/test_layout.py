"""Where partitions, images, device trees and pristine copies land on the board."""

import pytest
from tern import layout
from tern.config import GiB, MiB, load_system
from tern.errors import ConfigError
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
    _, lay = placed(tmp_path, partition(memory="64MiB"))
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
    text = ("[board]\ncpus = 8\nmemory = \"3GiB\"\n"
            + partition("a", cpus=[1], memory="6MiB") + partition("b", cpus=[2], memory="128MiB")
            + partition("c", cpus=[3, 4], memory="1GiB") + partition("d", cpus=[5], memory="4MiB"))
    _, lay = placed(tmp_path, text)
    a, b, c, d = lay.partitions
    assert a.ram_hpa == 0x4400_0000
    assert b.ram_hpa == 0x4820_0000            # would straddle QEMU's dtb at 0x48000000
    assert c.ram_hpa == b.ram_hpa + 128 * MiB
    assert d.ram_hpa == c.ram_hpa + GiB
    spans = regions(lay)
    for name, start, end in spans:
        assert start % (2 * MiB) == 0, name
        assert start >= layout.QEMU_VIRT_ARM64.partition_ram_start, name
        assert end <= lay.ram_end, name
        hole_start, hole_end = lay.qemu_dtb
        assert end <= hole_start or start >= hole_end, name
    spans.sort(key=lambda s: s[1])
    for (n1, _, end1), (n2, start2, _) in zip(spans, spans[1:]):
        assert end1 <= start2, f"{n1} overlaps {n2}"
    assert all(p.ram_ipa == layout.QEMU_VIRT_ARM64.partition_ram_ipa for p in lay.partitions)


def test_device_tree_stays_in_the_first_512_mib(tmp_path, stub_image):
    _, lay = placed(tmp_path, partition(memory="1GiB"))
    assert lay.partitions[0].dtb_ipa == 0x4000_0000 + 510 * MiB


@pytest.mark.parametrize("board_memory, hole", [
    (128 * MiB, 0x4400_0000), (200 * MiB, 0x4640_0000), (256 * MiB, 0x4800_0000),
    (8 * GiB, 0x4800_0000)])
def test_qemu_dtb_block(board_memory, hole):
    assert layout.QEMU_VIRT_ARM64.qemu_dtb_block(board_memory) == (hole, hole + 2 * MiB)


def test_small_board_starts_partitions_after_qemu_dtb(tmp_path, stub_image):
    _, lay = placed(tmp_path, '[board]\nmemory = "128MiB"\n' + partition(memory="8MiB"))
    assert lay.partitions[0].ram_hpa == 0x4420_0000


def test_image_with_legacy_header_loads_at_512_kib(tmp_path):
    write_image(tmp_path / "old.img", text_offset=0x1234, image_size=0, size=4096)
    _, lay = placed(tmp_path, partition(image="old.img"))
    p = lay.partitions[0]
    assert (p.image_ipa, p.entry_ipa, p.image_size) == (0x4008_0000, 0x4008_0000, 4096)


def test_image_with_other_text_offset(tmp_path):
    write_image(tmp_path / "t.img", text_offset=0x20_0000, image_size=0x1000, size=0x3000)
    _, lay = placed(tmp_path, partition(image="t.img"))
    p = lay.partitions[0]
    assert (p.image_ipa, p.image_size) == (0x4020_0000, 0x3000)   # file longer than header says


def test_elf_placed_by_physical_address(tmp_path):
    write_elf(tmp_path / "g.elf", [(0x4010_0000, 0x4010_0000, b"\1" * 64, 0x2000)], 0x4010_0010)
    _, lay = placed(tmp_path, partition(image="g.elf"))
    p = lay.partitions[0]
    assert (p.image_ipa, p.entry_ipa, p.image_size) == (0x4010_0000, 0x4010_0010, 0x2000)
    assert p.image_hpa == 0x4410_0000


def test_pcie_catalog_is_qemu_virt_with_highmem_off():
    pcie = layout.QEMU_VIRT_ARM64.devices["pcie"]
    assert pcie.kind == "pci-host-ecam-generic"
    assert [(r.name, r.base, r.size) for r in pcie.regions] == [
        ("mmio", 0x1000_0000, 0x2EFF_0000), ("io", 0x3EFF_0000, 0x1_0000),
        ("ecam", 0x3F00_0000, 0x100_0000)]
    assert pcie.spis == (3, 4, 5, 6) and pcie.intids == (35, 36, 37, 38)
    assert pcie.region("ecam").size // layout.PCIE_ECAM_BUS_SIZE == 16      # buses


def test_catalog_regions_are_pages_clear_of_what_partitions_already_see():
    board = layout.QEMU_VIRT_ARM64
    fixed = [(board.gic.dist_base, board.gic.dist_size),
             (board.gic.redist_base, board.gic.redist_stride * 8),
             (board.uart.base, board.uart.size),
             (board.ram_base, board.ram_limit - board.ram_base)]
    devices = board.devices.values()
    for device in devices:
        assert all(32 <= i <= 1019 and i != 32 + board.uart.spi for i in device.intids)
        for r in device.regions:
            assert r.base % 0x1000 == 0 and r.size % 0x1000 == 0, r
            for start, size in fixed:
                assert r.base + r.size <= start or start + size <= r.base, (r, hex(start))
    # Owning a device by name is exclusive only if no two devices share a range or an SPI.
    spans = sorted((r.base, r.base + r.size) for d in devices for r in d.regions)
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:]))
    intids = [i for d in devices for i in d.intids]
    assert len(intids) == len(set(intids))


def test_devices_are_mapped_at_board_addresses(tmp_path, stub_image):
    text = partition("rt", cpus=[1], devices=["pcie"]) + partition("b", cpus=[2])
    _, lay = placed(tmp_path, text)
    rt, b = lay.partitions
    assert [(r.name, r.ipa, r.hpa, r.size) for r in rt.regions] == [
        ("pcie mmio", 0x1000_0000, 0x1000_0000, 0x2EFF_0000),
        ("pcie io", 0x3EFF_0000, 0x3EFF_0000, 0x1_0000),
        ("pcie ecam", 0x3F00_0000, 0x3F00_0000, 0x100_0000)]
    assert rt.intids == (35, 36, 37, 38)
    assert b.regions == () and b.intids == ()
    # Board RAM placement is unchanged by devices.
    assert (rt.ram_hpa, b.ram_hpa) == (0x4400_0000, 0x4820_0000)


def test_describe_lists_device_regions_under_their_partition(tmp_path, stub_image):
    system, lay = placed(tmp_path, partition("rt", cpus=[1], devices=["pcie"])
                         + partition("b", cpus=[2]))
    rows = layout.describe(system, lay)
    names = [row[0] for row in rows]
    start = names.index("rt")
    assert names[start:start + 6] == ["rt", "  Image", "  dtb", "  pcie mmio", "  pcie io",
                                      "  pcie ecam"]
    assert rows[start + 5] == ("  pcie ecam", "0x3f000000-0x40000000", "16 MiB",
                               "0x3f000000-0x40000000", "device, pass-through")
    assert rows[start][4] == "RAM; cores 1; wfi trap; pcie INTIDs 35-38"
    assert rows[names.index("b")][4] == "RAM; cores 2; wfi trap"
    assert sum(1 for row in rows if row[4] == "device, pass-through") == 3


def test_too_many_regions_for_one_partition(tmp_path, stub_image, monkeypatch):
    many = layout.BoardDevice("many", "test", tuple(
        layout.DeviceRegion(f"r{i}", 0x0A00_0000 + i * 0x1000, 0x1000) for i in range(9)), (16,))
    monkeypatch.setitem(layout.QEMU_VIRT_ARM64.devices, "many", many)
    with pytest.raises(ConfigError) as info:
        placed(tmp_path, partition(devices=["many"]))
    assert str(info.value).endswith("sys.toml: partition[0].devices: the devices have 9 MMIO "
                                    "regions, more than the 8 a partition can have")


def test_device_over_an_emulated_one(tmp_path, stub_image, monkeypatch):
    bad = layout.BoardDevice("bad", "test", (layout.DeviceRegion("regs", 0x0900_0000, 0x2000),),
                             (16,))
    monkeypatch.setitem(layout.QEMU_VIRT_ARM64.devices, "bad", bad)
    with pytest.raises(ConfigError) as info:
        placed(tmp_path, partition(devices=["bad"]))
    assert str(info.value).endswith("partition[0].devices: bad regs at 0x9000000-0x9002000 "
                                    "overlaps the PL011 (0x9000000-0x9001000)")


def test_initrd_goes_below_the_device_tree_with_a_pristine_copy(tmp_path, stub_image):
    (tmp_path / "rd.cpio").write_bytes(bytes(3 * MiB + 5))
    _, lay = placed(tmp_path, partition(memory="64MiB", initrd="rd.cpio"))
    (p,) = lay.partitions
    assert p.initrd_size == 3 * MiB + 5
    assert p.initrd_ipa == p.dtb_ipa - 4 * MiB          # 2 MiB aligned, ends by the dtb
    assert p.initrd_ipa + p.initrd_size <= p.dtb_ipa
    assert p.initrd_hpa == p.ram_hpa + (p.initrd_ipa - p.ram_ipa)
    assert p.pristine_initrd_hpa == p.pristine_dtb_hpa + 2 * MiB
    assert lay.end == p.pristine_initrd_hpa + 4 * MiB


def test_initrd_that_does_not_fit_names_the_key(tmp_path, stub_image):
    (tmp_path / "rd.cpio").write_bytes(bytes(63 * MiB))
    with pytest.raises(ConfigError) as e:
        placed(tmp_path, partition(memory="64MiB", initrd="rd.cpio"))
    assert e.value.field == "partition[0].initrd"
    assert "does not fit between the image" in str(e.value)


@pytest.mark.parametrize("value, message", [
    ("missing.cpio", "no such file"),
    ("empty.cpio", "is empty"),
    (3, "must be a file path"),
])
def test_bad_initrd(tmp_path, stub_image, value, message):
    (tmp_path / "empty.cpio").write_bytes(b"")
    with pytest.raises(ConfigError) as e:
        load_system(write_toml(tmp_path, partition(initrd=value)))
    assert e.value.field == "partition[0].initrd"
    assert message in str(e.value)


# riscv64: QEMU's riscv virt, RAM from 0x8000_0000, the hypervisor's 64 MiB first (OpenSBI's
# 2 MiB, Tern at 0x8020_0000, the config blob at 0x83f0_0000).
def riscv_system(tmp_path, partitions, board='memory = "1GiB"\n'):
    from tern_test_files import write_riscv_image
    write_riscv_image(tmp_path / "rv.img")
    return placed(tmp_path, '[board]\narch = "riscv64"\ncpus = 8\n' + board + partitions)


def test_riscv64_one_partition(tmp_path):
    _, lay = riscv_system(tmp_path, partition(memory="32MiB", image="rv.img"))
    (p,) = lay.partitions
    assert lay.board is layout.QEMU_VIRT_RISCV64
    assert (p.ram_ipa, p.ram_hpa, p.ram_size) == (0x8000_0000, 0x8400_0000, 32 * MiB)
    # The RISC-V boot protocol: the Image at RAM base + text_offset, entered at its start.
    assert p.image_ipa == p.entry_ipa == 0x8020_0000 and p.image_hpa == 0x8420_0000
    assert p.dtb_ipa == 0x81E0_0000 and p.dtb_hpa == 0x85E0_0000   # last 2 MiB, as on arm64
    assert (p.pristine_image_hpa, p.pristine_dtb_hpa) == (0x8600_0000, 0x8620_0000)
    assert lay.qemu_dtb == (0xBFE0_0000, 0xC000_0000)
    assert (lay.end, lay.ram_end) == (0x8640_0000, 0xC000_0000)


def test_riscv64_elf_at_its_physical_addresses(tmp_path):
    from tern_test_files import EM_RISCV
    write_elf(tmp_path / "g.elf", [(0x8020_0000, 0x8020_0000, b"\x13" * 64, 0x3000)],
              0x8020_0010, machine=EM_RISCV)
    _, lay = riscv_system(tmp_path, partition(image="g.elf"))
    p = lay.partitions[0]
    assert (p.image_ipa, p.entry_ipa, p.image_size, p.image_hpa) == \
        (0x8020_0000, 0x8020_0010, 0x3000, 0x8420_0000)


@pytest.mark.parametrize("board_memory, hole", [
    # Where QEMU 7.2 put its device tree ("info roms"): the 2 MiB boundary below
    # min(RAM end, 3 GiB) less its 1 MiB.
    (128 * MiB, 0x87E0_0000), (129 * MiB, 0x8800_0000), (GiB, 0xBFE0_0000),
    (2 * GiB, 0xBFE0_0000)])
def test_riscv64_qemu_dtb_block(board_memory, hole):
    assert layout.QEMU_VIRT_RISCV64.qemu_dtb_block(board_memory) == (hole, hole + 2 * MiB)


def test_riscv64_partitions_stay_clear_of_the_hypervisor_and_qemus_dtb(tmp_path):
    text = "".join(partition(f"p{i}", [i], memory, "rv.img")
                   for i, memory in enumerate(("6MiB", "512MiB", "512MiB", "8MiB")))
    _, lay = riscv_system(tmp_path, text, board='memory = "2GiB"\n')
    spans = regions(lay)
    hole_start, hole_end = lay.qemu_dtb
    assert (hole_start, hole_end) == (0xBFE0_0000, 0xC000_0000)
    for name, start, end in spans:
        assert start % (2 * MiB) == 0, name
        assert start >= 0x8400_0000, name           # past OpenSBI, Tern and the config blob
        assert end <= 0x1_0000_0000, name
        assert end <= hole_start or start >= hole_end, name
    spans.sort(key=lambda s: s[1])
    for (n1, _, end1), (n2, start2, _) in zip(spans, spans[1:]):
        assert end1 <= start2, f"{n1} overlaps {n2}"
    p1 = lay.by_name("p1")
    assert p1.ram_hpa == 0x8460_0000                # fits below QEMU's device tree
    assert lay.by_name("p2").ram_hpa == 0xC000_0000  # would cover it: goes past it
    assert all(p.ram_ipa == 0x8000_0000 for p in lay.partitions)


def test_riscv64_describe_names_the_firmware_and_a1(tmp_path):
    system, lay = riscv_system(tmp_path, partition(image="rv.img"))
    rows = layout.describe(system, lay)
    assert rows[0] == ("hypervisor", "0x80000000-0x84000000", "64 MiB", "-",
                       "OpenSBI at 0x80000000, image at 0x80200000, config blob at 0x83f00000")
    assert ("  dtb", "0x87e00000-0x88000000", "2 MiB", "0x83e00000-0x84000000",
            "a1 at entry") in rows
    assert rows[1][4] == "RAM; cores 1; wfi native; irq direct"


def test_riscv64_emulated_regions():
    assert layout.QEMU_VIRT_RISCV64.emulated_regions(2) == (
        ("the ns16550", 0x1000_0000, 0x100), ("the IMSIC", 0x2800_0000, 0x1_0000))
    assert layout.QEMU_VIRT_ARM64.emulated_regions(2)[1] == \
        ("the GIC redistributors", 0x080A_0000, 0x4_0000)


def test_riscv64_pcie_catalog_is_qemu_riscv_virt():
    # hw/riscv/virt.c (QEMU 7.2): VIRT_PCIE_PIO, VIRT_PCIE_ECAM, VIRT_PCIE_MMIO.
    pcie = layout.QEMU_VIRT_RISCV64.devices["pcie"]
    assert pcie is layout.VIRT_BOARDS["riscv64"].devices["pcie"]
    assert pcie.kind == "pci-host-ecam-generic" and pcie.dma
    assert [(r.name, r.base, r.size) for r in pcie.regions] == [
        ("io", 0x0300_0000, 0x1_0000), ("ecam", 0x3000_0000, 0x1000_0000),
        ("mmio", 0x4000_0000, 0x4000_0000)]
    # INTx: VIRT_PCIE_IRQ (0x20) and the three after it, at the APLIC; no GIC SPIs.
    assert pcie.spis == () and pcie.intids == pcie.aplic_sources == (32, 33, 34, 35)
    assert layout.QEMU_VIRT_ARM64.devices["pcie"].dma and layout.QEMU_VIRT_ARM64.iommu
    assert not layout.QEMU_VIRT_RISCV64.iommu


def test_riscv64_pcie_clear_of_what_a_partition_already_sees():
    board = layout.QEMU_VIRT_RISCV64
    fixed = [(start, size) for _, start, size in board.emulated_regions(8)]
    fixed.append((board.ram_base, board.memory_max))
    spans = sorted((r.base, r.base + r.size) for r in board.devices["pcie"].regions)
    for start, end in spans:
        assert start % 0x1000 == 0 and end % 0x1000 == 0
        assert all(end <= s or s + size <= start for s, size in fixed), hex(start)
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:]))


def test_riscv64_pcie_mapped_at_board_addresses(tmp_path):
    _, lay = riscv_system(tmp_path, partition("rt", cpus=[1], memory="32MiB", image="rv.img",
                                              devices=["pcie"], unconfined_dma=True)
                          + partition("b", cpus=[2], memory="32MiB", image="rv.img"))
    rt, b = lay.partitions
    assert [(r.name, r.ipa, r.hpa, r.size) for r in rt.regions] == [
        ("pcie io", 0x0300_0000, 0x0300_0000, 0x1_0000),
        ("pcie ecam", 0x3000_0000, 0x3000_0000, 0x1000_0000),
        ("pcie mmio", 0x4000_0000, 0x4000_0000, 0x4000_0000)]
    assert rt.intids == (32, 33, 34, 35) and b.regions == () and b.intids == ()
    assert (rt.ram_hpa, b.ram_hpa) == (0x8400_0000, 0x8600_0000)   # as without the device


def test_riscv64_describe_names_pcie_aplic_sources_and_unconfined_dma(tmp_path):
    system, lay = riscv_system(tmp_path, partition("rt", cpus=[1], memory="32MiB", image="rv.img",
                                                   devices=["pcie"], unconfined_dma=True)
                               + partition("b", cpus=[2], memory="32MiB", image="rv.img"))
    rows = layout.describe(system, lay)
    names = [row[0] for row in rows]
    start = names.index("rt")
    assert rows[start][4] == ("RAM; cores 1; wfi native; irq direct; pcie APLIC sources 32-35; "
                              "DMA unconfined")
    assert names[start + 3:start + 6] == ["  pcie io", "  pcie ecam", "  pcie mmio"]
    assert rows[start + 4] == ("  pcie ecam", "0x30000000-0x40000000", "256 MiB",
                               "0x30000000-0x40000000", "device, pass-through")
    assert rows[names.index("b")][4] == "RAM; cores 2; wfi native; irq direct"

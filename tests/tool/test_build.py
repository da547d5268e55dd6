"""What prepare_system writes into the config blob (read back with abi.unpack) and the work
directory, and which hypervisor images it takes."""

import shutil

import pytest
from tern import abi, build, layout
from tern.config import GiB, MiB, load_system
from tern.errors import ToolError
from tern.layout import place
from tern_test_files import partition, write_image, write_riscv_image, write_toml

pytestmark = pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")


def blob_of(tmp_path, text):
    """The config blob `tern run` would hand the hypervisor for the system `text`."""
    system = load_system(write_toml(tmp_path, text))
    hypervisor = write_image(tmp_path / "tern.img")
    build.prepare_system(system, place(system), tmp_path / "work", hypervisor)
    return abi.unpack((tmp_path / "work" / "config.bin").read_bytes())


def test_header_carries_the_board_ram_size(tmp_path, stub_image):
    blob = blob_of(tmp_path, '[board]\nmemory = "1536MiB"\n' + partition())
    assert blob.version == 8
    assert blob.ram_size == 1536 * MiB


def test_default_board_ram_size(tmp_path, stub_image):
    assert blob_of(tmp_path, partition()).ram_size == 2 * GiB


def test_partitions_carry_their_restart_policy(tmp_path, stub_image):
    blob = blob_of(tmp_path, "[board]\ncpus = 4\n"
                   + partition("rt", cpus=[1])
                   + partition("linux", cpus=[2], on_fault="restart", max_restarts=5,
                               restart_backoff="10ms")
                   + partition("c", cpus=[3], max_restarts=1000000, restart_backoff="60 s"))
    rt, linux, c = blob.partitions
    assert (rt.fault_policy, rt.max_restarts, rt.restart_backoff_us) == (abi.FAULT_INJECT, 0, 0)
    assert (linux.fault_policy, linux.max_restarts, linux.restart_backoff_us) == \
        (abi.FAULT_RESTART, 5, 10_000)
    assert (c.fault_policy, c.max_restarts, c.restart_backoff_us) == \
        (abi.FAULT_INJECT, 1_000_000, 60_000_000)
    # What the hypervisor reads, at the header's offsets: fault_policy at 528 of the record.
    data = (tmp_path / "work" / "config.bin").read_bytes()
    record = data[abi.HEADER.size + abi.PARTITION.size:][:abi.PARTITION.size]
    assert record[528:544] == (1).to_bytes(4, "little") + (5).to_bytes(4, "little") \
        + (10_000).to_bytes(8, "little")


def riscv_system(tmp_path, **keys):
    """A riscv64 system of one 2-vCPU partition, and a flat riscv64 hypervisor binary."""
    write_riscv_image(tmp_path / "rv.img")
    system = load_system(write_toml(tmp_path, '[board]\narch = "riscv64"\ncpus = 3\n'
                                    'memory = "1GiB"\n'
                                    + partition("rt", [1, 2], "32MiB", "rv.img", **keys)))
    hypervisor = tmp_path / "hyp.bin"
    hypervisor.write_bytes(b"\x13\x00\x00\x00" * 1024)        # nops: no header at all
    return system, hypervisor


@pytest.mark.parametrize("irq, flags", [("direct", abi.PF_IRQ_DIRECT | abi.PF_WFI_NATIVE),
                                        ("trap", 0)])
def test_riscv64_run_files(tmp_path, irq, flags):
    system, hypervisor = riscv_system(tmp_path, irq=irq)
    prepared = build.prepare_system(system, place(system), tmp_path / "work", hypervisor)
    blob = abi.unpack((tmp_path / "work" / "config.bin").read_bytes())
    # No SMMU on the riscv board; the partition at the riscv boot protocol's addresses.
    assert (blob.flags, blob.board_cpus, blob.ram_size) == (0, 3, GiB)
    (rt,) = blob.partitions
    assert (rt.ram_ipa, rt.ram_hpa, rt.ram_size) == (0x8000_0000, 0x8400_0000, 32 * MiB)
    assert (rt.image_ipa, rt.entry_ipa, rt.dtb_ipa) == (0x8020_0000, 0x8020_0000, 0x81E0_0000)
    assert (rt.cpus, rt.flags) == ((1, 2), flags)
    assert rt.dtb_size == (tmp_path / "work" / "rt.dtb").stat().st_size
    loads = {what: addr for _, addr, what in prepared.loads}
    assert loads == {"config blob": 0x83F0_0000, "rt image": 0x8420_0000, "rt dtb": 0x85E0_0000,
                     "rt pristine image": 0x8600_0000, "rt pristine dtb": 0x8620_0000}
    assert prepared.command[0] == "qemu-system-riscv64"
    assert prepared.command[prepared.command.index("-kernel") + 1] == str(hypervisor)
    dts = (tmp_path / "work" / "rt.dts").read_text()
    assert 'model = "riscv-virtio,qemu";' in dts
    assert ("imsics@28000000" in dts) == (irq == "direct")


def test_riscv64_pcie_owner_gets_its_regions_and_the_unconfined_dma_flag(tmp_path):
    write_riscv_image(tmp_path / "rv.img")
    system = load_system(write_toml(
        tmp_path, '[board]\narch = "riscv64"\ncpus = 3\nmemory = "1GiB"\npci = ["edu"]\n'
        + partition("rt", cpus=[1], memory="32MiB", image="rv.img", devices=["pcie"],
                    unconfined_dma=True)
        + partition("b", cpus=[2], memory="32MiB", image="rv.img")))
    hypervisor = tmp_path / "hyp.bin"
    hypervisor.write_bytes(b"\x13\x00\x00\x00" * 1024)
    prepared = build.prepare_system(system, place(system), tmp_path / "work", hypervisor)
    data = (tmp_path / "work" / "config.bin").read_bytes()
    blob = abi.unpack(data)
    assert blob.flags == 0                                  # no SMMU on this board
    rt, b = blob.partitions
    assert rt.flags == abi.PF_IRQ_DIRECT | abi.PF_WFI_NATIVE | abi.PF_UNCONFINED_DMA
    assert rt.regions == ((0x0300_0000, 0x0300_0000, 0x1_0000, abi.RF_DEVICE),
                          (0x3000_0000, 0x3000_0000, 0x1000_0000, abi.RF_DEVICE),
                          (0x4000_0000, 0x4000_0000, 0x4000_0000, abi.RF_DEVICE))
    assert rt.irqs == frozenset({32, 33, 34, 35})            # INTA..INTD at the APLIC
    assert b.flags == abi.PF_IRQ_DIRECT | abi.PF_WFI_NATIVE and b.regions == ()
    # The hypervisor reads the flag in the record's flags word (offset 100) as bit 2.
    record = data[abi.HEADER.size:][:abi.PARTITION.size]
    assert int.from_bytes(record[100:104], "little") & 1 << 2
    assert int.from_bytes(record[112:116], "little") == 3   # num_regions
    command = prepared.command
    assert command[command.index("-device") + 1] == "edu,addr=2.0,dma_mask=0xffffffff"
    dts = (tmp_path / "work" / "rt.dts").read_text()
    assert "pci@30000000 {" in dts and "msi-parent = <" in dts
    # Its RAM is at 0x8400_0000 on the board: where a device's DMA must go, as nothing
    # translates it.
    assert "dma-ranges = <0x2000000 0x0 0x84000000 0x0 0x80000000 0x0 0x2000000>;" in dts
    assert "pci@" not in (tmp_path / "work" / "b.dts").read_text()


def test_unconfined_dma_flag_only_when_asked(tmp_path, stub_image):
    # arm64 too: the flag is written, though the board's SMMU confines DMA all the same.
    blob = blob_of(tmp_path, "[board]\ncpus = 3\n"
                   + partition("rt", cpus=[1], devices=["pcie"])
                   + partition("b", cpus=[2], unconfined_dma=True))
    rt, b = blob.partitions
    assert blob.flags == abi.CF_IOMMU
    assert not rt.flags & abi.PF_UNCONFINED_DMA and len(rt.regions) == 3
    assert b.flags == abi.PF_UNCONFINED_DMA


def test_riscv64_hypervisor_may_be_a_flat_binary(tmp_path):
    _, hypervisor = riscv_system(tmp_path)
    assert build.check_hypervisor(hypervisor, layout.QEMU_VIRT_RISCV64) == hypervisor
    assert build.check_hypervisor(write_riscv_image(tmp_path / "h.img"),
                                  layout.QEMU_VIRT_RISCV64) == tmp_path / "h.img"
    # arm64's must say what it is.
    with pytest.raises(ToolError, match=r"^hypervisor image: not an arm64 Image or ELF: "):
        build.check_hypervisor(hypervisor)


@pytest.mark.parametrize("board, image, message", [
    (layout.QEMU_VIRT_RISCV64, write_image, "is an arm64 Image, not riscv64"),
    (layout.QEMU_VIRT_ARM64, write_riscv_image, "is a riscv64 Image, not arm64"),
])
def test_hypervisor_of_the_other_architecture(tmp_path, board, image, message):
    with pytest.raises(ToolError, match=message):
        build.check_hypervisor(image(tmp_path / "tern.img"), board)


def test_riscv64_hypervisor_must_end_below_the_config_blob(tmp_path):
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.truncate(0x83F0_0000 - 0x8020_0000 + 1)           # one byte over, sparse
    with pytest.raises(ToolError, match=r"ends at 0x83f00001, past the config blob at "
                                        r"0x83f00000$"):
        build.check_hypervisor(big, layout.QEMU_VIRT_RISCV64)


def test_manager_flag_reaches_the_blob(tmp_path, stub_image):
    """manager = true is the record's PF_MANAGER bit; partitions without it have it clear."""
    blob = blob_of(tmp_path, "[board]\ncpus = 4\n" + partition("m", cpus=[1], manager=True)
                   + partition("b", cpus=[2]))
    m, b = blob.partitions
    assert m.flags & abi.PF_MANAGER
    assert not b.flags & abi.PF_MANAGER

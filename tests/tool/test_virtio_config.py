"""[[virtio]]: a VirtIO device one partition (the frontend) drives at a virtio-mmio slot and
another (the backend) serves over a channel: the description's checks, the layout, the
config blob's records, both partitions' device trees and `tern check`, on both boards."""

import json
import shutil
import subprocess
import sys

import pytest
from tern import abi, build, layout
from tern.config import dump_toml, load_system
from tern.layout import place
from tern_test_files import channel, partition, write_image, write_riscv_image, write_toml

from test_config import LAUNCHER, error_of
from test_devicetree import at, cells, decompiled

ARM_BARE = "guests/build/arm64/lat.img"      # the stub_image fixture's: a bare-metal Image
DISK = "disk.img"
DISK_BYTES = 3 * 512 * 1024                  # 1.5 MiB


def write_linux(path, riscv=False):
    """An Image whose code0 starts with Linux's EFI stub signature "MZ"."""
    path = write_riscv_image(path) if riscv else write_image(path)
    data = bytearray(path.read_bytes())
    data[:2] = b"MZ"
    path.write_bytes(bytes(data))
    return path


def virtio(name="disk0", device="blk", frontend="linux", backend="store", disk=DISK, **keys):
    """One [[virtio]] table as TOML text; None leaves a key out."""
    table = {"name": name, "device": device, "frontend": frontend, "backend": backend,
             "disk": disk, **keys}
    return dump_toml({"virtio": [{k: v for k, v in table.items() if v is not None}]})


@pytest.fixture
def files(tmp_path, stub_image):
    """linux.img (a Linux Image), rv-linux.img, rv.img (bare-metal riscv64) and the disk."""
    write_linux(tmp_path / "linux.img")
    write_linux(tmp_path / "rv-linux.img", riscv=True)
    write_riscv_image(tmp_path / "rv.img")
    (tmp_path / DISK).write_bytes(b"\xa5" * DISK_BYTES)
    return tmp_path


def arm64(*devices, extra_partitions="", board=""):
    """An arm64 board: linux (Linux, 64 MiB, core 1), store (bare metal, 32 MiB, core 2),
    then `devices` ([[virtio]] text)."""
    return ("[board]\ncpus = 4\n" + board
            + partition("linux", cpus=[1], memory="64MiB", image="linux.img")
            + partition("store", cpus=[2], memory="32MiB", image=ARM_BARE)
            + extra_partitions + "".join(devices))


def riscv64(*devices, extra_partitions=""):
    """The same on riscv64."""
    return ('[board]\narch = "riscv64"\ncpus = 4\nmemory = "1GiB"\n'
            + partition("linux", cpus=[1], memory="64MiB", image="rv-linux.img")
            + partition("store", cpus=[2], memory="32MiB", image="rv.img", irq="trap")
            + extra_partitions + "".join(devices))


def placed(tmp_path, text):
    system = load_system(write_toml(tmp_path, text))
    return system, place(system)


# The description.

def test_a_device_as_described(files):
    system = load_system(write_toml(files, arm64(virtio(), virtio("con", "console", disk=None))))
    disk0, con = system.virtio
    assert (disk0.index, disk0.name, disk0.device, disk0.frontend, disk0.backend) == \
        (0, "disk0", "blk", "linux", "store")
    assert disk0.disk_path == files / DISK and disk0.disk_size == DISK_BYTES
    assert disk0.toml_key == "virtio[0]"
    assert (con.device, con.disk_path, con.disk_size) == ("console", None, 0)
    store = system.partitions[1]
    assert system.initrd_of(store) == (files / DISK, DISK_BYTES, "virtio[0].disk")
    assert system.initrd_of(system.partitions[0]) == (None, 0, None)


def test_linux_images_are_told_apart(files):
    system = load_system(write_toml(files, arm64()))
    assert [p.image.linux for p in system.partitions] == [True, False]
    system = load_system(write_toml(files, riscv64()))
    assert [p.image.linux for p in system.partitions] == [True, False]


@pytest.mark.parametrize("devices, expected", [
    ([virtio(bogus=1)], "virtio[0].bogus: unknown key"),
    ([virtio(name=None)], "virtio[0].name: missing (every virtio device needs a name)"),
    ([virtio(name="Disk")], 'virtio[0].name: "Disk" must be 1 to 15 characters from a-z, 0-9, '
                            "_ and -"),
    ([virtio(), virtio()], 'virtio[1].name: "disk0" is already the name of virtio[0]'),
    ([channel("disk0", members=["linux", "store"]), virtio()],
     'virtio[0].name: "disk0" is already the name of channel[0]'),
    ([virtio(device=None)], 'virtio[0].device: missing (the device type: "blk", "net", '
                            '"console" or "vsock")'),
    ([virtio(device="gpu")], 'virtio[0].device: unknown device "gpu" (use "blk", "net", '
                             '"console" or "vsock")'),
    ([virtio(device="vsock")], "virtio[0].disk: a vsock device has no disk"),
    ([virtio(frontend=None)], "virtio[0].frontend: missing (the partition that drives the "
                              "device)"),
    ([virtio(backend=None)], "virtio[0].backend: missing (the partition that serves it)"),
    ([virtio(frontend="nope")], 'virtio[0].frontend: unknown partition "nope" '
                                "(known: linux, store)"),
    ([virtio(backend="nope")], 'virtio[0].backend: unknown partition "nope" '
                               "(known: linux, store)"),
    ([virtio(frontend="store")], 'virtio[0].backend: "store" is the frontend too: a device is '
                                 "served by another partition"),
    ([virtio(frontend="store", backend="linux", disk=None, device="console",
             backend_trusted=True)],
     'virtio[0].backend_trusted: backend "linux" runs Linux, whose backend (tern-vio) reaches '
     "the channel through a PCI function and cannot map store's RAM: a trusted device needs a "
     "bare-metal backend (vback)"),
    ([virtio(device="vsock", disk=None, backend_trusted=True)],
     "virtio[0].backend_trusted: a vsock device is served in mediated mode only: vback fills "
     "the frontend's receive buffers it holds in their channel slots"),
    ([virtio(backend_trusted="no")], 'virtio[0].backend_trusted: must be true or false '
                                     '(got "no")'),
    ([virtio(disk=None)], 'virtio[0].disk: missing: backend "store" is bare metal, and serves '
                          'the disk image given here (disk = "FILE")'),
    ([virtio(frontend="store", backend="linux")],
     'virtio[0].disk: backend "linux" runs Linux: a Linux backend serves a file of its own'),
    ([virtio(device="net")], "virtio[0].disk: a net device has no disk"),
    ([virtio(device="console")], "virtio[0].disk: a console device has no disk"),
    ([virtio(disk=7)], "virtio[0].disk: must be a file path (got 7)"),
    ([virtio(), virtio("disk1")], 'virtio[1].disk: backend "store" already serves the disk of '
                                  "virtio[0] (one disk a backend: its initrd)"),
    ("virtio = 1\n", "virtio: must be an array of tables ([[virtio]])"),
    ('[virtio]\nname = "x"\n', "virtio: must be an array of tables ([[virtio]])"),
    ([virtio(f"d{i}", "console", disk=None) for i in range(9)],
     "virtio: at most 8 virtio devices are supported (got 9)"),
])
def test_virtio_errors(files, devices, expected):
    text = devices + arm64() if isinstance(devices, str) else arm64(*devices)
    assert error_of(files, text) == expected


def test_a_backend_with_an_initrd_of_its_own_gets_no_disk(files):
    (files / "own.cpio").write_bytes(b"x" * 100)
    text = ("[board]\ncpus = 4\n" + partition("linux", cpus=[1], image="linux.img")
            + partition("store", cpus=[2], image=ARM_BARE, initrd="own.cpio") + virtio())
    assert error_of(files, text) == ('virtio[0].disk: backend "store" names an initrd of its '
                                     "own, where the disk image would be loaded")


def test_a_missing_or_empty_disk_is_refused(files):
    assert error_of(files, arm64(virtio(disk="nope.img"))) == \
        f"virtio[0].disk: no such file: {files / 'nope.img'}"
    (files / "empty.img").write_bytes(b"")
    assert error_of(files, arm64(virtio(disk="empty.img"))) == \
        f"virtio[0].disk: {files / 'empty.img'} is empty"


def test_a_linux_backend_serves_a_blk_without_disk(files):
    system, pl = placed(files, arm64(virtio(frontend="store", backend="linux", disk=None)))
    assert system.virtio[0].disk_path is None
    assert pl.partitions[0].initrd_size == 0


def test_one_frontend_takes_the_boards_slots_in_order(files):
    # riscv64 has 8 slots, MAX_VIRTIO devices: all of them for one frontend.
    devices = [virtio(f"c{i}", "console", disk=None) for i in range(8)]
    system, pl = placed(files, riscv64(*devices))
    assert [(v.slot, v.mmio_ipa, v.irq) for v in pl.virtio] == \
        [(i, 0x1000_1000 + 0x1000 * i, 1 + i) for i in range(8)]
    assert (layout.QEMU_VIRT_RISCV64.virtio_slots.count,
            layout.QEMU_VIRT_ARM64.virtio_slots.count) == (8, 32)


def test_slot_limit_refused(files, monkeypatch):
    # The board's slots, fewer than the devices' maximum, so that the slot check is reached.
    slots = layout.QEMU_VIRT_ARM64.virtio_slots
    few = layout.VirtioSlots(slots.base, slots.stride, 2, slots.first_irq, slots.reg_size)
    board = layout.replace(layout.QEMU_VIRT_ARM64, virtio_slots=few)
    monkeypatch.setitem(layout.VIRT_BOARDS, "arm64", board)
    text = arm64(*[virtio(f"c{i}", "console", disk=None) for i in range(3)])
    assert error_of(files, text) == ("virtio[2]: 3 virtio devices, but the arm64 board has 2 "
                                     "virtio-mmio slots (one per device, whichever its "
                                     "frontend)")


def test_two_frontends_take_different_slots(files):
    # A slot's interrupt can be one partition's only: the description's i-th device, slot i.
    extra = partition("other", cpus=[3], memory="32MiB", image=ARM_BARE)
    text = arm64(virtio("con0", "console", disk=None),
                 virtio("con1", "console", frontend="other", disk=None), extra_partitions=extra)
    system, pl = placed(files, text)
    assert [(v.name, v.frontend, v.slot, hex(v.mmio_ipa), v.irq) for v in pl.virtio] == [
        ("con0", 0, 0, "0xa000000", 48), ("con1", 2, 1, "0xa000200", 49)]
    assert pl.partitions[0].virtio_irqs == (48,) and pl.partitions[2].virtio_irqs == (49,)


def test_a_frontend_owning_the_boards_virtio_mmio_is_refused(files, monkeypatch):
    # No board device covers the slots today; one that did must not reach a frontend.
    fake = layout.BoardDevice("vmmio", "virtio-mmio",
                              regions=(layout.DeviceRegion("regs", 0x0A00_0000, 0x1000),),
                              spis=())
    irq_only = layout.BoardDevice("virq", "virtio-mmio", regions=(), spis=(16 + 3,))
    board = layout.replace(layout.QEMU_VIRT_ARM64,
                           devices={**layout.QEMU_VIRT_ARM64.devices, "vmmio": fake,
                                    "virq": irq_only})
    monkeypatch.setitem(layout.VIRT_BOARDS, "arm64", board)
    linux = 'devices = ["vmmio"]\n'
    text = ("[board]\ncpus = 4\n"
            + partition("linux", cpus=[1], image="linux.img", raw=linux)
            + partition("store", cpus=[2], image=ARM_BARE) + virtio())
    assert error_of(files, text) == (
        'virtio[0].frontend: partition "linux" owns vmmio regs (0xa000000-0xa001000), over '
        "the board's virtio-mmio slots (0xa000000-0xa004000)")
    text = ("[board]\ncpus = 4\n"
            + partition("linux", cpus=[1], image="linux.img", raw='devices = ["virq"]\n')
            + partition("store", cpus=[2], image=ARM_BARE) + virtio())
    assert error_of(files, text) == (
        'virtio[0].frontend: partition "linux" owns INTID 51, an interrupt of the board\'s '
        "virtio-mmio slots")


def test_a_disk_too_big_for_the_backend(files):
    (files / "big.img").write_bytes(bytes(31 * 1024 * 1024))
    assert error_of(files, arm64(virtio(disk="big.img"))) == (
        "virtio[0].disk: disk image, the backend's initrd, (31 MiB) does not fit between the "
        "image (ends at IPA 0x40090000) and the device tree (0x41e00000): give the partition "
        "more memory")


def test_the_board_runs_out_of_ram_for_a_device_channel(files):
    # 210 MiB (QEMU's dtb block at 105 MiB): the partitions and their copies fit, the
    # console's channel, a 2 MiB block, does not.
    text = arm64(virtio(device="console", disk=None), board='memory = "210MiB"\n')
    assert error_of(files, text) == "virtio[0]: partitions and channels need 212 MiB but the " \
                                    "board has 210 MiB"


def test_no_spare_doorbell_left_for_a_backend(files):
    # riscv64's 16 spare sources, all taken by 8 two-member channels.
    channels = [channel(f"c{i}", size="4KiB", members=["linux", "store"]) for i in range(8)]
    text = riscv64(*channels, virtio("con", "console", disk=None))
    assert error_of(files, text) == (
        'virtio[0].backend: no spare doorbell interrupt left for "store": the riscv64 board '
        "has 16 (APLIC sources 48-63), all given to earlier channel members")


# The layout.

@pytest.mark.parametrize("device, size", [
    ("blk", 0x10_5000), ("net", 0x4_5000), ("console", 0x8_5000), ("vsock", 0xC_5000)])
def test_channel_sizes_by_device(files, device, size):
    disk = DISK if device == "blk" else None
    system, pl = placed(files, arm64(virtio("d", device, disk=disk)))
    (ch,) = pl.channels
    assert ch.size == size == layout.VIRTIO_SHAPES[device].channel_size
    assert ch.virtio == device
    assert pl.virtio[0].device_id == {"blk": 2, "net": 1, "console": 3, "vsock": 19}[device]


def test_arm64_layout(files):
    text = arm64(channel("msg", members=["linux", "store"]), virtio(),
                 virtio("con", "console", disk=None),
                 virtio("back", "console", frontend="store", backend="linux", disk=None))
    system, pl = placed(files, text)
    msg, disk0, con, back = pl.channels
    # [[channel]] first, then one per [[virtio]], each 2 MiB aligned past the ones before.
    assert [c.name for c in pl.channels] == ["msg", "disk0", "con", "back"]
    assert disk0.hpa == layout.align_up(msg.hpa + msg.size, layout.BLOCK)
    # Mapped by the backend alone: past its RAM and the earlier doorbell page.
    assert disk0.ipa == layout.align_up(msg.doorbell_ipa + layout.DOORBELL_PAGE, layout.BLOCK)
    assert disk0.doorbell_ipa == disk0.ipa + 0x10_5000
    # Members: the backend (writable, the next spare doorbell), then the frontend (its slot's
    # interrupt).
    assert [(m.name, m.writable, m.frontend, m.irq) for m in disk0.members] == \
        [("store", True, False, 226), ("linux", False, True, 48)]
    assert [(m.name, m.irq) for m in con.members] == [("store", 227), ("linux", 49)]
    assert [(m.name, m.irq) for m in back.members] == [("linux", 228), ("store", 50)]
    # Slots: the description's i-th device at slot i, whichever its frontend.
    assert [(v.name, v.slot, hex(v.mmio_ipa), v.mmio_size, v.irq) for v in pl.virtio] == \
        [("disk0", 0, "0xa000000", 0x200, 48), ("con", 1, "0xa000200", 0x200, 49),
         ("back", 2, "0xa000400", 0x200, 50)]
    assert [v.channel for v in pl.virtio] == [1, 2, 3]
    linux, store = pl.partitions
    assert linux.virtio_irqs == (48, 49) and store.virtio_irqs == (50,)
    assert linux.doorbell_irqs == (224, 228) and store.doorbell_irqs == (225, 226, 227)
    # The disk is store's initrd, below its device tree, with a pristine copy.
    assert store.initrd_size == DISK_BYTES
    assert store.initrd_ipa == layout.align_down(store.dtb_ipa - DISK_BYTES, layout.BLOCK)
    assert store.pristine_initrd_hpa and linux.initrd_size == 0
    # A frontend has no ivshmem function for its device; a Linux backend has one.
    assert [(pl.channels[f.channel].name, f.member) for f in linux.pci_functions] == \
        [("msg", 0), ("back", 0)]
    assert [(pl.channels[f.channel].name, f.member) for f in store.pci_functions] == \
        [("msg", 1), ("disk0", 0), ("con", 0)]


def test_riscv64_layout(files):
    system, pl = placed(files, riscv64(virtio(), virtio("con", "console", disk=None)))
    assert [(v.slot, hex(v.mmio_ipa), v.mmio_size, v.irq) for v in pl.virtio] == \
        [(0, "0x10001000", 0x1000, 1), (1, "0x10002000", 0x1000, 2)]
    disk0, con = pl.channels
    assert [(m.name, m.irq) for m in disk0.members] == [("store", 48), ("linux", 1)]
    assert [(m.name, m.irq) for m in con.members] == [("store", 49), ("linux", 2)]
    assert disk0.ipa == 0x8000_0000 + 32 * 1024 * 1024
    assert pl.partitions[0].virtio_irqs == (1, 2)


# The config blob.

def blob_of(files, text, riscv=False):
    system = load_system(write_toml(files, text))
    pl = place(system)
    if riscv:
        hypervisor = files / "hyp.bin"
        hypervisor.write_bytes(b"\x13\x00\x00\x00" * 1024)
    else:
        hypervisor = write_image(files / "tern.img")
    prepared = build.prepare_system(system, pl, files / "work", hypervisor)
    return prepared, abi.unpack((files / "work" / "config.bin").read_bytes())


@pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")
def test_arm64_blob(files):
    prepared, blob = blob_of(files, arm64(channel("msg", members=["linux", "store"]), virtio(),
                                          virtio("con", "console", disk=None)))
    assert blob.version == 8 and blob == prepared.blob
    assert [c.name for c in blob.channels] == ["msg", "disk0", "con"]
    disk0 = blob.channels[1]
    assert disk0.size == 0x10_5000 and disk0.doorbell_ipa == disk0.ipa + disk0.size
    assert disk0.members == (abi.ChannelMember(1, abi.CHF_WRITABLE, 226),
                             abi.ChannelMember(0, abi.CHF_FRONTEND, 48))
    assert blob.virtio == [
        abi.VirtioRecord("disk0", 0x0A00_0000, abi.VIRTIO_BLK, frontend=0, backend=1,
                         channel=1, irq=48),
        abi.VirtioRecord("con", 0x0A00_0200, abi.VIRTIO_CONSOLE, frontend=0, backend=1,
                         channel=2, irq=49)]
    linux, store = blob.partitions
    assert linux.irqs == {224, 48, 49}
    assert store.irqs == {225, 226, 227}
    # The disk is loaded as store's initrd and its pristine copy.
    assert store.initrd_size == DISK_BYTES and store.pristine_initrd_hpa
    disk = (files / DISK).resolve()
    loads = {what: (path, hpa) for path, hpa, what in prepared.loads}
    store_pl = place(load_system(files / "sys.toml")).partitions[1]
    assert loads["store initrd"] == (disk, store_pl.initrd_hpa)
    assert loads["store pristine initrd"] == (disk, store.pristine_initrd_hpa)
    assert "linux initrd" not in loads
    # The header's count and offset, in the bytes.
    data = (files / "work" / "config.bin").read_bytes()
    end = 56 + 2 * 568 + 3 * 184
    assert (int.from_bytes(data[40:44], "little"), int.from_bytes(data[44:48], "little")) == \
        (2, end)
    assert len(data) == end + 2 * 48


@pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")
def test_riscv64_blob(files):
    _, blob = blob_of(files, riscv64(virtio(), virtio("con", "console", disk=None)), riscv=True)
    assert [(v.mmio_ipa, v.irq, v.device_id) for v in blob.virtio] == \
        [(0x1000_1000, 1, abi.VIRTIO_BLK), (0x1000_2000, 2, abi.VIRTIO_CONSOLE)]
    assert blob.partitions[0].irqs == {1, 2}
    assert blob.partitions[1].irqs == {48, 49}
    assert blob.channels[0].members == (abi.ChannelMember(1, abi.CHF_WRITABLE, 48),
                                        abi.ChannelMember(0, abi.CHF_FRONTEND, 1))


# The device trees.

@pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")
def test_arm64_trees(files):
    blob_of(files, arm64(virtio(), virtio("con", "console", disk=None)))
    linux, warnings = decompiled(files / "work" / "linux.dtb")
    assert warnings == ""
    # As QEMU's own tree has them (-machine dumpdtb=): reg 0x200, SPI 16 + i edge-rising.
    for i, name in enumerate(("virtio_mmio@a000000", "virtio_mmio@a000200")):
        node = at(linux, name)["props"]
        assert node == {"compatible": '"virtio,mmio"',
                        "reg": f"<0x00 0x{0xa000000 + 0x200 * i:x} 0x00 0x200>",
                        "interrupts": f"<0x00 0x{16 + i:02x} 0x01>", "dma-coherent": None}
    # No channel node and no ivshmem function for the frontend.
    assert not any(n.startswith(("tern-channel", "pcie")) for n in linux["nodes"])
    store, warnings = decompiled(files / "work" / "store.dtb")
    assert warnings == ""
    assert not any(n.startswith("virtio_mmio") for n in store["nodes"])
    disk0 = at(store, "/tern-channel@42000000")["props"]
    assert disk0["tern,virtio"] == '"blk"'
    assert disk0["tern,name"] == '"disk0"'
    assert cells(disk0["tern,member"]) == [0] and disk0["tern,members"] == r'"store\0linux"'
    assert cells(disk0["reg"]) == [0, 0x4200_0000, 0, 0x10_5000, 0, 0x4210_5000, 0, 0x1000]
    assert cells(disk0["interrupts"]) == [0, 224 - 32, 1]
    con = at(store, "/tern-channel@42200000")["props"]
    assert con["tern,virtio"] == '"console"'
    # The disk, as store's initrd, in its /chosen.
    chosen = at(store, "/chosen")["props"]
    pl = place(load_system(files / "sys.toml")).partitions[1]
    start = cells(chosen["linux,initrd-start"])
    end = cells(chosen["linux,initrd-end"])
    assert (start[0] << 32 | start[1], end[0] << 32 | end[1]) == \
        (pl.initrd_ipa, pl.initrd_ipa + DISK_BYTES)


@pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")
def test_riscv64_trees(files):
    blob_of(files, riscv64(virtio(), virtio("con", "console", disk=None)), riscv=True)
    linux, warnings = decompiled(files / "work" / "linux.dtb")
    assert warnings == ""
    aplic = cells(at(linux, "/soc/aplic@d000000")["props"]["phandle"])
    for i in range(2):
        node = at(linux, f"/soc/virtio_mmio@{0x10001000 + 0x1000 * i:x}")["props"]
        # As QEMU's: a page of registers, APLIC source 1 + i level-high, no dma-coherent.
        assert node["compatible"] == '"virtio,mmio"'
        assert cells(node["reg"]) == [0, 0x1000_1000 + 0x1000 * i, 0, 0x1000]
        assert cells(node["interrupts"]) == [1 + i, 4]
        assert cells(node["interrupt-parent"]) == aplic
        assert "dma-coherent" not in node
    assert not any(n.startswith("tern-channel") for n in linux["nodes"])
    store, warnings = decompiled(files / "work" / "store.dtb")
    assert warnings == ""
    node = at(store, "/tern-channel@82000000")["props"]
    assert node["tern,virtio"] == '"blk"'
    assert cells(node["interrupts-extended"])[1:] == [48, 1]


# `tern check`.

def test_check_rows_and_json(files):
    path = write_toml(files, arm64(virtio()))
    proc = subprocess.run([sys.executable, LAUNCHER, "check", str(path)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{path}: ok: 2 partitions, 1 virtio device on ")
    rows = [line for line in proc.stdout.splitlines() if "virtio" in line or "doorbell" in line]
    assert any(r.startswith("virtio disk0 ") and "0x42000000-0x42105000" in r
               and "blk served by store (doorbell INTID 224) to linux; mediated" in r
               for r in rows), proc.stdout
    assert any(r.startswith("  initrd ") and 'the disk of virtio "disk0" it serves' in r
               for r in proc.stdout.splitlines()), proc.stdout
    assert any("linux virtio-mmio" in r and "0x0a000000-0x0a000200" in r
               and "slot 0, INTID 48" in r for r in rows), proc.stdout
    proc = subprocess.run([sys.executable, LAUNCHER, "check", "--json", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["layout"]
    assert doc["channels"] == []
    (v,) = doc["virtio"]
    assert (v["name"], v["device"], v["device_id"], v["frontend"], v["backend"]) == \
        ("disk0", "blk", 2, "linux", "store")
    assert v["slot"] == {"index": 0, "mmio": 0x0A00_0000, "size": 0x200, "irq": 48}
    assert (v["channel"]["hpa"] > 0, v["channel"]["size"], v["channel"]["ipa"]) == \
        (True, 0x10_5000, 0x4200_0000)
    assert [(m["name"], m["doorbell_irq"]) for m in v["channel"]["members"]] == \
        [("store", 224), ("linux", 48)]
    assert v["mediated"] is True and v["disk"].endswith(DISK)
    store = doc["partitions"][1]
    assert store["initrd"]["path"].endswith(DISK) and store["initrd"]["size"] == DISK_BYTES


def test_check_shows_a_vsock_device_and_its_guest_cid(files):
    # The second device, at slot 1: guest CID 3 + 1, in the rows and the JSON.
    path = write_toml(files, riscv64(virtio(), virtio("sock0", "vsock", disk=None)))
    proc = subprocess.run([sys.executable, LAUNCHER, "check", str(path)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{path}: ok: 2 partitions, 2 virtio devices on ")
    rows = proc.stdout.splitlines()
    assert any(r.startswith("virtio sock0 ") and "vsock served by store" in r
               and "788 KiB" in r for r in rows), proc.stdout
    assert any("linux virtio-mmio" in r and "slot 1," in r
               and "(device ID 19, guest CID 4)" in r for r in rows), proc.stdout
    proc = subprocess.run([sys.executable, LAUNCHER, "check", "--json", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    disk0, sock0 = json.loads(proc.stdout)["layout"]["virtio"]
    assert "guest_cid" not in disk0
    assert (sock0["device"], sock0["device_id"], sock0["guest_cid"]) == ("vsock", 19, 4)
    assert sock0["channel"]["size"] == 0xC_5000


# backend_trusted: the backend's window onto its frontend's RAM.

def test_trusted_window_arm64(files):
    system, pl = placed(files, arm64(virtio(backend_trusted=True),
                                     virtio("con", "console", disk=None)))
    disk0, con = pl.virtio
    linux, store = pl.partitions
    assert (disk0.trusted, con.trusted) == (True, False)
    # Past store's RAM and every channel's doorbell page: the channels stay where they were.
    assert [hex(c.ipa) for c in pl.channels] == ["0x42000000", "0x42200000"]
    assert disk0.window_ipa == 0x4240_0000
    assert store.windows == (layout.RamWindow("linux", 0x4240_0000, linux.ram_hpa,
                                              64 * 1024 * 1024),)
    assert linux.windows == ()


@pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")
def test_trusted_blob_riscv64(files):
    _, blob = blob_of(files, riscv64(virtio(backend_trusted=True)), riscv=True)
    linux, store = blob.partitions
    (v,) = blob.virtio
    assert v.flags == abi.VF_BACKEND_TRUSTED
    ch = blob.channels[0]
    window = layout.align_up(ch.doorbell_ipa + 0x1000, layout.BLOCK)
    assert store.regions == (abi.Region(window, linux.ram_hpa, linux.ram_size,
                                        abi.RF_PARTITION_RAM),)
    assert linux.regions == ()


@pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")
def test_untrusted_blob_has_no_window(files):
    _, blob = blob_of(files, arm64(virtio()))
    assert blob.virtio[0].flags == 0 and blob.partitions[1].regions == ()


def test_trusted_window_past_the_ipa_limit(files, monkeypatch):
    # Unreachable on the real boards (arm64's 3 GiB of RAM from 1 GiB end by its 4 GiB limit):
    # a board with less IPA space shows the check.
    board = layout.VIRT_BOARDS["arm64"]
    monkeypatch.setitem(layout.VIRT_BOARDS, "arm64", layout.replace(board, ipa_limit=0x4400_0000))
    assert error_of(files, arm64(virtio(backend_trusted=True))) == (
        "virtio[0].backend_trusted: linux's RAM (64 MiB) does not fit in store's map: it would "
        "take IPA 0x42200000-0x46200000, past the arm64 board's IPA limit 0x44000000")


def test_one_window_per_frontend(files):
    _, pl = placed(files, arm64(virtio("c0", "console", disk=None, backend_trusted=True),
                                virtio("c1", "console", disk=None, backend_trusted=True)))
    assert [v.window_ipa for v in pl.virtio] == [0x4240_0000] * 2
    assert len(pl.partitions[1].windows) == 1


def test_check_says_what_a_trusted_device_trusts(files):
    path = write_toml(files, arm64(virtio(backend_trusted=True)))
    proc = subprocess.run([sys.executable, LAUNCHER, "check", str(path)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    pl = place(load_system(path))
    linux = pl.partitions[0]
    assert (f"{path}: note: virtio[0].backend_trusted: disk0: backend store is trusted: it "
            f"reads and writes all of linux's RAM (64 MiB at 0x{linux.ram_hpa:x}, IPA "
            f"0x42200000 in store)") in proc.stdout.splitlines(), proc.stdout
    assert any(r.startswith("virtio disk0 ") and "; trusted: the backend reads and writes all "
               "of linux's RAM" in r for r in proc.stdout.splitlines()), proc.stdout
    assert any(r.startswith("  store window ") and "0x42200000-0x46200000" in r
               for r in proc.stdout.splitlines()), proc.stdout
    proc = subprocess.run([sys.executable, LAUNCHER, "check", "--json", str(path)],
                          capture_output=True, text=True)
    doc = json.loads(proc.stdout)
    (v,) = doc["layout"]["virtio"]
    assert v["mediated"] is False
    assert v["window"] == {"frontend_ram": {"hpa": linux.ram_hpa, "size": 64 * 1024 * 1024,
                                            "ipa": 0x4220_0000}}
    assert [f["field"] for f in doc["findings"]] == ["virtio[0].backend_trusted"]

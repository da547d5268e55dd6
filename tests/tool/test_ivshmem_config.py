"""A channel as an ivshmem PCI function (issue 28, the Linux side): which members get the
emulated PCIe host bridge, the fixed BAR assignment, the bridge's device tree node and what
`tern check` shows and refuses."""

import dataclasses
import json
import shutil
import subprocess
import sys

import pytest
from tern import build, layout
from tern.config import KiB, MiB, load_system
from tern.layout import PciFunction, place
from tern_test_files import channel, partition, write_image, write_toml

from test_channel_config import RV_IMAGE, placed, riscv_two
from test_config import LAUNCHER, error_of
from test_devicetree import at, cells, decompiled

needs_dtc = pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")


def three(*channels, board="[board]\ncpus = 4\n"):
    """arm64: partitions a, b and c (c owns the board's PCIe bridge), then `channels`."""
    return (board + partition("a", cpus=[1], memory="64MiB")
            + partition("b", cpus=[2], memory="32MiB")
            + partition("c", cpus=[3], memory="4MiB", devices=["pcie"]) + "".join(channels))


# The BAR rule (contract item 4), in one place.

def test_bar2_is_the_size_rounded_up_to_a_power_of_two_and_at_least_a_page():
    assert [layout.ivshmem_bar2_size(s) for s in (4 * KiB, 8 * KiB, 12 * KiB, 64 * KiB,
                                                  3 * MiB, 64 * MiB)] == \
        [4 * KiB, 8 * KiB, 16 * KiB, 64 * KiB, 4 * MiB, 64 * MiB]


@pytest.mark.parametrize("sizes, expected", [
    ([64 * KiB], [(0x1000_0000, 0x1010_0000, 64 * KiB)]),
    # A page, then 64 KiB aligned past it, then 4 MiB (3 MiB rounded up) aligned past that.
    ([4 * KiB, 64 * KiB], [(0x1000_0000, 0x1010_0000, 4 * KiB),
                           (0x1000_1000, 0x1011_0000, 64 * KiB)]),
    ([4 * KiB, 64 * KiB, 3 * MiB], [(0x1000_0000, 0x1010_0000, 4 * KiB),
                                    (0x1000_1000, 0x1011_0000, 64 * KiB),
                                    (0x1000_2000, 0x1040_0000, 4 * MiB)]),
    # In device order, not sorted by size: a small BAR2 after a big one follows it.
    ([2 * MiB, 12 * KiB], [(0x1000_0000, 0x1020_0000, 2 * MiB),
                           (0x1000_1000, 0x1040_0000, 16 * KiB)]),
])
def test_bar_addresses(sizes, expected):
    assert layout.ivshmem_functions(0x1000_0000, sizes) == expected


def test_layout_gives_each_member_its_own_functions(tmp_path, stub_image):
    system, pl = placed(tmp_path, three(channel("msg", size="64KiB", members=["a", "b"]),
                                        channel("log", size="4KiB", members=["b", "c"]),
                                        channel("big", size="3MiB", members=["a"],
                                                readonly=["b"])))
    a, b, c = pl.partitions
    # a: msg and big, devices 1 and 2 (log does not count: a is not in it).
    assert a.pci_functions == (PciFunction(0, 0, 1, 0x1000_0000, 0x1010_0000, 64 * KiB),
                               PciFunction(2, 0, 2, 0x1000_1000, 0x1040_0000, 4 * MiB))
    # b: all three, member index as each channel has it.
    assert b.pci_functions == (PciFunction(0, 1, 1, 0x1000_0000, 0x1010_0000, 64 * KiB),
                               PciFunction(1, 0, 2, 0x1000_1000, 0x1011_0000, 4 * KiB),
                               PciFunction(2, 1, 3, 0x1000_2000, 0x1040_0000, 4 * MiB))
    # c owns the board's bridge: no functions, a note instead.
    assert c.pci_functions == ()
    assert layout.notes(system) == [("channel[1]", 'partition "c" owns pcie, so channel "log" '
                                     "is no ivshmem PCI function there: only its tern,channel "
                                     "device tree node")]
    assert b.pci_functions[0].bdf == "00:01.0" and b.pci_functions[2].bdf == "00:03.0"


def test_riscv64_window(tmp_path):
    _, pl = placed(tmp_path, riscv_two(tmp_path, channel("log", size="12KiB")))
    for p in pl.partitions:
        assert p.pci_functions == (PciFunction(0, p is pl.partitions[1], 1, 0x4000_0000,
                                               0x4010_0000, 64 * KiB),
                                   PciFunction(1, p is pl.partitions[1], 2, 0x4000_1000,
                                               0x4011_0000, 16 * KiB))


def test_a_partition_in_every_channel_gets_a_function_for_each(tmp_path, stub_image):
    _, pl = placed(tmp_path, three(*(channel(f"c{i}", size="64MiB") for i in range(8))))
    functions = pl.partitions[0].pci_functions
    assert [f.device for f in functions] == list(range(1, 9))
    assert functions[-1].bar2 + functions[-1].bar2_size == 0x3400_0000     # in the window


def test_a_function_past_the_window_is_refused(tmp_path, stub_image, monkeypatch):
    board = layout.QEMU_VIRT_ARM64
    pcie = board.devices["pcie"]
    small = dataclasses.replace(pcie, regions=tuple(
        dataclasses.replace(r, size=1 * MiB + 128 * KiB) if r.name == "mmio" else r
        for r in pcie.regions))
    monkeypatch.setitem(layout.VIRT_BOARDS, "arm64",
                        dataclasses.replace(board, devices={"pcie": small}))
    text = three(channel("msg", size="64KiB"))
    place(load_system(write_toml(tmp_path, text)))                  # 64 KiB fits ...
    assert error_of(tmp_path, three(channel("msg", size="64KiB"),
                                    channel("log", size="128KiB"))) == (
        'channel[1]: its ivshmem function in partition "a" (BAR2 0x10120000-0x10140000) does '
        "not fit in the PCI memory window 0x10000000-0x10120000")


# tern check.

def test_check_text_shows_the_functions_and_the_note(tmp_path, stub_image):
    path = write_toml(tmp_path, three(channel("msg", size="12KiB", members=["a", "c"],
                                              readonly=["b"])))
    proc = subprocess.run([sys.executable, LAUNCHER, "check", str(path)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.splitlines()
    (a,) = [r for r in rows if r.startswith("  a pci 00:01.0")]
    assert "0x10100000-0x10104000" in a and "16 KiB" in a
    assert a.endswith("ivshmem BAR2 (memory 12 KiB); BAR0 registers 0x10000000")
    assert rows.index(a) == rows.index(next(r for r in rows if r.startswith("  doorbell"))) + 1
    assert any(r.startswith("  b pci 00:01.0") for r in rows)
    assert not any(r.startswith("  c pci") for r in rows)
    assert rows[-1] == (f'{path}: note: channel[0]: partition "c" owns pcie, so channel "msg" '
                        "is no ivshmem PCI function there: only its tern,channel device tree "
                        "node")


def test_check_json_shows_the_functions_and_the_note(tmp_path, stub_image):
    path = write_toml(tmp_path, three(channel("msg", members=["a", "c"])))
    proc = subprocess.run([sys.executable, LAUNCHER, "check", "--json", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["ok"]
    a, c = doc["layout"]["channels"][0]["members"]
    assert a["pci"] == {"bdf": "00:01.0", "device": 1, "bar0": 0x1000_0000,
                        "bar2": 0x1010_0000, "bar2_size": 64 * KiB}
    assert c["pci"] is None
    assert doc["findings"] == [{"severity": "note", "field": "channel[0]",
                                "message": 'partition "c" owns pcie, so channel "msg" is no '
                                           "ivshmem PCI function there: only its tern,channel "
                                           "device tree node"}]


# The device tree.

def _props(root, path):
    return at(root, path)["props"]


@needs_dtc
def test_arm64_bridge(tmp_path, stub_image):
    system = load_system(write_toml(tmp_path, three(channel("msg", members=["a", "b"]),
                                                    channel("log", size="4KiB",
                                                            members=["b", "c"]))))
    build.prepare_system(system, place(system), tmp_path / "work",
                         write_image(tmp_path / "tern.img"))
    for name, doorbells in (("a", [(1, 224)]), ("b", [(1, 225), (2, 226)])):
        root, warnings = decompiled(tmp_path / "work" / f"{name}.dtb")
        assert warnings == ""
        bridge = _props(root, "/pcie@10000000")
        assert bridge["compatible"] == '"pci-host-ecam-generic"'
        assert bridge["device_type"] == '"pci"'
        assert cells(bridge["#address-cells"]) == [3] and cells(bridge["#size-cells"]) == [2]
        assert cells(bridge["#interrupt-cells"]) == [1]
        assert cells(bridge["bus-range"]) == [0, 0]
        assert cells(bridge["reg"]) == [0, 0x3F00_0000, 0, 0x10_0000]
        assert cells(bridge["ranges"]) == [0x0200_0000, 0, 0x1000_0000, 0, 0x1000_0000,
                                           0, 0x2EFF_0000]
        assert "dma-coherent" in bridge and "msi-parent" not in bridge
        assert cells(bridge["interrupt-map-mask"]) == [0xF800, 0, 0, 7]
        gic = cells(_props(root, "/intc@8000000")["phandle"])[0]
        expected = []
        for device, intid in doorbells:
            expected += [device << 11, 0, 0, 1, gic, 0, intid - 32, 4]      # SPI, level-high
        assert cells(bridge["interrupt-map"]) == expected
        assert cells(_props(root, "/chosen")["linux,pci-probe-only"]) == [1]
        assert any(n.startswith("tern-channel@") for n in root["nodes"])
    # c owns the board's bridge: its own node (all 16 buses), no probe-only, its tern-channel.
    root, _ = decompiled(tmp_path / "work" / "c.dtb")
    assert cells(_props(root, "/pcie@10000000")["bus-range"]) == [0, 15]
    assert "linux,pci-probe-only" not in _props(root, "/chosen")
    assert any(n.startswith("tern-channel@") for n in root["nodes"])


@needs_dtc
def test_no_bridge_outside_a_channel(tmp_path, stub_image):
    system = load_system(write_toml(tmp_path, three(channel("msg", members=["a", "b"]))))
    build.prepare_system(system, place(system), tmp_path / "work",
                         write_image(tmp_path / "tern.img"))
    root, _ = decompiled(tmp_path / "work" / "c.dtb")
    assert cells(_props(root, "/pcie@10000000")["bus-range"]) == [0, 15]    # its own
    system = load_system(write_toml(tmp_path, partition("a", cpus=[1])))
    build.prepare_system(system, place(system), tmp_path / "solo",
                         write_image(tmp_path / "tern.img"))
    root, _ = decompiled(tmp_path / "solo" / "a.dtb")
    assert not any(n.startswith("pci") for n in root["nodes"])
    assert "linux,pci-probe-only" not in _props(root, "/chosen")


@needs_dtc
def test_riscv64_bridge_trap_and_direct(tmp_path):
    system = load_system(write_toml(tmp_path, riscv_two(tmp_path, channel("log", size="4KiB"))))
    hypervisor = tmp_path / "hyp.bin"
    hypervisor.write_bytes(b"\x13\x00\x00\x00" * 1024)
    build.prepare_system(system, place(system), tmp_path / "work", hypervisor)
    # a is trap-less (irq = "direct"), b trap-and-emulate: doorbells 48, 50 and 49, 51.
    for name, sources in (("a", (48, 50)), ("b", (49, 51))):
        root, warnings = decompiled(tmp_path / "work" / f"{name}.dtb")
        assert warnings == ""
        bridge = _props(root, "/soc/pci@30000000")
        assert bridge["compatible"] == '"pci-host-ecam-generic"'
        assert cells(bridge["bus-range"]) == [0, 0]
        assert cells(bridge["reg"]) == [0, 0x3000_0000, 0, 0x10_0000]
        assert cells(bridge["ranges"]) == [0x0200_0000, 0, 0x4000_0000, 0, 0x4000_0000,
                                           0, 0x4000_0000]
        assert "msi-parent" not in bridge and "dma-ranges" not in bridge
        assert "dma-coherent" in bridge
        aplic = cells(_props(root, "/soc/aplic@d000000")["phandle"])[0]
        assert cells(bridge["interrupt-map-mask"]) == [0xF800, 0, 0, 7]
        assert cells(bridge["interrupt-map"]) == [0x800, 0, 0, 1, aplic, sources[0], 4,
                                                  0x1000, 0, 0, 1, aplic, sources[1], 4]
        assert cells(_props(root, "/chosen")["linux,pci-probe-only"]) == [1]


@needs_dtc
def test_riscv64_pcie_owner_keeps_its_own_bridge(tmp_path):
    c = partition("c", cpus=[3], memory="32MiB", image=RV_IMAGE, devices=["pcie"],
                  unconfined_dma=True)
    system = load_system(write_toml(tmp_path, riscv_two(
        tmp_path, channel("log", members=["a", "c"]), more_partitions=c)))
    hypervisor = tmp_path / "hyp.bin"
    hypervisor.write_bytes(b"\x13\x00\x00\x00" * 1024)
    build.prepare_system(system, place(system), tmp_path / "work", hypervisor)
    root, _ = decompiled(tmp_path / "work" / "c.dtb")
    assert cells(_props(root, "/soc/pci@30000000")["bus-range"]) == [0, 255]
    assert "linux,pci-probe-only" not in _props(root, "/chosen")
    assert any(n.startswith("tern-channel@") for n in root["nodes"])



def test_each_function_matches_its_own_interrupt_map_entry():
    # As Linux resolves INTx through interrupt-map: the first entry whose cells equal the
    # function's (device << 11, 0, 0, pin) under the mask.  Eight functions, devices 1-8.
    from tern import devicetree
    functions = [(device, 224 + device) for device in range(1, 9)]
    lines = devicetree.ivshmem_bridge_node(layout.QEMU_VIRT_ARM64.devices["pcie"], False,
                                           functions, lambda irq: (1, 0, irq - 32))
    text = "\n".join(lines)
    mask = cells(text.split("interrupt-map-mask = ")[1].split(";")[0])
    entries = [cells(e.strip()) for e in text.split("interrupt-map = ")[1].split(";")[0].split(",")]
    for device, intid in functions:
        child = [device << 11, 0, 0, 1]
        first = next(e for e in entries
                     if all((c ^ v) & m == 0 for c, v, m in zip(child, e, mask)))
        assert first[4:] == [1, 0, intid - 32, 4], device

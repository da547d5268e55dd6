"""[[channel]]: shared memory between partitions, with doorbells: the description's checks,
the layout, the config blob's records, each member's device tree node and `tern check`."""

import dataclasses
import json
import shutil
import subprocess
import sys
import tomllib

import pytest
from tern import abi, build, layout
from tern.config import Channel, KiB, MiB, dump_toml, load_system
from tern.errors import ConfigError
from tern.layout import place
from tern_test_files import channel, partition, write_image, write_riscv_image, write_toml

from test_config import LAUNCHER, error_of, example_with_stand_ins
from test_devicetree import at, cells, decompiled

RV_IMAGE = "rv.img"


def two(board="", **channel_keys):
    """An arm64 board with partitions a (64 MiB, core 1) and b (32 MiB, core 2) and one
    channel between them."""
    return (board + partition("a", cpus=[1], memory="64MiB")
            + partition("b", cpus=[2], memory="32MiB") + channel(**channel_keys))


def riscv_two(tmp_path, extra="", more_partitions=""):
    """A riscv64 board with partitions a (trap-less) and b (trap-and-emulate), `more_partitions`
    and the channel msg between a and b, then `extra`."""
    write_riscv_image(tmp_path / RV_IMAGE)
    return ('[board]\narch = "riscv64"\ncpus = 4\nmemory = "1GiB"\n'
            + partition("a", cpus=[1], memory="32MiB", image=RV_IMAGE)
            + partition("b", cpus=[2], memory="32MiB", image=RV_IMAGE, irq="trap")
            + more_partitions + channel() + extra)


def placed(tmp_path, text):
    system = load_system(write_toml(tmp_path, text))
    return system, place(system)


# The description.

def test_a_channel_as_described(tmp_path, stub_image):
    system = load_system(write_toml(
        tmp_path, "[board]\ncpus = 4\n" + partition("a", cpus=[1]) + partition("b", cpus=[2])
        + partition("mon", cpus=[3]) + channel(members=["b", "a"], readonly=["mon"])))
    (c,) = system.channels
    assert (c.index, c.name, c.size, c.members, c.readonly) == \
        (0, "msg", 64 * KiB, ("b", "a"), ("mon",))
    assert c.all_members == ("b", "a", "mon") and c.toml_key == "channel[0]"
    assert c.writable("a") and not c.writable("mon")


def test_no_channel_by_default(tmp_path, stub_image):
    system, pl = placed(tmp_path, partition())
    assert system.channels == () and pl.channels == ()
    assert pl.partitions[0].doorbell_irqs == ()


def test_readonly_members_alone_with_one_writer(tmp_path, stub_image):
    system = load_system(write_toml(tmp_path, two(members=["a"], readonly=["b"])))
    assert system.channels[0].members == ("a",) and system.channels[0].readonly == ("b",)


@pytest.mark.parametrize("text, expected", [
    (two(name="a" * 16), f'channel[0].name: "{"a" * 16}" must be 1 to 15 characters '
                         "from a-z, 0-9, _ and -"),
    (two(name="Msg"), 'channel[0].name: "Msg" must be 1 to 15 characters from a-z, 0-9, _ and -'),
    (two(name=None), "channel[0].name: missing (every channel needs a name)"),
    (two() + channel(), 'channel[1].name: "msg" is already the name of channel[0]'),
    (two(bogus=1), "channel[0].bogus: unknown key"),
    (two(size=None), 'channel[0].size: missing (give the shared memory\'s size, like "64KiB")'),
    (two(size="6KiB"), "channel[0].size: must be a multiple of 4 KiB (got 6 KiB)"),
    (two(size=4097), "channel[0].size: must be a multiple of 4 KiB (got 4 KiB)"),
    (two(size=0), "channel[0].size: must be positive (got 0)"),
    (two(size="65MiB"), "channel[0].size: must be at most 64 MiB (got 65 MiB)"),
    (two(size="64 MB"), 'channel[0].size: "64 MB" is not a size (use bytes, or "N KiB", '
                        '"N MiB", "N GiB", "N TiB")'),
    (two(members=None), 'channel[0].members: missing (list the partitions that share it, '
                        'like ["a", "b"])'),
    (two(members=["a", "c"]), 'channel[0].members: unknown partition "c" (known: a, b)'),
    (two(members=["a"], readonly=["zz"]),
     'channel[0].readonly: unknown partition "zz" (known: a, b)'),
    (two(members=["a", "a"]), 'channel[0].members: "a" is listed twice'),
    (two(members=["a"], readonly=["b", "b"]), 'channel[0].readonly: "b" is listed twice'),
    (two(members=["a", "b"], readonly=["a"]), 'channel[0].readonly: "a" is already in members'),
    (two(members=["a"]), 'channel[0].members: a channel needs at least two partitions '
                         '(members and readonly together; got "a" alone)'),
    (two(members=[], readonly=["a", "b"]),
     "channel[0].members: must list at least one partition (which maps it read-write)"),
    (two(members="a"), 'channel[0].members: must be a list of partition names, like ["a", "b"] '
                       '(got "a")'),
    (two(readonly=[1]), 'channel[0].readonly: must be a list of partition names, '
                        'like ["a", "b"] (got [1])'),
    (two(members=["a", "b"] * 4 + ["a"]),
     "channel[0].members: at most 8 partitions share a channel (got 9)"),
    (two(members=["a"] * 5, readonly=["b"] * 4),
     'channel[0].members: "a" is listed twice'),
    (two(members=["a", "b"], readonly=["b"] * 7),
     "channel[0].readonly: at most 8 partitions share a channel (got 9)"),
    ("channel = 1\n" + partition("a", cpus=[1]),
     "channel: must be an array of tables ([[channel]])"),
    (two(size="1GiB"), "channel[0].size: must be at most 64 MiB (got 1 GiB)"),
    (partition("a", cpus=[1]) + partition("b", cpus=[2]) + "[channel]\nname = 'x'\n",
     "channel: must be an array of tables ([[channel]])"),
    (two() + "".join(channel(f"c{i}") for i in range(8)),
     "channel: at most 8 channels are supported (got 9)"),
])
def test_channel_errors(tmp_path, stub_image, text, expected):
    assert error_of(tmp_path, text) == expected


def test_a_size_that_does_not_fit_in_the_boards_ram(tmp_path, stub_image):
    # 128 MiB board: a and b from 0x44200000 (past QEMU's dtb block) to 0x45600000, their
    # pristine copies to 0x45e00000: 34 MiB left before 0x48000000.
    board = '[board]\nmemory = "128MiB"\n'
    parts = partition("a", cpus=[1], memory="16MiB") + partition("b", cpus=[2], memory="4MiB")
    _, pl = placed(tmp_path, board + parts + channel(size="16MiB"))
    assert pl.channels[0].hpa == 0x45E0_0000 and pl.end == 0x46E0_0000
    assert pl.channels[0].ipa == 0x4100_0000                    # past a's 16 MiB of RAM
    assert error_of(tmp_path, board + parts + channel(size="36MiB")) == \
        "channel[0].size: partitions and channels need 130 MiB but the board has 128 MiB"


def test_no_spare_doorbell_left_on_arm64(tmp_path, stub_image):
    # 32 doorbells (INTIDs 224-255): 6 channels of 5 members take 30, the 7th runs out at
    # its 3rd member.
    names = [f"p{i}" for i in range(5)]
    text = "[board]\ncpus = 5\n" + "".join(partition(n, cpus=[i], memory="4MiB")
                                           for i, n in enumerate(names))
    text += "".join(channel(f"c{i}", size="4KiB", members=names) for i in range(7))
    assert error_of(tmp_path, text) == (
        'channel[6].members: no spare doorbell interrupt left for "p2": the arm64 board has 32 '
        "(INTIDs 224-255), all given to earlier channel members")


def test_no_spare_doorbell_left_on_riscv64_names_the_readonly_key(tmp_path):
    # 16 doorbells (APLIC sources 48-63): 8 channels of 2 take them all ...
    _, pl = placed(tmp_path, riscv_two(tmp_path, "".join(channel(f"c{i}") for i in range(7))))
    assert [m.irq for c in pl.channels for m in c.members] == list(range(48, 64))
    # ... and a read-only third member of the 8th finds none left.
    c = partition("c", cpus=[3], memory="32MiB", image=RV_IMAGE)
    text = riscv_two(tmp_path, "".join(channel(f"c{i}") for i in range(6))
                     + channel("c6", readonly=["c"]), more_partitions=c)
    assert error_of(tmp_path, text) == (
        'channel[7].readonly: no spare doorbell interrupt left for "c": the riscv64 board has '
        "16 (APLIC sources 48-63), all given to earlier channel members")


def test_a_board_without_doorbells_has_no_channels(tmp_path, stub_image, monkeypatch):
    board = dataclasses.replace(layout.QEMU_VIRT_ARM64, doorbell_irqs=())
    monkeypatch.setitem(layout.VIRT_BOARDS, "arm64", board)
    assert error_of(tmp_path, two()) == \
        "channel[0]: not on arm64: the board has no spare interrupt for a doorbell"
    load_system(write_toml(tmp_path, partition()))      # and without a channel, all is well


def test_a_channel_past_the_ipa_limit(tmp_path, stub_image, monkeypatch):
    board = dataclasses.replace(layout.QEMU_VIRT_ARM64, ipa_limit=0x4400_0000 + 64 * KiB)
    monkeypatch.setitem(layout.VIRT_BOARDS, "arm64", board)
    assert error_of(tmp_path, two()) == (
        "channel[0].size: with its doorbell page it would take IPA 0x44000000-0x44011000, past "
        "the arm64 board's IPA limit 0x44010000")


def test_a_channel_over_an_emulated_device(tmp_path, stub_image, monkeypatch):
    uart = dataclasses.replace(layout.QEMU_VIRT_ARM64.uart, base=0x4401_0000)
    board = dataclasses.replace(layout.QEMU_VIRT_ARM64, uart=uart)
    monkeypatch.setitem(layout.VIRT_BOARDS, "arm64", board)
    assert error_of(tmp_path, two()) == (
        "channel[0]: its memory and doorbell page at IPA 0x44000000-0x44011000 overlap the "
        'PL011 (0x44010000-0x44011000) in partition "a"')


# The layout.

def test_layout_of_two_channels(tmp_path, stub_image):
    system, pl = placed(tmp_path, "[board]\ncpus = 4\n"
                        + partition("a", cpus=[1], memory="64MiB")
                        + partition("b", cpus=[2], memory="32MiB")
                        + partition("mon", cpus=[3], memory="4MiB")
                        + channel("msg", members=["a", "b"], readonly=["mon"])
                        + channel("log", size="4KiB", members=["mon", "b"]))
    msg, log = pl.channels
    # Board RAM: after everything else, 2 MiB aligned, and clear of it all.
    taken = [(p.ram_hpa, p.ram_size) for p in pl.partitions]
    taken += [(p.pristine_image_hpa, p.image_size) for p in pl.partitions]
    taken += [(p.pristine_dtb_hpa, p.dtb_area) for p in pl.partitions]
    taken += [(pl.board.hyp_base, pl.board.hyp_size), (pl.qemu_dtb[0], layout.BLOCK)]
    for ch in (msg, log):
        assert ch.hpa % layout.BLOCK == 0
        assert all(ch.hpa >= start + size or ch.hpa + ch.size <= start for start, size in taken)
        assert ch.hpa + ch.size <= pl.ram_end
    assert msg.hpa == max(start + size for start, size in taken[:-2]) == 0x4B20_0000
    assert log.hpa == msg.hpa + layout.BLOCK
    assert pl.end == log.hpa + layout.BLOCK
    # IPA: past every member's RAM (a's ends at 0x44000000), then past msg's doorbell page.
    assert (msg.ipa, msg.size, msg.doorbell_ipa) == (0x4400_0000, 64 * KiB, 0x4401_0000)
    assert (log.ipa, log.size, log.doorbell_ipa) == (0x4420_0000, 4 * KiB, 0x4420_1000)
    # Members in index order (members, then readonly), doorbells in order from INTID 224.
    assert msg.members == (layout.ChannelMember("a", 0, True, 224),
                           layout.ChannelMember("b", 1, True, 225),
                           layout.ChannelMember("mon", 2, False, 226))
    assert log.members == (layout.ChannelMember("mon", 2, True, 227),
                           layout.ChannelMember("b", 1, True, 228))
    assert [p.doorbell_irqs for p in pl.partitions] == [(224,), (225, 228), (226, 227)]
    assert [p.intids for p in pl.partitions] == [(), (), ()]


def test_a_system_without_channels_is_laid_out_as_before(tmp_path, stub_image):
    text = partition("a", cpus=[1]) + partition("b", cpus=[2])
    _, without = placed(tmp_path, text)
    _, with_one = placed(tmp_path, text + channel())
    strip = [dataclasses.replace(p, doorbell_irqs=(), pci_functions=())
             for p in with_one.partitions]
    assert tuple(strip) == without.partitions
    assert with_one.end == without.end + layout.BLOCK


def test_riscv64_layout(tmp_path):
    system, pl = placed(tmp_path, riscv_two(tmp_path))
    (msg,) = pl.channels
    assert (msg.ipa, msg.doorbell_ipa) == (0x8200_0000, 0x8201_0000)
    assert [m.irq for m in msg.members] == [48, 49]
    assert msg.hpa % layout.BLOCK == 0 and msg.hpa >= 0x8400_0000


def test_check_text_shows_the_channel(tmp_path, stub_image):
    path = write_toml(tmp_path, two(members=["a"], readonly=["b"]))
    proc = subprocess.run([sys.executable, LAUNCHER, "check", str(path)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.splitlines()
    (row,) = [r for r in rows if r.startswith("channel msg")]
    assert "0x4aa00000-0x4aa10000" in row and "64 KiB" in row and "0x44000000-0x44010000" in row
    assert row.endswith("shared memory; doorbells: a rw INTID 224, b ro INTID 225")
    following = rows[rows.index(row) + 1]
    assert following.startswith("  doorbell") and "0x44010000-0x44011000" in following
    assert following.endswith("trapped in every member: ring, self, members")


def test_check_json_shows_the_channel(tmp_path, stub_image):
    path = write_toml(tmp_path, two())
    proc = subprocess.run([sys.executable, LAUNCHER, "check", "--json", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    pci = {"bdf": "00:01.0", "device": 1, "bar0": 0x1000_0000, "bar2": 0x1010_0000,
           "bar2_size": 64 * KiB}
    assert doc["layout"]["channels"] == [{
        "name": "msg", "hpa": 0x4AA0_0000, "size": 64 * KiB, "ipa": 0x4400_0000,
        "doorbell_ipa": 0x4401_0000,
        "members": [{"name": "a", "access": "rw", "doorbell_irq": 224, "pci": pci},
                    {"name": "b", "access": "rw", "doorbell_irq": 225, "pci": pci}]}]
    assert any(row["region"] == "channel msg" for row in doc["layout"]["rows"])


def test_check_json_without_channels_has_an_empty_list(tmp_path, stub_image):
    path = write_toml(tmp_path, partition())
    proc = subprocess.run([sys.executable, LAUNCHER, "check", "--json", str(path)],
                          capture_output=True, text=True)
    assert json.loads(proc.stdout)["layout"]["channels"] == []


# The config blob.

def u32(data, offset):
    return int.from_bytes(data[offset:offset + 4], "little")


def u64(data, offset):
    return int.from_bytes(data[offset:offset + 8], "little")


@pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")
def test_blob_bytes(tmp_path, stub_image):
    system = load_system(write_toml(
        tmp_path, "[board]\ncpus = 4\n" + partition("a", cpus=[1], memory="64MiB")
        + partition("b", cpus=[2], memory="32MiB") + partition("mon", cpus=[3], memory="4MiB")
        + channel("msg", members=["a", "b"], readonly=["mon"])
        + channel("log", size="4KiB", members=["mon", "b"])))
    pl = place(system)
    build.prepare_system(system, pl, tmp_path / "work", write_image(tmp_path / "tern.img"))
    data = (tmp_path / "work" / "config.bin").read_bytes()
    channels_offset = 56 + 3 * 568
    # Header: num_channels, channels_offset; size covers the channel records.
    assert (u32(data, 4), u32(data, 8)) == (8, channels_offset + 2 * 184) == (8, len(data))
    # No virtio devices: num_virtio 0, their offset the end of the channels.
    assert (u32(data, 32), u32(data, 36), u32(data, 40), u32(data, 44)) == \
        (2, channels_offset, 0, channels_offset + 2 * 184)
    assert channels_offset % 8 == 0
    # struct tern_config_channel: name 0, hpa 16, size 24, ipa 32, doorbell_ipa 40,
    # num_members 48, reserved 52, member[] 56 (16 bytes each: partition, flags, irq, reserved).
    msg = data[channels_offset:channels_offset + 184]
    assert msg[:16] == b"msg" + bytes(13)
    assert (u64(msg, 16), u64(msg, 24), u64(msg, 32), u64(msg, 40)) == \
        (0x4B20_0000, 64 * KiB, 0x4400_0000, 0x4401_0000)
    assert (u32(msg, 48), u32(msg, 52)) == (3, 0)
    members = [tuple(u32(msg, 56 + 16 * k + 4 * f) for f in range(4)) for k in range(8)]
    assert members == [(0, abi.CHF_WRITABLE, 224, 0), (1, abi.CHF_WRITABLE, 225, 0),
                       (2, 0, 226, 0)] + [(0, 0, 0, 0)] * 5
    log = data[channels_offset + 184:]
    assert log[:16] == b"log" + bytes(13)
    assert (u64(log, 16), u64(log, 24), u64(log, 32), u64(log, 40), u32(log, 48)) == \
        (0x4B40_0000, 4 * KiB, 0x4420_0000, 0x4420_1000, 2)
    assert (u32(log, 56), u32(log, 60), u32(log, 64)) == (2, abi.CHF_WRITABLE, 227)
    assert (u32(log, 72), u32(log, 76), u32(log, 80)) == (1, abi.CHF_WRITABLE, 228)
    # Each member's doorbell is also in its partition's irqs bitmap (irqs[] at 376).
    for index, irqs in enumerate([{224}, {225, 228}, {226, 227}]):
        record = data[56 + index * 568:56 + (index + 1) * 568]
        assert abi.irqs_of([u32(record, 376 + 4 * w) for w in range(abi.IRQ_WORDS)]) == irqs
    # And abi.unpack reads it all back.
    blob = abi.unpack(data)
    assert [c.name for c in blob.channels] == ["msg", "log"]
    assert blob.channels[0].members[2] == abi.ChannelMember(2, 0, 226)
    assert blob.partitions[1].irqs == {225, 228}


def test_channel_record_round_trip_and_limits():
    part = abi.PartitionRecord(name="a", ram_ipa=0x4000_0000, ram_hpa=0x4400_0000,
                               ram_size=0x400_0000, entry_ipa=0x4008_0000, dtb_ipa=0x43E0_0000,
                               image_ipa=0x4008_0000, image_size=0x1000,
                               pristine_image_hpa=0, pristine_dtb_hpa=0, dtb_size=100,
                               cpus=(1,))
    full = abi.ChannelRecord(name="x" * 15, hpa=1 << 31, size=64 * MiB, ipa=1 << 32,
                             doorbell_ipa=(1 << 32) + 64 * MiB,
                             members=[(k, k & 1, 224 + k) for k in range(8)])
    # 16: the [[channel]]s and one per [[virtio]].
    blob = abi.ConfigBlob(board_cpus=2, partitions=[part], channels=[full] * 16)
    data = abi.pack(blob)
    assert len(data) == blob.size == 56 + 568 + 16 * 184
    assert abi.unpack(data) == blob
    with pytest.raises(ValueError, match="17 channels"):
        abi.pack(dataclasses.replace(blob, channels=[full] * 17))
    with pytest.raises(ValueError, match="9 members"):
        abi.pack(dataclasses.replace(blob, channels=[dataclasses.replace(
            full, members=[(0, 0, 224)] * 9)]))
    with pytest.raises(ValueError, match="channel name"):
        abi.pack(dataclasses.replace(blob, channels=[dataclasses.replace(full, name="")]))
    bad = bytearray(data)
    bad[36:40] = (0).to_bytes(4, "little")
    with pytest.raises(ValueError, match="channels_offset"):
        abi.unpack(bytes(bad))
    bad = bytearray(data)
    bad[32:36] = (17).to_bytes(4, "little")
    with pytest.raises(ValueError, match="num_channels 17"):
        abi.unpack(bytes(bad))


# The device tree.

@pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")
def test_arm64_member_trees(tmp_path, stub_image):
    system = load_system(write_toml(
        tmp_path, "[board]\ncpus = 4\n" + partition("a", cpus=[1], memory="64MiB")
        + partition("b", cpus=[2], memory="32MiB") + partition("c", cpus=[3], memory="4MiB")
        + channel("msg", members=["a"], readonly=["b"])))
    build.prepare_system(system, place(system), tmp_path / "work",
                         write_image(tmp_path / "tern.img"))
    a, warnings = decompiled(tmp_path / "work" / "a.dtb")
    assert warnings == ""
    node = at(a, "/tern-channel@44000000")["props"]
    assert node["compatible"] == '"tern,channel"'
    assert cells(node["reg"]) == [0, 0x4400_0000, 0, 0x1_0000, 0, 0x4401_0000, 0, 0x1000]
    assert node["tern,name"] == '"msg"'
    assert cells(node["tern,member"]) == [0]
    assert node["tern,members"] == r'"a\0b"'
    assert "tern,readonly" not in node
    assert cells(node["interrupts"]) == [0, 192, 1]              # SPI 192 = INTID 224, edge
    b, _ = decompiled(tmp_path / "work" / "b.dtb")
    node = at(b, "/tern-channel@44000000")["props"]
    assert cells(node["tern,member"]) == [1] and "tern,readonly" in node
    assert cells(node["interrupts"]) == [0, 193, 1]
    assert cells(b["props"]["interrupt-parent"]) == cells(at(b, "/intc@8000000")["props"]
                                                          ["phandle"])
    c, _ = decompiled(tmp_path / "work" / "c.dtb")
    assert not any(name.startswith("tern-channel") for name in c["nodes"])


@pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")
def test_riscv64_member_trees(tmp_path):
    system = load_system(write_toml(tmp_path, riscv_two(tmp_path)))
    hypervisor = tmp_path / "hyp.bin"
    hypervisor.write_bytes(b"\x13\x00\x00\x00" * 1024)
    build.prepare_system(system, place(system), tmp_path / "work", hypervisor)
    for name, k, source, direct in (("a", 0, 48, True), ("b", 1, 49, False)):
        root, warnings = decompiled(tmp_path / "work" / f"{name}.dtb")
        assert warnings == ""
        assert list(root["nodes"])[-1] == "tern-channel@82000000"
        node = at(root, "/tern-channel@82000000")["props"]
        assert node["compatible"] == '"tern,channel"'
        assert cells(node["reg"]) == [0, 0x8200_0000, 0, 0x1_0000, 0, 0x8201_0000, 0, 0x1000]
        assert cells(node["tern,member"]) == [k] and node["tern,members"] == r'"a\0b"'
        # The doorbell is a source of the partition's APLIC, which a member always has: in
        # MSI mode for a trap-less partition, else with one delivery control per vCPU.
        aplic = at(root, "/soc/aplic@d000000")["props"]
        assert cells(node["interrupts-extended"]) == [cells(aplic["phandle"])[0], source, 1]
        assert ("msi-parent" in aplic) == direct
        assert ("interrupts-extended" in aplic) == (not direct)


# Writing descriptions, and the examples.

def test_dump_toml_writes_channel_tables_that_read_back_the_same(tmp_path, stub_image):
    image = "guests/build/arm64/lat.img"
    doc = {"board": {"cpus": 4},
           "partition": [{"name": n, "cpus": [i + 1], "memory": "4MiB", "image": image}
                         for i, n in enumerate(("a", "b", "mon"))],
           "channel": [{"name": "msg", "size": "64KiB", "members": ["a", "b"],
                        "readonly": ["mon"]},
                       {"name": "log", "size": 4096, "members": ["mon", "a"]}]}
    text = dump_toml(doc)
    assert ('\n[[channel]]\nname = "msg"\nsize = "64KiB"\nmembers = ["a", "b"]\n'
            'readonly = ["mon"]\n\n[[channel]]\nname = "log"\nsize = 4096\n'
            'members = ["mon", "a"]\n') in text
    assert tomllib.loads(text) == doc
    system = load_system(write_toml(tmp_path, text))
    assert system.channels == (Channel(0, "msg", 64 * KiB, ("a", "b"), ("mon",)),
                               Channel(1, "log", 4 * KiB, ("mon", "a")))


@pytest.mark.parametrize("example, arch, doorbells", [
    ("channels.toml", "arm64", [224, 225]), ("channels-riscv64.toml", "riscv64", [48, 49])])
def test_channel_examples(repo_root, tmp_path, example, arch, doorbells):
    path = example_with_stand_ins(repo_root, example, tmp_path)
    system = load_system(path)
    assert system.board.arch == arch
    ping, pong = system.partitions
    assert (ping.name, ping.cpus, pong.name, pong.cpus) == ("ping", (1,), "pong", (2,))
    for p in (ping, pong):
        assert p.bootargs == "lat.tests=chan lat.chan=msg" and p.image_path.name == "lat.img"
    (msg,) = system.channels
    assert (msg.name, msg.size, msg.members, msg.readonly) == \
        ("msg", 64 * KiB, ("ping", "pong"), ())
    assert [m.irq for m in place(system).channels[0].members] == doorbells
    proc = subprocess.run([sys.executable, LAUNCHER, "check", str(path)], capture_output=True,
                          text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "channel msg" in proc.stdout


@pytest.mark.parametrize("board", layout.VIRT_BOARDS.values(), ids=lambda b: b.platform)
def test_doorbell_ranges_match_board_c(repo_root, board):
    from test_abi import board_c_values
    text = (repo_root / "hypervisor" / "platform" / board.platform / "board.c").read_text()
    if ".doorbell_irq_base" not in text:
        pytest.skip("board.c has no doorbell range yet (the hypervisor side of issue 28)")
    value = board_c_values(repo_root, board.platform)
    assert value("doorbell_irq_base") == board.doorbell_irqs[0]
    assert value("num_doorbell_irqs") == len(board.doorbell_irqs)
    assert board.doorbell_irqs == tuple(range(board.doorbell_irqs[0],
                                              board.doorbell_irqs[-1] + 1))


def test_doorbells_are_driven_by_nothing_else():
    arm64, riscv64 = layout.QEMU_VIRT_ARM64, layout.QEMU_VIRT_RISCV64
    # arm64: the last 32 SPIs of QEMU virt's GIC (INTIDs up to 255); riscv64: the APLIC's 48-63 of 96.
    assert arm64.doorbell_irqs == tuple(range(224, 256))
    assert riscv64.doorbell_irqs == tuple(range(48, 64))
    assert riscv64.doorbell_irqs[-1] < riscv64.aia.aplic_num_sources
    for board in (arm64, riscv64):
        wired = {i for d in board.devices.values() for i in d.intids}
        if board.uart.spi:
            wired.add(layout.SPI_INTID_BASE + board.uart.spi)
        assert not wired & set(board.doorbell_irqs)
        assert all(abi.SPI_FIRST <= i <= abi.SPI_LAST for i in board.doorbell_irqs)


def test_check_text_counts_the_channels(tmp_path, stub_image):
    path = write_toml(tmp_path, two() + channel("log"))
    proc = subprocess.run([sys.executable, LAUNCHER, "check", str(path)], capture_output=True,
                          text=True)
    assert proc.stdout.startswith(f"{path}: ok: 2 partitions, 2 channels on 4 x cortex-a53, "
                                  f"2 GiB RAM\n"), proc.stdout + proc.stderr


def test_the_tool_and_the_blob_agree_on_the_limits():
    from tern import config
    # The blob's channels are the [[channel]]s and one per [[virtio]].
    assert config.MAX_CHANNELS + config.MAX_VIRTIO == abi.MAX_CHANNELS == 16
    assert config.MAX_CHANNELS == config.MAX_VIRTIO == abi.MAX_VIRTIO == 8
    assert config.MAX_CHANNEL_MEMBERS == abi.MAX_PARTITIONS
    assert layout.DOORBELL_PAGE == abi.PAGE

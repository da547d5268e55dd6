"""The config blob: packing, and agreement with the C header and board file."""

import dataclasses
import re
import shutil
import subprocess

import pytest
from tern import abi, layout
from tern.config import MAX_CPUS

PARTITION = abi.PartitionRecord(
    name="rt", ram_ipa=0x4000_0000, ram_hpa=0x4400_0000, ram_size=0x400_0000,
    entry_ipa=0x4008_0000, dtb_ipa=0x43E0_0000, image_ipa=0x4008_0000, image_size=0x2_0000,
    pristine_image_hpa=0x4820_0000, pristine_dtb_hpa=0x4840_0000, dtb_size=1234,
    cpus=(1, 3), flags=abi.PF_WFI_NATIVE)

PCIE_ECAM = (0x3F00_0000, 0x3F00_0000, 0x100_0000, abi.RF_DEVICE)
WITH_DEVICES = abi.PartitionRecord(**{
    **PARTITION.__dict__, "name": "dev",
    "regions": ((0x1000_0000, 0x1000_0000, 0x2EFF_0000, abi.RF_DEVICE),
                (0x3EFF_0000, 0x3EFF_0000, 0x1_0000, abi.RF_DEVICE), PCIE_ECAM),
    "irqs": (35, 36, 37, 38)})


def u32(data, offset):
    return int.from_bytes(data[offset:offset + 4], "little")


def u64(data, offset):
    return int.from_bytes(data[offset:offset + 8], "little")


def test_sizes_match_the_static_asserts():
    assert abi.HEADER.size == 56
    assert abi.REGION.size == 32
    assert abi.PARTITION.size == 568


def test_round_trip():
    other = abi.PartitionRecord(name="x" * 15, ram_ipa=1 << 30, ram_hpa=3 << 30, ram_size=4 << 20,
                                entry_ipa=5, dtb_ipa=6, image_ipa=7, image_size=8,
                                pristine_image_hpa=0, pristine_dtb_hpa=0, dtb_size=9,
                                cpus=tuple(range(8)),
                                regions=[(k << 32, (k + 1) << 12, 0x1000, k & 1) for k in range(8)],
                                irqs=range(32, 1020))
    blob = abi.ConfigBlob(board_cpus=4, partitions=[PARTITION, WITH_DEVICES, other])
    data = abi.pack(blob)
    assert len(data) == 56 + 3 * 568 == blob.size
    back = abi.unpack(data)
    assert back == blob
    assert back.partitions[1].regions[2] == PCIE_ECAM
    assert back.partitions[1].regions[2].size == 0x100_0000
    assert back.partitions[1].irqs == {35, 36, 37, 38}
    assert back.partitions[2].irqs == frozenset(range(32, 1020))
    assert back.partitions[0].regions == () and back.partitions[0].irqs == frozenset()


def test_header_bytes():
    data = abi.pack(abi.ConfigBlob(board_cpus=2, partitions=[PARTITION], ram_size=0xC000_0000))
    assert data[:4] == b"TERN"
    magic, version, size, count, cpus, flags = abi.HEADER.unpack_from(data)[:6]
    assert (magic, version, size, count, cpus, flags) == (0x4E524554, 8, 56 + 568, 1, 2, 0)
    assert u64(data, 24) == 0xC000_0000                             # ram_size
    # No channels: none counted, their records would start right after the partition.
    assert (u32(data, 32), u32(data, 36)) == (0, 56 + 568)          # num_channels, offset
    # No virtio devices: their records would start right after the (no) channels.
    assert (u32(data, 40), u32(data, 44)) == (0, 56 + 568)          # num_virtio, offset
    record = data[56:]
    assert record[:16] == b"rt" + bytes(14)
    assert int.from_bytes(record[16:24], "little") == 0x4000_0000
    assert int.from_bytes(record[96:100], "little") == 2            # num_vcpus
    assert int.from_bytes(record[100:104], "little") == 1           # flags
    assert record[104:112] == bytes([1, 3, 0, 0, 0, 0, 0, 0])        # cpus
    assert record[112:544] == bytes(432) and u32(record, 544) == abi.POOL_NONE             # no regions, SPIs, initrd; stop, no limit


def test_region_and_spi_bytes():
    record = abi.pack(abi.ConfigBlob(board_cpus=2, partitions=[WITH_DEVICES]))[56:]
    assert u32(record, 112) == 3                                   # num_regions
    assert u32(record, 116) == 0                                   # reserved0
    # region[2] (ECAM) at 120 + 2 * 32: ipa, hpa, size, flags, reserved
    assert (u64(record, 184), u64(record, 192), u64(record, 200)) == \
        (0x3F00_0000, 0x3F00_0000, 0x100_0000)
    assert (u32(record, 208), u32(record, 212)) == (abi.RF_DEVICE, 0)
    assert record[120 + 3 * 32:376] == bytes(5 * 32)                 # unused regions are zero
    # irqs: INTIDs 35-38 are bits 3-6 of word 1; every other word is zero.
    assert u32(record, 376) == 0
    assert u32(record, 380) == 0b111_1000
    assert record[384:504] == bytes(120)
    assert record[504:544] == bytes(40)                  # no initrd; fault policy etc. default


def test_initrd_bytes():
    with_initrd = dataclasses.replace(PARTITION, initrd_ipa=0x5e00_0000, initrd_size=0x12_3456,
                                      pristine_initrd_hpa=0x9000_0000)
    record = abi.pack(abi.ConfigBlob(board_cpus=2, partitions=[with_initrd]))[56:]
    assert (u64(record, 504), u64(record, 512), u64(record, 520)) == \
        (0x5e00_0000, 0x12_3456, 0x9000_0000)
    assert abi.unpack(abi.pack(abi.ConfigBlob(board_cpus=2, partitions=[with_initrd]))) \
        .partitions[0] == with_initrd


def test_fault_policy_bytes():
    restarting = dataclasses.replace(PARTITION, fault_policy=abi.FAULT_RESTART,
                                     max_restarts=1_000_000, restart_backoff_us=60_000_000)
    blob = abi.ConfigBlob(board_cpus=2, partitions=[restarting], ram_size=3 << 30)
    data = abi.pack(blob)
    record = data[56:]
    assert (u32(record, 528), u32(record, 532), u64(record, 536)) == \
        (abi.FAULT_RESTART, 1_000_000, 60_000_000)
    back = abi.unpack(data)
    assert back == blob
    assert back.ram_size == 3 << 30
    assert (back.partitions[0].fault_policy, back.partitions[0].max_restarts,
            back.partitions[0].restart_backoff_us) == (1, 1_000_000, 60_000_000)


def test_virtio_records_follow_the_channels():
    channel = abi.ChannelRecord(
        name="disk0", hpa=0x5000_0000, size=0x10_5000, ipa=0x4400_0000,
        doorbell_ipa=0x4410_5000,
        members=((1, abi.CHF_WRITABLE, 224), (0, abi.CHF_FRONTEND, 48)))
    virtio = abi.VirtioRecord(name="disk0", mmio_ipa=0x0A00_0000, device_id=abi.VIRTIO_BLK,
                              frontend=0, backend=1, channel=0, irq=48)
    blob = abi.ConfigBlob(board_cpus=2, partitions=[PARTITION, WITH_DEVICES],
                          channels=[channel], virtio=[virtio])
    data = abi.pack(blob)
    at = 56 + 2 * 568 + 184
    assert len(data) == blob.size == at + 48
    assert (u32(data, 32), u32(data, 36)) == (1, 56 + 2 * 568)     # num_channels, offset
    assert (u32(data, 40), u32(data, 44)) == (1, at)                # num_virtio, offset
    assert data[at:at + 16] == b"disk0" + bytes(11)
    assert u64(data, at + 16) == 0x0A00_0000
    assert [u32(data, at + k) for k in range(24, 48, 4)] == [2, 0, 0, 1, 0, 48]
    assert abi.unpack(data) == blob


def test_unpack_rejects_a_virtio_offset_elsewhere():
    data = bytearray(abi.pack(abi.ConfigBlob(
        board_cpus=2, partitions=[PARTITION],
        virtio=[abi.VirtioRecord("v", 0x0A00_0000, abi.VIRTIO_BLK, 0, 0, 0, 48)])))
    data[44:48] = (48).to_bytes(4, "little")
    with pytest.raises(ValueError, match="virtio_offset 48 is not the end of 0 channels"):
        abi.unpack(bytes(data))


def test_riscv64_blobs_take_aplic_sources_below_32():
    slot = dataclasses.replace(PARTITION, irqs=(1, 48))
    with pytest.raises(ValueError, match=r"INTID 1 is not an SPI"):
        abi.pack(abi.ConfigBlob(board_cpus=2, partitions=[slot]))
    data = abi.pack(abi.ConfigBlob(board_cpus=2, partitions=[slot], irq_first=1))
    assert abi.unpack(data).partitions[0].irqs == {1, 48}
    with pytest.raises(ValueError, match=r"interrupt 0 is not one a partition can have"):
        abi.pack(abi.ConfigBlob(board_cpus=2, partitions=[dataclasses.replace(slot, irqs=(0,))],
                                irq_first=1))


def test_fault_policy_defaults_to_stop_without_limit_or_wait():
    assert (PARTITION.fault_policy, PARTITION.max_restarts, PARTITION.restart_backoff_us) == \
        (abi.FAULT_STOP, 0, 0) == (0, 0, 0)
    assert abi.ConfigBlob(board_cpus=1).ram_size == 0


def test_irq_bitmap_places_interrupt_n_at_bit_n_mod_32_of_word_n_div_32():
    words = abi.irq_bitmap({32, 63, 64, 1019})
    assert words[1] == 1 | 1 << 31 and words[2] == 1 and words[31] == 1 << 27
    assert sum(1 for w in words if w) == 3
    assert abi.irqs_of(words) == {32, 63, 64, 1019}


@pytest.mark.parametrize("change, message", [
    (dict(name=""), "name"), (dict(name="a" * 16), "name"), (dict(cpus=()), "vCPUs"),
    (dict(cpus=tuple(range(9))), "vCPUs"),
    (dict(regions=[PCIE_ECAM] * 9), r"partition rt: 9 regions \(at most 8 supported\)"),
    (dict(regions=[(0x3F00_0800, 0x3F00_0800, 0x1000, 1)]), "not 4 KiB aligned"),
    (dict(regions=[(0x3F00_0000, 0x3F00_0000, 0, 1)]), "not 4 KiB aligned"),
    (dict(irqs=(31,)), r"INTID 31 is not an SPI \(32..1019\)"),
    (dict(irqs=(35, 1020)), r"INTID 1020 is not an SPI \(32..1019\)"),
    (dict(fault_policy=3), "partition rt: unknown fault policy 3")])
def test_pack_refuses_what_the_hypervisor_cannot_hold(change, message):
    record = abi.PartitionRecord(**{**PARTITION.__dict__, **change})
    with pytest.raises(ValueError, match=message):
        abi.pack(abi.ConfigBlob(board_cpus=2, partitions=[record]))


def test_unpack_rejects_a_short_blob():
    data = abi.pack(abi.ConfigBlob(board_cpus=2, partitions=[PARTITION]))
    with pytest.raises(ValueError):
        abi.unpack(data[:100])


def test_unpack_rejects_too_many_regions():
    data = bytearray(abi.pack(abi.ConfigBlob(board_cpus=2, partitions=[WITH_DEVICES])))
    data[56 + 112:56 + 116] = (9).to_bytes(4, "little")
    with pytest.raises(ValueError, match="num_regions 9"):
        abi.unpack(bytes(data))


C_PROGRAM = r"""
#include <stddef.h>
#include <stdio.h>
#include <tern/config_abi.h>

#define FIELD(type, name) \
	printf("%s.%s %zu %zu\n", #type, #name, offsetof(struct type, name), \
	       sizeof(((struct type *)0)->name))

int main(void)
{
	printf("sizeof.tern_config %zu 0\n", sizeof(struct tern_config));
	printf("sizeof.tern_config_partition %zu 0\n", sizeof(struct tern_config_partition));
	printf("sizeof.tern_config_region %zu 0\n", sizeof(struct tern_config_region));
	printf("sizeof.tern_config_channel %zu 0\n", sizeof(struct tern_config_channel));
	printf("sizeof.tern_config_channel_member %zu 0\n",
	       sizeof(struct tern_config_channel_member));
	printf("const.MAX_CHANNELS %u 0\n", TERN_MAX_CHANNELS);
	printf("const.CHF_WRITABLE %u 0\n", TERN_CHF_WRITABLE);
	printf("const.CHF_FRONTEND %u 0\n", TERN_CHF_FRONTEND);
	printf("const.MAX_VIRTIO %u 0\n", TERN_MAX_VIRTIO);
	printf("const.VIRTIO_NET %u 0\n", TERN_VIRTIO_NET);
	printf("const.VIRTIO_BLK %u 0\n", TERN_VIRTIO_BLK);
	printf("const.VIRTIO_CONSOLE %u 0\n", TERN_VIRTIO_CONSOLE);
	printf("const.VIRTIO_VSOCK %u 0\n", TERN_VIRTIO_VSOCK);
	printf("const.VF_BACKEND_TRUSTED %u 0\n", TERN_VF_BACKEND_TRUSTED);
	printf("sizeof.tern_config_virtio %zu 0\n", sizeof(struct tern_config_virtio));
	printf("sizeof.tern_config_pool %zu 0\n", sizeof(struct tern_config_pool));
	printf("sizeof.tern_config_window %zu 0\n", sizeof(struct tern_config_window));
	printf("const.MAX_POOLS %u 0\n", TERN_MAX_POOLS);
	printf("const.MAX_WINDOWS %u 0\n", TERN_MAX_WINDOWS);
	printf("const.POOL_NONE %u 0\n", TERN_POOL_NONE);
	printf("const.SCHED_NULL %u 0\n", TERN_SCHED_NULL);
	printf("const.SCHED_ARINC653 %u 0\n", TERN_SCHED_ARINC653);
	printf("const.SCHED_RTDS %u 0\n", TERN_SCHED_RTDS);
	printf("const.SCHED_CREDIT %u 0\n", TERN_SCHED_CREDIT);
	printf("const.MAX_WEIGHT %u 0\n", TERN_MAX_WEIGHT);
	printf("const.MAX_CAP %u 0\n", TERN_MAX_CAP);
	printf("const.MAGIC %u 0\n", TERN_CONFIG_MAGIC);
	printf("const.VERSION %u 0\n", TERN_CONFIG_VERSION);
	printf("const.MAX_PARTITIONS %u 0\n", TERN_MAX_PARTITIONS);
	printf("const.MAX_VCPUS %u 0\n", TERN_MAX_VCPUS);
	printf("const.NAME_LEN %u 0\n", TERN_NAME_LEN);
	printf("const.CF_IOMMU %u 0\n", TERN_CF_IOMMU);
	printf("const.PF_WFI_NATIVE %u 0\n", TERN_PF_WFI_NATIVE);
	printf("const.PF_IRQ_DIRECT %u 0\n", TERN_PF_IRQ_DIRECT);
	printf("const.PF_UNCONFINED_DMA %u 0\n", TERN_PF_UNCONFINED_DMA);
	printf("const.PF_MANAGER %u 0\n", TERN_PF_MANAGER);
	printf("const.MAX_REGIONS %u 0\n", TERN_MAX_REGIONS);
	printf("const.IRQ_WORDS %u 0\n", TERN_IRQ_WORDS);
	printf("const.RF_DEVICE %u 0\n", TERN_RF_DEVICE);
	printf("const.RF_PARTITION_RAM %u 0\n", TERN_RF_PARTITION_RAM);
	printf("const.FAULT_STOP %u 0\n", TERN_FAULT_STOP);
	printf("const.FAULT_RESTART %u 0\n", TERN_FAULT_RESTART);
	printf("const.FAULT_INJECT %u 0\n", TERN_FAULT_INJECT);
	printf("tern_config.partition %zu 0\n", offsetof(struct tern_config, partition));
@FIELDS@
	return 0;
}
"""


def c_compiler():
    for cc in ("cc", "clang", "gcc"):
        if shutil.which(cc):
            return cc
    return None


@pytest.mark.skipif(c_compiler() is None, reason="no C compiler")
def test_layout_matches_config_abi_h(repo_root, tmp_path):
    include = repo_root / "hypervisor" / "include"
    # The mirror's guard: a header that moved fails here instead of leaving abi.py unchecked.
    assert (include / "tern" / "config_abi.h").is_file(), "hypervisor/include/tern/config_abi.h moved"
    fields = [f"\tFIELD(tern_config, {name});" for name, _ in abi.HEADER_FIELDS]
    fields += [f"\tFIELD(tern_config_partition, {name});" for name, _ in abi.PARTITION_FIELDS]
    fields += [f"\tFIELD(tern_config_region, {name});" for name, _ in abi.REGION_FIELDS]
    fields += [f"\tFIELD(tern_config_channel, {name});" for name, _ in abi.CHANNEL_FIELDS]
    fields += [f"\tFIELD(tern_config_channel_member, {name});"
               for name, _ in abi.CHANNEL_MEMBER_FIELDS]
    fields += [f"\tFIELD(tern_config_virtio, {name});" for name, _ in abi.VIRTIO_FIELDS]
    fields += [f"\tFIELD(tern_config_pool, {name});" for name, _ in abi.POOL_FIELDS]
    fields += [f"\tFIELD(tern_config_window, {name});" for name, _ in abi.WINDOW_FIELDS]
    source = tmp_path / "abi.c"
    source.write_text(C_PROGRAM.replace("@FIELDS@", "\n".join(fields)))
    exe = tmp_path / "abi"
    subprocess.run([c_compiler(), "-std=c11", "-Wall", "-Werror", "-I", str(include),
                    str(source), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    c = {key: (int(a), int(b)) for key, a, b in (line.split() for line in out.splitlines())}

    assert c["sizeof.tern_config"][0] == abi.HEADER.size
    assert c["sizeof.tern_config_partition"][0] == abi.PARTITION.size
    assert c["sizeof.tern_config_region"][0] == abi.REGION.size
    assert c["tern_config.partition"][0] == abi.HEADER.size
    # region[] is MAX_REGIONS records of the region struct, back to back.
    assert c["tern_config_partition.region"][1] == abi.MAX_REGIONS * abi.REGION.size
    assert c["tern_config_partition.irqs"][1] == abi.IRQ_WORDS * 4
    assert c["sizeof.tern_config_channel"][0] == abi.CHANNEL.size == 184
    assert c["sizeof.tern_config_channel_member"][0] == abi.CHANNEL_MEMBER.size == 16
    # member[] is one record per partition a channel can have.
    assert c["tern_config_channel.member"][1] == abi.MAX_PARTITIONS * abi.CHANNEL_MEMBER.size
    for table, fields_ in (("tern_config", abi.HEADER_FIELDS),
                           ("tern_config_partition", abi.PARTITION_FIELDS),
                           ("tern_config_region", abi.REGION_FIELDS),
                           ("tern_config_channel", abi.CHANNEL_FIELDS),
                           ("tern_config_channel_member", abi.CHANNEL_MEMBER_FIELDS),
                           ("tern_config_virtio", abi.VIRTIO_FIELDS),
                           ("tern_config_pool", abi.POOL_FIELDS),
                           ("tern_config_window", abi.WINDOW_FIELDS)):
        for name, (offset, size) in abi.field_offsets(fields_).items():
            assert c[f"{table}.{name}"] == (offset, size), f"{table}.{name}"
    assert c["const.MAGIC"][0] == abi.CONFIG_MAGIC
    assert c["const.VERSION"][0] == abi.CONFIG_VERSION
    assert c["const.MAX_PARTITIONS"][0] == abi.MAX_PARTITIONS
    assert c["const.MAX_VCPUS"][0] == abi.MAX_VCPUS
    assert c["const.NAME_LEN"][0] == abi.NAME_LEN
    assert c["const.CF_IOMMU"][0] == abi.CF_IOMMU
    assert c["const.PF_WFI_NATIVE"][0] == abi.PF_WFI_NATIVE
    assert c["const.PF_IRQ_DIRECT"][0] == abi.PF_IRQ_DIRECT
    assert c["const.PF_UNCONFINED_DMA"][0] == abi.PF_UNCONFINED_DMA == 1 << 2
    assert c["const.PF_MANAGER"][0] == abi.PF_MANAGER == 1 << 3
    assert c["const.MAX_REGIONS"][0] == abi.MAX_REGIONS
    assert c["const.IRQ_WORDS"][0] == abi.IRQ_WORDS
    assert c["const.RF_DEVICE"][0] == abi.RF_DEVICE
    assert c["const.RF_PARTITION_RAM"][0] == abi.RF_PARTITION_RAM == 1 << 1
    assert c["const.FAULT_STOP"][0] == abi.FAULT_STOP
    assert c["const.FAULT_RESTART"][0] == abi.FAULT_RESTART
    assert c["const.FAULT_INJECT"][0] == abi.FAULT_INJECT
    assert c["const.MAX_CHANNELS"][0] == abi.MAX_CHANNELS
    assert c["const.CHF_WRITABLE"][0] == abi.CHF_WRITABLE
    assert c["const.MAX_CHANNELS"][0] == abi.MAX_CHANNELS == 16
    assert c["const.CHF_FRONTEND"][0] == abi.CHF_FRONTEND == 1 << 1
    assert c["const.MAX_VIRTIO"][0] == abi.MAX_VIRTIO == 8
    assert (c["const.VIRTIO_NET"][0], c["const.VIRTIO_BLK"][0], c["const.VIRTIO_CONSOLE"][0]) \
        == (abi.VIRTIO_NET, abi.VIRTIO_BLK, abi.VIRTIO_CONSOLE) == (1, 2, 3)
    assert c["const.VIRTIO_VSOCK"][0] == abi.VIRTIO_VSOCK == 19
    assert c["const.VF_BACKEND_TRUSTED"][0] == abi.VF_BACKEND_TRUSTED
    assert c["sizeof.tern_config_virtio"][0] == abi.VIRTIO.size == 48
    # The v4 fields, spelled out: the generic loop above would accept both sides moving together.
    assert c["tern_config.ram_size"] == (24, 8)
    assert c["tern_config.num_channels"] == (32, 4)
    assert c["tern_config.channels_offset"] == (36, 4)
    # v6: the virtio records' count and place where v4 had 8 reserved bytes.
    assert c["tern_config.num_virtio"] == (40, 4)
    assert c["tern_config.virtio_offset"] == (44, 4)
    # v8 (issue 29): the pool records' count and place, each partition's pool and parameters,
    # the pool record with its windows.
    assert c["tern_config.num_pools"] == (48, 4)
    assert c["tern_config.pools_offset"] == (52, 4)
    assert [c[f"tern_config_partition.{name}"][0] for name in
            ("pool", "weight", "cap", "budget_us", "period_us", "reserved1")] == \
        [544, 548, 552, 556, 560, 564]
    assert [c[f"tern_config_pool.{name}"][0] for name in
            ("name", "cpus", "scheduler", "major_frame_us", "num_windows", "window")] == \
        [0, 16, 20, 24, 28, 32]
    assert c["tern_config_pool.window"][1] == abi.MAX_WINDOWS * abi.WINDOW.size
    assert c["sizeof.tern_config_pool"][0] == abi.POOL.size == 160
    assert c["sizeof.tern_config_window"][0] == abi.WINDOW.size == 8
    assert (c["const.MAX_POOLS"][0], c["const.MAX_WINDOWS"][0], c["const.POOL_NONE"][0]) == \
        (abi.MAX_POOLS, abi.MAX_WINDOWS, abi.POOL_NONE)
    assert [c[f"const.SCHED_{n.upper()}"][0] for n in abi.SCHEDULERS] == \
        list(abi.SCHEDULERS.values())
    assert (c["const.MAX_WEIGHT"][0], c["const.MAX_CAP"][0]) == (abi.MAX_WEIGHT, abi.MAX_CAP)
    assert c["tern_config_partition.fault_policy"] == (528, 4)
    assert c["tern_config_partition.max_restarts"] == (532, 4)
    assert c["tern_config_partition.restart_backoff_us"] == (536, 8)
    # The v5 channel record, as the contract of issue 28 lays it out.
    assert [c[f"tern_config_channel.{name}"][0] for name in
            ("name", "hpa", "size", "ipa", "doorbell_ipa", "num_members", "reserved",
             "member")] == [0, 16, 24, 32, 40, 48, 52, 56]
    # The v6 virtio record, as the contract of issue 28's second half lays it out.
    assert [c[f"tern_config_virtio.{name}"][0] for name in
            ("name", "mmio_ipa", "device_id", "flags", "frontend", "backend", "channel",
             "irq")] == [0, 16, 24, 28, 32, 36, 40, 44]


def test_every_c_field_is_mirrored(repo_root):
    """No field added to the header without abi.py learning of it."""
    header = repo_root / "hypervisor" / "include" / "tern" / "config_abi.h"
    assert header.is_file(), "hypervisor/include/tern/config_abi.h moved"
    text = header.read_text()
    for struct_name, fields_ in (("tern_config_partition", abi.PARTITION_FIELDS),
                                 ("tern_config", abi.HEADER_FIELDS),
                                 ("tern_config_region", abi.REGION_FIELDS),
                                 ("tern_config_channel", abi.CHANNEL_FIELDS),
                                 ("tern_config_channel_member", abi.CHANNEL_MEMBER_FIELDS),
                                 ("tern_config_virtio", abi.VIRTIO_FIELDS),
                           ("tern_config_pool", abi.POOL_FIELDS),
                           ("tern_config_window", abi.WINDOW_FIELDS)):
        body = re.search(r"struct " + struct_name + r" \{(.*?)\};", text, re.S).group(1)
        declared = re.findall(r"^\s*(?:char|u?int\d+_t|struct\s+\w+)\s+(\w+)(\[\])?", body, re.M)
        # The flexible array member (tern_config.partition[]) is the records that follow.
        names = [name for name, flexible in declared if not flexible]
        assert names == [n for n, _ in fields_], struct_name


def board_c_values(repo_root, platform):
    """value(name): the number hypervisor/platform/PLATFORM/board.c gives `.name`."""
    board_c = repo_root / "hypervisor" / "platform" / platform / "board.c"
    assert board_c.is_file(), f"hypervisor/platform/{platform}/board.c moved"
    text = board_c.read_text()

    def value(name):
        m = re.search(r"\." + name + r"\s*=\s*([^,]+),", text)
        expr = m.group(1).strip()
        m2 = re.fullmatch(r"(MiB|GiB)\((\d+)\)", expr)
        if m2:
            return int(m2.group(2)) << (20 if m2.group(1) == "MiB" else 30)
        return int(expr.rstrip("uU"), 0)

    return value


@pytest.mark.parametrize("board", layout.VIRT_BOARDS.values(), ids=lambda b: b.platform)
def test_board_objects_match_their_board_c(repo_root, board):
    value = board_c_values(repo_root, board.platform)
    assert value("uart_base") == board.uart.base
    assert value("ram_base") == board.ram_base == board.partition_ram_ipa
    assert value("ram_max") == board.memory_max
    assert value("hyp_base") == board.hyp_base
    assert value("hyp_size") == board.hyp_size
    assert value("config_hpa") == board.config_hpa
    assert value("config_max") == board.config_max
    assert value("max_cpus") == MAX_CPUS
    if board.gic:
        assert value("uart_irq") == 32 + board.uart.spi
        assert value("gicd_base") == board.gic.dist_base
        assert value("gicd_size") == board.gic.dist_size
        assert value("gicr_base") == board.gic.redist_base
        assert value("gicr_stride") == board.gic.redist_stride
    else:
        assert value("timebase_hz") == board.timer_hz
        assert value("imsic_s_base") == board.aia.imsic_s_base
        assert value("imsic_vcpu_stride") == board.aia.imsic_stride
        assert value("aplic_s_base") == board.aia.aplic_base
        assert value("aplic_num_sources") == board.aia.aplic_num_sources


def test_pool_records_follow_the_virtio_records():
    a = dataclasses.replace(PARTITION, name="a", cpus=(2,), pool=0)
    b = dataclasses.replace(PARTITION, name="b", cpus=(2,), pool=0)
    c = dataclasses.replace(PARTITION, name="c", cpus=(3,), pool=1, weight=512, cap=50)
    d = dataclasses.replace(PARTITION, name="d", cpus=(1,), pool=2, budget_us=4000,
                            period_us=10000)
    frame = abi.PoolRecord("frame", (2,), abi.SCHED_ARINC653, 20000,
                           ((0, 5000), (1, 10000), (0, 5000)))
    blob = abi.ConfigBlob(board_cpus=4, partitions=[a, b, c, d],
                          pools=[frame, abi.PoolRecord("shared", (3,), abi.SCHED_CREDIT),
                                 abi.PoolRecord("rt", (1,), abi.SCHED_RTDS)])
    data = abi.pack(blob)
    at = 56 + 4 * 568
    assert (u32(data, 48), u32(data, 52)) == (3, at)                # num_pools, offset
    assert len(data) == blob.size == at + 3 * 160
    assert data[at:at + 16] == b"frame" + bytes(11)
    assert [u32(data, at + k) for k in range(16, 56, 4)] == \
        [1 << 2, abi.SCHED_ARINC653, 20000, 3, 0, 5000, 1, 10000, 0, 5000]
    assert data[at + 56:at + 160] == bytes(104)                      # unused windows
    record = data[56 + 2 * 568:]
    assert [u32(record, k) for k in range(544, 568, 4)] == [1, 512, 50, 0, 0, 0]
    record = data[56 + 3 * 568:]
    assert [u32(record, k) for k in range(544, 568, 4)] == [2, 0, 0, 4000, 10000, 0]
    assert abi.unpack(data) == blob


def test_unpack_rejects_a_pools_offset_elsewhere():
    data = bytearray(abi.pack(abi.ConfigBlob(
        board_cpus=4, partitions=[PARTITION], pools=[abi.PoolRecord("p", (1,))])))
    data[52:56] = (8).to_bytes(4, "little")
    with pytest.raises(ValueError, match="pools_offset 8 is not the end of 0 virtio devices"):
        abi.unpack(bytes(data))


def test_pack_refuses_too_many_windows():
    pool = abi.PoolRecord("p", (1,), abi.SCHED_ARINC653, 100, [(0, 1)] * 17)
    with pytest.raises(ValueError, match="17 windows"):
        abi.pack(abi.ConfigBlob(board_cpus=4, partitions=[PARTITION], pools=[pool]))

#!/usr/bin/env python3
"""Write the config fuzzer's seed corpus: the blobs `tern run` writes for the examples.

Run from the repository root after `make all` (the examples name the guests' images):
    python3 tests/fuzz/make_config_corpus.py
"""

import struct
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from tern import build, layout  # noqa: E402
from tern.config import dump_toml, load_system  # noqa: E402

EXAMPLES = ["rt.toml", "two.toml", "edu-direct.toml", "linux-rt.toml"]


def more(guests, work):
    """What the examples do not have: several vCPUs, an initrd, a restart policy, three
    partitions."""
    return dump_toml({
        "board": {"cpus": 6, "pci": ["edu"]},
        "partition": [
            {"name": "multi", "cpus": [1, 2], "memory": "64MiB", "image": f"{guests}/probe.img",
             "initrd": f"{work}/initrd.bin", "on_fault": "restart", "max_restarts": 5,
             "restart_backoff": "10ms", "devices": ["pcie"]},
            {"name": "direct", "cpus": [3], "memory": "32MiB", "image": f"{guests}/lat.img",
             "wfi": "native", "irq": "direct"},
            {"name": "third", "cpus": [4, 5, 0], "memory": "16MiB",
             "image": f"{guests}/noise.img"},
        ]})


# The config ABI (hypervisor/include/tern/config_abi.h) as far as this file writes it.
HEADER = 48
PARTITION = 544
CHANNEL = 184
VERSION = 5
ARM64_DOORBELLS = 224            # platform/qemu-virt-arm64: INTIDs 224..255
PARTITION_IRQS = 376            # offset of irqs[] in a partition record


def as_current(blob):
    """A blob of the tool's version before channels (4: same bytes, no channels) as version 5."""
    version = struct.unpack_from("<I", blob, 4)[0]
    if version == VERSION:
        return blob
    out = bytearray(blob)
    struct.pack_into("<I", out, 4, VERSION)
    struct.pack_into("<II", out, 32, 0, 0)     # num_channels, channels_offset
    return bytes(out)


def with_channels(blob):
    """The blob with two channels between its first partitions (three if it has them): "msg"
    read-write in both, "log" read-only in the others, 2 MiB above the highest RAM end, in board
    RAM past everything the tool placed."""
    out = bytearray(as_current(blob))
    n = struct.unpack_from("<I", out, 12)[0]
    assert n >= 2, "needs two partitions"
    ram_ends, top = [], 0
    for i in range(n):
        base = HEADER + i * PARTITION
        ram_ipa, ram_hpa, ram_size = struct.unpack_from("<QQQ", out, base + 16)
        ram_ends.append(ram_ipa + ram_size)
        top = max(top, ram_hpa + ram_size)
        image_size, pristine_image, pristine_dtb, dtb_size = struct.unpack_from("<QQQQ", out, base + 64)
        initrd_size, pristine_initrd = struct.unpack_from("<QQ", out, base + 512)
        for hpa, size in ((pristine_image, image_size), (pristine_dtb, dtb_size),
                          (pristine_initrd, initrd_size)):
            if hpa:
                top = max(top, hpa + size)
    hpa = (top + (2 << 20) - 1) & ~((2 << 20) - 1)
    ipa = (max(ram_ends) + (2 << 20) - 1) & ~((2 << 20) - 1)
    specs = [("msg", 0x10000, [(0, 1), (1, 1)]),
             ("log", 0x4000, [(1, 1), (0, 0)] + ([(2, 0)] if n > 2 else []))]
    records, irq = b"", ARM64_DOORBELLS
    for name, size, members in specs:
        rec = bytearray(CHANNEL)
        rec[:len(name)] = name.encode()
        struct.pack_into("<QQQQII", rec, 16, hpa, size, ipa, ipa + size, len(members), 0)
        for k, (part, writable) in enumerate(members):
            struct.pack_into("<IIII", rec, 56 + 16 * k, part, writable, irq, 0)
            word = HEADER + part * PARTITION + PARTITION_IRQS + 4 * (irq // 32)
            struct.pack_into("<I", out, word, struct.unpack_from("<I", out, word)[0] | 1 << (irq % 32))
            irq += 1
        records += bytes(rec)
        hpa += 1 << 20
        ipa += 2 << 20
    offset = HEADER + n * PARTITION
    del out[offset:]
    out += records
    struct.pack_into("<I", out, 8, len(out))
    struct.pack_into("<II", out, 32, len(specs), offset)
    return bytes(out)


def blob_of(toml, hypervisor):
    system = load_system(toml)
    placed = layout.place(system)
    with tempfile.TemporaryDirectory() as work:
        prepared = build.prepare_system(system, placed, work, hypervisor)
        return as_current((Path(prepared.workdir) / "config.bin").read_bytes())


def main():
    out = ROOT / "tests" / "fuzz" / "corpus" / "config"
    out.mkdir(parents=True, exist_ok=True)
    hypervisor = ROOT / "hypervisor" / "build" / "arm64" / "tern.img"
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "initrd.bin").write_bytes(bytes(range(256)) * 64)
        toml = Path(work) / "more.toml"
        toml.write_text(more(ROOT / "guests" / "build" / "arm64", work))
        try:
            blob = blob_of(toml, hypervisor)
            (out / "more.bin").write_bytes(blob)
            print(f"more: {len(blob)} bytes")
            channels = with_channels(blob)
            (out / "channels.bin").write_bytes(channels)
            print(f"channels: {len(channels)} bytes")
        except Exception as e:
            print(f"more: skipped ({e})")
    for name in EXAMPLES:
        try:
            system = load_system(ROOT / "examples" / name)
            placed = layout.place(system)
            with tempfile.TemporaryDirectory() as work:
                prepared = build.prepare_system(system, placed, work, hypervisor)
                blob = as_current((Path(prepared.workdir) / "config.bin").read_bytes())
        except Exception as e:  # an example whose images are not built: skipped
            print(f"{name}: skipped ({e})")
            continue
        (out / (Path(name).stem + ".bin")).write_bytes(blob)
        print(f"{name}: {len(blob)} bytes")


if __name__ == "__main__":
    main()

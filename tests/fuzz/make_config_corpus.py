#!/usr/bin/env python3
"""Write the config fuzzer's seed corpus: the blobs `tern run` writes for the examples.

Run from the repository root after `make all` (the examples name the guests' images):
    python3 tests/fuzz/make_config_corpus.py
"""

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from tern import build, layout  # noqa: E402
from tern.config import dump_toml, load_system  # noqa: E402

# The arm64 examples: channels, VirtIO devices (mediated), pools, Linux beside the latency guest.
EXAMPLES = ["rt.toml", "two.toml", "edu-direct.toml", "linux-rt.toml", "channels.toml",
            "linux-channel.toml", "virtio-blk.toml", "virtio-net.toml", "pools.toml"]


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


def blob_of(toml, hypervisor):
    system = load_system(toml)
    placed = layout.place(system)
    with tempfile.TemporaryDirectory() as work:
        prepared = build.prepare_system(system, placed, work, hypervisor)
        return (Path(prepared.workdir) / "config.bin").read_bytes()


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
        except Exception as e:
            print(f"more: skipped ({e})")
    for name in EXAMPLES:
        try:
            system = load_system(ROOT / "examples" / name)
            placed = layout.place(system)
            with tempfile.TemporaryDirectory() as work:
                prepared = build.prepare_system(system, placed, work, hypervisor)
                blob = (Path(prepared.workdir) / "config.bin").read_bytes()
        except Exception as e:  # an example whose images are not built: skipped
            print(f"{name}: skipped ({e})")
            continue
        (out / (Path(name).stem + ".bin")).write_bytes(blob)
        print(f"{name}: {len(blob)} bytes")


if __name__ == "__main__":
    main()

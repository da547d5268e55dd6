#!/usr/bin/env python3
"""Write the config fuzzer's seed corpus: the blobs `tern run` writes for the examples.

Run from the repository root after `make all` (the examples name the guests' images); each
port's blobs into its own corpus (corpus/config, corpus/config-riscv64), or the ports named:
    python3 tests/fuzz/make_config_corpus.py [arm64] [riscv64]
"""

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from tern import build, layout  # noqa: E402
from tern.config import dump_toml, load_system  # noqa: E402

# Per port, the corpus it writes (tests/fuzz/corpus/...) and its examples: channels, VirtIO
# devices (mediated), pools, Linux beside the latency guest.
PORTS = {
    "arm64": ("config", ["rt.toml", "two.toml", "edu-direct.toml", "linux-rt.toml",
                         "channels.toml", "linux-channel.toml", "virtio-blk.toml",
                         "virtio-net.toml", "pools.toml"]),
    "riscv64": ("config-riscv64", ["riscv64-rt.toml", "channels-riscv64.toml",
                                   "linux-riscv64.toml", "linux-channel-riscv64.toml",
                                   "virtio-blk-riscv64.toml", "pools-riscv64.toml"]),
}


def more(arch, guests, work):
    """What the examples do not have: several vCPUs, an initrd, a restart policy, three
    partitions; on riscv64, trap-less (direct) vCPUs sharing a credit core, which only that
    port allows: as many as a core has interrupt files (4), and a trapping one beside them
    that one flag bit would make the fifth."""
    if arch == "riscv64":
        return dump_toml({
            "board": {"arch": "riscv64", "cpus": 4},
            "pool": [{"name": "shared", "cpus": [2], "scheduler": "credit"}],
            "partition": [
                {"name": "multi", "cpus": [1, 3], "memory": "64MiB",
                 "image": f"{guests}/lat.img", "initrd": f"{work}/initrd.bin",
                 "on_fault": "restart", "max_restarts": 5, "restart_backoff": "10ms"},
                {"name": "a", "cpus": [2, 2, 2], "memory": "32MiB",
                 "image": f"{guests}/lat.img", "pool": "shared", "irq": "direct", "wfi": "trap"},
                {"name": "b", "cpus": [2], "memory": "16MiB", "image": f"{guests}/noise.img",
                 "pool": "shared", "irq": "direct", "wfi": "trap"},
                {"name": "c", "cpus": [2], "memory": "16MiB", "image": f"{guests}/noise.img",
                 "pool": "shared", "irq": "trap"},
            ]})
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


def write_corpus(arch):
    corpus, examples = PORTS[arch]
    out = ROOT / "tests" / "fuzz" / "corpus" / corpus
    out.mkdir(parents=True, exist_ok=True)
    hypervisor = ROOT / "hypervisor" / "build" / arch / "tern.img"
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "initrd.bin").write_bytes(bytes(range(256)) * 64)
        toml = Path(work) / "more.toml"
        toml.write_text(more(arch, ROOT / "guests" / "build" / arch, work))
        try:
            blob = blob_of(toml, hypervisor)
            (out / "more.bin").write_bytes(blob)
            print(f"{arch} more: {len(blob)} bytes")
        except Exception as e:
            print(f"{arch} more: skipped ({e})")
    for name in examples:
        try:
            blob = blob_of(ROOT / "examples" / name, hypervisor)
        except Exception as e:  # an example whose images are not built: skipped
            print(f"{name}: skipped ({e})")
            continue
        (out / (Path(name).stem + ".bin")).write_bytes(blob)
        print(f"{name}: {len(blob)} bytes")


def main():
    for arch in sys.argv[1:] or sorted(PORTS):
        write_corpus(arch)


if __name__ == "__main__":
    main()

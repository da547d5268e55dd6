"""System tests: boot QEMU with the real hypervisor and guests, assert on parsed guest output.

`make test` builds everything first; a test that finds an image missing fails with the command
to build it rather than skipping, so a broken build cannot pass silently.
"""

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

import tern.runner  # noqa: E402  (from tools/, just put on the path)
from tern.config import dump_toml  # noqa: E402

# TERN_HYPERVISOR=IMAGE runs the suite against another hypervisor build (an older config ABI,
# say); run_system's default image is what every test then boots.
HYPERVISOR = Path(os.environ.get("TERN_HYPERVISOR")
                  or REPO / "hypervisor" / "build" / "arm64" / "tern.img")
tern.runner.DEFAULT_HYPERVISOR = HYPERVISOR
LAT = REPO / "guests" / "build" / "arm64" / "lat.img"
PROBE = REPO / "guests" / "build" / "arm64" / "probe.img"
LAT_RISCV64 = REPO / "guests" / "build" / "riscv64" / "lat.img"

# What guests/sbi-smoke reports in a 2-vCPU riscv64 partition: SBI-JSON check -> (error, value).
SBI_SMOKE_RESULTS = {
    "spec_version": (0, 2 << 24),          # SBI 2.0
    "probe_dbcn": (0, 1), "probe_hsm": (0, 1), "probe_srst": (0, 1),
    "probe_vendor": (0, 0),
    "hart1_opaque": (0, 0x5EED),           # HSM hart_start's opaque reached vCPU 1's a1
    "hart_start": (0, 0),
    "hart1_status": (0, 1),                # STOPPED: vCPU 1 stopped itself
    "hart_start_foreign": (-3, 0),         # INVALID_PARAM: the partition has no hart 7
}

# Small sample counts keep the suite short; the long runs live in `make bench`.
SAMPLES = 20


@pytest.fixture(scope="session", autouse=True)
def built_images():
    missing = [p for p in (HYPERVISOR, LAT, PROBE, LAT_RISCV64) if not p.exists()]
    assert not missing, f"missing {', '.join(map(str, missing))}: run `make all` first"


def partition(name, cpus, image, bootargs="", wfi=None, memory="32MiB", irq="trap", devices=(),
              **keys):
    """A [[partition]] table as TOML text (dump_toml); more keys (on_fault, max_restarts, ...)
    as keyword arguments."""
    wfi = wfi or ("native" if irq == "direct" else "trap")
    table = {"name": name, "cpus": list(cpus), "memory": memory, "image": str(image), "wfi": wfi,
             "irq": irq, "bootargs": bootargs, "devices": list(devices), **keys}
    return dump_toml({"partition": [table]})


@pytest.fixture
def system_file(tmp_path):
    """Write a system description from partition() snippets; returns its path."""

    def write(*partitions, cpus=4, cpu="cortex-a53", pci=()):
        path = tmp_path / "system.toml"
        board = {"cpus": cpus, "cpu": cpu, "pci": list(pci)}
        path.write_text(dump_toml({"board": board}) + "\n" + "\n".join(partitions))
        return path

    return write


def probe_record(result, name, test):
    """The last PROBE-JSON record of `test` that partition `name` printed."""
    records = [r for r in result.partitions[name].probe if r.get("test") == test]
    assert records, result.explain()
    return records[-1]

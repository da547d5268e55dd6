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


def toml_value(value):
    """A Python value as TOML: strings quoted, booleans lower case, numbers as they are."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def partition(name, cpus, image, bootargs="", wfi=None, memory="32MiB", irq="trap", devices=(),
              **keys):
    """A [[partition]] table; more keys (on_fault, max_restarts, ...) as keyword arguments."""
    cpu_list = ", ".join(str(c) for c in cpus)
    wfi = wfi or ("native" if irq == "direct" else "trap")
    device_list = ", ".join(f'"{d}"' for d in devices)
    more = "".join(f"{key} = {toml_value(value)}\n" for key, value in keys.items())
    return (
        f'[[partition]]\nname = "{name}"\ncpus = [{cpu_list}]\nmemory = "{memory}"\n'
        f'image = "{image}"\nwfi = "{wfi}"\nirq = "{irq}"\nbootargs = "{bootargs}"\n'
        f'devices = [{device_list}]\n' + more
    )


@pytest.fixture
def system_file(tmp_path):
    """Write a system description from partition() snippets; returns its path."""

    def write(*partitions, cpus=4, cpu="cortex-a53", pci=()):
        path = tmp_path / "system.toml"
        pci_list = ", ".join(f'"{d}"' for d in pci)
        path.write_text(f'[board]\ncpus = {cpus}\ncpu = "{cpu}"\npci = [{pci_list}]\n\n'
                        + "\n".join(partitions))
        return path

    return write


def probe_record(result, name, test):
    """The last PROBE-JSON record of `test` that partition `name` printed."""
    records = [r for r in result.partitions[name].probe if r.get("test") == test]
    assert records, result.explain()
    return records[-1]

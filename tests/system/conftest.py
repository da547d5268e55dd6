"""System tests: boot QEMU with the real hypervisor and guests, assert on parsed guest output.

`make test` builds everything first; a test that finds an image missing fails with the command
to build it rather than skipping, so a broken build cannot pass silently.
"""

import os
import subprocess
import sys
import time
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

TERN = [sys.executable, str(REPO / "tern")]

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


# -- `tern run` in the background, managed through `tern ctl` -----------------------------

def ctl(workdir, *args):
    """`tern ctl` against the run in `workdir`, its output captured."""
    return subprocess.run(TERN + ["ctl", "--workdir", str(workdir)] + list(args),
                          capture_output=True, text=True, timeout=60)


def serial(workdir):
    """The run's serial log so far ("" before the board has written one)."""
    path = workdir / "serial.log"
    return path.read_text(errors="replace") if path.exists() else ""


class Background:
    """`tern run SYSTEM --timeout TIMEOUT OPTIONS...` in the background (a context manager: a
    run still going when the block leaves, by a failed assertion say, is killed)."""

    def __init__(self, system, workdir, timeout, *options):
        self.workdir = workdir
        self.timeout = timeout
        self.process = subprocess.Popen(
            TERN + ["run", str(system), "--workdir", str(workdir), "--quiet",
                    "--timeout", str(timeout), *map(str, options)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def __enter__(self):
        return self

    def __exit__(self, *_):
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()

    def tail(self):
        return serial(self.workdir)[-4000:]

    def wait_for(self, what, check, within):
        """Poll check() until it holds; fails, with the log's tail, if the run ends first or
        `within` seconds pass."""
        deadline = time.monotonic() + within
        while not check():
            assert self.process.poll() is None, \
                f"tern run ended while waiting for {what}:\n" + self.tail()
            assert time.monotonic() < deadline, f"no {what} within {within} s:\n" + self.tail()
            time.sleep(0.1)        # a poll interval, not a synchronisation

    def finish(self):
        """Wait for the run's own end (its --timeout bounds it) and require a clean one."""
        _, err = self.process.communicate(timeout=self.timeout)
        assert self.process.returncode == 0, err + self.tail()

"""The SBI timer of riscv64 partitions without icount, under load (issue 30).

QEMU 7.2 re-evaluates a hart's pending interrupts on every return to VS-mode with the VS
timer's state read before it takes its global lock: a VS timer (Sstc's vstimecmp, which a
trap-less partition's SBI `set_timer` programs) that fires in that window is cleared again, and
a guest waiting for it in a native WFI waits for ever. Busy neighbours (vCPU threads competing
for the host's cores) make the window wide enough to hit in almost every run. The hypervisor
arms its own timer a while after the guest's deadline, with its interrupt disabled, which makes
QEMU evaluate again (docs/design.md, "QEMU 7.2 and the VS timer").
"""

import re
import subprocess

import pytest

from conftest import LAT_RISCV64, REPO

from tern import run_native, run_system
from tern.config import dump_toml

HOSTILE = REPO / "guests" / "build" / "riscv64" / "hostile.img"
SAMPLES = 200
TESTS = "sbi-timer-wfi,sbi-timer-busy"


def description(tmp_path, busy_us):
    def partition(name, cpus, image, bootargs, irq):
        return {"name": name, "cpus": cpus, "memory": "32MiB", "image": str(image), "irq": irq,
                "bootargs": bootargs}

    lat = f"lat.samples={SAMPLES} lat.tests={TESTS}"
    busy = f"hostile.action=busy hostile.busy_us={busy_us}"
    path = tmp_path / "system.toml"
    path.write_text(dump_toml({
        "board": {"arch": "riscv64", "cpus": 5, "memory": "1GiB"},
        "partition": [partition("trapless", [1], LAT_RISCV64, lat, "direct"),
                      partition("trapping", [2], LAT_RISCV64, lat, "trap"),
                      partition("busy", [3, 4], HOSTILE, busy, "direct")]}))
    return path


@pytest.mark.parametrize("run", range(3))
def test_the_sbi_timer_is_never_lost_under_load(tmp_path, run):
    # Two trap-less harts computing beside the two latency guests (no icount: real time, the
    # host's two cores shared by five vCPU threads). Before the fix the trap-less partition
    # hung at its first SBI timer test in most runs; the trap-and-emulate one never did.
    result = run_system(description(tmp_path, busy_us=3_000_000), timeout=90)
    assert not result.timed_out, result.explain()
    assert result.ok, result.explain()
    for name in ("trapless", "trapping"):
        lat = {r["test"]: r for r in result.partitions[name].lat}
        assert sorted(lat) == sorted(TESTS.split(",")), (name, result.explain())
        assert all(r["samples"] == SAMPLES for r in lat.values()), lat
    assert result.stats["trapless"]["sbi_time"] >= 4 * SAMPLES, result.stats


def qemu_major():
    out = subprocess.run(["qemu-system-riscv64", "--version"], capture_output=True, text=True,
                         check=True).stdout
    return int(re.search(r"version (\d+)\.", out).group(1))


SIP_BOOTARGS = "lat.sip_check=1 lat.tests=sstc-busy lat.samples=2"


def sip_record(records):
    [record] = [r for r in records if r.get("test") == "sbi-timer-sip"]
    return record


def test_sip_shows_the_sbi_timer_on_the_bare_board():
    native = run_native(LAT_RISCV64, bootargs=SIP_BOOTARGS, cpus=1)
    assert native.ok, native.explain()
    record = sip_record(native.probe)
    assert record == {"test": "sbi-timer-sip", "pending": True, "cleared": True, "pass": True}, \
        native.explain()


@pytest.mark.parametrize("irq", ["direct", "trap"])
def test_sip_shows_the_sbi_timer_in_a_partition(tmp_path, irq):
    path = tmp_path / "system.toml"
    path.write_text(dump_toml({
        "board": {"arch": "riscv64", "cpus": 2, "memory": "1GiB"},
        "partition": [{"name": "rt", "cpus": [1], "memory": "32MiB", "image": str(LAT_RISCV64),
                       "irq": irq, "bootargs": SIP_BOOTARGS}]}))
    result = run_system(path, timeout=60)
    assert result.ok, result.explain()
    record = sip_record(result.partitions["rt"].probe)
    assert record["cleared"], result.explain()      # after set_timer(-1): nothing pending
    if not record["pending"] and qemu_major() < 8:
        pytest.skip("QEMU 7.2 reads VS-mode sip as SSIP alone (target/riscv/csr.c rmw_vsip64: "
                    "hideleg & vsip_writable_mask, which is VSSIP): STIP never shows although "
                    "the timer is delivered; docs/design.md 'QEMU 7.2 and the VS timer', "
                    "reproducer: this test and test_sip_shows_the_sbi_timer_on_the_bare_board")
    assert record["pass"], result.explain()

"""on_fault = "inject": an access where the partition has nothing is the guest's own bus error.

The hostile guest's `access-outside` action installs its handler, then loads from, stores to
and branches to an address where QEMU's virt board has nothing (0x0b00_0000 on arm64, between
the virtio-mmio transports and the platform bus: natively a synchronous external abort, not
read-as-zero), and reports what its handler saw: the syndrome (or cause), the address and the
return address, for each. The same image runs on the bare board and in a partition with the
default fault policy (`inject`); the handler must see exactly the same, the partition must run
on to its end, and the hypervisor must count and report each injection.
"""

import pytest
from conftest import REPO, partition, probe_record

from tern import run_native, run_system

HOSTILE = REPO / "guests" / "build" / "arm64" / "hostile.img"
HOSTILE_RISCV64 = REPO / "guests" / "build" / "riscv64" / "hostile.img"
ACCESSES = ("load", "store", "fetch")


@pytest.fixture(scope="module", autouse=True)
def hostile_images():
    missing = [p for p in (HOSTILE, HOSTILE_RISCV64) if not p.exists()]
    assert not missing, f"missing {', '.join(map(str, missing))}: run `make all` first"


def outside_record(records, explain):
    done = [r for r in records if r.get("test") == "hostile-access-outside"
            and r.get("phase") == "done"]
    assert len(done) == 1, explain
    return done[0]


def check_injected(result, record, policy_line):
    """The partition ran on to its own end; each access counted and reported as injected."""
    assert result.ok, result.explain()
    assert result.partitions["hostile"].state == "off", result.explain()
    assert result.faults == [], result.explain()
    stats = result.stats["hostile"]
    assert stats["fault_injected"] == len(ACCESSES) and stats["faults"] == 0, stats
    addr = int(record["addr"], 16)
    injected = [f for f in result.injected if f["partition"] == "hostile"]
    assert len(injected) == len(ACCESSES), result.explain()
    assert all(policy_line(f, addr) for f in injected), injected


def test_arm64_the_guest_takes_the_boards_external_abort(tmp_path):
    native = run_native(HOSTILE, bootargs="hostile.action=access-outside", icount=4, timeout=60)
    assert native.ok, native.explain()
    bare = outside_record(native.probe, native.explain())
    assert bare["pass"], bare       # the address aborts on the board: the comparison means it
    # Data abort (EC 0x25, IL, DFSC 0x10, WnR for the store), instruction abort (EC 0x21).
    assert [bare[a]["esr"] for a in ACCESSES] == ["0x96000010", "0x96000050", "0x86000010"], bare

    path = tmp_path / "system.toml"
    path.write_text("[board]\ncpus = 2\n\n" + partition(
        "hostile", [1], HOSTILE, "hostile.action=access-outside"))
    result = run_system(path, icount=4, timeout=60)
    record = outside_record(result.partitions["hostile"].probe, result.explain())
    assert record["pass"], f"{record}\n{result.explain()}"
    assert {a: record[a] for a in ACCESSES} == {a: bare[a] for a in ACCESSES}, (record, bare)
    check_injected(result, record, lambda f, addr: f["ipa"] == addr)
    assert result.stats["hostile"]["abort_injected"] == 0, result.stats


def test_arm64_on_fault_stop_still_stops_at_the_first_access(tmp_path):
    path = tmp_path / "system.toml"
    path.write_text("[board]\ncpus = 2\n\n" + partition(
        "hostile", [1], HOSTILE, "hostile.action=access-outside", on_fault="stop"))
    result = run_system(path, icount=4, timeout=60)
    assert result.partitions["hostile"].state == "stopped", result.explain()
    assert [f["ipa"] for f in result.faults] == [0x0B00_0000], result.explain()
    assert result.injected == [] and result.stats["hostile"]["fault_injected"] == 0, \
        result.explain()


@pytest.mark.parametrize("irq", ["direct", "trap"])
def test_riscv64_the_guest_takes_the_boards_access_fault(tmp_path, irq):
    native = run_native(HOSTILE_RISCV64, bootargs="hostile.action=access-outside", icount=0,
                        timeout=60)
    assert native.ok, native.explain()
    bare = outside_record(native.probe, native.explain())
    assert bare["pass"], bare       # the address faults on the board: the comparison means it
    assert [bare[a]["scause"] for a in ACCESSES] == [5, 7, 1], bare
    # Taken from S-mode with SIE on: SPP and SPIE set in each handler, SIE on again after.
    assert all(bare[a]["spp"] == bare[a]["spie"] == 1 for a in ACCESSES) and bare["sie_back"], \
        bare

    path = tmp_path / "system.toml"
    path.write_text('[board]\narch = "riscv64"\ncpus = 2\n\n' + partition(
        "hostile", [1], HOSTILE_RISCV64, "hostile.action=access-outside", irq=irq,
        wfi="native"))
    result = run_system(path, icount=0, timeout=60)
    record = outside_record(result.partitions["hostile"].probe, result.explain())
    assert record["pass"], f"{record}\n{result.explain()}"
    assert {a: record[a] for a in ACCESSES + ("sie_back",)} == \
        {a: bare[a] for a in ACCESSES + ("sie_back",)}, (record, bare)
    # Reported as the guest page faults the hypervisor took: 21 load, 23 store, 20 fetch.
    check_injected(result, record, lambda f, addr: f["gpa"] == addr)
    assert [f["scause"] for f in result.injected] == [21, 23, 20], result.injected


def test_riscv64_on_fault_stop_still_stops_at_the_first_access(tmp_path):
    path = tmp_path / "system.toml"
    path.write_text('[board]\narch = "riscv64"\ncpus = 2\n\n' + partition(
        "hostile", [1], HOSTILE_RISCV64, "hostile.action=access-outside", irq="direct",
        wfi="native", on_fault="stop"))
    result = run_system(path, icount=0, timeout=60)
    assert result.partitions["hostile"].state == "stopped", result.explain()
    assert len(result.faults) == 1 and "gpa=0x18000000" in result.faults[0]["line"], \
        result.explain()
    assert result.injected == [] and result.stats["hostile"]["fault_injected"] == 0, \
        result.explain()
